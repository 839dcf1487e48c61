"""Yes/no questions on the user's files: is the verdict right, and does the check give it?

Users ask their files yes/no questions ("Can the Kettle K200 go in the dishwasher?") far more than SQuAD 2.0,
on which the check was fit, does. Sixteen such questions on the six files of :mod:`eval.named_documents` and
:mod:`eval.sections` (eight expect "yes", eight "no"), written in session 64 before the first run, are asked of
the shipped graph (the files added to a copy of the index held in memory, no query cache). A row says which
verdict the model wrote (the first word of its answer, the check's withheld one included), whether it is the
one expected, whether the check gave it, and the check's score.

    python -m eval.yes_no                    # the Wikipedia summaries' index and the default model (~1 min)
    python -m eval.yes_no --index PATH --model M

A small hand-written set for watching how the model and the check treat verdicts on one machine: no benchmark.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, NamedTuple, Sequence


class Case(NamedTuple):
    question: str
    verdict: str  # "yes" or "no"


CASES = (
    Case("Does the Quillfeather Bakery open on Sundays?", "yes"),
    Case("Is the break at the Quillfeather Bakery paid?", "yes"),
    Case("Are the ovens at the Quillfeather Bakery cleaned on Mondays?", "no"),
    Case("Can the tenant of 14 Larch Road keep a pet without the landlord's consent?", "no"),
    Case("Does the landlord of 14 Larch Road repair the boiler?", "yes"),
    Case("Is the rent for 14 Larch Road paid weekly?", "no"),
    Case("Was Plot 12 offered to Priya Shah?", "yes"),
    Case("Is the next allotment society meeting at the village hall?", "yes"),
    Case("Is a doctor's note needed after three days of sick leave at the bakery?", "yes"),
    Case("Are the bakery's uniforms washed by the bakers themselves?", "no"),
    Case("May a member of the sailing club bring three guests at a time?", "no"),
    Case("Must each boat at the sailing club carry a working radio?", "yes"),
    Case("Do sailing club members under 18 pay the full fee?", "no"),
    Case("Can the Kettle K200 go in the dishwasher?", "no"),
    Case("Does the Kettle K200's warranty last two years?", "yes"),
    Case("Should the Kettle K200 be descaled every week?", "no"),
)


def files() -> dict[str, str]:
    """The files the questions ask about: those of :mod:`eval.named_documents` and :mod:`eval.sections`."""
    from eval import named_documents, sections

    return {**named_documents.FILES, **sections.FILES}


def graded(case: Case, out: Mapping[str, Any]) -> dict[str, Any]:
    """The graph's output for ``case`` as a row: the answer shown, the verdict written (the withheld answer's
    where the check withheld it), whether it is right, whether it was given, and the check's score."""
    from nodes.generate import verdict_of

    check = out["trace"].get("answerability") or {}
    written = check.get("withheld_answer") or out["answer"]
    verdict = verdict_of(written)
    return {"question": case.question, "expected": case.verdict, "answer": out["answer"], "verdict": verdict,
            "right": verdict == case.verdict, "given": check.get("decision") == "answer", "score": check.get("score")}


def ask(ctx: Any, folder: Path, cases: Sequence[Case] = CASES) -> list[dict[str, Any]]:
    """Each question answered by the shipped graph, with :func:`files` added to a copy of ``ctx``'s index."""
    from dataclasses import replace

    from eval.side_by_side import with_files
    from graph import graph

    on_files = replace(ctx, index=with_files(ctx.index, ctx.embedder, folder, files()), query_cache=None)
    return [graded(case, graph.invoke({"question": case.question}, context=on_files)) for case in cases]


def report(rows: Sequence[Mapping[str, Any]]) -> str:
    def score(row: Mapping[str, Any]) -> str:
        return "  –  " if row["score"] is None else f"{row['score']:.3f}"

    lines = [f"{'right' if r['right'] else 'wrong'} {'given   ' if r['given'] else 'withheld'} {score(r)}  "
             f"{r['question']!r} (expects {r['expected']}): {r['answer'][:60]!r}" for r in rows]
    right = [r for r in rows if r["right"]]
    lines.append(f"{len(right)} of {len(rows)} verdicts right: {sum(r['given'] for r in right)} given, "
                 f"{sum(not r['given'] for r in right)} withheld; {sum(r['given'] and not r['right'] for r in rows)} "
                 f"other answers given")
    for verdict in ("yes", "no"):
        scores = [r["score"] for r in right if r["verdict"] == verdict and r["score"] is not None]
        if scores:
            lines.append(f"right {verdict!r}: {len(scores)}, the check's mean score {sum(scores) / len(scores):.3f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from eval.side_by_side import run_on_files

    return run_on_files(__doc__.split("\n\n")[0], argv, lambda ctx, folder: report(ask(ctx, folder)))


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
