"""Fitting the answer probe of the default generator on the train splits.

    python -m training.answer_probe run    # answer the check's training questions again, keeping hidden states (resumable)
    python -m training.answer_probe fit    # choose the layer and penalty, write the probe and its cross-fitted scores

``run`` answers every question of the answerability check's training runs
(:data:`training.answerability.RUNS_FILE`: SQuAD 2.0 train articles and HotpotQA train) again
through the compiled graph, with the same cascade and the check left out (it comes after the
answer, so the answers are the same), and keeps the output of the layers :data:`LAYERS` at the
first token of each final answer. It checks that every answer is the recorded one: the hidden states
belong to the answers the check is fit on. The states go to an ``.npz`` file of arrays (no pickle)
under ``runs/``: 17 MB that ``run`` remakes, so they are not committed.

``fit`` then, with no model run, on the answers the check scores (``training.answerability.checked``):

* the out-of-fold AUROC for "the answer is right" of a logistic probe on each layer, at each L2
  penalty of :data:`PENALTIES`, in the check's own five folds (by position);
* the best layer and penalty give each answer its out-of-fold score (:data:`CROSS_FIT`, the feature
  ``training.answerability fit --answer-probe-scores`` reads, as the sufficiency scorer's
  cross-fitted scores are read) and, fit on all of them, the shipped probe
  (``components/answer_probe.json``), with the report in ``docs/answer_probe/``.

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
REPORT_DIR = ROOT / "docs" / "answer_probe"
LAYERS = (8, 12, 16, 20, 24)
"""The layers ``run`` keeps (of the default model's 28): the middle of the stack, where the states
tell right answers from wrong ones best."""
PENALTIES = (30.0, 100.0, 300.0, 1000.0)
"""The L2 penalties ``fit`` tries (on standardised values; 1,536 of them against a few hundred answers)."""
SAVE_EVERY = 20


class HiddenRecorder(BaseCallbackHandler):
    """A LangChain callback handler that keeps the hidden states of the latest reply that has them."""

    def __init__(self) -> None:
        self.latest: Mapping[int, Sequence[float]] | None = None

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        message = getattr(response.generations[0][0], "message", None)
        hidden = (getattr(message, "response_metadata", None) or {}).get("hidden_states")
        if hidden:
            self.latest = hidden


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


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from eval.contexts import load_contexts
    from eval.datasets import load
    from eval.runner import read_records, run_one
    from eval.systems import System
    from pipeline.configuration import PipelineConfig

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
    generator = next(iter(contexts.values())).generator
    generator.hidden_layers = layers
    recorder = HiddenRecorder()
    generator.callbacks = [recorder]
    width = generator.hidden_size
    model = Path(generator.model_path).name
    system = System("cascade", "the shipped cascade, as the check's training run answered", PipelineConfig(abstain_threshold=0.0))

    def save() -> None:
        _save(args.hidden, {"ids": np.array(ids), "layers": np.array(layers), "states": np.array(states, dtype=np.float32),
                            "same": np.array(same), "model": np.array(model)})

    with tqdm(total=len(todo), unit="question", file=sys.stderr, mininterval=5.0) as bar:
        for n, recorded in enumerate(todo, 1):
            recorder.latest = None
            record = run_one(contexts[(recorded["dataset"], "train")], system, examples[recorded["id"]])
            hidden = recorder.latest or {}
            states.append([hidden.get(layer, [np.nan] * width) for layer in layers])
            ids.append(recorded["id"])
            same.append(as_written(record) == as_written(recorded))
            if n % SAVE_EVERY == 0 or n == len(todo):
                save()
            bar.update(1)
    print(f"{sum(same)} of {len(same)} answers are the recorded ones", file=sys.stderr)
    return 0


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


def out_of_fold(x: np.ndarray, labels: Sequence[int], l2: float) -> np.ndarray:
    """Each row's probe score from a probe fit without its fold (the check's folds: by position)."""
    features = hidden_features(x.shape[1])
    scores = np.zeros(len(x))
    for fold in range(FOLDS):
        train = [i for i in range(len(x)) if i % FOLDS != fold]
        probe = fit_probe(x[train], [labels[i] for i in train], features, l2=l2, metadata={"model": "cv", "layer": 0})
        for i in range(fold, len(x), FOLDS):
            scores[i] = probe.score_hidden(x[i])
    return scores


def fit(runs: Sequence[Mapping[str, Any]], hidden: Mapping[str, np.ndarray], penalties: Sequence[float]) -> dict[str, Any]:
    scored, states, changed = probe_rows(runs, hidden)
    labels = [int(is_right(r)) for r in scored]
    layers = [int(v) for v in hidden["layers"]]
    grid: dict[tuple[int, float], dict[str, Any]] = {}
    for j, layer in enumerate(layers):
        for l2 in penalties:
            oof = out_of_fold(states[:, j, :], labels, l2)
            grid[(layer, l2)] = {"auroc": auroc(list(oof), [bool(v) for v in labels]), "scores": oof}
    layer, l2 = max(grid, key=lambda key: (round(grid[key]["auroc"], 9), -key[1]))
    j = layers.index(layer)
    probe = fit_probe(states[:, j, :], labels, hidden_features(states.shape[2]), l2=l2, metadata={
        "model": str(hidden["model"]), "layer": layer, "l2": l2, "cv_auroc": grid[(layer, l2)]["auroc"],
        "fit_on": sorted({f"{r['dataset']} train" for r in scored}), "answers": len(scored),
        "label": f"answerable and token F1 >= {CORRECT_F1}", "command": "python -m training.answer_probe fit"})
    return {"scored": scored, "labels": labels, "grid": grid, "layer": layer, "l2": l2, "probe": probe,
            "cross_fit": grid[(layer, l2)]["scores"], "runs": len(runs), "changed": changed}


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
    from eval.runner import read_records

    runs = [as_given(r, "short") for r in read_records(args.runs) if r.get("answerability")]
    start = time.perf_counter()
    result = fit(runs, read_hidden(args.hidden), args.penalties)
    result["probe"].save(args.probe_out)
    atomic_write_text(args.cross_fit, "".join(
        json.dumps({"id": r["id"], "dataset": r["dataset"], "fold": i % FOLDS, "answer_probe": float(s)}) + "\n"
        for i, (r, s) in enumerate(zip(result["scored"], result["cross_fit"], strict=True))))
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
    fit_parser = sub.add_parser("fit", help="choose the layer and penalty, write the probe and cross-fitted scores")
    fit_parser.add_argument("--penalties", type=float, nargs="+", default=list(PENALTIES))
    fit_parser.add_argument("--probe-out", type=Path, default=DEFAULT_PROBE)
    fit_parser.add_argument("--cross-fit", type=Path, default=CROSS_FIT)
    fit_parser.add_argument("--report", type=Path, default=REPORT_DIR)
    for p in (run_parser, fit_parser):
        p.add_argument("--runs", type=Path, default=RUNS_FILE,
                       help=f"the check's training runs (default: {shown_path(RUNS_FILE)})")
        p.add_argument("--hidden", type=Path, default=HIDDEN_FILE,
                       help=f"the hidden states (default: {shown_path(HIDDEN_FILE)})")
    args = parser.parse_args(argv)
    return run(args) if args.command == "run" else fit_command(args)


if __name__ == "__main__":
    sys.exit(main())
