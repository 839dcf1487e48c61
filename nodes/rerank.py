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
    if len(scores) != len(passages):
        raise ValueError(f"reranker {ctx.reranker.name!r} gave {len(scores)} scores for {len(passages)} passages")
    order = sorted(range(len(passages)), key=lambda i: scores[i], reverse=True)  # stable: ties keep rank order
    ranked = [{**passages[i], "rerank_score": scores[i]} for i in order]
    return {"passages": ranked, "trace": {"reranker": ctx.reranker.name}}
