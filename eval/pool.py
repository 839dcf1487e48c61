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

A run whose systems were named otherwise is pooled under the names given after its folder: session 76's seed-80
run answered with the cascade of the time (the hybrid reranker) as ``cascade`` and with the learned reranker, now the
cascade's, as ``cascade-learned``, so it pools with later runs as
``docs/results/squad-train-s76-unseen11:cascade=cascade-hybrid,cascade-learned=cascade``. ``OLD=`` with no new
name leaves a system out, so that runs which also answered another system pool with runs that did not: the hybrid's
cascade over every unseen SQuAD 2.0 train run is ``…-s76-unseen11:cascade-learned=`` and
``…-s76-unseen12:cascade=,cascade-hybrid=cascade`` beside the ten runs of sessions 71-75. ``--against`` names the
system the F1 differences are taken against (the baseline unless given).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any, Sequence

from eval.aggregate import aggregate
from eval.contexts import reports_errors
from eval.datasets import DatasetError
from eval.report import headline_system
from eval.runner import RECORDS, read_records
from eval.targets import verdict_text, verdicts


def run_argument(text: str) -> tuple[Path, dict[str, str]]:
    """A run's folder and the names its systems are pooled under: ``FOLDER`` or ``FOLDER:OLD=NEW,OLD=NEW`` (``OLD=``:
    left out, an empty name)."""
    folder, _, names = text.rpartition(":")
    if not folder or "=" not in names:
        return Path(text), {}
    renames = {}
    for pair in names.split(","):
        old, equals, new = pair.partition("=")
        if not old or not equals:
            raise DatasetError(f"{pair!r} in {text!r} is no OLD=NEW system name (or OLD= to leave it out)")
        renames[old] = new
    return Path(folder), renames


def renamed(records: list[dict[str, Any]], renames: dict[str, str], folder: Path) -> list[dict[str, Any]]:
    """``records`` with their systems under the names ``renames`` gives (all at once: ``a=b,b=a`` swaps two), less
    those of a system renamed to the empty name."""
    systems = {r["system"] for r in records}
    unknown = sorted(set(renames) - systems)
    if unknown:
        raise DatasetError(f"{folder} holds no system {', '.join(unknown)} to rename (it holds {', '.join(sorted(systems))})")
    name = {s: renames.get(s, s) for s in systems}
    names = [name[s] for s in sorted(systems) if name[s]]
    if len(set(names)) < len(names):
        raise DatasetError(f"renamed, two systems of {folder} would share a name: {', '.join(sorted(names))}")
    if not names:
        raise DatasetError(f"{folder}: every system is left out")
    return [{**r, "system": name[r["system"]]} for r in records if name[r["system"]]] if renames else records


def read_runs(folders: Sequence[Path], renames: Sequence[dict[str, str]] = ()) -> list[list[dict[str, Any]]]:
    """Every run's records, a list per run, their systems under the names ``renames`` gives (one mapping a run, or
    none). :class:`DatasetError` for a folder with no records, runs of other datasets or systems than the first's,
    or a question two runs answered."""
    runs = []
    for n, folder in enumerate(folders):
        names = renames[n] if n < len(renames) else {}
        records = read_records(folder / RECORDS)
        if not records:
            raise DatasetError(f"no records at {folder / RECORDS}: name a benchmark run's folder")
        runs.append(renamed(records, names, folder))
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
    parser.add_argument("runs", nargs="+", metavar="RUN",
                        help="benchmark run folders (each with its records.jsonl), each as FOLDER or, to pool its "
                             "systems under other names, FOLDER:OLD=NEW[,OLD=NEW...] (OLD=: left out)")
    parser.add_argument("--against", metavar="SYSTEM",
                        help="the system the F1 differences are taken against (default: the baseline, where run)")
    args = parser.parse_args(argv)
    folders, renames = zip(*(run_argument(text) for text in args.runs), strict=True)
    runs = read_runs(folders, renames)
    pooled = [r for run in runs for r in run]
    systems = sorted({r["system"] for r in pooled}, key=lambda name: (name != "baseline", name))
    if args.against is not None and args.against not in systems:
        raise DatasetError(f"no system {args.against} to take differences against: the runs hold {', '.join(systems)}")
    against = args.against or ("baseline" if "baseline" in systems else None)
    headline = headline_system(systems)
    dataset = pooled[0]["dataset"]
    counts = [len({r["id"] for r in run}) for run in (*runs, pooled)]
    for folder, run, n_questions in zip([*folders, Path("pooled")], [*runs, pooled], counts, strict=True):
        line = f"{folder}: {n_questions} questions"
        if headline and against and headline != against:
            mean, error, _ = paired_difference(run, headline, against)
            whose = "the baseline's" if against == "baseline" else f"{against}'s"
            line += f"; {headline} F1 minus {whose} {mean:+.2f} (paired standard error {error:.2f})"
        print(line)
    print(f"\nThe targets on the {counts[-1]} questions together:")
    for row in verdicts(aggregate(pooled, systems), dataset, headline):
        print(f"#{row['issue']} {row['target']} {row['goal']}: {row['system']} {row['value']:.2f}{row['unit']}, "
              f"{verdict_text(row)}")
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
