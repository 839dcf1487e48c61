"""Fitting the router that sees the retrieval (#19 item 4) on the train splits.

    python -m training.probe_router run        # answer the training questions every way (resumable)
    python -m training.probe_router fit        # components/probe_router.json, docs/probe_router/README.md

``run`` records, for each training question (SQuAD 2.0 train articles and HotpotQA train,
interleaved), what the router reads and what each of its rungs would have answered, each from the
same warm state:

* the question's embedding and its retrieval-probe features (:func:`components.retrieval_gate.probe`);
* the closed-book answer;
* the cascade's tiers in order (one never-accepting cascade: Easy, extended in place to Medium,
  then to Hard, which holds the baseline's five passages), with each answer's confidence signals
  and cost.

Recorded answers are reused wherever the configuration did not change: a question already in
``training/labels/cascade_runs.jsonl`` keeps its answers at the budgets the tiers still have, and
one in ``training/labels/policy_runs.jsonl`` its closed-book answer, probe and embedding; only what
is missing is run. One JSON line per question is appended as soon as it is done.

``fit`` then, with no model run:

* labels every question with a rule of :data:`training.labelling.LABEL_RULES` over the rungs
  (closed book, Easy, Medium, Hard): by default cost-aware, the cheapest rung within epsilon F1
  of the best (so the cheapest when none is right); ``--rule thesis`` is the thesis' rule;
* fits one logistic regression per rung but the last, ``P(label <= rung)``, on the probe features
  alone and on probe features with the embedding, compared out of fold (5 folds);
* replays the policy on the recorded answers for every threshold (closed book, or the cascade
  from the chosen tier with the shipped confidence signal and threshold), with out-of-fold
  probabilities, and picks the cheapest (modelled time) whose train F1 stays within
  ``--max-f1-loss`` of the k = 5 baseline's.

Nothing here looks at a dev question.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from components.logistic import fit_logistic
from components.probe_router import CLOSED_BOOK_RUNG, DEFAULT_PROBE_ROUTER, ProbeRouter
from components.retrieval_gate import PROBE_FEATURES, ProbeModel, probe
from pipeline.configuration import PROBE_ROUTER_TIERS, PipelineConfig, cheapest_first
from training.cascade import answer_figures, answered_as, answering, auroc, pad_grid, scored_steps, simulate, time_model
from training.labelling import (COST_AWARE_EPSILON, LABEL_RULES, MULTI_HOP, TrainingSet, configuration_label,
                                record_answers, run_fit_parser, sets_text)

SETS = (TrainingSet("squad", "train", 160), TrainingSet("hotpotqa", "train", 160))
LABELS = Path(__file__).resolve().parent / "labels"
RUNS_FILE = LABELS / "probe_router_runs.jsonl"
CASCADE_RUNS = LABELS / "cascade_runs.jsonl"
POLICY_RUNS = LABELS / "policy_runs.jsonl"
REPORT_DIR = Path(__file__).resolve().parent.parent / "docs" / "probe_router"
FOLDS = 5
FIT_PIPELINE = PipelineConfig(tiers=PROBE_ROUTER_TIERS, multi_hop_tier=None)
"""The configuration the router's rungs were recorded and fit in: the default tiers with Easy at 64 tokens."""


def ladder_tiers(pipeline: PipelineConfig | None = None) -> list[str]:
    """The tiers the router chooses among, cheapest first (every configured tier)."""
    return cheapest_first((pipeline or FIT_PIPELINE).tiers)


def rungs(pipeline: PipelineConfig | None = None) -> list[str]:
    """The router's rungs, cheapest first: closed book, then every tier."""
    return [CLOSED_BOOK_RUNG, *ladder_tiers(pipeline)]


def tier_budgets(pipeline: PipelineConfig | None = None) -> dict[str, int | None]:
    """Each tier's evidence budget in tokens (``None``: every passage), the key of its recorded answer."""
    pipeline = pipeline or FIT_PIPELINE
    return {name: pipeline.tiers[name].context_tokens for name in ladder_tiers(pipeline)}


def grid_pipeline(pipeline: PipelineConfig | None = None) -> PipelineConfig:
    """The cascade over every tier from the cheapest, never accepting and finishing every answer:
    one pass records them all."""
    pipeline = pipeline or FIT_PIPELINE
    tiers = {name: replace(budget, cascade=True) for name, budget in pipeline.tiers.items()}
    return replace(pipeline, policy="cascade", tiers=tiers, tier=ladder_tiers(pipeline)[0], accept_threshold=1e9,
                   max_escalations=len(tiers) - 1, stop_early=False)


def reusable_grid(recorded: Mapping[str, Any] | None, pipeline: PipelineConfig | None = None) -> list[dict] | None:
    """A recorded cascade run's steps when they hold an answer at every tier's budget and were
    answered the way ``pipeline`` answers (prompt layout, citation markers, the same candidates
    reranked or dense order), else ``None``. The grid's tiers differ from the shipped ones only in
    their budget (whole passages in ranked order), so an answer at the same budget is the same
    configuration."""
    if not recorded or not recorded.get("grid"):
        return None
    pipeline = pipeline or FIT_PIPELINE
    layout, markers, candidates, order = answered_as(recorded)
    have = {step["budget"] for step in recorded["grid"]}
    tiers = [pipeline.tiers[t] for t in ladder_tiers(pipeline)]
    same = ((layout, markers, order) == (pipeline.prompt_layout, pipeline.citation_markers, pipeline.evidence_order)
            and all(t.fill == "rank" and t.rerank == bool(candidates) and t.candidates == candidates for t in tiers))
    return recorded["grid"] if same and all(b in have for b in tier_budgets(pipeline).values()) else None


def answer_question(ctx, example, cascade_run: Mapping[str, Any] | None = None,
                    policy_run: Mapping[str, Any] | None = None, pipeline: PipelineConfig | None = None) -> dict[str, Any]:
    """Everything the router's fit needs for one question on ``pipeline``'s tiers (the shipped
    ones by default), reusing what earlier runs recorded."""
    from eval.runner import run_one
    from eval.systems import System, all_systems

    out: dict[str, Any] = {"id": example.id, "dataset": example.dataset, "question": example.question,
                           "answerable": example.answerable, "gold_answers": list(example.answers)}
    if policy_run:
        out.update(probe=policy_run["probe"], embedding=policy_run["embedding"], closed_book=policy_run["closed_book"])
    else:
        embedding = ctx.embedder.embed_query(example.question)
        out["probe"] = probe(ctx.index, embedding)
        out["embedding"] = [round(float(v), 6) for v in embedding]
        out["closed_book"] = answer_figures(run_one(ctx, all_systems()["no-retrieval"], example))
    grid = reusable_grid(cascade_run, pipeline)
    tiers = grid_pipeline(pipeline)
    if grid is None:
        record = run_one(ctx, System("tiers", "never-accepting cascade over every tier", tiers), example)
        grid = pad_grid(scored_steps(record, example), list(tier_budgets(pipeline).values()))
    out["grid"] = grid
    out.update(answering(tiers))
    out["baseline"] = dict((cascade_run or {}).get("baseline") or {})
    out["reused"] = {"grid": cascade_run is not None and grid is cascade_run["grid"], "closed_book": bool(policy_run)}
    return out


def read_runs(path: Path) -> list[dict[str, Any]]:
    from eval.runner import read_records

    return read_records(path)


def run(args) -> int:
    cascade_runs = {(r["dataset"], r["id"]): r for r in read_runs(CASCADE_RUNS)}
    policy_runs = {(r["dataset"], r["id"]): r for r in read_runs(POLICY_RUNS)}

    def answer(ctx, example):
        key = (example.dataset, example.id)
        return answer_question(ctx, example, cascade_runs.get(key), policy_runs.get(key))

    # no probe router while recording: the router is what these answers are for
    return record_answers(args, SETS, answer, probe_router=None)


# ---- fitting, from the recorded runs only ----

def rung_answers(run: Mapping[str, Any], pipeline: PipelineConfig | None = None) -> list[Mapping[str, Any]]:
    """The recorded answer of every rung, cheapest first (closed book, then each tier's)."""
    by_budget = {step["budget"]: step for step in run["grid"]}
    return [run["closed_book"], *(by_budget[b] for b in tier_budgets(pipeline).values())]


def label(run: Mapping[str, Any], rule: str = "cost-aware", epsilon: float = COST_AWARE_EPSILON) -> int:
    """The question's rung (an index into :func:`rungs`). The thesis rule's fallback, when no rung is
    right, is Hard for a multi-hop question and Medium otherwise, as the thesis labels are."""
    answers = rung_answers(run)
    names = rungs()
    fallback = names.index("hard" if run["dataset"] in MULTI_HOP else "medium")
    return configuration_label([a["f1"] for a in answers], [a["em"] for a in answers], rule, epsilon=epsilon,
                               fallback=fallback)


def feature_rows(runs: Sequence[Mapping[str, Any]], features: Sequence[str]) -> list[list[float]]:
    return [[float(r["probe"][f]) if f in r["probe"] else float(r["embedding"][int(f[1:])]) for f in features]
            for r in runs]


def fit_router(runs: Sequence[Mapping[str, Any]], labels: Sequence[int], features: Sequence[str], threshold: float,
               l2: float = 1.0, metadata: Mapping[str, Any] | None = None) -> ProbeRouter:
    """One model per rung but the last, ``P(label <= rung)``; a rung every question (or none) reaches
    gets a model that says so (its intercept alone)."""
    rows = feature_rows(runs, features)
    names = rungs()
    models = []
    for i in range(len(names) - 1):
        y = [int(lab <= i) for lab in labels]
        if len(set(y)) < 2:
            share = min(max(float(np.mean(y)), 1e-6), 1 - 1e-6)
            models.append(ProbeModel(tuple(features), tuple(0.0 for _ in features), tuple(1.0 for _ in features),
                                     tuple(0.0 for _ in features), float(np.log(share / (1 - share))),
                                     {"rung": names[i], "positives": int(sum(y))}))
        else:
            models.append(fit_logistic(rows, y, features, l2=l2, model=ProbeModel,
                                       metadata={"rung": names[i], "positives": int(sum(y))}))
    return ProbeRouter(tuple(names), tuple(models), threshold, dict(metadata or {}))


def out_of_fold(runs: Sequence[Mapping[str, Any]], labels: Sequence[int], features: Sequence[str],
                l2: float = 1.0, folds: int = FOLDS) -> np.ndarray:
    """Each question's rung probabilities (shape ``(n, rungs - 1)``) from models fit on the other folds."""
    rows = feature_rows(runs, features)
    out = np.zeros((len(runs), len(rungs()) - 1))
    for k in range(folds):
        test = [i for i in range(len(runs)) if i % folds == k]
        train = [i for i in range(len(runs)) if i % folds != k]
        router = fit_router([runs[i] for i in train], [labels[i] for i in train], features, 0.5, l2)
        for i in test:
            values = dict(zip(features, rows[i], strict=True))
            out[i] = [model.score(values) for model in router.models]
    return out


def choose(probabilities: np.ndarray, threshold: float) -> list[str]:
    """The rung the router takes for each row of probabilities at ``threshold``."""
    names = rungs()
    return [next((names[i] for i, p in enumerate(row) if p >= threshold), names[-1]) for row in probabilities]


def replay(runs: Sequence[Mapping[str, Any]], chosen: Sequence[str], model: tuple[float, float, float],
           pipeline: PipelineConfig | None = None) -> dict[str, Any]:
    """The policy replayed on the recorded answers: closed book as recorded, or the cascade from
    the chosen tier (the shipped signal and threshold); mean F1, evaluated tokens, modelled time."""
    pipeline = replace(pipeline or FIT_PIPELINE, policy="probe-router")
    budgets = tier_budgets(pipeline)
    per_token, per_output, per_answer = model
    f1 = evaluated = ms = 0.0
    counts = dict.fromkeys(rungs(pipeline), 0)
    for r, rung in zip(runs, chosen, strict=True):
        counts[rung] += 1
        if rung == CLOSED_BOOK_RUNG:
            cb = r["closed_book"]
            f1 += 100 * cb["f1"]
            evaluated += cb["prompt_tokens_evaluated"] or 0
            ms += per_token * (cb["prompt_tokens_evaluated"] or 0) + per_output * (cb["output_tokens"] or 0) + per_answer
            continue
        ladder = [budgets[rung], *(b.context_tokens for b in pipeline.ladder(rung))]
        one = simulate([r], ladder, pipeline.confidence_signal, pipeline.accept_threshold, model,
                       stop_early=pipeline.stop_early)
        f1, evaluated, ms = f1 + one["f1"], evaluated + one["evaluated"], ms + one["ms"]
    n = max(len(runs), 1)
    return {"f1": f1 / n, "evaluated": evaluated / n, "ms": ms / n, "rungs": counts}


def fit(args) -> int:
    from components.storage import atomic_write_text

    runs = [r for r in read_runs(args.out) if r.get("grid")]
    if len(runs) < 20:
        raise SystemExit(f"{len(runs)} recorded questions in {args.out}: run `python -m training.probe_router run` first")
    model = time_model(runs)
    labels = [label(r, args.rule, args.epsilon) for r in runs]
    names = rungs()
    pipeline = FIT_PIPELINE
    hard = names[-1]
    references = {
        "k = 5 baseline (Hard, no cascade)": replay(runs, [hard] * len(runs), model, replace(pipeline, max_escalations=0)),
        **{f"cascade from {tier}{' (shipped)' if tier == pipeline.start_tier() else ''}":
           replay(runs, [tier] * len(runs), model) for tier in names[1:-1]},
        "closed book": replay(runs, [CLOSED_BOOK_RUNG] * len(runs), model),
        "oracle labels (a perfect router)": replay(runs, [names[i] for i in labels], model),
    }
    base_f1 = references["k = 5 baseline (Hard, no cascade)"]["f1"]
    dim = len(runs[0]["embedding"])
    candidates = {"probe": list(PROBE_FEATURES), "probe+embedding": [*PROBE_FEATURES, *(f"q{i}" for i in range(dim))]}
    compared = {}
    for name, features in candidates.items():
        oof = out_of_fold(runs, labels, features, args.l2)
        rung_auroc = {names[i]: auroc(oof[:, i].tolist(), [lab <= i for lab in labels]) for i in range(len(names) - 1)}
        sweep = []
        for threshold in np.round(np.linspace(0.0, 1.0, 51), 4).tolist():
            sweep.append({"threshold": threshold, **replay(runs, choose(oof, threshold), model)})
        within = [row for row in sweep if row["f1"] >= base_f1 - args.max_f1_loss]
        best = min(within, key=lambda row: (row["ms"], -row["f1"])) if within else max(sweep, key=lambda row: row["f1"])
        compared[name] = {"auroc": rung_auroc, "chosen": best, "feasible": bool(within), "sweep": sweep}
    shipped = min(compared, key=lambda n: (not compared[n]["feasible"], compared[n]["chosen"]["ms"]
                                           if compared[n]["feasible"] else -compared[n]["chosen"]["f1"]))
    chosen = compared[shipped]["chosen"]
    router = fit_router(runs, labels, candidates[shipped], chosen["threshold"], args.l2, metadata={
        "features_set": shipped, "rule": args.rule, "epsilon": args.epsilon, "trained_on": sets_text(runs),
        "questions": len(runs), "label_counts": {n: labels.count(i) for i, n in enumerate(names)},
        "cv_auroc": compared[shipped]["auroc"], "train_f1_at_threshold": chosen["f1"], "train_baseline_f1": base_f1,
        "max_f1_loss": args.max_f1_loss, "fitted_by": "python -m training.probe_router fit"})
    router.save(args.router)
    args.report.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.report / "README.md", _report(runs, labels, references, compared, shipped, model, args))
    atomic_write_text(args.report / "fit.json", json.dumps({
        "references": references, "shipped": shipped, "rule": args.rule, "epsilon": args.epsilon,
        "compared": compared,
        "time_model_ms": model}, indent=2) + "\n")
    print(f"probe router: {shipped}, threshold {chosen['threshold']}, train F1 {chosen['f1']:.1f} "
          f"(baseline {base_f1:.1f}), modelled {chosen['ms']:.0f} ms "
          f"(baseline {references['k = 5 baseline (Hard, no cascade)']['ms']:.0f} ms); rungs {chosen['rungs']}")
    return 0


def _row(name: str, figures: Mapping[str, Any], base: Mapping[str, Any]) -> str:
    spread = ", ".join(f"{k}: {v}" for k, v in figures["rungs"].items() if v)
    return (f"| {name} | {figures['f1']:.1f} | {figures['evaluated']:.0f} | {figures['ms']:.0f} | "
            f"{base['ms'] / figures['ms']:.2f}× | {spread} |")


def _report(runs, labels, references, compared, shipped, model, args) -> str:
    names = rungs()
    base = references["k = 5 baseline (Hard, no cascade)"]
    chosen = compared[shipped]["chosen"]
    rule_text = (f"cost-aware: the cheapest rung whose F1 is within {args.epsilon} of the best rung's (so the "
                 "cheapest when none is right)" if args.rule == "cost-aware" else
                 "the thesis' rule: the cheapest correct rung (EM, or F1 >= 0.6), else Hard for HotpotQA and Medium otherwise")
    lines = [
        "# The router that sees the retrieval, fit on the train splits", "",
        "Written by `python -m training.probe_router fit` from the answers `python -m training.probe_router run` "
        f"recorded ({sets_text(runs)}; {len(runs)} questions, each from the same warm state). No dev question is used.",
        "", f"Rungs, cheapest first: {', '.join(names)}. Labels: {rule_text}.", "",
        "| dataset | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
    for dataset in sorted({r["dataset"] for r in runs}):
        counts = [sum(1 for r, lab in zip(runs, labels, strict=True) if r["dataset"] == dataset and lab == i)
                  for i in range(len(names))]
        lines.append(f"| {dataset} | " + " | ".join(str(c) for c in counts) + " |")
    lines += ["", "Train F1 of every rung's answer: " + ", ".join(
        f"{n} {100 * np.mean([rung_answers(r)[i]['f1'] for r in runs]):.1f}" for i, n in enumerate(names)) + ".", "",
        "## Features and threshold", "",
        "One logistic regression per rung but the last gives P(that rung or a cheaper one is enough); the router "
        "takes the cheapest rung at or above the threshold, else Hard, and the cascade escalates from there. "
        "Probabilities are out of fold (5 folds); the threshold is the cheapest (modelled time) whose train F1 "
        f"stays within {args.max_f1_loss} of the k = 5 baseline's.", "",
        "| features | AUROC per rung (out of fold) | threshold | train F1 | prompt tokens evaluated | modelled ms "
        "| within the F1 budget |",
        "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, c in compared.items():
        aurocs = ", ".join(f"{k} {v:.2f}" for k, v in c["auroc"].items())
        lines.append(f"| {name}{' (shipped)' if name == shipped else ''} | {aurocs} | {c['chosen']['threshold']:.2f} | "
                     f"{c['chosen']['f1']:.1f} | {c['chosen']['evaluated']:.0f} | {c['chosen']['ms']:.0f} | "
                     f"{'yes' if c['feasible'] else 'no'} |")
    lines += ["", "## Replayed on the training answers", "",
              "| policy | train F1 | prompt tokens evaluated | modelled ms | speed-up | rungs |",
              "| --- | --- | --- | --- | --- | --- |"]
    for name, figures in references.items():
        lines.append(_row(name, figures, base))
    lines.append(_row(f"probe router ({shipped}, threshold {chosen['threshold']:.2f}, out of fold)", chosen, base))
    starts = {name: f for name, f in references.items() if name.startswith("cascade from ")
              and f["f1"] >= base["f1"] - args.max_f1_loss}
    if starts:
        name, best = min(starts.items(), key=lambda item: item[1]["ms"])
        lines += ["", f"What the router adds over the cheapest single starting tier within the same F1 budget ({name}): "
                      f"{chosen['f1'] - best['f1']:+.1f} F1 and {best['ms'] / chosen['ms']:.2f}× its modelled speed."]
    lines += ["", "## The threshold's trade-off (shipped features, out of fold)", "",
              "| threshold | train F1 | evaluated | modelled ms | rungs |", "| --- | --- | --- | --- | --- |"]
    for row in compared[shipped]["sweep"][::5]:
        spread = ", ".join(f"{k}: {v}" for k, v in row["rungs"].items() if v)
        lines.append(f"| {row['threshold']:.2f} | {row['f1']:.1f} | {row['evaluated']:.0f} | {row['ms']:.0f} | {spread} |")
    per_token, per_output, per_answer = model
    lines += ["", f"Modelled time: {per_token:.1f} ms per evaluated prompt token + {per_output:.1f} ms per generated "
                  f"token + {per_answer:.0f} ms per answer (fitted to every recorded answer, `training.cascade.time_model`).",
              "", "Shipped: `components/probe_router.json`; `PipelineConfig.router_threshold` (or the override "
                  "`router_threshold`) moves the threshold."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser, run_parser, fit_parser = run_fit_parser(
        __doc__.split("\n\n")[0], RUNS_FILE, "answer the training questions at every rung (resumable)",
        "fit the router and its threshold from the recorded answers")
    fit_parser.add_argument("--rule", choices=LABEL_RULES, default="cost-aware", help="how a question is labelled")
    fit_parser.add_argument("--epsilon", type=float, default=COST_AWARE_EPSILON,
                            help="F1 (0..1) within which a cheaper rung counts as good as the best (cost-aware rule)")
    fit_parser.add_argument("--max-f1-loss", type=float, default=0.5, help="train F1 points the router may lose")
    fit_parser.add_argument("--l2", type=float, default=1.0, help="the rung models' L2 penalty")
    fit_parser.add_argument("--router", type=Path, default=DEFAULT_PROBE_ROUTER,
                            help=f"where the router goes (default: {DEFAULT_PROBE_ROUTER})")
    fit_parser.add_argument("--report", type=Path, default=REPORT_DIR, help=f"report folder (default: {REPORT_DIR})")
    args = parser.parse_args(argv)
    return run(args) if args.command == "run" else fit(args)


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
