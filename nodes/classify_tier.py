"""classify-tier: fix the effective settings and pick the budget tier.

Policies: ``cascade`` (the first tier of its ladder, escalating on low confidence), ``adaptive``
(the trained router picks the starting tier from the query embedding), ``fixed`` (the configured
or overridden tier) and ``baseline`` (fixed k = 5, no rerank, compression or correction). The
settings carry the ladder of tiers the cascade may escalate to; retrieval fetches the largest k
of the ladder once, so every step draws on the same ranked passages. The (standalone) question
is embedded here, once; the router and retrieval reuse the vector. The router's class
probabilities go into the trace.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from pipeline.configuration import ConfigurationError
from pipeline.context import RAGContext
from pipeline.state import State
from nodes.base import context_of, timed


@timed("classify_tier")
def classify_tier(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    question = state.get("standalone_question") or state["question"]
    pipeline = ctx.pipeline.with_overrides(state.get("overrides"))
    embedding = ctx.embedder.embed_query(question)
    trace: dict[str, Any] = {"policy": pipeline.policy}
    if pipeline.policy == "adaptive":
        if ctx.router is None:
            raise ConfigurationError("policy 'adaptive' needs a trained tier router (ResourceConfig.router); "
                                     "load one or use policy 'fixed' or 'baseline'")
        start = time.perf_counter()
        decision = ctx.router.decide(embedding)
        trace["router"] = {**decision.as_dict(), "inference_ms": (time.perf_counter() - start) * 1000.0}
        budget = pipeline.budget(decision.tier)
    elif pipeline.policy == "cascade":
        budget = pipeline.budget(pipeline.start_tier())
    else:
        budget = pipeline.budget()
    ladder = pipeline.ladder(budget.name)
    settings = {
        "policy": pipeline.policy,
        "tier": budget.name,
        "budget": budget.as_dict(),
        "ladder": [b.as_dict() for b in ladder],
        "retrieve_k": max([budget.k, *(b.k for b in ladder)]),
        "layout": pipeline.prompt_layout,
        "confidence_signal": pipeline.confidence_signal,
        "accept_threshold": pipeline.accept_threshold,
        "max_escalations": pipeline.max_escalations,
        "tau": pipeline.tau,
        "k_extra": pipeline.k_extra,
        "max_corrections": pipeline.max_corrections,
        "abstain_threshold": pipeline.abstain_threshold,
    }
    trace.update({"tier": budget.name, "budget": budget.as_dict()})
    return {"settings": settings, "query_embedding": embedding.tolist(), "trace": trace}
