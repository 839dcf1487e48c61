"""The chat's knowledge base (the Wikipedia summaries, as NQ-open is answered against them) on forty superlative
questions written down with their answers before anything was run (questions.jsonl): the cascade with and without
``qualified_superlatives`` in its second form (``cascade``, the default since; ``cascade-unqualified``, without),
side by side, each question from the same warm state. Run before the setting was turned on, as ``cascade-qualified``
and ``cascade``; the records were renamed to these names after. ``--first-forty`` answers the first form's forty
questions (``docs/results/qualified-superlatives-s88/questions.jsonl``) instead.

    .venv/bin/python docs/results/narrowed-superlatives-s88/run.py > docs/results/narrowed-superlatives-s88/records.jsonl
    .venv/bin/python docs/results/narrowed-superlatives-s88/run.py --first-forty \
        > docs/results/narrowed-superlatives-s88/first-forty.jsonl
"""
import json
import sys
from pathlib import Path

from eval.side_by_side import written_questions_records

HERE = Path(__file__).parent
FIRST_FORTY = HERE.parent / "qualified-superlatives-s88" / "questions.jsonl"
for record in written_questions_records(FIRST_FORTY if "--first-forty" in sys.argv else HERE / "questions.jsonl",
                                        "cascade,cascade-unqualified"):
    print(json.dumps(record, ensure_ascii=False), flush=True)
print("done", file=sys.stderr)
