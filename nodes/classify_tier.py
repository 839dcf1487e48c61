"""classify-tier: fix the effective settings and pick the budget tier.

Policies: ``fixed`` (the configured or overridden tier) and ``baseline`` (fixed k = 5, no rerank,
compression or correction). The (standalone) question is embedded here, once; retrieval reuses
the vector.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from graph.context import RAGContext
from graph.state import State
from nodes.base import context_of, timed


@timed("classify_tier")
def classify_tier(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    question = state.get("standalone_question") or state["question"]
    pipeline = ctx.pipeline.with_overrides(state.get("overrides"))
    budget = pipeline.budget()
    settings = {
        "policy": pipeline.policy,
        "tier": budget.name,
        "budget": budget.as_dict(),
        "tau": pipeline.tau,
        "k_extra": pipeline.k_extra,
        "max_corrections": pipeline.max_corrections,
    }
    return {
        "settings": settings,
        "query_embedding": ctx.embedder.embed_query(question).tolist(),
        "trace": {"policy": pipeline.policy, "tier": budget.name, "budget": budget.as_dict()},
    }
