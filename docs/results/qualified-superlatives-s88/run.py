"""The chat's knowledge base (the Wikipedia summaries, as NQ-open is answered against them) on forty superlative
questions written down with their answers before anything was run (questions.jsonl): the cascade with and without
``qualified_superlatives`` (``cascade-qualified``; ``cascade``, the default, without), side by side, each question
from the same warm state. Run in session 88 when the setting was on by default: the records were made as ``cascade``
and ``cascade-unqualified``, and renamed to these names after it was turned off. The first form is no longer
in the code, nor is ``cascade-qualified``: ``git checkout 72df130`` runs it.

    .venv/bin/python docs/results/qualified-superlatives-s88/run.py > docs/results/qualified-superlatives-s88/records.jsonl
"""
import json
import sys
from pathlib import Path

from eval.side_by_side import written_questions_records

for record in written_questions_records(Path(__file__).parent / "questions.jsonl", "cascade-qualified,cascade"):
    print(json.dumps(record, ensure_ascii=False), flush=True)
print("done", file=sys.stderr)
