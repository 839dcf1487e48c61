"""condense-question: rewrite a follow-up ("when did he die?") into a standalone question from the
conversation, before retrieval. The edge from start_turn only comes here when the thread has
earlier turns and the question refers back to them, or answers the question the last answer asked
(:mod:`nodes.ask_who`: who a first question's "he" meant), which is read without the model.

Here too is how a question is found to stand on a person it does not name (:func:`unnamed_person`),
which start_turn asks of a first question."""

from __future__ import annotations

import re
from typing import Any, Sequence

from langgraph.runtime import Runtime

from components.generator import max_tokens_kwargs
from components.passages import SECTION_SEPARATOR
from components.reranker import content_words
from components.requests import aspect_of_reference, summarized_thing, summarizes_reference
from pipeline.context import RAGContext
from pipeline.state import State, Turn
from nodes.base import context_of, replied_without_reading, timed
from nodes.generate import comparable
from prompts import condense_messages

HISTORY_TURNS = 3
MAX_TOKENS = 48

OPENING = r"(?:and|what about|how about)"
"""How a follow-up that names no subject of its own begins (:data:`NO_SUBJECT`, :data:`ELLIPSIS`,
:data:`OPENINGS`)."""

PARTICIPLE_ENDING = r"(?:ed|en|wn|lt|ght|ung|un|ne|de|t)"
"""How a participle ends ("built", "located", "written"; :data:`PASSIVE_IT`, :data:`PARTICIPLE`)."""

REFERS_BACK = tuple("he him his she her hers it its they them their theirs this that these those there then former "
                    "latter same".split())
"""The words a follow-up refers back to earlier turns with (:func:`graph.routing.refers_back` sends it to the rewrite)."""
NO_SUBJECT = re.compile(rf"^\s*{OPENING}\b", re.IGNORECASE)
"""How a follow-up that names no subject of its own begins ("what about its height?", "and on
Sundays?"): no standalone question begins so, so a rewrite that gives it back as it was has failed."""


MADE_BY = re.compile(r"^\s*who\s+(?:(?:first|originally|actually|really|also|\w+ly)\s+)?(?P<verb>\w+)\s+"
                     r"(?P<thing>[^?.!]+?)\s*[?.!]*\s*$", re.IGNORECASE)
"""A question about who made something ("Who wrote Pride and Prejudice?"): its answer is the maker,
``thing`` what was made."""

MAKING = frozenset("""wrote authored penned composed painted drew sculpted carved designed built constructed
    engineered invented devised discovered created made founded established directed produced filmed recorded
    developed published coined conceived formulated""".split())
"""Verbs whose object is what was made and whose subject is its maker: after "Who painted X?", a passive
"it" is X. After "Who won X?" or "Who owns X?" the answer (a country, a company) may well be "it"."""

PASSIVE_IT = re.compile(rf"\b(?P<be>is|was|were|are|been)\s+it\s+(?=\w+{PARTICIPLE_ENDING}\b)",
                        re.IGNORECASE)
""""it" as the subject of a passive ("When was it published?", "Why was it built?"): the thing made."""

PERSON = re.compile(r"\b(?:he|she|him|her|his|hers|himself|herself|they|them|their)\b", re.IGNORECASE)
"""A pronoun for a person (or people). After "Who painted X?" it may be the maker, so a passive "it"
beside it is left to the model (:func:`made_thing`); after a question asking "Who" the answer is the
nearest person it can mean (:data:`NEAREST`)."""
PLACE = re.compile(r"\bthere\b", re.IGNORECASE)
ASKS_WHO = re.compile(r"^\W*who(?:m|se)?\b", re.IGNORECASE)
ASKS_PLACE = re.compile(r"^\W*(?:where\b|(?:in\s+)?(?:what|which)\s+(?:is\s+the\s+|was\s+the\s+)?"
                        r"(?:capital|city|country|town|village|state|province|region|continent|island)\b)",
                        re.IGNORECASE)
NEAREST = ((PERSON, ASKS_WHO), (PLACE, ASKS_PLACE))
"""A follow-up's pronoun of a kind, and how a question whose answer is of that kind begins: a person
("he", "his") after "Who ...?", a place ("there") after "Where ...?" or one asking what or which
capital, city, country... ("What is the capital of Italy?", "In which country is Machu Picchu?")
(:func:`shown_turns`)."""


def shown_turns(history: Sequence[Turn], question: str) -> list[Turn]:
    """The turns the rewrite of ``question`` is shown: the last :data:`HISTORY_TURNS`, or only the
    last when its answer is of the kind the follow-up's pronoun names (:data:`NEAREST`), and so the
    nearest thing it can mean, unless the follow-up names the act an earlier "Who" question asked about
    (:func:`names_an_earlier_act`). Shown more, the model took an earlier answer of the same kind: "Where
    was he born?" after "Who painted the Mona Lisa?" and then "Who painted The Starry Night?" was read
    about Leonardo da Vinci (session 53's chain follow-ups)."""
    recent = list(history[-HISTORY_TURNS:])
    if recent and any(pronoun.search(question) and asks.match(recent[-1]["standalone_question"])
                      for pronoun, asks in NEAREST) and not names_an_earlier_act(question, recent):
        return recent[-1:]
    return recent


IRREGULAR_ACTS = {form: act for act, forms in {
    "write": "write writes wrote written writing writer", "draw": "draw draws drew drawn drawing",
    "build": "build builds built building builder", "make": "make makes made making maker"}.items()
    for form in forms.split()}
"""The forms of the :data:`MAKING` verbs that are not their stem and a short ending."""
ACT_STEMS = tuple(sorted({v[:-2] if v.endswith("ed") else v for v in MAKING} - set(IRREGULAR_ACTS), key=len, reverse=True))
"""The other :data:`MAKING` verbs' stems ("painted" is "paint", "composed" "compos"), longest first."""


def acts(text: str) -> set[str]:
    """The making acts (:data:`MAKING`) ``text`` names, each by one stem whatever its form: "painted",
    "paint" and "painting" are "paint", "discovery" is "discover", "wrote" and "write" are "write"."""
    named = set()
    for word in re.findall(r"[a-z]+", text.lower()):
        if word in IRREGULAR_ACTS:
            named.add(IRREGULAR_ACTS[word])
            continue
        stem = next((s for s in ACT_STEMS if word.startswith(s) and len(word) - len(s) <= 3), None)
        if stem is not None:
            named.add(stem)
    return named


def names_an_earlier_act(question: str, recent: Sequence[Turn]) -> bool:
    """Whether ``question`` names an act (:func:`acts`) that an earlier "Who" question of ``recent``
    asked about and the last one did not: "How many concertos did he compose?" after "Who composed The
    Four Seasons?" and then "Who made its first recording?" means the composer, not the last answer."""
    earlier = set().union(*(acts(t["standalone_question"]) for t in recent[:-1]
                            if ASKS_WHO.match(t["standalone_question"])))
    return bool(acts(question) & (earlier - acts(recent[-1]["standalone_question"])))


FIRST_PERSON = re.compile(r"\b(?:(?P<i>I)|[Mm]e|[Mm]y|[Mm]ine|[Mm]yself)\b")
"""The asker speaking of themselves: a rewrite may keep such words, never bring them in. An "I" after
a capitalised word is a numeral ("World War I", "Elizabeth I")."""


def speaks_of_the_asker(text: str) -> bool:
    """Whether ``text`` holds a word of :data:`FIRST_PERSON`."""
    for word in FIRST_PERSON.finditer(text):
        before = text[: word.start()].split()
        if not (word["i"] and before and before[-1][:1].isupper()):
            return True
    return False


QUESTION_WORDS = ("what", "who", "whom", "whose", "when", "where", "why", "how", "which")
QUESTION_WORD = re.compile(rf"^\W*(?P<word>{'|'.join(QUESTION_WORDS)})\b", re.IGNORECASE)
"""The question word a follow-up opens with ("Where was he born?"), which its rewrite must keep."""


def lost_question_word(question: str, rewrite: str) -> bool:
    """Whether ``question`` opens with a question word (:data:`QUESTION_WORD`) that ``rewrite`` does
    not hold: "Where was he born?" rewritten "Who was Emile Berliner born?" asks something else. A
    follow-up that names no subject of its own ("what about X?", :data:`NO_SUBJECT`) may take any."""
    opening = QUESTION_WORD.match(question)
    if opening is None or NO_SUBJECT.match(question):
        return False
    return re.search(rf"\b{opening['word']}\b", rewrite, re.IGNORECASE) is None

def dropped_its_words(question: str, rewrite: str) -> bool:
    """Whether ``rewrite`` keeps none of the words ``question`` asks with of its own (its content words but
    :data:`REFERRING`), a plural or a verb's s aside: "Can it go in the dishwasher?" after a question on a
    kettle's descaling, rewritten "Can the Kettle K200 be descaled?", asks the question before again
    (session 63). A follow-up with no such word ("What about it?") may be rewritten any way."""
    own = {comparable(w) for w in content_words(question) if w not in REFERRING}
    return bool(own) and not own & {comparable(w) for w in content_words(rewrite)}


def made_thing(question: str, previous: str) -> str | None:
    """The follow-up ``question`` with its passive "it" read as the thing ``previous`` asked about,
    when ``previous`` asks who made something ("When was it published?" after "Who wrote Pride and
    Prejudice?" is "When was Pride and Prejudice published?"); else ``None``. The small model reads
    such an "it" as the maker the answer named ("When was Jane Austen published?", or "When was
    Vincent van Gogh painted The Starry Night?"), which a thing written, painted or built never is."""
    made, passive = MADE_BY.match(previous), PASSIVE_IT.search(question)
    if made is None or passive is None or made["verb"].casefold() not in MAKING:
        return None
    if PERSON.search(question):
        return None  # a person is referred to as well: the model's reading of the sentence stands
    return f"{question[:passive.start()]}{passive['be']} {made['thing']} {question[passive.end():]}"


ELLIPSIS = re.compile(rf"^\s*{OPENING}\s+(?:(?P<prep>in|of|on|at|for|from|by|with)\s+)?"
                      r"(?P<thing>[^?.!]+?)\s*[?.!]*\s*$", re.IGNORECASE)
"""A follow-up that only names another thing ("And Uranus?", "how about in Mexico"): the question before,
asked about ``thing``."""

BE = frozenset("is was were are am".split())
AUXILIARIES = frozenset("do does did has have had can could will would should may might shall".split())
ASKING = frozenset(QUESTION_WORDS) | BE | AUXILIARIES
REFERRING = frozenset(REFERS_BACK) | AUXILIARIES | {"about", "must"}
"""Words of a follow-up that its rewrite may replace: what it refers back with ("there": "in Tokyo"), "about"
of "what about X?", and the auxiliary and modal verbs a rewrite may keep while it asks something else."""
"""Question words and auxiliaries: a follow-up holding one asks a question of its own ("And when did
Newton die?"), not the question before about another thing."""

OPENINGS = re.compile(rf"^\s*(?:{OPENING}\b\s*)+", re.IGNORECASE)
"""The openings of :data:`NO_SUBJECT`, repeated ("And what about ..."), as a rewrite may give them."""


def asks_nothing(text: str) -> bool:
    """Whether ``text`` opens as a follow-up naming no subject (:data:`NO_SUBJECT`) and asks nothing
    after the opening ("What about Wellington?", "And what about its height?"): no standalone question."""
    opening = OPENINGS.match(text)
    return opening is not None and not any(w.strip(",?.!").lower() in ASKING for w in text[opening.end():].split())


NAME_JOINS = frozenset("of and the de da di van von del la le du".split())
"""Lowercase words inside a name ("the Great Wall of China", "Pride and Prejudice", "Leonardo da Vinci")."""


def _named(word: str) -> bool:
    return word[:1].isupper()


def _things_named(words: list[str]) -> list[tuple[int, int]]:
    """The spans (start, end) of ``words`` that name a thing: runs of capitalised words, lowercase name
    words between them, and a "the" before; the question's first word does not count."""
    spans: list[tuple[int, int]] = []
    i = 1
    while i < len(words):
        if not _named(words[i]):
            i += 1
            continue
        start, end = i, i + 1
        while end < len(words):
            if _named(words[end]):
                end += 1
                continue
            joins = end
            while joins < len(words) and words[joins].lower() in NAME_JOINS:
                joins += 1
            if joins == end or joins == len(words) or not _named(words[joins]):
                break
            end = joins + 1
        if start > 1 and words[start - 1].lower() == "the":
            start -= 1
        spans.append((start, end))
        i = end
    return spans


PARTICIPLE = re.compile(rf"\w+{PARTICIPLE_ENDING}$", re.IGNORECASE)
"""A participle ("built", "located", "written"), as :data:`PASSIVE_IT` reads one."""


def _swappable(words: list[str], start: int, end: int) -> bool:
    """Whether ``words[start:end]`` is the thing a question asks about: its last words ("Who directed
    Jaws?"), or its subject after an auxiliary: before the verb after do/does/did ("How many moons does
    Neptune have?"), before a participle after a form of be ("When was the Great Wall of China built?").
    After a form of be and before another word, a name describes that word ("How long is the Vorlund
    bridge?")."""
    if end == len(words):
        return True
    before = words[start - 1].lower()
    if before in BE:
        return PARTICIPLE.match(words[end]) is not None
    return before in AUXILIARIES


def swapped_thing(question: str, previous: str) -> str | None:
    """``previous`` asked about the thing the follow-up ``question`` names, when ``question`` only names
    another thing ("And Uranus?", "what about the Colosseum") and ``previous`` names exactly one thing,
    at its end or as its subject (after does, was...): "How many moons does Neptune have?" then "And
    Uranus?" is "How many moons does Uranus have?". Else ``None``: nothing named to put in ("And the
    second?"), nothing to take out ("Who was the first Roman emperor?", where "Roman" describes),
    two things to choose from, a question of its own ("And when did Newton die?"), or a preposition
    that does not fit ("And of Mexico?" after "... spoken in Brazil?")."""
    asked = ELLIPSIS.match(question)
    if asked is None:
        return None
    thing = asked["thing"].split()
    if len(thing) > 6 or not any(map(_named, thing)) or any(w.lower().strip(",") in ASKING for w in thing):
        return None
    body = previous.strip()
    mark = body[-1] if body[-1:] in "?.!" else "?"
    words = body.rstrip("?.! ").split()
    spans = [(start, end) for start, end in _things_named(words) if _swappable(words, start, end)]
    if len(spans) != 1:
        return None
    start, end = spans[0]
    if asked["prep"] and words[start - 1].lower() != asked["prep"].lower():
        return None
    return " ".join([*words[:start], *thing, *words[end:]]) + mark


THING_ASKING = re.compile(rf"^\W*(?:how|when|where|why|{'|'.join(sorted(BE | AUXILIARIES))})\b", re.IGNORECASE)
"""A question whose answer is no thing a follow-up's "it" could mean: how, when, where, why, or yes or no ("How
often should the Kettle K200 be descaled?"); not what, which or who ("What is the capital of France?": "it" may
be Paris)."""


def thing_for_it(question: str, previous: str) -> str | None:
    """The follow-up ``question`` with its one "it" (or "its") read as the one thing ``previous`` asked about,
    where ``previous`` asks how, when, where, why or yes or no (:data:`THING_ASKING`) and names exactly one thing,
    at its end or as its subject (as :func:`swapped_thing` reads it): "Can it go in the dishwasher?" after "How
    often should the Kettle K200 be descaled?" is "Can the Kettle K200 go in the dishwasher?". ``None`` when the
    follow-up refers back with any other word ("When did he write it?") or more than once, names no subject of
    its own (:data:`NO_SUBJECT`: "and its height?", which asks the question before again), or ``previous``
    offers no one thing."""
    if NO_SUBJECT.match(question) or not THING_ASKING.match(previous):
        return None
    words = question.split()
    referring = [i for i, w in enumerate(words) if w.strip(",?.!;:").lower() in REFERS_BACK]
    if len(referring) != 1 or words[referring[0]].strip(",?.!;:").lower() not in ("it", "its"):
        return None
    body = previous.strip().rstrip("?.! ").split()
    spans = [(start, end) for start, end in _things_named(body) if _swappable(body, start, end)]
    if len(spans) != 1:
        return None
    at, (start, end) = referring[0], spans[0]
    word = words[at]
    core = word.strip(",?.!;:")
    thing = " ".join(body[start:end]) + ("'s" if core.lower() == "its" else "")
    if at == 0:
        thing = thing[:1].upper() + thing[1:]
    words[at] = word.replace(core, thing, 1)
    return " ".join(words)


def rewrite_or_fallback(text: str, question: str, previous: str, anchor: str | None = None) -> tuple[str, str]:
    """The model's rewrite if it is a plausible question, else ``anchor`` (by default the previous
    standalone question) joined with the follow-up: small models sometimes answer instead of
    rewriting, give an earlier question back as it was, which drops the follow-up, give back a
    follow-up that names no subject (:data:`NO_SUBJECT`) as it was asked, give back one that still
    only names something (:func:`asks_nothing`), make the asker its subject ("Where was I born?"
    for "Where was he born?", :data:`FIRST_PERSON`), or lose the question word the follow-up opens
    with (:func:`lost_question_word`). After a question about who
    made something, a passive "it" is that thing: :func:`made_thing`'s reading stands ("resolved")
    unless the model's rewrite is the same. A follow-up that only names another thing, whose rewrite
    failed, asks the question it would have been joined to about that thing (:func:`swapped_thing`,
    "substituted") where that question names one thing to swap; a follow-up whose one "it" can only be the
    thing that question asked about reads it so (:func:`thing_for_it`, "resolved")."""
    anchor = previous if anchor is None else anchor
    line = next((ln.strip() for ln in text.strip().splitlines() if ln.strip()), "")
    line = re.sub(r"^(user|standalone question|question|rewritten question)\s*:\s*", "", line, flags=re.I).strip(' "')
    if (resolved := made_thing(question, previous)) is not None:
        return resolved, "rewritten" if _same(line.rstrip("?"), resolved.rstrip("?")) else "resolved"
    repeated = any(_same(line, earlier) and not _same(question, earlier) for earlier in (previous, anchor))
    unresolved = (NO_SUBJECT.match(question) is not None and _same(line.rstrip("?.! "), question.rstrip("?.! "))
                  or asks_nothing(line) or (speaks_of_the_asker(line) and not speaks_of_the_asker(question))
                  or lost_question_word(question, line) or dropped_its_words(question, line))
    if line.endswith("?") and 3 <= len(line) <= 4 * len(question) + 200 and not repeated and not unresolved:
        return line, "rewritten"
    if (swapped := swapped_thing(question, anchor)) is not None:
        return swapped, "substituted"
    if (resolved := thing_for_it(question, anchor)) is not None:
        return resolved, "resolved"
    return f"{anchor} {question}".strip(), "joined"


def joined_to(turn: Turn) -> str:
    """What a follow-up to ``turn`` is joined to when its rewrite fails: the turn's standalone
    question, less the follow-up an earlier fallback joined to it. A run of failed rewrites then
    keeps the question it started from, instead of growing by one question a turn."""
    standalone, asked = turn["standalone_question"], turn["question"]
    if standalone != asked and standalone.endswith(f" {asked}"):
        return standalone[: -len(asked)].strip()
    return standalone


UNNAMED_PERSON = re.compile(
    r"^\W*(?:(?:in|at|on|for|from|to|with|by|of|during|since|until|after|before)\s+)?"
    r"(?:(?P<wh>(?:what|which|whose)(?:\s+\w+)?|how(?:\s+(?:old|many|much|long|tall|far|big|often)(?:\s+\w+)?)?"
    r"|who|whom|when|where|why)\s+)?"
    rf"(?P<aux>{'|'.join(sorted(BE | AUXILIARIES))})(?:n['’]t)?\s+(?P<pronoun>he|she|his|her)\b(?!['’]s\b)"
    r"(?P<next>\s+\w+)?",
    re.IGNORECASE)
"""A question whose subject is a person it does not name: an optional question word (and "how old",
"which city", "in what year", "whose son"), an auxiliary, then "he", "she", "his" or "her" ("When was he born?",
"What was his first album?", "Is she alive?"). Not "they" or "it", which a standalone question uses of
no one in particular ("When did they stop cigarette advertising?", "How long does it take?"); not "she's",
which after an auxiliary is a title ("Where does She's All That take place?"); and not a capitalised
pronoun before a capitalised word, which is a name ("Of what were He Kexin and Deng Linlin accused?",
"Where does Her Majesty live?")."""

POSSESSIVE = frozenset(("his", "her"))
BINDING = frozenset(("do", "does", "did", "has", "have", "had"))
"""Verbs after which "Who" may be the one a possessive means: in "Who had his first fight in 1914?"
"who" is "his"; in "Who was his father?" it is not."""


def unnamed_person(question: str) -> str | None:
    """The pronoun (lower case) a question stands on without naming whom it means
    (:data:`UNNAMED_PERSON`), or ``None``."""
    found = UNNAMED_PERSON.match(question)
    if found is None:
        return None
    pronoun = found["pronoun"].lower()
    if (found["wh"] or "").lower() == "who" and pronoun in POSSESSIVE and found["aux"].lower() in BINDING:
        return None
    if found["pronoun"].istitle() and found["next"] and found["next"].strip().istitle():
        return None
    return pronoun


NAMING = re.compile(r"^\W*(?:i\s+mean|i\s+meant|i'?m\s+asking\s+about|i\s+am\s+asking\s+about|about|sorry)\b[\s,:]*",
                    re.IGNORECASE)
"""How a reply that gives a name may begin ("I mean Marie Curie"), which is not part of the name."""
NOT_NAMES = frozenset(QUESTION_WORDS) | BE | BINDING | frozenset(
    "no yes not nobody anyone someone somebody never nope ok okay thanks idk".split())
"""Words a name does not begin with: a question of its own begins so ("When was Newton born?"), or a reply
that gives no name ("no idea"). Not "will", "may" or "can", which a name may ("Will Smith")."""
MAX_NAME_WORDS, MAX_NAME_CHARS = 6, 80


def named_in_reply(asked: str, reply: str) -> str | None:
    """The question ``asked`` asked again of the name ``reply`` gives ("Isaac Newton", "I mean Marie
    Curie"), after the answer asked who its pronoun meant: "When was he born?" and "Isaac Newton" read
    "When was Isaac Newton born?", "his" becomes the name's possessive. ``None`` when the reply is not a
    name of at most :data:`MAX_NAME_WORDS` words and :data:`MAX_NAME_CHARS` characters (a question of
    its own, a pronoun again, "no idea")."""
    found = UNNAMED_PERSON.match(asked)
    name = " ".join(NAMING.sub("", reply.strip(), count=1).rstrip("?.! ").split())
    words = name.lower().split()
    if (found is None or not words or len(words) > MAX_NAME_WORDS or len(name) > MAX_NAME_CHARS
            or words[0] in NOT_NAMES or PERSON.search(name) or not any(map(str.isalpha, name))):
        return None
    named = f"{name}'s" if found["pronoun"].lower() in POSSESSIVE else name
    return asked[: found.start("pronoun")] + named + asked[found.end("pronoun"):]


def asked_who(turn: Turn) -> bool:
    """Whether ``turn``'s answer asked who its question meant (:mod:`nodes.ask_who`)."""
    return replied_without_reading(turn) and (turn.get("answerability") or {}).get("reply", "who") == "who"


def topical(turns: Sequence[Turn]) -> list[Turn]:
    """The turns a follow-up may refer back to: not those answered without reading ("hello", "thanks",
    a question asked back), which name nothing the next question could mean."""
    return [turn for turn in turns if not replied_without_reading(turn)]


def read_documents(turn: Turn) -> list[tuple[str, bool]]:
    """The documents ``turn`` answered from, as (title, whether it is one of the user's files): those it
    summarized, else the files it searched only, else the document it described, else the one its first
    citation comes from."""
    if turn.get("summarized"):
        return [(d["title"], not d["doc_id"].startswith(WIKIPEDIA_IDS)) for d in turn["summarized"]["documents"]]
    if turn.get("named_documents"):
        return [(d["title"], True) for d in turn["named_documents"]]
    if turn.get("described"):
        return [(turn["described"]["title"], False)]
    citations = turn.get("citations") or []
    return [(citations[0]["title"].split(SECTION_SEPARATOR)[0], (citations[0].get("metadata") or {}).get("source") == "file")
            ] if citations else []


WIKIPEDIA_IDS = "wiki/"
"""How the ids of the bundled Wikipedia summaries begin."""


MOST_REFERENT_WORDS = 6
"""The most words a name put for a pronoun may have (:func:`referent`)."""


def referent(turn: Turn) -> str | None:
    """What the conversation is on after ``turn``, as a pronoun of the next request would mean it: what the
    rewrite of ``turn`` put for its own pronoun ("Who invented it?" read "Who invented the vaccine?": "the
    vaccine"), else the thing it described ("a vaccine"); ``None`` otherwise (the document an answer cites
    is not it: "Edward Jenner" answers who invented the vaccine)."""
    asked, read = (re.findall(r"[\w'’.-]*\w", turn[key]) for key in ("question", "standalone_question"))
    start = 0
    while start < min(len(asked), len(read)) and asked[start].casefold() == read[start].casefold():
        start += 1
    end = 0
    while end < min(len(asked), len(read)) - start and asked[-1 - end].casefold() == read[-1 - end].casefold():
        end += 1
    removed, put = asked[start:len(asked) - end], read[start:len(read) - end]
    if len(removed) == 1 and removed[0].casefold() in PRONOUNS and 0 < len(put) <= MOST_REFERENT_WORDS:
        return " ".join(put)
    described = turn.get("described")
    return described["thing"] if described else None


PRONOUNS = frozenset({"it", "they", "them", "this", "that", "he", "she", "him", "her"})
"""The pronouns a rewrite may have put a name for (:func:`referent`)."""


def summary_follow_up(question: str, turns: Sequence[Turn]) -> str | None:
    """A request to summarize what the conversation is on ("Summarize it", "What is this document about?"),
    asked of the documents the last answer came from (:func:`read_documents`): "Summarize the Kettle K200
    manual" (a file is called "the" title, as :func:`nodes.retrieve.named_documents` reads a file's name),
    "Summarize Isaac Newton"; or an aspect of it ("Summarize its history", "How does it work?"), asked of
    what the last question was about (:func:`referent`): "Summarize the history of the vaccine". ``None``
    for any other question, or when the last answer read no document or names nothing. The model's rewrite
    had lost the request ("Summarize it" after a question on the kettle's descaling: "What is the frequency
    of descaling for the Kettle K200?", session 63), and joined "Summarize its history" to the question
    before ("Who invented the vaccine? Summarize its history", answered "Edward Jenner", session 66)."""
    before = topical(turns)
    thing = summarized_thing(question) or ""
    if before and thing and (subject := referent(before[-1])) and (aspect := aspect_of_reference(thing, subject)):
        return _put(question, thing, aspect[0].upper() + aspect[1:] if thing[:1].isupper() else aspect)
    documents = read_documents(before[-1]) if before and summarizes_reference(question) else []
    if not documents:
        return None
    named = " and ".join(f"the {title}" if file and not title.lower().startswith("the ") else title
                         for title, file in documents)
    return _put(question, thing, named)


def _put(question: str, thing: str, instead: str) -> str:
    """``question`` with its last ``thing`` put ``instead``."""
    at = question.rfind(thing)
    return " ".join(f"{question[:at]}{instead}{question[at + len(thing):]}".split())


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


@timed("condense_question")
def condense_question(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    question = state["question"]
    turns = state.get("turns") or []
    if turns and asked_who(turns[-1]) and (named := named_in_reply(turns[-1]["question"], question)):
        return {"standalone_question": named,
                "trace": {"rewrite": {"original": question, "standalone": named, "method": "named", "history_turns": 1}}}
    if (summary := summary_follow_up(question, turns)) is not None:
        return {"standalone_question": summary,
                "trace": {"rewrite": {"original": question, "standalone": summary, "method": "summary", "history_turns": 1}}}
    history = shown_turns(topical(turns), question)
    reply = ctx.generator.invoke(condense_messages(history, question), **max_tokens_kwargs(ctx.generator, MAX_TOKENS))
    previous, anchor = (history[-1]["standalone_question"], joined_to(history[-1])) if history else ("", "")
    standalone, method = rewrite_or_fallback(reply.text, question, previous, anchor)
    return {
        "standalone_question": standalone,
        "trace": {"rewrite": {"original": question, "standalone": standalone, "method": method,
                              "history_turns": len(history)}},
    }
