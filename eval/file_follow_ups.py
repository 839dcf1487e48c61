"""A follow-up after a question that named one of the user's files: does it stay in the file?

"What does the handbook say about holidays?" searches the handbook (:func:`nodes.retrieve.named_documents`);
the follow-up "Who is the manager?" names no file, and searched the whole index, where Wikipedia's
managers outrank the handbook's. Retrieval now keeps a follow-up in the files the question before it
searched when their best passage is at least ``follow_up_file_score`` close to it (cosine), and searches
the whole index otherwise: "When did Napoleon die?" after the handbook is a new topic.

    python -m eval.file_follow_ups fit        # the bar, from FIT: the files of eval.named_documents (~20 s)
    python -m eval.file_follow_ups compare    # HELD_OUT through the graph, the carry on and off (~4 min)

Both sets were written in session 62 before the first run: ``FIT`` chose the bar
(:attr:`pipeline.configuration.PipelineConfig.follow_up_file_score`), ``HELD_OUT`` (other files, those of
:mod:`eval.sections`) reports it. A small hand-written set, no benchmark.

Since session 69 a question asked first that names no file searches only the user's files when one of their
passages is near it (``file_first_score``, :func:`nodes.retrieve.near_files`). The same sets measure it, each
question asked first with all of a set's files in the index:

    python -m eval.file_follow_ups fit-first       # the bar, from FIT, against all three files (~20 s)
    python -m eval.file_follow_ups compare-first   # HELD_OUT's follow-ups asked first, through the graph, on and off
    python -m eval.file_follow_ups general         # NQ-open dev questions the six files would take from the index
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple, Sequence

TOPIC_CHANGES = (
    "When did Napoleon die?", "What is the capital of France?", "Who wrote Hamlet?", "What is photosynthesis?",
    "Who painted the Mona Lisa?", "How tall is Mount Everest?", "What is the speed of light?",
    "Who discovered penicillin?", "When did World War II end?", "What language is spoken in Brazil?",
)
"""Questions on a new topic, asked after a question that named a file (in FIT, after each of the three)."""


class Follow(NamedTuple):
    file: str  # the file the question before named
    question: str
    stays: bool  # about the file: the carry should keep it there


FIT = (
    *(Follow("handbook.md", q, True) for q in (
        "Who is the manager?", "How long is a shift?", "When does it open on Sunday?", "Is the break paid?",
        "When are the ovens cleaned?", "Where is the accident book?", "How many days of holiday do we get?")),
    *(Follow("lease.md", q, True) for q in (
        "How much is the rent?", "Can I keep a cat?", "Who fixes the boiler?", "How much is the deposit?",
        "How do I end the tenancy?", "When is the rent due?")),
    *(Follow("minutes.md", q, True) for q in (
        "Who got plot 12?", "When is the water turned on?", "How much was agreed for fencing?",
        "Where is the next meeting?")),
    *(Follow(f, q, False) for f in ("handbook.md", "lease.md", "minutes.md") for q in TOPIC_CHANGES),
    Follow("handbook.md", "Who invented the oven?", False), Follow("handbook.md", "What is sourdough?", False),
    Follow("lease.md", "What is a mortgage?", False), Follow("minutes.md", "What is an allotment?", False),
)
"""Follow-ups written before the bar was chosen, on :data:`eval.named_documents.FILES`: about the file
the question before named, or a new topic (among them four near the file's own, a general question)."""


class Conversation(NamedTuple):
    first: str  # names the file
    follow_up: str
    stays: bool
    holds: str  # a phrase of the sentence that answers the follow-up ("" for a new topic)
    expected: tuple[str, ...]  # any of these in the answer makes it right (lower case)


HELD_OUT = (
    Conversation("What does the bakery handbook say about sick leave?", "How many jackets is each baker given?", True,
                 "three white jackets", ("three", "3")),
    Conversation("What does the handbook say about pay?", "What is the overtime rate?", True,
                 "one and a half times", ("one and a half", "1.5")),
    Conversation("What does the handbook say about uniforms?", "When are wages paid?", True,
                 "last Friday of each month", ("last friday",)),
    Conversation("What do the club rules say about guests?", "Where are the boats kept in winter?", True,
                 "kept in the yard", ("yard",)),
    Conversation("What do the rules say about boats?", "How much is the annual fee?", True,
                 "180 pounds", ("180",)),
    Conversation("What do the rules say about subscriptions?", "How many guests can a member bring?", True,
                 "two at a time", ("two", "2")),
    Conversation("What does the manual say about cleaning?", "How long is the warranty?", True,
                 "two years from purchase", ("two years", "2 years")),
    Conversation("What does the manual say about the warranty?", "Can it go in the dishwasher?", True,
                 "never put it in the dishwasher", ("no", "never", "not")),
    Conversation("What does the handbook say about pay?", "When did Napoleon die?", False, "", ("1821",)),
    Conversation("What do the club rules say about guests?", "Who wrote Pride and Prejudice?", False, "", ("austen",)),
    Conversation("What does the manual say about cleaning?", "What is the largest ocean?", False, "", ("pacific",)),
    Conversation("What does the handbook say about uniforms?", "Who painted The Starry Night?", False, "", ("gogh",)),
    Conversation("What do the rules say about boats?", "What is the capital of Japan?", False, "", ("tokyo",)),
    Conversation("What does the manual say about the warranty?", "Who invented the telephone?", False, "", ("bell",)),
)
"""Two-turn conversations on :data:`eval.sections.FILES`, written before the bar was chosen: the first
question names a file; the follow-up is about the file, or a new topic."""


def file_passages(files: dict[str, str], embedder: Any) -> dict[str, tuple[list[Any], Any]]:
    """Each file's passages as ingest chunks it, with their vectors as retrieval embeds them (the passage's
    :attr:`~components.passages.Passage.embedding_text`)."""
    from components.passages import chunk_document
    from components.sources import read_file

    read = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, text in files.items():
            (Path(folder) / name).write_text(text, encoding="utf-8")
            passages = list(chunk_document(read_file(Path(folder) / name)))  # type: ignore[arg-type]
            read[name] = (passages, embedder.embed_documents([p.embedding_text for p in passages]))
    return read


def file_scores(files: dict[str, str], follows: Sequence[Follow], embedder: Any, first: bool = False) -> list[float]:
    """Each follow-up's best cosine with a passage of the file the question before named, as retrieval
    scores it (:func:`file_passages`; the follow-up as written); with ``first``, asked first, with a passage of any
    of the files (``file_first_score``: :func:`fit`)."""
    read = file_passages(files, embedder)
    return [float(max((read[name][1] @ embedder.embed_query(f.question)).max() for name in (files if first else [f.file])))
            for f in follows]


def chosen_bar(scores: Sequence[float], stays: Sequence[bool]) -> tuple[float, int]:
    """The bar that keeps in the file the most follow-ups about it and lets the most new topics out (a
    follow-up stays when its score is at least the bar), and how many it gets right; of bars equally
    right, the middle of the widest gap between two scores."""
    ordered = sorted(scores)
    candidates = [((a + b) / 2, b - a) for a, b in zip(ordered, ordered[1:], strict=False) if b > a]
    candidates += [(ordered[0] - 1e-6, 0.0), (ordered[-1] + 1e-6, 0.0)]

    def right(bar: float) -> int:
        return sum((s >= bar) == stay for s, stay in zip(scores, stays, strict=True))

    bar, _ = max(candidates, key=lambda c: (right(c[0]), c[1]))
    return bar, right(bar)


def fit(embedder: Any, first: bool = False) -> str:
    """The bar ``follow_up_file_score`` by :func:`chosen_bar` on FIT, each follow-up scored against the file the
    question before named; with ``first``, ``file_first_score``: each asked first, against all three files."""
    from eval.named_documents import FILES

    scores = file_scores(FILES, FIT, embedder, first)
    bar, right = chosen_bar(scores, [f.stays for f in FIT])
    rows = sorted(zip(scores, FIT, strict=True), key=lambda r: -r[0])
    lines = [f"{s:.3f} {'about the file' if f.stays else 'new topic':14} {f.file:12} {f.question}" for s, f in rows]
    lines.append(f"bar {bar:.3f}: {right} of {len(FIT)} right "
                 f"({sum(s >= bar for s, f in rows if f.stays)} of {sum(f.stays for f in FIT)} about the file "
                 f"{'sent to the files' if first else 'kept in it'}, "
                 f"{sum(s < bar for s, f in rows if not f.stays)} of {sum(not f.stays for f in FIT)} new topics let out)")
    return "\n".join(lines)


def with_files(ctx: Any, folder: Path) -> Any:
    """``ctx`` with a copy of its index in memory holding :data:`eval.sections.FILES` too, and no query cache."""
    from eval import side_by_side
    from eval.sections import FILES

    return replace(ctx, index=side_by_side.with_files(ctx.index, ctx.embedder, folder, FILES), query_cache=None)


def compare(ctx: Any, conversations: Sequence[Conversation] = HELD_OUT) -> list[dict[str, Any]]:
    """Each conversation held twice, the follow-up answered with the carry on and off
    (``follow_up_file_score`` None), the two in alternating order, each in a thread of its own: a row per follow-up."""
    from langgraph.checkpoint.memory import InMemorySaver

    from eval.side_by_side import graded
    from graph.builder import build_graph

    graph = build_graph().compile(checkpointer=InMemorySaver())
    alone = replace(ctx, pipeline=replace(ctx.pipeline, file_first_score=None))  # the carry alone, as session 62 ran it
    ways = {"carried": alone, "not carried": replace(alone, pipeline=replace(alone.pipeline, follow_up_file_score=None))}
    rows = []
    for i, case in enumerate(conversations):
        for way in (list(ways) if i % 2 == 0 else list(ways)[::-1]):
            thread = {"configurable": {"thread_id": f"{i}-{way}"}}
            graph.invoke({"question": case.first}, thread, context=ways[way])
            out = graph.invoke({"question": case.follow_up}, thread, context=ways[way])
            rows.append({"follow_up": case.follow_up, "way": way, "stays": case.stays,
                         "in_file": bool(out["trace"].get("named_documents")), **graded(out, case.holds, case.expected)})
    return rows


def compare_first(ctx: Any, conversations: Sequence[Conversation] = HELD_OUT) -> list[dict[str, Any]]:
    """Each follow-up of ``conversations`` asked first, in a thread of its own, with the user's files read first
    (``file_first_score``) and not (None), the two in alternating order: a row per question and way."""
    from eval.side_by_side import alternating, graded

    ways = {"files first": ctx, "whole index": replace(ctx, pipeline=replace(ctx.pipeline, file_first_score=None))}
    cases = {case.follow_up: case for case in conversations}
    return [{"follow_up": question, "way": way, "stays": cases[question].stays,
             "in_file": bool(out["trace"].get("named_documents")),
             **graded(out, cases[question].holds, cases[question].expected)}
            for question, way, out, _ in alternating(ways, list(cases))]


def sent_to_files(embedder: Any, questions: Sequence[str], bar: float) -> tuple[int, list[tuple[float, str]]]:
    """How many of ``questions`` (general knowledge, asked first) retrieval would send to the files of
    :data:`eval.named_documents.FILES` and :data:`eval.sections.FILES` (:func:`nodes.retrieve.near_files`): a passage
    of theirs scores at least ``bar``, and the files with such a passage hold every name the question gives
    (:func:`nodes.retrieve.given_names`); with the questions sent, best score first. (Retrieval reads only the
    passages among the question's ``k`` best of all the files: where more than ``k`` score at least ``bar``, a file
    counted here may be left out there.)"""
    from components.reranker import folded_words
    from eval.named_documents import FILES as NAMED
    from eval.sections import FILES as SECTIONS
    from nodes.retrieve import given_names

    read = file_passages({**NAMED, **SECTIONS}, embedder)
    words = {name: set().union(*(folded_words(f"{p.title} {p.text}") for p in passages))
             for name, (passages, _) in read.items()}
    sent = []
    for question in questions:
        query = embedder.embed_query(question)
        best = {name: float((vectors @ query).max()) for name, (_, vectors) in read.items()}
        near = [name for name, score in best.items() if score >= bar]
        if near and given_names(question) <= set().union(*(words[name] for name in near)):
            sent.append((max(best.values()), question))
    return len(sent), sorted(sent, reverse=True)


def report(rows: Sequence[dict[str, Any]]) -> str:
    from eval.side_by_side import verdict

    lines = [f"{r['way']:11} {'about the file' if r['stays'] else 'new topic':14} {r['follow_up']!r}: {r['answer'][:60]!r} "
             f"({'in the file' if r['in_file'] else 'whole index'}; evidence {'holds' if r['holds'] else 'lacks'} it; "
             f"{verdict(r)})" for r in rows]
    for way in dict.fromkeys(r["way"] for r in rows):
        about = [r for r in rows if r["way"] == way and r["stays"]]
        new = [r for r in rows if r["way"] == way and not r["stays"]]
        lines.append(f"{way}: about the file, the evidence holds the answer for {sum(r['holds'] for r in about)} of "
                     f"{len(about)}, {sum(r['right'] for r in about)} right and given; new topics, "
                     f"{sum(r['in_file'] for r in new)} of {len(new)} kept in the file, "
                     f"{sum(r['right'] for r in new)} right and given")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from eval.side_by_side import add_resource_options, run_on_files

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("fit", "compare", "fit-first", "compare-first", "general"),
                        help="fit: the bar, from FIT (the embedder only); compare: HELD_OUT through the graph (on "
                        "--index, with --model); fit-first, compare-first: the same for a question asked first "
                        "(file_first_score); general: how many of --limit NQ-open dev questions the files would take")
    parser.add_argument("--limit", type=int, default=500, help="general: the NQ-open dev questions read (default 500)")
    parser.add_argument("--data-dir", default=None, help="general: the benchmark data (default: ../shared/data)")
    add_resource_options(parser)
    args = parser.parse_args(argv)
    if args.what in ("compare", "compare-first"):
        way = compare if args.what == "compare" else compare_first
        return run_on_files(parser, argv, lambda ctx, folder: report(way(with_files(ctx, folder))))
    from components.embedder import Embedder

    embedder = Embedder()
    embedder.warm_up()
    if args.what == "general":
        from itertools import islice

        from eval.datasets import load
        from pipeline.configuration import PipelineConfig

        bar = PipelineConfig().file_first_score
        if bar is None:
            raise SystemExit("file_first_score is off (None): nothing is sent to the files")
        questions = [e.question for e in islice(load("nq", "dev", args.data_dir), args.limit)]
        count, sent = sent_to_files(embedder, questions, bar)
        print("\n".join(f"{score:.3f} {q}" for score, q in sent))
        share = 100 * count / len(questions)
        print(f"bar {bar:.3f}: {count} of {len(questions)} NQ-open dev questions sent to the files ({share:.1f}%)")
        return 0
    print(fit(embedder, first=args.what == "fit-first"))
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
