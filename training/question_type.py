"""Fitting the question-type model (multi-hop or not) and where the cascade starts, on the train splits.

    python -m training.question_type [--report docs/question_type] [--model components/question_type.json]

No generator runs. Two steps:

1. **The model.** Labels come from the dataset a question belongs to (Adaptive-RAG's inductive
   bias): every HotpotQA train question is multi-hop (1); a seeded sample of SQuAD 2.0 train-article
   questions, NQ-open train and TriviaQA train questions are single-hop (0). A logistic regression
   over the question's MiniLM embedding and its word counts (:mod:`components.question_type`),
   compared out of fold (5 folds, AUROC), then fit on every row.
2. **The threshold.** The cascade's recorded train answers at 96 and 128 tokens and all five
   passages (``training.cascade run --grid 96,128,all``) are replayed with the shipped confidence
   signal and threshold: a question whose out-of-fold probability reaches the threshold starts at
   Medium (128 tokens), any other at Easy (96); both climb to all five while unsure. Chosen: the
   cheapest threshold (modelled time, ``training.cascade.time_model``) whose train F1 stays within
   ``--max-f1-loss`` of the k = 5 baseline's on every dataset, the cascade fit's rule.

The folds hold out a SQuAD 2.0 question's whole article (the train data here hold 20 articles, about a
hundred sampled questions each; session 50: with random folds every fold model had seen the held-out
question's article, and read 9.6% of SQuAD's questions as multi-hop at 5% where a dev article, never
seen, gets 16.6%). A run question the model was trained on gets its out-of-fold probability; one it
never saw (the SQuAD ones: the model sees a sample of the articles' questions) gets the probability of
the fold model that has not seen its article. Nothing here looks at a dev question.

Every training question's out-of-fold probability is also written to :data:`CROSS_FIT`: the reading
that a question the model never saw would get. The answerability check's per-type thresholds are fit
on it (``training.answerability``), not on the shipped model's reading of questions it was trained on,
which reads 195 of the 200 HotpotQA train questions as multi-hop where out of fold 166 are.
"""

from __future__ import annotations

import argparse
from collections import Counter
import json
import random
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from components.logistic import fit_logistic
from components.question_type import DEFAULT_QUESTION_TYPE, LEXICAL_FEATURES, QuestionTypeModel, question_features
from pipeline.configuration import DEFAULT_TIERS, PipelineConfig
from training.cascade import (MAX_F1_LOSS, REFERENCE_RUNS, auroc, baseline_figures, read_runs, shown_path, simulate,
                              time_model)

SOURCES = (("hotpotqa", None, 1), ("squad", 2000, 0), ("nq", 1000, 0), ("triviaqa", 1000, 0))
"""(dataset, how many train questions, label): every HotpotQA train question is multi-hop, a seeded
sample of each single-hop dataset is not."""
RUNS = Path(__file__).resolve().parent / "labels" / "cascade_runs_evidence_first_reranked_96.jsonl"
"""The cascade's train answers at 96 and 128 tokens and all five passages (session 24)."""
L2 = 100.0
"""The penalty: 384 embedding dimensions and 200 multi-hop questions; out of fold 100 separates
better than 1 or 30 (AUROC 0.920 against 0.874 and 0.912, session 25)."""
FOLDS = 5
REPORT_DIR = Path(__file__).resolve().parent.parent / "docs" / "question_type"
CROSS_FIT = Path(__file__).resolve().parent / "labels" / "question_type_cross_fit.jsonl"
"""Each training question's out-of-fold ``multi_hop_probability`` (``dataset``, ``id``), and that of
every question of the recorded answers the train-side fits read (the cascade's runs, ``--also-read``),
by a model that has not seen its SQuAD 2.0 article."""
ANSWERABILITY_RUNS = Path(__file__).resolve().parent / "labels" / "answerability_runs_question_type.jsonl"
"""The answerability check's recorded training answers (``training.answerability.RUNS_FILE``)."""
THRESHOLDS = (0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5)


def training_rows(seed: int, root: str | None) -> list[dict[str, Any]]:
    """The labelled train questions of :data:`SOURCES` (dataset, id, question, label, and the
    :func:`group` a fold holds out whole)."""
    from eval.datasets import load

    rows = []
    for dataset, size, label in SOURCES:
        examples = list(load(dataset, "train", root))
        if size is not None and len(examples) > size:
            examples = random.Random(seed).sample(examples, size)
        rows += [{"dataset": dataset, "id": e.id, "question": e.question, "label": label,
                  "group": group(dataset, e.id, e.meta.get("title"))} for e in examples]
    return rows


def group(dataset: str, question_id: str, article: str | None) -> str:
    """What a fold holds out whole: a SQuAD 2.0 question's article (the train data here hold 20, about a
    hundred sampled questions each: a fold model that has seen the article reads its other questions as
    it read those, and a dev article is one it has never seen), any other question on its own."""
    return f"{dataset}:{article}" if dataset == "squad" and article else f"{dataset}/{question_id}"


def run_groups(runs: Sequence[Mapping[str, Any]], root: str | None) -> dict[tuple[str, str], str]:
    """The :func:`group` of each recorded run's question (a SQuAD 2.0 one's article from the train data)."""
    from eval.datasets import load

    articles = ({e.id: e.meta.get("title") for e in load("squad", "train", root)}
                if any(r["dataset"] == "squad" for r in runs) else {})
    return {(r["dataset"], r["id"]): group(r["dataset"], r["id"], articles.get(r["id"])) for r in runs}


def fold_assignment(groups: Sequence[str], folds: int, seed: int) -> np.ndarray:
    """Each row's fold, every group's rows in one fold: the groups shuffled (by ``seed``), then dealt
    out largest first to the fold with the fewest rows so far."""
    sizes = Counter(groups)
    order = sorted(sizes)
    np.random.default_rng(seed).shuffle(order)
    order.sort(key=lambda g: -sizes[g])  # stable: ties keep the shuffled order
    filled, fold_of = [0] * folds, {}
    for g in order:
        k = int(np.argmin(filled))
        fold_of[g] = k
        filled[k] += sizes[g]
    return np.array([fold_of[g] for g in groups], dtype=int)


def feature_matrix(questions: Sequence[str], embeddings: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Every question's features (:func:`components.question_type.question_features`), in one order."""
    names = [f"q{i}" for i in range(embeddings.shape[1])] + list(LEXICAL_FEATURES)
    return names, np.asarray([[question_features(q, e)[n] for n in names] for q, e in zip(questions, embeddings, strict=True)])


def fold_models(x: np.ndarray, labels: Sequence[int], names: Sequence[str], assignment: np.ndarray,
                l2: float = L2) -> list[QuestionTypeModel]:
    """One model per fold, fit on the other folds' rows."""
    y = np.asarray(labels)
    return [fit_logistic(x[assignment != k].tolist(), y[assignment != k].tolist(), names, l2=l2, model=QuestionTypeModel)
            for k in range(int(assignment.max()) + 1)]


def scored_by(models: Sequence[QuestionTypeModel], which: Sequence[int], x: np.ndarray,
              names: Sequence[str]) -> np.ndarray:
    """Each row's probability from ``models[which[i]]``."""
    return np.array([models[k].score(dict(zip(names, row, strict=True))) for k, row in zip(which, x, strict=True)])


def out_of_fold(x: np.ndarray, labels: Sequence[int], names: Sequence[str], folds: int, seed: int,
                l2: float = L2, groups: Sequence[str] | None = None) -> np.ndarray:
    """Each row's probability from a model fit on the other folds (``groups``: each held out whole,
    :func:`fold_assignment`; none: each row on its own)."""
    assignment = fold_assignment(groups if groups is not None else [str(i) for i in range(len(labels))], folds, seed)
    return scored_by(fold_models(x, labels, names, assignment, l2), assignment, x, names)


def replay(runs: Sequence[Mapping[str, Any]], probability: Mapping[tuple[str, str], float], threshold: float,
           model: tuple[float, float, float], pipeline: PipelineConfig) -> dict[str, Any]:
    """The cascade replayed on recorded answers with its start chosen by ``threshold``: multi-hop
    from ``pipeline.multi_hop_tier``, the rest from its cheapest tier; F1 (overall and by dataset),
    evaluated tokens and modelled time per question, and how many started where."""
    tiers = pipeline.tiers
    cheapest, multi = pipeline.start_tier(), pipeline.multi_hop_tier or pipeline.start_tier()

    def ladder(start: str) -> tuple[int | None, ...]:
        return tuple(b.context_tokens for b in (tiers[start], *pipeline.ladder(start)))

    groups = {cheapest: [r for r in runs if probability[(r["dataset"], r["id"])] < threshold],
              multi: [r for r in runs if probability[(r["dataset"], r["id"])] >= threshold]}
    if cheapest == multi:
        groups = {cheapest: list(runs)}
    n = len(runs)
    totals = {"f1": 0.0, "evaluated": 0.0, "ms": 0.0}
    by_dataset: dict[str, float] = {}
    for start, group in groups.items():
        if not group:
            continue
        result = simulate(group, ladder(start), pipeline.confidence_signal, pipeline.accept_threshold, model,
                          pipeline.stop_early)
        for key in totals:
            totals[key] += result[key] * len(group) / n
        for dataset, f1 in result["f1_by_dataset"].items():
            by_dataset[dataset] = by_dataset.get(dataset, 0.0) + f1 * sum(r["dataset"] == dataset for r in group)
    counts = {d: sum(r["dataset"] == d for r in runs) for d in sorted({r["dataset"] for r in runs})}
    return {**totals, "f1_by_dataset": {d: by_dataset.get(d, 0.0) / c for d, c in counts.items()},
            "starts": {start: {d: sum(r["dataset"] == d for r in group) for d in counts} for start, group in groups.items()}}


def choose(results: Sequence[Mapping[str, Any]], reference: Mapping[str, Any], max_f1_loss: float) -> Mapping[str, Any] | None:
    """The cheapest (modelled time) result whose F1 keeps the reference's within ``max_f1_loss`` on
    every dataset, or ``None``."""
    floors = {d: f1 - max_f1_loss for d, f1 in reference["f1_by_dataset"].items()}
    kept = [r for r in results if all(r["f1_by_dataset"][d] >= floor for d, floor in floors.items())]
    return min(kept, key=lambda r: (r["ms"], -r["f1"])) if kept else None


def fit(args: argparse.Namespace) -> dict[str, Any]:
    from components.embedder import Embedder

    rows = training_rows(args.seed, args.data_dir)
    runs = read_runs(args.runs)
    reference = {(r["dataset"], r["id"]): r for r in read_runs(args.reference)}
    embedder = Embedder()
    embedder.warm_up()
    names, x = feature_matrix([r["question"] for r in rows], np.asarray([embedder.embed_query(r["question"]) for r in rows]))
    labels = [r["label"] for r in rows]
    assignment = fold_assignment([r["group"] for r in rows], FOLDS, args.seed)
    models = fold_models(x, labels, names, assignment)
    oof = scored_by(models, assignment, x, names)
    final = fit_logistic(x.tolist(), labels, names, l2=L2, model=QuestionTypeModel)
    probability = {(r["dataset"], r["id"]): float(p) for r, p in zip(rows, oof, strict=True)}
    # the recorded questions the fits read that the model was not trained on: read by the fold model that
    # has not seen their article (the final model where no fold has: it has not seen it either)
    fold_of = {r["group"]: int(k) for r, k in zip(rows, assignment, strict=True)}
    recorded = {(r["dataset"], r["id"]): r for r in [*runs, *(r for path in args.also_read for r in read_runs(path))]}
    unseen = [r for key, r in recorded.items() if key not in probability]
    if unseen:
        groups = run_groups(unseen, args.data_dir)
        which = [fold_of.get(groups[(r["dataset"], r["id"])], len(models)) for r in unseen]  # len(models): the final one
        _, xu = feature_matrix([r["question"] for r in unseen], np.asarray([embedder.embed_query(r["question"]) for r in unseen]))
        probability.update({(r["dataset"], r["id"]): float(p)
                            for r, p in zip(unseen, scored_by([*models, final], which, xu, names), strict=True)})
    model = time_model(runs)
    base = baseline_figures(runs, model, reference)
    pipeline = PipelineConfig()
    results = [{"threshold": t, **replay(runs, probability, t, model, pipeline)} for t in THRESHOLDS]
    everyone = {name: replay(runs, probability, 0.0 if name == "medium" else 1.1, model, pipeline)
                for name in ("medium", "easy")}
    chosen = choose(results, base, args.max_f1_loss)
    if chosen is None:
        raise SystemExit(f"no threshold keeps train F1 within {args.max_f1_loss} of the baseline's on every dataset")
    by_dataset = {d: float(np.mean([p for r, p in zip(rows, oof, strict=True) if r["dataset"] == d])) for d, *_ in SOURCES}
    flagged = {d: {str(t): float(np.mean([p >= t for r, p in zip(rows, oof, strict=True) if r["dataset"] == d]))
                   for t in THRESHOLDS} for d, *_ in SOURCES}
    metadata = {"threshold": chosen["threshold"], "l2": L2, "seed": args.seed,
                "trained_on": {d: sum(r["dataset"] == d for r in rows) for d, *_ in SOURCES},
                "auroc_out_of_fold": auroc(oof, [bool(y) for y in labels]),
                "runs": shown_path(args.runs), "fitted_by": "python -m training.question_type"}
    final = QuestionTypeModel(final.features, final.mean, final.scale, final.coef, final.intercept, metadata)
    cross_fit = [{"dataset": dataset, "id": qid, "multi_hop_probability": float(p)} for (dataset, qid), p in probability.items()]
    return {"model": final, "metadata": metadata, "reference": base, "results": results, "everyone": everyone,
            "chosen": chosen, "cross_fit": cross_fit, "cross_fit_file": shown_path(args.cross_fit),
            "mean_probability": by_dataset, "flagged": flagged, "runs": len(runs),
            "time_model_ms": model, "max_f1_loss": args.max_f1_loss}


def _row(label: str, r: Mapping[str, Any], base: Mapping[str, Any]) -> str:
    by = " / ".join(f"{r['f1_by_dataset'][d]:.1f}" for d in sorted(r["f1_by_dataset"]))
    return (f"| {label} | {r['f1']:.1f} ({by}) | {r['evaluated']:.0f} ({100 * (1 - r['evaluated'] / base['evaluated']):.0f}% "
            f"fewer) | {r['ms']:.0f} | {base['ms'] / r['ms']:.2f}× |")


def report(result: Mapping[str, Any]) -> str:
    meta, base, chosen = result["metadata"], result["reference"], result["chosen"]
    datasets = " / ".join(sorted(base["f1_by_dataset"]))
    lines = ["# Multi-hop or not: where the cascade starts, fit on the train splits", "",
             "Written by `python -m training.question_type` (no generator runs); no dev question is used.", "",
             "## The model", "",
             "Labels from the dataset a question belongs to (Adaptive-RAG's inductive bias): multi-hop for every "
             "HotpotQA train question, single-hop for a seeded sample of SQuAD 2.0 train-article, NQ-open train and "
             "TriviaQA train questions (" + ", ".join(f"{d} {n}" for d, n in meta["trained_on"].items()) + "). "
             f"A logistic regression (L2 {meta['l2']:g}) over the question's MiniLM embedding and its word counts; "
             f"out of fold ({FOLDS} folds, each SQuAD 2.0 article's questions in one: a model that has seen an "
             "article reads its other questions as it read those, and a dev article is new) its AUROC is "
             f"**{meta['auroc_out_of_fold']:.3f}**.", "",
             "| train questions | mean P(multi-hop), out of fold | " + " | ".join(f"≥ {t:g}" for t in THRESHOLDS) + " |",
             "| --- | --- |" + " --- |" * len(THRESHOLDS)]
    for d, mean in result["mean_probability"].items():
        lines.append(f"| {d} | {mean:.3f} | " + " | ".join(f"{100 * v:.0f}%" for v in result["flagged"][d].values()) + " |")
    lines += ["", "## Where the cascade starts", "",
              f"The cascade's recorded train answers ({result['runs']} questions, `{meta['runs']}`) replayed with the "
              "shipped confidence signal and threshold: a question at or above the threshold starts at Medium (128 "
              "tokens), any other at Easy (96); both climb to all five passages while the answer is unsure. Time is "
              "modelled (ms per evaluated token, per generated token, per answer: "
              + ", ".join(f"{v:.1f}" for v in result["time_model_ms"]) + "). "
              f"Chosen: the cheapest threshold whose train F1 stays within {result['max_f1_loss']} of the k = 5 "
              "baseline's on every dataset.", "",
              f"| start | train F1 ({datasets}) | prompt tokens evaluated | modelled ms | speed-up |",
              "| --- | --- | --- | --- | --- |",
              _row("k = 5 baseline", base, base),
              _row("every question at Medium (the shipped cascade before)", result["everyone"]["medium"], base),
              _row("every question at Easy", result["everyone"]["easy"], base)]
    for r in result["results"]:
        mark = " ← chosen" if r is chosen else ""
        starts = ", ".join(f"{tier}: " + "/".join(str(c) for c in counts.values()) for tier, counts in r["starts"].items())
        lines.append(_row(f"threshold {r['threshold']:g}{mark} ({starts})", r, base))
    lines += ["", f"Starts are counted as {datasets} questions.", "",
              f"Each training question's out-of-fold probability is in `{result['cross_fit_file']}`, with the reading "
              "of every recorded question above and of the answerability check's training answers by the fold model "
              "that has not seen its article: the check's thresholds per question type are fit on these readings "
              "(`python -m training.answerability fit`)."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from components.storage import atomic_write_text

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, default=RUNS, help=f"the cascade's recorded grid (default: {shown_path(RUNS)})")
    parser.add_argument("--reference", type=Path, default=REFERENCE_RUNS, help="the k = 5 baseline's answers to them")
    parser.add_argument("--max-f1-loss", type=float, default=MAX_F1_LOSS)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--data-dir", default=None, help="benchmark data folder (default: ../shared/data)")
    parser.add_argument("--model", type=Path, default=DEFAULT_QUESTION_TYPE, help="where to write the model")
    parser.add_argument("--report", type=Path, default=REPORT_DIR)
    parser.add_argument("--also-read", type=Path, nargs="*", default=[ANSWERABILITY_RUNS],
                        help="more recorded answers whose questions the cross-fit file reads as unseen "
                             f"(default: the answerability check's, {shown_path(ANSWERABILITY_RUNS)})")
    parser.add_argument("--cross-fit", type=Path, default=CROSS_FIT,
                        help=f"where each training question's out-of-fold probability goes (default: {shown_path(CROSS_FIT)})")
    args = parser.parse_args(argv)
    for name in ("easy", "medium"):
        if DEFAULT_TIERS[name].context_tokens is None:
            raise SystemExit(f"the {name} tier has no token budget: nothing to replay")
    result = fit(args)
    result["model"].save(args.model)
    atomic_write_text(args.cross_fit, "".join(json.dumps(r) + "\n" for r in result["cross_fit"]))
    args.report.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.report / "README.md", report(result))
    print(json.dumps({"threshold": result["chosen"]["threshold"], "auroc": result["metadata"]["auroc_out_of_fold"],
                      "f1_by_dataset": result["chosen"]["f1_by_dataset"], "evaluated": result["chosen"]["evaluated"],
                      "ms": result["chosen"]["ms"]}, indent=2), file=sys.stderr)
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
