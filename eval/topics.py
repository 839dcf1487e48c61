"""Requests that ask of a subject as a whole, on the Wikipedia summaries: summarized, or answered as questions.

"Summarize the rules of cricket", "Explain how vaccines work", "How does the heart work?": before session 65
they went down the question path, which reads the few sentences nearest the request and asks the model for
as few words as possible, and the check withheld 10 of the 12 of :data:`OF_A_SUBJECT`. Since then the
subject's own document, when retrieval finds it, is summarized (:func:`components.requests.subject_of`,
:func:`components.titles.title_match`). This asks the 12, each of whose subject is an article of the summaries,
and 6 (:data:`NO_ARTICLE`) whose subject none is, which must not be summarized from another article
("How do hurricanes work?" must not read "Hurricane Katrina"); then requests for facts about a subject
(:data:`FACTS`, :data:`FACTS_NO_ARTICLE`), with no query cache. The requests were written before the first
run of each list (``runs/preregistered-s65.md``).

    python -m eval.topics                    # the Wikipedia summaries' index and the default model (~2.5 min)
    python -m eval.topics --index PATH --model M

A request of :data:`OF_A_SUBJECT` is counted right when it is a summary of the article named beside it,
given, and every sentence of it held by the passages it read (the trace's ``supported``). A small
comparison on one machine, not a benchmark.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace
from typing import Any, Sequence

OF_A_SUBJECT: tuple[tuple[str, str], ...] = (
    ("Summarize the rules of cricket", "Cricket"), ("Explain how vaccines work", "Vaccine"),
    ("Give me an overview of the history of the Roman Empire", "Roman Empire"),
    ("How does the Internet work?", "Internet"), ("How does the heart work?", "Heart"),
    ("Tell me about the life of Albert Einstein", "Albert Einstein"), ("Explain the rules of chess", "Chess"),
    ("Describe the history of Japan", "Japan"), ("How do refrigerators work?", "Refrigerator"),
    ("Explain the basics of democracy", "Democracy"), ("How does a steam engine work?", "Steam engine"),
    ("Summarize the history of the Ottoman Empire", "Ottoman Empire"),
)
"""Requests whose subject is an article of the Wikipedia summaries, and that article's title."""
NO_ARTICLE: tuple[str, ...] = (
    "Explain how blockchain works", "Summarize the rules of quidditch", "How does the stock market work?",
    "Explain the basics of quantum computing", "How do hurricanes work?", "Explain how cryptocurrency works",
)
"""Requests whose subject no article of the Wikipedia summaries is."""
FACTS: tuple[tuple[str, str], ...] = (
    ("Give me three facts about Mars", "Mars"), ("Tell me some interesting facts about octopuses", "Octopus"),
    ("What are some facts about the Moon?", "Moon"), ("Give me five facts about Leonardo da Vinci", "Leonardo da Vinci"),
)
"""Requests for facts about a subject an article of the summaries is (session 65, written before their first run)."""
FACTS_NO_ARTICLE: tuple[str, ...] = ("Give me three facts about blockchain",)


def ask(ctx: Any) -> list[dict[str, Any]]:
    """Every request, a row each: what was summarized, the answer, whether it was given and held, the time."""
    from graph import graph

    ctx = replace(ctx, query_cache=None)
    rows = []
    asked = [*((q, a, "of a subject") for q, a in OF_A_SUBJECT), *((q, None, "no article") for q in NO_ARTICLE),
             *((q, a, "facts") for q, a in FACTS), *((q, None, "facts, no article") for q in FACTS_NO_ARTICLE)]
    for question, article, group in asked:
        started = time.perf_counter()
        out = graph.invoke({"question": question}, context=ctx)
        trace = out["trace"]
        rows.append({"question": question, "article": article, "group": group, "answer": out["answer"],
                     "summarized": [d["title"] for d in (trace.get("summarized") or {}).get("documents", [])],
                     "given": not trace.get("abstained"), "held": bool(trace.get("supported")),
                     "ms": (time.perf_counter() - started) * 1000})
    return rows


def right(row: dict[str, Any]) -> bool:
    """A summary of the article named beside the request, given, and held by its citations."""
    return row["summarized"] == [row["article"]] and row["given"] and row["held"]


def report(rows: Sequence[dict[str, Any]]) -> str:
    lines = [f"{r['question']!r}: {'summary of ' + ' and '.join(r['summarized']) if r['summarized'] else 'as a question'}, "
             f"{'given' if r['given'] else 'withheld'}{', held' if r['held'] else ''}: {r['answer'][:80]!r}" for r in rows]
    for group in dict.fromkeys(r["group"] for r in rows):
        mine = [r for r in rows if r["group"] == group]
        summarized, given = sum(bool(r["summarized"]) for r in mine), sum(r["given"] for r in mine)
        counted = (f"{sum(map(right, mine))} of {len(mine)} summaries of the article named, given and held; "
                   f"{summarized} summarized" if mine[0]["article"] else f"{summarized} of {len(mine)} summarized")
        lines.append(f"{group}: {counted}, {given} given; median {statistics.median(r['ms'] for r in mine):.0f} ms")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from eval.side_by_side import add_resource_options, loaded

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_resource_options(parser)
    args = parser.parse_args(argv)
    print(report(ask(loaded(args.index, args.model))))
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
