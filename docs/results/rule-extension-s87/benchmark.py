"""Session 87, reported beside the bar (docs/preregistered/s87-rule-extension.md): the benchmark questions whose
recorded cascade answer one of ``EXTENDED_RULES`` withheld (replayed with ``eval.rescore``), answered again by the
cascade with and without ``extend_after_rule``, side by side, each from the warm instruction prefixes.

    .venv/bin/python docs/results/rule-extension-s87/benchmark.py > docs/results/rule-extension-s87/benchmark.jsonl
"""
import argparse
import glob
import json
from pathlib import Path

import eval.rescore as rescore
from components.answerability import AnswerabilityModel
from eval.contexts import load_run_context
from eval.datasets import load
from eval.runner import read_records, run_one
from eval.systems import select
from nodes.check_answer import EXTENDED_RULES

shipped = AnswerabilityModel.load()
DEV_BLOCKS = glob.glob("docs/results/squad-dev-s5[378]-heldout*") + glob.glob("docs/results/squad-dev-s[67]*-heldout*")
sets = [("squad", "dev", DEV_BLOCKS),
        ("squad", "train", glob.glob("docs/results/squad-train-s*-unseen*")),
        ("hotpotqa", "dev", ["docs/results/hotpotqa-dev-s50"]), ("nq", "dev", ["docs/results/nq-dev-s55-heldout"])]
systems = select("cascade,cascade-no-rule-extension", None)
for dataset, split, folders in sets:
    recs = []
    for f in sorted(folders):
        rs = list(read_records(Path(f) / "records.jsonl"))
        want = "cascade-hybrid" if any(r["system"] == "cascade-hybrid" for r in rs) else "cascade"
        recs += [r for r in rs if r["system"] == want]
    out = rescore.rescored(recs, shipped, probabilities=rescore.question_type_probabilities([r["question"] for r in recs]))
    ids = {r["id"] for r in out if (r.get("answerability") or {}).get("by") in EXTENDED_RULES}
    ctx = load_run_context(argparse.Namespace(dataset=dataset, split=split, data_dir=None, model=None,
                                              embedder_runtime="auto"))
    examples = [e for e in load(dataset, split, None) if e.id in ids]
    for system in systems:  # the instruction prefixes pinned, as the benchmark does before its first timed query
        run_one(ctx, system, examples[0])
    for e in examples:
        for system in systems:
            r = run_one(ctx, system, e)
            check = r.get("answerability") or {}
            print(json.dumps({"dataset": f"{dataset} {split}", "system": system.name, "question": e.question,
                              "gold": r["gold_answers"][:2], "answer": r["prediction"], "f1": round(r["f1"], 3),
                              "by": check.get("by"), "escalations": r["escalations"],
                              "evaluated": r["prompt_tokens_evaluated"],
                              "set_aside": [s.get("answer") for s in r["steps"] if s.get("extended_by") == "rule"]},
                             ensure_ascii=False), flush=True)
