"""Questions on places written before they were asked (sessions 70 to 72): capitals, populations, largest cities.

Session 69's walks gave "Mumbai" for India's capital and Stuttgart's 613,111 for "How many people live in
Germany?"; session 70's "Brisbane" for the largest city in Australia. Each list below was written down before any
of its questions was asked (``runs/preregistered-s70.md`` §2, §4, §5, §6, §8 and §9 of that session, gitignored), and
judged by hand; the judgements are in the README ("A capital the passages call another place's", "A population
held only by passages of another place", "An answer its passages rank second or lower").

    python -m eval.places rules         # the capital, population and "largest city" lists once each (~12 min)
    python -m eval.places place-first   # the population lists with place_first on and off, alternating (~3 min)

``rules`` shows each answer with the check's decision and the rule that withheld it (``by capital``: another
place's capital or a qualified one, :func:`nodes.check_answer.capital_elsewhere`; ``by population``: only other
places' passages hold the figure, :func:`nodes.check_answer.population_elsewhere`; ``by rank``: a passage ranks it
lower, :func:`nodes.check_answer.ranked_below`). ``place-first`` compares the setting ``place_first`` (a place's
population searched in the place's own document) on and off. A small comparison on one machine, not a benchmark.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any, Sequence

CAPITALS = tuple(f"What is the capital of {place}?" for place in (
    "India", "Ontario", "Ivory Coast", "Cameroon", "Bangladesh", "Nigeria", "Turkey", "Brazil", "South Africa",
    "the United Arab Emirates", "Canada", "Pakistan", "Tanzania", "Morocco", "Punjab", "Kazakhstan", "Vietnam",
    "Switzerland", "Poland", "Bolivia"))
"""Twenty capital questions (§2), written after session 69 found "Mumbai" for India's."""
CAPITALS_PARTS = tuple(f"What is the capital of {place}?" for place in (
    "British Columbia", "Alberta", "Manitoba", "Nova Scotia", "Saskatchewan", "Saxony", "Hesse", "Illinois",
    "Pennsylvania", "Florida", "Queensland", "Western Australia", "Tasmania", "Punjab", "Kerala", "Tamil Nadu",
    "Catalonia", "Andalusia", "Lombardy", "Sicily", "Canada", "Germany", "India", "Australia", "Spain", "Italy",
    "the United States", "Brazil"))
"""Twenty-eight (session 71, ``runs/preregistered-s71.md`` §4): twenty provinces, states and regions, and eight
countries, written after its walk found "Ottawa" for Ontario and Quebec (a national capital, "Its capital is
Ottawa"), before any was asked."""
CAPITALS_LARGEST = tuple(f"What is the capital of {place}?" for place in (
    "Michigan", "Nevada", "Oregon", "Kentucky", "Missouri", "Louisiana", "Maryland", "Wisconsin", "Alaska", "Vermont",
    "North Rhine-Westphalia", "Rhineland-Palatinate", "South Australia", "Gujarat", "Uttar Pradesh", "Karnataka", "Ohio",
    "Georgia", "New Zealand", "Nigeria", "Turkey", "Vietnam", "Morocco", "Kazakhstan"))
"""Twenty-four (session 71, §6), mostly places whose largest city is not their capital, written after the
twenty-eight showed "Frankfurt" for Hesse and "Chicago" for Illinois (called the most populous city, no capital),
before any was asked (Turkey, Vietnam, Morocco and Kazakhstan are also session 70's)."""

CAPITALS_ARTICLES = tuple(f"What is the capital of {place}?" for place in (
    "New York", "California", "Texas", "Minnesota", "Kansas", "Nebraska", "South Carolina", "North Carolina",
    "Delaware", "New Jersey", "Montana", "Maine", "New Hampshire", "Alabama", "Arizona", "Colorado", "Massachusetts",
    "Tennessee", "Iowa", "Myanmar", "Ecuador", "Benin", "Burundi", "Belize", "the Philippines", "China", "Japan",
    "Egypt", "Kenya", "Ghana", "Scotland", "Wales", "Sri Lanka", "Saudi Arabia", "Ethiopia", "Argentina", "Chile",
    "Peru", "Colombia", "Venezuela", "Russia", "Indonesia", "New Brunswick", "Newfoundland and Labrador", "Victoria",
    "New South Wales", "Northern Territory", "Bavaria", "Baden-Württemberg", "Lower Saxony", "Maharashtra",
    "West Bengal", "Rajasthan", "Andhra Pradesh", "Tuscany", "Campania", "Veneto", "Galicia", "Basque Country"))
"""Fifty-nine (session 72, ``runs/preregistered-s72.md`` §1), written after its walk gave "St. Louis" for Missouri,
"Baltimore" for Maryland and "Dar es Salaam" for Tanzania (whose own articles call them no capital of the place),
before any was asked: US states, countries, and provinces, states and regions of six others."""
CAPITALS_UNASKED = tuple(f"What is the capital of {place}?" for place in (
    "Mississippi", "Arkansas", "Connecticut", "West Virginia", "Wyoming", "North Dakota", "South Dakota", "Idaho",
    "New Mexico", "Nunavut", "the Northwest Territories", "the Australian Capital Territory", "Odisha",
    "Madhya Pradesh", "Haryana", "Jharkhand", "Uttarakhand", "Chhattisgarh", "Mecklenburg-Vorpommern", "Saarland",
    "Emilia-Romagna", "Apulia", "Calabria", "Castile and León", "Extremadura", "Asturias", "Nicaragua", "Honduras",
    "Paraguay", "Uruguay", "Cambodia", "Laos", "Mongolia", "Syria", "Jordan", "Lebanon", "Tunisia", "Sudan",
    "Angola", "Mozambique", "Zambia", "Madagascar", "Serbia", "Croatia", "Bulgaria", "Iceland", "Palau",
    "Liechtenstein", "Montenegro", "the Gambia", "Equatorial Guinea", "Malawi", "Taiwan", "Jamaica", "Panama",
    "Costa Rica", "Namibia", "Botswana", "Uzbekistan", "Armenia"))
"""Sixty more (session 72, §1b), written before any was asked, to try the rule as shipped after the fifty-nine."""

CAPITALS_SHARED_WORDS = tuple(f"What is the capital of {place}?" for place in (
    "France", "the United Kingdom", "Ireland", "Portugal", "the Netherlands", "Belgium", "Austria", "Hungary",
    "the Czech Republic", "Greece", "Sweden", "Norway", "Finland", "Denmark", "Ukraine", "Romania", "Mexico", "Cuba",
    "Thailand", "South Korea", "Iran", "Iraq", "Afghanistan", "Nepal", "Malaysia", "Uganda", "Zimbabwe", "Senegal",
    "Algeria", "Libya", "Prince Edward Island", "Yukon", "Hawaii", "Utah", "Virginia", "Oklahoma", "Indiana",
    "Rhode Island", "Brandenburg", "Thuringia", "Schleswig-Holstein", "Saxony-Anhalt", "Bihar", "Telangana", "Goa",
    "Assam", "Sindh", "Piedmont", "Lazio", "Liguria", "Sardinia", "Aragon", "Northern Ireland", "England"))
"""Fifty-four more (session 72, §2), whose right capitals were given to the rule before (§1's second model-free
list) and none asked, asked after "Cape Town" for South Carolina was withheld ("south" names no place)."""


def _asked(places: str) -> tuple[str, ...]:
    """The population of each place, asked the two ways in turn: "How many people live in X?", "What is the
    population of X?"."""
    return tuple(f"How many people live in {place}?" if i % 2 == 0 else f"What is the population of {place}?"
                 for i, place in enumerate(places.split(", ")))


POPULATIONS_SEEN = _asked("Germany, France, Tokyo, Canada, Australia, Brazil, London, India, Egypt, Nigeria, "
                          "New York City, Mexico, Italy, Spain, Kenya, Argentina, Poland, Sweden, Vietnam, Iran")
"""The first twenty (§4): their answers were read before the population rule was written, so they do not judge it."""
POPULATIONS_HELD_OUT = _asked("Japan, China, Russia, Indonesia, Pakistan, Turkey, South Africa, Colombia, Portugal, "
                              "Greece, Paris, Berlin, Rome, Moscow, Cairo, Sydney, Toronto, Chicago, Mumbai, Shanghai")
"""Twenty more (§5), written after the rule and before any was asked: they judged the population rule."""
POPULATIONS_PLACE_FIRST = _asked("Thailand, the Philippines, Ethiopia, Peru, the Netherlands, Belgium, Austria, "
                                 "Norway, Ukraine, Saudi Arabia, Malaysia, Venezuela, Cuba, Iraq, Istanbul, Lagos, "
                                 "Bangkok, Seoul, Los Angeles, Vienna")
"""Twenty more (§6), written before ``place_first`` was first run: they judged it."""
POPULATIONS = POPULATIONS_SEEN + POPULATIONS_HELD_OUT + POPULATIONS_PLACE_FIRST
LARGEST = ("What is the largest city in Australia?",
           *(f"What is the largest city in {place}?" for place in (
               "Canada", "the United States", "India", "Brazil", "Germany", "China", "Pakistan", "Nigeria", "Turkey",
               "Italy", "Spain", "Japan", "Mexico", "Russia", "South Africa", "Switzerland", "Scotland")),
           "What is the most populous city in Australia?", "What is the largest state in the United States?")
"""Twenty superlative questions (§8): the first found trying the API ("Brisbane"), the others written before they
were asked; for a superlative a passage scopes to a state the question does not name
(:func:`nodes.check_answer.ranked_below`, ``by rank``)."""
LARGEST_MORE = tuple(f"What is the largest city in {place}?" for place in (
    "Egypt", "Indonesia", "Argentina", "Colombia", "Vietnam", "Iran", "Poland", "Ukraine", "Saudi Arabia", "Morocco",
    "Kenya", "Peru", "Chile", "Sweden", "New Zealand", "Ireland", "the Philippines", "Malaysia", "Thailand", "Greece"))
"""Twenty more (§9), written before the rank rule let a passage on another subject stay silent."""


def place_first_report(ctx: Any, questions: Sequence[str]) -> str:
    """Each of ``questions`` with ``place_first`` on and off, no query cache, the order alternating: the answer as
    given or withheld, by what, cited or not, and the document searched; then how many each way gave."""
    from eval.side_by_side import alternating, checked_line

    ways = {way: replace(ctx, pipeline=replace(ctx.pipeline, place_first=way == "on"), query_cache=None)
            for way in ("on", "off")}
    lines, given = [], {way: 0 for way in ways}
    for question, way, out, ms in alternating(ways, questions):
        place = (out["trace"].get("place_document") or {}).get("title")
        given[way] += (out["trace"].get("answerability") or {}).get("decision") == "answer"
        lines.append(f"{way:3} " + checked_line(question, out, ms, 50, f", searched {place!r} only" if place else ""))
    lines += [f"{way}: {given[way]} of {len(questions)} given" for way in ways]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from eval.side_by_side import add_resource_options, checked_report, loaded

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("rules", "place-first"),
                        help="rules: the capital and population questions once each; place-first: the population "
                             "questions with place_first on and off")
    add_resource_options(parser)
    args = parser.parse_args(argv)
    ctx = loaded(args.index, args.model)
    if args.what == "rules":
        capitals = CAPITALS + CAPITALS_PARTS + CAPITALS_LARGEST + CAPITALS_ARTICLES + CAPITALS_UNASKED + CAPITALS_SHARED_WORDS
        print(checked_report(ctx, capitals + POPULATIONS + LARGEST + LARGEST_MORE))
    else:
        print(place_first_report(ctx, POPULATIONS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
