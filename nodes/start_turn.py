"""start-turn: validate the question (and any documents given with it) and reset what belongs to one question.

With a checkpointer a thread keeps its channels between questions; this node clears the
per-question ones (passages, evidence, corrections, cascade steps, trace) so nothing leaks into the next answer.
The conversation itself (``turns``) is kept. A first question that stands on a person it does not
name ("When was he born?", :func:`nodes.condense_question.unnamed_person`; first: no earlier turn but
those answered without reading), asked without documents, is marked (``unnamed``) for ask_who, unless
the settings say ``ask_who=False``; a greeting, thanks or farewell (``small_talk``) for small_talk.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from pipeline.configuration import validate_documents, validate_question
from pipeline.context import RAGContext
from pipeline.state import NEW_TRACE, State
from nodes.base import context_of, timed
from nodes.condense_question import topical, unnamed_person
from nodes.small_talk import small_talk_kind


@timed("start_turn")
def start_turn(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    question = validate_question(state.get("question"), ctx.pipeline.max_question_chars)
    documents = state.get("documents")
    asks_who = (ctx.pipeline.with_overrides(state.get("overrides")).ask_who and not documents
                and not topical(state.get("turns") or []))
    return {
        "question": question,
        **({"documents": validate_documents(documents)} if documents is not None else {}),
        "standalone_question": question,
        "unnamed": unnamed_person(question) if asks_who else None,
        "small_talk": None if documents else small_talk_kind(question),
        "described": False,
        "summarized": False,
        "told_age": False,
        "compared": False,
        "passages": [],
        "evidence": [],
        "corrections": 0,
        "low_confidence": False,
        "steps": [],
        "overhead": [],
        "escalations": 0,
        "query_embedding": [],
        "cached": False,
        "cache_scope": None,
        "energy_mark": ctx.energy.mark(),
        "trace": {NEW_TRACE: True, "question": question},
    }
