"""The answerability check for answers from the bundled Wikipedia summaries, fit on NQ-open and
TriviaQA train questions asked of them.

The shipped check (``components/answerability.json``, :mod:`training.answerability`) was fit on
SQuAD 2.0 and HotpotQA, whose evidence is the question's own paragraphs: an answer is wrong there
because the paragraph does not quite say it. Over the summaries the chat answers from, the evidence
is as often about something else, and the model answers from what it half remembers. This fits the
same features again on answers the shipped cascade gave over the summaries, so that an answer whose
evidence comes from them alone is checked by a model fit on such answers
(:class:`pipeline.context.RAGContext`, ``answerability_wikipedia``).

    python -m eval.benchmark --dataset nq --split train --seed 29 --skip 300 --limit 200 --systems cascade-one-check \
        --no-figures --out runs/nq-train-s55                                                     # ~4 min here
    python -m eval.benchmark --dataset triviaqa --split train --seed 29 --limit 200 --systems cascade-one-check \
        --no-figures --out runs/triviaqa-train-s55                                               # ~4 min here
    python -m eval.benchmark --dataset nq --split train --seed 29 --skip 500 --limit 300 --systems cascade-one-check \
        --no-figures --out runs/nq-train-s56                                                     # ~6 min here
    python -m eval.benchmark --dataset triviaqa --split train --seed 29 --skip 200 --limit 300 --systems cascade-one-check \
        --no-figures --out runs/triviaqa-train-s56                                               # ~5 min here
    python -m training.answerability_wikipedia record runs/nq-train-s55 runs/triviaqa-train-s55 \
        runs/nq-train-s56 runs/triviaqa-train-s56                                                # ~1 min: the labels file
    python -m training.answerability_wikipedia fit     # seconds: the model and docs/answerability/wikipedia/

(NQ-open's first 300 train questions of seed 29 taught the answer probe, :mod:`training.answer_probe`:
``--skip 300`` leaves them out, so the probe's reading of every answer here is one it was not fit on.
``cascade-one-check`` checks every answer with the default check, as the cascade did before this
check existed: the answers are the cascade's, and the recorded decisions, whose right answers set the
threshold's floor, are the default check's. Session 55 fit the first 400 answers, recorded with
``cascade`` then, and session 56 added the next 600.)

``record`` keeps, of each answer, what the fit reads, and whether the summaries hold the answer: a
gold answer string occurs in them (:func:`eval.corpora.with_holds`). That is the record's
``answerable``, so SQuAD 2.0's scoring applies as it does to the shipped check: where the summaries
hold no gold string they cannot state the answer, an abstention scores 1 and any answer 0; where
they do, the answer scores its F1 and an abstention 0 (a string found in an unrelated summary makes
this generous to answering). An answer is *right* when its question is answerable so and its F1 is
at least 0.5.

``fit`` fits a logistic regression on the shipped check's features (5-fold, out-of-fold scores) and
chooses its threshold: the best F1 so scored among the thresholds that give at least as many right
answers as the shipped check gives on the same answers, less 1% of the questions. The floor keeps a
check from abstaining on nearly everything, as the best F1 alone would have the shipped check's score
do (on the 1,000 answers, 42 given; on session 55's 400, 12). On the 1,000 it binds the refit too: alone,
the best F1 would be at 0.291 (57.8, 49 right answers), the floor's at 0.259 (57.6, 53). The report
also gives the shipped check's score with a threshold chosen the same way, to tell what the refit
adds to a new threshold. Nothing here looks at a dev question.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

from components.answerability import WIKIPEDIA_MODEL, AnswerabilityModel, fit_logistic
from components.storage import atomic_write_text
from eval.abstention import CORRECT_F1, is_right, knowledge_base_scores
from training.answerability import checked, out_of_fold, withheld
from training.cascade import auroc, shown_path

ROOT = Path(__file__).resolve().parent.parent
LABELS = ROOT / "training" / "labels" / "answerability_runs_wikipedia.jsonl"
REPORT_DIR = ROOT / "docs" / "answerability" / "wikipedia"
DATASETS = ("nq", "triviaqa")
"""The benchmark sets asked of the Wikipedia summaries (:mod:`eval.corpora`)."""
RIGHT_GIVEN_SLACK = 0.01
"""How many fewer right answers than the shipped check the chosen threshold may give, as a share of
the questions."""
L2 = 1.0


def trimmed(record: Mapping[str, Any], holds: bool) -> dict[str, Any]:
    """What the fit reads of a benchmark record: the answer as given before the check and its F1,
    the check's features and decision, and whether the summaries hold a gold answer (``answerable``)."""
    check = record["answerability"]
    return {"dataset": record["dataset"], "id": record["id"], "question": record["question"],
            "gold_answers": record["gold_answers"], "answerable": holds,
            "prediction": record.get("prediction_unchecked", record["prediction"]),
            "f1": record.get("f1_unchecked", record["f1"]),
            "answerability": {key: check.get(key) for key in ("by", "decision", "score", "threshold", "multi_hop",
                                                             "features", "features_version")}}


def record(args: argparse.Namespace) -> int:
    from components.embedder import Embedder
    from eval.corpora import benchmark_index, with_holds
    from eval.runner import RECORDS, read_records

    rows = []
    for folder in args.runs:
        found = answers_of(read_records(folder / RECORDS), args.system)
        if not found:
            raise SystemExit(f"{folder / RECORDS} holds no answers of {' or '.join(map(repr, args.system))}")
        unknown = {r["dataset"] for r in found} - set(DATASETS)
        if unknown:
            raise SystemExit(f"{folder}: {', '.join(sorted(unknown))} is not asked of the Wikipedia summaries "
                             f"(valid: {', '.join(DATASETS)})")
        rows.append(found)
    index = benchmark_index("nq", "train", Embedder())  # every open-domain set shares this corpus
    runs = [trimmed(r, r["kb_holds_answer"]) for r in with_holds(interleaved(rows), lambda _dataset: index)]
    atomic_write_text(args.out, "".join(json.dumps(r) + "\n" for r in runs))
    print(f"{len(runs)} answers -> {shown_path(args.out)}; the summaries hold the answer of "
          f"{sum(r['answerable'] for r in runs)}", file=sys.stderr)
    return 0


def answers_of(records: Sequence[Mapping[str, Any]], systems: Sequence[str]) -> list[Mapping[str, Any]]:
    """A run's answers by the first of ``systems`` it holds: one answer per question, whichever
    system a run was recorded with (``cascade`` before the summaries had a check of their own,
    ``cascade-one-check``, whose decisions stay the default check's, since)."""
    held = {r["system"] for r in records}
    chosen = next((s for s in systems if s in held), None)
    return [r for r in records if r["system"] == chosen]


def interleaved(groups: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The groups' records taken in turn (then what is left of the longer ones), so that folds by
    position hold every dataset alike."""
    out = []
    for i in range(max(map(len, groups), default=0)):
        out += [group[i] for group in groups if i < len(group)]
    return out


def abstains(runs: Sequence[Mapping[str, Any]], scores: Mapping[int, float], threshold: float) -> list[bool]:
    """Each answer withheld at ``threshold`` (:func:`training.answerability.withheld`)."""
    return [withheld(r, i, scores, threshold) for i, r in enumerate(runs)]


def as_decided(runs: Sequence[Mapping[str, Any]]) -> list[bool]:
    """Each answer withheld by the shipped check, as it decided when the answer was given."""
    return [r["answerability"]["decision"] != "answer" for r in runs]


def figures(runs: Sequence[Mapping[str, Any]], abstained: Sequence[bool]) -> dict[str, float]:
    """F1 scored as the module says, the answers given, the right ones among them and their share
    (``precision``), and the share of the questions the summaries hold no answer to that are
    abstained (:func:`eval.abstention.knowledge_base_scores`)."""
    scores = knowledge_base_scores([r["answerable"] for r in runs], [r["f1"] for r in runs], abstained)
    scores["precision"] = scores.pop("right_share")
    return scores


def choose(runs: Sequence[Mapping[str, Any]], scores: Mapping[int, float], min_right: int) -> tuple[float, dict[str, float]]:
    """The threshold with the best F1 among those giving at least ``min_right`` right answers (the
    lowest such on ties), and its figures."""
    rows = [(t, figures(runs, abstains(runs, scores, t))) for t in sorted({0.0, *scores.values()})]
    allowed = [row for row in rows if row[1]["right_given"] >= min_right] or rows[:1]
    return max(allowed, key=lambda row: (round(row[1]["f1"], 9), -row[0]))


def fit(args: argparse.Namespace) -> int:
    runs = [json.loads(line) for line in args.labels.read_text(encoding="utf-8").splitlines() if line.strip()]
    shipped = AnswerabilityModel.load()
    features = list(shipped.features)
    scored = checked(runs)
    position = {id(r): i for i, r in enumerate(runs)}
    oof = {position[id(r)]: float(s) for r, s in zip(scored, out_of_fold(scored, features, args.l2), strict=True)}
    before = figures(runs, as_decided(runs))
    floor = before["right_given"] - int(RIGHT_GIVEN_SLACK * len(runs))
    threshold, chosen = choose(runs, oof, floor)
    shipped_scores = {position[id(r)]: float(r["answerability"]["score"]) for r in scored}
    shipped_threshold, rethresholded = choose(runs, shipped_scores, floor)
    right = [int(is_right(r)) for r in scored]
    cv_auroc = auroc([oof[position[id(r)]] for r in scored], right)
    shipped_auroc = auroc(list(shipped_scores.values()), right)
    counts = {d: sum(r["dataset"] == d for r in runs) for d in DATASETS}
    model = fit_logistic([[r["answerability"]["features"][f] for f in features] for r in scored], right, features,
                         l2=args.l2, metadata={
                             "fit_on": "answers from the bundled Wikipedia summaries: "
                                       + ", ".join(f"{d} train {n}" for d, n in counts.items() if n),
                             "questions": len(runs), "scored_answers": len(scored),
                             "label": f"the summaries hold a gold answer string and the answer's F1 >= {CORRECT_F1}",
                             "l2": args.l2, "cv_auroc": cv_auroc, "threshold": threshold,
                             "rule": f"best F1 giving >= {floor} right answers (the shipped check's "
                                     f"{before['right_given']} less {RIGHT_GIVEN_SLACK:.0%} of the questions)",
                             "command": "python -m training.answerability_wikipedia fit"})
    model.save(args.model_out)
    never = figures(runs, [r["answerability"]["by"] == "model" for r in runs])
    write_report(args.report, model, runs, {
        "never abstaining": never, "the shipped check, as it decided": before,
        f"the shipped check's score at a threshold chosen the same way, {shipped_threshold:.3f}": rethresholded,
        f"this check, out of fold, at {threshold:.3f}": chosen}, shipped_auroc, oof)
    print(f"threshold {threshold:.3f}: {chosen}; AUROC {cv_auroc:.3f} (shipped {shipped_auroc:.3f}) -> "
          f"{shown_path(args.model_out)}", file=sys.stderr)
    return 0


def write_report(folder: Path, model: AnswerabilityModel, runs: Sequence[Mapping[str, Any]],
                 rows: Mapping[str, Mapping[str, float]], shipped_auroc: float, oof: Mapping[int, float]) -> None:
    held = sum(r["answerable"] for r in runs)
    lines = [
        "# The answerability check for answers from the Wikipedia summaries, fit on train",
        "",
        f"Written by `python -m training.answerability_wikipedia fit` from {len(runs)} answers the shipped cascade "
        f"gave over the bundled Wikipedia summaries ({model.metadata['fit_on'].split(': ', 1)[1]}; "
        "`training/labels/answerability_runs_wikipedia.jsonl`, see the module for the commands). "
        f"The summaries hold a gold answer string for {held} of them ({100 * held / len(runs):.1f}%).",
        "",
        "Scoring: where the summaries hold no gold answer string, an abstention scores 1 and any answer 0; where "
        f"they do, the answer scores its F1 and an abstention 0. *Right*: {model.metadata['label']}.",
        "",
        f"AUROC for a right answer: the shipped check's score {shipped_auroc:.3f}; this check, out of fold, "
        f"{model.metadata['cv_auroc']:.3f} (the same features: {', '.join(f'`{f}`' for f in model.features)}).",
        "",
        f"**Threshold {model.threshold:.3f}**: {model.metadata['rule']}.",
        "",
        "| on these answers | F1 | answers given | right among them | right % | no-answer questions abstained % |",
        "| --- | --- | --- | --- | --- | --- |",
        *(f"| {name} | {f['f1']:.1f} | {f['given']} | {f['right_given']} | {f['precision']:.1f} | {f['unheld_abstained']:.1f} |"
          for name, f in rows.items()),
        "",
        "## Thresholds (out-of-fold scores)",
        "",
        "| threshold | F1 | answers given | right among them |",
        "| --- | --- | --- | --- |",
    ]
    for t in (0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6):
        f = figures(runs, abstains(runs, oof, t))
        lines.append(f"| {t:.2f} | {f['f1']:.1f} | {f['given']} | {f['right_given']} |")
    lines += ["", "## Coefficients (standardised features)", "", "| feature | coefficient |", "| --- | --- |",
              *(f"| `{f}` | {c:+.3f} |" for f, c in sorted(zip(model.features, model.coef, strict=True),
                                                          key=lambda fc: -abs(fc[1]))),
              f"| intercept | {model.intercept:+.3f} |", ""]
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(folder / "README.md", "\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="the labels file from benchmark runs over the Wikipedia summaries")
    rec.add_argument("runs", nargs="+", type=Path, help="benchmark run folders (eval.benchmark --out)")
    rec.add_argument("--system", type=lambda v: tuple(v.split(",")), default=("cascade-one-check", "cascade"),
                     help="whose answers, comma-separated: each run gives those of the first it holds "
                          "(default: cascade-one-check,cascade)")
    rec.add_argument("--out", type=Path, default=LABELS)
    fitting = sub.add_parser("fit", help="fit the check and its threshold; write the model and its report")
    fitting.add_argument("--labels", type=Path, default=LABELS)
    fitting.add_argument("--l2", type=float, default=L2)
    fitting.add_argument("--model-out", type=Path, default=WIKIPEDIA_MODEL)
    fitting.add_argument("--report", type=Path, default=REPORT_DIR)
    args = parser.parse_args(argv)
    return record(args) if args.command == "record" else fit(args)


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
