"""What embedding a question costs through ONNX Runtime and through torch, side by side.

    python -m eval.embed_speed [--questions 60] [--seed 14]

Takes a seeded sample of HotpotQA and SQuAD 2.0 dev questions (half each) and answers each through
the compiled graph over its benchmark index, so the machine is in the state a question's embedding
meets in the product: llama.cpp has just used the cores and streamed the generator's weights
through the caches. Then it embeds the question with one runtime, generates four tokens (the same
state again), and embeds it with the other; which runtime goes first alternates, so drifts and the
order hit both alike. Prints each runtime's median, mean and 90th percentile, the ratio of the
medians, how far the vectors differ, and on how many questions the ten passages retrieved are the
same. Speeds vary between machines: read the figures side by side, from one run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

import numpy as np

from eval.aggregate import _percentile


def _summary(times: list[float]) -> dict[str, float]:
    return {"p50_ms": _percentile(times, 0.5), "mean_ms": statistics.fmean(times), "p90_ms": _percentile(times, 0.9)}


def main(argv: list[str] | None = None) -> int:
    from langchain_core.messages import HumanMessage

    from components.embedder import Embedder
    from eval.contexts import load_contexts
    from eval.datasets import load
    from eval.runner import sample
    from graph import graph

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=60, help="questions, half from each dataset (default 60)")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.questions < 2:
        parser.error("--questions must be >= 2")

    splits = [("hotpotqa", "dev"), ("squad", "dev")]
    contexts = load_contexts(splits, args.data_dir)  # questions through ONNX Runtime (the default)
    onnx = next(iter(contexts.values())).embedder
    if onnx.query_runtime != "onnxruntime":
        raise SystemExit(f"error: ONNX Runtime is not available here: {onnx.query_runtime_note}")
    torch_embedder = Embedder(onnx.name, query_runtime="torch")
    torch_embedder.warm_up()
    runtimes = {"onnxruntime": onnx, "torch": torch_embedder}

    half = args.questions // 2
    questions = [(split, e.question) for i, split in enumerate(splits)
                 for e in sample(load(*split, args.data_dir), half + i * (args.questions % 2), args.seed)]
    times: dict[str, list[float]] = {name: [] for name in runtimes}
    worst_difference, same_ten = 0.0, 0
    for i, (split, question) in enumerate(questions):
        ctx = contexts[split]
        graph.invoke({"question": question}, context=ctx)
        vectors: dict[str, np.ndarray] = {}
        order = list(runtimes) if i % 2 == 0 else list(runtimes)[::-1]
        for turn, name in enumerate(order):
            if turn:
                ctx.generator.invoke([HumanMessage(question)], max_tokens=4)
            start = time.perf_counter()
            vectors[name] = runtimes[name].embed_query(question)
            times[name].append((time.perf_counter() - start) * 1000.0)
        worst_difference = max(worst_difference, float(np.abs(vectors["onnxruntime"] - vectors["torch"]).max()))
        ids = [[hit.passage.id for hit in ctx.index.search(v, 10)] for v in vectors.values()]
        same_ten += ids[0] == ids[1]
        print(f"{i + 1:3d}/{len(questions)}  onnxruntime {times['onnxruntime'][-1]:5.1f} ms  "
              f"torch {times['torch'][-1]:5.1f} ms  {question[:60]!r}", file=sys.stderr)

    figures: dict[str, Any] = {name: _summary(t) for name, t in times.items()}
    figures.update({
        "questions": len(questions), "seed": args.seed,
        "speedup_p50": figures["torch"]["p50_ms"] / figures["onnxruntime"]["p50_ms"],
        "max_abs_difference": worst_difference, "same_top10": same_ten,
    })
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print("| runtime | p50 (ms) | mean (ms) | p90 (ms) |\n| --- | --- | --- | --- |")
        for name in runtimes:
            print(f"| {name} | {figures[name]['p50_ms']:.1f} | {figures[name]['mean_ms']:.1f} | {figures[name]['p90_ms']:.1f} |")
        print(f"\nmedian speed-up {figures['speedup_p50']:.2f}x over {len(questions)} questions; vectors differ by "
              f"at most {worst_difference:.2g} per component; the ten passages retrieved are the same for "
              f"{same_ten} of {len(questions)}")
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
