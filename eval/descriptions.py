"""Questions that ask who or what a thing is, answered with ``describe`` on and off, side by side.

``describe`` (:mod:`nodes.describe`) answers "Who was Napoleon?" with the first passage of the article
titled "Napoleon", without a model call; off, the model answers it in as few words as the answer
prompt asks for. Each question is answered both ways from one loaded context, the two in alternating
order, with no query cache, and the time, the answer and what described it are printed, then each
way's median time.

    python -m eval.descriptions                        # the default index and model, the questions below
    python -m eval.descriptions --index PATH --model M "Who was Ada Lovelace?" ...

The questions were written in session 60 before the first run, about articles the bundled summaries
hold; they compare the two ways on one machine, and are no benchmark.
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import replace
from typing import Any, Sequence

QUESTIONS = ("Who was Napoleon?", "What is photosynthesis?", "Tell me about Marie Curie", "Describe the Eiffel Tower",
             "Who was Charles Darwin?", "What is Jupiter?", "Who is Taylor Swift?", "What is a black hole?",
             "Explain photosynthesis", "Who was Leonardo da Vinci?", "What is the Amazon River?", "Who were the Beatles?")


def compare(ctx: Any, questions: Sequence[str]) -> list[dict[str, Any]]:
    """Each question answered with describe on and off (alternating which goes first): a row per answer."""
    from eval.side_by_side import alternating

    ways = {"describe": replace(ctx, pipeline=replace(ctx.pipeline, describe=True)),
            "model": replace(ctx, pipeline=replace(ctx.pipeline, describe=False))}
    rows = []
    for question, way, out, ms in alternating(ways, questions):
        described = out["trace"].get("described")
        rows.append({"question": question, "way": way, "ms": ms,
                     "answer": out["answer"], "described": described["title"] if described else None})
    return rows


def report(rows: Sequence[dict[str, Any]]) -> str:
    lines = [f"{r['way']:8} {r['ms']:7.0f} ms  {r['question']!r}: {r['answer'][:100]!r}"
             + (f"  [the first passage of {r['described']!r}]" if r["described"] else "") for r in rows]
    for way in ("describe", "model"):
        times = [r["ms"] for r in rows if r["way"] == way]
        described = sum(1 for r in rows if r["way"] == way and r["described"])
        lines.append(f"{way}: median {statistics.median(times):.0f} ms, {described} of {len(times)} described")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from eval.side_by_side import add_resource_options, loaded

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("questions", nargs="*", default=list(QUESTIONS))
    add_resource_options(parser)
    args = parser.parse_args(argv)
    print(report(compare(loaded(args.index, args.model), args.questions)))
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
