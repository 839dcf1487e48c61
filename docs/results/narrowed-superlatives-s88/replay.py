"""The rank rule replayed on every recorded benchmark answer's evidence (``eval.rescore.recorded_evidence``), two
readings side by side: with ``qualified_superlatives`` and without it, or (``--before REV``) as the code is and as it
was at a commit. Prints each answer whose decision differs, then the counts by system and by the check's recorded
decision.

    .venv/bin/python docs/results/narrowed-superlatives-s88/replay.py train               # 9,571 answers
    .venv/bin/python docs/results/narrowed-superlatives-s88/replay.py dev                 # 45,566 answers
    .venv/bin/python docs/results/narrowed-superlatives-s88/replay.py dev --before 5e29e19  # all of session 88
"""
import argparse
import importlib
import importlib.util
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from eval.rescore import recorded_evidence

RESULTS = Path("docs/results")  # run from the repository root, as above


def module_at(rev: str):
    """``nodes.check_answer`` as it was at ``rev``."""
    source = subprocess.run(["git", "show", f"{rev}:nodes/check_answer.py"], check=True, capture_output=True, text=True)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as file:
        file.write(source.stdout)
    spec = importlib.util.spec_from_file_location(f"check_answer_{rev}", file.name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("split", choices=("train", "dev"), help="the runs whose folder name says train, or the others")
parser.add_argument("--before", help="compare with the rule at this commit instead of without the setting")
args = parser.parse_args()
check = importlib.import_module("nodes.check_answer")  # the module (the package gives its node function that name)
if args.before:
    old = module_at(args.before)
    readings = (check.ranked_below, old.ranked_below)
else:
    readings = (lambda q, a, ev: check.ranked_below(q, a, ev, True), lambda q, a, ev: check.ranked_below(q, a, ev, False))
counts: Counter = Counter()
for folder in sorted(p for p in RESULTS.iterdir() if p.is_dir() and ("train" in p.name) == (args.split == "train")):
    for path in sorted(folder.glob("records*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if not record.get("prediction_unchecked"):
                continue
            evidence = recorded_evidence(record)
            question, answer = record["question"], record["prediction_unchecked"]
            now, then = (reading(question, answer, evidence) for reading in readings)
            counts["answers"] += 1
            if now != then:
                decision = (record.get("answerability") or {}).get("decision")
                counts[f"{record.get('system')}, recorded {decision}"] += 1
                print(json.dumps({"run": folder.name, "system": record.get("system"), "recorded": decision,
                                  "f1": record.get("f1_unchecked"), "question": question, "answer": answer,
                                  "now": now, "before": then}, ensure_ascii=False))
print(json.dumps(dict(counts)), file=sys.stderr)
