"""rerank (Medium and Hard; the edge decides): order passages by the reranker's relevance score."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from components.passages import Passage
from pipeline.context import RAGContext
from pipeline.state import State
from nodes.base import context_of, timed


@timed("rerank")
def rerank(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    passages = state.get("passages") or []
    scores = ctx.reranker.score(
        state.get("standalone_question") or state["question"],
        [Passage(p["id"], p["title"], p["text"], p["metadata"]) for p in passages],
        [p["score"] for p in passages],
    )
    ranked = sorted(
        ({**p, "rerank_score": s} for p, s in zip(passages, scores)),
        key=lambda p: p["rerank_score"],
        reverse=True,
    )
    return {"passages": ranked, "trace": {"reranker": ctx.reranker.name}}
