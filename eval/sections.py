"""Questions on Markdown files whose sentences need their section's heading, read two ways, side by side.

Under ``## Guests``, "Members may bring two at a time." says nothing of guests: only the heading does. The
reader gives each paragraph the headings it stands under, and a passage under one is titled
"<document> › <section>" (:attr:`components.passages.Passage.shown_title`) for the embedder, the reranker,
the prompt and the citations. Before session 62 a heading was a passage of its own ("Guests") and the
sentences under it carried nothing of it. Both readings of the three files below are added to copies of
the index held in memory (nothing is saved); each question is answered from each, the two in alternating
order, with no query cache. A row says whether the evidence the model read holds the sentence that
answers (``holds``), and whether the answer holds the words expected and was given (``right``).

    python -m eval.sections                  # the Wikipedia summaries' index and the default model
    python -m eval.sections --index PATH --model M

The files and questions were written in session 62 before the first run; they compare the two readings
on one machine, and are no benchmark.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator, NamedTuple, Sequence

FILES = {
    "bakery_handbook.md": """# Staff handbook of the Quillfeather Bakery

Welcome to the bakery. This handbook says how we work.

## Sick leave

Call the manager before 7 a.m. on the first day. After three days, a doctor's note is needed.

## Uniforms

Each baker is given three white jackets. They are washed by the bakery every Monday.

## Pay

Wages are paid on the last Friday of each month. Overtime is paid at one and a half times the usual rate.
""",
    "sailing_club_rules.md": """# Rules of the Harbour Sailing Club

## Guests

Members may bring two at a time. They must sign the book in the clubhouse.

## Boats

They are kept in the yard from November to March. Each one must carry a working radio.

## Subscriptions

The annual fee is 180 pounds. Members under 18 pay half.
""",
    "kettle_manual.md": """# Kettle K200 manual

## Cleaning

### Descaling

Fill with water and one sachet, boil, and leave for an hour. Do it once a month in hard-water areas.

### Outside

Wipe with a damp cloth; never put it in the dishwasher.

## Warranty

It lasts two years from purchase. Keep the receipt.
""",
}


class Case(NamedTuple):
    question: str
    holds: str  # a phrase of the sentence that answers
    expected: tuple[str, ...]  # any of these in the answer makes it right (lower case)


CASES = (
    Case("What should I do on the first day of sick leave?", "before 7 a.m.", ("7 a.m", "7 am", "call the manager")),
    Case("When is a doctor's note needed for sick leave?", "After three days", ("three days", "3 days")),
    Case("How many uniforms is each baker given?", "three white jackets", ("three", "3")),
    Case("When are the bakery's uniforms washed?", "every Monday", ("monday",)),
    Case("How many guests may a member of the sailing club bring?", "two at a time", ("two", "2")),
    Case("Where do guests of the sailing club sign in?", "sign the book", ("book", "clubhouse")),
    Case("Where are the sailing club's boats kept in winter?", "kept in the yard", ("yard",)),
    Case("What must each boat at the sailing club carry?", "working radio", ("radio",)),
    Case("How much is the sailing club's subscription?", "180 pounds", ("180",)),
    Case("What subscription do sailing club members under 18 pay?", "under 18 pay half", ("half", "90")),
    Case("How often should the Kettle K200 be descaled?", "once a month", ("once a month", "monthly", "every month")),
    Case("How do I clean the outside of the Kettle K200?", "damp cloth", ("damp cloth", "cloth")),
    Case("How long is the Kettle K200's warranty?", "two years from purchase", ("two years", "2 years")),
)


def headings_as_passages(doc: Any) -> Any:
    """``doc`` read as before session 62: each heading a paragraph of its own where its section starts, and
    the paragraphs under it without it."""
    from components.passages import SECTION_SEPARATOR, Paragraph

    def paragraphs() -> Iterator[str]:
        before: list[str] = []
        for paragraph in doc.paragraphs:
            text, section = (paragraph.text, paragraph.section) if isinstance(paragraph, Paragraph) else (paragraph, "")
            path = section.split(SECTION_SEPARATOR) if section else []
            shared = next((i for i, (a, b) in enumerate(zip(before, path, strict=False)) if a != b), min(len(before), len(path)))
            yield from path[shared:]  # the headings opened since the last paragraph
            before = path
            yield text

    return replace(doc, paragraphs=paragraphs())


def indexes(ctx: Any, folder: Path) -> dict[str, Any]:
    """Two copies of ``ctx``'s index in memory, each holding :data:`FILES` (written to ``folder``): read with
    sections, and with headings as passages."""
    from eval.side_by_side import with_files

    return {way: with_files(ctx.index, ctx.embedder, folder, FILES, read)
            for way, read in (("sections", None), ("headings", headings_as_passages))}


def heading_passages(index: Any) -> int:
    """How many of the index's passages from :data:`FILES` are a heading alone."""
    headings = {line.lstrip("#").strip() for text in FILES.values() for line in text.splitlines() if line.startswith("#")}
    return sum(1 for p in index if p.metadata.get("source") == "file" and p.text in headings)


def compare(ctx: Any, folder: Path, cases: Sequence[Case] = CASES) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Each question answered from each reading (alternating which goes first): a row per answer, and each
    reading's count of heading passages."""
    from eval.side_by_side import alternating, graded

    read = indexes(ctx, folder)
    ways = {way: replace(ctx, index=index, query_cache=None) for way, index in read.items()}
    by_question = {case.question: case for case in cases}
    rows = []
    for question, way, out, ms in alternating(ways, list(by_question)):
        case = by_question[question]
        rows.append({"question": question, "way": way, "ms": ms, **graded(out, case.holds, case.expected)})
    return rows, {way: heading_passages(index) for way, index in read.items()}


def report(rows: Sequence[dict[str, Any]], headings: dict[str, int]) -> str:
    from eval.side_by_side import answer_line, summary

    lines = [answer_line(r, 8) for r in rows]
    lines += [f"{way}: {summary([r for r in rows if r['way'] == way])}; {headings[way]} passages are a heading alone"
              for way in ("sections", "headings")]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from eval.side_by_side import run_on_files

    return run_on_files(__doc__.split("\n\n")[0], argv, lambda ctx, folder: report(*compare(ctx, folder)))


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
