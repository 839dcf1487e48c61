"""rerank (budgets with ``rerank``; the edge decides): order passages by the reranker's relevance score.

A budget with ``candidates`` had more passages retrieved than it keeps: the reranker orders them
all and the surplus (``retrieve_k - keep_k``, the worst-scored) is dropped, so the evidence is the
best ``k`` of the candidates. Passages a corrective retrieval added stay candidates like the rest.
"""

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
    settings = state["settings"]
    surplus = settings["retrieve_k"] - settings.get("keep_k", settings["retrieve_k"])
    kept = order[: len(order) - max(surplus, 0)]
    ranked = [{**passages[i], "rerank_score": scores[i]} for i in kept]
    trace: dict[str, Any] = {"reranker": ctx.reranker.name}
    if surplus > 0:
        trace["rerank"] = {"candidates": len(passages), "kept": len(ranked),
                           "promoted": sum(1 for i in kept[: settings["keep_k"]] if i >= settings["keep_k"])}
    return {"passages": ranked, "trace": trace}
