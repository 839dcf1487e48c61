"""ask-who: ask whom a question means, when it stands on a person it does not name.

"When was he born?" as a conversation's first question (and with no documents given with it) says of
no one who "he" is: retrieval would bring some person's birth, and the model answers with it ("975",
given 49% likely right, in session 60). start_turn marks such a question (``unnamed``, found by
:func:`nodes.condense_question.unnamed_person`); this node answers it with the question back, at no
retrieval and no model call. Nothing is given as an answer: the trace records an abstention decided
by the question (``answerability.by == "question"``, with its pronoun), which the benchmark scores as
no answer and the front doors show as the question it is, not as "the knowledge base does not hold
it". A reply that gives a name ("Isaac Newton") is read as the question asked of that name
(:func:`nodes.condense_question.named_in_reply`).
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from nodes.base import context_of, direct_reply, timed
from nodes.condense_question import UNNAMED_PERSON
from pipeline.context import RAGContext
from pipeline.state import State

ELIDED = "…"


def who_is_meant(question: str, pronoun: str) -> str:
    """The answer to ``question``, which stands on ``pronoun``: who it means, and what a name will be
    asked ("Who do you mean by “he”? ... “When was … born?” ...")."""
    found = UNNAMED_PERSON.match(question)
    example = (question[: found.start("pronoun")] + ELIDED + question[found.end("pronoun"):]).strip() if found else ""
    asked = f" Reply with a name and I will answer “{example}” about them." if example else " Ask again with a name."
    return f"Who do you mean by “{pronoun}”? The question names no one.{asked}"


@timed("ask_who")
def ask_who(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    question, pronoun = state["question"], state.get("unnamed") or ""
    return direct_reply(context_of(runtime), state, who_is_meant(question, pronoun),
                        f"the question does not say whom “{pronoun}” means, and nothing before it does",
                        pronoun=pronoun, reply="who")
