"""Graph state: a narrow input, a public output, and the full state the nodes share.

Every value is plain JSON data (strings, numbers, lists, dicts) so a checkpointer can store it.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import NotRequired, TypedDict  # pydantic needs these on Python 3.11

NEW_TRACE = "new_trace"
"""A trace update holding ``{NEW_TRACE: True}`` starts a fresh trace: the first node of each
question sends it, so with a checkpointer one question's trace never leaks into the next."""


def merge_trace(current: dict[str, Any] | None, update: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer for ``trace``: keys are overwritten, except ``timings_ms`` whose per-node times add up
    (a node that runs twice, like retrieve with correction, reports its total)."""
    update = dict(update or {})
    merged = {} if update.pop(NEW_TRACE, False) else dict(current or {})
    for key, value in update.items():
        if key == "timings_ms":
            timings = dict(merged.get("timings_ms", {}))
            for node, ms in value.items():
                timings[node] = timings.get(node, 0.0) + ms
            merged["timings_ms"] = timings
        else:
            merged[key] = value
    return merged


class Overrides(TypedDict, total=False):
    """Per-question changes to the configured pipeline (validated by ``classify_tier``)."""

    policy: str
    tier: str
    tau: float
    k_extra: int
    max_corrections: int


class InputDocument(TypedDict):
    """A text supplied with the question; the graph then answers from these instead of the index."""

    title: str
    text: str


class InputState(TypedDict):
    """``overrides`` and ``documents`` hold for one question: generate clears them, so with a
    checkpointer they do not carry over to the next question of the thread."""

    question: str
    overrides: NotRequired[Overrides]
    documents: NotRequired[list[InputDocument]]


class PassageHit(TypedDict):
    """A retrieved passage with its scores; ``rerank_score`` is set by the rerank node."""

    id: str
    title: str
    text: str
    metadata: dict[str, Any]
    score: float
    rerank_score: NotRequired[float]


class EvidenceItem(TypedDict):
    """A piece of evidence in the prompt; ``n`` is its citation number [n]."""

    n: int
    passage_id: str
    title: str
    text: str


class Citation(TypedDict):
    n: int
    passage_id: str
    title: str
    text: str
    score: float
    metadata: dict[str, Any]


class Turn(TypedDict):
    """One finished question of a conversation (kept across questions by a checkpointer)."""

    question: str
    standalone_question: str
    answer: str


class OutputState(TypedDict):
    answer: str
    citations: list[Citation]
    trace: Annotated[dict[str, Any], merge_trace]


class State(InputState, total=False):
    standalone_question: str  # the question rewritten without references to earlier turns
    turns: Annotated[list[Turn], operator.add]
    settings: dict[str, Any]  # effective policy, tier, budget, tau, k_extra, max_corrections
    query_embedding: list[float]
    passages: list[PassageHit]
    corrections: int
    low_confidence: bool
    evidence: list[EvidenceItem]
    answer: str
    citations: list[Citation]
    trace: Annotated[dict[str, Any], merge_trace]
