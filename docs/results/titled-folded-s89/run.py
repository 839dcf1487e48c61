"""Session 89, the second form: a passage is titled as the answer by the answer's words other than the noun the
question asks the first of, compared without accents. Forty superlative questions written down with their answers
before anything was run (questions.jsonl), answered against the Wikipedia summaries by the cascade with the rank
rule as it is (``titled-folded``) and as it was at 6fc2e63, side by side, each question from the same warm state.
``--development`` answers the eighty of session 88 and the forty of the first form (development data) instead.

    .venv/bin/python docs/results/titled-folded-s89/run.py > docs/results/titled-folded-s89/records.jsonl
    .venv/bin/python docs/results/titled-folded-s89/run.py --development \
        > docs/results/titled-folded-s89/development.jsonl
"""
import json
import sys
import tempfile
from pathlib import Path

from eval.side_by_side import rule_readings, written_questions_records

HERE = Path(__file__).parent
questions = HERE / "questions.jsonl"
if "--development" in sys.argv:
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as together:
        for name in ("narrowed-superlatives-s88", "qualified-superlatives-s88", "titled-by-kind-s89"):
            together.write((HERE.parent / name / "questions.jsonl").read_text(encoding="utf-8"))
    questions = Path(together.name)
for record in written_questions_records(questions, "cascade", rule_readings("6fc2e63", shipped="titled-folded")):
    print(json.dumps(record, ensure_ascii=False), flush=True)
print("done", file=sys.stderr)
