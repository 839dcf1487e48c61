"""Per-question latency and memory of the app on its default resources.

    python -m eval.latency [--questions N] [--policy fixed --tier medium] [--model PRESET]

Runs real questions (NQ-open dev when the benchmark data is present, else a built-in list about
the Wikipedia knowledge base) through the compiled graph and prints the median time per question
split into non-generation work (embedding, retrieval, grading, rerank, compression) and
generation, token counts, model load time and peak resident memory.
"""

from __future__ import annotations

import argparse
import itertools
import json
import resource
import statistics
import sys
import time

from eval.contexts import positive, reports_errors
from eval.datasets import DatasetError, load
from graph import RAGContext, ResourceConfig, graph
from pipeline.configuration import PipelineConfig

BUILTIN_QUESTIONS = (
    "Who directed 2001: A Space Odyssey?",
    "When was the Eiffel Tower built?",
    "Who shared the 1903 Nobel Prize in Physics with Marie Curie?",
    "What is the highest mountain on Earth?",
    "Who was the commander of Apollo 11?",
    "Which planet is the largest in the Solar System?",
    "Who wrote Romeo and Juliet?",
    "What is the capital of Japan?",
    "When did World War I begin?",
    "Who developed the theory of relativity?",
)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def questions(n: int) -> list[str]:
    try:
        return [e.question for e in itertools.islice(load("nq", "dev"), n)]
    except DatasetError:
        return list(itertools.islice(itertools.cycle(BUILTIN_QUESTIONS), n))


@reports_errors
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=positive, default=20)
    parser.add_argument("--policy", default="fixed")
    parser.add_argument("--tier", default="medium")
    parser.add_argument("--model", default=None)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    resources = ResourceConfig(**({"model": args.model} if args.model else {}))
    ctx = RAGContext.load(resources, PipelineConfig(policy=args.policy, tier=args.tier))
    load_s = time.perf_counter() - start
    rss_loaded = peak_rss_mb()

    rows = []
    for question in questions(args.questions):
        wall = time.perf_counter()
        out = graph.invoke({"question": question}, context=ctx)
        wall = (time.perf_counter() - wall) * 1000
        timings = out["trace"]["timings_ms"]
        rows.append({
            "total_ms": wall,
            "generation_ms": timings["generate"],
            "non_generation_ms": wall - timings["generate"],
            "prompt_tokens": out["trace"]["prompt_tokens"],
            "output_tokens": out["trace"]["output_tokens"],
        })
        print(f"{wall / 1000:6.2f}s  {question[:60]!r} -> {out['answer'][:60]!r}", file=sys.stderr)

    median = {key: statistics.median(r[key] for r in rows) for key in rows[0]}
    figures = {
        "model": resources.model, "policy": args.policy, "tier": args.tier, "questions": len(rows),
        "load_s": round(load_s, 2), "peak_rss_mb_after_load": round(rss_loaded),
        "peak_rss_mb": round(peak_rss_mb()), "index_passages": len(ctx.index),
        **{f"median_{k}": round(v, 1) for k, v in median.items()},
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for key, value in figures.items():
            print(f"{key:28s} {value}")
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
