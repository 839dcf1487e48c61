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
import argparse
import json
import sys
from pathlib import Path

from eval.contexts import load_run_context
from eval.datasets import Example
from eval.runner import pinned_prefixes, run_one
from eval.systems import select

HERE = Path(__file__).parent
FIRST_FORTY = HERE.parent / "qualified-superlatives-s88" / "questions.jsonl"
ASKED = FIRST_FORTY if "--first-forty" in sys.argv else HERE / "questions.jsonl"
questions = [json.loads(line) for line in ASKED.read_text(encoding="utf-8").splitlines()]
examples = [Example(f"q{n}", q["question"], tuple(q["gold"]), "nq") for n, q in enumerate(questions)]
ctx = load_run_context(argparse.Namespace(dataset="nq", split="dev", data_dir=None, model=None, embedder_runtime="auto"))
systems = select("cascade,cascade-unqualified", None)
for system in systems:  # the instruction prefixes pinned, as the benchmark does before its first timed query
    run_one(ctx, system, examples[0])
for example in examples:
    pins = pinned_prefixes(ctx)
    for system in systems:
        record = run_one(ctx, system, example, pins)
        check = record.get("answerability") or {}
        right = any(g.lower() in record["prediction"].lower() for g in example.answers)
        print(json.dumps({"system": system.name, "question": example.question, "gold": list(example.answers),
                          "answer": record["prediction"], "right": right, "given": bool(record["prediction"]),
                          "by": check.get("by"), "reason": check.get("reason"), "escalations": record["escalations"],
                          "evaluated": record["prompt_tokens_evaluated"],
                          "set_aside": [s.get("answer") for s in record["steps"] if s.get("extended_by") == "rule"]},
                         ensure_ascii=False), flush=True)
print("done", file=sys.stderr)
