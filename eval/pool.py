"""The open issues' figures over several benchmark runs' questions together, and each run's.

One run of 250 questions judges #19's F1 difference to within a paired standard error of about 2.3 points,
four times the issue's line; runs of the same systems on different questions (the unseen SQuAD 2.0 train
runs of sessions 71-74) read better together. This pools their records, as one run of all their questions
would have recorded them, and judges the targets on the pool as the benchmark judges a run
(:func:`eval.targets.verdicts`), beside the F1 difference's paired standard error for every run and the pool:

    python -m eval.pool docs/results/squad-train-s71-unseen docs/results/squad-train-s71-unseen2 \\
        docs/results/squad-train-s72-unseen3 docs/results/squad-train-s73-unseen4 \\
        docs/results/squad-train-s73-unseen5 docs/results/squad-train-s74-unseen6

A question two runs answered would count twice: refused, as are runs of other datasets or other systems.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any, Sequence

from eval.aggregate import aggregate
from eval.contexts import reports_errors
from eval.datasets import DatasetError
from eval.report import headline_system
from eval.runner import RECORDS, read_records
from eval.targets import verdict_text, verdicts


def read_runs(folders: Sequence[Path]) -> list[list[dict[str, Any]]]:
    """Every run's records, a list per run. :class:`DatasetError` for a folder with no records, runs of other
    datasets or systems than the first's, or a question two runs answered."""
    runs = []
    for folder in folders:
        records = read_records(folder / RECORDS)
        if not records:
            raise DatasetError(f"no records at {folder / RECORDS}: name a benchmark run's folder")
        runs.append(records)
    kinds = [({r["dataset"] for r in run}, {r["system"] for r in run}) for run in runs]
    for folder, kind in zip(folders[1:], kinds[1:], strict=True):
        if kind != kinds[0]:
            raise DatasetError(f"{folder} holds {sorted(kind[0])} answered by {sorted(kind[1])}, and {folders[0]} "
                               f"{sorted(kinds[0][0])} by {sorted(kinds[0][1])}: pool runs of the same systems on one dataset")
    owner: dict[str, Path] = {}
    for folder, run in zip(folders, runs, strict=True):
        for qid in {r["id"] for r in run}:
            if qid in owner:
                raise DatasetError(f"question {qid} is in {owner[qid]} and {folder}: pooled, it would count twice")
            owner[qid] = folder
    return runs


def paired_difference(records: Sequence[dict[str, Any]], system: str, against: str = "baseline") -> tuple[float, float, int]:
    """``system``'s F1 minus ``against``'s, in points, over the questions both answered: the mean, its paired
    standard error (of the per-question differences) and how many questions."""
    by_question: dict[str, dict[str, float]] = {}
    for r in records:
        by_question.setdefault(r["id"], {})[r["system"]] = float(r["f1"])
    diffs = [100.0 * (f1s[system] - f1s[against]) for f1s in by_question.values() if system in f1s and against in f1s]
    n = len(diffs)
    if n < 2:
        return (diffs[0] if diffs else math.nan), math.nan, n
    mean = sum(diffs) / n
    spread = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    return mean, spread / math.sqrt(n), n


@reports_errors
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=Path, nargs="+", help="benchmark run folders (each with its records.jsonl)")
    args = parser.parse_args(argv)
    runs = read_runs(args.runs)
    pooled = [r for run in runs for r in run]
    systems = sorted({r["system"] for r in pooled}, key=lambda name: (name != "baseline", name))
    headline = headline_system(systems)
    dataset = pooled[0]["dataset"]
    counts = [len({r["id"] for r in run}) for run in (*runs, pooled)]
    for folder, run, n_questions in zip([*args.runs, Path("pooled")], [*runs, pooled], counts, strict=True):
        line = f"{folder}: {n_questions} questions"
        if headline and "baseline" in systems:
            mean, error, _ = paired_difference(run, headline)
            line += f"; {headline} F1 minus the baseline's {mean:+.2f} (paired standard error {error:.2f})"
        print(line)
    print(f"\nThe targets on the {counts[-1]} questions together:")
    for row in verdicts(aggregate(pooled, systems), dataset, headline):
        print(f"#{row['issue']} {row['target']} {row['goal']}: {row['system']} {row['value']:.2f}{row['unit']}, "
              f"{verdict_text(row)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
