"""Fitting the cascade on the train splits: tier budgets, the confidence signal and its threshold.

    python -m training.cascade run                 # answer the training questions (resumable)
    python -m training.cascade fit                 # fit and write docs/cascade/README.md

``run`` answers each training question (SQuAD 2.0 train articles and HotpotQA train, interleaved)
through the compiled graph:

* at every evidence budget of a grid (in the generator's tokens), by one cascade that never
  accepts: each step extends the previous one's evidence in place, so one pass records the answer,
  its confidence signals and its cost at every budget;
* by the k = 5 baseline in each prompt layout, for the layout comparison and the reference F1.

Every query starts from the same warm state (the pinned instruction prefix only). One JSON line
per question is appended as soon as it is done.

``fit`` then simulates, with no model run, every cascade the recorded budgets allow: each ladder
of two or more budgets, each confidence signal, each threshold (the signal's quantiles on the
training answers), with and without stopping an answer early (``stop_early``). It reads the runs
given (``--out`` and ``--runs``; one way of answering at a time), once per question, and the
budgets every question was answered at. A step's cost is the prompt tokens it evaluates (the
tokens its prompt adds to the previous one, plus the few after the evidence that change) and its
time follows a linear model of evaluated and generated tokens fitted to the measured steps.

The reference is the k = 5 baseline: the last budget of ``--reference`` (by default the same
questions answered with the baseline's five passages in dense order; ``none``: the last budget of
the fitted runs). A cascade keeps the F1 when its training F1 is within ``--max-f1-loss`` of the
reference's on every dataset. The family (ladder, signal, early stopping) is chosen by
cross-validation (``--folds``): the cheapest whose out-of-fold F1 keeps the F1; its threshold is
then the cheapest that keeps it on every run. That is the tiers and threshold
``pipeline.configuration`` ships. Nothing here looks at a dev question.
"""

from __future__ import annotations

import argparse
import itertools
from collections import Counter
import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from eval.time_model import nonnegative_rates
from pipeline.configuration import (CONFIDENCE_SIGNALS, DEFAULT_LAYOUT, DEFAULT_TIERS, EARLY_SIGNALS, EVIDENCE_ORDERS,
                                    LAYOUTS, Budget, PipelineConfig, cheapest_first)
from training.labelling import TrainingSet, run_fit_parser, sets_text

GRID: tuple[int | None, ...] = (32, 64, 128, None)
"""Evidence budgets (generator tokens; ``None``: all five passages, the baseline's evidence) every
training question is answered at, each filled with whole passages in ranked order."""
SETS = (TrainingSet("squad", "train", 40), TrainingSet("hotpotqa", "train", 40))
RUNS_FILE = Path(__file__).resolve().parent / "labels" / "cascade_runs_evidence_first_reranked.jsonl"
"""The recorded training answers (``run`` appends, ``fit`` reads): 320 train questions, each five
passages the reranker's best of ten dense candidates, answered without citation markers in the
evidence-first prompt at 128 tokens and all five (``run --grid 128,all --no-baselines --size 160``).
``cascade_runs_reranked.jsonl`` holds the same questions in the question-first prompt at 32, 64, 128
tokens and all five (session 21's fit, docs/cascade/question_first/)."""
MORE_RUNS: tuple[Path, ...] = ()
"""Other runs of the same never-accepting cascade that ``fit`` reads too by default (none: the probe
router's runs were answered in dense order with markers, and a fit reads one way of answering)."""
REFERENCE_RUNS = Path(__file__).resolve().parent / "labels" / "cascade_runs_evidence_first_dense_baseline.jsonl"
"""The reference the fit keeps the F1 of: the same 320 questions answered by the k = 5 baseline
(dense order, no markers, the evidence-first prompt; ``run --reference-only --size 160``): the
product's target is set against that baseline. ``cascade_runs_no_markers.jsonl`` is the question-first
prompt's."""
MAX_F1_LOSS = 0.25
"""The train F1 the chosen cascade may lose against the reference: half the 0.5 points the product
allows, because out of fold (``--folds``) a choice loses more than on the questions it was chosen
on (on the 320 train questions, allowed 0.5: 0.3 lost in sample, 1.2 out of fold; allowed 0.25:
0.0 and 0.6)."""
THRESHOLD_QUANTILES = np.linspace(0.02, 0.98, 49)
"""The candidate thresholds of a signal: these quantiles of its values on the training answers."""
REPORT_DIR = Path(__file__).resolve().parent.parent / "docs" / "cascade"
CORRECT_F1 = 0.5
"""An answer counts as right (for the signals' AUROC) when its token F1 reaches this."""


def label(budget: int | None) -> str:
    return "all" if budget is None else str(budget)


def parse_grid(text: str) -> tuple[int | None, ...]:
    """``"64,96,128,all"`` as a grid: token budgets rising, then ``all`` (every passage), which must be last."""
    parts = [p.strip().lower() for p in text.split(",") if p.strip()]
    try:
        grid = tuple(None if p == "all" else int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a grid is token budgets and 'all', comma-separated; got {text!r}") from None
    numbers = [b for b in grid if b is not None]
    if (len(grid) < 2 or grid[-1] is not None or None in grid[:-1] or any(b < 1 for b in numbers)
            or numbers != sorted(set(numbers))):
        raise argparse.ArgumentTypeError(f"a grid is rising token budgets then 'all', at least two in all; got {text!r}")
    return grid


def grid_tiers(grid: Sequence[int | None] = GRID) -> dict[str, Budget]:
    """One tier per grid budget, named so that they sort cheapest first, like the default tiers
    otherwise (the unlimited one like the top tier)."""
    tiers = {}
    for b in grid:
        name = "gall" if b is None else f"g{b:04d}"
        template = DEFAULT_TIERS["hard"] if b is None else DEFAULT_TIERS["easy"]
        tiers[name] = replace(template, name=name, context_tokens=b, cascade=True)
    return tiers


def grid_pipeline(grid: Sequence[int | None] = GRID, layout: str = DEFAULT_LAYOUT,
                  citation_markers: bool = False, evidence_order: str = "score") -> PipelineConfig:
    """A cascade over the grid that never accepts early and finishes every answer (each is extended
    to the last budget), its answers asked in the prompt ``layout``, with or without the model's
    citation markers, the passages in ``evidence_order``."""
    tiers = grid_tiers(grid)
    return PipelineConfig(policy="cascade", tiers=tiers, tier=next(iter(tiers)), accept_threshold=1e9,
                          max_escalations=len(grid) - 1, prompt_layout=layout, stop_early=False,
                          citation_markers=citation_markers, evidence_order=evidence_order, multi_hop_tier=None)


def answered_as(record: Mapping[str, Any]) -> tuple[str, bool, int | None, str]:
    """The prompt layout a recorded run's grid was answered in, whether the model wrote its
    citation markers, how many dense candidates the reranker chose the five passages from, and the
    order they were put in (records from before these were kept: question first, with markers,
    dense order: ``None``, the reranker's order: ``score``)."""
    return (record.get("layout", "question_first"), record.get("citation_markers", True),
            record.get("rerank_candidates"), record.get("evidence_order", "score"))


def answering(pipeline: PipelineConfig) -> dict[str, Any]:
    """How ``pipeline``'s cascade answers, as a recorded run keeps it (what :func:`answered_as` reads
    back): prompt layout, citation markers, and the candidates its first tier reranks (``None``:
    dense order)."""
    first = pipeline.tiers[cheapest_first(pipeline.tiers)[0]]
    return {"layout": pipeline.prompt_layout, "citation_markers": pipeline.citation_markers,
            "rerank_candidates": first.candidates if first.rerank else None,
            **({"evidence_order": pipeline.evidence_order} if pipeline.evidence_order != "score" else {})}


def answered_text(layout: str, markers: bool, candidates: int | None, order: str = "score") -> str:
    return (f"{layout}, {'with' if markers else 'without'} citation markers, "
            + (f"the best five of {candidates} reranked" if candidates else "five passages in dense order")
            + (", in title-diverse order" if order == "title_diverse" else ""))


def answer_figures(record: Mapping[str, Any]) -> dict[str, Any]:
    """What the training runs keep of one benchmark record: the answer, its scores and its cost."""
    kept = {key: record.get(key) for key in ("answer", "em", "f1", "input_tokens", "prompt_tokens_evaluated",
                                             "output_tokens", "latency_ms")}
    return {**kept, "generate_ms": record["timings_ms"].get("generate")}


def scored_steps(record: Mapping[str, Any], example) -> list[dict[str, Any]]:
    """A benchmark record's answer steps, each with its EM and F1 against the example's gold answers."""
    from eval.metrics import exact_match, f1_score
    from eval.scoring import prediction_text

    steps = []
    for step in record["steps"]:
        prediction = prediction_text(step["answer"])
        steps.append({**step, "em": exact_match(prediction, example.answers), "f1": f1_score(prediction, example.answers)})
    return steps


def pad_grid(steps: list[dict[str, Any]], budgets: Sequence[int | None]) -> list[dict[str, Any]]:
    """Each step labelled with its budget; when the evidence ran out before the last budget (nothing
    left to add), the costlier budgets repeat the last answer at no cost."""
    grid = [{**step, "budget": budget} for budget, step in zip(budgets, steps, strict=False)]
    while grid and len(grid) < len(budgets):
        grid.append({**grid[-1], "budget": budgets[len(grid)], "padded": True, "prompt_tokens_evaluated": 0,
                     "output_tokens": 0, "generate_ms": 0.0})
    return grid


def _question(example) -> dict[str, Any]:
    """What every recorded run keeps of its question."""
    return {"id": example.id, "dataset": example.dataset, "question": example.question,
            "answerable": example.answerable, "gold_answers": list(example.answers)}


def _baseline(layout: str, citation_markers: bool):
    """The k = 5 baseline (five passages in dense order) asked in the prompt ``layout``."""
    from eval.systems import System

    return System(f"baseline-{layout}", "k = 5 baseline",
                  PipelineConfig(policy="baseline", prompt_layout=layout, citation_markers=citation_markers))


def answer_question(ctx, example, grid: Sequence[int | None] = GRID,
                    baselines: Mapping[str, Any] | None = None, layout: str = DEFAULT_LAYOUT,
                    baseline_layouts: Sequence[str] = tuple(LAYOUTS), citation_markers: bool = False,
                    evidence_order: str = "score") -> dict[str, Any]:
    """Every grid budget (one never-accepting cascade, in the prompt ``layout``) and the baseline in
    each of ``baseline_layouts``, for one question; ``baselines`` already recorded for it (by an
    earlier run) are reused, not re-run."""
    from eval.runner import run_one
    from eval.systems import System

    out = _question(example)
    pipeline = grid_pipeline(grid, layout, citation_markers, evidence_order)
    out.update(answering(pipeline))
    record = run_one(ctx, System("grid", "never-accepting cascade over the grid", pipeline), example)
    out["grid"] = pad_grid(scored_steps(record, example), grid)
    out["baseline"] = dict(baselines or {})
    for name in [name for name in baseline_layouts if name not in out["baseline"]]:
        out["baseline"][name] = answer_figures(run_one(ctx, _baseline(name, citation_markers), example))
    return out


def answer_reference(ctx, example, layout: str = DEFAULT_LAYOUT, citation_markers: bool = False) -> dict[str, Any]:
    """The k = 5 baseline's answer to one question (five passages in dense order, the prompt
    ``layout``), kept as a run whose grid is that one answer at the budget 'all': what ``fit
    --reference`` reads."""
    from eval.runner import run_one

    record = run_one(ctx, _baseline(layout, citation_markers), example)
    return {**_question(example), "layout": layout, "citation_markers": citation_markers, "rerank_candidates": None,
            "grid": pad_grid(scored_steps(record, example), [None]), "baseline": {}}


def read_runs(path: Path) -> list[dict[str, Any]]:
    from eval.runner import read_records

    return read_records(path)


def run(args: argparse.Namespace) -> int:
    from training.labelling import record_answers

    sets = [replace(s, size=args.size) for s in SETS] if args.size else SETS
    if args.reference_only:
        return record_answers(args, sets, lambda ctx, example: answer_reference(
            ctx, example, layout=args.layout, citation_markers=args.citation_markers))
    recorded = {(r["dataset"], r["id"]): r["baseline"] for path in args.baselines for r in read_runs(path)}
    layouts = [] if args.no_baselines else list(LAYOUTS)
    return record_answers(args, sets, lambda ctx, example: answer_question(
        ctx, example, args.grid, baselines=recorded.get((example.dataset, example.id)), layout=args.layout,
        baseline_layouts=layouts, citation_markers=args.citation_markers, evidence_order=args.evidence_order))


# ---- fitting, from the recorded runs only ----

def auroc(scores: Iterable[float], positive: Iterable[bool]) -> float:
    """Probability that a random positive scores above a random negative (ties count half)."""
    pairs = [(s, p) for s, p in zip(scores, positive, strict=True) if s is not None]
    pos = [s for s, p in pairs if p]
    neg = [s for s, p in pairs if not p]
    if not pos or not neg:
        return math.nan
    neg_sorted = np.sort(np.asarray(neg, dtype=float))
    total = 0.0
    for s in pos:
        below = np.searchsorted(neg_sorted, s, side="left")
        equal = np.searchsorted(neg_sorted, s, side="right") - below
        total += below + 0.5 * equal
    return total / (len(pos) * len(neg))


def time_model(runs: Sequence[Mapping[str, Any]]) -> tuple[float, float, float]:
    """Milliseconds per evaluated prompt token, per generated token, and per answer, fitted by
    non-negative least squares to every measured answer: the grid's steps and the baselines."""
    rows = [(s["prompt_tokens_evaluated"], s["output_tokens"], 1.0, s["generate_ms"])
            for r in runs for s in r["grid"] if not s.get("padded")]
    rows += [(b["prompt_tokens_evaluated"], b["output_tokens"], 1.0, b.get("generate_ms") or b["latency_ms"])
             for r in runs for b in r["baseline"].values()]
    coef, _ = nonnegative_rates([row[:3] for row in rows], [row[3] for row in rows])
    return coef[0], coef[1], coef[2]


def simulate(runs: Sequence[Mapping[str, Any]], ladder: Sequence[int | None], signal: str, threshold: float,
             model: tuple[float, float, float], stop_early: bool = False) -> dict[str, float]:
    """One cascade replayed on the recorded answers: mean F1, evaluated tokens, whole-prompt tokens
    and modelled generation time per question, and the share of questions escalated.

    With ``stop_early`` (an early signal only) an extended answer is charged one generated token
    when its first token already decided it (always for ``first_prob`` and ``first_margin``; for
    ``min_prob`` when the first token is below the threshold), else every token it generated: the
    records keep no per-token figures, so a ``min_prob`` answer that fell short later is charged
    in full, an upper bound on what it costs."""
    per_token, per_output, per_answer = model
    early = stop_early and signal in EARLY_SIGNALS
    first_token_reading = "first_prob" if signal == "min_prob" else signal  # what the first token alone says
    f1 = evaluated = whole = ms = escalated = 0.0
    f1_by: dict[str, float] = {}
    count_by: dict[str, int] = {}
    for r in runs:
        count_by[r["dataset"]] = count_by.get(r["dataset"], 0) + 1
        by_budget = {s["budget"]: s for s in r["grid"]}
        if any(b not in by_budget for b in ladder):
            continue
        first = r["grid"][0]
        pinned = first["prompt_tokens"] - first["prompt_tokens_evaluated"]
        gaps = [s["prompt_tokens_evaluated"] - (s["prompt_tokens"] - p["prompt_tokens"])
                for p, s in itertools.pairwise(r["grid"]) if not s.get("padded")]
        tail = float(np.median(gaps)) if gaps else 0.0
        previous = None
        for i, budget in enumerate(ladder):
            step = by_budget[budget]
            if previous is None:
                cost = step["prompt_tokens"] - pinned
            elif step.get("padded") or step["prompt_tokens"] == previous:  # nothing added: the same answer, cached
                cost = 0.0
            else:
                cost = step["prompt_tokens"] - previous + tail
            score = step["confidence"][signal]
            last = i == len(ladder) - 1
            accept = last or (not step["abstained"] and score is not None and score >= threshold)
            output = step["output_tokens"]
            if early and not accept and not step["abstained"] and step["confidence"][first_token_reading] < threshold:
                output = min(output, 1)
            evaluated += cost
            whole += step["prompt_tokens"]
            if cost or previous is None:
                ms += per_token * cost + per_output * output + per_answer
            previous = step["prompt_tokens"]
            if accept:
                f1 += step["f1"]
                f1_by[r["dataset"]] = f1_by.get(r["dataset"], 0.0) + step["f1"]
                escalated += i > 0
                break
    n = len(runs)
    return {"f1": 100 * f1 / n, "evaluated": evaluated / n, "input_tokens": whole / n, "ms": ms / n,
            "escalated": 100 * escalated / n,
            "f1_by_dataset": {name: 100 * f1_by.get(name, 0.0) / count for name, count in sorted(count_by.items())}}


Reference = Mapping[tuple[str, str], Mapping[str, Any]]
"""Runs of the same questions, by (dataset, id), whose last budget is the reference (``--reference``)."""


def baseline_figures(runs: Sequence[Mapping[str, Any]], model: tuple[float, float, float],
                     reference: Reference | None = None) -> dict[str, float]:
    """The reference: every question answered at the last budget alone (all five passages), modelled
    like the cascades it is compared with; with ``reference``, those runs' last budget for the same
    questions (the k = 5 baseline as the product ships it, when the grid chose its passages otherwise)."""
    if reference is not None:
        runs = [reference[(r["dataset"], r["id"])] for r in runs]
    return simulate(runs, (common_budgets(runs)[-1],), CONFIDENCE_SIGNALS[0], 0.0, model)


def common_budgets(runs: Sequence[Mapping[str, Any]]) -> list[int | None]:
    """The budgets every run was answered at, cheapest first (``None``, all passages, last)."""
    shared = set.intersection(*({s["budget"] for s in r["grid"]} for r in runs))
    return sorted(shared, key=lambda b: math.inf if b is None else b)


def family(c: Mapping[str, Any]) -> tuple:
    """A candidate's ladder, signal and early stopping: everything but its threshold."""
    return tuple(c["ladder"]), c["signal"], c["stop_early"]


def floors(f1_by_dataset: Mapping[str, float], max_f1_loss: float) -> dict[str, float]:
    """The F1 a cascade must keep on each dataset: the reference's there, less the allowed loss. Per
    dataset, because the product's target is per dataset: a gain on one must not pay for a loss on
    another (pooled, 64 reranked tokens "keep" the F1 by +3 on SQuAD 2.0 and -5 on HotpotQA)."""
    return {name: f1 - max_f1_loss for name, f1 in f1_by_dataset.items()}


def within(figures: Mapping[str, Any], floor: Mapping[str, float]) -> bool:
    return all(figures["f1_by_dataset"].get(name, 0.0) >= f1 for name, f1 in floor.items())


def pick(candidates: Sequence[dict[str, Any]], floor: Mapping[str, float]) -> tuple[dict[str, Any], bool]:
    """The cheapest candidate whose F1 is at least ``floor`` on every dataset (and whether there was
    one), else the best F1."""
    feasible = [c for c in candidates if within(c, floor)]
    if feasible:
        return min(feasible, key=lambda c: (c["ms"], -c["f1"])), True
    return max(candidates, key=lambda c: (c["f1"], -c["ms"])), False  # the best F1, the cheaper on ties


def search(runs: Sequence[Mapping[str, Any]], budgets: Sequence[int | None], model: tuple[float, float, float],
           max_f1_loss: float, reference: Reference | None = None) -> tuple[dict[str, Any], bool, list[dict[str, Any]]]:
    """Every candidate cascade replayed on ``runs``, and the chosen one: the cheapest whose F1 is
    within ``max_f1_loss`` of the reference's (whether there was one; else the best F1)."""
    base = baseline_figures(runs, model, reference)
    candidates = []
    ladders = [lad for size in range(2, len(budgets) + 1) for lad in itertools.combinations(budgets, size)]
    for signal in CONFIDENCE_SIGNALS:
        values = [s["confidence"][signal] for r in runs for s in r["grid"] if s["confidence"][signal] is not None
                  and math.isfinite(s["confidence"][signal])]
        thresholds = sorted(set(float(np.quantile(values, q)) for q in THRESHOLD_QUANTILES))
        for ladder, threshold, early in itertools.product(ladders, thresholds, (False, True)):
            if early and signal not in EARLY_SIGNALS:
                continue
            figures = simulate(runs, ladder, signal, threshold, model, stop_early=early)
            candidates.append({"ladder": list(ladder), "signal": signal, "threshold": threshold, "stop_early": early,
                               **figures})
    chosen, feasible = pick(candidates, floors(base["f1_by_dataset"], max_f1_loss))
    return chosen, feasible, candidates


def cross_validate(runs: Sequence[Mapping[str, Any]], budgets: Sequence[int | None], model: tuple[float, float, float],
                   max_f1_loss: float, folds: int = 5, reference: Reference | None = None) -> dict[str, Any]:
    """How each family (ladder, signal, early stopping) generalises: each fold's questions replayed
    with the family's threshold chosen on the other folds (the cheapest within the loss there);
    per family, F1 and modelled time over all questions, beside the reference's."""
    per_family: dict[tuple, dict[str, float]] = {}
    base_f1 = base_ms = 0.0
    base_by: dict[str, float] = {}
    for k in range(folds):
        train = [r for i, r in enumerate(runs) if i % folds != k]
        test = [r for i, r in enumerate(runs) if i % folds == k]
        test_sizes = Counter(r["dataset"] for r in test)
        _, _, candidates = search(train, budgets, model, max_f1_loss, reference)
        floor = floors(baseline_figures(train, model, reference)["f1_by_dataset"], max_f1_loss)
        by_family: dict[tuple, list[dict[str, Any]]] = {}
        for c in candidates:
            by_family.setdefault(family(c), []).append(c)
        for key, group in by_family.items():
            c, _ = pick(group, floor)
            out = simulate(test, c["ladder"], c["signal"], c["threshold"], model, stop_early=c["stop_early"])
            totals = per_family.setdefault(key, {"f1": 0.0, "ms": 0.0})
            totals["f1"] += out["f1"] * len(test)
            totals["ms"] += out["ms"] * len(test)
            for name, value in out["f1_by_dataset"].items():
                totals[name] = totals.get(name, 0.0) + value * test_sizes[name]
        ref = baseline_figures(test, model, reference)
        base_f1, base_ms = base_f1 + ref["f1"] * len(test), base_ms + ref["ms"] * len(test)
        for name, value in ref["f1_by_dataset"].items():
            base_by[name] = base_by.get(name, 0.0) + value * test_sizes[name]
    n = len(runs)
    sizes = dict(sorted(Counter(r["dataset"] for r in runs).items()))
    families = [{"ladder": list(key[0]), "signal": key[1], "stop_early": key[2], "f1": t["f1"] / n, "ms": t["ms"] / n,
                 "f1_by_dataset": {name: t.get(name, 0.0) / size for name, size in sizes.items()}}
                for key, t in per_family.items()]
    return {"folds": folds, "reference_f1": base_f1 / n, "reference_ms": base_ms / n,
            "reference_f1_by_dataset": {name: value / sizes[name] for name, value in base_by.items()},
            "families": sorted(families, key=lambda f: f["ms"])}


def fit(runs: Sequence[Mapping[str, Any]], max_f1_loss: float = MAX_F1_LOSS, folds: int = 0,
        reference: Reference | None = None) -> dict[str, Any]:
    """The cheapest cascade (ladder, signal, threshold, early stopping) within ``max_f1_loss`` F1 of
    the reference on ``runs``; every candidate's figures; the signals' AUROC; the layouts' F1 (on
    the runs that recorded the baseline in every layout).

    With ``folds``, the family (ladder, signal, early stopping) is chosen by cross-validation: the
    cheapest family whose out-of-fold F1 stays within ``max_f1_loss`` of the reference's, its
    threshold then fitted on every run. Choosing among some 150 families on the same questions
    picks one that happened to fit them (on the 320 runs of session 17: 0.0 F1 lost in sample, 2.0
    out of fold); a family's out-of-fold figures are what a new question sees. Without ``folds``,
    or when no family stays within the loss out of fold, the in-sample choice."""
    budgets = common_budgets(runs)
    model = time_model(runs)
    signals_auroc = {}
    for signal in CONFIDENCE_SIGNALS:
        per_budget = {}
        for budget in budgets:
            steps = [s for r in runs for s in r["grid"] if s["budget"] == budget and not s["abstained"]]
            per_budget[budget] = auroc([s["confidence"][signal] for s in steps], [s["f1"] >= CORRECT_F1 for s in steps])
        signals_auroc[signal] = per_budget
    base = baseline_figures(runs, model, reference)
    chosen, feasible, candidates = search(runs, budgets, model, max_f1_loss, reference)
    cv = cross_validate(runs, budgets, model, max_f1_loss, folds, reference) if folds > 1 else None
    selected_by = "in sample"
    if cv is not None:
        kept = [f for f in cv["families"] if within(f, floors(cv["reference_f1_by_dataset"], max_f1_loss))]
        if kept:
            best = min(kept, key=lambda f: (f["ms"], -f["f1"]))
            chosen, feasible = pick([c for c in candidates if family(c) == family(best)],
                                    floors(base["f1_by_dataset"], max_f1_loss))
            selected_by = "cross-validation"
    with_layouts = [r for r in runs if set(LAYOUTS) <= set(r.get("baseline") or {})]
    layouts = {name: 100 * sum(r["baseline"][name]["f1"] for r in with_layouts) / len(with_layouts)
               for name in LAYOUTS} if with_layouts else {}
    layout, markers, rerank_candidates, evidence_order = answered_as(runs[0])
    return {"questions": len(runs), "trained_on": sets_text(runs), "layout": layout, "citation_markers": markers,
            "rerank_candidates": rerank_candidates, "evidence_order": evidence_order,
            "budgets": budgets,
            "time_model_ms": dict(zip(("per_evaluated_token", "per_output_token", "per_answer"), model, strict=True)),
            "baseline": base, "reference": "given" if reference else "last budget",
            "layouts_f1": layouts, "layout_questions": len(with_layouts),
            "auroc": signals_auroc, "chosen": chosen, "feasible": feasible, "max_f1_loss": max_f1_loss,
            "selected_by": selected_by, "cross_validation": cv, "candidates": candidates}


def _cv_lines(cv: Mapping[str, Any] | None, chosen: Mapping[str, Any], max_f1_loss: float) -> list[str]:
    if not cv:
        return []
    lines = ["", f"How each family generalises ({cv['folds']}-fold cross-validation on these questions: each fold "
             "replayed with the family's threshold chosen on the other folds; reference F1 "
             f"{cv['reference_f1']:.1f} ({_by_dataset(cv['reference_f1_by_dataset'])}), {cv['reference_ms']:.0f} ms; "
             "the loss is allowed on each dataset; the fastest ten within it, and the fastest ten outside it):", "",
             "| ladder | signal | F1 out of fold | ms | speed-up | within the loss |", "| --- | --- | --- | --- | --- | --- |"]
    families = cv["families"]
    ok = [f for f in families if within(f, floors(cv["reference_f1_by_dataset"], max_f1_loss))]
    others = [f for f in families if f not in ok]
    for f in ok[:10] + others[:10]:
        mark = " (chosen)" if (f["ladder"], f["signal"], f["stop_early"]) == (
            chosen["ladder"], chosen["signal"], chosen["stop_early"]) else ""
        lines.append(f"| {'/'.join(label(b) for b in f['ladder'])} | {_candidate_text(f)}{mark} | {f['f1']:.1f} "
                     f"({_by_dataset(f['f1_by_dataset'])}) | "
                     f"{f['ms']:.0f} | {cv['reference_ms'] / f['ms']:.2f}× | {'yes' if f in ok else 'no'} |")
    return lines


def _by_dataset(f1s: Mapping[str, float]) -> str:
    return ", ".join(f"{name} {f1:.1f}" for name, f1 in f1s.items())


def _candidate_text(c: Mapping[str, Any]) -> str:
    return f"`{c['signal']}`{', stopped early' if c.get('stop_early') else ''}"


def report(result: Mapping[str, Any], by_dataset: Mapping[str, Mapping[str, Any]], sources: Sequence[str]) -> str:
    chosen, base = result["chosen"], result["baseline"]
    budgets = result["budgets"]
    lines = ["# The cascade, fitted on the train splits", "",
             "Written by `python -m training.cascade fit` from " + ", ".join(f"`{s}`" for s in sources)
             + " (the never-accepting cascade `python -m training.cascade run` and `python -m training.probe_router "
             "run` record; each question once); no dev question is used.", "",
             f"{result['questions']} training questions ({result['trained_on']}), each answered in the "
             f"`{result['layout']}` prompt layout ({'with' if result['citation_markers'] else 'without'} the model's "
             "citation markers) at evidence "
             f"budgets of {', '.join(label(b) for b in budgets)} generator tokens (whole passages in ranked order; "
             "'all': all five passages" + ("" if result.get("reference_source") else ", the reference below") + "; "
             + (f"the five are the best of {result['rerank_candidates']} dense candidates by the reranker"
                + (", each document's best passage first)." if result.get("evidence_order") == "title_diverse" else ").")
                if result.get("rerank_candidates") else "the five of the k = 5 baseline, in dense order).")
             + (f" The reference is the last budget of `{result['reference_source']}`: the same questions answered "
                "with all five passages of the k = 5 baseline." if result.get("reference_source") else ""),
             "",
             "## Chosen", "",
             f"- tiers: {', '.join(label(b) for b in chosen['ladder'])} tokens of evidence, cheapest first",
             f"- confidence signal {_candidate_text(chosen)}, accept at >= {chosen['threshold']:.4f}",
             f"- training F1 {chosen['f1']:.1f} (reference {base['f1']:.1f}"
             + (f", the last budget of `{result['reference_source']}`" if result.get("reference_source") else "")
             + f"; allowed loss {result['max_f1_loss']}"
             + (": half the 0.5 points the product allows, since a choice loses more out of fold than on the questions "
                "it was chosen on" if result["max_f1_loss"] == MAX_F1_LOSS else "") + "), "
             f"{chosen['escalated']:.0f}% of questions escalated",
             f"- prompt tokens evaluated {chosen['evaluated']:.0f} per question (reference {base['evaluated']:.0f}: "
             f"{100 * (1 - chosen['evaluated'] / base['evaluated']):.0f}% fewer)",
             f"- modelled generation time {chosen['ms']:.0f} ms (reference {base['ms']:.0f} ms: "
             f"{base['ms'] / chosen['ms']:.2f}x)",
             "" if result["feasible"] else "- no candidate kept the F1 within the allowed loss: this is the best trade-off",
             "- chosen " + ("by cross-validation (the cheapest family within the loss out of fold; its threshold on every run)"
                           if result.get("selected_by") == "cross-validation" else "in sample"),
             *_cv_lines(result.get("cross_validation"), chosen, result["max_f1_loss"]),
             "", "*Stopped early*: an answer the cascade will extend stops as soon as its confidence is certain to "
             "fall short (`PipelineConfig.stop_early`). The records keep no per-token figures, so the model charges "
             "such an answer one token when its first token decided it and every token otherwise (for `min_prob`, "
             "an upper bound)."]
    if result["layouts_f1"]:
        lines += ["", f"## Prompt layouts (k = 5 baseline, training F1, {result['layout_questions']} questions)", "",
                  "| layout | F1 |", "| --- | --- |"]
        lines += [f"| {name} | {f1:.1f} |" for name, f1 in result["layouts_f1"].items()]
    lines += ["", f"## Confidence signals: AUROC for a right answer (F1 >= {CORRECT_F1}), by evidence budget", "",
              "| signal | " + " | ".join(label(b) for b in budgets) + " |", "| --- |" + " --- |" * len(budgets)]
    for signal, per_budget in result["auroc"].items():
        lines.append(f"| {signal} | " + " | ".join(f"{per_budget[b]:.3f}" for b in budgets) + " |")
    lines += ["", "## F1 by evidence budget (every question answered at every budget)", "",
              "| dataset | questions | " + " | ".join(label(b) for b in budgets) + " |",
              "| --- | --- |" + " --- |" * len(budgets)]
    for name, figures in by_dataset.items():
        lines.append(f"| {name} | {figures['questions']} | " + " | ".join(f"{figures['grid_f1'][b]:.1f}" for b in budgets)
                     + " |")
    model = result["time_model_ms"]
    lines += ["", "## Time model", "",
              f"Generation time = {model['per_evaluated_token']:.1f} ms per evaluated prompt token + "
              f"{model['per_output_token']:.1f} ms per generated token + {model['per_answer']:.0f} ms per answer "
              "(non-negative least squares over every measured answer).", "",
              "## Best candidates per ladder and signal (cheapest within the allowed F1 loss, else best F1)", "",
              "| ladder | signal | threshold | F1 | within the loss | evaluated | ms | speed-up | escalated % |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    best: dict[tuple, tuple] = {}
    for c in result["candidates"]:
        key = (tuple(c["ladder"]), c["signal"], c["stop_early"])
        ok = within(c, floors(base["f1_by_dataset"], result["max_f1_loss"]))
        current = best.get(key)
        rank = (ok, -c["ms"] if ok else c["f1"])
        if current is None or rank > current[0]:
            best[key] = (rank, c)
    for (ok, _), c in sorted(best.values(), key=lambda item: (not item[0][0], item[1]["ms"]))[:24]:
        lines.append(f"| {'/'.join(label(b) for b in c['ladder'])} | {_candidate_text(c)} | {c['threshold']:.4f} | "
                     f"{c['f1']:.1f} | {'yes' if ok else 'no'} | {c['evaluated']:.0f} | {c['ms']:.0f} | "
                     f"{base['ms'] / c['ms']:.2f}× | {c['escalated']:.0f} |")
    return "\n".join(lines) + "\n"


def read_all_runs(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """The recorded runs of every file, each question once (a later file's record replaces an
    earlier one's: the probe router's runs reuse and extend this command's)."""
    by_question: dict[tuple[str, str], dict[str, Any]] = {}
    for path in paths:
        if path.is_file():
            for r in read_runs(path):
                if r.get("grid"):
                    by_question[(r["dataset"], r["id"])] = r
    return list(by_question.values())


def shown_path(path: Path) -> str:
    """A path as the reports show it: relative to the repository when inside it."""
    root = Path(__file__).resolve().parent.parent
    return str(path.resolve().relative_to(root)) if path.resolve().is_relative_to(root) else str(path)


def fit_command(args: argparse.Namespace) -> int:
    from components.storage import atomic_write_text

    sources = [args.out, *args.runs]
    runs = read_all_runs(sources)
    if not runs:
        raise SystemExit(f"no recorded runs in {', '.join(map(str, sources))}; run `python -m training.cascade run` first")
    ways = sorted({answered_as(r) for r in runs}, key=str)
    if len(ways) > 1:  # different answers, confidences and costs: a threshold fit on a mix fits neither
        shown = "; ".join(answered_text(*way) for way in ways)
        raise SystemExit(f"the runs were answered in different ways ({shown}); fit one at a time "
                         "(--out FILE --runs with the files answered that way only)")
    reference = None
    if getattr(args, "reference", None) and str(args.reference) != "none":
        recorded = {(r["dataset"], r["id"]): r for r in read_all_runs([args.reference])}
        missing = [key for key in ((r["dataset"], r["id"]) for r in runs) if key not in recorded]
        if missing:
            raise SystemExit(f"{args.reference} lacks {len(missing)} of the {len(runs)} questions (first: {missing[0]}); "
                             "the reference must answer every question the fit reads")
        reference = recorded
    result = fit(runs, max_f1_loss=args.max_f1_loss, folds=args.folds, reference=reference)
    if reference is not None:
        result["reference_source"] = shown_path(args.reference)
    by_dataset = {}
    for name in sorted({r["dataset"] for r in runs}):
        rows = [r for r in runs if r["dataset"] == name]
        by_dataset[name] = {"questions": len(rows), "grid_f1": {
            b: 100 * float(np.mean([s["f1"] for r in rows for s in r["grid"] if s["budget"] == b])) for b in result["budgets"]}}
    shown = [shown_path(p) for p in sources]
    args.report.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.report / "README.md", report(result, by_dataset, shown))
    summary = {k: v for k, v in result.items() if k != "candidates"}
    atomic_write_text(args.report / "fit.json", json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary["chosen"], indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser, run_parser, fit_parser = run_fit_parser(
        __doc__.split("\n\n")[0], RUNS_FILE, "answer the training questions at every budget (resumable)",
        "fit tiers, signal and threshold from the recorded runs")
    run_parser.add_argument("--baselines", type=Path, action="append", default=[],
                            help="an earlier runs file whose baseline answers to reuse (repeatable)")
    run_parser.add_argument("--layout", choices=list(LAYOUTS), default=DEFAULT_LAYOUT,
                            help=f"the answer prompt's layout for the grid (default: {DEFAULT_LAYOUT})")
    run_parser.add_argument("--size", type=int, default=None,
                            help=f"questions per dataset (default: {', '.join(f'{s.dataset} {s.size}' for s in SETS)})")
    run_parser.add_argument("--citation-markers", action="store_true",
                            help="let the model write its citation markers, as the runs recorded before session 16 did "
                                 "(default: the product's default, without)")
    run_parser.add_argument("--grid", type=parse_grid, default=GRID,
                            help="the evidence budgets, cheapest first, 'all' last (default: "
                                 + ",".join(label(b) for b in GRID) + ")")
    run_parser.add_argument("--reference-only", action="store_true",
                            help="record only the k = 5 baseline's answers (dense order, --layout), as runs whose "
                                 "grid is that answer at 'all': a reference for fit --reference")
    run_parser.add_argument("--evidence-order", choices=list(EVIDENCE_ORDERS), default="score",
                            help="the order of the reranked passages the budgets fill in (default: score)")
    run_parser.add_argument("--no-baselines", action="store_true",
                            help="record only the grid (its last budget is the baseline's evidence in --layout)")
    fit_parser.add_argument("--max-f1-loss", type=float, default=MAX_F1_LOSS,
                            help=f"F1 points the cascade may lose on train (default {MAX_F1_LOSS})")
    fit_parser.add_argument("--folds", type=int, default=5, help="cross-validate the choice over this many folds "
                            "(default 5; 0 skips it)")
    fit_parser.add_argument("--runs", type=Path, nargs="*", default=list(MORE_RUNS),
                            help="more runs of the never-accepting cascade to fit on besides --out (default: the probe "
                                 "router's)")
    fit_parser.add_argument("--reference", type=Path, default=REFERENCE_RUNS,
                            help="runs of the same questions whose last budget is the reference F1 and time (default: "
                                 "the k = 5 baseline's passages in dense order, "
                                 f"{REFERENCE_RUNS.relative_to(REFERENCE_RUNS.parents[2])}); 'none': the last budget "
                                 "of the fitted runs")
    fit_parser.add_argument("--report", type=Path, default=REPORT_DIR)
    args = parser.parse_args(argv)
    return run(args) if args.command == "run" else fit_command(args)


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
