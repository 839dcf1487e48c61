"""Session 89, a rank said of another place than the question's ranks nothing ("the world's fourth-largest island"
does not keep Madagascar from being the largest in Africa). Forty superlative questions that name a place, written
down with their answers before anything was run (questions.jsonl), answered against the Wikipedia summaries by the
cascade with the rank rule as it is (``ranked-elsewhere``) and as it was at 50084fa, side by side, each question
from the same warm state. ``--development`` answers the 160 superlative questions of sessions 88 and 89 before it
(development data) instead.

    .venv/bin/python docs/results/ranked-elsewhere-s89/run.py > docs/results/ranked-elsewhere-s89/records.jsonl
    .venv/bin/python docs/results/ranked-elsewhere-s89/run.py --development \
        > docs/results/ranked-elsewhere-s89/development.jsonl
"""
import json
import sys
import tempfile
from pathlib import Path

from eval.side_by_side import rule_readings, written_questions_records

HERE = Path(__file__).parent
DEVELOPMENT = ("narrowed-superlatives-s88", "qualified-superlatives-s88", "titled-by-kind-s89", "titled-folded-s89")
questions = HERE / "questions.jsonl"
if "--development" in sys.argv:
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as together:
        for name in DEVELOPMENT:
            together.write((HERE.parent / name / "questions.jsonl").read_text(encoding="utf-8"))
    questions = Path(together.name)
for record in written_questions_records(questions, "cascade", rule_readings("50084fa", shipped="ranked-elsewhere")):
    print(json.dumps(record, ensure_ascii=False), flush=True)
print("done", file=sys.stderr)
