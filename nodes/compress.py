"""compress: keep the question-relevant sentences within the tier's budget.

Sentences are taken in order of relevance (their passage's rerank score, else its retrieval
score; within a multi-sentence passage, the sentence's own cosine to the question) while they fit
the budget, then put back in evidence order. Each kept passage becomes one numbered evidence
item. If not even one sentence fits, the first passage is hard-truncated to the budget.

A budget in tokens (``context_tokens``) is counted in the generator's own tokens, and it *extends*
the evidence already in the state: when the cascade escalates, the earlier items stay first and
unchanged, and passages not yet used are appended as new items until the larger budget is full
(the next most relevant sentences, or with ``fill="rank"`` the next passages in ranked order; a
tier without a token budget then appends them all). The prompt then shares everything up to the old evidence
with the one already evaluated, and the model evaluates only what was added. A budget in
characters (``context_chars``, the thesis' tiers) selects afresh.

``fill="summary"`` (the lazy policy's first context) takes, for each document of the ranked
passages in the order they rank, its first sentences from the index (a document's lead), one item
per document, while they fit the token budget (at least one). Passages supplied with the question
are their own lead. An escalation then appends the ranked passages the summary does not already hold.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

import numpy as np
from langgraph.runtime import Runtime

from components.embedder import Embedder
from components.index import PassageIndex
from components.passages import split_sentences
from pipeline.configuration import SUMMARY_SENTENCES
from pipeline.context import RAGContext
from pipeline.state import EvidenceItem, PassageHit, State
from nodes.base import context_of, timed
from prompts import format_evidence

_MARKER = len("[10] ")  # the widest citation marker a Hard tier (k + k_extra <= 99) produces
ELLIPSIS = "…"
"""Ends a passage cut to a budget."""


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
        room = max(budget_chars - _MARKER - len(first["title"]) - 2 - len(ELLIPSIS), 0)
        cut = first["text"][:room]
        if " " in cut and len(cut) < len(first["text"]):
            cut = cut[: cut.rfind(" ")]
        return [{"n": 1, "passage_id": first["id"], "title": first["title"], "text": cut + ELLIPSIS}], True

    evidence: list[EvidenceItem] = []
    for n, rank in enumerate(sorted(kept), start=1):
        sentences = [s for _, s in sorted(kept[rank])]
        p = passages[rank]
        evidence.append({"n": n, "passage_id": p["id"], "title": p["title"], "text": " ".join(sentences)})
    return evidence, False


def document_lead(passage: PassageHit, index: PassageIndex, sentences: int = SUMMARY_SENTENCES) -> tuple[str, list[str]]:
    """A passage's document's first ``sentences`` sentences and their passage ids, from the index
    (ids ``<doc_id>#p0s0``, ``#p0s1``, …); the passage itself when its document is not indexed
    that way (a passage supplied with the question)."""
    doc_id = passage["metadata"].get("doc_id")
    ids = [f"{doc_id}#p0s{i}" for i in range(sentences)] if doc_id else []
    found = [index.passage(pid) for pid in ids if pid in index]
    if not found:
        return passage["text"], [passage["id"]]
    return " ".join(p.text for p in found), [p.id for p in found]


def summary_evidence(passages: Sequence[PassageHit], index: PassageIndex, budget_tokens: int,
                     count_tokens: Callable[[str], int]) -> list[EvidenceItem]:
    """The leads of the ranked passages' documents, best-ranked document first, one item each,
    while they fit ``budget_tokens`` (at least one)."""
    evidence: list[EvidenceItem] = []
    seen: set[str] = set()
    used = 0
    for p in passages:
        doc = p["metadata"].get("doc_id") or p["id"]
        if doc in seen:
            continue
        seen.add(doc)
        text, ids = document_lead(p, index)
        item: EvidenceItem = {"n": len(evidence) + 1, "passage_id": ids[0], "title": p["title"], "text": text}
        cost = count_tokens(format_evidence([item])) + 1
        if used + cost > budget_tokens and evidence:
            break
        evidence.append(item)
        used += cost
    return evidence


def shortened(text: str, fits: Callable[[str], bool]) -> str:
    """``text`` with :data:`ELLIPSIS` in place of its end, cut by quarters of its words until ``fits``
    takes it or one word is left."""
    words = text.split()
    while len(words) > 1 and not fits(" ".join(words) + ELLIPSIS):
        words = words[: max(1, len(words) * 3 // 4)]
    return " ".join(words) + ELLIPSIS


def extend_evidence(
    passages: Sequence[PassageHit],
    query: np.ndarray,
    existing: Sequence[EvidenceItem],
    budget_tokens: int | None,
    embedder: Embedder,
    count_tokens: Callable[[str], int],
    fill: str = "relevance",
) -> tuple[list[EvidenceItem], bool]:
    """``existing`` followed by new items, from passages not yet in it, that bring the formatted
    evidence up to ``budget_tokens`` tokens (``None``: no limit); and whether truncation was needed.

    ``fill="relevance"`` takes the most relevant sentences first, skipping any that do not fit, and
    cuts the best sentence when nothing fits empty evidence. ``fill="rank"`` takes whole passages
    in ranked order and stops at the first that does not fit, but always takes one into empty
    evidence: the evidence is then always the top passages in order, the start of any larger
    budget's."""
    used_ids = {e["passage_id"] for e in existing}
    held = " ".join(e["text"] for e in existing)  # a summary item holds more than its first passage
    fresh = [p for p in passages if p["id"] not in used_ids and p["text"] not in held]
    used = count_tokens(format_evidence(existing)) if existing else 0
    limit = budget_tokens if budget_tokens is not None else float("inf")
    evidence = list(existing)

    def item(p: PassageHit, text: str) -> EvidenceItem:
        return {"n": len(evidence) + 1, "passage_id": p["id"], "title": p["title"], "text": text}

    if fill == "rank":
        for p in fresh:
            new = item(p, p["text"])
            cost = count_tokens(format_evidence([new])) + 1  # +1: the newline that joins it
            if used + cost > limit and evidence:
                break
            evidence.append(new)
            used += cost
        return evidence, False

    units = _units(fresh, query, embedder)
    units.sort(key=lambda u: (-u.passage_relevance, -u.sentence_relevance, u.rank, u.position))
    kept: dict[int, list[tuple[int, str]]] = {}
    for unit in units:
        if used >= limit:
            break
        p = fresh[unit.rank]
        # a new item costs its marker and title; a sentence joining a kept item, only itself
        text = unit.sentence if unit.rank in kept else f"[{len(existing) + len(kept) + 1}] {p['title']}: {unit.sentence}"
        cost = count_tokens(text) + 1  # +1: the space or newline that joins it
        if used + cost <= limit:
            kept.setdefault(unit.rank, []).append((unit.position, unit.sentence))
            used += cost

    if not kept and not existing and units and budget_tokens is not None:
        best = units[0]
        p = fresh[best.rank]
        evidence.append(item(p, shortened(best.sentence,
                                          lambda text: count_tokens(f"[1] {p['title']}: {text}") <= budget_tokens)))
        return evidence, True
    for rank in sorted(kept):
        evidence.append(item(fresh[rank], " ".join(s for _, s in sorted(kept[rank]))))
    return evidence, False


@timed("compress")
def compress(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    budget = state["settings"]["budget"]
    passages = state.get("passages") or []
    query = np.asarray(state["query_embedding"], dtype=np.float32)
    tokens = budget.get("context_tokens")
    existing = state.get("evidence") or []
    if budget.get("fill") == "summary" and not existing:
        evidence = summary_evidence(passages, ctx.index, tokens or 0, ctx.generator.count_tokens)  # a summary has a budget
        truncated = False
    elif tokens is not None or existing:  # a token budget, or the cascade extending its evidence
        evidence, truncated = extend_evidence(passages, query, existing, tokens, ctx.embedder, ctx.generator.count_tokens,
                                              budget.get("fill", "relevance"))
    elif budget["context_chars"] is not None:
        evidence, truncated = select_evidence(passages, query, budget["context_chars"], ctx.embedder)
    else:  # the edges only come here for a budget that compresses
        raise ValueError("compress needs a budget with context_tokens or context_chars")
    context = format_evidence(evidence)
    extra: dict[str, int] = {"context_tokens": ctx.generator.count_tokens(context)} if tokens is not None or existing else {}
    return {
        "evidence": evidence,
        "trace": {
            "compression": {
                "budget_chars": budget["context_chars"],
                "budget_tokens": tokens,
                **extra,
                "context_chars": len(context),
                "input_chars": len(format_evidence(
                    [{"n": i + 1, "title": p["title"], "text": p["text"]} for i, p in enumerate(passages)]
                )),
                "kept_passages": len(evidence),
                "truncated": truncated,
            }
        },
    }
