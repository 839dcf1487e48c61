"""grade-answer: accept the answer, or extend its evidence to the next tier and answer again.

The cascade's decision after a cheap look. An answer whose confidence (the configured signal,
see ``pipeline.configuration.CONFIDENCE_SIGNALS``) reaches ``accept_threshold`` is accepted; so
is any answer when no tier is left on the ladder, or when the next tier has nothing to add. An
abstention always asks for more evidence while there is a tier left. Otherwise the settings move
up one tier and the edge sends the question back to compress, which appends evidence in place.
An answer the generator stopped early (``stop_early``: its confidence was already certain to
fall short) is extended like any unsure one. The decision is written into the step, so the trace
shows each one. An accepted answer goes on to ``check_answer``, which gives it, abstains, or (with
``extend_before_abstaining``) extends it the same way (:func:`extended`); an answer that was
extended is never shown.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from pipeline.context import RAGContext
from pipeline.state import State, Step
from nodes.base import timed


def can_extend(state: State) -> bool:
    """Whether the question's answer could still be extended: a tier is left on the ladder, the
    retrieval holds passages the evidence does not have yet, and the last answer's evidence was not
    already cut to fit the model's context."""
    steps = state.get("steps") or []
    if steps and steps[-1].get("fitted"):
        return False
    ladder = state["settings"].get("ladder") or []
    in_evidence = {e["passage_id"] for e in state.get("evidence") or []}
    return bool(ladder) and any(p["id"] not in in_evidence for p in state.get("passages") or [])


@timed("grade_answer")
def grade_answer(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    settings = state["settings"]
    steps = list(state.get("steps") or [])
    if not steps:
        raise ValueError("grade_answer runs after generate: the state holds no answer")
    step: Step = {**steps[-1]}
    score: float | None = step["confidence"].get(settings["confidence_signal"])  # type: ignore[assignment]
    confident = score is None or score >= settings["accept_threshold"]  # None: the model reports no probabilities
    extend = can_extend(state) and (step["abstained"] or step.get("stopped_early", False) or not confident)
    step["decision"] = "extend" if extend else "accept"
    steps[-1] = step
    return extended(state, steps) if extend else {"steps": steps, "trace": {"steps": steps}}


def extended(state: State, steps: list[Step]) -> dict[str, Any]:
    """The update that moves the question one tier up its ladder (compress then appends that tier's
    evidence in place), with ``steps``, whose last one says why."""
    settings = state["settings"]
    nxt, *rest = settings.get("ladder") or []
    return {"steps": steps, "trace": {"steps": steps}, "escalations": state.get("escalations", 0) + 1,
            "settings": {**settings, "tier": nxt["name"], "budget": nxt, "ladder": rest}}
