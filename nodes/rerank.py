"""rerank (budgets with ``rerank``; the edge decides): order passages by the reranker's relevance score.

A budget with ``candidates`` had more passages retrieved than it keeps: the reranker orders them
all and the surplus (``retrieve_k - keep_k``, the worst-scored) is dropped, so the evidence is the
best ``k`` of the candidates; of fewer candidates than were asked for (a small index, supplied
documents), the best ``keep_k`` stay. Passages a corrective retrieval added stay candidates like
the rest. With ``evidence_order`` ``title_diverse`` the kept passages are then put in
document-diverse order (:func:`title_diverse`), which the evidence budgets fill in.
"""

from __future__ import annotations

from typing import Any, Sequence

from langgraph.runtime import Runtime

from components.passages import Passage
from pipeline.context import RAGContext
from pipeline.state import State
from nodes.base import context_of, timed


def title_diverse(order: Sequence[int], titles: Sequence[str]) -> list[int]:
    """``order`` (positions, best first) with each title's first passage ahead of every later passage
    of a title already taken; each group keeps its order."""
    seen: set[str] = set()
    firsts: list[int] = []
    repeats: list[int] = []
    for i in order:
        (repeats if titles[i] in seen else firsts).append(i)
        seen.add(titles[i])
    return firsts + repeats


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
    keep_k = settings.get("keep_k", settings["retrieve_k"])
    surplus = settings["retrieve_k"] - keep_k
    # the surplus goes, but of fewer candidates than were asked for (a small index, supplied documents) the
    # best keep_k stay: dropping the whole surplus of 2 candidates for 5 kept of 10 would leave none
    kept = order[: max(len(order) - max(surplus, 0), min(len(order), keep_k))]
    trace: dict[str, Any] = {"reranker": ctx.reranker.name}
    if settings.get("evidence_order") == "title_diverse":
        diverse = title_diverse(kept, [p["title"] for p in passages])
        trace["evidence_order"] = {"order": "title_diverse", "moved": sum(a != b for a, b in zip(kept, diverse, strict=True))}
        kept = diverse
    ranked = [{**passages[i], "rerank_score": scores[i]} for i in kept]
    if surplus > 0:
        trace["rerank"] = {"candidates": len(passages), "kept": len(ranked),
                           "promoted": sum(1 for i in kept[:keep_k] if i >= keep_k)}
    return {"passages": ranked, "trace": trace}
