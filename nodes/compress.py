"""compress: keep the question-relevant sentences within the tier's character budget.

Sentences are taken in order of relevance (their passage's rerank score, else its retrieval
score; within a multi-sentence passage, the sentence's own cosine to the question) while they fit
the budget, then put back in evidence order. Each kept passage becomes one numbered evidence
item. If not even one sentence fits, the first passage is hard-truncated to the budget.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np
from langgraph.runtime import Runtime

from components.embedder import Embedder
from components.passages import split_sentences
from pipeline.context import RAGContext
from pipeline.state import EvidenceItem, PassageHit, State
from nodes.base import context_of, timed
from prompts import format_evidence

_MARKER = len("[10] ")  # the widest citation marker a Hard tier (k + k_extra <= 99) produces
_ELLIPSIS = "…"


def _relevance(p: PassageHit) -> float:
    return p.get("rerank_score", p["score"])


class _Unit(NamedTuple):
    """One sentence a passage offers to the evidence, with what orders it."""

    passage_relevance: float  # the passage's rerank score, else its retrieval score
    sentence_relevance: float  # the sentence's own cosine to the question
    rank: int  # the passage's position among the passages
    position: int  # the sentence's position in its passage
    sentence: str


def _units(passages: Sequence[PassageHit], query: np.ndarray, embedder: Embedder) -> list[_Unit]:
    """Every sentence of every passage as a :class:`_Unit`."""
    units: list[_Unit] = []
    for rank, p in enumerate(passages):
        sentences = split_sentences(p["text"]) or [p["text"]]
        if len(sentences) == 1:
            cosines = [p["score"]]
        else:
            vectors = embedder.embed_documents([f"{p['title']}: {s}" for s in sentences])
            cosines = (vectors @ query).tolist()
        units.extend(_Unit(_relevance(p), c, rank, i, s) for i, (c, s) in enumerate(zip(cosines, sentences, strict=True)))
    return units


def select_evidence(
    passages: Sequence[PassageHit], query: np.ndarray, budget_chars: int, embedder: Embedder
) -> tuple[list[EvidenceItem], bool]:
    """The evidence items that fit ``budget_chars`` once formatted, and whether truncation was needed."""
    units = _units(passages, query, embedder)
    units.sort(key=lambda u: (-u.passage_relevance, -u.sentence_relevance, u.rank, u.position))
    kept: dict[int, list[tuple[int, str]]] = {}
    used = 0
    for unit in units:
        rank, idx, sentence = unit.rank, unit.position, unit.sentence
        header = 0 if rank in kept else _MARKER + len(passages[rank]["title"]) + 2
        cost = header + len(sentence) + 1  # +1: the space or newline that joins it
        if used + cost <= budget_chars:
            kept.setdefault(rank, []).append((idx, sentence))
            used += cost

    if not kept:
        if not passages:
            return [], False
        first = passages[0]
        room = max(budget_chars - _MARKER - len(first["title"]) - 2 - len(_ELLIPSIS), 0)
        cut = first["text"][:room]
        if " " in cut and len(cut) < len(first["text"]):
            cut = cut[: cut.rfind(" ")]
        return [{"n": 1, "passage_id": first["id"], "title": first["title"], "text": cut + _ELLIPSIS}], True

    evidence: list[EvidenceItem] = []
    for n, rank in enumerate(sorted(kept), start=1):
        sentences = [s for _, s in sorted(kept[rank])]
        p = passages[rank]
        evidence.append({"n": n, "passage_id": p["id"], "title": p["title"], "text": " ".join(sentences)})
    return evidence, False


@timed("compress")
def compress(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    budget = state["settings"]["budget"]["context_chars"]
    if budget is None:  # the edges only come here for a budget that compresses
        raise ValueError("compress needs a budget with context_chars")
    passages = state.get("passages") or []
    query = np.asarray(state["query_embedding"], dtype=np.float32)
    evidence, truncated = select_evidence(passages, query, budget, ctx.embedder)
    context = format_evidence(evidence)
    return {
        "evidence": evidence,
        "trace": {
            "compression": {
                "budget_chars": budget,
                "context_chars": len(context),
                "input_chars": len(format_evidence(
                    [{"n": i + 1, "title": p["title"], "text": p["text"]} for i, p in enumerate(passages)]
                )),
                "kept_passages": len(evidence),
                "truncated": truncated,
            }
        },
    }
