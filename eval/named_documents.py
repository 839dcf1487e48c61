"""Questions that name one of the user's files, answered with ``named_documents`` on and off, side by side.

With it on (:func:`nodes.retrieve.named_documents`), "What does the handbook say about holidays?"
searches the handbook the user added; off, it searches the whole index, where the Wikipedia summary of
"Holiday" outranks the handbook. The three files below are added to a copy of the index held in memory
(nothing is saved), and each question is answered both ways from one loaded context, with no query
cache, the two in alternating order. A row says whether the evidence the model read holds the sentence
that answers (``holds``), and whether the answer holds the words expected and was given (``right``).

    python -m eval.named_documents                  # the Wikipedia summaries' index and the default model
    python -m eval.named_documents --index PATH --model M

The files and questions were written in session 61 before the first run; they compare the two ways on
one machine, and are no benchmark.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple, Sequence

FILES = {
    "handbook.md": """# Staff handbook of the Quillfeather Bakery

The Quillfeather Bakery opens at 6 a.m. every day except Sunday, when it opens at 8 a.m.
Every baker works a shift of eight hours, with a paid break of thirty minutes.
The manager is Ruth Okafor.

Staff receive 28 days of paid holiday a year. Holiday requests go to the manager at least two weeks ahead.

Ovens are cleaned every Friday after closing. Anyone who burns themselves reports it in the accident book by the till.
""",
    "lease.md": """# Tenancy agreement for 14 Larch Road

The rent is 950 pounds a month, paid on the first day of each month.
The tenant pays a deposit of 1,100 pounds, held in a government-backed deposit scheme.

No pets may be kept at the property without the landlord's written consent.
The landlord repairs the boiler, the roof and the drains; the tenant replaces light bulbs and fuses.
Either party may end the tenancy with two months' written notice.
""",
    "minutes.md": """# Minutes: Riverside Allotment Society, March meeting

The committee agreed a budget of 400 pounds for new fencing along the river path.
Water will be turned on at the standpipes from the first of April.
Plot 12 is offered to Priya Shah, first on the waiting list.
The next meeting is on the second Tuesday of May at the village hall.
""",
}


class Case(NamedTuple):
    question: str
    holds: str  # a phrase of the sentence that answers
    expected: tuple[str, ...]  # any of these in the answer makes it right (lower case)


CASES = (
    Case("What does the handbook say about holidays?", "28 days of paid holiday", ("28 days", "two weeks")),
    Case("What does the handbook say about safety?", "accident book", ("accident book", "ovens", "friday")),
    Case("According to the handbook, when does the bakery open on Sundays?", "when it opens at 8", ("8 a.m", "8 am", "8:00")),
    Case("Who is the manager in the handbook?", "The manager is Ruth Okafor", ("okafor",)),
    Case("What does the lease say about pets?", "No pets may be kept", ("consent", "no pets", "not")),
    Case("How much is the deposit in the lease?", "deposit of 1,100", ("1,100", "1100")),
    Case("What does the tenancy agreement say about repairs?", "The landlord repairs", ("boiler", "landlord")),
    Case("How much notice does the lease require?", "two months' written notice", ("two months", "2 months")),
    Case("What did the minutes say about water?", "Water will be turned on", ("april",)),
    Case("What budget was agreed in the minutes?", "budget of 400 pounds", ("400",)),
    Case("When is the next meeting according to the minutes?", "second Tuesday of May", ("tuesday", "may")),
    Case("What does the document say about rent?", "The rent is 950 pounds", ("950",)),
)


def with_files(ctx: Any, folder: Path) -> Any:
    """``ctx`` with a copy of its index in memory holding :data:`FILES` too (written to ``folder``)."""
    from eval import side_by_side

    return replace(ctx, index=side_by_side.with_files(ctx.index, ctx.embedder, folder, FILES), query_cache=None)


def compare(ctx: Any, cases: Sequence[Case] = CASES) -> list[dict[str, Any]]:
    """Each question answered with the setting on and off (alternating which goes first): a row per answer."""
    from eval.side_by_side import alternating, graded

    ways = {"named": replace(ctx, pipeline=replace(ctx.pipeline, named_documents=True)),
            "whole index": replace(ctx, pipeline=replace(ctx.pipeline, named_documents=False))}
    by_question = {case.question: case for case in cases}
    rows = []
    for question, way, out, ms in alternating(ways, list(by_question)):
        case = by_question[question]
        rows.append({"question": question, "way": way, "ms": ms, **graded(out, case.holds, case.expected),
                     "named": [d["title"] for d in out["trace"].get("named_documents") or []]})
    return rows


def report(rows: Sequence[dict[str, Any]]) -> str:
    from eval.side_by_side import answer_line, summary

    lines = [answer_line(r, 11) for r in rows]
    lines += [f"{way}: {summary([r for r in rows if r['way'] == way])}" for way in ("named", "whole index")]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from eval.side_by_side import run_on_files

    return run_on_files(__doc__.split("\n\n")[0], argv, lambda ctx, folder: report(compare(with_files(ctx, folder))))


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
