"""Whether the answerability check should extend the evidence before it abstains, decided on the train splits.

    python -m training.extend_check run   # answer the check's training questions at every tier of their ladder (resumable)
    python -m training.extend_check fit   # replay both ways at every threshold, write docs/answerability/extend/

``PipelineConfig.extend_before_abstaining`` lets the check send a confident answer it would withhold
up the cascade's ladder, as the cascade sends an unsure one: the question is answered again with
more evidence (appended in place, so only the new tokens are evaluated) and checked again, and
abstains only once the ladder is spent. Whether that beats abstaining at once is an empirical question:
the extended answers may be right more often, or the check may withhold them too.

``run`` answers every question of the check's training runs (:data:`training.answerability.RUNS_FILE`:
SQuAD 2.0 train articles and HotpotQA train) through the shipped cascade told never to accept below
the top of its ladder (and to finish every answer): one pass records the answer the cascade gives at
each tier it could reach. For each answer it keeps the check's free features, computed as
``check_answer`` computes them from that step's evidence, whether the cascade's confidence signal
accepts it, its cost, and the generator's output at the answer probe's layer at its first token. The
first answer is the one the check was fit on (``same`` says whether it came out word for word here).
One JSON line per question under ``runs/`` (the hidden states make it ~30 MB, so it is not committed).

``fit`` then, with no model run, in five folds of the questions (by position, as the check's fit): a
probe on the fold's other first answers (the shipped probe's layer and penalty) scores every answer of
the fold's questions; a check with the shipped check's features, fit on the other folds' first answers,
scores them. It replays the cascade's path both ways at each threshold:

* ``abstain``: the answer the cascade accepts (the first its confidence accepts, else the top one) is
  given or withheld, as the shipped graph does with ``extend_before_abstaining`` off;
* ``extend``: an accepted answer below the threshold goes up the ladder while a tier is left, and
  only the last one is withheld;
* ``extend multi-hop``: so only for a question the cascade started at its multi-hop tier (the
  question-type model read it as multi-hop, so a second document may be what it lacks).

Each way's threshold is chosen by the check's rule (the best SQuAD 2.0 train F1 that loses at most
``--max-hotpot-loss`` HotpotQA train F1 points to never abstaining on the cascade's answers), and the
report gives both ways' F1, abstentions and prompt tokens evaluated per question. Nothing here looks at
a dev question.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from eval.abstention import KNOB, abstention_f1, is_right
from pipeline.configuration import PipelineConfig
from training.answerability import FOLDS, GROUPS, best_pair, choose
from training.cascade import shown_path

ROOT = Path(__file__).resolve().parent.parent
STEPS_FILE = ROOT / "runs" / "extend_check" / "steps.jsonl"
REPORT_DIR = ROOT / "docs" / "answerability" / "extend"
MAX_THRESHOLD = 0.6
"""The thresholds replayed: every score up to this (the check's own rule has chosen 0.04 to 0.41)."""


def recording_system():
    """The shipped cascade, never accepting below the top of its ladder, every answer finished, unchecked."""
    from eval.systems import System

    return System("cascade-every-tier", "the shipped cascade, answering at every tier of its ladder",
                  PipelineConfig(abstain_threshold=0.0, accept_threshold=2.0, stop_early=False))


def every_step(ctx, example, layer: int, recorder) -> dict[str, Any]:
    """Answer ``example`` at every tier of its ladder; each answer's check features, cost and hidden state."""
    from components.answerability import FEATURES_VERSION
    from components.short_answer import short_answer
    from eval.metrics import exact_match, f1_score
    from eval.runner import stream_one
    from nodes.check_answer import check_features

    shipped = PipelineConfig()
    recorder.replies = []
    steps = []
    for update in stream_one(ctx, recording_system(), example):
        generated = update.get("generate")
        if not generated:
            continue
        step = generated["steps"][-1]
        answer = generated["answer"]
        features = check_features(example.question, answer, step, generated["evidence"], generated["trace"]["passages"],
                                  len(generated["steps"]) > 1)
        given = answer if step["abstained"] else short_answer(example.question, answer)
        signal = step["confidence"].get(shipped.confidence_signal)
        steps.append({
            "tier": step["tier"], "evidence_items": step["evidence_items"], "answer": answer, "given": given,
            "abstained": step["abstained"], "em": exact_match("" if step["abstained"] else given, example.answers),
            "f1": f1_score("" if step["abstained"] else given, example.answers),
            "confident": signal is None or signal >= shipped.accept_threshold,
            "features": features, "features_version": FEATURES_VERSION, "prompt_tokens": step["prompt_tokens"],
            "prompt_tokens_evaluated": step["prompt_tokens_evaluated"], "output_tokens": step["output_tokens"],
            "generate_ms": step["generate_ms"],
        })
    hidden = [(reply or {}).get(layer) for reply in recorder.replies]
    if len(hidden) != len(steps):
        raise RuntimeError(f"{len(steps)} answers but {len(hidden)} generator calls for {example.id}")
    for step, state in zip(steps, hidden, strict=True):
        step["state"] = None if state is None else [float(v) for v in state]
    return {"id": example.id, "dataset": example.dataset, "question": example.question,
            "answerable": bool(example.answers), "gold_answers": list(example.answers), "steps": steps}


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from components.answer_probe import AnswerProbe
    from eval.contexts import load_contexts
    from eval.datasets import load
    from eval.runner import read_records
    from training.answer_probe import as_written, reading
    from training.answerability import RUNS_FILE

    runs = list(read_records(args.runs or RUNS_FILE))
    done = {r["id"] for r in read_records(args.out)} if args.out.is_file() else set()
    todo = [r for r in runs if r["id"] not in done]
    print(f"{len(runs)} of the check's training questions, {len(done)} already in {args.out}", file=sys.stderr)
    if not todo:
        return 0
    layer = AnswerProbe.load().layer
    splits = list(dict.fromkeys((r["dataset"], "train") for r in runs))
    wanted = {r["id"] for r in todo}
    examples = {e.id: e for dataset, split in splits for e in load(dataset, split, args.data_dir) if e.id in wanted}
    contexts = load_contexts(splits, args.data_dir, args.model, answerability=None, answer_probe=None)
    recorder, _, model = reading(contexts, (layer,), keep_replies=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a", encoding="utf-8") as fh, tqdm(total=len(todo), unit="question", file=sys.stderr,
                                                           mininterval=5.0) as bar:
        for recorded in todo:
            record = every_step(contexts[(recorded["dataset"], "train")], examples[recorded["id"]], layer, recorder)
            record.update(model=model, layer=layer, same=bool(record["steps"])
                          and record["steps"][0]["answer"] == as_written(recorded))
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            fh.flush()
            bar.update(1)
    return 0


# ---- replaying, from the recorded steps only ----

RECORDED_VERSION = 2
"""The features version of steps that do not say theirs: ``run`` was written (session 31) after
version 2 (session 29), and recorded the version from session 38."""


def step_features(record: Mapping[str, Any], step: Mapping[str, Any]) -> dict[str, float] | None:
    """A recorded answer's features as the check computes them today
    (:func:`components.answerability.current_features`), or ``None`` for one the check does not score
    (the model abstained by itself, or the generator reported no probabilities)."""
    from components.answerability import current_features
    from prompts import ABSTENTION

    if step["abstained"] or step["features"] is None:
        return None
    return current_features(step["features"], step["answer"], ABSTENTION, step.get("features_version", RECORDED_VERSION),
                            record["question"])


def missing_features(records: Sequence[Mapping[str, Any]], check: Any) -> list[str]:
    """The features ``check`` reads that some scored recorded answer lacks (the answer probe's score
    is not read from the record: each fold's probe computes it from the recorded state)."""
    from components.answerability import ANSWER_PROBE

    wanted = set(check.features) - {ANSWER_PROBE}
    found = (step_features(r, s) for r in records for s in r["steps"])
    return sorted({name for values in found if values is not None for name in wanted - set(values)})


def cross_scores(records: Sequence[Mapping[str, Any]], check: Any, probe: Any, folds: int = FOLDS,
                 learn_from: str = "first") -> list[list[float | None]]:
    """Each recorded answer's check score (``None``: unscored, as the check leaves an answer the
    model abstained on by itself, or one with no probe reading), from models that never saw its
    question: in ``folds`` folds by position, a probe with ``probe``'s layer and penalty fit on the
    other folds' answers, and a check over ``check``'s features fit on the other folds' answers,
    their probe feature each from the probe without its own fold. ``learn_from``: ``first``, the
    first answer of each question (what the shipped check learns from), or ``every``, the answer
    at every tier (the later ones are other answers to the same questions)."""
    from components.answer_probe import fit_probe, hidden_features
    from components.answerability import ANSWER_PROBE, fit_logistic

    def right(step: Mapping[str, Any], record: Mapping[str, Any]) -> int:
        return int(is_right({"answerable": record["answerable"], "f1": step["f1"]}))

    firsts = [(i, step) for i, r in enumerate(records) for step in r["steps"][:None if learn_from == "every" else 1]
              if step["state"] is not None and not step["abstained"]]
    width = len(firsts[0][1]["state"])
    probes = []
    for fold in range(folds):
        train = [(i, s) for i, s in firsts if i % folds != fold]
        probes.append(fit_probe(np.array([s["state"] for _, s in train], dtype=np.float32),
                                [right(s, records[i]) for i, s in train], hidden_features(width),
                                l2=float(probe.metadata.get("l2", 1.0)), metadata={"model": "cv", "layer": probe.layer}))

    def features(i: int, step: Mapping[str, Any]) -> dict[str, float] | None:
        values = step_features(records[i], step)
        if values is None:
            return None
        if ANSWER_PROBE in check.features:
            if step["state"] is None:
                return None
            values[ANSWER_PROBE] = probes[i % folds].score_hidden(step["state"])
        return values

    rows = [(i, features(i, s), right(s, records[i])) for i, s in firsts]
    rows = [(i, f, label) for i, f, label in rows if f is not None]
    checks = []
    for fold in range(folds):
        train = [(i, f, label) for i, f, label in rows if i % folds != fold]
        checks.append(fit_logistic([[f[name] for name in check.features] for _, f, _ in train],
                                   [label for _, _, label in train], check.features,
                                   l2=float(check.metadata.get("l2", 1.0))))
    scores: list[list[float | None]] = []
    for i, record in enumerate(records):
        values = [features(i, step) for step in record["steps"]]
        scores.append([None if v is None else checks[i % folds].score(v) for v in values])
    return scores


def replay(record: Mapping[str, Any], scores: Sequence[float | None], threshold: float, extend: bool) -> dict[str, Any]:
    """The cascade's path through one question's recorded answers with the check at ``threshold``:
    the answer it ends with, whether it abstains, and what it evaluated."""
    steps = record["steps"]
    i = 0
    while i < len(steps) - 1:
        step, score = steps[i], scores[i]
        if not step["abstained"] and step["confident"] and not (extend and score is not None and score < threshold):
            break
        i += 1
    step, score = steps[i], scores[i]
    abstain = step["abstained"] or (score is not None and score < threshold)
    by_check = sum(1 for j in range(i) if not steps[j]["abstained"] and steps[j]["confident"])
    return {"step": i, "abstain": abstain, "f1": step["f1"], "answerable": record["answerable"],
            "extended_by_check": by_check,
            "tokens": sum(s["prompt_tokens_evaluated"] or 0 for s in steps[:i + 1]),
            "generate_ms": sum(s["generate_ms"] for s in steps[:i + 1])}


def _percent(values: Sequence[float]) -> float:
    return 100 * float(np.mean(values)) if len(values) else float("nan")


def table(records: Sequence[Mapping[str, Any]], scores: Sequence[Sequence[float | None]], thresholds: Sequence[float],
          extend: bool | Callable[[Mapping[str, Any]], bool]) -> list[dict[str, float]]:
    """Per-dataset figures of one way at each threshold (the first row: 0, never abstaining);
    ``extend``: whether a question's withheld answers go up the ladder (or which questions' do)."""
    extends = [extend(r) if callable(extend) else extend for r in records]
    rows = []
    for threshold in thresholds:
        row: dict[str, float] = {"threshold": threshold}
        outcomes = [replay(r, s, threshold, e) for r, s, e in zip(records, scores, extends, strict=True)]
        for dataset in sorted({r["dataset"] for r in records}):
            mine = [o for o, r in zip(outcomes, records, strict=True) if r["dataset"] == dataset]
            unanswerable = [o for o in mine if not o["answerable"]]
            answerable = [o for o in mine if o["answerable"]]
            row[f"{dataset}_f1"] = 100 * float(np.mean([abstention_f1(o, o["abstain"]) for o in mine]))
            row[f"{dataset}_answerable_f1"] = _percent([abstention_f1(o, o["abstain"]) for o in answerable])
            row[f"{dataset}_unanswerable_abstained"] = _percent([o["abstain"] for o in unanswerable])
            row[f"{dataset}_answered"] = 100 * float(np.mean([not o["abstain"] for o in mine]))
            row[f"{dataset}_extended_by_check"] = 100 * float(np.mean([o["extended_by_check"] > 0 for o in mine]))
            row[f"{dataset}_tokens"] = float(np.mean([o["tokens"] for o in mine]))
            row[f"{dataset}_generate_ms"] = float(np.mean([o["generate_ms"] for o in mine]))
        rows.append(row)
    return rows


def started_multi_hop(record: Mapping[str, Any]) -> bool:
    """Whether the question-type model read the question as multi-hop: the cascade started it at ``multi_hop_tier``."""
    return bool(record["steps"]) and record["steps"][0]["tier"] == PipelineConfig().multi_hop_tier


def choose_pair(records: Sequence[Mapping[str, Any]], scores: Sequence[Sequence[float | None]], extends: Sequence[bool],
                max_hotpot_loss: float, max_answerable_loss: float | None) -> dict[str, float]:
    """The shipped check's rule (``training.answerability.choose_by_type``) on the replayed paths: a
    threshold for single-hop and one for multi-hop questions, the pair with the best SQuAD train F1
    that loses at most ``max_hotpot_loss`` HotpotQA and ``max_answerable_loss`` SQuAD-answerable
    F1 points to never abstaining (:func:`training.answerability.best_pair`)."""
    multi = [started_multi_hop(r) for r in records]
    members = {g: [test(r) for r in records] for g, test in GROUPS.items()}
    sizes = {g: max(1, sum(m)) for g, m in members.items()}
    terms: dict[bool, tuple[list[float], dict[str, np.ndarray]]] = {}
    for kind in (False, True):
        mine = [i for i in range(len(records)) if multi[i] == kind]
        candidates = sorted({0.0, *(v for i in mine for v in scores[i] if v is not None and v <= MAX_THRESHOLD)})
        sums: dict[str, list[list[float]]] = {}
        for t in candidates:
            outcomes = {i: replay(records[i], scores[i], t, extends[i]) for i in mine}
            for g, member in members.items():
                rows = [outcomes[i] for i in mine if member[i]]
                sums.setdefault(g, []).append([sum(abstention_f1(o, o["abstain"]) for o in rows),
                                               sum(o["abstain"] for o in rows), sum(o["tokens"] for o in rows),
                                               sum(o["extended_by_check"] > 0 for o in rows)])
        terms[kind] = (candidates, {g: np.array(v, dtype=float) for g, v in sums.items()})
    (single, one), (multiple, two) = terms[False], terms[True]
    i, j, f1 = best_pair({g: v[:, 0] for g, v in one.items()}, {g: v[:, 0] for g, v in two.items()}, sizes,
                         max_hotpot_loss, max_answerable_loss)
    total = {g: one[g][i] + two[g][j] for g in GROUPS}  # [f1, abstained, tokens, extended] of the chosen pair
    return {"threshold": single[i], "threshold_multi_hop": multiple[j], "squad_f1": float(f1["squad"][i, j]),
            "squad_answerable_f1": float(f1["answerable"][i, j]), "hotpotqa_f1": float(f1["hotpotqa"][i, j]),
            "squad_unanswerable_abstained": float(100 * total["unanswerable"][1] / sizes["unanswerable"]),
            **{f"{d}_tokens": float(total[d][2] / sizes[d]) for d in ("squad", "hotpotqa")},
            **{f"{d}_extended_by_check": float(100 * total[d][3] / sizes[d]) for d in ("squad", "hotpotqa")}}


def fit(records: Sequence[Mapping[str, Any]], check: Any, probe: Any, max_hotpot_loss: float,
        learn_from: str = "first", max_answerable_loss: float | None = 3.0) -> dict[str, Any]:
    scores = cross_scores(records, check, probe, learn_from=learn_from)
    thresholds = sorted({0.0, *(s for per in scores for s in per if s is not None and s <= MAX_THRESHOLD)})
    ways = {}
    for name, extend in (("abstain", False), ("extend", True), ("extend multi-hop", started_multi_hop)):
        rows = table(records, scores, thresholds, extend)
        extends = [extend(r) if callable(extend) else extend for r in records]
        ways[name] = {"table": rows, "chosen": dict(choose(rows, max_hotpot_loss)),
                      "by_type": choose_pair(records, scores, extends, max_hotpot_loss, max_answerable_loss)}
    top = {d: float(np.mean([r["steps"][-1]["prompt_tokens"] or 0 for r in records if r["dataset"] == d]))
           for d in sorted({r["dataset"] for r in records})}
    return {"ways": ways, "questions": len(records), "same": sum(bool(r.get("same")) for r in records),
            "top_prompt_tokens": top, "max_hotpot_loss": max_hotpot_loss, "learn_from": learn_from,
            "max_answerable_loss": max_answerable_loss,
            "check_features": list(check.features), "probe_layer": probe.layer, "probe_l2": probe.metadata.get("l2")}


def at(rows: Sequence[Mapping[str, float]], threshold: float) -> Mapping[str, float]:
    """The row of the highest threshold not above ``threshold``."""
    return max((r for r in rows if r["threshold"] <= threshold), key=lambda r: r["threshold"])


COLUMNS = (("SQuAD F1", "squad_f1"), ("answerable F1", "squad_answerable_f1"),
           ("unanswerable abstained %", "squad_unanswerable_abstained"), ("HotpotQA F1", "hotpotqa_f1"),
           ("extended by the check % (SQuAD / HotpotQA)", None), ("prompt tokens evaluated (SQuAD / HotpotQA)", None))


def _cells(row: Mapping[str, float]) -> list[str]:
    return [f"{row['squad_f1']:.1f}", f"{row['squad_answerable_f1']:.1f}", f"{row['squad_unanswerable_abstained']:.1f}",
            f"{row['hotpotqa_f1']:.1f}", f"{row['squad_extended_by_check']:.1f} / {row['hotpotqa_extended_by_check']:.1f}",
            f"{row['squad_tokens']:.0f} / {row['hotpotqa_tokens']:.0f}"]


def report(result: Mapping[str, Any], steps_file: Path) -> str:
    ways = result["ways"]
    never = ways["abstain"]["table"][0]
    header = "| way | threshold | " + " | ".join(name for name, _ in COLUMNS) + " |"
    rule = "| --- " * (len(COLUMNS) + 2) + "|"
    lines = [
        "# Extend before abstaining? Replayed on the train splits", "",
        f"Written by `python -m training.extend_check fit` from `{shown_path(steps_file)}` (recorded by "
        f"`python -m training.extend_check run`): {result['questions']} training questions of the check (SQuAD 2.0 "
        "train articles, HotpotQA train), each answered by the shipped cascade at every tier of its ladder; "
        f"{result['same']} first answers came out word for word as the check's recorded ones. Each answer is scored "
        "by a check and a probe fit without its question's fold (five folds by position; the check's features "
        f"{', '.join(result['check_features'])}; the probe at layer {result['probe_layer']}, L2 {result['probe_l2']}). "
        "*abstain* gives or withholds the answer the cascade accepts (`extend_before_abstaining` off); *extend* sends "
        "an accepted answer the check would withhold up the ladder while a tier is left, and withholds only the last; "
        "*extend multi-hop* does so for the questions the cascade started at its multi-hop tier only. "
        "Each way's threshold is chosen by the check's rule: the best SQuAD 2.0 train F1 losing at most "
        f"{result['max_hotpot_loss']:g} HotpotQA train F1 point(s) to never abstaining "
        f"({never['hotpotqa_f1']:.1f}). Prompt tokens evaluated per question; answering every question at the top "
        f"tier would hold {result['top_prompt_tokens']['squad']:.0f} (SQuAD) / "
        f"{result['top_prompt_tokens']['hotpotqa']:.0f} (HotpotQA) in its prompt.", "",
        "## One threshold for all, chosen by the HotpotQA rule alone", "", header, rule,
        f"| never abstain | 0 | {' | '.join(_cells(never))} |",
        *(f"| {name} | {way['chosen']['threshold']:.3f} | {' | '.join(_cells(way['chosen']))} |" for name, way in ways.items()),
        "", "## A threshold per question type, as the shipped check chooses them", "",
        "The pair (single-hop / multi-hop, the question-type model's reading: where the cascade started) with the "
        f"best SQuAD 2.0 train F1 losing at most {result['max_hotpot_loss']:g} HotpotQA and "
        f"{result['max_answerable_loss']} SQuAD-answerable train F1 points to never abstaining.", "",
        header.replace("| threshold |", "| thresholds |"), rule,
        *(f"| {name} | {way['by_type']['threshold']:.3f} / {way['by_type']['threshold_multi_hop']:.3f} | "
          f"{' | '.join(_cells(way['by_type']))} |" for name, way in ways.items()),
        "", "## At fixed thresholds (one for all)", "", header, rule,
        *(f"| {name} | {t:g} | {' | '.join(_cells(at(way['table'], t)))} |"
          for t in KNOB if t <= MAX_THRESHOLD for name, way in ways.items()),
        "", "Nothing here looks at a dev question.", ""]
    return "\n".join(lines)


def fit_command(args: argparse.Namespace) -> int:
    from components.answer_probe import AnswerProbe
    from components.answerability import AnswerabilityModel
    from components.storage import atomic_write_text
    from eval.runner import read_records

    if not args.out.is_file():
        raise SystemExit(f"no recorded steps at {shown_path(args.out)}: run `python -m training.extend_check run` first")
    records = list(read_records(args.out))
    check = AnswerabilityModel.load(args.check)
    missing = missing_features(records, check)
    if missing:
        raise SystemExit(f"the steps in {shown_path(args.out)} lack {', '.join(missing)}, which the check "
                         f"{shown_path(args.check)} reads (they were recorded before it read them): record them again "
                         "(`python -m training.extend_check run --out <a new file>`) or fit with --check <a model "
                         "without them>")
    result = fit(records, check, AnswerProbe.load(), args.max_hotpot_loss, args.learn_from)
    args.report.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.report / "README.md", report(result, args.out))
    summary = {**{k: v for k, v in result.items() if k != "ways"},
               **{name: {"one_threshold": way["chosen"], "by_type": way["by_type"]} for name, way in result["ways"].items()}}
    atomic_write_text(args.report / "fit.json", json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    from components.answerability import DEFAULT_MODEL

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run", help="answer the check's training questions at every tier of their ladder")
    run_parser.add_argument("--runs", type=Path, default=None, help="the check's training runs (default: the shipped check's)")
    run_parser.add_argument("--model", default=None, help="generator preset (default: the default model)")
    run_parser.add_argument("--data-dir", default=None, help="benchmark data folder (default: ../shared/data)")
    fit_parser = sub.add_parser("fit", help="replay both ways at every threshold and write the report")
    fit_parser.add_argument("--check", type=Path, default=DEFAULT_MODEL,
                            help=f"the check whose features are refit in folds (default: {shown_path(DEFAULT_MODEL)})")
    fit_parser.add_argument("--max-hotpot-loss", type=float, default=1.0,
                            help="HotpotQA train F1 points a threshold may lose to never abstaining (default 1)")
    fit_parser.add_argument("--learn-from", choices=("first", "every"), default="first",
                            help="the answers the folds' probe and check learn from: each question's first (as the "
                                 "shipped check) or its answer at every tier (default first)")
    fit_parser.add_argument("--report", type=Path, default=REPORT_DIR)
    for p in (run_parser, fit_parser):
        p.add_argument("--out", type=Path, default=STEPS_FILE,
                       help=f"the recorded steps, JSONL (default: {shown_path(STEPS_FILE)})")
    args = parser.parse_args(argv)
    return run(args) if args.command == "run" else fit_command(args)


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
