"""Session 89: a passage is titled as the answer by a word of the answer other than the noun the question asks the
first of ("Southern Ocean" is not titled as "Arctic Ocean" for "What is the smallest ocean?"). Forty superlative
questions written down with their answers before anything was run (questions.jsonl), answered against the
Wikipedia summaries by the cascade with the rank rule as it is and as it was at 6fc2e63 (put back in the module for
its turn), side by side, each question from the same warm state. ``--development`` answers session 88's eighty
superlative questions instead (development data: the change was found on one of them). The change failed its bar
and is not in the code since: run this at 318ffc2, where it is (README.md).

    .venv/bin/python docs/results/titled-by-kind-s89/run.py > docs/results/titled-by-kind-s89/records.jsonl
    .venv/bin/python docs/results/titled-by-kind-s89/run.py --development \
        > docs/results/titled-by-kind-s89/development.jsonl
"""
import importlib
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from eval.side_by_side import written_questions_records

HERE = Path(__file__).parent
BEFORE = "6fc2e63"
check = importlib.import_module("nodes.check_answer")  # the module (the package gives its node function that name)
with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as before:
    before.write(subprocess.run(["git", "show", f"{BEFORE}:nodes/check_answer.py"], check=True, capture_output=True,
                                text=True).stdout)
spec = importlib.util.spec_from_file_location(f"check_answer_{BEFORE}", before.name)
assert spec is not None and spec.loader is not None
old = importlib.util.module_from_spec(spec)
spec.loader.exec_module(old)
READINGS = {name: (lambda f=f: setattr(check, "ranked_below", f))
            for name, f in {"titled-by-kind": check.ranked_below, BEFORE: old.ranked_below}.items()}

questions = HERE / "questions.jsonl"
if "--development" in sys.argv:
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as both:
        for name in ("narrowed-superlatives-s88", "qualified-superlatives-s88"):
            both.write((HERE.parent / name / "questions.jsonl").read_text(encoding="utf-8"))
    questions = Path(both.name)
for record in written_questions_records(questions, "cascade", READINGS):
    print(json.dumps(record, ensure_ascii=False), flush=True)
print("done", file=sys.stderr)
