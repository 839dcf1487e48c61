"""Requests to summarize a document, answered with ``summarize`` on and off, side by side.

With it on (:mod:`nodes.summarize`), "Summarize the kettle manual" is answered by a summary prompt over the
manual's passages in its order; off, it goes down the question path as releases before session 63 did (the
few sentences nearest the request, an answer in as few words as possible, and the check). Five files (the
three with sections of :mod:`eval.sections`, the lease and the minutes of :mod:`eval.named_documents`) are
added to a copy of the index held in memory (nothing is saved), and each request is answered both ways from
one loaded context, with no query cache, the two in alternating order. A row says whether the answer was
given, which of the document's key facts it states (any of a fact's phrases, lower case), whether it is held
by the passages it cites, and its time and tokens.

    python -m eval.summaries                  # the Wikipedia summaries' index and the default model
    python -m eval.summaries --index PATH --model M
    python -m eval.summaries --long-file      # and a 1,540-token file: ten Wikipedia summaries under headings

The requests and key facts were written in session 63 before the first run; they compare the two ways on
one machine, and are no benchmark.
"""

from __future__ import annotations

import statistics
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple, Sequence


class Request(NamedTuple):
    request: str
    facts: tuple[tuple[str, ...], ...]  # each fact: any of these phrases in the summary states it (lower case)


KETTLE = (("descal", "once a month"), ("damp cloth", "dishwasher"), ("two years", "2 years", "warranty"))
CLUB = (("two at a time", "two guests", "sign"), ("yard", "radio"), ("180", "half"))
BAKERY = (("sick", "doctor", "7 a.m"), ("jacket", "uniform"), ("last friday", "overtime", "wages"))
LEASE = (("950", "rent"), ("deposit", "1,100"), ("pet",), ("boiler", "repair"), ("two months", "notice"))
MINUTES = (("400", "fencing"), ("water", "april"), ("plot 12", "priya"), ("second tuesday", "may"))

REQUESTS = (
    Request("Summarize the kettle manual", KETTLE),
    Request("Sum up the sailing club rules", CLUB),
    Request("Give me an overview of the bakery handbook", BAKERY),
    Request("What is the lease about?", LEASE),
    Request("Summarize the minutes", MINUTES),
    Request("What are the main points of the tenancy agreement?", LEASE),
    Request("Can you summarize the allotment society minutes?", MINUTES),
    Request("Summarize the Eiffel Tower", (("paris",), ("gustave eiffel", "eiffel's company"), ("1887", "1889"))),
)


def files() -> dict[str, str]:
    """The five files the requests name."""
    from eval import named_documents, sections

    return {**sections.FILES, **{name: named_documents.FILES[name] for name in ("lease.md", "minutes.md")}}


def graded(out: dict[str, Any], facts: Sequence[Sequence[str]]) -> dict[str, Any]:
    """A request's answer (the graph's output) graded: given (no abstention), the facts it states, held by
    its citations, and its tokens."""
    trace = out["trace"]
    given = not trace.get("abstained")
    text = out["answer"].lower()
    stated = sum(1 for phrases in facts if given and any(p in text for p in phrases))
    return {"answer": out["answer"], "given": given, "stated": stated, "facts": len(facts),
            "held": bool(trace.get("supported")) and given, "summarized": bool(trace.get("summarized")),
            "evaluated": trace.get("prompt_tokens_evaluated"), "output": trace.get("output_tokens")}


def compare(ctx: Any, folder: Path, requests: Sequence[Request] = REQUESTS) -> list[dict[str, Any]]:
    """Each request answered both ways (alternating which goes first): a row per answer."""
    from eval.side_by_side import alternating, with_files

    index = with_files(ctx.index, ctx.embedder, folder, files())
    base = replace(ctx, index=index, query_cache=None)
    ways = {"summarize": base.with_pipeline(summarize=True), "question": base.with_pipeline(summarize=False)}
    by_request = {r.request: r for r in requests}
    return [{"request": request, "way": way, "ms": ms, **graded(out, by_request[request].facts)}
            for request, way, out, ms in alternating(ways, list(by_request))]


def report(rows: Sequence[dict[str, Any]]) -> str:
    lines = []
    for r in rows:
        lines.append(f"{r['way']:9} {r['ms'] / 1000:5.1f} s  given={r['given']!s:5} facts {r['stated']}/{r['facts']} "
                     f"held={r['held']!s:5} | {r['request']} → {r['answer'][:160]}")
    for way in ("summarize", "question"):
        mine = [r for r in rows if r["way"] == way]
        coverage = statistics.fmean(r["stated"] / r["facts"] for r in mine)
        lines.append(f"{way}: {sum(r['given'] for r in mine)} of {len(mine)} given, {sum(r['held'] for r in mine)} held by "
                     f"their citations, {sum(r['summarized'] for r in mine)} summarized; key facts stated "
                     f"{coverage:.2f} on average; median {statistics.median(r['ms'] for r in mine) / 1000:.1f} s")
    return "\n".join(lines)


LONG_FILE_ARTICLES = ("Volcano", "Earthquake", "Tsunami", "Plate tectonics", "Mountain", "Glacier", "River", "Desert",
                      "Ocean", "Lake")


def long_file() -> str:
    """A file longer than ``summarize_tokens``: the bundled summaries of :data:`LONG_FILE_ARTICLES`, each under
    its heading."""
    from components.sources import wikipedia_summaries

    found = {d.title: d for d in wikipedia_summaries() if d.title in LONG_FILE_ARTICLES}
    return "# Field notes on the Earth\n\n" + "\n\n".join(
        f"## {title}\n\n" + "\n\n".join(str(getattr(p, "text", p)) for p in found[title].paragraphs)
        for title in LONG_FILE_ARTICLES if title in found)


def long_report(ctx: Any, folder: Path) -> str:
    """The long file summarized three times (the first evaluates the prompt; the others reuse it)."""
    import time

    from eval.side_by_side import with_files
    from graph import graph

    text = long_file()
    base = replace(ctx, index=with_files(ctx.index, ctx.embedder, folder, {"field_notes.md": text}), query_cache=None)
    lines = [f"field_notes.md: {ctx.generator.count_tokens(text)} tokens"]
    for request in ("Summarize the field notes", "Give me an overview of the field notes", "What are the field notes about?"):
        start = time.perf_counter()
        out = graph.invoke({"question": request}, context=base)
        trace, read = out["trace"], out["trace"].get("summarized") or {}
        lines.append(f"{time.perf_counter() - start:5.1f} s  read {read.get('passages_read')} of {read.get('passages')} "
                     f"passages; {trace.get('prompt_tokens_evaluated')} of {trace.get('prompt_tokens')} prompt tokens "
                     f"evaluated, {trace.get('output_tokens')} written; held={trace.get('supported')} | {request} → "
                     f"{out['answer'][:300]!r}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    from eval.side_by_side import add_resource_options, run_on_files

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_resource_options(parser)
    parser.add_argument("--long-file", action="store_true", help="also summarize a file longer than summarize_tokens")
    long = parser.parse_args(argv).long_file
    return run_on_files(parser, argv, lambda ctx, folder: report(compare(ctx, folder))
                        + (f"\n{long_report(ctx, folder)}" if long else ""))


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
