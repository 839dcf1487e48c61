"""Routing functions for the conditional edges. Pure functions of the state, so each decision is
testable without models."""

from __future__ import annotations

import re
from typing import Any, Literal, Mapping

from nodes.compare import compared_subjects
from nodes.condense_question import NO_SUBJECT, REFERS_BACK, asked_who, named_in_reply, topical
from nodes.describe import asks_for_more, described_subject, more_of
from nodes.tell_age import aged_subject
from components.requests import summarized_thing
from pipeline.state import BudgetData, State

_REFERS_BACK = re.compile(rf"\b(?:{'|'.join(REFERS_BACK)})\b|^\s*why\b", re.IGNORECASE)


def refers_back(question: str) -> bool:
    """Whether a question may depend on earlier turns (pronouns, demonstratives, "what about ...")."""
    return bool(_REFERS_BACK.search(question) or NO_SUBJECT.match(question))


def after_start(state: State) -> Literal["small_talk", "describe_more", "compare_more", "condense_question", "ask_who",
                                         "lookup_cache"]:
    """Answer small talk in kind; read on in the document just described or cited (or, after an answer cited to
    nothing, the closest document its question named), or the two just compared, when asked for more; rewrite
    the question first only in a conversation (of turns that were read for), and only when it refers back, or
    when it gives the name the last answer asked for; ask who a first question means when it names no one it
    stands on."""
    if state.get("small_talk"):
        return "small_talk"
    turns = state.get("turns") or []
    if turns and asked_who(turns[-1]) and named_in_reply(turns[-1]["question"], state["question"]):
        return "condense_question"
    topics = topical(turns)
    if topics and not state.get("documents") and asks_for_more(state["question"]):
        if topics[-1].get("compared"):
            return "compare_more"
        if more_of(topics[-1]) is not None:  # a description, an answer cited to a passage, or one named closest
            return "describe_more"
    if topics and refers_back(state["question"]):
        return "condense_question"
    if state.get("unnamed"):
        return "ask_who"
    return "lookup_cache"


def after_cache(state: State) -> Literal["finish_turn", "classify_tier"]:
    """An answer served from the query cache is finished; any other question is answered."""
    return "finish_turn" if state.get("cached") else "classify_tier"


def _budget(state: State) -> BudgetData:
    return state["settings"]["budget"]


def asks_to_summarize(state: State) -> bool:
    """Whether the question asks to have a document summarized (:func:`nodes.summarize.summarized_thing`)
    and the settings say to summarize it."""
    settings: Mapping[str, Any] = state.get("settings") or {}
    return bool(settings.get("summarize")) and summarized_thing(state.get("standalone_question") or state["question"]) is not None


def after_classify(state: State) -> Literal["retrieve", "generate"]:
    """A budget of k = 0 answers closed-book, without retrieval (unless documents were supplied, or the
    question asks to have a document summarized)."""
    if _budget(state)["k"] == 0 and not state.get("documents") and not asks_to_summarize(state):
        return "generate"
    return "retrieve"


def after_retrieve(state: State) -> Literal["summarize", "grade_confidence"]:
    """A request to summarize a document goes to summarize after the first retrieval (which found the
    document it names); any other question, or a correction, to grade_confidence."""
    return "summarize" if asks_to_summarize(state) and not state.get("corrections") else "grade_confidence"


def after_summary(state: State) -> Literal["finish_turn", "grade_confidence"]:
    """Summarized, the answer is finished; a request that named no document goes on as any question."""
    return "finish_turn" if state.get("summarized") else "grade_confidence"


def after_grade(state: State) -> Literal["retrieve", "rerank", "compress", "generate"]:
    """Low confidence on a tier that allows correction goes back to retrieve, at most
    ``max_corrections`` times; otherwise on to rerank, compress or generate as the budget says."""
    settings = state["settings"]
    if (
        state.get("low_confidence")
        and _budget(state)["correct"]
        and state.get("corrections", 0) < settings["max_corrections"]
    ):
        return "retrieve"
    if _budget(state)["rerank"]:
        return "rerank"
    return _to_the_answer(state)


def _to_the_answer(state: State) -> Literal["compress", "generate"]:
    budget = _budget(state)
    return "compress" if budget["context_chars"] is not None or budget.get("context_tokens") is not None else "generate"


def after_rerank(state: State) -> Literal["describe", "tell_age", "compare", "compress", "generate"]:
    """A question that only asks what a thing is goes to describe first, one that asks a named person's age
    to tell_age, one that only asks to compare two things to compare (when the settings say so and the
    passages are the knowledge base's, not documents given with it); any other to its budget's next step."""
    settings: Mapping[str, Any] = state.get("settings") or {}
    if (settings.get("living_ages") and not state.get("documents")
            and aged_subject(state.get("standalone_question") or state["question"])):
        return "tell_age"
    if (settings.get("describe") and not state.get("documents")
            and described_subject(state.get("standalone_question") or state["question"])):
        return "describe"
    if (settings.get("describe") and not state.get("documents")
            and compared_subjects(state.get("standalone_question") or state["question"])):
        return "compare"
    return _to_the_answer(state)


def after_description(state: State) -> Literal["finish_turn", "compress", "generate"]:
    """Described, the answer is finished; else on to the budget's next step, as after rerank."""
    return "finish_turn" if state.get("described") else _to_the_answer(state)


def after_comparing(state: State) -> Literal["finish_turn", "compress", "generate"]:
    """Compared, the answer is finished; else on to the budget's next step, as after rerank."""
    return "finish_turn" if state.get("compared") else _to_the_answer(state)


def after_telling_age(state: State) -> Literal["finish_turn", "compress", "generate"]:
    """An age told, the answer is finished; else on to the budget's next step, as after rerank."""
    return "finish_turn" if state.get("told_age") else _to_the_answer(state)


def _extending(state: State) -> bool:
    steps = state.get("steps") or []
    return bool(steps) and steps[-1].get("decision") == "extend"


def after_grade_answer(state: State) -> Literal["compress", "check_answer"]:
    """An answer the grade sent up the ladder goes back to compress for more evidence; an accepted
    one goes to the answerability check."""
    return "compress" if _extending(state) else "check_answer"


def after_check(state: State) -> Literal["compress", "finish_turn"]:
    """An answer the check sent up the ladder (``extend_before_abstaining``) goes back to compress;
    any other is finished."""
    return "compress" if _extending(state) else "finish_turn"
