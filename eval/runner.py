"""Answering a benchmark sample: the seeded sample, one (question, system) answer, and the
resumable loop that answers every pair not yet recorded, question-major.

Every query starts from the same warm state: the generator's pinned instruction prefixes and
nothing else (no system finds the question or passages another system left in the cache, which
would make it look faster than it is). The prefixes are pinned by answering the first question once
with every system before the run (unrecorded); a prefix first met during a question (a prompt can
tokenise its opening another way) is forgotten before the question's next system, so each of them
pays for it alike. A ``cold`` system evaluates every prompt from its first token (the previous
release's behaviour) and leaves the pinned prefixes as they were.
"""

from __future__ import annotations

import functools
import json
import math
import random
import sys
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Collection, Iterable, Iterator

from components.reranker import Reranker, load_reranker
from eval.datasets import DatasetError, Example
from eval.run_setup import check_run_setup, run_setup
from eval.scoring import score
from eval.systems import System
from graph import RAGContext, graph

RECORDS = "records.jsonl"
RETRIEVAL_METRICS = ("recall@5", "recall@10", "precision@5", "mrr")


def sample(examples: Iterable[Example], limit: int | None, seed: int, skip: int = 0,
           leave_out: Collection[str] = ()) -> list[Example]:
    """A seeded sample: the same command always picks the same questions, and a larger limit picks
    the same ones first (so a run can be extended with more questions). ``skip``: leave out the
    first ``skip`` of that order, the questions an earlier run of the same seed answered, so the
    sample holds none of them. ``leave_out``: ids of questions left out before the order is drawn
    (those earlier runs and fits of any seed saw: :func:`seen_questions`)."""
    if skip < 0:
        raise ValueError(f"skip must be >= 0, got {skip}")
    examples = [e for e in examples if e.id not in leave_out]
    random.Random(seed).shuffle(examples)
    return examples[skip:skip + limit] if limit else examples[skip:]


def seen_questions(paths: Iterable[Path], as_of: str | None = None) -> set[str]:
    """The ids of the questions the records in ``paths`` name: each a records file (JSON lines, an ``id`` each) or
    a folder, every ``*.jsonl`` under it (a run's records, a fit's labels); lines that are no record are passed
    over. :class:`eval.datasets.DatasetError` for a path that does not exist (a mistyped one would leave nothing out)
    or a file that is not text (a figure named by a shell pattern).

    ``as_of``: a git revision (a run's code commit) to read the paths as that commit holds them instead of as they
    are now, so the records of runs committed since do not change an earlier run's draw."""
    if as_of is not None:
        return _seen_as_of(list(paths), as_of)
    seen: set[str] = set()
    for path in paths:
        if not path.exists():
            raise DatasetError(f"no records at {path}: it is missing")
        for file in sorted(path.rglob("*.jsonl")) if path.is_dir() else [path]:
            try:
                records = read_records(file)
            except UnicodeDecodeError as exc:
                raise DatasetError(f"{file} is no records file (JSON lines): {exc}") from exc
            seen.update(_ids(records))
    return seen


def _ids(records: Iterable[Any]) -> Iterator[str]:
    return (r["id"] for r in records if isinstance(r, dict) and isinstance(r.get("id"), str))


def _git(*args: str, cwd: Path, stdin: bytes | None = None) -> bytes:
    import subprocess

    try:
        done = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, check=False)
    except FileNotFoundError as exc:
        raise DatasetError("reading records as of a revision needs git, which is not installed") from exc
    if done.returncode:
        raise DatasetError(f"git {' '.join(args)}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


_BLOB_IDS: dict[str, frozenset[str]] = {}
"""The question ids of each records file git has been asked for, by its object name (a hash of its content, so
the same name is the same ids in any revision): a committed run's records are read once, however many revisions
hold them."""


def _seen_as_of(paths: list[Path], revision: str) -> set[str]:
    """:func:`seen_questions` of ``paths`` as git revision ``revision`` holds them (``git ls-tree``; the files not
    read before come in one ``git cat-file --batch``): each path relative to the current folder, within its
    repository."""
    seen: set[str] = set()
    for path in paths:
        folder = path if path.is_dir() else path.parent
        if not folder.is_dir():
            raise DatasetError(f"no records at {path}: it is missing")
        top = Path(_git("rev-parse", "--show-toplevel", cwd=folder).decode().strip())
        inside = path.resolve().relative_to(top.resolve()).as_posix()
        held = [entry.partition("\t") for entry in
                _git("ls-tree", "-r", "-z", revision, "--", inside, cwd=top).decode().split("\0") if entry]
        if not held:
            raise DatasetError(f"no records at {path} as of {revision}: that revision does not hold it")
        # "<mode> <type> <object>\t<file>": a folder's records files, or the file itself
        files = {meta.split()[2]: file for meta, _, file in held if file == inside or file.endswith(".jsonl")}
        _read_blobs({blob: file for blob, file in files.items() if blob not in _BLOB_IDS}, revision, top)
        for blob in files:
            seen.update(_BLOB_IDS[blob])
    return seen


def _read_blobs(files: dict[str, str], revision: str, top: Path) -> None:
    """Read the records files ``files`` (object name: its path, for errors) into :data:`_BLOB_IDS`."""
    if not files:
        return
    out, at = _git("cat-file", "--batch", cwd=top, stdin="".join(f"{blob}\n" for blob in files).encode()), 0
    for blob, file in files.items():
        header_end = out.index(b"\n", at)
        size = int(out[at:header_end].split()[2])  # "<object> blob <size>"
        body, at = out[header_end + 1:header_end + 1 + size], header_end + 2 + size
        try:
            lines = body.decode("utf-8").splitlines()
        except UnicodeDecodeError as exc:
            raise DatasetError(f"{file} as of {revision} is no records file (JSON lines): {exc}") from exc
        _BLOB_IDS[blob] = frozenset(_ids(_parsed(lines)))


def _parsed(lines: Iterable[str]) -> Iterator[Any]:
    for line in lines:
        try:
            yield json.loads(line)
        except ValueError:
            continue  # a line cut short by a killed run (that pair simply runs again), or no record at all


def read_records(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    with path.open(encoding="utf-8") as fh:
        return list(_parsed(fh))


def fresh_inputs(ctx: RAGContext, system: System, example: Example,
                 pins: Collection[tuple[int, ...]] | None = None) -> dict[str, Any]:
    """The graph's input for ``example`` under ``system`` (the gold passages, handed, for the oracle),
    with the generator's cache put back to the state every system starts each question from: its
    warm instruction prefixes (``pins``: only those, as :func:`pinned_prefixes` gave them before the
    question's first system). Never another system's leftover cache."""
    inputs: dict[str, Any] = {"question": example.question}
    if system.oracle:
        gold = example.meta.get("gold_context") or (
            [(example.meta["title"], example.meta["context"])] if "context" in example.meta else [])
        inputs["documents"] = [{"title": t, "text": x, "whole": True} for t, x in gold]
    reset_cache = getattr(ctx.generator, "reset_cache", None)
    if reset_cache is not None:
        reset_cache(keep=pins)
    return inputs


def pinned_prefixes(ctx: RAGContext) -> frozenset[tuple[int, ...]] | None:
    """The generator's pinned instruction prefixes (``None`` for a generator that pins none)."""
    pinned = getattr(ctx.generator, "pinned_prefixes", None)
    return pinned() if pinned is not None else None


@contextmanager
def starting_cold(ctx: RAGContext, system: System) -> Iterator[None]:
    """A ``cold`` system's query: the generator reuses no prefix (every prompt token is evaluated)
    and pins none, so the warm systems after it find the pinned prefixes as they were."""
    if not system.cold or not hasattr(ctx.generator, "prefix_reuse"):
        yield
        return
    reuse, ctx.generator.prefix_reuse = ctx.generator.prefix_reuse, False
    try:
        yield
    finally:
        ctx.generator.prefix_reuse = reuse


@functools.cache
def _reranker(name: str) -> Reranker:
    return load_reranker(name)


def system_context(ctx: RAGContext, system: System) -> RAGContext:
    """``ctx`` under the system's pipeline and, where it names one, its reranker; without the check
    for the Wikipedia summaries where the system has one check for every answer."""
    context = ctx.with_pipeline(system.pipeline)
    if system.one_check:
        context = replace(context, answerability_wikipedia=None)
    return replace(context, reranker=_reranker(system.reranker)) if system.reranker else context


def run_one(ctx: RAGContext, system: System, example: Example,
            pins: Collection[tuple[int, ...]] | None = None) -> dict[str, Any]:
    inputs = fresh_inputs(ctx, system, example, pins)
    with starting_cold(ctx, system):
        start = time.perf_counter()
        output = graph.invoke(inputs, context=system_context(ctx, system))
        record = score(example, output, (time.perf_counter() - start) * 1000)
    if system.oracle:  # handed, not retrieved: retrieval metrics do not apply
        for key in RETRIEVAL_METRICS:
            record[key] = math.nan
    return {"system": system.name, **record}


def stream_one(ctx: RAGContext, system: System, example: Example) -> Iterator[dict[str, Any]]:
    """The graph's updates (node name to its partial state) for ``example`` under ``system``, from
    the state :func:`run_one` starts from, for a caller that reads each step as it comes."""
    inputs = fresh_inputs(ctx, system, example)
    with starting_cold(ctx, system):
        yield from graph.stream(inputs, context=system_context(ctx, system), stream_mode="updates")


def answer_all(ctx: RAGContext, systems: list[System], examples: list[Example], path: Path) -> None:
    """Run every (question, system) pair not yet in ``path``, question-major, appending records.
    A folder whose records another generator or router wrote is refused (``RunMismatchError``)."""
    from tqdm import tqdm

    check_run_setup(path.parent, run_setup(ctx, systems))
    done = {(r["system"], r["id"]) for r in read_records(path)}
    todo = [(e, s) for e in examples for s in systems if (s.name, e.id) not in done]
    if todo:  # the instruction prefixes pinned before the first timed query
        for system in systems:
            run_one(ctx, system, todo[0][0])
    question, pins = None, None
    with path.open("a", encoding="utf-8") as fh, tqdm(total=len(todo), unit="answer", file=sys.stderr, mininterval=1.0) as bar:
        for example, system in todo:
            if example is not question:  # what every system of this question starts from
                question, pins = example, pinned_prefixes(ctx)
            record = run_one(ctx, system, example, pins)
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            fh.flush()
            bar.set_postfix(system=system.name)
            bar.update(1)
