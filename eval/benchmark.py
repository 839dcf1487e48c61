"""Benchmark systems side by side on one dataset split, in one process, on the same questions.

    python -m eval.benchmark --dataset hotpotqa --split dev --limit 200 \
        --systems baseline,adaptive,routing,routing+compression,no-retrieval,oracle

Each question runs through every system back to back (question-major), so slow and fast phases
of the machine hit all systems alike and the speed-up and token-reduction ratios come from one
run; every query starts with an empty llama.cpp prompt cache (:mod:`eval.runner`). The run folder
holds ``records.jsonl`` (one line per question and system, appended as it goes: rerunning the same
command resumes, and rerunning with a larger ``--limit`` extends the sample), ``run.json``
(:mod:`eval.run_setup`), ``summary.json`` (:mod:`eval.aggregate`), ``report.md``
(:mod:`eval.report`) and PNG figures (:mod:`eval.plots`). ``--report-only`` writes the last three
again from the recorded answers (after a change to the report), answering nothing and keeping the
run's recorded setup. This module is the command only.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

from eval.aggregate import aggregate, by_routed_tier
from eval.contexts import add_run_arguments, load_run_context, reports_errors
from eval.corpora import OPEN_DOMAIN, answer_coverage, with_holds
from eval.datasets import load
from eval import time_model
from eval.report import headline_system, markdown_report
from eval.run_setup import previous_peak_rss
from eval.runner import RECORDS, answer_all, read_records, sample, seen_questions
from eval.systems import select
from pipeline.arguments import whole_number


def unseen_by(args: argparse.Namespace, seen: set[str], split: list) -> dict:
    """The run's meta on ``--unseen-by``: the paths (and the revision they were read at), how many ids their records
    name, of any split, and how many of this split's questions that left out."""
    return {"paths": [str(p) for p in args.unseen_by], **({"as_of": args.unseen_as_of} if args.unseen_as_of else {}),
            "ids_named": len(seen), "questions_left_out": sum(e.id in seen for e in split)}


@reports_errors
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_arguments(parser, limit=200, limit_help="questions (a seeded sample); 0 for all")
    parser.add_argument("--out", type=Path, default=None,
                        help="run folder (default: runs/<dataset>-<split>-s<seed>-<router|tier>; a larger --limit extends it)")
    parser.add_argument("--skip", type=whole_number(), default=0,
                        help="leave out the first N questions of the seeded order (an earlier run's --limit N): "
                             "a sample of questions that run never saw")
    parser.add_argument("--unseen-by", type=Path, nargs="+", default=[], metavar="PATH",
                        help="leave out every question the records under these files or folders name (by id; a folder: "
                             "each *.jsonl under it), before the seeded sample is drawn: questions no earlier run or fit "
                             "saw, whatever its seed (--unseen-by training/labels docs/results)")
    parser.add_argument("--unseen-as-of", default=None, metavar="REVISION",
                        help="with --unseen-by, read its paths as this git revision holds them (an earlier run's code "
                             "commit), so the records committed since do not change that run's draw")
    parser.add_argument("--no-figures", action="store_true")
    parser.add_argument("--report-only", action="store_true",
                        help="write summary.json, report.md and the figures again from the run's records; answer nothing "
                             "(give the run's own options: options that draw none of its questions are refused)")
    args = parser.parse_args(argv)

    systems = select(args.systems, args.adaptive_tier)
    if args.unseen_as_of and not args.unseen_by:
        parser.error("--unseen-as-of reads the paths of --unseen-by, and none was given")
    seen = seen_questions(args.unseen_by, args.unseen_as_of)
    split = list(load(args.dataset, args.split, args.data_dir))
    examples = sample(split, args.limit or None, args.seed, args.skip, seen)
    skipped = f"-skip{args.skip}" if args.skip else ""
    skipped += "-unseen" if args.unseen_by else ""
    out = args.out or Path("runs") / f"{args.dataset}-{args.split}-s{args.seed}{skipped}-{args.adaptive_tier or 'router'}"
    if args.report_only:
        try:
            meta = json.loads((out / "summary.json").read_text(encoding="utf-8"))["meta"]
        except (OSError, ValueError, KeyError) as exc:
            raise SystemExit(f"error: --report-only needs a finished run in {out} (its summary.json): {exc}") from exc
        records = sample_records(out / RECORDS, examples)
        if not records:
            raise SystemExit(f"error: {out} holds a run, but none of its records is of the questions these options draw: "
                             f"give the options it was run with ({meta.get('command', 'its summary.json: meta.command')})")
        if args.dataset in OPEN_DOMAIN:
            from components.embedder import Embedder
            from eval.corpora import benchmark_index

            index = benchmark_index(args.dataset, args.split, Embedder(), args.data_dir)
            records = with_holds(records, lambda _dataset: index)
        write_outputs(out, records, systems, meta, figures=not args.no_figures)
        return 0
    out.mkdir(parents=True, exist_ok=True)

    start = time.perf_counter()
    ctx = load_run_context(args)
    resources = ctx.resources
    path = out / RECORDS
    answer_all(ctx, systems, examples, path)

    records = sample_records(path, examples)
    meta = {
        "dataset": args.dataset, "split": args.split, "seed": args.seed, "model": resources.model,
        "command": "python -m eval.benchmark " + " ".join(sys.argv[1:] if argv is None else argv),
        **({"unseen_by": unseen_by(args, seen, split)} if args.unseen_by else {}),
        "wall_s": time.perf_counter() - start,
        "answering_s": sum(r["latency_ms"] for r in records) / 1000,  # over every invocation that added records
        "peak_rss_mb": max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, previous_peak_rss(out)),
        "index_passages": len(ctx.index),
    }
    if ctx.router is not None:  # which trained router the adaptive rows used
        meta["router"] = {"weights_sha256": ctx.router.metadata.get("weights_sha256"),
                          "labelled_questions": ctx.router.metadata.get("data", {}).get("questions")}
    if args.dataset in OPEN_DOMAIN:  # no contexts: how many answers could the corpus give at all?
        records = with_holds(records, lambda _dataset: ctx.index)
        meta["answer_coverage"] = 100 * answer_coverage(records)
    write_outputs(out, records, systems, meta, figures=not args.no_figures)
    return 0


def sample_records(path: Path, examples) -> list[dict]:
    """The run's records of the sample's questions (a run extended to more questions holds others)."""
    wanted = {e.id for e in examples}
    return [r for r in read_records(path) if r["id"] in wanted]


def write_outputs(out: Path, records: list[dict], systems, meta: dict, *, figures: bool) -> None:
    """``summary.json``, ``report.md`` and (``figures``) the PNG figures, from the records of the
    sample's questions; the report is printed as well."""
    from components.storage import atomic_write_text

    names = [s.name for s in systems]
    summary = aggregate(records, names)
    if {"baseline", "adaptive"} <= set(names):
        summary["adaptive_by_tier"] = by_routed_tier(records)
    if {"baseline", "cascade"} <= set(names):
        summary["cascade_by_start_tier"] = by_routed_tier(records, "cascade")
        summary["cascade_by_final_tier"] = by_routed_tier(records, "cascade", key="final_tier")
    summary["time_model"] = time_model.fit(records, names, headline_system(names))
    summary["meta"] = meta
    atomic_write_text(out / "summary.json", json.dumps(summary, indent=2, default=str) + "\n")
    atomic_write_text(out / "report.md", markdown_report(summary, meta, {s.name: s for s in systems}))
    if figures:
        from eval.plots import plot_run

        plot_run(summary, records, out)
    print(f"\n{out / 'report.md'}\n")
    print((out / "report.md").read_text())


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
