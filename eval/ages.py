"""How old a living person is, asked with their age spelled beside their birth year and without, side by side.

The Wikipedia reader keeps an article's short description, which for a living person often holds the
only birth year the summary has: "(American singer-songwriter (born 1989))". Asked "How old is Taylor
Swift?", the 1.5B model answered "1989": it does not subtract. Since session 64 retrieval spells the age
on the day the passage is read ("(born 1989, aged 36 or 37 in 2026)", the setting ``living_ages``;
:func:`components.sources.aged_today`). This asks "How old is X?" and "When was X born?" of persons drawn
at random (``--seed``) from the summaries whose description ends "(born YYYY)" and whose summary does not
hold the year, with the setting on and off, from one loaded model, with no query cache, the two ways in
alternating order. An answer is right when it holds either age the year allows today (or the year); it
is given when the check lets it through.

    python -m eval.ages --seed 64            # the Wikipedia summaries' index and the default model (~3 min)
    python -m eval.ages --index PATH --model M --size 20

The persons are drawn anew for each seed; seed 64 was chosen before the first run. A small comparison on
one machine, not a benchmark.

``--undated`` asks instead "How old is X?" once each, with the default settings, of persons whose description
gives no years (Barack Obama's is "President of the United States from 2009 to 2017"), and shows each answer
with the check's decision: an age no passage holds is withheld whatever its score (session 66,
:func:`nodes.check_answer.age_unstated`; seed 66 was chosen before the first run, ~1 min):

    python -m eval.ages --undated --seed 66

``--born-where`` asks "Where was X born?" the same way of persons whose description does give years, which
the model gave as the answer ("1809" for Charles Darwin): a number or a date to a question that asks where is
withheld whatever its score (session 67, :func:`nodes.check_answer.number_asked_of`; seed 67 was chosen before
the first run, ~1 min):

    python -m eval.ages --born-where --seed 67

Session 68 ran it with seed 68 (chosen before the run) for the rule that withholds a birthplace only passages on
someone else hold (:func:`nodes.check_answer.subject_elsewhere`, ``by subject``): "Brussels" for Antonín Dvořák.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
from dataclasses import dataclass, replace
from datetime import date
from typing import Any, Sequence

LIVING = re.compile(r"\(born (\d{4})\)\s*$")
"""A description that ends with a birth year alone: a living person's, as Wikipedia writes it."""


@dataclass(frozen=True)
class Person:
    name: str  # the article's title without its parenthesised disambiguation
    born: str


def people(articles: dict[str, dict], *, seed: int, size: int, today: date) -> list[Person]:
    """``size`` persons drawn with ``seed`` from the summaries whose description ends "(born YYYY)", with an
    age :func:`components.sources.aged_today` spells on ``today``, and whose summary does not hold the year."""
    from components.sources import OLDEST_LIVING

    found = []
    for key in sorted(articles):
        article = articles[key]
        living = LIVING.search((article.get("description") or "").strip())
        if living and 0 < today.year - int(living[1]) <= OLDEST_LIVING and living[1] not in (article.get("extract") or ""):
            found.append(Person((article.get("title") or key).split(" (")[0], living[1]))
    return random.Random(seed).sample(found, min(size, len(found)))


def people_by_years(articles: dict[str, dict], *, seed: int, size: int, today: date, dated: bool) -> list[str]:
    """``size`` names drawn with ``seed`` of the summaries under the topic "People" whose description gives years
    :func:`nodes.tell_age.age_told` reads (``dated``: "Charles Darwin", "born 1809, died 1882, aged 72 or 73") or
    gives none (neither a birth year nor a life's: "Barack Obama", "President of the United States from 2009 to
    2017"). Asked how old the second are, or where the first were born, the model answers, and the check decides."""
    from components.sources import PEOPLE, spelled_description
    from nodes.tell_age import age_told

    def gives_years(key: str, article: dict) -> bool:
        return age_told(key, f"({spelled_description(article)})", today) is not None

    found = [(article.get("title") or key).split(" (")[0] for key, article in sorted(articles.items())
             if article.get("topic") == PEOPLE and gives_years(key, article) == dated]
    return random.Random(seed).sample(found, min(size, len(found)))


def questions(person: Person, today: date) -> list[tuple[str, str, tuple[str, ...]]]:
    """(kind, question, the numbers that answer it): today's age is one of two from the year alone."""
    age = today.year - int(person.born)
    return [("how old", f"How old is {person.name}?", (str(age - 1), str(age))),
            ("born", f"When was {person.name} born?", (person.born,))]


def ask(ctx: Any, persons: Sequence[Person], today: date) -> list[dict[str, Any]]:
    """Every question with the setting on and off, the order alternating: a row per answer."""
    from eval.lifespans import asked_of

    ways = {"on": replace(ctx, pipeline=replace(ctx.pipeline, living_ages=True), query_cache=None),
            "off": replace(ctx, pipeline=replace(ctx.pipeline, living_ages=False), query_cache=None)}
    return asked_of(ways, [q for person in persons for q in questions(person, today)], "way")


def report(rows: Sequence[dict[str, Any]]) -> str:
    from eval.lifespans import counted

    lines = [f"{r['way']:3} {r['question']!r}: {r['answer'][:60]!r} ({'right' if r['right'] else 'wrong'}, "
             f"{'given' if r['given'] else 'withheld'})" for r in rows]
    for way in ("on", "off"):
        for kind in dict.fromkeys(r["kind"] for r in rows):
            mine = [r for r in rows if r["way"] == way and r["kind"] == kind]
            lines.append(f"{way}, {kind}: {counted(mine)}, median {statistics.median(r['ms'] for r in mine):.0f} ms")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    import json

    from components.sources import wikipedia_summaries_file
    from eval.side_by_side import add_resource_options, checked_report, loaded

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_resource_options(parser)
    parser.add_argument("--seed", type=int, default=64)
    parser.add_argument("--size", type=int, default=20, help="persons (two questions each)")
    parser.add_argument("--undated", action="store_true",
                        help="ask the age of persons whose description gives no years, once each, with default settings")
    parser.add_argument("--born-where", action="store_true",
                        help="ask where persons whose description gives years were born, once each, with default settings")
    args = parser.parse_args(argv)
    today = date.today()
    articles = json.loads(wikipedia_summaries_file().read_text(encoding="utf-8"))
    if args.undated or args.born_where:
        names = people_by_years(articles, seed=args.seed, size=args.size, today=today, dated=args.born_where)
        asked = [f"Where was {name} born?" if args.born_where else f"How old is {name}?" for name in names]
        print(checked_report(loaded(args.index, args.model), asked))
        return 0
    print(report(ask(loaded(args.index, args.model), people(articles, seed=args.seed, size=args.size, today=today), today)))
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
