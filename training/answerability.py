"""Fitting the answerability model and its default threshold on the train splits.

    python -m training.answerability run      # answer the training questions, recording every feature (resumable)
    python -m training.answerability fit      # fit, choose the threshold, write docs/answerability/

``run`` answers SQuAD 2.0 train-article questions (about half unanswerable) and HotpotQA train
questions, interleaved, through the compiled graph with the shipped cascade. The check runs with a
recording model (every feature, the self-check included, and no weight), so it never abstains and
records what a fitted model would see. One JSON line per question, appended as it is done.

``fit`` then, with no model run:

* reports each feature's AUROC for "the answer is right" (token F1 >= 0.5 on an answerable
  question) against everything else (wrong answers and answers to unanswerable questions);
* fits a logistic regression on the free features, alone and with each self-check and both, and
  compares them by 5-fold cross-validation on train (out-of-fold scores only);
* chooses the default threshold on the out-of-fold scores: the one that maximises SQuAD 2.0 train
  F1 (an abstention on an unanswerable question scores 1, on an answerable one 0) while HotpotQA
  train F1 loses at most ``--max-hotpot-loss`` points to false abstentions; and the features: the
  best of the candidates whose self-checks add at most ``--max-time-added`` % to the median time
  per question (measured on the recording run);
* writes the chosen model to ``components/answerability.json`` and the figures, the risk–coverage
  curve and the threshold table to ``docs/answerability/``.

Nothing here looks at a dev question.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from components.answerability import (
    ANSWER_PROBE,
    DEFAULT_MODEL,
    FALLBACK_MODEL,
    FEATURES,
    QUESTION_LIKELIHOOD,
    SELF_CHECKS,
    SUFFICIENCY,
    AnswerabilityModel,
    current_features,
    fit_logistic,
)
from components.short_answer import short_answer
from components.sufficiency import DEFAULT_SCORER
from eval.abstention import CORRECT_F1, abstention_f1, is_right, risk_coverage
from eval.metrics import exact_match, f1_score
from pipeline.configuration import ANSWER_FORMS, DEFAULT_TIERS, PipelineConfig
from prompts import ABSTENTION
from training.cascade import auroc, shown_path
from training.labelling import TrainingSet, run_fit_parser
from training.question_type import ANSWERABILITY_RUNS
from training.question_type import CROSS_FIT as QUESTION_TYPE_CROSS_FIT
from training.sufficiency import CROSS_FIT

SETS = (TrainingSet("squad", "train", 240), TrainingSet("hotpotqa", "train", 120))
RUNS_FILE = ANSWERABILITY_RUNS
LIKELIHOOD_RUNS = RUNS_FILE.with_name("answerability_runs_question_likelihood.jsonl")
"""The same training questions answered again once the pipeline read the question's likelihood (session
36: ``run --size 480 --out`` this file); the fit joins that feature from here (:func:`with_question_likelihood`)."""
"""The shipped check's training answers: the cascade of session 25 (a single-hop question, by the
question-type model, starts at Easy, a multi-hop one at Medium; the reranker's best five of ten
passages, the evidence-first prompt). ``answerability_runs_evidence_first.jsonl`` holds the same
questions answered by session 22's cascade (every question from Medium),
``answerability_runs_reranked.jsonl`` by session 17's (question first), ``answerability_runs.jsonl``
by session 12's, through the dense cascade."""
REPORT_DIR = Path(__file__).resolve().parent.parent / "docs" / "answerability"
FREE = tuple(f for f in FEATURES if f not in (*SELF_CHECKS, SUFFICIENCY, ANSWER_PROBE, *QUESTION_LIKELIHOOD))
FOLDS = 5
MAX_HOTPOT_LOSS = 1.0
"""HotpotQA train F1 points the thresholds may lose to false abstentions (``fit``'s default)."""
MAX_ANSWERABLE_LOSS = 3.0
"""SQuAD train F1 points its answerable questions may lose to never abstaining (``fit``'s default)."""
ANSWERABLE_FLOOR = 58.0
"""#15's answerable target as the issue states it, SQuAD-answerable F1 >= 58: ``--min-answerable-f1``
holds the training answers to it (the alternative to :data:`MAX_ANSWERABLE_LOSS`'s relative bound)."""
LOSS_CONFIDENCE = 0.9
"""``--loss-confidence`` for the sufficiency variant: the HotpotQA loss a threshold may cause is
bounded at this bootstrap quantile (:func:`sweep`). The shipped check uses the point estimate (0)."""
PROBE_CROSS_FIT = Path(__file__).resolve().parent / "labels" / "answer_probe_cross_fit.jsonl"
"""Each training answer's answer-probe score from a probe fit without its fold (``python -m
training.answer_probe fit``): the ``answer_probe`` feature the candidates may use."""
SUFFICIENCY_MODEL = DEFAULT_MODEL.with_name("answerability_sufficiency.json")
"""The check with the sufficiency scorer's feature, an option (``ResourceConfig(answerability=...)``):
    python -m training.answerability fit --sufficiency components/sufficiency --loss-confidence 0.9 \\
        --model-out components/answerability_sufficiency.json --report docs/answerability/sufficiency"""


def recording_model(model_calls: bool = True) -> AnswerabilityModel:
    """A model over every feature that weighs none: the check computes and records them all (the
    self-check included), its score is always 0.5, and with the run's threshold of 0 it never abstains.
    All but the answer probe's: a probe is fit on these answers (``python -m training.answer_probe``),
    and its feature comes from its cross-fitted scores (``--answer-probe-scores``); and the question's
    likelihood, which the check records wherever ``generate`` read it (not for a layout that puts the
    question first). Without ``model_calls``, also none of the features that cost a model call (the
    self-checks, the sufficiency scorer): the generator then answers and nothing else."""
    left_out = {ANSWER_PROBE, *QUESTION_LIKELIHOOD, *(() if model_calls else (*SELF_CHECKS, SUFFICIENCY))}
    features = tuple(f for f in FEATURES if f not in left_out)
    n = len(features)
    return AnswerabilityModel(features, (0.0,) * n, (1.0,) * n, (0.0,) * n, 0.0, {"purpose": "recording"})


def kept_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """What a recording keeps of a benchmark record: the answer, its scores and cost, and what the check read."""
    keys = ("id", "dataset", "question", "answerable", "gold_answers", "answer", "written_answer", "em", "f1", "final_tier",
            "escalations", "input_tokens", "prompt_tokens_evaluated", "latency_ms", "timings_ms", "answerability",
            "context")  # the evidence the answer was checked against: word-overlap features can be computed anew
    steps = record.get("steps") or [{}]
    # the final answer's question tokens, each one's log-probability: other summaries of them can be fit later
    return {**{key: record.get(key) for key in keys},
            "question_logprobs": (steps[-1].get("question_logprob") or {}).get("values")}


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from eval.runner import run_one
    from eval.systems import System
    from pipeline.configuration import PipelineConfig
    from training.labelling import record_answers

    from components.sufficiency import SufficiencyScorer

    system = System("cascade", "the shipped cascade, answers recorded unchecked",
                    PipelineConfig(abstain_threshold=0.0, answer_examples=args.answer_examples))
    sets = [replace(s, size=args.size) for s in SETS] if args.size else SETS
    scorer = SufficiencyScorer()
    scorer.warm_up()
    return record_answers(args, sets, lambda ctx, example: kept_record(run_one(ctx, system, example)),
                          prepare=lambda ctx: replace(ctx, answerability=recording_model(), sufficiency=scorer),
                          answerability=None)


# ---- fitting, from the recorded runs only ----

def checked(runs: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The answers the score decides on: the model did not abstain by itself, and features exist."""
    return [r for r in runs if r["answerability"]["by"] != "model" and r["answerability"]["features"]]


def out_of_fold(runs: Sequence[Mapping[str, Any]], features: Sequence[str], l2: float,
                fit: Callable[..., Any] = fit_logistic) -> np.ndarray:
    """Each answer's score from a model fit without its fold (folds by position: runs are interleaved);
    ``fit``: another fitter of :func:`components.logistic.fit_logistic`'s form, for a feature the
    shipped check does not know (a measurement's)."""
    rows = [[r["answerability"]["features"][f] for f in features] for r in runs]
    labels = [int(is_right(r)) for r in runs]
    scores = np.zeros(len(runs))
    for fold in range(FOLDS):
        train = [i for i in range(len(runs)) if i % FOLDS != fold]
        model = fit([rows[i] for i in train], [labels[i] for i in train], features, l2=l2)
        for i in range(fold, len(runs), FOLDS):
            scores[i] = model.score(dict(zip(features, rows[i], strict=True)))
    return scores


GROUPS: Mapping[str, Callable[[Mapping[str, Any]], bool]] = {
    "squad": lambda r: r["dataset"] == "squad",
    "hotpotqa": lambda r: r["dataset"] == "hotpotqa",
    "answerable": lambda r: r["dataset"] == "squad" and bool(r["answerable"]),
    "unanswerable": lambda r: r["dataset"] == "squad" and not r["answerable"],
}
"""The groups of training questions whose figures the threshold rules weigh."""


def withheld(run: Mapping[str, Any], position: int, scores: Mapping[int, float], threshold: float) -> bool:
    """Whether the check withholds a training answer at ``threshold``: the model abstained by itself,
    or the answer's score (``scores[position]``, where it has one) is below the threshold."""
    return run["answerability"]["by"] == "model" or (position in scores and scores[position] < threshold)


def sweep(runs: Sequence[Mapping[str, Any]], scores: Mapping[int, float], confidence: float = 0.0,
          resamples: int = 1000, seed: int = 0) -> list[dict[str, float]]:
    """Per-dataset F1 and abstention figures at each candidate threshold (the distinct scores and
    0). ``scores`` maps a run's position to its score; runs without one are never abstained by the
    score (the model's own abstentions stay abstentions).

    With ``confidence`` (in (0, 1)), each row also gives ``<dataset>_loss_bound``: the
    ``confidence`` quantile of the F1 points the threshold loses to never abstaining, over
    ``resamples`` paired bootstrap resamples of the dataset's questions (the same resamples for every
    threshold). A train sample of 200 questions holds few right answers, so its point estimate of a
    small loss is noisy; the bound is what the loss stays under on most samples of that size."""
    candidates = sorted({0.0, *scores.values()})
    rng = np.random.default_rng(seed)
    per_dataset = {}
    for dataset in sorted({r["dataset"] for r in runs}):
        items = [(i, r) for i, r in enumerate(runs) if r["dataset"] == dataset]
        weights = (rng.multinomial(len(items), [1 / len(items)] * len(items), size=resamples) / len(items)
                   if confidence else None)
        per_dataset[dataset] = (items, weights)
    table = []
    never: dict[str, np.ndarray] = {}
    for threshold in candidates:
        row: dict[str, float] = {"threshold": threshold}
        for dataset, (items, weights) in per_dataset.items():
            abstains = [withheld(r, i, scores, threshold) for i, r in items]
            f1 = np.array([abstention_f1(r, a) for (_, r), a in zip(items, abstains, strict=True)])
            never.setdefault(dataset, f1)
            row[f"{dataset}_f1"] = 100 * float(f1.mean())
            row[f"{dataset}_answered"] = 100 * float(np.mean([not a for a in abstains]))
            if weights is not None:
                row[f"{dataset}_loss_bound"] = 100 * float(np.quantile(weights @ (never[dataset] - f1), confidence))
        table.append(row)
    return table


def choose(table: Sequence[Mapping[str, float]], max_hotpot_loss: float) -> Mapping[str, float]:
    """The threshold with the best SQuAD train F1 among those losing at most ``max_hotpot_loss``
    HotpotQA train F1 points to the never-abstaining threshold (by the bootstrap bound where the
    table has one, else the point estimate); the lowest such on ties."""
    never = table[0]
    allowed = [row for row in table
               if row.get("hotpotqa_loss_bound", never["hotpotqa_f1"] - row["hotpotqa_f1"]) <= max_hotpot_loss]
    return max(allowed, key=lambda row: (round(row["squad_f1"], 9), -row["threshold"]))


def read_multi_hop(run: Mapping[str, Any], readings: Mapping[tuple[str, str], bool] | None = None) -> bool | None:
    """The question-type model's reading of a training question: from ``readings`` (its out-of-fold
    reading, :func:`read_question_types`) when they hold the question, else as recorded by the check
    (since session 30), else where the cascade that answered it started (a multi-hop reading starts at
    ``multi_hop_tier``); ``None`` for a run with none of these."""
    if readings is not None and (run.get("dataset"), run.get("id")) in readings:
        return readings[(run["dataset"], run["id"])]
    check = run.get("answerability") or {}
    if "multi_hop" in check:
        return check["multi_hop"]
    tiers = list(DEFAULT_TIERS)
    if run.get("final_tier") not in tiers:
        return None
    return tiers[tiers.index(run["final_tier"]) - int(run.get("escalations") or 0)] == PipelineConfig().multi_hop_tier


def read_question_types(path: Path, threshold: float) -> dict[tuple[str, str], bool]:
    """``{(dataset, id): read as multi-hop}`` from the question-type model's out-of-fold probabilities
    (``python -m training.question_type``), read against ``threshold``. The shipped model was trained
    on every HotpotQA train question: its own reading of them is in-sample (195 of 200 multi-hop, where
    a question it never saw is read as one about 83% of the time), so the thresholds are fit on these."""
    from eval.runner import read_records

    if not path.is_file():
        raise SystemExit(f"no out-of-fold question-type readings at {path}: run `python -m training.question_type`, "
                         "or pass --question-type-readings none to use the recorded ones")
    return {(r["dataset"], r["id"]): float(r["multi_hop_probability"]) >= threshold for r in read_records(path)}


def best_pair(single: Mapping[str, np.ndarray], multi: Mapping[str, np.ndarray], sizes: Mapping[str, int],
              max_hotpot_loss: float, max_answerable_loss: float | None,
              hotpot_loss: np.ndarray | None = None,
              min_answerable_f1: float | None = None) -> tuple[int, int, dict[str, np.ndarray]]:
    """The pair of thresholds, single-hop and multi-hop, that a per-type fit chooses. ``single`` and
    ``multi``: per group (``squad``, ``hotpotqa``, ``answerable``, any others), the F1 sum of one
    type's questions at each of its candidate thresholds, the first candidate 0 (never abstaining).
    A question's outcome depends on its own type's threshold only, so a pair's figure is the sum of
    one term per type, and the whole grid is searched at once.

    Chosen: the best SQuAD F1 among the pairs that lose at most ``max_hotpot_loss`` HotpotQA F1
    points (by ``hotpot_loss``, a bound over the grid, where given, else the point estimate) and
    (unless ``None``) at most ``max_answerable_loss`` on SQuAD's answerable questions to never
    abstaining, and (unless ``None``) at least ``min_answerable_f1`` F1 (%) on them; on ties the best
    HotpotQA F1, then the lowest pair. Returns the pair's indices and each group's F1 (%) over the grid."""
    f1 = {g: 100 * (single[g][:, None] + multi[g][None, :]) / max(1, sizes[g]) for g in sizes}
    loss = f1["hotpotqa"][0, 0] - f1["hotpotqa"] if hotpot_loss is None else hotpot_loss
    allowed = loss <= max_hotpot_loss + 1e-9
    if max_answerable_loss is not None:
        allowed &= f1["answerable"] >= f1["answerable"][0, 0] - max_answerable_loss - 1e-9
    if min_answerable_f1 is not None:
        allowed &= f1["answerable"] >= min_answerable_f1 - 1e-9
    squad = np.where(allowed, np.round(f1["squad"], 9), -np.inf)
    best = allowed & (squad == squad.max())
    i, j = np.unravel_index(int(np.argmax(np.where(best, np.round(f1["hotpotqa"], 9), -np.inf))), squad.shape)
    return int(i), int(j), f1


def loss_bound(single: np.ndarray, multi: np.ndarray, confidence: float) -> np.ndarray:
    """The ``confidence`` quantile, over bootstrap resamples, of the F1 points every pair of
    thresholds loses: ``single`` and ``multi`` hold each type's loss at each of its candidates in each
    resample (candidates × resamples, the same resamples for both), so a pair's loss in a resample is
    the sum of its two terms."""
    return np.stack([np.quantile(row[None, :] + multi, confidence, axis=1) for row in single])


def choose_by_type(runs: Sequence[Mapping[str, Any]], scores: Mapping[int, float], max_hotpot_loss: float,
                   max_answerable_loss: float | None, readings: Mapping[tuple[str, str], bool] | None = None,
                   confidence: float = 0.0, resamples: int = 1000, seed: int = 0,
                   min_answerable_f1: float | None = None) -> dict[str, Any]:
    """A threshold for the questions read as single-hop (and those without a reading) and one for
    those read as multi-hop (:func:`read_multi_hop`, given ``readings``): the pair with the best
    SQuAD train F1 that loses at most ``max_hotpot_loss`` HotpotQA train F1 points and (unless
    ``None``) at most ``max_answerable_loss`` F1 points on SQuAD's answerable questions to never
    abstaining and (unless ``None``) keeps at least ``min_answerable_f1`` F1 on them (:func:`best_pair`).
    With ``confidence`` (in (0, 1)) the HotpotQA loss is bounded at that quantile over ``resamples``
    bootstrap resamples of the HotpotQA questions, as :func:`sweep` bounds one threshold's: 200
    questions hold few right answers, and the point estimate of a small loss is noisy."""
    multi = [bool(read_multi_hop(r, readings)) for r in runs]
    groups = {group: [member(r) for r in runs] for group, member in GROUPS.items()}
    hotpot_rows = [i for i, member in enumerate(groups["hotpotqa"]) if member]
    hotpot = {i: k for k, i in enumerate(hotpot_rows)}  # a HotpotQA question's column in the resamples' weights
    size = len(hotpot_rows)
    weights = (np.random.default_rng(seed).multinomial(size, [1 / size] * size, size=resamples) / size
               if confidence and size else None)

    def terms(kind: bool) -> tuple[list[float], dict[str, np.ndarray], np.ndarray | None]:
        """The candidate thresholds of one type; per group, its questions' F1 sum at each; and, with
        ``weights``, its HotpotQA questions' loss (points) at each in each resample."""
        mine = [i for i in range(len(runs)) if multi[i] == kind]
        candidates = sorted({0.0, *(scores[i] for i in mine if i in scores)})
        f1 = np.array([[abstention_f1(runs[i], withheld(runs[i], i, scores, t)) for i in mine]
                       for t in candidates]).reshape(len(candidates), len(mine))
        sums = {g: f1[:, [k for k, i in enumerate(mine) if member[i]]].sum(axis=1) for g, member in groups.items()}
        if weights is None:
            return candidates, sums, None
        columns = [k for k, i in enumerate(mine) if i in hotpot]
        lost = f1[0, columns] - f1[:, columns]
        return candidates, sums, 100 * lost @ weights[:, [hotpot[mine[k]] for k in columns]].T

    single, single_sums, single_loss = terms(False)
    multiple, multi_sums, multi_loss = terms(True)
    sizes = {group: sum(member) for group, member in groups.items()}
    bound = (loss_bound(single_loss, multi_loss, confidence)
             if single_loss is not None and multi_loss is not None else None)
    i, j, figure = best_pair(single_sums, multi_sums, sizes, max_hotpot_loss, max_answerable_loss, bound,
                             min_answerable_f1)
    answered = {d: 100 * float(np.mean([not withheld(r, n, scores, multiple[j] if multi[n] else single[i])
                                          for n, r in enumerate(runs) if r["dataset"] == d])) for d in ("squad", "hotpotqa")}
    return {"threshold": single[i], "threshold_multi_hop": multiple[j], "squad_f1": float(figure["squad"][i, j]),
            "hotpotqa_f1": float(figure["hotpotqa"][i, j]), "squad_answerable_f1": float(figure["answerable"][i, j]),
            "squad_answered": answered["squad"], "hotpotqa_answered": answered["hotpotqa"],
            **({"hotpotqa_loss_bound": float(bound[i, j])} if bound is not None else {}),
            "multi_hop_questions": {d: sum(m for m, r in zip(multi, runs, strict=True) if r["dataset"] == d)
                                    for d in ("squad", "hotpotqa")}}


def figures_at(runs: Sequence[Mapping[str, Any]], scores: Mapping[int, float], multi: Sequence[bool],
               threshold: float, threshold_multi_hop: float) -> dict[str, float]:
    """F1 (%) on SQuAD, on its answerable questions and on HotpotQA, the share (%) of SQuAD's
    unanswerable questions abstained, and each of those F1 figures' loss to never abstaining, with a
    single-hop question held to ``threshold`` and one read as multi-hop (``multi``) to ``threshold_multi_hop``."""
    figures = {}
    for group, member in GROUPS.items():
        rows = [(n, r) for n, r in enumerate(runs) if member(r)]
        if not rows:
            continue
        held = [withheld(r, n, scores, threshold_multi_hop if multi[n] else threshold) for n, r in rows]
        never = [withheld(r, n, scores, 0.0) for n, r in rows]  # the model's own abstentions only
        f1 = 100 * float(np.mean([abstention_f1(r, w) for (_, r), w in zip(rows, held, strict=True)]))
        kept = 100 * float(np.mean([abstention_f1(r, w) for (_, r), w in zip(rows, never, strict=True)]))
        if group == "unanswerable":
            figures["unanswerable_abstained"] = 100 * float(np.mean(held))
        else:
            figures[f"{group}_f1"], figures[f"{group}_loss"] = f1, kept - f1
    return figures


def held_out_halves(runs: Sequence[Mapping[str, Any]], scores: Mapping[int, float],
                    rule: Callable[[Sequence[Mapping[str, Any]], Mapping[int, float]], Mapping[str, Any]],
                    readings: Mapping[tuple[str, str], bool] | None = None, halves: int = 30,
                    seed: int = 0) -> list[dict[str, float]]:
    """How a per-type rule fares on questions it did not choose on, from the training answers alone:
    ``halves`` times, each dataset's questions are split at random in two, ``rule`` chooses the pair
    of thresholds on one half and :func:`figures_at` measures them on the other. The scores stay the
    out-of-fold ones; what is held out is the choice of the thresholds."""
    rng = np.random.default_rng(seed)
    multi = [bool(read_multi_hop(r, readings)) for r in runs]
    results = []
    for _ in range(halves):
        chosen_on: list[int] = []
        for dataset in sorted({r["dataset"] for r in runs}):
            mine = [n for n, r in enumerate(runs) if r["dataset"] == dataset]
            chosen_on += [int(n) for n in rng.permutation(mine)[:len(mine) // 2]]
        picked = set(chosen_on)
        held = [n for n in range(len(runs)) if n not in picked]

        def part(positions: Sequence[int]) -> tuple[list[Mapping[str, Any]], dict[int, float]]:
            return [runs[n] for n in positions], {k: scores[n] for k, n in enumerate(positions) if n in scores}

        pair = rule(*part(chosen_on))
        held_runs, held_scores = part(held)
        results.append({"threshold": pair["threshold"], "threshold_multi_hop": pair["threshold_multi_hop"],
                        **figures_at(held_runs, held_scores, [multi[n] for n in held], pair["threshold"],
                                     pair["threshold_multi_hop"])})
    return results


def summarise_halves(results: Sequence[Mapping[str, float]], max_hotpot_loss: float,
                     max_answerable_loss: float | None, min_answerable_f1: float | None = None) -> dict[str, float]:
    """The held-out figures' means, and how often each bound was broken (%)."""
    keys = [k for k in results[0] if k not in ("threshold", "threshold_multi_hop")]
    summary = {f"mean_{k}": float(np.mean([r[k] for r in results])) for k in keys}
    summary["hotpotqa_over_bound"] = 100 * float(np.mean([r["hotpotqa_loss"] > max_hotpot_loss + 1e-9 for r in results]))
    if max_answerable_loss is not None:
        summary["answerable_over_bound"] = 100 * float(np.mean([r["answerable_loss"] > max_answerable_loss + 1e-9
                                                               for r in results]))
    if min_answerable_f1 is not None:
        summary["answerable_under_floor"] = 100 * float(np.mean([r["answerable_f1"] < min_answerable_f1 - 1e-9
                                                                for r in results]))
    summary["halves"] = len(results)
    return summary


def rule_held_out(runs: Sequence[Mapping[str, Any]], scores: Mapping[int, float], max_hotpot_loss: float,
                  max_answerable_loss: float | None, readings: Mapping[tuple[str, str], bool] | None = None,
                  confidence: float = 0.0, halves: int = 30, min_answerable_f1: float | None = None) -> dict[str, float]:
    """How :func:`choose_by_type`'s rule fares on ``halves`` held-out halvings of the training
    answers (:func:`held_out_halves`), summarised (:func:`summarise_halves`)."""
    def rule(part: Sequence[Mapping[str, Any]], part_scores: Mapping[int, float]) -> Mapping[str, Any]:
        return choose_by_type(part, part_scores, max_hotpot_loss, max_answerable_loss, readings, confidence,
                              min_answerable_f1=min_answerable_f1)

    return summarise_halves(held_out_halves(runs, scores, rule, readings, halves), max_hotpot_loss, max_answerable_loss,
                            min_answerable_f1)


def time_added(runs: Sequence[Mapping[str, Any]], checks: int, sufficiency: bool = False) -> float:
    """The median time per question added by ``checks`` self-check calls and, with ``sufficiency``,
    the sufficiency scorer's pass (% of the median without any), from the recording run, where every
    question made all the self-check calls (the scorer's time is measured when its feature is added)."""
    each = [r["answerability"].get("self_check_ms", 0.0) / len(SELF_CHECKS) for r in runs]
    scorer = [r["answerability"].get("sufficiency_ms", 0.0) if sufficiency else 0.0 for r in runs]
    without = [r["latency_ms"] - e * len(SELF_CHECKS) for r, e in zip(runs, each, strict=True)]
    return 100 * (float(np.median([w + e * checks + t for w, e, t in zip(without, each, scorer, strict=True)]))
                  / float(np.median(without)) - 1)


def candidate_extras(scored: Sequence[Mapping[str, Any]]) -> list[tuple[str, ...]]:
    """The features a candidate model adds to the free ones: none, each self-check and both (those every scored
    answer has: a recording without model calls has none), and, when
    every scored answer has it, the sufficiency scorer alone and with the self-checks; and, when
    answers have it, the answer probe alone (and with the sufficiency scorer when that is there); and,
    when answers have it, the question's likelihood alone and with the probe."""
    recorded = [c for c in SELF_CHECKS if bool(scored) and all(c in r["answerability"]["features"] for r in scored)]
    extras: list[tuple[str, ...]] = [(), *((c,) for c in recorded), *([tuple(recorded)] if len(recorded) > 1 else [])]
    sufficiency = bool(scored) and all(SUFFICIENCY in r["answerability"]["features"] for r in scored)
    if sufficiency:
        extras += [(SUFFICIENCY,), *([(SUFFICIENCY, *recorded)] if recorded else [])]
    probe = any(ANSWER_PROBE in r["answerability"]["features"] for r in scored)
    if probe:
        extras += [(ANSWER_PROBE,), *([(ANSWER_PROBE, SUFFICIENCY)] if sufficiency else [])]
    if any(all(f in r["answerability"]["features"] for f in QUESTION_LIKELIHOOD) for r in scored):
        extras += [QUESTION_LIKELIHOOD, *([(ANSWER_PROBE, *QUESTION_LIKELIHOOD)] if probe else [])]
    return extras


def having(scored: Sequence[Mapping[str, Any]], features: Sequence[str]) -> list[Mapping[str, Any]]:
    """The answers a model over ``features`` scores: those with every one of them (the check leaves
    an answer without one unscored: one that ended at its first token has no probe reading)."""
    return [r for r in scored if all(f in r["answerability"]["features"] for f in features)]


def fit(runs: Sequence[Mapping[str, Any]], max_hotpot_loss: float, l2: float, max_time_added: float,
        confidence: float = 0.0, require: str | None = None, by_type: bool = False,
        max_answerable_loss: float | None = None,
        readings: Mapping[tuple[str, str], bool] | None = None, halves: int = 0,
        min_answerable_f1: float | None = None) -> dict[str, Any]:
    """Fit and compare the candidates; ``require``: choose among those using this feature only;
    ``by_type``: a threshold per question type (:func:`choose_by_type`, the questions' types from
    ``readings`` where they hold them) instead of one for all; ``halves``: with ``by_type``, how the
    chosen candidate's rule fares on held-out halves of the training answers (:func:`held_out_halves`)."""
    scored = checked(runs)
    positions = {id(r): i for i, r in enumerate(runs)}
    labels = [is_right(r) for r in scored]
    single = {f: auroc([r["answerability"]["features"].get(f) for r in scored], labels)
              for f in FEATURES if any(f in r["answerability"]["features"] for r in scored)}
    candidates, oof_scores = {}, {}
    for extra in candidate_extras(scored):
        checks = tuple(f for f in extra if f in SELF_CHECKS)
        name = "+".join(("free", *extra))
        features = (*FREE, *extra)
        answers = having(scored, features)
        oof = out_of_fold(answers, features, l2)
        by_position = {positions[id(r)]: float(s) for r, s in zip(answers, oof, strict=True)}
        oof_scores[name] = by_position
        table = sweep(runs, by_position, confidence)
        chosen = choose(table, max_hotpot_loss)
        curve = risk_coverage([(score, is_right(runs[i])) for i, score in by_position.items()])
        candidates[name] = {"features": list(features), "checks": len(checks), "scored": len(answers),
                            "auroc": auroc(list(oof), [is_right(r) for r in answers]),
                            "time_added": time_added(runs, len(checks), SUFFICIENCY in extra), "table": table,
                            "chosen": dict(chosen),
                            "curve": curve}
        if by_type:
            candidates[name]["one_threshold"] = candidates[name]["chosen"]
            candidates[name]["chosen"] = choose_by_type(runs, by_position, max_hotpot_loss, max_answerable_loss,
                                                           readings, confidence, min_answerable_f1=min_answerable_f1)
    # a self-check costs a model call: only candidates within the time budget may be chosen
    eligible = [n for n, c in candidates.items()
                if c["time_added"] <= max_time_added and (require is None or require in c["features"])]
    if not eligible:
        raise SystemExit(f"no candidate uses {require} within {max_time_added}% of the median time per question")
    def best_of(names: Sequence[str]) -> str:
        return max(names, key=lambda n: (candidates[n]["chosen"]["squad_f1"], -candidates[n]["checks"],
                                          -len(candidates[n]["features"])))

    def final_model(name: str) -> AnswerabilityModel:
        best = candidates[name]
        answers = having(scored, best["features"])
        return fit_logistic([[r["answerability"]["features"][f] for f in best["features"]] for r in answers],
                            [int(is_right(r)) for r in answers], best["features"], l2=l2, metadata={
                                "fit_on": sorted({f"{r['dataset']} train" for r in runs}),
                                "questions": len(runs), "scored_answers": len(answers),
                                "label": f"answerable and token F1 >= {CORRECT_F1}",
                                "l2": l2, "cv_auroc": best["auroc"], "threshold": best["chosen"]["threshold"],
                                **({"threshold_multi_hop": best["chosen"]["threshold_multi_hop"],
                                    "threshold_one": best["one_threshold"]["threshold"],
                                    "max_answerable_loss": max_answerable_loss,
                                    **({"min_answerable_f1": min_answerable_f1} if min_answerable_f1 is not None
                                       else {})} if by_type else {}),
                                "max_hotpot_loss": max_hotpot_loss, "loss_confidence": confidence,
                                "max_time_added": max_time_added, "command": "python -m training.answerability fit"})

    pick = best_of(eligible)
    # a check that reads the answer probe works with the probe's generator only: the best without it is
    # fit too, by the same rule, for every other generator
    without = [n for n in eligible if ANSWER_PROBE not in candidates[n]["features"]] if require is None else []
    fallback = best_of(without) if ANSWER_PROBE in candidates[pick]["features"] and without else None
    held_out = None
    if by_type and halves:
        held_out = rule_held_out(runs, oof_scores[pick], max_hotpot_loss, max_answerable_loss, readings, confidence, halves,
                                 min_answerable_f1)
    return {"single": single, "candidates": candidates, "pick": pick, "model": final_model(pick), "runs": len(runs),
            "held_out": held_out,
            "fallback_pick": fallback, "fallback": final_model(fallback) if fallback else None,
            "scored": len(scored), "max_hotpot_loss": max_hotpot_loss, "max_time_added": max_time_added,
            "confidence": confidence, "by_type": by_type, "max_answerable_loss": max_answerable_loss,
            "min_answerable_f1": min_answerable_f1}


def _fmt(value: float) -> str:
    return f"{value:.3f}"


def held_out_lines(held_out: Mapping[str, float], max_hotpot_loss: float, max_answerable_loss: float | None,
                   min_answerable_f1: float | None = None) -> list[str]:
    """The report's paragraph on :func:`held_out_halves`."""
    answerable = ("" if max_answerable_loss is None else
                  f", above {max_answerable_loss} in {held_out['answerable_over_bound']:.0f}% of them")
    if min_answerable_f1 is not None:
        answerable += (f" (answerable F1 {held_out['mean_answerable_f1']:.1f} on average, under {min_answerable_f1:g} in "
                       f"{held_out['answerable_under_floor']:.0f}% of them)")
    return ["", f"**On questions the rule did not choose on** (`--halves {held_out['halves']}`): {held_out['halves']} "
                "times, each dataset's training answers are split at random in two halves, the thresholds are chosen on "
                "one by the rule above and measured on the other (the scores stay the out-of-fold ones). Held out, SQuAD "
                f"F1 is {held_out['mean_squad_f1']:.1f} on average ({-held_out['mean_squad_loss']:+.1f} over never "
                f"abstaining; {held_out['mean_unanswerable_abstained']:.0f}% of the unanswerable questions abstained), "
                f"the answerable questions lose {held_out['mean_answerable_loss']:.2f} F1 points{answerable}, and "
                f"HotpotQA loses {held_out['mean_hotpotqa_loss']:.2f}, above {max_hotpot_loss} in "
                f"{held_out['hotpotqa_over_bound']:.0f}% of them (a half of 200 HotpotQA questions holds 100: each right "
                "answer withheld there is a point)."]


def report(result: Mapping[str, Any], runs: Sequence[Mapping[str, Any]], timing: Mapping[str, float],
           source: str = "training/labels/answerability_runs_evidence_first.jsonl", answer_form: str = "short") -> str:
    best = result["candidates"][result["pick"]]
    chosen = best["chosen"]
    never = best["table"][0]
    datasets = sorted({r["dataset"] for r in runs})
    counts = ", ".join(f"{sum(r['dataset'] == d for r in runs)} {d}" for d in datasets)
    lines = [
        "# The answerability check, fit on the train splits",
        "",
        f"Written by `python -m training.answerability fit` from {result['runs']} training answers "
        f"({counts}: "
        "SQuAD 2.0 train articles 0–19, HotpotQA train), answered by the shipped cascade "
        f"(`{source}`). "
        f"{result['scored']} answers are scored; the others the model abstained on by itself.",
        "",
        f"An answer is *right* when its question is answerable and its token F1 is at least {CORRECT_F1}, "
        f"scored in the form the pipeline gives it (`answer_form` {answer_form}); the features are those of "
        "the text as written.",
        "",
        "## Each feature alone (AUROC for right vs not, on train)",
        "",
        "Sorted by how far from 0.5; below 0.5 the feature is higher on the answers that are not right "
        "(as informative as 1 − AUROC).",
        "",
        "| feature | what it measures | AUROC |",
        "| --- | --- | --- |",
    ]
    for f, value in sorted(result["single"].items(), key=lambda item: -abs(item[1] - 0.5)):
        lines.append(f"| `{f}` | {FEATURES[f]} | {_fmt(value)} |")
    lines += ["", "## Logistic regressions (5-fold cross-validation on train, out-of-fold scores)", "",
              *([("Each candidate's thresholds are chosen by question type (below); the table gives the single-hop one "
                  "and the figures of the pair."), ""] if result.get("by_type") else []),
              "| features | AUROC | threshold | SQuAD train F1 | HotpotQA train F1 | SQuAD answered | HotpotQA answered "
              "| median time added |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, c in result["candidates"].items():
        ch = c["chosen"]
        lines.append(f"| {name} | {_fmt(c['auroc'])} | {ch['threshold']:.3f} | {ch['squad_f1']:.1f} | "
                     f"{ch['hotpotqa_f1']:.1f} | {ch['squad_answered']:.0f}% | {ch['hotpotqa_answered']:.0f}% | "
                     f"{c['time_added']:.1f}% |")
    if result.get("sufficiency_source"):
        lines += ["", f"The `{SUFFICIENCY}` feature of the training answers comes from {result['sufficiency_source']}"
                  + (": each question scored by a scorer trained on the other train articles (`python -m training.sufficiency "
                     "--cross-fit 2`), as the shipped scorer will score questions of articles it never saw."
                     if "cross_fit" in result["sufficiency_source"] else ".")]
    if result.get("probe_source"):
        lines += ["", f"The `{ANSWER_PROBE}` feature of the training answers comes from {result['probe_source']}: each "
                  "answer scored by a probe fit on the other folds (`python -m training.answer_probe fit`; see "
                  "[the probe's report](../answer_probe/README.md)). It costs no model call: the probe reads a layer "
                  "the generator computes anyway, so its time added is counted as 0."]
    if result.get("likelihood_source"):
        lines += ["", f"The question's likelihood (`{QUESTION_LIKELIHOOD[0]}`, `{QUESTION_LIKELIHOOD[1]}`) of the "
                  f"training answers comes from {result['likelihood_source']}: the same questions answered again once "
                  "the pipeline read it, joined where the answer came by the same path (final tier and escalations: "
                  f"the same prompt), {result['likelihood_joined']} of {result['runs']}. It costs no model call: the "
                  "generator keeps the logits of the question's positions while it evaluates the answer prompt "
                  "(a vocabulary's projection per question token). The recording's latencies include it for every "
                  "candidate, so its time added is counted as 0 here; the benchmark measures it (`cascade` beside "
                  "`cascade-no-likelihood`, session 37: +3.1% and +3.3% of the median time on 100 HotpotQA and 100 "
                  "SQuAD 2.0 dev questions), under the 5% the rule allows."]
    lines += ["", f"Never abstaining (threshold 0): SQuAD train F1 {never['squad_f1']:.1f}, "
              f"HotpotQA train F1 {never['hotpotqa_f1']:.1f}.", "",
              f"**Chosen: `{result['pick']}`**, "
              + (f"thresholds **{chosen['threshold']:.3f}** (single-hop) and **{chosen['threshold_multi_hop']:.3f}** "
                 "(multi-hop), chosen by question type as below," if result.get("by_type") else
                 f"threshold **{chosen['threshold']:.3f}** (the best SQuAD train F1 that loses at most "
                 f"{result['max_hotpot_loss']} HotpotQA train F1 points"
                 + (f" in {100 * result['confidence']:.0f}% of bootstrap resamples of its questions" if result["confidence"]
                    else "") + "),")
              + " among the candidates that add at most "
              f"{result['max_time_added']}% to the median time per question: each self-check is a model call of a few "
              "dozen prompt tokens.",
              *(["", f"**A threshold per question type** (`--by-question-type`): the questions the question-type model "
                     f"reads as multi-hop ({chosen['multi_hop_questions']['hotpotqa']} of the HotpotQA and "
                     f"{chosen['multi_hop_questions']['squad']} of the SQuAD training questions"
                     + (f"; a question it was trained on is read out of fold, from {result['readings_source']}, as one "
                        "it never saw would be" if result.get("readings_source") else "")
                     + ") are held to "
                     f"**{chosen['threshold_multi_hop']:.3f}**, the others to **{chosen['threshold']:.3f}**: the pair with "
                     f"the best SQuAD train F1 that loses at most {result['max_hotpot_loss']} HotpotQA train F1 points"
                     + (f" in {100 * result['confidence']:.0f}% of bootstrap resamples of its questions"
                        if result["confidence"] else "")
                     + ("" if result["max_answerable_loss"] is None else
                        f" and at most {result['max_answerable_loss']} F1 points on SQuAD's answerable questions")
                     + " to never abstaining"
                     + ("" if result.get("min_answerable_f1") is None else
                        f", keeping SQuAD's answerable questions at {result['min_answerable_f1']:g} F1 or more")
                     + ". SQuAD train F1 "
                     f"{chosen['squad_f1']:.1f} (answerable {chosen['squad_answerable_f1']:.1f}), HotpotQA "
                     f"{chosen['hotpotqa_f1']:.1f}; one threshold for all by the same HotpotQA rule ("
                     f"{best['one_threshold']['threshold']:.3f}, the table below) gives SQuAD "
                     f"{best['one_threshold']['squad_f1']:.1f}. The knob (`abstain_threshold`) is the single-hop "
                     "threshold; a multi-hop question's follows it through the fitted pair "
                     "(`AnswerabilityModel.threshold_for`)."] if result.get("by_type") else []),
              *(held_out_lines(result["held_out"], result["max_hotpot_loss"], result["max_answerable_loss"],
                               result.get("min_answerable_f1"))
                if result.get("held_out") else []),
              *(["", f"For a generator the answer probe does not read (another model), the pipeline checks with "
                         f"`{result['fallback_pick']}` (`{shown_path(FALLBACK_MODEL)}`), the best candidate without the "
                         "probe by the same rule."] if result.get("fallback_pick") else []),
              "", f"Time on the training run: the check took {timing['check_p50_ms']:.0f} ms at the median "
              f"(both self-check calls {timing['self_check_p50_ms']:.0f} ms of it) against a median of "
              f"{timing['latency_p50_ms']:.0f} ms per question; without the self-check the check is "
              f"{timing['free_p50_ms']:.1f} ms.", "",
              "## Coefficients of the shipped model (standardised features)", "",
              "| feature | coefficient |", "| --- | --- |"]
    model: AnswerabilityModel = result["model"]
    for f, c in sorted(zip(model.features, model.coef, strict=True), key=lambda item: -abs(item[1])):
        lines.append(f"| `{f}` | {c:+.3f} |")
    lines += [f"| intercept | {model.intercept:+.3f} |", "",
              "## Thresholds (out-of-fold scores of the chosen features)", "",
              "| threshold | SQuAD F1 | SQuAD answered | HotpotQA F1 | HotpotQA answered | HotpotQA loss bound |",
              "| --- | --- | --- | --- | --- | --- |"]
    table = best["table"]
    step = max(1, len(table) // 20)
    chosen = best.get("one_threshold", chosen)
    for row in [*table[::step], chosen]:
        mark = " ← chosen" if row is chosen else ""
        lines.append(f"| {row['threshold']:.3f}{mark} | {row['squad_f1']:.1f} | {row['squad_answered']:.0f}% | "
                     f"{row['hotpotqa_f1']:.1f} | {row['hotpotqa_answered']:.0f}% | "
                     + (f"{row['hotpotqa_loss_bound']:.1f} |" if "hotpotqa_loss_bound" in row else "– |"))
    lines += ["", "![risk–coverage on train](risk_coverage_train.png)", ""]
    return "\n".join(lines)


def plot_curve(result: Mapping[str, Any], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, c in result["candidates"].items():
        xs, ys = zip(*c["curve"], strict=True)
        ax.plot(xs, ys, label=f"{name} (AUROC {c['auroc']:.2f})")
    ax.set_xlabel("answers given (% of scored answers)")
    ax.set_ylabel("right among those given (%)")
    ax.set_title("Risk–coverage on train (out-of-fold scores)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path = out / "risk_coverage_train.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def timing_figures(runs: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    check = [r["timings_ms"].get("check_answer", 0.0) for r in runs]
    self_check = [r["answerability"].get("self_check_ms", 0.0) for r in runs]
    return {"check_p50_ms": float(np.median(check)), "self_check_p50_ms": float(np.median(self_check)),
            "free_p50_ms": float(np.median([c - s for c, s in zip(check, self_check, strict=True)])),
            "latency_p50_ms": float(np.median([r["latency_ms"] for r in runs]))}


def as_given(run: Mapping[str, Any], answer_form: str) -> dict[str, Any]:
    """A recorded answer scored as the pipeline gives it: with ``answer_form`` ``short``, the short
    form of the text as written (:mod:`components.short_answer`; recorded before it existed, a run's
    ``answer`` is that text). The features stay those of the text as written, as the check computes
    them today (:func:`components.answerability.current_features`: a record of an older version is corrected)."""
    written = run.get("written_answer") or run["answer"]
    check = run["answerability"]
    if check.get("features"):
        run = {**run, "answerability": {**check, "features": current_features(
            check["features"], written or "", ABSTENTION, check.get("features_version"), run["question"])}}
    if answer_form != "short" or run["answerability"]["by"] == "model" or not written:
        return dict(run)
    given = short_answer(run["question"], written)
    return {**run, "answer": given, "em": exact_match(given, run["gold_answers"]), "f1": f1_score(given, run["gold_answers"])}


def with_sufficiency(runs: Sequence[Mapping[str, Any]], scorer, data_dir: str | None = None) -> list[dict[str, Any]]:
    """The runs with ``scorer``'s :data:`SUFFICIENCY` feature (and its time, ``sufficiency_ms``) on
    the five passages the shipped cascade keeps for each question, retrieved again from the train
    benchmark index (what ``check_answer`` reads; the recorded runs predate the scorer)."""
    from training.sufficiency import recorded_passages

    out = [dict(r) for r in runs]
    for r, passages in zip(out, recorded_passages(out, data_dir), strict=True):
        start = time.perf_counter()
        score = scorer.score(r["question"], passages)
        r["answerability"] = {**r["answerability"], "features": {**r["answerability"]["features"], SUFFICIENCY: score},
                              "sufficiency_ms": (time.perf_counter() - start) * 1000.0}
    return out


def with_scores(runs: Sequence[Mapping[str, Any]], scores: Mapping[str, float], score_ms: float) -> list[dict[str, Any]]:
    """The runs with the :data:`SUFFICIENCY` feature given by ``scores`` (by question id: the
    article-fold scores of ``python -m training.sufficiency --cross-fit``, which replace any recorded
    one) and the scorer's time per question, ``score_ms``."""
    missing = [r["id"] for r in runs if r["id"] not in scores]
    if missing:
        raise SystemExit(f"{len(missing)} recorded questions have no cross-fitted sufficiency score (the first: {missing[0]}); "
                         "run `python -m training.sufficiency --cross-fit 2` again, or pass --sufficiency-scores none")
    return [{**r, "answerability": {**r["answerability"], "sufficiency_ms": score_ms,
                                    "features": {**r["answerability"]["features"], SUFFICIENCY: scores[r["id"]]}}}
            for r in runs]


def with_question_likelihood(runs: Sequence[Mapping[str, Any]],
                             others: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """``runs`` with the question's likelihood (:data:`QUESTION_LIKELIHOOD`) from another recording of
    the same questions (``others``, made since the pipeline reads it) where they lack it. It describes
    the final prompt, the question and the evidence of the tier the answer came from, so it joins
    wherever the other recording took the same path (the final tier, the escalations), even where the
    answer came out a piece different (another machine's rounding). Nothing else joins: the other
    recording's answer-probe reading is the shipped probe's, fit on these very answers (the candidates
    read the probe's cross-fitted scores), and its other features describe its own answers. Returns the
    runs and how many gained."""
    def path(run: Mapping[str, Any]) -> tuple[Any, ...]:
        return run["dataset"], run["id"], run.get("final_tier"), run.get("escalations")

    found = {path(o): (o["answerability"].get("features") or {}) for o in others if o.get("answerability")}
    out, gained = [], 0
    for run in runs:
        own = run["answerability"].get("features") or {}
        extra = {k: found[path(run)][k] for k in QUESTION_LIKELIHOOD
                 if path(run) in found and k in found[path(run)] and k not in own}
        if extra and own:
            run = {**run, "answerability": {**run["answerability"], "features": {**own, **extra}}}
            gained += 1
        out.append(dict(run))
    return out, gained


def with_probe_scores(runs: Sequence[Mapping[str, Any]], scores: Mapping[str, float]) -> list[dict[str, Any]]:
    """The runs with the :data:`ANSWER_PROBE` feature given by ``scores`` (by question id); an answer
    without one (no reading: it ended at its first token) stays without, as the check leaves it."""
    if not any(r["id"] in scores for r in checked(runs)):
        raise SystemExit("no recorded answer has an answer-probe score: the scores are of other runs; run "
                         "`python -m training.answer_probe run` and `fit` on these, or pass --answer-probe-scores none")
    return [{**r, "answerability": {**r["answerability"],
                                    "features": {**r["answerability"]["features"], ANSWER_PROBE: scores[r["id"]]}}}
            if r["id"] in scores else dict(r) for r in runs]


def without_sufficiency(runs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The runs without the :data:`SUFFICIENCY` feature the recording run scored. The shipped scorer
    was trained on the recorded questions' articles, so its scores separate their unanswerable
    questions better than an unseen article's: a check fit on them would lean on a feature that
    is weaker on new questions. Only ``--sufficiency`` (with its article-fold scores) brings it back."""
    return [{**r, "answerability": {**r["answerability"], "features": {
        k: v for k, v in r["answerability"]["features"].items() if k != SUFFICIENCY}}} for r in runs]


def read_scores(path: Path, feature: str = SUFFICIENCY) -> dict[str, float]:
    """``{question id: score}`` from a cross-fitted scores file of ``feature``."""
    from eval.runner import read_records

    if not path.is_file():
        fix = ("run `python -m training.sufficiency --cross-fit 2`, or pass --sufficiency-scores none to score with the "
               "shipped scorer" if feature == SUFFICIENCY else
               "run `python -m training.answer_probe fit`, or pass --answer-probe-scores none")
        raise SystemExit(f"no cross-fitted {feature} scores at {path}: {fix}")
    return {r["id"]: float(r[feature]) for r in read_records(path)}


def default_inputs(runs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Recorded answers (as given) with what ``fit`` adds to them by default: no sufficiency score,
    the answer probe's cross-fitted scores and the question's likelihood from its second recording."""
    from eval.runner import read_records

    joined = with_probe_scores(without_sufficiency(runs), read_scores(PROBE_CROSS_FIT, ANSWER_PROBE))
    return with_question_likelihood(joined, read_records(LIKELIHOOD_RUNS))[0]


def fit_command(args: argparse.Namespace) -> int:
    from components.question_type import QuestionTypeModel
    from components.storage import atomic_write_text
    from components.sufficiency import SufficiencyScorer
    from eval.runner import read_records

    runs = [as_given(r, args.answer_form) for r in read_records(args.out) if r.get("answerability")]
    if not runs:
        raise SystemExit(f"no recorded answers in {args.out}; run `python -m training.answerability run` first")
    if args.sufficiency is not None:
        scorer = SufficiencyScorer(args.sufficiency)
        runs = (with_sufficiency(runs, scorer, args.data_dir) if args.sufficiency_scores is None
                else with_scores(runs, read_scores(args.sufficiency_scores), float(scorer.card["score_ms"])))
    else:
        runs = without_sufficiency(runs)
    if args.answer_probe_scores is not None:
        runs = with_probe_scores(runs, read_scores(args.answer_probe_scores, ANSWER_PROBE))
    joined = 0
    if args.features_from is not None:
        if not args.features_from.is_file():
            raise SystemExit(f"no recorded answers at {args.features_from} (--features-from)")
        runs, joined = with_question_likelihood(runs, read_records(args.features_from))
        print(f"{joined} of {len(runs)} recorded answers gained the question's likelihood from {args.features_from}",
              file=sys.stderr)
    readings = None
    if args.by_question_type and args.question_type_readings is not None:
        readings = read_question_types(args.question_type_readings, QuestionTypeModel.load().threshold)
    start = time.perf_counter()
    result = fit(runs, args.max_hotpot_loss, args.l2, args.max_time_added, args.loss_confidence, args.require,
                 args.by_question_type, args.max_answerable_loss, readings, args.halves, args.min_answerable_f1)
    result["readings_source"] = None if readings is None else f"`{shown_path(args.question_type_readings)}`"
    result["probe_source"] = None if args.answer_probe_scores is None else f"`{shown_path(args.answer_probe_scores)}`"
    result["likelihood_source"] = None if args.features_from is None else f"`{shown_path(args.features_from)}`"
    result["likelihood_joined"] = joined
    result["sufficiency_source"] = (None if args.sufficiency is None else "the shipped scorer" if args.sufficiency_scores is None
                                    else f"`{shown_path(args.sufficiency_scores)}`")
    args.report.mkdir(parents=True, exist_ok=True)
    result["model"].save(args.model_out)
    if result["fallback"] is not None:
        result["fallback"].save(args.fallback_out)
    atomic_write_text(args.report / "README.md", report(result, runs, timing_figures(runs), shown_path(args.out),
                                                          args.answer_form))
    plot_curve(result, args.report)
    summary = {"pick": result["pick"], "single_auroc": result["single"], "held_out": result["held_out"],
               **{name: {k: v for k, v in c.items() if k not in ("table", "curve")}
                  for name, c in result["candidates"].items()}}
    atomic_write_text(args.report / "fit.json", json.dumps(summary, indent=2) + "\n")
    print(json.dumps({"pick": result["pick"], "chosen": result["candidates"][result["pick"]]["chosen"],
                      "fit_s": round(time.perf_counter() - start, 2)}, indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser, run_parser, fit_parser = run_fit_parser(
        __doc__.split("\n\n")[0], RUNS_FILE, "answer the training questions, recording every feature (resumable)",
        "fit the model and its threshold from the recorded answers")
    run_parser.add_argument("--answer-examples", action="store_true",
                            help="answer with the worked examples before the question (PipelineConfig.answer_examples)")
    run_parser.add_argument("--size", type=int, default=None,
                            help="questions per dataset, at most what its train split holds (default: "
                                 + ", ".join(f"{s.dataset} {s.size}" for s in SETS) + ")")
    fit_parser.add_argument("--max-hotpot-loss", type=float, default=MAX_HOTPOT_LOSS,
                            help="HotpotQA train F1 points the threshold may lose to false abstentions "
                                 f"(default {MAX_HOTPOT_LOSS:g})")
    fit_parser.add_argument("--l2", type=float, default=1.0, help="L2 penalty on the coefficients (default 1)")
    fit_parser.add_argument("--max-time-added", type=float, default=5.0,
                            help="%% the check may add to the median time per question (default 5)")
    fit_parser.add_argument("--answer-form", choices=ANSWER_FORMS, default="short",
                            help="score the answers as this form gives them (default short, as the pipeline does)")
    fit_parser.add_argument("--sufficiency", type=lambda v: None if v == "none" else Path(v), default=None,
                            help="a sufficiency scorer whose feature the candidates may use (default none: the shipped "
                                 f"check leaves it out; {shown_path(DEFAULT_SCORER)} is the shipped scorer)")
    fit_parser.add_argument("--sufficiency-scores", type=lambda v: None if v == "none" else Path(v), default=CROSS_FIT,
                            help="the feature's values for the recorded questions, each from a scorer that never saw its "
                                 "article ('none': score them with --sufficiency, whose training saw their articles; "
                                 f"default: {shown_path(CROSS_FIT)})")
    fit_parser.add_argument("--answer-probe-scores", type=lambda v: None if v == "none" else Path(v), default=PROBE_CROSS_FIT,
                            help="the answer probe's cross-fitted scores of the recorded answers, which the candidates "
                                 f"may use ('none': no probe candidates; default: {shown_path(PROBE_CROSS_FIT)})")
    fit_parser.add_argument("--features-from", type=lambda v: None if v == "none" else Path(v), default=LIKELIHOOD_RUNS,
                            help="another recording of the same questions (`run --out FILE`, made since the pipeline "
                                 "reads the question's likelihood): a question it answered by the same path gains that "
                                 f"feature ('none': no such candidates; default: {shown_path(LIKELIHOOD_RUNS)})")
    fit_parser.add_argument("--fallback-out", type=Path, default=FALLBACK_MODEL,
                            help="where the best check without the answer probe goes when the chosen one uses it, for "
                                 f"generators the probe does not read (default: {shown_path(FALLBACK_MODEL)})")
    fit_parser.add_argument("--require", choices=sorted(FEATURES), default=None,
                            help="choose among the candidates that use this feature only (for a check shipped as an option)")
    fit_parser.add_argument("--by-question-type", action=argparse.BooleanOptionalAction, default=True,
                            help="a threshold for the questions the question-type model reads as multi-hop and one for "
                                 "the rest (default: on; --no-by-question-type fits one for all)")
    fit_parser.add_argument("--question-type-readings", type=lambda v: None if v == "none" else Path(v),
                            default=QUESTION_TYPE_CROSS_FIT,
                            help="with --by-question-type, the question-type model's out-of-fold probabilities of the "
                                 "questions it was trained on ('none': the readings recorded with the answers, in-sample "
                                 f"for those; default: {shown_path(QUESTION_TYPE_CROSS_FIT)})")
    fit_parser.add_argument("--max-answerable-loss", type=lambda v: None if v == "none" else float(v),
                            default=MAX_ANSWERABLE_LOSS,
                            help="with --by-question-type, SQuAD answerable train F1 points the thresholds may lose to "
                                 f"false abstentions (default {MAX_ANSWERABLE_LOSS:g}; 'none': no bound)")
    fit_parser.add_argument("--min-answerable-f1", type=lambda v: None if v == "none" else float(v), default=None,
                            help="with --by-question-type, the SQuAD answerable train F1 (%%) the thresholds must keep, "
                                 f"#15's target as it states it (e.g. {ANSWERABLE_FLOOR:g}; default: none, no floor)")
    fit_parser.add_argument("--loss-confidence", type=float, default=0.0,
                            help="bound the HotpotQA loss at this bootstrap quantile, e.g. "
                                 f"{LOSS_CONFIDENCE} (default 0: the point estimate)")
    fit_parser.add_argument("--halves", type=int, default=30,
                            help="with --by-question-type, how many random halvings of the training answers measure the "
                                 "rule on questions it did not choose on (default 30; 0: none)")
    fit_parser.add_argument("--data-dir", default=None, help="benchmark data folder (default: ../shared/data)")
    fit_parser.add_argument("--report", type=Path, default=REPORT_DIR)
    fit_parser.add_argument("--model-out", type=Path, default=DEFAULT_MODEL,
                            help=f"where the fitted model goes (default: {DEFAULT_MODEL})")
    args = parser.parse_args(argv)
    if args.command == "fit" and args.halves < 0:
        parser.error(f"--halves must be 0 or more, got {args.halves}")
    if args.command == "fit" and not 0 <= args.loss_confidence < 1:
        parser.error(f"--loss-confidence must be 0 or within (0, 1), got {args.loss_confidence}")
    return run(args) if args.command == "run" else fit_command(args)


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
