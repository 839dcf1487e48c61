"""classify-tier: fix the effective settings and pick the budget tier.

Policies: ``cascade`` (the first tier of its ladder, or ``multi_hop_tier`` for a question the
question-type model calls multi-hop; escalating on low confidence), ``adaptive``
(the trained router picks the starting tier from the query embedding), ``probe-router`` (a
router that also reads a top-10 probe search picks closed book or the cascade's starting tier),
``fixed`` (the configured or overridden tier), ``baseline`` (fixed k = 5, no rerank, compression or correction),
``retrieve-or-not`` (a gate on the embedding and a top-10 probe search picks closed book or the
baseline), ``lazy`` (the summary context first, the top passages appended when the answer is
unsure) and ``self-route`` (the generator picks straight, step-by-step or retrieval from a
one-token routing prompt; the choice and its cost are in the trace). The
settings carry the ladder of tiers the cascade may escalate to; retrieval fetches the largest k
of the ladder once, so every step draws on the same ranked passages. The (standalone) question
is embedded here, once; the router and retrieval reuse the vector. The router's class
probabilities go into the trace.
"""

from __future__ import annotations

import time
from typing import Any, Mapping

import numpy as np
from langgraph.runtime import Runtime

from components.generator import max_tokens_kwargs
from components.retrieval_gate import probe
from nodes.base import context_of, timed
from pipeline.configuration import CLOSED_BOOK, REASONING, SELF_ROUTES, Budget, ConfigurationError, PipelineConfig
from pipeline.context import RAGContext
from pipeline.state import State
from prompts import SELF_ROUTE_LETTERS, self_route_messages


def gate(ctx: RAGContext, pipeline: PipelineConfig, embedding: Any) -> tuple[Budget, dict[str, Any]]:
    """The retrieve-or-not decision: closed book when the gate's probability that the closed-book
    answer is enough reaches the threshold, else the baseline; and its trace."""
    if ctx.retrieval_gate is None:
        raise ConfigurationError("policy 'retrieve-or-not' needs a fitted gate (ResourceConfig.retrieval_gate)")
    start = time.perf_counter()
    features = probe(ctx.index, embedding)
    probability = ctx.retrieval_gate.closed_book_probability(embedding.tolist(), features)
    threshold = pipeline.gate_threshold if pipeline.gate_threshold is not None else ctx.retrieval_gate.threshold
    closed = probability >= threshold
    return (CLOSED_BOOK if closed else pipeline.baseline), {
        "decision": "closed-book" if closed else "retrieve", "closed_book_probability": probability,
        "threshold": threshold, "probe": features, "inference_ms": (time.perf_counter() - start) * 1000.0}


def probe_route(ctx: RAGContext, pipeline: PipelineConfig, embedding: Any) -> tuple[Budget, dict[str, Any]]:
    """The probe router's choice: closed book, or the tier the cascade starts at; and its trace."""
    if ctx.probe_router is None:
        raise ConfigurationError("policy 'probe-router' needs a fitted probe router (ResourceConfig.probe_router)")
    start = time.perf_counter()
    features = probe(ctx.index, embedding)
    route = ctx.probe_router.decide(embedding.tolist(), features, pipeline.router_threshold)
    budget = CLOSED_BOOK if route.rung == CLOSED_BOOK.name else pipeline.budget(route.rung)
    return budget, {**route.as_dict(), "probe": features, "inference_ms": (time.perf_counter() - start) * 1000.0}


def read_question_type(ctx: RAGContext, pipeline: PipelineConfig, question: str, embedding: Any) -> dict[str, Any] | None:
    """The question-type model's reading of the question: ``P(multi-hop)``, the threshold it is read
    against (``multi_hop_threshold``, else the model's fitted one) and the time it took; ``None`` when
    no model is loaded. The cascade starts a multi-hop question higher; the answerability check may
    hold its answer to another threshold."""
    if ctx.question_type is None:
        return None
    start = time.perf_counter()
    probability = ctx.question_type.multi_hop_probability(question, embedding.tolist())
    threshold = ctx.question_type.threshold if pipeline.multi_hop_threshold is None else pipeline.multi_hop_threshold
    return {"multi_hop_probability": probability, "threshold": threshold,
            "inference_ms": (time.perf_counter() - start) * 1000.0}


def cascade_start(pipeline: PipelineConfig, reading: dict[str, Any] | None) -> tuple[Budget, dict[str, Any] | None]:
    """The tier the cascade starts at: ``multi_hop_tier`` for a question the question-type model reads
    as multi-hop, else the cheapest tier of the ladder; and the reading with that start for the trace
    (``None`` when it did not decide: no ``multi_hop_tier``, or no model, when every question starts there)."""
    cheapest, multi_hop = pipeline.start_tier(), pipeline.multi_hop_tier
    if multi_hop is None or multi_hop == cheapest:
        return pipeline.budget(cheapest), None
    if reading is None:
        return pipeline.budget(multi_hop), None
    tier = multi_hop if reading["multi_hop_probability"] >= reading["threshold"] else cheapest
    return pipeline.budget(tier), {**reading, "start": tier}


def self_route(ctx: RAGContext, pipeline: PipelineConfig, question: str) -> tuple[Budget, dict[str, Any]]:
    """The generator's own choice among :data:`pipeline.configuration.SELF_ROUTES`: the most probable
    of the choice letters at its first generated token. The routing prompt's instructions are a
    pinned prefix like the answer prompt's, so only the question's tokens are new."""
    start = time.perf_counter()
    reply = ctx.generator.invoke(self_route_messages(question), **max_tokens_kwargs(ctx.generator, 1))
    top = (reply.response_metadata or {}).get("first_top") or []
    probabilities = {route: sum(p for piece, p in top if piece.strip().upper() == letter)
                     for route, letter in zip(SELF_ROUTES, SELF_ROUTE_LETTERS, strict=True)}
    if any(probabilities.values()):
        choice = max(SELF_ROUTES, key=lambda route: probabilities[route])
    else:  # none of the letters among the most probable tokens: read what it wrote, else retrieve
        written = reply.text.strip()[:1].upper()
        choice = dict(zip(SELF_ROUTE_LETTERS, SELF_ROUTES, strict=True)).get(written, "retrieval")
    usage: Mapping[str, Any] = reply.usage_metadata or {}
    metadata: Mapping[str, Any] = reply.response_metadata or {}
    budget = {"straight": CLOSED_BOOK, "reasoning": REASONING, "retrieval": pipeline.baseline}[choice]
    return budget, {"choice": choice, "probabilities": probabilities, "raw_output": reply.text,
                    "prompt_tokens": usage.get("input_tokens"),
                    "prompt_tokens_evaluated": metadata.get("prompt_tokens_evaluated", usage.get("input_tokens")),
                    "output_tokens": usage.get("output_tokens"),
                    "route_ms": (time.perf_counter() - start) * 1000.0}


@timed("classify_tier")
def classify_tier(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    question = state.get("standalone_question") or state["question"]
    pipeline = ctx.pipeline.with_overrides(state.get("overrides"))
    # lookup_cache embedded the question; embed it here only when this node runs on its own
    stored = state.get("query_embedding")
    embedding = np.asarray(stored, dtype=np.float32) if stored else ctx.embedder.embed_query(question)
    trace: dict[str, Any] = {"policy": pipeline.policy}
    update: dict[str, Any] = {}
    reading = read_question_type(ctx, pipeline, question, embedding)
    signal, threshold = pipeline.confidence_signal, pipeline.accept_threshold
    if pipeline.policy == "retrieve-or-not":
        budget, trace["gate"] = gate(ctx, pipeline, embedding)
    elif pipeline.policy == "self-route":
        budget, route = self_route(ctx, pipeline, question)
        trace["self_route"] = route
        update["overhead"] = [{key: route[key] for key in ("prompt_tokens", "prompt_tokens_evaluated", "output_tokens")}]
    elif pipeline.policy == "lazy":
        budget, signal, threshold = pipeline.summary, pipeline.lazy_signal, pipeline.lazy_threshold
    elif pipeline.policy == "adaptive":
        if ctx.router is None:
            raise ConfigurationError("policy 'adaptive' needs a trained tier router (ResourceConfig.router); "
                                     "load one or use policy 'fixed' or 'baseline'")
        start = time.perf_counter()
        decision = ctx.router.decide(embedding)
        trace["router"] = {**decision.as_dict(), "inference_ms": (time.perf_counter() - start) * 1000.0}
        budget = pipeline.budget(decision.tier)
    elif pipeline.policy == "probe-router":
        budget, trace["probe_router"] = probe_route(ctx, pipeline, embedding)
    elif pipeline.policy == "cascade":
        budget, question_type = cascade_start(pipeline, reading)
        if question_type is not None:
            trace["question_type"] = question_type
    else:
        budget = pipeline.budget()
    ladder = pipeline.ladder(budget.name)
    settings = {
        "policy": pipeline.policy,
        "tier": budget.name,
        "budget": budget.as_dict(),
        "ladder": [b.as_dict() for b in ladder],
        "retrieve_k": max(b.candidates or b.k for b in (budget, *ladder)),
        "keep_k": max(b.k for b in (budget, *ladder)),
        "layout": pipeline.prompt_layout,
        "confidence_signal": signal,
        "accept_threshold": threshold,
        "stop_early": pipeline.stop_early,
        "citation_markers": pipeline.citation_markers,
        "answer_examples": pipeline.answer_examples,
        "lookup_tokens": pipeline.lookup_tokens,
        "question_likelihood": pipeline.question_likelihood,
        "answer_form": pipeline.answer_form,
        "describe": pipeline.describe,
        "named_documents": pipeline.named_documents,
        "follow_up_file_score": pipeline.follow_up_file_score,
        "file_first_score": pipeline.file_first_score,
        "place_first": pipeline.place_first,
        "summarize": pipeline.summarize,
        "summarize_tokens": pipeline.summarize_tokens,
        "living_ages": pipeline.living_ages,
        "two_things": pipeline.two_things,
        "evidence_order": pipeline.evidence_order,
        "max_escalations": pipeline.max_escalations,
        "tau": pipeline.tau,
        "k_extra": pipeline.k_extra,
        "max_corrections": pipeline.max_corrections,
        "abstain_threshold": pipeline.abstain_threshold,
        "extend_before_abstaining": pipeline.extend_before_abstaining,
        "extend_after_rule": pipeline.extend_after_rule,
        "qualified_superlatives": pipeline.qualified_superlatives,
        "multi_hop": None if reading is None else reading["multi_hop_probability"] >= reading["threshold"],
        "multi_hop_probability": None if reading is None else reading["multi_hop_probability"],
    }
    trace.update({"tier": budget.name, "budget": budget.as_dict()})
    return {**update, "settings": settings, "query_embedding": embedding.tolist(), "trace": trace}
