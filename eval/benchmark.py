"""Benchmark systems side by side on one dataset split, in one process, on the same questions.

    python -m eval.benchmark --dataset hotpotqa --split dev --limit 200 \
        --systems baseline,adaptive,routing,routing+compression,no-retrieval,oracle

Each question runs through every system back to back (question-major), so slow and fast phases
of the machine hit all systems alike and the speed-up and token-reduction ratios come from one
run. Every query starts with an empty llama.cpp prompt cache: otherwise a system would reuse
the prompt prefix (system prompt, shared passages) that the previous system left for the same
question, and look faster than it is. The run folder holds ``records.jsonl`` (one line per question and system, appended as it
goes: rerunning the same command resumes, and rerunning with a larger ``--limit`` extends the
sample), ``summary.json``, ``report.md`` and PNG figures.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import resource
import sys
import time
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable

from components.index import PassageIndex
from eval.datasets import DATASETS, Example, load
from eval.scoring import score
from eval.systems import System, select
from graph import RAGContext, ResourceConfig, graph
from pipeline.configuration import cheapest_first

RECORDS = "records.jsonl"
ANSWER_METRICS = ("em", "f1")
RETRIEVAL_METRICS = ("recall@5", "recall@10", "precision@5", "mrr")


def sample(examples: Iterable[Example], limit: int | None, seed: int) -> list[Example]:
    """A seeded sample: the same command always picks the same questions, and a larger limit picks
    the same ones first (so a run can be extended with more questions)."""
    examples = list(examples)
    random.Random(seed).shuffle(examples)
    return examples[:limit] if limit else examples


def read_records(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    records = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            try:
                records.append(json.loads(line))
            except ValueError:
                continue  # a line cut short by a killed run; that pair simply runs again
    return records


def run_one(ctx: RAGContext, system: System, example: Example) -> dict[str, Any]:
    inputs: dict[str, Any] = {"question": example.question}
    if system.oracle:
        gold = example.meta.get("gold_context") or (
            [(example.meta["title"], example.meta["context"])] if "context" in example.meta else [])
        inputs["documents"] = [{"title": t, "text": x} for t, x in gold]
    reset_cache = getattr(ctx.generator, "reset_cache", None)
    if reset_cache is not None:
        reset_cache()
    start = time.perf_counter()
    output = graph.invoke(inputs, context=ctx.with_pipeline(system.pipeline))
    record = score(example, output, (time.perf_counter() - start) * 1000)
    if system.oracle:  # handed, not retrieved: retrieval metrics do not apply
        for key in RETRIEVAL_METRICS:
            record[key] = math.nan
    return {"system": system.name, **record}


# ---------------------------------------------------------------------------- aggregation
def _mean(values: Iterable[float | None]) -> float:
    clean = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(clean) / len(clean) if clean else math.nan


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    low, high = math.floor(pos), math.ceil(pos)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def aggregate(records: list[dict[str, Any]], systems: list[str]) -> dict[str, Any]:
    """Per-system figures over the questions every system has answered, and ratios to baseline."""
    by_system: dict[str, dict[str, dict]] = defaultdict(dict)
    for r in records:
        by_system[r["system"]][r["id"]] = r
    common = set.intersection(*(set(by_system[s]) for s in systems)) if systems else set()
    summary: dict[str, Any] = {"questions": len(common), "systems": {}}
    for name in systems:
        rows = [by_system[name][i] for i in sorted(common)]
        latencies = [r["latency_ms"] for r in rows]
        figures = {
            "n": len(rows),
            **{m: 100 * _mean(r[m] for r in rows) for m in ANSWER_METRICS},
            **{m: 100 * _mean(r.get(m) for r in rows) for m in RETRIEVAL_METRICS},
            "latency_mean_ms": _mean(latencies),
            "latency_p50_ms": _percentile(latencies, 0.5),
            "latency_p95_ms": _percentile(latencies, 0.95),
            "input_tokens_mean": _mean(r["input_tokens"] for r in rows),
            "output_tokens_mean": _mean(r["output_tokens"] for r in rows),
            "passages_in_prompt_mean": _mean(r["passages_in_prompt"] for r in rows),
            "correction_rate": 100 * _mean(float(r["corrected"]) for r in rows),
            "tiers": dict(Counter(r["tier"] for r in rows)),
        }
        answerable = [r for r in rows if r["answerable"]]
        if len(answerable) < len(rows):  # SQuAD 2.0: report both halves
            unanswerable = [r for r in rows if not r["answerable"]]
            figures.update({
                "f1_answerable": 100 * _mean(r["f1"] for r in answerable),
                "em_unanswerable": 100 * _mean(r["em"] for r in unanswerable),
            })
        if any("supporting_sentence_recall" in r for r in rows):
            figures["supporting_sentence_recall"] = 100 * _mean(r.get("supporting_sentence_recall") for r in rows)
        summary["systems"][name] = figures
    base = summary["systems"].get("baseline")
    if base:
        for name, figures in summary["systems"].items():
            figures["speedup_vs_baseline"] = base["latency_mean_ms"] / figures["latency_mean_ms"]
            figures["input_token_reduction_vs_baseline"] = 100 * (1 - figures["input_tokens_mean"] / base["input_tokens_mean"])
            figures["f1_delta_vs_baseline"] = figures["f1"] - base["f1"]
            figures["em_delta_vs_baseline"] = figures["em"] - base["em"]
    return summary


def by_routed_tier(records: list[dict[str, Any]], system: str = "adaptive",
                   reference: str = "baseline") -> dict[str, dict[str, float]]:
    """Where routing helps: ``system``'s questions grouped by the tier it ran them at, each group's
    F1, latency and input tokens beside ``reference``'s on the same questions."""
    mine = {r["id"]: r for r in records if r["system"] == system}
    theirs = {r["id"]: r for r in records if r["system"] == reference}
    groups: dict[str, list[str]] = defaultdict(list)
    for qid in sorted(set(mine) & set(theirs)):
        groups[mine[qid]["tier"]].append(qid)
    table = {}
    for tier in cheapest_first(groups):
        ids = groups[tier]
        row: dict[str, float] = {"n": len(ids)}
        for side, rows in ((system, mine), (reference, theirs)):
            row[f"f1_{side}"] = 100 * _mean(rows[i]["f1"] for i in ids)
            row[f"latency_ms_{side}"] = _mean(rows[i]["latency_ms"] for i in ids)
            row[f"input_tokens_{side}"] = _mean(rows[i]["input_tokens"] for i in ids)
        table[tier] = row
    return table


# ---------------------------------------------------------------------------- report
_ROWS = [
    ("Exact Match", "em", "{:.1f}"), ("F1", "f1", "{:.1f}"),
    ("F1 (answerable)", "f1_answerable", "{:.1f}"), ("EM (unanswerable: abstained)", "em_unanswerable", "{:.1f}"),
    ("Recall@5", "recall@5", "{:.1f}"), ("Recall@10", "recall@10", "{:.1f}"),
    ("Precision@5", "precision@5", "{:.1f}"), ("MRR", "mrr", "{:.1f}"),
    ("Supporting-sentence recall", "supporting_sentence_recall", "{:.1f}"),
    ("Latency mean (s)", "latency_mean_ms", "{:.2f}", 1e-3), ("Latency p50 (s)", "latency_p50_ms", "{:.2f}", 1e-3),
    ("Latency p95 (s)", "latency_p95_ms", "{:.2f}", 1e-3),
    ("Input tokens", "input_tokens_mean", "{:.0f}"), ("Output tokens", "output_tokens_mean", "{:.1f}"),
    ("Passages in prompt", "passages_in_prompt_mean", "{:.1f}"), ("Correction fired (%)", "correction_rate", "{:.1f}"),
]


def _cell(figures: dict, key: str, fmt: str, scale: float = 1.0) -> str:
    value = figures.get(key)
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else fmt.format(value * scale)


def markdown_report(summary: dict[str, Any], meta: dict[str, Any], systems: dict[str, System]) -> str:
    s = summary["systems"]
    lines = [f"# {meta['dataset']} {meta['split']}: {summary['questions']} questions, {meta['model']}", ""]
    lines.append(f"Command: `{meta['command']}`  ")
    answering = f"answering {meta['answering_s'] / 60:.1f} min (all systems, every invocation); " if "answering_s" in meta else ""
    lines.append(f"Seed {meta['seed']}; {answering}wall time of the last invocation {meta['wall_s'] / 60:.1f} min; "
                 f"peak RSS {meta['peak_rss_mb']:.0f} MB (over every invocation); index: {meta['index_passages']:,} passages.")
    if meta.get("router"):
        lines.append(f"Tier router: weights sha256 `{str(meta['router']['weights_sha256'])[:16]}…`, trained on "
                     f"{meta['router']['labelled_questions']} labelled questions.")
    if "answer_coverage" in meta:
        lines.append(f"Questions with a gold answer string anywhere in the corpus: {meta['answer_coverage']:.1f}% "
                     "(an upper bound on what retrieval can find).")
    lines.append("")
    if "baseline" in s and "adaptive" in s:
        b, a = s["baseline"], s["adaptive"]
        lines += ["| metric | baseline (k = 5) | adaptive | Δ |", "| --- | --- | --- | --- |"]
        for label, key, fmt, *scale in _ROWS:
            if key in b or key in a:
                k = scale[0] if scale else 1.0
                bv, av = b.get(key), a.get(key)
                delta = "–" if bv is None or av is None or math.isnan(bv) or math.isnan(av) else f"{(av - bv) * k:+.2f}"
                lines.append(f"| {label} | {_cell(b, key, fmt, k)} | {_cell(a, key, fmt, k)} | {delta} |")
        lines.append(f"| **Speed-up factor** | 1.00× | {a['speedup_vs_baseline']:.2f}× | |")
        lines.append(f"| **Input-token reduction** | – | {a['input_token_reduction_vs_baseline']:.1f}% | |")
        lines.append("")
        lines.append(f"Adaptive: {systems['adaptive'].description}.")
        lines.append("")
    names = list(s)
    lines += ["## All systems", "", "| metric | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
    for label, key, fmt, *scale in _ROWS:
        if any(key in s[n] for n in names):
            k = scale[0] if scale else 1.0
            lines.append(f"| {label} | " + " | ".join(_cell(s[n], key, fmt, k) for n in names) + " |")
    if "baseline" in s:
        lines.append("| Speed-up vs baseline | " + " | ".join(f"{s[n]['speedup_vs_baseline']:.2f}×" for n in names) + " |")
        lines.append("| Input-token reduction | " + " | ".join(f"{s[n]['input_token_reduction_vs_baseline']:.1f}%" for n in names) + " |")
    lines.append("| Tiers | " + " | ".join(", ".join(f"{t}: {c}" for t, c in s[n]["tiers"].items()) for n in names) + " |")
    routed = summary.get("adaptive_by_tier")
    if routed:
        lines += ["", "## Adaptive by routed tier", "",
                  "Each tier's questions, adaptive beside baseline on the same questions.", "",
                  "| tier | questions | F1 adaptive / baseline | latency (s) adaptive / baseline | input tokens adaptive / baseline |",
                  "| --- | --- | --- | --- | --- |"]
        for tier, r in routed.items():
            lines.append(f"| {tier} | {r['n']} | {r['f1_adaptive']:.1f} / {r['f1_baseline']:.1f} | "
                         f"{r['latency_ms_adaptive'] / 1000:.2f} / {r['latency_ms_baseline'] / 1000:.2f} | "
                         f"{r['input_tokens_adaptive']:.0f} / {r['input_tokens_baseline']:.0f} |")
    lines += ["", "Systems:"] + [f"- **{n}**: {systems[n].description}" for n in names]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- main
def add_run_arguments(parser: argparse.ArgumentParser, *, limit: int, limit_help: str) -> None:
    """The options every run over a dataset sample shares (benchmark, RAGAS suite)."""
    parser.add_argument("--dataset", required=True, choices=DATASETS)
    parser.add_argument("--split", default="dev")
    parser.add_argument("--limit", type=int, default=limit, help=limit_help)
    parser.add_argument("--systems", default="baseline,adaptive")
    parser.add_argument("--adaptive-tier", default=None, choices=("easy", "medium", "hard"),
                        help="run the adaptive systems at this fixed tier instead of the trained router")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--model", default=None, help="generator preset (default: the default model)")
    parser.add_argument("--data-dir", default=None, help="benchmark data folder (default: $ADAPTIVE_RAG_DATA or ../shared/data)")


def load_contexts(splits: Iterable[tuple[str, str]], data_dir: str | None = None,
                  model: str | None = None) -> dict[tuple[str, str], RAGContext]:
    """One loaded context per (dataset, split), each over its benchmark index (built and cached on
    first use). The models load once; the contexts differ only in their index."""
    from components.embedder import Embedder
    from eval.corpora import benchmark_index, benchmark_index_dir

    embedder = Embedder()
    embedder.warm_up()
    by_dir: dict[Path, PassageIndex] = {}  # splits that share a corpus (NQ, TriviaQA: Wikipedia) share one copy
    indexes = {}
    for split in dict.fromkeys(splits):
        directory = benchmark_index_dir(*split, embedder, root=data_dir)
        if directory not in by_dir:
            by_dir[directory] = benchmark_index(*split, embedder, data_dir)
        indexes[split] = by_dir[directory]
    if not indexes:
        raise ValueError("no dataset split to load")
    first = next(iter(indexes.values()))
    resources = ResourceConfig(index_dir=first.directory, embedder=embedder.name, **({"model": model} if model else {}))
    base = RAGContext.load(resources, embedder=embedder, index=first)
    return {split: replace(base, index=index) for split, index in indexes.items()}


def load_run_context(args: argparse.Namespace) -> RAGContext:
    """The loaded models over the run's dataset split (``--dataset``, ``--split``, ``--data-dir``, ``--model``)."""
    split = (args.dataset, args.split)
    return load_contexts([split], args.data_dir, args.model)[split]


RUN_SETUP = "run.json"


class RunMismatchError(RuntimeError):
    """A run folder's records came from another generator or tier router than this invocation's."""


def run_setup(ctx: RAGContext, systems: list[System]) -> dict[str, Any]:
    """What decides the answers besides the questions: the generator and, when a system routes with
    it, the trained router's weights."""
    routed = any(s.pipeline.policy == "adaptive" for s in systems)
    router = ctx.router.metadata.get("weights_sha256") if routed and ctx.router is not None else None
    return {"model": ctx.model_name, "router_weights_sha256": router}


def _recorded_setup(out: Path, routed: bool) -> dict[str, Any] | None:
    """The setup that wrote ``out``'s records: its run.json, else (a folder from before run.json) what
    its summary names; None for a new folder."""
    path = out / RUN_SETUP
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        pass
    except ValueError as exc:
        raise RunMismatchError(f"{path} is unreadable ({exc}); delete it only if the records in {out} "
                               "match this invocation's model and router") from exc
    try:
        meta = json.loads((out / "summary.json").read_text(encoding="utf-8"))["meta"]
        router = (meta.get("router") or {}).get("weights_sha256") if routed else None
        return {"model": meta["model"], "router_weights_sha256": router}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def check_run_setup(out: Path, setup: dict[str, Any]) -> None:
    """Refuse to resume a run folder whose records another generator or router wrote (mixing them
    would average two systems into one row); record the setup of a new folder."""
    from components.storage import atomic_write_text

    earlier = _recorded_setup(out, routed=setup["router_weights_sha256"] is not None)
    if earlier is not None and earlier != setup:
        changed = ", ".join(f"{k} {earlier.get(k)!r} -> {v!r}" for k, v in setup.items() if earlier.get(k) != v)
        raise RunMismatchError(f"{out} holds answers from another setup ({changed}); "
                               "pass a new --out to start a fresh run")
    if not (out / RUN_SETUP).exists():
        atomic_write_text(out / RUN_SETUP, json.dumps(setup, indent=2) + "\n")


def answer_all(ctx: RAGContext, systems: list[System], examples: list[Example], path: Path) -> None:
    """Run every (question, system) pair not yet in ``path``, question-major, appending records.
    A folder whose records another generator or router wrote is refused (``RunMismatchError``)."""
    from tqdm import tqdm

    check_run_setup(path.parent, run_setup(ctx, systems))
    done = {(r["system"], r["id"]) for r in read_records(path)}
    todo = [(e, s) for e in examples for s in systems if (s.name, e.id) not in done]
    with path.open("a", encoding="utf-8") as fh, tqdm(total=len(todo), unit="answer", file=sys.stderr, mininterval=1.0) as bar:
        for example, system in todo:
            record = run_one(ctx, system, example)
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            fh.flush()
            bar.set_postfix(system=system.name)
            bar.update(1)


def _previous_peak_rss(out: Path) -> float:
    """The peak RSS an earlier invocation on this run folder recorded (0 if none), so that a resumed
    run reports the peak over all of them."""
    try:
        return float(json.loads((out / "summary.json").read_text(encoding="utf-8"))["meta"]["peak_rss_mb"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0


def main(argv: list[str] | None = None) -> int:
    from components.storage import atomic_write_text
    from eval.corpora import answer_coverage

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_arguments(parser, limit=200, limit_help="questions (a seeded sample); 0 for all")
    parser.add_argument("--out", type=Path, default=None,
                        help="run folder (default: runs/<dataset>-<split>-s<seed>-<router|tier>; a larger --limit extends it)")
    parser.add_argument("--no-figures", action="store_true")
    args = parser.parse_args(argv)

    systems = select(args.systems, args.adaptive_tier)
    examples = sample(load(args.dataset, args.split, args.data_dir), args.limit or None, args.seed)
    out = args.out or Path("runs") / f"{args.dataset}-{args.split}-s{args.seed}-{args.adaptive_tier or 'router'}"
    out.mkdir(parents=True, exist_ok=True)

    start = time.perf_counter()
    ctx = load_run_context(args)
    resources = ctx.resources
    path = out / RECORDS
    try:
        answer_all(ctx, systems, examples, path)
    except RunMismatchError as exc:
        raise SystemExit(f"error: {exc}") from exc

    wanted_ids = {e.id for e in examples}
    records = [r for r in read_records(path) if r["id"] in wanted_ids]
    summary = aggregate(records, [s.name for s in systems])
    if {"baseline", "adaptive"} <= {s.name for s in systems}:
        summary["adaptive_by_tier"] = by_routed_tier(records)
    meta = {
        "dataset": args.dataset, "split": args.split, "seed": args.seed, "model": resources.model,
        "command": "python -m eval.benchmark " + " ".join(sys.argv[1:] if argv is None else argv),
        "wall_s": time.perf_counter() - start,
        "answering_s": sum(r["latency_ms"] for r in records) / 1000,  # over every invocation that added records
        "peak_rss_mb": max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, _previous_peak_rss(out)),
        "index_passages": len(ctx.index),
    }
    if ctx.router is not None:  # which trained router the adaptive rows used
        meta["router"] = {"weights_sha256": ctx.router.metadata.get("weights_sha256"),
                          "labelled_questions": ctx.router.metadata.get("data", {}).get("questions")}
    if args.dataset in ("nq", "triviaqa"):  # no contexts: how many answers could the corpus give at all?
        meta["answer_coverage"] = 100 * answer_coverage(examples, ctx.index)
    summary["meta"] = meta
    atomic_write_text(out / "summary.json", json.dumps(summary, indent=2, default=str) + "\n")
    by_name = {s.name: s for s in systems}
    atomic_write_text(out / "report.md", markdown_report(summary, meta, by_name))
    if not args.no_figures:
        from eval.plots import plot_run

        plot_run(summary, records, out)
    print(f"\n{out / 'report.md'}\n")
    print((out / "report.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
