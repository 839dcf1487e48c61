"""Fit the short-answer cut (:class:`components.short_answer.ShortAnswer`) on recorded train answers.

No generator runs: the answers are those already recorded on the train splits, the shipped
pipeline's (``training.answerability run``) and every budget of the cascade's grid
(``training.cascade run``). For each value pair (``min_words``, ``stem_chars``) the token F1 of
each answerable question's answer is compared with and without the cut. Chosen: the pair with the
largest mean gain over the datasets among those that lose F1 on none of them (the cascade fit's
rule: a gain on one dataset does not pay for a loss on another).

    python -m training.short_answer [--report docs/short_answer]
"""

from __future__ import annotations

import argparse
import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from components.short_answer import ShortAnswer
from eval.metrics import f1_score
from eval.runner import read_records
from nodes.generate import is_abstention
from training import answerability, cascade
from training.cascade import shown_path

SOURCES = (answerability.RUNS_FILE, cascade.RUNS_FILE)
MIN_WORDS = tuple(range(3, 11))
STEM_CHARS = (3, 4, 5, 6)
REPORT_DIR = Path(__file__).resolve().parent.parent / "docs" / "short_answer"
EXAMPLES = 12


@dataclass(frozen=True)
class Answer:
    dataset: str
    source: str  # the file and, for a grid, the budget it was answered at
    question: str
    answer: str
    golds: tuple[str, ...]


def answers(paths: Iterable[Path]) -> list[Answer]:
    """The answers to answerable questions in recorded runs (an abstention is not an answer), as the
    model wrote them: a run's ``answer`` (its ``written_answer`` when it was cut), or each of its grid's."""
    found = []
    for path in paths:
        for run in read_records(path):
            if not run["answerable"]:
                continue
            given = [(path.name, run.get("written_answer") or run["answer"])] if "answer" in run else [
                (f"{path.name} at {step['budget'] or 'all'}", step["answer"]) for step in run.get("grid", [])]
            found += [Answer(run["dataset"], source, run["question"], text, tuple(run["gold_answers"]))
                      for source, text in given if text and not is_abstention(text)]
    return found


def gains(cut: ShortAnswer, given: Sequence[Answer]) -> dict[str, float]:
    """Per dataset, the mean F1 points the cut adds to its answers."""
    by: dict[str, list[float]] = {}
    for a in given:
        by.setdefault(a.dataset, []).append(f1_score(cut(a.question, a.answer), a.golds) - f1_score(a.answer, a.golds))
    return {dataset: 100 * sum(values) / len(values) for dataset, values in sorted(by.items())}


def fit(given: Sequence[Answer]) -> tuple[ShortAnswer, list[tuple[ShortAnswer, dict[str, float]]]]:
    """The chosen cut and every candidate's gains."""
    table = [(cut, gains(cut, given)) for cut in
             (ShortAnswer(min_words=m, stem_chars=s) for m, s in itertools.product(MIN_WORDS, STEM_CHARS))]
    safe = [(cut, g) for cut, g in table if min(g.values()) >= 0]
    if not safe:
        raise ValueError("every cut loses F1 on some dataset: keep answers as written")
    chosen, _ = max(safe, key=lambda row: sum(row[1].values()) / len(row[1]))
    return chosen, table


def report(chosen: ShortAnswer, table, given: Sequence[Answer], paths: Sequence[Path]) -> str:
    datasets = sorted({a.dataset for a in given})
    count = {d: sum(a.dataset == d for a in given) for d in datasets}
    lines = ["# The short-answer cut, fit on the train splits", "",
             "Written by `python -m training.short_answer` from answers already recorded on the train splits "
             "(no generator runs): " + ", ".join(f"`{shown_path(p)}`" for p in paths) + ". "
             + ", ".join(f"{count[d]} {d}" for d in datasets) + " answers to answerable questions "
             "(the shipped pipeline's, and every budget of the cascade's grid).", "",
             "The cut (`components/short_answer.py`) keeps, of an answer of at least `min_words` words that restates "
             "the question, the run of words between the question's words that holds the most new ones. A word is "
             "the question's when its content words share their first `stem_chars` letters with the question's.", "",
             "Chosen: the largest mean gain over the datasets among the cuts that lose F1 on none of them.", "",
             f"**Chosen: `min_words={chosen.min_words}`, `stem_chars={chosen.stem_chars}`**: "
             + ", ".join(f"{d} {g:+.2f}" for d, g in gains(chosen, given).items()) + " F1 points.", "",
             "## F1 points gained, per candidate", "",
             "| min_words | stem_chars | " + " | ".join(datasets) + " |",
             "| --- | --- | " + " | ".join("---" for _ in datasets) + " |"]
    lines += [f"| {cut.min_words} | {cut.stem_chars} | " + " | ".join(f"{g[d]:+.2f}" for d in datasets) + " |"
              for cut, g in table]
    sources = sorted({a.source for a in given})
    lines += ["", "## The chosen cut per source (F1 as written → cut)", "",
              "| source | dataset | answers | changed | F1 as written | F1 cut |", "| --- | --- | --- | --- | --- | --- |"]
    for source in sources:
        for d in datasets:
            sel = [a for a in given if a.source == source and a.dataset == d]
            if not sel:
                continue
            before = 100 * sum(f1_score(a.answer, a.golds) for a in sel) / len(sel)
            after = 100 * sum(f1_score(chosen(a.question, a.answer), a.golds) for a in sel) / len(sel)
            changed = sum(chosen(a.question, a.answer) != a.answer for a in sel)
            lines.append(f"| {source} | {d} | {len(sel)} | {changed} | {before:.1f} | {after:.1f} |")
    shipped = [a for a in given if a.source == paths[0].name and chosen(a.question, a.answer) != a.answer][:EXAMPLES]
    lines += ["", f"## Examples (the first {len(shipped)} answers of `{paths[0].name}` the cut changes)", "",
              "| question | as written | cut | gold | F1 |", "| --- | --- | --- | --- | --- |"]
    for a in shipped:
        short = chosen(a.question, a.answer)
        lines.append(f"| {cell(a.question)} | {cell(a.answer)} | {cell(short)} | {cell(a.golds[0])} | "
                     f"{f1_score(a.answer, a.golds):.2f} → {f1_score(short, a.golds):.2f} |")
    return "\n".join(lines) + "\n"


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def main(argv: list[str] | None = None) -> int:
    from components.storage import atomic_write_text

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, action="append", default=None,
                        help="recorded runs (repeatable; default: " + ", ".join(p.name for p in SOURCES) + ")")
    parser.add_argument("--report", type=Path, default=REPORT_DIR, help="where README.md and fit.json go")
    args = parser.parse_args(argv)
    paths = args.runs or list(SOURCES)
    given = answers(paths)
    chosen, table = fit(given)
    args.report.mkdir(parents=True, exist_ok=True)
    text = report(chosen, table, given, paths)
    atomic_write_text(args.report / "README.md", text)
    atomic_write_text(args.report / "fit.json", json.dumps(
        {"min_words": chosen.min_words, "stem_chars": chosen.stem_chars, "gains": gains(chosen, given),
         "sources": [shown_path(p) for p in paths]}, indent=2) + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
