"""Choosing the prompt-lookup draft length on the train splits.

    python -m training.lookup run    # answer train questions with each draft length (resumable)
    python -m training.lookup fit    # the table, the choice, docs/lookup/README.md

``run`` answers SQuAD 2.0 train-article and HotpotQA train questions through the compiled graph with
the shipped cascade, once for each draft length of ``--grid`` (0 is one token per forward pass),
one length after another on the same question (in an order that turns from question to
question), each from the same warm state (the pinned instruction prefixes only). One JSON line
per question holds every length's answer, time and forward passes.

``fit`` reports, per draft length, the median and mean time per question, the forward passes spent
generating, and how many answers differ from one-token-at-a-time decoding (greedy decoding verified
position by position gives the same tokens up to the rounding of a different batch shape), and
chooses the length with the lowest mean time per question (ties: the shorter draft). Nothing here
looks at a dev question; the choice is a speed setting, and F1 is reported only to show it is kept.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import zlib
from pathlib import Path
from typing import Any, Mapping, Sequence

from training.labelling import TrainingSet, read_labels, run_fit_parser

SETS = (TrainingSet("squad", "train", 20), TrainingSet("hotpotqa", "train", 20))
RUNS_FILE = Path(__file__).resolve().parent / "labels" / "lookup_runs.jsonl"
REPORT_DIR = Path(__file__).resolve().parent.parent / "docs" / "lookup"
GRID = (0, 2, 4)


def parse_grid(text: str) -> tuple[int, ...]:
    try:
        grid = tuple(sorted({int(v) for v in text.split(",") if v.strip()}))
    except ValueError:
        raise argparse.ArgumentTypeError(f"the grid is whole numbers separated by commas, got {text!r}") from None
    if not grid or grid[0] < 0 or 0 not in grid:
        raise argparse.ArgumentTypeError(f"the grid holds 0 (the reference) and lengths >= 0, got {text!r}")
    return grid


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from eval.runner import run_one
    from eval.systems import System
    from pipeline.configuration import PipelineConfig
    from training.labelling import record_answers

    systems = {n: System(f"lookup-{n}", f"the cascade, drafts of {n}", PipelineConfig(lookup_tokens=n)) for n in args.grid}

    def answer(ctx, example) -> dict[str, Any]:
        runs = {}
        order = list(systems)
        turn = zlib.crc32(example.id.encode()) % len(order)  # no length always runs first
        for n in order[turn:] + order[:turn]:
            record = run_one(ctx, systems[n], example)
            runs[str(n)] = {"prediction": record["prediction"], "f1": record["f1"], "latency_ms": record["latency_ms"],
                            "generate_ms": sum(s["generate_ms"] for s in record["steps"]),
                            "output_tokens": record["output_tokens"],
                            "decode_passes": sum(s.get("decode_passes") or 0 for s in record["steps"])}
        return {"id": example.id, "dataset": example.dataset, "runs": runs}

    sets = [replace(s, size=args.size) for s in SETS] if args.size else SETS
    return record_answers(args, sets, answer)


def table(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    grid = sorted({int(n) for r in records for n in r["runs"]})
    complete = [r for r in records if all(str(n) in r["runs"] for n in grid)]
    rows = []
    for n in grid:
        runs = [r["runs"][str(n)] for r in complete]
        rows.append({
            "lookup_tokens": n,
            "questions": len(runs),
            "latency_p50_ms": statistics.median(x["latency_ms"] for x in runs),
            "latency_mean_ms": statistics.fmean(x["latency_ms"] for x in runs),
            "generate_mean_ms": statistics.fmean(x["generate_ms"] for x in runs),
            "output_tokens_mean": statistics.fmean(x["output_tokens"] for x in runs),
            "decode_passes_mean": statistics.fmean(x["decode_passes"] for x in runs),
            "f1": 100 * statistics.fmean(x["f1"] for x in runs),
            "changed": sum(x["prediction"] != r["runs"]["0"]["prediction"] for x, r in zip(runs, complete, strict=True)),
        })
    return rows


def choose(rows: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    return min(rows, key=lambda row: (round(row["latency_mean_ms"]), row["lookup_tokens"]))


def fit(args: argparse.Namespace) -> int:
    records = read_labels(args.out)
    if not records:
        print(f"no runs in {args.out}: run `python -m training.lookup run` first", file=sys.stderr)
        return 1
    rows = table(records)
    best = choose(rows)
    reference = rows[0]
    lines = [
        "# Prompt-lookup draft length, chosen on train",
        "",
        f"{reference['questions']} train questions ({', '.join(sorted({r['dataset'] for r in records}))}), the shipped "
        "cascade, each draft length on the same question from the same warm state "
        "(`python -m training.lookup run`, then `fit`). Chosen: the lowest mean time per question.",
        "",
        "| draft tokens | time p50 (ms) | time mean (ms) | generation mean (ms) | output tokens | forward passes "
        "generating | answers changed | F1 | speed-up (mean) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        mark = " (chosen)" if row is best else ""
        lines.append(f"| {row['lookup_tokens']}{mark} | {row['latency_p50_ms']:.0f} | {row['latency_mean_ms']:.0f} | "
                     f"{row['generate_mean_ms']:.0f} | {row['output_tokens_mean']:.1f} | {row['decode_passes_mean']:.1f} | "
                     f"{row['changed']} | {row['f1']:.1f} | {reference['latency_mean_ms'] / row['latency_mean_ms']:.2f}× |")
    args.report.mkdir(parents=True, exist_ok=True)
    target = args.report / "README.md"
    tmp = target.with_suffix(".md.tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(target)
    print("\n".join(lines))
    print(json.dumps({"chosen_lookup_tokens": best["lookup_tokens"]}))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser, run_parser, fit_parser = run_fit_parser(
        __doc__.split("\n\n")[0], RUNS_FILE, "answer train questions with each draft length (resumable)",
        "tabulate the runs and choose the draft length")
    run_parser.add_argument("--grid", type=parse_grid, default=GRID,
                            help=f"draft lengths, 0 included (default: {','.join(map(str, GRID))})")
    run_parser.add_argument("--size", type=int, default=None,
                            help="questions per dataset (default: " + ", ".join(f"{s.dataset} {s.size}" for s in SETS) + ")")
    fit_parser.add_argument("--report", type=Path, default=REPORT_DIR)
    args = parser.parse_args(argv)
    return run(args) if args.command == "run" else fit(args)


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
