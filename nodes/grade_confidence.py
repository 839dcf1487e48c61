"""grade-confidence: is the best retrieval score below τ? The edge after it decides what follows."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from pipeline.context import RAGContext
from pipeline.state import State
from nodes.base import timed


@timed("grade_confidence")
def grade_confidence(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    passages = state.get("passages") or []
    top = max((p["score"] for p in passages), default=-1.0)
    low = top < state["settings"]["tau"]
    trace: dict[str, Any] = {"top_score": top, "low_confidence": low}
    if state.get("corrections", 0) == 0:
        trace["top_score_initial"] = top
    return {"low_confidence": low, "trace": trace}
