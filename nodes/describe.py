"""describe: answer "Who was Napoleon?" with the first passage of the article about Napoleon.

The answer prompt asks the model for as few words as possible (a name, a date, a short phrase), which
is what a factoid question wants and the benchmarks score; asked who or what something is, the model
then gives the name back ("Who was Napoleon?": "Napoleon Bonaparte"; "What is photosynthesis?":
"Photosynthesis", 65% likely right, in session 60). A question that only asks what a thing is ("Who was
Napoleon?", "What is photosynthesis?", "Tell me about Marie Curie", "Describe the Eiffel Tower", or only a
name, "Jupiter": :func:`described_subject`) is answered, when the reranked passages include one of a document titled
as the thing (:func:`title_match`), by that document's first passage, as it is written and cited: the
definition an encyclopaedia's article opens with. No model call: the answer costs the retrieval.
Where no passage's title names the thing, the question goes on to the model as any other.

"Tell me more" after a description (:func:`asks_for_more`) goes to :func:`describe_more`, which reads
on in the same document, :data:`MORE_PASSAGES` at a time, and then says there is no more.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

import numpy as np
from langgraph.runtime import Runtime

from components.index import document_id
from components.passages import Passage
from components.titles import ARTICLE, WORD, plain, title_match, titled_document
from nodes.base import (NOTHING_EVALUATED, context_of, direct_reply, finished_turn, timed, traced_passages,
                        unscored_check)
from nodes.condense_question import topical
from nodes.retrieve import passage_hit, reading_day
from pipeline.context import RAGContext
from pipeline.state import Citation, PassageHit, State
from prompts import format_evidence

DESCRIBE = (
    ("who", re.compile(r"^\W*(?:who(?:\s+(?:is|was|are|were)|['’]s)\s+)(?P<thing>[^?]+?)[\s?.!]*$", re.IGNORECASE), 5),
    ("what", re.compile(r"^\W*(?:what(?:\s+(?:is|was|are|were)|['’]s)\s+)(?P<thing>[^?]+?)[\s?.!]*$", re.IGNORECASE), 4),
    ("tell", re.compile(r"^\W*(?:(?:please\s+)?(?:tell\s+me\s+(?:more\s+)?about|describe|explain|what\s+do\s+you\s+know\s+about|"
                        r"give\s+me\s+an\s+overview\s+of)\s+)(?P<thing>[^?]+?)[\s?.!]*$", re.IGNORECASE), 6),
    ("name", re.compile(r"^\W*(?P<thing>[^?.!]+?)[\s?.!]*$"), 5),
)
"""How a question that only asks what a thing is reads, and the most words its thing may have. A message that
is only a name ("Jupiter", "Isaac Newton", "the French Revolution") asks it too, as a search box is asked:
:data:`MOST_PLAIN_WORDS` words at most unless every one is capitalized."""
MOST_PLAIN_WORDS = 3
"""The most words a message that is only a name may have when they are not all capitalized ("quantum computing",
"the French Revolution"); more ("Einstein won the Nobel Prize") make a sentence, not a name."""

NOT_A_THING = frozenset("""of in for to on at by with from than that which who whom whose what when where why how
    is was are were do does did has have had can could will would should may might
    he she his her they them their it its this these those there i you we me my our your
    first last most least best worst only main
    name names capital population date year years number size length height age cost price purpose reason
    difference meaning origin role function type kind called known located used made not
    and or another other currently now today""".split())
"""Words a thing described does not have: a relation ("the capital", "the name"), a superlative or
order ("the first president"), a clause ("what is it made of", "who is the president of France"), a
pronoun; or more than one thing ("What are fan-tan and faro?"). With them the question asks a fact of the
thing, which the model answers."""

def described_subject(question: str) -> str | None:
    """The thing a question only asks to be described ("Who was Napoleon?" gives "Napoleon", "What is
    a black hole?" "a black hole", "Tell me about Marie Curie" "Marie Curie"), or ``None``: a question
    that asks a fact of it (:data:`NOT_A_THING`), a possessive ("Who was Kublai Khan's grandfather?"),
    a participle ("What was the label renamed?"), more words than a thing's name has, or, asking
    "Who is the ...", a description of a role and not a name ("Who is the president?")."""
    for kind, pattern, most in DESCRIBE:
        found = pattern.match(question)
        if found is None:
            continue
        thing = " ".join(found["thing"].split())
        if thing_named(thing, most) is None:
            return None
        words = WORD.findall(thing)
        body = words[1:] if words and re.fullmatch(ARTICLE, words[0], re.IGNORECASE) else words
        if kind == "who" and body is not words and not all(w[:1].isupper() for w in body):
            return None
        if kind == "name" and len(body) > MOST_PLAIN_WORDS and not all(w[:1].isupper() for w in body):
            return None
        return thing
    return None


NAME_PARTICLES = frozenset({"de'", "de’"})
"""Words of a name that end as a possessive does: "Catherine de' Medici"."""


def possessive(word: str) -> bool:
    """Whether ``word`` is a possessive ("Khan's", "the Beatles'"), not a particle of a name (:data:`NAME_PARTICLES`)."""
    return re.search(r"['’]s?$", word) is not None and word.casefold() not in NAME_PARTICLES


def thing_named(thing: str, most: int) -> str | None:
    """``thing`` with its spaces made single when it reads as the name of one thing, of at most ``most`` words
    after an article; ``None`` when it asks a fact of a thing (:data:`NOT_A_THING`), holds a possessive ("Kublai
    Khan's grandfather"), a participle ("the label renamed"), a superlative, or a comma, colon or semicolon."""
    thing = " ".join(thing.split())
    words = WORD.findall(thing)
    body = words[1:] if words and re.fullmatch(ARTICLE, words[0], re.IGNORECASE) else words
    if (not body or len(body) > most or len(thing) > 80 or re.search(r"[,:;]", thing)
            or any(w.lower().strip(".") in NOT_A_THING or possessive(w) for w in words)
            or any(w.islower() and len(w) > 4 and w.endswith("ed") for w in body)
            or any(len(w) > 5 and w.lower().endswith("est") and w.islower() for w in body)):
        return None
    return thing


def described_by(thing: str, passages: Sequence[PassageHit]) -> PassageHit | None:
    """The first of ``passages`` whose title names ``thing``; failing one, the first whose title ends
    with it (a surname); ``None`` when no title does. A misspelt name is read once, over the index's titles
    (:func:`titled_document`), not also among the passages."""
    best = max(((title_match(thing, p["title"]), -i) for i, p in enumerate(passages)), default=(0, 0))
    return passages[-best[1]] if best[0] else None


@timed("describe")
def describe(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    question = state.get("standalone_question") or state["question"]
    thing = described_subject(question)
    found = titled_first_passage(ctx, state, thing) if thing else None
    if thing is None or found is None:
        return {"described": False}
    first, score, hit = found
    match = {2: "title", 1: "surname"}.get(title_match(thing, hit["title"]), "spelling")
    return {"described": True, **given_as_written(
        ctx, state, question, [passage_hit(first, score, reading_day(state["settings"]))], state.get("passages") or [],
        "a description: the first passage of the document titled as the thing asked about, given as it is written",
        record=("described", {"thing": thing, "title": first.title, "passage_id": first.id, "match": match,
                              "shown": [first.id]}),
        k=state["settings"]["budget"]["k"], corrected=state.get("corrections", 0) > 0)}


def titled_first_passage(ctx: RAGContext, state: State, thing: str, among: Sequence[PassageHit] | None = None,
                         ) -> tuple[Passage, float, PassageHit] | None:
    """The first passage of the document of the reranked passage (or of ``among``) titled as ``thing``
    (:func:`described_by`), its score and that passage; failing one among the reranked passages, of the one
    document of the index so titled or misspelt (:func:`titled_document`: retrieval reads no article for
    "Napolean"); ``None`` where no title names it. The score is the first passage's as retrieved, or where it
    was not among the passages retrieved, its cosine with the question, as retrieval scores."""
    passages = state.get("passages") or []
    hit = described_by(thing, passages if among is None else among)
    if hit is not None and hit["id"] in ctx.index:
        document: str | None = ctx.index.document_of(ctx.index.passage(hit["id"]))
    else:
        document = titled_document(ctx.index, thing) if among is None else None
    if document is None:
        return None
    first = ctx.index.passage(ctx.index.document_passages(document)[0])
    retrieved = next((p for p in passages if p["id"] == first.id), None)
    if retrieved is not None:
        return first, float(retrieved["score"]), hit or retrieved
    vector = ctx.embedder.embed_documents([first.embedding_text])[0]
    score = float(np.dot(np.asarray(state["query_embedding"], dtype=np.float32), vector))
    return first, score, hit or passage_hit(first, score)


def given_as_written(ctx: RAGContext, state: State, standalone: str, given: Sequence[PassageHit],
                     read: Sequence[PassageHit], reason: str, *, record: tuple[str, Mapping[str, Any]],
                     answer: str | None = None, **trace: Any) -> dict[str, Any]:
    """The update of an answer read from passages of the knowledge base with no model call (:func:`describe`,
    :func:`describe_more`, :func:`nodes.tell_age.tell_age`): ``given``, each cited, from the passages
    ``read``; the answer is ``answer``, by default the passages joined as written. The trace keeps
    ``record`` (its key and value: ``described``, ``aged``) and the rest of ``trace``, and the turn keeps both."""
    citations: list[Citation] = [{"n": n, "passage_id": h["id"], "title": h["title"], "text": h["text"],
                                  "score": h["score"], "metadata": h["metadata"]} for n, h in enumerate(given, 1)]
    answer = " ".join(h["text"] for h in given) if answer is None else answer
    key, value = record
    done: dict[str, Any] = {
        **trace, key: dict(value), "passages": traced_passages(read),
        "supported": True, "abstained": False, "citation_source": key,
        "answerability": unscored_check(ctx, state.get("overrides"), "answer", "unchecked", reason),
        **NOTHING_EVALUATED, "context": format_evidence(citations)}
    return {"answer": answer, "citations": citations, "overrides": {}, "documents": [],
            "turns": [finished_turn(state["question"], standalone, answer, citations,
                                    {**(state.get("trace") or {}), **done}, passages_read=len(citations))],
            "trace": done}


def read_on(ctx: RAGContext, state: State, ids: Sequence[str], standalone: str) -> list[PassageHit]:
    """The index's passages ``ids`` as a request for more hands them on (:func:`describe_more`,
    :func:`nodes.compare.compare_more`): each scored by its cosine with ``standalone``, as retrieval scores.
    These run before classify_tier fixes the turn's settings, so the day is read from the pipeline's (a turn
    the query cache answered leaves none in the state: session 66)."""
    passages = [ctx.index.passage(i) for i in ids]
    scores = ctx.embedder.embed_documents([p.embedding_text for p in passages]) @ ctx.embedder.embed_query(standalone)
    today = reading_day({"living_ages": ctx.pipeline.with_overrides(state.get("overrides")).living_ages})
    return [passage_hit(p, float(score), today) for p, score in zip(passages, scores, strict=True)]


MORE = re.compile(r"^\W*(?:please\s+)?(?:tell\s+me\s+more(?:\s+about\s+(?:him|her|it|them|that|this|those))?|"
                  r"(?:some\s+)?more(?:\s+details)?|go\s+on|continue|keep\s+going|(?:what|anything)\s+else)"
                  r"(?:[\s,]+please)?[\s?.!]*$", re.IGNORECASE)
"""A message that asks for more of what was just said ("Tell me more", "more, please", "What else?")."""
MORE_PASSAGES = 2
"""Passages of the document each request for more reads on."""


def asks_for_more(message: str) -> bool:
    """Whether ``message`` only asks for more of the last answer (:data:`MORE`)."""
    return MORE.match(message) is not None


def names_title(question: str, title: str) -> bool:
    """Whether ``question`` names the document titled ``title``: the title (plain, :func:`title_match`'s reading)
    among its words, or a title of two words or more by its last, a capitalized word of the question ("Where was
    Beethoven born?" names "Ludwig van Beethoven"; "Which city …?" does not name "New York City")."""
    named = plain(title)
    if not named:
        return False
    if f" {named} " in f" {plain(question)} ":
        return True
    capitalized = {w.casefold() for w in WORD.findall(question) if w[:1].isupper()}
    return " " in named and named.rsplit(" ", 1)[1] in capitalized


def more_of(turn: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """What "Tell me more" after ``turn`` reads on in: the document it described, or the document its first
    citation is a passage of, the passages it cited there shown already (session 67: "Tell me more" after an
    answer cited to "Hamlet" was searched as it is and abstained); for a turn that cites nothing, the document
    of the first of its closest passages whose title its question names, that passage shown already (session 68:
    after "Where was Albert Einstein born?" was withheld, "Tell me more" was answered from Ja'far al-Sadiq's
    passage); else ``None``."""
    if turn.get("described"):
        return turn["described"]
    citations = turn.get("citations") or []
    if not citations:
        question = turn.get("standalone_question") or turn.get("question") or ""
        named = next((p for p in turn.get("closest") or [] if names_title(question, p["title"])), None)
        return None if named is None else {"thing": named["title"], "title": named["title"], "passage_id": named["id"],
                                           "match": "more", "shown": [named["id"]]}
    first = citations[0]
    document = document_id(first["passage_id"], first.get("metadata") or {})
    return {"thing": first["title"], "title": first["title"], "passage_id": first["passage_id"], "match": "more",
            "shown": [c["passage_id"] for c in citations if document_id(c["passage_id"], c.get("metadata") or {}) == document]}


@timed("describe_more")
def describe_more(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    """"Tell me more" after a description, or after an answer cited to a passage (:func:`more_of`): the next
    :data:`MORE_PASSAGES` passages of that document not yet shown, in its order on from the last one shown (then
    from its start), as written and cited, under the document's title, and when none are left, that the
    knowledge base holds no more on it. No retrieval and no model call; each passage's
    score is its cosine with "Tell me more about <title>"."""
    ctx = context_of(runtime)
    described = more_of(topical(state.get("turns") or [])[-1])
    assert described is not None, "describe_more follows a turn that described or cited something (graph.routing)"
    title, shown = described["title"], list(described.get("shown") or [described["passage_id"]])
    present = [i for i in shown if i in ctx.index]
    document: list[str] = []
    if present:
        first = ctx.index.passage(present[0])
        title, document = first.title, ctx.index.document_passages(ctx.index.document_of(first))  # not a section's
        after = max(document.index(i) for i in present if i in document) + 1 if document else 0
        document = document[after:] + document[:after]  # on from the last passage shown, then the document's start
    rest = [i for i in document if i not in set(shown)][:MORE_PASSAGES]
    if not rest:
        return direct_reply(ctx, state, f"That is all the knowledge base holds on “{title}”.",
                            f"asked for more of “{title}”, whose every passage has been given", reply="no more")
    standalone = f"Tell me more about {title}"
    hits = read_on(ctx, state, rest, standalone)
    rewrite = {"original": state["question"], "standalone": standalone, "method": "more", "history_turns": 1}
    return {"standalone_question": standalone, **given_as_written(
        ctx, state, standalone, hits, hits, f"more of “{title}”: its next passages, given as they are written",
        record=("described", {**described, "title": title, "passage_id": rest[0], "match": "more",
                              "shown": [*shown, *rest]}),
        rewrite=rewrite)}
