"""Questions answered by two or more configurations of the graph, side by side, from one loaded model.

The small comparisons (:mod:`eval.descriptions`, :mod:`eval.lifespans`, :mod:`eval.named_documents`,
:mod:`eval.sections`, :mod:`eval.file_follow_ups`) ask each question of each way in turn, the ways' order
alternating from one question to the next, so that neither way always answers from the state the other left.
Those on the user's files add them to a copy of the index held in memory (:func:`with_files`) and grade
each answer the same way (:func:`graded`, :func:`summary`).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence


def alternating(ways: Mapping[str, Any], questions: Sequence[str]) -> Iterator[tuple[str, str, dict[str, Any], float]]:
    """Each of ``questions`` answered with each way's context (``ways``: name → context), the ways in
    their order for the first question, reversed for the second, and so on: (question, way, the graph's
    output, milliseconds)."""
    from graph import graph

    names = list(ways)
    for i, question in enumerate(questions):
        for way in (names if i % 2 == 0 else names[::-1]):
            start = time.perf_counter()
            out = graph.invoke({"question": question}, context=ways[way])
            yield question, way, out, (time.perf_counter() - start) * 1000


def checked_report(ctx: Any, questions: Sequence[str]) -> str:
    """Each of ``questions`` asked once, default settings, no query cache: each answer (as given, or as withheld),
    the check's decision and by what, and whether a passage holds it (cited); then how many of each decision.
    Right and wrong are not scored: these comparisons' answers are read by hand (:mod:`eval.ages`,
    :mod:`eval.places`)."""
    from dataclasses import replace

    lines, by = [], []
    for question, _, out, ms in alternating({"default": replace(ctx, query_cache=None)}, questions):
        check = out["trace"].get("answerability") or {}
        by.append(f"{check.get('decision')} by {check.get('by')}")
        lines.append(checked_line(question, out, ms))
    lines += [f"{decision}: {by.count(decision)} of {len(by)}" for decision in sorted(set(by))]
    return "\n".join(lines)


def checked_line(question: str, out: Mapping[str, Any], ms: float, width: int = 60, searched: str = "") -> str:
    """One answer as these comparisons show it: the question, the answer as given or as withheld (``width``
    characters), the check's decision and by what, whether a passage holds it (cited), ``searched`` (what else to
    say), and the time."""
    check = out["trace"].get("answerability") or {}
    shown = check.get("withheld_answer") or out["answer"]
    return (f"{question!r}: {shown[:width]!r} ({check.get('decision')} by {check.get('by')}, "
            f"{'cited' if out['citations'] else 'not cited'}{searched}, {ms:.0f} ms)")


def add_resource_options(parser: argparse.ArgumentParser) -> None:
    """``--index`` and ``--model``, as :func:`loaded` takes them."""
    parser.add_argument("--index", type=Path, help="the index (default: the Wikipedia summaries' in the cache folder)")
    parser.add_argument("--model", help="the generator (default: the default model)")


def loaded(index: Path | None, model: str | None) -> Any:
    """The graph's context on ``index`` and ``model`` (each ``None``: the default), the default pipeline, the
    generator warm."""
    from pipeline.configuration import PipelineConfig
    from pipeline.context import RAGContext, ResourceConfig

    resources = {k: v for k, v in {"index_dir": index, "model": model}.items() if v is not None}
    ctx = RAGContext.load(ResourceConfig(**resources), PipelineConfig())
    ctx.generator.warm_up()
    return ctx


def with_files(index: Any, embedder: Any, folder: Path, files: Mapping[str, str],
               read: Callable[[Any], Any] | None = None) -> Any:
    """A copy of ``index`` in memory (the index on disk is not touched) holding ``files`` too (name →
    text, written to ``folder``), each document passed through ``read`` first where it is given."""
    from components.ingest import ingest
    from components.sources import folder_documents

    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    copy = index.copy()
    ingest((read(doc) if read else doc for doc in folder_documents(folder)), copy, embedder)
    return copy


def graded(out: Mapping[str, Any], holds: str, expected: Sequence[str]) -> dict[str, Any]:
    """An answer (the graph's output) graded: ``holds``, the evidence the model read holds the phrase
    ``holds`` (never for ""); ``given``, the check gave the answer; ``right``, given and holding one of
    ``expected`` (lower case)."""
    trace = out["trace"]
    given = (trace.get("answerability") or {}).get("decision") == "answer"
    return {"answer": out["answer"], "holds": bool(holds) and holds in (trace.get("context") or ""),
            "right": given and any(e in out["answer"].lower() for e in expected), "given": given}


def verdict(row: Mapping[str, Any]) -> str:
    return "right" if row["right"] else "given" if row["given"] else "withheld"


def answer_line(row: Mapping[str, Any], width: int) -> str:
    """One :func:`graded` answer to a question, for a report: its way (``width`` wide), time, question and answer."""
    return (f"{row['way']:{width}} {row['ms']:6.0f} ms  {row['question']!r}: {row['answer'][:70]!r} "
            f"(evidence {'holds' if row['holds'] else 'lacks'} it; {verdict(row)})")


def run_on_files(description: str | argparse.ArgumentParser, argv: Sequence[str] | None,
                 report: Callable[[Any, Path], str]) -> int:
    """A comparison's command (``description``, or a parser of its own that already has them): ``--index``
    and ``--model`` (:func:`add_resource_options`), then ``report(context, folder)`` printed, ``folder`` a
    temporary one for the files it adds."""
    import tempfile

    parser = description
    if isinstance(parser, str):
        parser = argparse.ArgumentParser(description=parser)
        add_resource_options(parser)
    args = parser.parse_args(argv)
    ctx = loaded(args.index, args.model)
    with tempfile.TemporaryDirectory() as folder:
        print(report(ctx, Path(folder)))
    return 0


def summary(rows: Sequence[Mapping[str, Any]]) -> str:
    """What :func:`graded` rows come to: how often the evidence held the answer, how many were right and
    given, how many others were given."""
    return (f"the evidence holds the answer for {sum(r['holds'] for r in rows)} of {len(rows)}, "
            f"{sum(r['right'] for r in rows)} right and given, {sum(r['given'] and not r['right'] for r in rows)} "
            f"other answers given")


def written_questions_records(questions: Path, systems: str,
                              variants: Mapping[str, Callable[[], None]] | None = None) -> Iterator[dict[str, Any]]:
    """Questions written down with their accepted answers before anything was run (``questions``: JSON lines with
    ``question`` and ``gold``), answered against the Wikipedia summaries (as NQ-open is) by each of ``systems``
    (benchmark system names, comma-separated), side by side, each question from the same warm state, the
    instruction prefixes pinned first as the benchmark does: one record per answer. An answer is right when it
    contains an accepted answer (case aside); ``set_aside``: the answers a rule set aside to read on
    (``extend_after_rule``). How sessions 87 and 88 judged a rule by a bar written first
    (``docs/results/rule-extension-s87``, ``docs/results/narrowed-superlatives-s88``).

    ``variants``: ways of the code that are no setting (name → what puts it in place, the shipped one first), each
    system answering each question once in each; the record names it (``variant``), and the first is put back
    at the end (``docs/results/part-of-a-country-s88``)."""
    from eval.contexts import load_run_context
    from eval.datasets import Example
    from eval.runner import pinned_prefixes, run_one
    from eval.systems import select

    written = [json.loads(line) for line in questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    examples = [Example(f"q{n}", q["question"], tuple(q["gold"]), "nq") for n, q in enumerate(written)]
    ctx = load_run_context(argparse.Namespace(dataset="nq", split="dev", data_dir=None, model=None,
                                              embedder_runtime="auto"))
    chosen = select(systems, None)
    for system in chosen:  # the instruction prefixes pinned, as the benchmark does before its first timed query
        run_one(ctx, system, examples[0])
    ways = variants or {"": lambda: None}
    for example in examples:
        pins = pinned_prefixes(ctx)
        for system in chosen:
            for variant, put in ways.items():
                put()
                record = run_one(ctx, system, example, pins)
                yield {**({"variant": variant} if variants else {}), **written_record(system.name, example, record)}
    next(iter(ways.values()))()


def written_record(system: str, example: Any, record: Mapping[str, Any]) -> dict[str, Any]:
    """What :func:`written_questions_records` keeps of a benchmark record."""
    check = record.get("answerability") or {}
    return {"system": system, "question": example.question, "gold": list(example.answers),
            "answer": record["prediction"],
            "right": any(g.lower() in record["prediction"].lower() for g in example.answers),
            "given": bool(record["prediction"]), "by": check.get("by"), "reason": check.get("reason"),
            "escalations": record["escalations"], "evaluated": record["prompt_tokens_evaluated"],
            "set_aside": [s.get("answer") for s in record["steps"] if s.get("extended_by") == "rule"]}


def rule_readings(rev: str, name: str = "ranked_below", module: str = "nodes.check_answer",
                  shipped: str = "as-is") -> dict[str, Callable[[], None]]:
    """Two ``variants`` for :func:`written_questions_records`: ``module``'s function ``name`` as the code is now
    (``shipped``) and as it was at commit ``rev`` (its source read with git, loaded beside the package), each put in
    its place in the module for its turn, the one at ``rev`` called with only the keywords it takes
    (:func:`keywords_it_takes`). How a rule's change is judged against the rule before it, side by side
    (``docs/results/titled-folded-s89``)."""
    import importlib

    now = importlib.import_module(module)  # the module (a package may give a function the module's name)
    then = module_at(rev, module)
    return {label: (lambda f=f: setattr(now, name, f))
            for label, f in {shipped: getattr(now, name), rev: keywords_it_takes(getattr(then, name))}.items()}


def module_at(rev: str, module: str = "nodes.check_answer") -> Any:
    """``module`` as it was at commit ``rev``: its source read with git and loaded beside the package, under a name
    of its own (``check_answer_<rev>``), so that a rule can be read both ways in one process
    (:func:`rule_readings`, ``docs/results/narrowed-superlatives-s88/replay.py``)."""
    import importlib.util
    import subprocess
    import tempfile

    source = subprocess.run(["git", "show", f"{rev}:{module.replace('.', '/')}.py"], check=True, capture_output=True,
                            text=True).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as file:
        file.write(source)
    spec = importlib.util.spec_from_file_location(f"{module.rsplit('.', 1)[-1]}_{rev}", file.name)
    assert spec is not None and spec.loader is not None
    then = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(then)
    return then


def keywords_it_takes(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, called with only the keyword arguments it takes: a rule as it was at an earlier commit, called
    as the code calls it now (session 89's ``index=`` to the rank rule)."""
    import functools
    import inspect

    takes = inspect.signature(function).parameters

    @functools.wraps(function)
    def called(*args: Any, **kwargs: Any) -> Any:
        return function(*args, **{k: v for k, v in kwargs.items() if k in takes})

    return called


def print_rule_records(here: Path, rev: str, shipped: str, development: Sequence[str] = (),
                       argv: Sequence[str] = ()) -> None:
    """A rule's change judged on questions written first: ``here``'s ``questions.jsonl`` (with ``--development`` in
    ``argv``, those of the results folders ``development`` beside it instead) answered by the cascade with the rule
    as it is (``shipped``) and as it was at ``rev`` (:func:`rule_readings`), side by side; one JSON line per answer
    on standard output. How session 89's bars ran (``docs/results/first-elsewhere-s89/run.py``)."""
    import sys
    import tempfile

    questions = here / "questions.jsonl"
    if "--development" in argv:
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as together:
            for name in development:
                together.write((here.parent / name / "questions.jsonl").read_text(encoding="utf-8"))
        questions = Path(together.name)
    for record in written_questions_records(questions, "cascade", rule_readings(rev, shipped=shipped)):
        print(json.dumps(record, ensure_ascii=False), flush=True)
    print("done", file=sys.stderr)
