"""What every node shares: the run context, per-node timing in the trace, and the conversation's
record of a finished answer."""

from __future__ import annotations

import functools
import time
from typing import Any, Callable, Mapping, Sequence

from langgraph.runtime import Runtime

from components.passages import closest, source_of
from pipeline.context import RAGContext, default_context
from pipeline.state import AnswerabilityTrace, Citation, Turn

NodeFn = Callable[..., dict[str, Any]]


def context_of(runtime: Runtime[RAGContext] | None) -> RAGContext:
    """The context passed to this run, or the process-wide default one."""
    ctx = getattr(runtime, "context", None)
    return ctx if ctx is not None else default_context()


def timed(name: str) -> Callable[[NodeFn], NodeFn]:
    """Add the node's wall time to ``trace.timings_ms[name]`` (summed over repeated runs)."""

    def decorate(fn: NodeFn) -> NodeFn:
        @functools.wraps(fn)
        def wrapper(state: Any, runtime: Runtime[RAGContext]) -> dict[str, Any]:
            start = time.perf_counter()
            update = fn(state, runtime)
            elapsed = (time.perf_counter() - start) * 1000.0
            trace = dict(update.get("trace", {}))
            trace["timings_ms"] = {name: elapsed}
            return {**update, "trace": trace}

        return wrapper

    return decorate


def token_counts(trace: Mapping[str, Any]) -> dict[str, int | None]:
    """An answer's tokens as the front doors show them: ``prompt`` (the final answer's), ``input``
    (all its prompts), ``evaluated`` (prompt tokens the model computed; the rest was reused) and
    ``output``; ``None`` where the trace has none (an answer from the query cache)."""
    return {"prompt": trace.get("prompt_tokens"), "output": trace.get("output_tokens"),
            "input": trace.get("input_tokens"), "evaluated": trace.get("prompt_tokens_evaluated")}


def cache_match(trace: Mapping[str, Any]) -> dict[str, Any] | None:
    """The query cache's match an answer was served from (``hit``, ``similarity``, ``cached_question``);
    ``None`` for an answer given afresh."""
    cache = trace.get("cache")
    return {k: cache[k] for k in ("hit", "similarity", "cached_question")} if cache else None


def finished_turn(question: str, standalone: str, answer: str, citations: Sequence[Citation],
                  trace: Mapping[str, Any], passages_read: int | None = None) -> Turn:
    """The conversation's record of a finished answer, from its trace: what the next question's
    rewriting reads, and what a reload shows again (whether the answer was given and a cited passage
    holds it, the check's decision without its features, the escalations, the tiers and tokens, the
    closest passages where no cited one holds an answer, and the query cache's match for an answer
    given before). Not its time, which the service measures around the graph."""
    abstained = bool(trace.get("abstained"))
    supported = bool(trace.get("supported", bool(citations)))
    shown = [] if citations or (supported and not abstained) else closest(trace.get("passages") or [],
                                                                          holding=trace.get("held_by") or ())
    turn: Turn = {"question": question, "standalone_question": standalone, "answer": answer,
                  "citations": list(citations), "supported": supported, "abstained": abstained,
                  "escalations": int(trace.get("escalations") or 0),
                  "closest": shown,
                  "tier": trace.get("tier"), "final_tier": trace.get("final_tier", trace.get("tier")),
                  "tokens": token_counts(trace)}
    if passages_read is not None:
        turn["passages_read"] = passages_read
    if trace.get("answerability"):
        turn["answerability"] = {k: v for k, v in trace["answerability"].items() if k != "features"}
    match = cache_match(trace)
    if match:
        turn["cache"] = match
    if trace.get("described"):
        turn["described"] = trace["described"]
    if trace.get("named_documents"):
        turn["named_documents"] = trace["named_documents"]
    if trace.get("summarized"):
        turn["summarized"] = trace["summarized"]
    if trace.get("aged"):
        turn["aged"] = trace["aged"]
    if trace.get("compared"):
        turn["compared"] = trace["compared"]
    return turn


def unscored_check(ctx: RAGContext, overrides: Mapping[str, Any] | None, decision: str, by: str, reason: str,
                   **extra: Any) -> AnswerabilityTrace:
    """The check's record of an answer no score decided (:mod:`nodes.ask_who`, :mod:`nodes.describe`):
    the decision, who made it and why, against the bar in effect (the request's ``abstain_threshold``,
    else the check's fitted one), which the benchmark's replay of another bar leaves as it is."""
    knob = ctx.pipeline.with_overrides(overrides).abstain_threshold
    check = ctx.check
    threshold = knob if knob is not None else check.threshold if check is not None else 0.0
    return {"decision": decision, "by": by, "score": None, "threshold": threshold, "knob": threshold, "features": {},
            "reason": reason, **extra}  # type: ignore[typeddict-item]


def traced_passages(passages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The passages an answer was chosen from, as the trace keeps them (with where each comes from)."""
    return [{"id": p["id"], "title": p["title"], "text": p["text"], "score": p["score"],
             "rerank_score": p.get("rerank_score"), "source": source_of(p.get("metadata") or {}, p["id"])}
            for p in passages]


NOTHING_EVALUATED = {"prompt_tokens": 0, "input_tokens": 0, "prompt_tokens_evaluated": 0, "output_tokens": 0}
"""The token counts of an answer no model call made."""


def replied_without_reading(record: Mapping[str, Any]) -> bool:
    """Whether an answer (its trace, its turn, or the API's result: whatever holds its ``answerability``)
    was made without reading: a question asked back (:mod:`nodes.ask_who`), small talk answered in kind
    (:mod:`nodes.small_talk`), no more to tell (:func:`nodes.describe.describe_more`), or no document of the
    name a request to summarize gives (:mod:`nodes.summarize`)."""
    return (record.get("answerability") or {}).get("by") == "question"


def direct_reply(ctx: RAGContext, state: Mapping[str, Any], answer: str, reason: str, **check: Any) -> dict[str, Any]:
    """The update of a node that answers without reading (:mod:`nodes.ask_who`, :mod:`nodes.small_talk`,
    :mod:`nodes.summarize` where no document is called what it asks for):
    ``answer`` is given as no answer, decided by the question (``answerability.by == "question"``, with
    ``check``'s fields: the ``reply`` kind, say), with nothing read or generated; the turn keeps it."""
    trace: dict[str, Any] = {
        "abstained": True, "supported": False, "passages": [],
        "answerability": unscored_check(ctx, state.get("overrides"), "abstain", "question", reason, **check),
        **NOTHING_EVALUATED}
    question = state["question"]
    return {"answer": answer, "citations": [], "overrides": {}, "documents": [],
            "turns": [finished_turn(question, question, answer, [], trace, passages_read=0)], "trace": trace}
