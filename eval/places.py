"""Questions on places written before they were asked (sessions 70 to 72): capitals, populations, largest cities.

Session 69's walks gave "Mumbai" for India's capital and Stuttgart's 613,111 for "How many people live in
Germany?"; session 70's "Brisbane" for the largest city in Australia. Each list below was written down before any
of its questions was asked (``runs/preregistered-s70.md`` §2, §4, §5, §6, §8 and §9 of that session, gitignored), and
judged by hand; the judgements are in the README ("A capital the passages call another place's", "A population
held only by passages of another place", "An answer its passages rank second or lower").

    python -m eval.places rules         # the capital, population and "largest city" lists once each (~12 min)
    python -m eval.places place-first   # the population lists with place_first on and off, alternating (~3 min)
    python -m eval.places capitals      # the capital rule on right and wrong answers, no model (~2 s)

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


def _capitals(pairs: str) -> tuple[tuple[str, str], ...]:
    """(place, capital) pairs from "Place: Capital/Other spelling; ..." (each spelling a pair of its own)."""
    return tuple((place.strip(), capital.strip()) for pair in pairs.split(";")
                 for place, capitals in [pair.split(":")] for capital in capitals.split("/"))


RIGHT_CAPITALS = _capitals(
    "India: New Delhi; Ontario: Toronto; Ivory Coast: Yamoussoukro; Cameroon: Yaoundé; Bangladesh: Dhaka; "
    "Nigeria: Abuja; Turkey: Ankara; Brazil: Brasília; South Africa: Pretoria/Cape Town/Bloemfontein; "
    "the United Arab Emirates: Abu Dhabi; Canada: Ottawa; Pakistan: Islamabad; Tanzania: Dodoma; Morocco: Rabat; "
    "Punjab: Chandigarh/Lahore; Kazakhstan: Astana; Vietnam: Hanoi; Switzerland: Bern; Poland: Warsaw; "
    "Bolivia: Sucre/La Paz; British Columbia: Victoria; Alberta: Edmonton; Manitoba: Winnipeg; "
    "Nova Scotia: Halifax; Saskatchewan: Regina; Saxony: Dresden; Hesse: Wiesbaden; Illinois: Springfield; "
    "Pennsylvania: Harrisburg; Florida: Tallahassee; Queensland: Brisbane; Western Australia: Perth; "
    "Tasmania: Hobart; Kerala: Thiruvananthapuram; Tamil Nadu: Chennai; Catalonia: Barcelona; Andalusia: Seville; "
    "Lombardy: Milan; Sicily: Palermo; Germany: Berlin; Australia: Canberra; Spain: Madrid; Italy: Rome; "
    "the United States: Washington, D.C.; Michigan: Lansing; Nevada: Carson City; Oregon: Salem; "
    "Kentucky: Frankfort; Missouri: Jefferson City; Louisiana: Baton Rouge; Maryland: Annapolis; "
    "Wisconsin: Madison; Alaska: Juneau; Vermont: Montpelier; North Rhine-Westphalia: Düsseldorf; "
    "Rhineland-Palatinate: Mainz; South Australia: Adelaide; Gujarat: Gandhinagar; Uttar Pradesh: Lucknow; "
    "Karnataka: Bengaluru/Bangalore; Ohio: Columbus; Georgia: Atlanta/Tbilisi; New Zealand: Wellington; "
    "New York: Albany; California: Sacramento; Texas: Austin; Minnesota: Saint Paul/St. Paul; Kansas: Topeka; "
    "Nebraska: Lincoln; South Carolina: Columbia; North Carolina: Raleigh; Delaware: Dover; New Jersey: Trenton; "
    "Montana: Helena; Maine: Augusta; New Hampshire: Concord; Alabama: Montgomery; Arizona: Phoenix; "
    "Colorado: Denver; Massachusetts: Boston; Tennessee: Nashville; Iowa: Des Moines; "
    "Myanmar: Naypyidaw/Nay Pyi Taw; Ecuador: Quito; Benin: Porto-Novo; Burundi: Gitega; Belize: Belmopan; "
    "the Philippines: Manila; China: Beijing; Japan: Tokyo; Egypt: Cairo; Kenya: Nairobi; Ghana: Accra; "
    "Scotland: Edinburgh; Wales: Cardiff; Sri Lanka: Sri Jayawardenepura Kotte; Saudi Arabia: Riyadh; "
    "Ethiopia: Addis Ababa; Argentina: Buenos Aires; Chile: Santiago; Peru: Lima; Colombia: Bogotá; "
    "Venezuela: Caracas; Russia: Moscow; Indonesia: Jakarta/Nusantara; New Brunswick: Fredericton; "
    "Newfoundland and Labrador: St. John's; Victoria: Melbourne; New South Wales: Sydney; "
    "Northern Territory: Darwin; Bavaria: Munich; Baden-Württemberg: Stuttgart; Lower Saxony: Hanover; "
    "Maharashtra: Mumbai; West Bengal: Kolkata; Rajasthan: Jaipur; Andhra Pradesh: Amaravati; Tuscany: Florence; "
    "Campania: Naples; Veneto: Venice; Galicia: Santiago de Compostela; Basque Country: Vitoria-Gasteiz"
    "; "
    "France: Paris; the United Kingdom: London; Ireland: Dublin; Portugal: Lisbon; the Netherlands: Amsterdam; "
    "Belgium: Brussels; Austria: Vienna; Hungary: Budapest; the Czech Republic: Prague; Greece: Athens; "
    "Sweden: Stockholm; Norway: Oslo; Finland: Helsinki; Denmark: Copenhagen; Ukraine: Kyiv/Kiev; "
    "Romania: Bucharest; Mexico: Mexico City; Cuba: Havana; Thailand: Bangkok; South Korea: Seoul; Iran: Tehran; "
    "Iraq: Baghdad; Afghanistan: Kabul; Nepal: Kathmandu; Malaysia: Kuala Lumpur; Uganda: Kampala; "
    "Zimbabwe: Harare; Senegal: Dakar; Algeria: Algiers; Libya: Tripoli; Prince Edward Island: Charlottetown; "
    "Yukon: Whitehorse; Hawaii: Honolulu; Utah: Salt Lake City; Virginia: Richmond; Oklahoma: Oklahoma City; "
    "Indiana: Indianapolis; Rhode Island: Providence; Brandenburg: Potsdam; Thuringia: Erfurt; "
    "Schleswig-Holstein: Kiel; Saxony-Anhalt: Magdeburg; Bihar: Patna; Telangana: Hyderabad; Goa: Panaji; "
    "Assam: Dispur; Sindh: Karachi; Piedmont: Turin; Lazio: Rome; Liguria: Genoa; Sardinia: Cagliari; "
    "Aragon: Zaragoza; Northern Ireland: Belfast; England: London"
    "; "
    "Kuwait: Kuwait City; Guatemala: Guatemala City; Singapore: Singapore; Luxembourg: Luxembourg City/Luxembourg; "
    "Djibouti: Djibouti; Monaco: Monaco; San Marino: San Marino/City of San Marino; Andorra: Andorra la Vella; "
    "Malta: Valletta; Cyprus: Nicosia; Slovenia: Ljubljana; Slovakia: Bratislava; Lithuania: Vilnius; Latvia: Riga; "
    "Estonia: Tallinn; Belarus: Minsk; Moldova: Chișinău; Azerbaijan: Baku; Qatar: Doha; Bahrain: Manama; "
    "Oman: Muscat; Yemen: Sanaa; Bhutan: Thimphu; the Maldives: Malé; Brunei: Bandar Seri Begawan; "
    "East Timor: Dili; Papua New Guinea: Port Moresby; Fiji: Suva; Samoa: Apia; Haiti: Port-au-Prince; "
    "the Dominican Republic: Santo Domingo; Trinidad and Tobago: Port of Spain; the Bahamas: Nassau; "
    "Barbados: Bridgetown; Guyana: Georgetown; Suriname: Paramaribo; El Salvador: San Salvador; Rwanda: Kigali; "
    "Somalia: Mogadishu; Eritrea: Asmara; Mali: Bamako; Niger: Niamey; Chad: N'Djamena; Gabon: Libreville; "
    "Liberia: Monrovia; Sierra Leone: Freetown; Guinea: Conakry; Togo: Lomé; Burkina Faso: Ouagadougou; "
    "Mauritania: Nouakchott; Lesotho: Maseru; Eswatini: Mbabane; Kyrgyzstan: Bishkek; Tajikistan: Dushanbe; "
    "Turkmenistan: Ashgabat; North Korea: Pyongyang; Quebec: Quebec City")
"""The capital I judge right of every place of the capital lists above but the sixty's (:data:`CAPITALS_UNASKED`),
and of fifty-seven places asked of no model (session 72, ``runs/preregistered-s72.md`` §4 (a'')), each where a place
has two (South Africa) or is spelled two ways (Kyiv/Kiev): given as the answer with no evidence, the capital rule
must withhold none (``python -m eval.places capitals``)."""
WRONG_CAPITALS = _capitals(
    "Australia: Sydney; Canada: Toronto/Montreal/Vancouver; the United States: New York City/Los Angeles/Chicago; "
    "India: Mumbai/Kolkata/Chennai/Bangalore; China: Shanghai/Hong Kong; Japan: Kyoto/Yokohama; "
    "Brazil: São Paulo/Rio de Janeiro/Salvador; Turkey: Istanbul/Izmir; Pakistan: Lahore; Nigeria: Lagos/Kano; "
    "Germany: Munich/Hamburg/Frankfurt/Bonn; Italy: Milan/Naples/Florence; Spain: Barcelona/Seville; "
    "Russia: Novosibirsk; Switzerland: Zurich/Geneva; New Zealand: Auckland; South Africa: Johannesburg/Durban; "
    "Vietnam: Ho Chi Minh City; Morocco: Casablanca/Marrakesh; Kazakhstan: Almaty; Egypt: Alexandria; "
    "Scotland: Glasgow; Israel: Tel Aviv; Myanmar: Mandalay; the Philippines: Quezon City/Cebu City; "
    "Indonesia: Surabaya; Saudi Arabia: Jeddah/Mecca; the United Arab Emirates: Dubai; Ecuador: Guayaquil; "
    "Colombia: Medellín; Mexico: Guadalajara; Argentina: Córdoba; Cameroon: Douala; Ivory Coast: Abidjan; "
    "Tanzania: Dar es Salaam; Ghana: Kumasi; Kenya: Mombasa; Belgium: Antwerp; the Netherlands: Rotterdam; "
    "Poland: Kraków; Ukraine: Kharkiv/Odesa; France: Marseille/Lyon; the United Kingdom: Manchester/Birmingham")
"""Seventy wrong answers, a place and a city that is not its capital (session 72, §4, written before they were run):
given as the answer with no evidence, how many the capital rule withholds by reading the city's own article."""


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


def capitals_report(index: Any) -> str:
    """The capital rule on :data:`RIGHT_CAPITALS` and :data:`WRONG_CAPITALS`, each answer given with no evidence over
    ``index``: those whose city has an article of its own in it, and which of them the rule withholds."""
    from components.titles import titled_document
    from nodes.check_answer import capital_elsewhere

    lines = []
    for name, pairs in (("right", RIGHT_CAPITALS), ("wrong", WRONG_CAPITALS)):
        held = [(place, city) for place, city in pairs if titled_document(index, city, spelling=False) is not None]
        withheld = 0
        for place, city in held:
            reason = capital_elsewhere(f"What is the capital of {place}?", city, [], index)
            withheld += reason is not None
            lines.append(f"{name} {'withheld' if reason else 'kept    '} {place}: {city}" + (f" ({reason})" if reason else ""))
        lines.append(f"{name}: {len(pairs)} answers, {len(held)} with an article of their own, {withheld} withheld\n")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from eval.side_by_side import add_resource_options, checked_report, loaded

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("rules", "place-first", "capitals"),
                        help="rules: the capital and population questions once each; place-first: the population "
                             "questions with place_first on and off; capitals: the capital rule on right and wrong "
                             "answers given with no evidence (no model)")
    add_resource_options(parser)
    args = parser.parse_args(argv)
    if args.what == "capitals":
        from components.index import IndexLoadError, PassageIndex
        from pipeline.context import default_index_dir

        try:
            index = PassageIndex.load(args.index or default_index_dir())
        except IndexLoadError as e:
            parser.error(str(e))
        print(capitals_report(index))
        return 0
    ctx = loaded(args.index, args.model)
    if args.what == "rules":
        capitals = CAPITALS + CAPITALS_PARTS + CAPITALS_LARGEST + CAPITALS_ARTICLES + CAPITALS_UNASKED + CAPITALS_SHARED_WORDS
        print(checked_report(ctx, capitals + POPULATIONS + LARGEST + LARGEST_MORE))
    else:
        print(place_first_report(ctx, POPULATIONS))
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
