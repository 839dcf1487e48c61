"""When a person was born and died, and how old, asked of two indexes of the Wikipedia summaries, side by side.

Session 61 spelled a person's years in each summary's short description ("French general and emperor;
born 1769, died 1821, aged 51 or 52", :func:`components.sources.spelled_lifespan`), where they had been
a range "(1769–1821)" that the 1.5B model did not read as a life. This asks "When did X die?", "When
was X born?", "At what age did X die?" and "How old was X when he died?" of persons drawn at random
(``--seed``) from those the reader spells whose summary gives neither year, so that only the description
can answer: each question of the index read the old way (``--before``) and of the one read now
(``--after``), from one loaded model, with no query cache, the two in alternating order. An answer is
right when it holds the year (for the age, either of the two ages the years allow); it is given when the
check lets it through.

    cp -r runs/wiki-r3 runs/wiki-r4 && adaptive-rag ingest wiki --index runs/wiki-r4   # read again
    python -m eval.lifespans --before runs/wiki-r3 --after runs/wiki-r4 --seed 63

The spelling was chosen on the 40 persons of :data:`CHOSEN_ON`, which every sample leaves out; seed 62
reported the years, seed 63 the age. Reader 5 (session 66) also reads a life where a summary under the topic
"People" does not say he or she; ``--unpronounced`` draws only such persons (seed 66 for that change).
"""

from __future__ import annotations

import argparse
import random
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Sequence

CHOSEN_ON = (
    "Ada Lovelace", "Alberto Giacometti", "Albrecht Dürer", "Antonin Artaud", "Avicenna", "Cardinal Richelieu",
    "Cesare Borgia", "Chuck Berry", "Claudio Monteverdi", "D. H. Lawrence", "Edmund Hillary", "François Truffaut",
    "Fred Rogers", "Frederick Law Olmsted", "George Berkeley", "George Stephenson", "Georges Lemaître",
    "Georges-Eugène Haussmann", "Gottfried Wilhelm Leibniz", "Gotthold Ephraim Lessing", "Henry David Thoreau",
    "Henry James", "Ida Lupino", "Jacques Cartier", "Jean Le Rond d'Alembert", "Jean-Paul Sartre", "Joan of Arc",
    "Joseph Haydn", "Léon Foucault", "Mae West", "Mirabai", "Mohammad-Reza Shajarian", "Origen", "Pablo Casals",
    "Robert Millikan", "Ronald Fisher", "Rudolf Diesel", "Tristan Tzara", "Vincent van Gogh", "Virginia Woolf")
"""The persons session 61 chose the spelling on (it compared it with others on them): no sample holds them."""

@dataclass(frozen=True)
class Person:
    name: str  # the article's title without its parenthesised disambiguation: "Hans Krebs (biochemist)" -> "Hans Krebs"
    born: str
    died: str
    pronoun: str = "he"  # as the summary speaks of them: "she" where it says she or her more often than he, his or him


def people(articles: dict[str, dict], *, seed: int, size: int, exclude: Iterable[str] = CHOSEN_ON,
           unpronounced: bool = False) -> list[Person]:
    """``size`` persons drawn with ``seed`` from the summaries whose description the reader spells and
    whose summary gives neither year, leaving out the names in ``exclude``; with ``unpronounced``, only
    those whose summary does not say he or she (the persons reader 5 added)."""
    from components.sources import PERSONAL_PRONOUN, life_in

    left_out = set(exclude)
    found = []
    for key in sorted(articles):
        article = articles[key]
        summary = article.get("extract") or ""
        life = life_in((article.get("description") or "").strip(), summary, article.get("topic"))
        name = (article.get("title") or key).split(" (")[0]
        if unpronounced and PERSONAL_PRONOUN.search(summary):
            continue
        if life and name not in left_out and not right(summary, (life.born, life.died)):
            found.append(Person(name, life.born, life.died, pronoun=_pronoun(summary)))
    return random.Random(seed).sample(found, min(size, len(found)))


def _pronoun(summary: str) -> str:
    words = re.findall(r"\b(?:he|his|him|she|her)\b", summary.lower())
    return "she" if sum(w in ("she", "her") for w in words) > len(words) / 2 else "he"


def questions(person: Person) -> list[tuple[str, str, tuple[str, ...]]]:
    """(kind, question, the numbers that answer it): the age at death is one of two from the years alone,
    asked two ways."""
    age = int(person.died) - int(person.born)
    ages = (str(age - 1), str(age))
    return [("died", f"When did {person.name} die?", (person.died,)),
            ("born", f"When was {person.name} born?", (person.born,)),
            ("age", f"At what age did {person.name} die?", ages),
            ("how old", f"How old was {person.name} when {person.pronoun} died?", ages)]


def right(answer: str, numbers: Sequence[str]) -> bool:
    """Whether ``answer`` holds one of ``numbers`` as a number of its own (not inside a longer one)."""
    return any(re.search(rf"(?<!\d){n}(?!\d)", answer) for n in numbers)


def ask(ctxs: dict[str, Any], persons: Sequence[Person]) -> list[dict[str, Any]]:
    """Every question of every index, the order of the indexes alternating: a row per answer."""
    return asked_of(ctxs, [q for person in persons for q in questions(person)], "index")


def asked_of(ways: dict[str, Any], asked: Sequence[tuple[str, str, Sequence[str]]], key: str) -> list[dict[str, Any]]:
    """Each question of ``asked`` (kind, question, the numbers that answer it) of each way in ``ways`` (name →
    context), the ways' order alternating: a row per answer, the way's name under ``key``, whether the answer
    holds a right number (:func:`right`) and whether the check gave it."""
    from eval.side_by_side import alternating

    by_question = {question: (kind, numbers) for kind, question, numbers in asked}
    rows = []
    for question, name, out, ms in alternating(ways, list(by_question)):
        kind, numbers = by_question[question]
        decision = (out["trace"].get("answerability") or {}).get("decision")
        rows.append({key: name, "kind": kind, "question": question, "answer": out["answer"],
                     "right": right(out["answer"], numbers), "given": decision == "answer", "ms": ms})
    return rows


def report(rows: Sequence[dict[str, Any]]) -> str:
    lines = [f"{r['index']:7} {r['question']!r}: {r['answer'][:60]!r} ({'right' if r['right'] else 'wrong'}, "
             f"{'given' if r['given'] else 'withheld'})" for r in rows]
    for name in dict.fromkeys(r["index"] for r in rows):
        for kind in dict.fromkeys(r["kind"] for r in rows):
            lines.append(f"{name}, {kind}: {counted([r for r in rows if r['index'] == name and r['kind'] == kind])}")
    return "\n".join(lines)


def counted(rows: Sequence[dict[str, Any]]) -> str:
    """How many of :func:`asked_of`'s ``rows`` are right and given, and how many wrong and given."""
    return (f"{sum(r['right'] and r['given'] for r in rows)} of {len(rows)} right and given, "
            f"{sum(not r['right'] and r['given'] for r in rows)} wrong and given")


def main(argv: Sequence[str] | None = None) -> int:
    import json

    from components.index import PassageIndex
    from components.sources import wikipedia_summaries_file
    from pipeline.configuration import PipelineConfig
    from pipeline.context import RAGContext, ResourceConfig

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="an index of the summaries read the old way")
    parser.add_argument("--after", type=Path, required=True, help="the same index read by this release")
    parser.add_argument("--seed", type=int, default=63)
    parser.add_argument("--size", type=int, default=40, help="persons (four questions each)")
    parser.add_argument("--model", help="the generator (default: the default model)")
    parser.add_argument("--unpronounced", action="store_true",
                        help="only persons whose summary does not say he or she (those reader 5 added)")
    args = parser.parse_args(argv)
    articles = json.loads(wikipedia_summaries_file().read_text(encoding="utf-8"))
    persons = people(articles, seed=args.seed, size=args.size, unpronounced=args.unpronounced)
    resources = ResourceConfig(index_dir=args.after, **({"model": args.model} if args.model else {}))
    after = RAGContext.load(resources, PipelineConfig())
    after.generator.warm_up()
    before = replace(after, index=PassageIndex.load(args.before, embedder=after.embedder.name))
    print(report(ask({"before": before, "after": after}, persons)))
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
