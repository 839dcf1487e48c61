"""Fitting the answer probe of the default generator on the train splits.

    python -m training.answer_probe run    # answer the check's training questions again, keeping hidden states (resumable)
    python -m training.answer_probe record --out F  # answer them once, keeping what the check reads and the states
    python -m training.answer_probe extra  # answer more train questions, for the probe only (resumable; optional)
    python -m training.answer_probe fit    # choose the layer and penalty, write the probe and its cross-fitted scores
    python -m training.answer_probe fit --extra-limit 400 --probe-out … # a learning curve's point: the first 400 extra answers
    python -m training.answer_probe layers  # AUROC of probes on several layers read together (measured, not shipped)
    python -m training.answer_probe answerable  # does a probe of answerable questions add to the check (measured, not shipped)

``run`` answers every question of the answerability check's training runs
(:data:`training.answerability.RUNS_FILE`: SQuAD 2.0 train articles and HotpotQA train) again
through the compiled graph, with the same cascade and the check left out (it comes after the
answer, so the answers are the same), and keeps the output of the layers :data:`LAYERS` at the
first token of each final answer. It checks that every answer is the recorded one: the hidden states
belong to the answers the check is fit on. The states go to an ``.npz`` file of arrays (no pickle)
under ``runs/``: 17 MB that ``run`` remakes, so they are not committed.

``record`` answers the same questions once and keeps both what the check reads of each answer (as
``training.answerability run`` records it, less the features that cost a model call) and its states:
a recording that the probe (``fit --runs F --hidden H``) and then the check (``training.answerability
fit --out F``) are both fit on. ``--cross-fit-reranker`` ranks each SQuAD 2.0 question's evidence by
the learned reranker fit without its article (:func:`training.rerank.article_rankers`), as the
shipped cascade ranks a new article's: the check is then fit on answers read from the evidence it
will check.

``extra`` answers train questions the check is not fit on (SQuAD 2.0 train articles and NQ-open
train by default, seeded, none of the check's) the same way and keeps their states and whether each
answer is right (:data:`EXTRA_FILE`): more answers for the probe alone. The check's own answers
keep their out-of-fold scores: every fold's probe learns from the extra answers too, never from its
fold.

``fit`` then, with no model run, on the answers the check scores (``training.answerability.checked``)
and the extra answers when they were recorded:

* the out-of-fold AUROC for "the answer is right" of a logistic probe on each layer, at each L2
  penalty of :data:`PENALTIES`, in the check's own five folds (by position);
* the best layer and penalty give each answer its out-of-fold score (:data:`CROSS_FIT`, the feature
  ``training.answerability fit --answer-probe-scores`` reads, as the sufficiency scorer's
  cross-fitted scores are read) and, fit on all of them, the shipped probe
  (``components/answer_probe.json``), with the report in ``docs/answer_probe/``.

``answerable`` measures, and ships nothing: whether a probe of whether the *question* is answerable
(SQuAD's gold labels), read from the same states, adds to the check that already reads a probe of
whether the *answer* is right (session 46: it does not).

Nothing here looks at a dev question.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult

from components.answer_probe import DEFAULT_PROBE, fit_probe, hidden_features
from eval.abstention import CORRECT_F1, is_right
from training.answerability import FOLDS, PROBE_CROSS_FIT as CROSS_FIT, RUNS_FILE, as_given, checked
from training.cascade import auroc, shown_path

ROOT = Path(__file__).resolve().parent.parent
HIDDEN_FILE = ROOT / "runs" / "answer_probe" / "hidden_states.npz"
EXTRA_FILE = ROOT / "runs" / "answer_probe" / "extra_states.npz"
EXTRA_SETS = ("squad=600", "nq=300")
"""The extra answers ``extra`` records by default: train questions of each dataset, ``name=count``."""
EXTRA_SEED = 29
REPORT_DIR = ROOT / "docs" / "answer_probe"
LAYERS = (8, 12, 16, 20, 24)
"""The layers ``run`` keeps (of the default model's 28): the middle of the stack, where the states
tell right answers from wrong ones best."""
PENALTIES = (30.0, 100.0, 300.0, 1000.0)
"""The L2 penalties ``fit`` tries (on standardised values; 1,536 of them against a few hundred answers)."""
SAVE_EVERY = 20


class HiddenRecorder(BaseCallbackHandler):
    """A LangChain callback handler that keeps the hidden states of the latest reply that has them;
    with ``keep_replies``, also each reply's (``None`` for one without) in ``replies``, which its user empties."""

    def __init__(self, keep_replies: bool = False) -> None:
        self.latest: Mapping[int, Sequence[float]] | None = None
        self.keep_replies = keep_replies
        self.replies: list[Mapping[int, Sequence[float]] | None] = []

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        message = getattr(response.generations[0][0], "message", None)
        hidden = (getattr(message, "response_metadata", None) or {}).get("hidden_states")
        if self.keep_replies:
            self.replies.append(hidden or None)
        if hidden:
            self.latest = hidden


def answered(recorder: HiddenRecorder, ctx: Any, system: Any, example: Any, layers: Sequence[int],
             width: int) -> tuple[dict[str, Any], list[Sequence[float]]]:
    """``example`` answered under ``system`` (:func:`eval.runner.run_one`): its record and the states of ``layers``
    its last reply kept (NaNs where it kept none: an answer that ended at its first token)."""
    from eval.runner import run_one

    recorder.latest = None
    record = run_one(ctx, system, example)
    hidden = recorder.latest or {}
    return record, [hidden.get(layer, [np.nan] * width) for layer in layers]


def read_hidden(path: Path) -> dict[str, np.ndarray]:
    if not path.is_file():
        raise SystemExit(f"no hidden states at {shown_path(path)}: run `python -m training.answer_probe run` first")
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def _save(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """Write the arrays atomically (an interrupted save leaves the previous file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial.npz")
    np.savez(partial, **arrays)
    partial.replace(path)


def as_written(record: Mapping[str, Any]) -> str:
    """The answer as the model wrote it (a run recorded before the short form existed has only that)."""
    return str(record.get("written_answer") or record["answer"])


def answering_system():
    """The shipped cascade with the check left out, as the check's training run answered."""
    from eval.systems import System
    from pipeline.configuration import PipelineConfig

    return System("cascade", "the shipped cascade, as the check's training run answered", PipelineConfig(abstain_threshold=0.0))


def reading(contexts: Mapping[Any, Any], layers: Sequence[int], keep_replies: bool = False
            ) -> tuple[HiddenRecorder, int, str]:
    """Set the contexts' generator to read ``layers`` at each answer's first token; the recorder that
    keeps each reading (:class:`HiddenRecorder`), the layers' width and the model file's name."""
    generator = next(iter(contexts.values())).generator
    generator.hidden_layers = tuple(layers)
    recorder = HiddenRecorder(keep_replies)
    generator.callbacks = [recorder]
    return recorder, generator.hidden_size, Path(generator.model_path).name


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from eval.contexts import load_contexts
    from eval.datasets import load
    from eval.runner import read_records

    runs = list(read_records(args.runs))
    layers = tuple(args.layers)
    done: dict[str, Any] = read_hidden(args.hidden) if args.hidden.is_file() else {}
    if done and tuple(done["layers"].tolist()) != layers:
        raise SystemExit(f"{shown_path(args.hidden)} holds layers {done['layers'].tolist()}, not {list(layers)}: "
                         "move it away or ask for its layers")
    ids = [str(i) for i in done.get("ids", [])]
    states = list(done.get("states", []))
    same = [bool(s) for s in done.get("same", [])]
    todo = runs[len(ids):]
    print(f"{len(runs)} recorded answers, {len(ids)} already in {shown_path(args.hidden)}", file=sys.stderr)
    if not todo:
        return 0
    if [r["id"] for r in runs[:len(ids)]] != ids:
        raise SystemExit(f"{shown_path(args.hidden)} is not from {shown_path(args.runs)}: move it away")
    splits = list(dict.fromkeys((r["dataset"], "train") for r in runs))
    wanted = {r["id"] for r in todo}
    examples = {e.id: e for dataset, split in splits for e in load(dataset, split, args.data_dir) if e.id in wanted}
    contexts = load_contexts(splits, args.data_dir, args.model, answerability=None, answer_probe=None)
    recorder, width, model = reading(contexts, layers)

    def save() -> None:
        _save(args.hidden, {"ids": np.array(ids), "layers": np.array(layers), "states": np.array(states, dtype=np.float32),
                            "same": np.array(same), "model": np.array(model)})

    with tqdm(total=len(todo), unit="question", file=sys.stderr, mininterval=5.0) as bar:
        for n, recorded in enumerate(todo, 1):
            record, state = answered(recorder, contexts[(recorded["dataset"], "train")], answering_system(),
                                     examples[recorded["id"]], layers, width)
            states.append(state)
            ids.append(recorded["id"])
            same.append(as_written(record) == as_written(recorded))
            if n % SAVE_EVERY == 0 or n == len(todo):
                save()
            bar.update(1)
    print(f"{sum(same)} of {len(same)} answers are the recorded ones", file=sys.stderr)
    return 0


def record(args: argparse.Namespace) -> int:
    """Answer the questions of ``--runs`` once, in their order, and keep both what the check reads of each answer
    (``--out``, as ``training.answerability run`` records it, without the features that cost a model call) and
    the hidden states of its first token (``--hidden``): a recording the check and the probe are both fit on.
    With ``--cross-fit-reranker``, each SQuAD 2.0 question's evidence is ranked by the learned reranker fit
    without its article (:func:`training.rerank.article_rankers`); with ``--reranker``, every question's by that
    one. Resumable: the two files grow together."""
    from dataclasses import replace

    from tqdm import tqdm

    from components.reranker import LearnedReranker, load_reranker
    from eval.contexts import load_contexts
    from eval.datasets import load
    from eval.runner import read_records
    from training.answerability import kept_record, recording_model
    from training.rerank import article_rankers

    if args.cross_fit_reranker and args.reranker is not None:
        raise SystemExit("--cross-fit-reranker and --reranker each choose the reranker: pass one")
    questions = list(read_records(args.runs))
    layers = tuple(args.layers)
    done: dict[str, Any] = read_hidden(args.hidden) if args.hidden.is_file() else {}
    if done and tuple(done["layers"].tolist()) != layers:
        raise SystemExit(f"{shown_path(args.hidden)} holds layers {done['layers'].tolist()}, not {list(layers)}")
    ids = [str(i) for i in done.get("ids", [])]
    states = list(done.get("states", []))
    records = [r["id"] for r in read_records(args.out)] if args.out.is_file() else []
    # the states are saved before their records: a run stopped between the two saves holds one batch more of states
    if (records != ids[:len(records)] or len(ids) - len(records) > SAVE_EVERY
            or [q["id"] for q in questions[:len(records)]] != records):
        raise SystemExit(f"{shown_path(args.out)} and {shown_path(args.hidden)} are not one recording of "
                         f"{shown_path(args.runs)}'s questions: move both away")
    ids, states = ids[:len(records)], states[:len(records)]
    todo = questions[len(ids):]
    print(f"{len(questions)} questions, {len(ids)} already recorded", file=sys.stderr)
    if not todo:
        return 0
    splits = list(dict.fromkeys((q["dataset"], "train") for q in questions))
    examples = {(dataset, e.id): e for dataset, split in splits for e in load(dataset, split, args.data_dir)}
    contexts = {split: replace(ctx, answerability=recording_model(model_calls=False), sufficiency=None)
                for split, ctx in load_contexts(splits, args.data_dir, args.model, answerability=None,
                                                answer_probe=None).items()}
    if args.reranker is not None:
        reranker = load_reranker(args.reranker)
        reranker.warm_up()
        contexts = {split: replace(ctx, reranker=reranker) for split, ctx in contexts.items()}
    rankers: dict[str, LearnedReranker] = {}  # SQuAD 2.0 article title -> the reranker fit without it
    if args.cross_fit_reranker and ("squad", "train") in contexts:
        squad = contexts[("squad", "train")]
        fits = article_rankers([e for (d, _), e in examples.items() if d == "squad"], squad.index, squad.embedder)
        rankers = {title: LearnedReranker(model) for title, model in fits.items()}
    recorder, width, model = reading(contexts, layers)
    system = answering_system()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    pending: list[dict[str, Any]] = []

    def save() -> None:  # the states first: a record is written only once its state is kept
        _save(args.hidden, {"ids": np.array(ids), "layers": np.array(layers), "states": np.array(states, dtype=np.float32),
                            "same": np.ones(len(ids), dtype=bool), "model": np.array(model)})
        with args.out.open("a", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in pending)
        pending.clear()

    with tqdm(total=len(todo), unit="question", file=sys.stderr, mininterval=5.0) as bar:
        for n, question in enumerate(todo, 1):
            example = examples[(question["dataset"], question["id"])]
            ctx = contexts[(question["dataset"], "train")]
            if question["dataset"] == "squad" and rankers:
                ctx = replace(ctx, reranker=rankers[example.meta["title"]])
            record, state = answered(recorder, ctx, system, example, layers, width)
            pending.append(kept_record(record))
            states.append(state)
            ids.append(question["id"])
            if n % SAVE_EVERY == 0 or n == len(todo):
                save()
            bar.update(1)
    return 0


def parse_sets(texts: Sequence[str]) -> list[tuple[str, int]]:
    """``["squad=600", "nq=300"]`` as ``[("squad", 600), ("nq", 300)]``."""
    from eval.datasets import DATASETS

    sets = []
    for text in texts:
        name, _, count = text.partition("=")
        if name not in DATASETS or not count.isdigit() or int(count) < 1:
            raise SystemExit(f"--sets takes name=count with a dataset of {', '.join(DATASETS)} and a count >= 1, got {text!r}")
        sets.append((name, int(count)))
    return sets


def extra(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from eval.contexts import load_contexts
    from eval.datasets import load
    from eval.runner import read_records, sample
    from training.labelling import interleave

    if args.extra is None:
        raise SystemExit("extra records to a file: pass --extra PATH (or leave the default)")
    sets = parse_sets(args.sets)
    layers = tuple(args.layers)
    excluded = {(r["dataset"], r["id"]) for r in read_records(args.runs)}
    questions = interleave([[e for e in sample(load(dataset, "train", args.data_dir), None, EXTRA_SEED)
                             if (dataset, e.id) not in excluded][:count] for dataset, count in sets])
    done: dict[str, Any] = read_hidden(args.extra) if args.extra.is_file() else {}
    if done and tuple(done["layers"].tolist()) != layers:
        raise SystemExit(f"{shown_path(args.extra)} holds layers {done['layers'].tolist()}, not {list(layers)}")
    keys = [f"{d}/{i}" for d, i in zip(done.get("datasets", []), done.get("ids", []), strict=True)]
    states, right, answered = list(done.get("states", [])), list(done.get("right", [])), list(done.get("answered", []))
    have = set(keys)
    todo = [e for e in questions if f"{e.dataset}/{e.id}" not in have]
    print(f"{len(questions)} extra train questions, {len(questions) - len(todo)} already in {shown_path(args.extra)}",
          file=sys.stderr)
    if not todo:
        return 0
    contexts = load_contexts([(d, "train") for d, _ in sets], args.data_dir, args.model, answerability=None, answer_probe=None)
    recorder, width, model = reading(contexts, layers)

    def save() -> None:
        datasets, ids = zip(*(k.split("/", 1) for k in keys), strict=True)
        _save(args.extra, {"datasets": np.array(datasets), "ids": np.array(ids), "layers": np.array(layers),
                           "states": np.array(states, dtype=np.float32), "right": np.array(right),
                           "answered": np.array(answered), "model": np.array(model)})

    with tqdm(total=len(todo), unit="question", file=sys.stderr, mininterval=5.0) as bar:
        for n, example in enumerate(todo, 1):
            record, state = answered(recorder, contexts[(example.dataset, "train")], answering_system(), example,
                                     layers, width)
            states.append(state)
            keys.append(f"{example.dataset}/{example.id}")
            answered.append(record["answerability"]["by"] != "model")  # the model's own abstentions are not scored
            right.append(is_right(as_given(record, "short")) if answered[-1] else False)
            if n % SAVE_EVERY == 0 or n == len(todo):
                save()
            bar.update(1)
    return 0


PER_QUESTION = ("datasets", "ids", "states", "right", "answered")
"""The arrays of the extra states with a row per question (the others describe the file)."""


def first_extra(extra_states: Mapping[str, np.ndarray], limit: int) -> dict[str, np.ndarray]:
    """The first ``limit`` extra questions, in the order ``extra`` answered them (the datasets take
    turns, so any prefix mixes them): for a learning curve."""
    if limit < 0:
        raise SystemExit(f"--extra-limit takes a count >= 0, got {limit}")
    return {key: values[:limit] if key in PER_QUESTION else values for key, values in extra_states.items()}


def extra_rows(extra_states: Mapping[str, np.ndarray] | None, layers: Sequence[int]) -> tuple[np.ndarray, list[int]]:
    """The extra answers' states (answers, layers, width) and labels: those answered (not the model's
    own abstention) with a reading of every layer."""
    if extra_states is None:
        return np.zeros((0, len(layers), 0), dtype=np.float32), []
    if [int(v) for v in extra_states["layers"]] != list(layers):
        raise SystemExit(f"the extra states hold layers {extra_states['layers'].tolist()}, the check's {list(layers)}")
    states = extra_states["states"]
    keep = np.asarray(extra_states["answered"], dtype=bool) & np.isfinite(states).all(axis=(1, 2))
    return states[keep], [int(v) for v in np.asarray(extra_states["right"])[keep]]


# ---- fitting, from the recorded states only ----

MAX_CHANGED = 0.1
"""The share of answers that may come out differently from the recorded ones (another CPU rounds
otherwise and a greedy answer at a near-tie goes the other way) before ``fit`` refuses the states."""


def probe_rows(runs: Sequence[Mapping[str, Any]], hidden: Mapping[str, np.ndarray]
               ) -> tuple[list[Mapping[str, Any]], np.ndarray, int]:
    """The answers the check scores that have a reading, their states (answers, layers, width), and
    how many were left out for coming out differently from the recorded answer (their state is
    another answer's)."""
    position = {str(i): n for n, i in enumerate(hidden["ids"])}
    scored = [r for r in checked(runs) if r["id"] in position]
    missing = len(checked(runs)) - len(scored)
    if missing:
        raise SystemExit(f"{missing} scored answers have no hidden states: run `python -m training.answer_probe run`")
    changed = [r["id"] for r in scored if not hidden["same"][position[r["id"]]]]
    if len(changed) > MAX_CHANGED * len(scored):
        raise SystemExit(f"{len(changed)} of {len(scored)} answers came out differently from the recorded ones (the first: "
                         f"{changed[0]}): the states are mostly not those of the answers the check is fit on; record the "
                         "check's runs again on this machine (python -m training.answerability run)")
    scored = [r for r in scored if hidden["same"][position[r["id"]]]]
    states = np.stack([hidden["states"][position[r["id"]]] for r in scored])
    read = np.isfinite(states).all(axis=(1, 2))
    return [r for r, ok in zip(scored, read, strict=True) if ok], states[read], len(changed)


def out_of_fold(x: np.ndarray, labels: Sequence[int], l2: float, extra_x: np.ndarray | None = None,
                extra_labels: Sequence[int] = ()) -> np.ndarray:
    """Each row's probe score from a probe fit without its fold (the check's folds: by position),
    on the other folds and every extra answer."""
    features = hidden_features(x.shape[1])
    extra_x = np.zeros((0, x.shape[1]), dtype=x.dtype) if extra_x is None else extra_x
    scores = np.zeros(len(x))
    for fold in range(FOLDS):
        train = [i for i in range(len(x)) if i % FOLDS != fold]
        probe = fit_probe(np.vstack([x[train], extra_x]), [*(labels[i] for i in train), *extra_labels], features, l2=l2,
                          metadata={"model": "cv", "layer": 0})
        for i in range(fold, len(x), FOLDS):
            scores[i] = probe.score_hidden(x[i])
    return scores


def _rows(runs: Sequence[Mapping[str, Any]], hidden: Mapping[str, np.ndarray],
          extra_states: Mapping[str, np.ndarray] | None) -> dict[str, Any]:
    """What ``fit`` and ``layer_sets`` learn from: the scored answers, their states and labels, the
    layers read, and the extra answers' states and labels (of the same model)."""
    scored, states, changed = probe_rows(runs, hidden)
    if extra_states is not None and str(extra_states["model"]) != str(hidden["model"]):
        raise SystemExit(f"the extra states are of {extra_states['model']}, the check's of {hidden['model']}")
    layers = [int(v) for v in hidden["layers"]]
    more, more_labels = extra_rows(extra_states, layers)
    return {"scored": scored, "states": states, "changed": changed, "labels": [int(is_right(r)) for r in scored],
            "layers": layers, "more": more, "more_labels": more_labels}


def _grid(rows: Mapping[str, Any], sets: Sequence[Sequence[int]], penalties: Sequence[float]
          ) -> dict[tuple[tuple[int, ...], float], dict[str, Any]]:
    """For each set of layers (their outputs side by side, one probe on all of them) and each
    penalty, every answer's out-of-fold score and the AUROC."""
    states, more, labels, layers = rows["states"], rows["more"], rows["labels"], rows["layers"]
    grid: dict[tuple[tuple[int, ...], float], dict[str, Any]] = {}
    for chosen in sets:
        missing = [layer for layer in chosen if layer not in layers]
        if missing:
            raise SystemExit(f"the states hold layers {layers}, not {missing}")
        at = [layers.index(layer) for layer in chosen]
        x = states[:, at, :].reshape(len(states), -1)
        extra_x = more[:, at, :].reshape(len(more), -1) if len(more) else None
        for l2 in penalties:
            oof = out_of_fold(x, labels, l2, extra_x, rows["more_labels"])
            grid[(tuple(chosen), l2)] = {"auroc": auroc(list(oof), [bool(v) for v in labels]), "scores": oof}
    return grid


def best_of(grid: Mapping[tuple[Any, float], Mapping[str, Any]]) -> tuple[Any, float]:
    """The grid's best key: the highest AUROC, the smallest penalty on a tie."""
    return max(grid, key=lambda key: (round(grid[key]["auroc"], 9), -key[1]))


def fit(runs: Sequence[Mapping[str, Any]], hidden: Mapping[str, np.ndarray], penalties: Sequence[float],
        extra_states: Mapping[str, np.ndarray] | None = None) -> dict[str, Any]:
    rows = _rows(runs, hidden, extra_states)
    scored, states, labels, layers = rows["scored"], rows["states"], rows["labels"], rows["layers"]
    more, more_labels = rows["more"], rows["more_labels"]
    grid = {(chosen[0], l2): cell for (chosen, l2), cell in _grid(rows, [[layer] for layer in layers], penalties).items()}
    layer, l2 = best_of(grid)
    j = layers.index(layer)
    extra_sets = sorted({f"{d} train" for d in extra_states["datasets"]}) if extra_states is not None else []
    probe = fit_probe(np.vstack([states[:, j, :], *([more[:, j, :]] if len(more) else [])]), [*labels, *more_labels],
                      hidden_features(states.shape[2]), l2=l2, metadata={
        "model": str(hidden["model"]), "layer": layer, "l2": l2, "cv_auroc": grid[(layer, l2)]["auroc"],
        "fit_on": sorted({f"{r['dataset']} train" for r in scored} | set(extra_sets)), "answers": len(scored) + len(more),
        "extra_answers": len(more), "label": f"answerable and token F1 >= {CORRECT_F1}",
        "command": "python -m training.answer_probe fit"})
    return {"scored": scored, "labels": labels, "grid": grid, "layer": layer, "l2": l2, "probe": probe,
            "cross_fit": grid[(layer, l2)]["scores"], "runs": len(runs), "changed": rows["changed"],
            "extra": len(more), "extra_right": sum(more_labels), "extra_sets": extra_sets}


def layer_sets(runs: Sequence[Mapping[str, Any]], hidden: Mapping[str, np.ndarray], sets: Sequence[Sequence[int]],
               penalties: Sequence[float], extra_states: Mapping[str, np.ndarray] | None = None
               ) -> tuple[list[Mapping[str, Any]], dict[tuple[tuple[int, ...], float], dict[str, Any]]]:
    """The answers the check scores, and for each set of layers read together and each penalty, the
    out-of-fold scores and AUROC, in ``fit``'s folds and with its extra answers: whether a second
    layer tells more than the best one alone."""
    rows = _rows(runs, hidden, extra_states)
    return rows["scored"], _grid(rows, sets, penalties)


def _inputs(args: argparse.Namespace) -> tuple[list[dict[str, Any]], dict[str, np.ndarray] | None]:
    """The check's scored training runs and the extra answers' states (the first ``--extra-limit``)."""
    from eval.runner import read_records

    runs = [as_given(r, "short") for r in read_records(args.runs) if r.get("answerability")]
    extra_states = read_hidden(args.extra) if args.extra is not None and args.extra.is_file() else None
    if extra_states is not None and getattr(args, "extra_limit", None) is not None:
        extra_states = first_extra(extra_states, args.extra_limit)
    return runs, extra_states


def write_cross_fit(path: Path, scored: Sequence[Mapping[str, Any]], scores: Sequence[float]) -> None:
    """Each answer's out-of-fold score, the ``answer_probe`` feature ``training.answerability fit`` reads."""
    from components.storage import atomic_write_text

    atomic_write_text(path, "".join(
        json.dumps({"id": r["id"], "dataset": r["dataset"], "fold": i % FOLDS, "answer_probe": float(s)}) + "\n"
        for i, (r, s) in enumerate(zip(scored, scores, strict=True))))


def layers_command(args: argparse.Namespace) -> int:
    runs, extra_states = _inputs(args)
    sets = [[int(v) for v in text.split(",")] for text in args.sets]
    scored, grid = layer_sets(runs, read_hidden(args.hidden), sets, args.penalties, extra_states)
    print(f"out-of-fold AUROC ({len(scored)} answers; extra answers: {'yes' if extra_states is not None else 'none'})")
    print("layers | " + " | ".join(f"L2 {p:g}" for p in args.penalties))
    for chosen in sets:
        print(",".join(map(str, chosen)) + " | " + " | ".join(f"{grid[(tuple(chosen), p)]['auroc']:.3f}" for p in args.penalties))
    if args.cross_fit_out is not None:
        best = best_of(grid)
        write_cross_fit(args.cross_fit_out, scored, grid[best]["scores"])
        print(f"the best, layers {','.join(map(str, best[0]))} at L2 {best[1]:g}: its out-of-fold scores in {args.cross_fit_out}")
    return 0


ANSWERABLE = "answerable_probe"
"""The measured feature of :func:`answerable_command`: a probe's probability that the question is answerable."""


def answerable_scores(scored: Sequence[Mapping[str, Any]], states: np.ndarray, l2: float) -> np.ndarray:
    """Each answer's probability that its question is answerable, from a probe of ``states`` (answers
    × values) fit on SQuAD's gold labels: a SQuAD answer's from a probe fit without its fold (the
    check's folds, by position), any other's from the probe fit on every SQuAD answer, which never
    saw it. HotpotQA's questions are all answerable, so fit on them a probe would learn the dataset."""
    squad = [i for i, r in enumerate(scored) if r["dataset"] == "squad"]
    if not squad:
        raise SystemExit("no SQuAD answers among them: nothing to learn 'answerable' from")
    labels = [int(bool(scored[i]["answerable"])) for i in squad]
    features = hidden_features(states.shape[1])
    scores = np.zeros(len(scored))
    for fold in range(FOLDS):
        train = [k for k, i in enumerate(squad) if i % FOLDS != fold]
        probe = fit_probe(states[[squad[k] for k in train]], [labels[k] for k in train], features, l2=l2,
                          metadata={"model": "cv", "layer": 0})
        for i in squad:
            if i % FOLDS == fold:
                scores[i] = probe.score_hidden(states[i])
    probe = fit_probe(states[squad], labels, features, l2=l2, metadata={"model": "all", "layer": 0})
    for i, r in enumerate(scored):
        if r["dataset"] != "squad":
            scores[i] = probe.score_hidden(states[i])
    return scores


def answerable_command(args: argparse.Namespace) -> int:
    """Measured, not shipped (session 46): whether a probe of *answerable* (SQuAD's gold labels) adds
    to the shipped check, which already reads a probe of *right*. For each layer set and penalty: the
    probe's out-of-fold AUROC on SQuAD, then the check's features with and without it, refit out of
    fold, and what ``training.answerability fit``'s rule makes of each (thresholds per question type,
    SQuAD and HotpotQA train F1, and the mean over its held-out halvings)."""
    import training.answerability as check
    from components.answerability import AnswerabilityModel
    from components.logistic import fit_logistic
    from components.question_type import QuestionTypeModel
    from eval.runner import read_records

    runs = check.default_inputs([as_given(r, "short") for r in read_records(args.runs) if r.get("answerability")])
    readings = check.read_question_types(check.QUESTION_TYPE_CROSS_FIT, QuestionTypeModel.load().threshold)
    rows = _rows(runs, read_hidden(args.hidden), None)
    features = list(AnswerabilityModel.load().features)
    position = {r["id"]: i for i, r in enumerate(rows["scored"])}
    # the answers both candidates score: a reading of their state and every feature of the shipped check
    answers = [r for r in check.having(check.checked(runs), features) if r["id"] in position]
    at = {id(r): i for i, r in enumerate(runs)}
    on_squad = [i for i, r in enumerate(answers) if r["dataset"] == "squad"]

    def judged(name: str, with_features: Sequence[str]) -> None:
        oof = check.out_of_fold(answers, with_features, 1.0, fit_logistic)
        scores = {at[id(r)]: float(s) for r, s in zip(answers, oof, strict=True)}
        bounds = (check.MAX_HOTPOT_LOSS, check.MAX_ANSWERABLE_LOSS)
        chosen = check.choose_by_type(runs, scores, *bounds, readings)
        halves = check.rule_held_out(runs, scores, *bounds, readings, halves=args.halves)
        right = [is_right(r) for r in answers]
        print(f"| {name} | {auroc(list(oof), right):.3f} | "
              f"{auroc([oof[i] for i in on_squad], [right[i] for i in on_squad]):.3f} | "
              f"{chosen['threshold']:.3f} / {chosen['threshold_multi_hop']:.3f} | {chosen['squad_f1']:.1f} | "
              f"{chosen['squad_answerable_f1']:.1f} | {chosen['hotpotqa_f1']:.1f} | {halves['mean_squad_f1']:.1f} | "
              f"{halves['mean_hotpotqa_loss']:.2f} |")

    print(f"{len(answers)} answers scored by the shipped check's features with a reading of their state "
          f"({len(on_squad)} SQuAD); the rule's bounds: HotpotQA loss {check.MAX_HOTPOT_LOSS:g}, SQuAD answerable loss "
          f"{check.MAX_ANSWERABLE_LOSS:g}; {args.halves} halvings\n")
    print("| check | AUROC (right) | SQuAD AUROC | thresholds (single / multi-hop) | SQuAD F1 | answerable F1 | "
          "HotpotQA F1 | halves: SQuAD F1 | halves: HotpotQA loss |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    judged("shipped features", features)
    layers = rows["layers"]
    for text in args.sets:
        chosen_layers = [int(v) for v in text.split(",")]
        missing = [layer for layer in chosen_layers if layer not in layers]
        if missing:
            raise SystemExit(f"the states hold layers {layers}, not {missing}")
        cut = rows["states"][:, [layers.index(layer) for layer in chosen_layers], :].reshape(len(rows["states"]), -1)
        states = cut[[position[r["id"]] for r in answers]]
        for l2 in args.penalties:
            probe = answerable_scores(answers, states, l2)
            for r, p in zip(answers, probe, strict=True):
                r["answerability"]["features"][ANSWERABLE] = float(p)
            alone = auroc([probe[i] for i in on_squad], [bool(answers[i]["answerable"]) for i in on_squad])
            judged(f"+ answerable probe, layers {text}, L2 {l2:g} (its SQuAD AUROC for answerable: {alone:.3f})",
                   [*features, ANSWERABLE])
    return 0


def report(result: Mapping[str, Any], runs_file: Path, hidden_file: Path) -> str:
    grid = result["grid"]
    penalties = sorted({l2 for _, l2 in grid})
    layers = sorted({layer for layer, _ in grid})
    scored = result["scored"]
    by_dataset = {d: [i for i, r in enumerate(scored) if r["dataset"] == d] for d in sorted({r["dataset"] for r in scored})}
    oof = result["cross_fit"]
    labels = result["labels"]
    lines = [
        "# The answer probe, fit on the train splits", "",
        f"Written by `python -m training.answer_probe fit` from the hidden states of {len(scored)} answers the "
        f"check scores (of {result['runs']} in `{shown_path(runs_file)}`), read at each answer's first token by "
        f"`python -m training.answer_probe run` (`{shown_path(hidden_file)}`, not committed). "
        f"{result['changed']} answers came out differently when answered again (another machine's rounding turns a "
        "greedy near-tie the other way): their states are another answer's, so they are left out here, have no "
        "cross-fitted score, and a check fit with the probe leaves them unscored, as it leaves an answer with no "
        "reading.", "",
        *([f"Every fold's probe, and the shipped one, also learn from {result['extra']} extra answers to train questions "
           f"the check is not fit on ({', '.join(result['extra_sets'])}; {result['extra_right']} right), recorded by "
           f"`python -m training.answer_probe extra` (`{shown_path(EXTRA_FILE)}`, not committed); they get no score of "
           "their own, and the AUROC below is of the check's answers only.", ""] if result.get("extra") else []),
        f"An answer is *right* when its question is answerable and its token F1 is at least {CORRECT_F1} "
        f"({sum(labels)} of {len(labels)}). Out-of-fold AUROC of a logistic probe on one layer's output "
        "(the check's five folds, by position), by layer and L2 penalty (standardised values):", "",
        "| layer | " + " | ".join(f"L2 {p:g}" for p in penalties) + " |",
        "| --- | " + " | ".join("---" for _ in penalties) + " |",
    ]
    for layer in layers:
        lines.append(f"| {layer} | " + " | ".join(f"{grid[(layer, p)]['auroc']:.3f}" for p in penalties) + " |")
    lines += ["", f"**Chosen: layer {result['layer']}, L2 {result['l2']:g}** (the best out-of-fold AUROC; the choice "
              "itself is made on these folds, so the figure is a little optimistic). Its out-of-fold AUROC by dataset: "
              + ", ".join(f"{d} {auroc([oof[i] for i in idx], [bool(labels[i]) for i in idx]):.3f} ({len(idx)} answers)"
                          for d, idx in by_dataset.items()) + ".", "",
              f"Each answer's out-of-fold score is in `{shown_path(CROSS_FIT)}`, the `answer_probe` feature that "
              "`python -m training.answerability fit --answer-probe-scores` reads; the probe fit on all of them is "
              f"`{shown_path(DEFAULT_PROBE)}`.", ""]
    return "\n".join(lines)


def fit_command(args: argparse.Namespace) -> int:
    from components.storage import atomic_write_text

    start = time.perf_counter()
    runs, extra_states = _inputs(args)
    result = fit(runs, read_hidden(args.hidden), args.penalties, extra_states)
    result["probe"].save(args.probe_out)
    write_cross_fit(args.cross_fit, result["scored"], result["cross_fit"])
    args.report.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.report / "README.md", report(result, args.runs, args.hidden))
    print(json.dumps({"layer": result["layer"], "l2": result["l2"], "answers": len(result["scored"]),
                      "auroc": {f"{layer}/{l2:g}": round(c["auroc"], 4) for (layer, l2), c in result["grid"].items()},
                      "fit_s": round(time.perf_counter() - start, 1)}, indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run", help="answer the check's training questions again, keeping hidden states")
    run_parser.add_argument("--layers", type=int, nargs="+", default=list(LAYERS), help=f"layers to keep (default {LAYERS})")
    run_parser.add_argument("--model", default=None, help="generator preset (default: the default model)")
    run_parser.add_argument("--data-dir", default=None, help="benchmark data folder (default: ../shared/data)")
    record_parser = sub.add_parser("record", help="answer the check's training questions once, recording both what the "
                                                   "check reads and the hidden states")
    record_parser.add_argument("--out", type=Path, required=True, help="the records (JSONL), as training.answerability run's")
    record_parser.add_argument("--hidden", type=Path, required=True,
                               help=f"the hidden states (.npz; not {shown_path(HIDDEN_FILE)}, which is run's)")
    record_parser.add_argument("--cross-fit-reranker", action="store_true",
                               help="rank each SQuAD 2.0 question's evidence by the learned reranker fit without its article")
    record_parser.add_argument("--reranker", default=None,
                               help="another reranker for every question (a name load_reranker knows; default: each "
                                    "corpus's own, eval.corpora.RERANKERS)")
    record_parser.add_argument("--layers", type=int, nargs="+", default=list(LAYERS), help=f"layers to keep (default {LAYERS})")
    record_parser.add_argument("--model", default=None, help="generator preset (default: the default model)")
    record_parser.add_argument("--data-dir", default=None, help="benchmark data folder (default: ../shared/data)")
    extra_parser = sub.add_parser("extra", help="answer more train questions, keeping hidden states, for the probe only")
    extra_parser.add_argument("--sets", nargs="+", default=list(EXTRA_SETS),
                              help=f"train questions per dataset, name=count (default: {' '.join(EXTRA_SETS)})")
    extra_parser.add_argument("--layers", type=int, nargs="+", default=list(LAYERS), help=f"layers to keep (default {LAYERS})")
    extra_parser.add_argument("--model", default=None, help="generator preset (default: the default model)")
    extra_parser.add_argument("--data-dir", default=None, help="benchmark data folder (default: ../shared/data)")
    fit_parser = sub.add_parser("fit", help="choose the layer and penalty, write the probe and cross-fitted scores")
    fit_parser.add_argument("--penalties", type=float, nargs="+", default=list(PENALTIES))
    fit_parser.add_argument("--probe-out", type=Path, default=DEFAULT_PROBE)
    fit_parser.add_argument("--cross-fit", type=Path, default=CROSS_FIT)
    fit_parser.add_argument("--report", type=Path, default=REPORT_DIR)
    fit_parser.add_argument("--extra-limit", type=int, default=None,
                            help="learn from the first N extra questions only (default: all of them), for a learning curve")
    layers_parser = sub.add_parser("layers", help="out-of-fold AUROC of probes on several layers read together")
    layers_parser.add_argument("--sets", nargs="+", default=["20", "16,20", "20,24", "16,20,24"],
                               help="layer sets, each comma-separated (default: 20 16,20 20,24 16,20,24)")
    layers_parser.add_argument("--penalties", type=float, nargs="+", default=[300.0, 1000.0, 3000.0])
    layers_parser.add_argument("--cross-fit-out", type=Path, default=None,
                               help="write the best set's out-of-fold scores here, for training.answerability fit "
                                    "--answer-probe-scores (default: none)")
    answerable_parser = sub.add_parser("answerable", help="whether a probe of answerable questions adds to the check "
                                                           "(measured, not shipped)")
    answerable_parser.add_argument("--sets", nargs="+", default=["16", "20"],
                                   help="layer sets, each comma-separated (default: 16 20)")
    answerable_parser.add_argument("--penalties", type=float, nargs="+", default=[30.0, 100.0, 300.0])
    answerable_parser.add_argument("--halves", type=int, default=30, help="held-out halvings of the rule (default 30)")
    for p in (run_parser, record_parser, extra_parser, fit_parser, layers_parser, answerable_parser):
        p.add_argument("--runs", type=Path, default=RUNS_FILE,
                       help=f"the check's training runs (default: {shown_path(RUNS_FILE)})")
        if p is not record_parser:
            p.add_argument("--hidden", type=Path, default=HIDDEN_FILE,
                           help=f"the hidden states (default: {shown_path(HIDDEN_FILE)})")
    for p in (extra_parser, fit_parser, layers_parser):
        p.add_argument("--extra", type=lambda v: None if v == "none" else Path(v), default=EXTRA_FILE,
                       help=f"the extra answers' states (default: {shown_path(EXTRA_FILE)}, used when it exists; none: "
                            "fit on the check's answers only)")
    args = parser.parse_args(argv)
    commands = {"run": run, "record": record, "extra": extra, "fit": fit_command, "layers": layers_command,
                "answerable": answerable_command}
    return commands[args.command](args)


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
