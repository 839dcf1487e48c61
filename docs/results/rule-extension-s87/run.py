"""The chat's knowledge base (the Wikipedia summaries, as NQ-open is answered against them) on forty questions
written down with their answers before anything was run (questions.jsonl): the cascade with and without
``extend_after_rule``, side by side, each question from the same warm state.

    .venv/bin/python docs/results/rule-extension-s87/run.py > docs/results/rule-extension-s87/records.jsonl
"""
import json
import sys
from pathlib import Path

from eval.side_by_side import written_questions_records

for record in written_questions_records(Path(__file__).parent / "questions.jsonl", "cascade,cascade-no-rule-extension"):
    print(json.dumps(record, ensure_ascii=False), flush=True)
print("done", file=sys.stderr)
