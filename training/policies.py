"""Fitting the routing policies on the train splits: the retrieve-or-not gate and the lazy threshold.

    python -m training.policies run        # answer the training questions every way (resumable)
    python -m training.policies fit        # components/retrieval_gate.json, docs/policies/README.md

``run`` answers each training question (SQuAD 2.0 train articles and HotpotQA train, interleaved)
through the compiled graph, each from the same warm state:

* closed book (the ``no-retrieval`` row) and the k = 5 baseline (reused from
  ``training/labels/cascade_runs.jsonl`` when that run answered the question), for the gate;
* the lazy policy with a threshold that never accepts, so one pass records the summary answer
  (and its confidence signals) and the answer after the top passages were appended;
* the self-route policy as it ships (its choice is the model's own: nothing to fit), for the
  record;

and keeps the question's retrieval-probe features (:func:`components.retrieval_gate.probe`)
and embedding. One JSON line per question is appended as soon as it is done.

``fit`` then, with no model run:

* labels a question "closed book is enough" when the closed-book answer's F1 is at least the
  baseline's (the cost-aware rule: spending retrieval on a question it does not help is waste),
  fits the gate (a logistic regression on the probe features, with and without the embedding,
  compared by 5-fold cross-validation), and picks the threshold on out-of-fold probabilities: the
  most closed-book answers whose train F1 stays within ``--max-f1-loss`` of always retrieving;
* replays the lazy policy for every confidence signal and threshold (the signal's quantiles on
  the training answers) and picks the cheapest whose train F1 stays within ``--max-f1-loss`` of the
  baseline's; the README reports every signal's AUROC and the chosen threshold, which
  ``pipeline.configuration.PipelineConfig.lazy_threshold`` ships.

Nothing here looks at a dev question.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from components.retrieval_gate import DEFAULT_GATE, PROBE_FEATURES, RetrievalGate, probe
from components.logistic import fit_logistic
from pipeline.configuration import CONFIDENCE_SIGNALS, PipelineConfig
from training.cascade import answer_figures, auroc, scored_steps
from training.labelling import TrainingSet, record_answers, run_fit_parser, sets_text

SETS = (TrainingSet("squad", "train", 60), TrainingSet("hotpotqa", "train", 60))
RUNS_FILE = Path(__file__).resolve().parent / "labels" / "policy_runs.jsonl"
CASCADE_RUNS = Path(__file__).resolve().parent / "labels" / "cascade_runs.jsonl"
REPORT_DIR = Path(__file__).resolve().parent.parent / "docs" / "policies"
def lazy_never():
    """The lazy policy never accepting its summary answer and finishing it: one pass records the
    summary answer and the answer from the top passages."""
    from eval.systems import System

    return System("lazy-never", "lazy, never accepting the summary answer",
                  PipelineConfig(policy="lazy", lazy_threshold=1e9, stop_early=False))


def answer_question(ctx, example, baseline: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Every way of answering one training question that the fit needs."""
    from eval.runner import run_one
    from eval.systems import all_systems

    systems = all_systems()
    embedding = ctx.embedder.embed_query(example.question)
    out: dict[str, Any] = {
        "id": example.id, "dataset": example.dataset, "question": example.question,
        "answerable": example.answerable, "gold_answers": list(example.answers),
        "probe": probe(ctx.index, embedding),
        "embedding": [round(float(v), 6) for v in embedding],
    }
    out["closed_book"] = answer_figures(run_one(ctx, systems["no-retrieval"], example))
    out["baseline"] = dict(baseline) if baseline else answer_figures(run_one(ctx, systems["baseline"], example))
    out["lazy"] = scored_steps(run_one(ctx, lazy_never(), example), example)
    route = run_one(ctx, systems["self-route"], example)
    out["self_route"] = {**answer_figures(route), "choice": route.get("self_route", {}).get("choice")}
    return out


def read_runs(path: Path) -> list[dict[str, Any]]:
    from eval.runner import read_records

    return read_records(path)


def run(args) -> int:
    recorded = {(r["dataset"], r["id"]): r["baseline"].get("question_first") for r in read_runs(CASCADE_RUNS)}
    # no gate while recording: the gate is what this run's answers are for
    return record_answers(args, SETS, lambda ctx, example: answer_question(
        ctx, example, recorded.get((example.dataset, example.id))), retrieval_gate=None)


# ---- fitting, from the recorded runs only ----

def gate_label(run: Mapping[str, Any]) -> int:
    """1 when closed book is enough: its F1 is at least the baseline's."""
    return int(run["closed_book"]["f1"] >= run["baseline"]["f1"])


def gate_rows(runs: Sequence[Mapping[str, Any]], features: Sequence[str]) -> list[list[float]]:
    return [[float(r["probe"][f]) if f in r["probe"] else float(r["embedding"][int(f[1:])]) for f in features]
            for r in runs]


def out_of_fold(runs: Sequence[Mapping[str, Any]], features: Sequence[str], folds: int = 5, l2: float = 1.0) -> np.ndarray:
    """Each question's gate probability from a model fit on the other folds (deterministic folds)."""
    rows = gate_rows(runs, features)
    labels = [gate_label(r) for r in runs]
    scores = np.zeros(len(runs))
    for k in range(folds):
        test = [i for i in range(len(runs)) if i % folds == k]
        train = [i for i in range(len(runs)) if i % folds != k]
        if len({labels[i] for i in train}) < 2:
            scores[test] = float(np.mean([labels[i] for i in train]))
            continue
        model = fit_logistic([rows[i] for i in train], [labels[i] for i in train], features, l2=l2, model=RetrievalGate)
        scores[test] = [model.score(dict(zip(features, rows[i], strict=True))) for i in test]
    return scores


def gate_sweep(runs: Sequence[Mapping[str, Any]], scores: Sequence[float]) -> list[dict[str, float]]:
    """Train F1, closed-book share and modelled latency at each candidate threshold."""
    rows = []
    for threshold in sorted({0.0, 1.0 + 1e-9, *(float(s) for s in scores)}):
        closed = [s >= threshold for s in scores]
        f1 = np.mean([r["closed_book"]["f1"] if c else r["baseline"]["f1"] for r, c in zip(runs, closed, strict=True)])
        ms = np.mean([r["closed_book"]["latency_ms"] if c else r["baseline"]["latency_ms"]
                      for r, c in zip(runs, closed, strict=True)])
        rows.append({"threshold": threshold, "f1": 100 * float(f1), "closed_book": 100 * float(np.mean(closed)),
                     "latency_ms": float(ms)})
    return rows


def lazy_replay(runs: Sequence[Mapping[str, Any]], signal: str, threshold: float) -> dict[str, float]:
    """The lazy policy replayed on the recorded steps: accept the summary answer when its signal
    reaches the threshold (an abstention never does), else take the extended answer."""
    f1 = evaluated = ms = extended = 0.0
    for r in runs:
        first, last = r["lazy"][0], r["lazy"][-1]
        value = first["confidence"].get(signal)
        accept = not first["abstained"] and value is not None and value >= threshold
        step_list = [first] if accept else r["lazy"]
        f1 += (first if accept else last)["f1"]
        evaluated += sum(s["prompt_tokens_evaluated"] or 0 for s in step_list)
        ms += sum(s["generate_ms"] or 0 for s in step_list)
        extended += not accept
    n = max(len(runs), 1)
    return {"f1": 100 * f1 / n, "evaluated": evaluated / n, "generate_ms": ms / n, "extended": 100 * extended / n}


def fit(args) -> int:
    from components.storage import atomic_write_text

    runs = [r for r in read_runs(args.out) if r.get("lazy")]
    if len(runs) < 10:
        raise SystemExit(f"{len(runs)} recorded questions in {args.out}: run `python -m training.policies run` first")
    base_f1 = 100 * float(np.mean([r["baseline"]["f1"] for r in runs]))
    closed_f1 = 100 * float(np.mean([r["closed_book"]["f1"] for r in runs]))
    labels = [gate_label(r) for r in runs]

    # the gate: probe features alone, and with the embedding, compared out of fold
    dim = len(runs[0]["embedding"])
    candidates = {"probe": list(PROBE_FEATURES), "probe+embedding": [*PROBE_FEATURES, *(f"q{i}" for i in range(dim))]}
    compared = {}
    for name, features in candidates.items():
        scores = out_of_fold(runs, features, l2=args.l2)
        sweep = gate_sweep(runs, scores)
        within = [row for row in sweep if row["f1"] >= base_f1 - args.max_f1_loss]
        best = max(within, key=lambda row: (row["closed_book"], row["f1"]))
        compared[name] = {"auroc": auroc(scores.tolist(), [bool(y) for y in labels]), "chosen": best, "sweep": sweep}
    name = max(compared, key=lambda n: (compared[n]["chosen"]["closed_book"], compared[n]["auroc"]))
    features = candidates[name]
    chosen = compared[name]["chosen"]
    gate = fit_logistic(gate_rows(runs, features), labels, features, l2=args.l2, model=RetrievalGate, metadata={
        "threshold": chosen["threshold"], "features_set": name, "trained_on": sets_text(runs),
        "questions": len(runs), "label": "closed-book F1 >= baseline F1", "positives": int(sum(labels)),
        "cv_auroc": compared[name]["auroc"], "train_f1_at_threshold": chosen["f1"],
        "train_closed_book_share": chosen["closed_book"], "max_f1_loss": args.max_f1_loss,
        "fitted_by": "python -m training.policies fit"})
    gate.save(args.gate)

    # lazy: every signal, every threshold among the signal's quantiles
    lazy_rows = []
    for signal in CONFIDENCE_SIGNALS:
        values = sorted({r["lazy"][0]["confidence"].get(signal) for r in runs if not r["lazy"][0]["abstained"]
                         and r["lazy"][0]["confidence"].get(signal) is not None})
        right = [r["lazy"][0]["f1"] >= 0.5 for r in runs]
        signal_auroc = auroc([r["lazy"][0]["confidence"].get(signal) if not r["lazy"][0]["abstained"] else -1e9
                              for r in runs], right)
        for threshold in [*np.quantile(values, np.linspace(0, 1, 21)).tolist(), math.inf] if values else [math.inf]:
            lazy_rows.append({"signal": signal, "threshold": threshold, "auroc": signal_auroc,
                              **lazy_replay(runs, signal, threshold)})
    within = [row for row in lazy_rows if row["f1"] >= base_f1 - args.max_f1_loss]
    lazy = min(within, key=lambda row: (row["evaluated"], -row["f1"])) if within else max(lazy_rows, key=lambda r: r["f1"])

    choices: dict[str, list[float]] = {}
    for r in runs:
        choices.setdefault(r["self_route"]["choice"] or "none", []).append(r["self_route"]["f1"])
    report = _report(runs, base_f1, closed_f1, compared, name, gate, lazy_rows, lazy, choices, args)
    REPORT_DIR.mkdir(parents=True, exist_ok=True)
    atomic_write_text(REPORT_DIR / "README.md", report)
    atomic_write_text(REPORT_DIR / "fit.json", json.dumps({"gate": {k: v for k, v in compared[name].items() if k != "sweep"},
                                                            "lazy": lazy, "baseline_f1": base_f1}, indent=2) + "\n")
    print(f"gate: {name}, threshold {chosen['threshold']:.4f}, closed book {chosen['closed_book']:.1f}% "
          f"(train F1 {chosen['f1']:.1f} vs baseline {base_f1:.1f}); lazy: {lazy['signal']} >= {lazy['threshold']!r} "
          f"(train F1 {lazy['f1']:.1f}, {lazy['extended']:.0f}% extended)")
    return 0


def _report(runs, base_f1, closed_f1, compared, name, gate, lazy_rows, lazy, choices, args) -> str:
    chosen = compared[name]["chosen"]
    lines = [
        "# The routing policies, fit on the train splits",
        "",
        "Written by `python -m training.policies fit` from the answers `python -m training.policies run` recorded "
        f"({sets_text(runs)}; {len(runs)} questions, each from the same warm state). No dev question is used.",
        "",
        f"Train F1: k = 5 baseline {base_f1:.1f}, closed book {closed_f1:.1f}. "
        f"Closed book is enough (F1 at least the baseline's) on {sum(gate_label(r) for r in runs)} of {len(runs)} questions.",
        "",
        "## retrieve-or-not: the gate",
        "",
        "A logistic regression on retrieval-probe features (top-10 cosines as drops from the best, the gap, their mean, "
        "the share of the top 10 from the best hit's document), alone and with the question's embedding, compared by "
        "5-fold cross-validation. The threshold gives the most closed-book answers whose out-of-fold train F1 stays "
        f"within {args.max_f1_loss} of always retrieving.",
        "",
        "| features | out-of-fold AUROC | threshold | closed book | train F1 | latency (ms, recorded) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for key, row in compared.items():
        c = row["chosen"]
        lines.append(f"| {key}{' (shipped)' if key == name else ''} | {row['auroc']:.3f} | {c['threshold']:.4f} | "
                     f"{c['closed_book']:.1f}% | {c['f1']:.1f} | {c['latency_ms']:.0f} |")
    lines += ["", f"Shipped: `components/retrieval_gate.json` ({len(gate.features)} features, threshold "
                  f"{chosen['threshold']:.4f}).", "",
              "## lazy: the summary answer's confidence",
              "",
              "The summary answer is accepted when its signal reaches the threshold, else the top passages are appended "
              "in place and it answers again. Each signal's AUROC is for the summary answer being right (F1 >= 0.5). "
              f"Chosen: the fewest prompt tokens evaluated whose train F1 is within {args.max_f1_loss} of the baseline's.",
              "",
              "| signal | AUROC | best threshold within the F1 budget | train F1 | extended | tokens evaluated |",
              "| --- | --- | --- | --- | --- | --- |"]
    for signal in CONFIDENCE_SIGNALS:
        rows = [r for r in lazy_rows if r["signal"] == signal]
        ok = [r for r in rows if r["f1"] >= base_f1 - args.max_f1_loss]
        best = min(ok, key=lambda r: (r["evaluated"], -r["f1"])) if ok else max(rows, key=lambda r: r["f1"])
        lines.append(f"| {signal}{' (shipped)' if signal == lazy['signal'] and best is lazy else ''} | {rows[0]['auroc']:.3f} | "
                     f"{best['threshold']:.4f} | {best['f1']:.1f} | {best['extended']:.0f}% | {best['evaluated']:.0f} |")
    lines += ["", f"Shipped: `lazy_signal = \"{lazy['signal']}\"`, `lazy_threshold = {lazy['threshold']!r}`.", "",
              "## self-route: what the model chose (nothing is fit)", "",
              "| choice | questions | train F1 |", "| --- | --- | --- |"]
    for choice, f1s in sorted(choices.items()):
        lines.append(f"| {choice} | {len(f1s)} | {100 * float(np.mean(f1s)):.1f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser, run_parser, fit_parser = run_fit_parser(
        __doc__.split("\n\n")[0], RUNS_FILE, "answer the training questions every way the fit needs",
        "fit the gate and the lazy threshold from the recorded answers")
    fit_parser.add_argument("--max-f1-loss", type=float, default=1.0, help="train F1 points a policy may lose")
    fit_parser.add_argument("--l2", type=float, default=1.0, help="the gate's L2 penalty")
    fit_parser.add_argument("--gate", type=Path, default=DEFAULT_GATE, help=f"where the gate goes (default: {DEFAULT_GATE})")
    args = parser.parse_args(argv)
    return run(args) if args.command == "run" else fit(args)


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
