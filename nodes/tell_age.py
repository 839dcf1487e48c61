"""tell-age: answer "How old is Bill Gates?" from the years his article's description gives.

The Wikipedia reader keeps each article's short description at the end of its first passage: a living
person's "(American businessman and philanthropist (born 1955))", a dead one's life as the reader spells
it ("; born 1769, died 1821, aged 51 or 52"). Asked "How old is Bill Gates?", retrieval read "became the
world's then-youngest billionaire in 1987, at age 31" and the model answered "31", given 79% likely right
(session 64); asked of the passage with his description, the 1.5B model does not subtract. A question that
asks a named person's age (:func:`aged_subject`) is answered, when the reranked passages include one of a
document titled as the person (:func:`nodes.describe.titled_first_passage`) whose first passage gives the years
(:func:`age_told`), from that passage, with no model call: "70 or 71 (born 1955)" (the day of birth
unknown: one of two ages), "Napoleon died in 1821, aged 51 or 52." The answer is cited to that passage,
its age spelled for today (:func:`components.sources.aged_today`), and not scored by the check, as a
description is not. Otherwise the question goes on to the model. Under the setting ``living_ages``.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from langgraph.runtime import Runtime

from components.sources import BORN_ONLY, SPELLED_LIFE, aged_today, ages_on
from nodes.base import context_of, timed
from nodes.describe import given_as_written, possessive, titled_first_passage
from pipeline.context import RAGContext
from pipeline.state import State

AGE_NOW = re.compile(r"^\W*(?:how\s+old\s+is|how\s+old['’]s|what\s+age\s+is|what\s+is\s+the\s+age\s+of)\s+"
                     r"(?P<thing>[^?]+?)(?:\s+(?:now|today))?[\s?.!]*$", re.IGNORECASE)
"""A question that asks how old someone is now: "How old is Bill Gates?", "What is the age of Donald Knuth?"."""
MOST_NAME_WORDS = 6
NOT_A_NAME = frozenset("the a an he she it they him her his its their my your our this that these those".split())
"""First words of what a question asks the age of that make it no one's name ("the universe", "he", "my dog")."""


def aged_subject(question: str) -> str | None:
    """Who ``question`` asks the age of (:data:`AGE_NOW`), when it reads as a name: at most
    :data:`MOST_NAME_WORDS` words, not opening with an article or a pronoun (:data:`NOT_A_NAME`), no possessive;
    else ``None`` ("How old is the Eiffel Tower?", "How old is he?", "How old was Napoleon when he died?"). The
    node answers only where a document is titled so and its description gives the years, so a thing that is no
    person ("How old is Earth?") goes on to the model."""
    found = AGE_NOW.match(question)
    if found is None:
        return None
    words = found["thing"].split()
    if (not words or len(words) > MOST_NAME_WORDS or words[0].lower() in NOT_A_NAME
            or any(possessive(w) for w in words)):
        return None
    return " ".join(words)


def age_told(title: str, text: str, today: date) -> str | None:
    """What a document's first passage ``text`` (its description at the end) tells of the age of ``title``
    on ``today``: a living person's ages from the year alone ("70 or 71 (born 1955)"), a dead one's death and
    age at death ("Napoleon died in 1821, aged 51 or 52."); ``None`` where it gives no years, or a birth year
    too long ago for anyone alive (a description that leaves out the death)."""
    if (life := SPELLED_LIFE.search(text)) is not None:
        return f"{title} died in {life['died']}" + (f", aged {life['aged']}." if life["aged"] else ".")
    if (born := BORN_ONLY.search(text)) is not None and (ages := ages_on(int(born["year"]), today)) is not None:
        return f"{ages} (born {born['year']})"
    return None


@timed("tell_age")
def tell_age(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    question = state.get("standalone_question") or state["question"]
    thing = aged_subject(question)
    found = titled_first_passage(ctx, state, thing) if thing else None
    today = date.today()
    told = age_told(found[0].title, found[0].text, today) if found else None
    if thing is None or found is None or told is None:
        return {"told_age": False}
    first, score, _ = found
    return {"told_age": True, **given_as_written(
        ctx, state, question, [{"id": first.id, "title": first.shown_title, "text": aged_today(first.text, today),
                                "score": score, "metadata": dict(first.metadata)}], state.get("passages") or [],
        "an age told from the years the description of the document titled as the person gives",
        record=("aged", {"thing": thing, "title": first.title, "passage_id": first.id, "on": today.isoformat()}),
        answer=told, k=state["settings"]["budget"]["k"], corrected=state.get("corrections", 0) > 0)}
