"""The rank rule replayed on every recorded benchmark answer's evidence (``eval.rescore.recorded_evidence``), two
readings side by side: with ``qualified_superlatives`` and without it, or (``--before REV``) as the code is and as it
was at a commit. Prints each answer whose decision differs, then the counts by system and by the check's recorded
decision.

    .venv/bin/python docs/results/narrowed-superlatives-s88/replay.py train               # 9,571 answers
    .venv/bin/python docs/results/narrowed-superlatives-s88/replay.py dev                 # 45,566 answers
    .venv/bin/python docs/results/narrowed-superlatives-s88/replay.py dev --before 5e29e19  # all of session 88

``--index`` (session 89) gives the rule an index, as the live check has one: the Wikipedia summaries' (the cache
folder's) for NQ-open and TriviaQA runs, an empty one for the benchmarks' own corpora, whose passages are no
summaries. A reading that takes no index (``--before`` a commit before session 89) is read without.
"""
import argparse
import functools
import importlib
import inspect
import json
import sys
from collections import Counter
from pathlib import Path

from eval.rescore import recorded_evidence
from eval.side_by_side import module_at

RESULTS = Path("docs/results")  # run from the repository root, as above


parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("split", choices=("train", "dev"), help="the runs whose folder name says train, or the others")
parser.add_argument("--before", help="compare with the rule at this commit instead of without the setting")
parser.add_argument("--index", action="store_true", help="read with an index, as the live check does")
args = parser.parse_args()
check = importlib.import_module("nodes.check_answer")  # the module (the package gives its node function that name)
if args.before:
    old = module_at(args.before)
    rules = (check.ranked_below, old.ranked_below)
else:
    rules = (check.ranked_below, functools.partial(check.ranked_below, qualified=False))
takes_index = ["index" in inspect.signature(rule).parameters for rule in rules]
empty = wikipedia = None
if args.index:
    from components.index import PassageIndex
    from pipeline.context import default_index_dir

    empty, wikipedia = PassageIndex("e", 2), PassageIndex.load(default_index_dir())
counts: Counter = Counter()
for folder in sorted(p for p in RESULTS.iterdir() if p.is_dir() and ("train" in p.name) == (args.split == "train")):
    index = wikipedia if folder.name.startswith(("nq-", "triviaqa-")) else empty
    readings = [functools.partial(rule, index=index) if takes and index is not None else rule
                for rule, takes in zip(rules, takes_index, strict=True)]
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
