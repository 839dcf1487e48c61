"""retrieve: dense top-k for the tier; on a corrective pass, k_extra more passages, de-duplicated.

When the question comes with its own ``documents``, the index is not searched: the documents are
cut into passages as ingest cuts a file (paragraphs at blank lines, then sentences; ids
``input/<i>#p<j>s<k>``, ``metadata["doc_id"]`` ``input/<i>``), and the ``k`` closest to the question
are the passages, as a search would give them. A document marked ``whole`` is one passage (id
``input/<i>``), always among them, first and in the order given. A corrective pass then takes the
next ``k_extra`` pieces of the documents, never the index's, from the pieces and embeddings of the
first pass (kept for the last :data:`SUPPLIED_KEPT` sets of documents, so a follow-up over the same
documents does not cut and embed them again either).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, NamedTuple, Sequence

import numpy as np
from langgraph.runtime import Runtime

from components.embedder import Embedder
from components.passages import Passage, SourceDocument, chunk_document
from components.sources import text_paragraphs
from pipeline.context import RAGContext
from pipeline.state import InputDocument, PassageHit, State
from nodes.base import context_of, timed


def _hit(passage: Passage, score: float) -> PassageHit:
    return {"id": passage.id, "title": passage.title, "text": passage.text, "metadata": passage.metadata, "score": score}


SUPPLIED_KEPT = 4
"""How many sets of supplied documents keep their pieces and embeddings in this process (a set of
documents may hold 200,000 characters: some seconds of embedding on a CPU, and a few MB kept)."""


class SuppliedPieces(NamedTuple):
    """Supplied documents as passages: the ``whole`` ones, the ``pieces`` of the others, and the
    embeddings of both, in that order."""

    whole: list[Passage]
    pieces: list[Passage]
    embeddings: np.ndarray


def cut_and_embed(documents: Sequence[InputDocument], embedder: Embedder) -> SuppliedPieces:
    """The passages of ``documents`` and their embeddings, cut and embedded once per set of documents
    and embedder (the last :data:`SUPPLIED_KEPT` are kept)."""
    return _cut_and_embed(embedder, json.dumps(list(documents), sort_keys=True, ensure_ascii=False))


@lru_cache(maxsize=SUPPLIED_KEPT)
def _cut_and_embed(embedder: Embedder, documents_json: str) -> SuppliedPieces:
    documents = json.loads(documents_json)
    whole = [Passage(f"input/{i}", d["title"], d["text"], {"source": "input", "doc_id": f"input/{i}"})
             for i, d in enumerate(documents) if d.get("whole")]
    pieces = [p for i, d in enumerate(documents) if not d.get("whole")
              for p in chunk_document(SourceDocument(f"input/{i}", d["title"], tuple(text_paragraphs(d["text"])),
                                                     {"source": "input"}))]
    texts = [p.embedding_text for p in [*whole, *pieces]]
    return SuppliedPieces(whole, pieces, embedder.embed_documents(texts) if texts else np.zeros((0, 0), np.float32))


def supplied_passages(documents: Sequence[InputDocument], query: np.ndarray, k: int, embedder: Embedder) -> list[PassageHit]:
    """The passages of ``documents`` (:mod:`nodes.retrieve`'s rule): the whole documents in the order
    given, then the ``k`` pieces of the others closest to ``query``, best first (ties in order)."""
    whole, pieces, embeddings = cut_and_embed(documents, embedder)
    if not whole and not pieces:
        return []
    scores = (embeddings @ query).tolist()
    best = sorted(range(len(pieces)), key=lambda i: -scores[len(whole) + i])[:k]
    return [*(_hit(p, float(s)) for p, s in zip(whole, scores[:len(whole)], strict=True)),
            *(_hit(pieces[i], float(scores[len(whole) + i])) for i in best)]


@timed("retrieve")
def retrieve(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    settings = state["settings"]
    query = np.asarray(state["query_embedding"], dtype=np.float32)
    existing = state.get("passages") or []
    documents = state.get("documents") or []
    k = settings.get("retrieve_k", settings["budget"]["k"])
    if documents and not existing:
        return {"passages": supplied_passages(documents, query, k, ctx.embedder)}
    if not existing:
        return {"passages": [_hit(h.passage, h.score) for h in ctx.index.search(query, k)]}

    corrections = state.get("corrections", 0) + 1
    held = {p["id"] for p in existing}
    if documents:
        more = supplied_passages(documents, query, len(existing) + settings["k_extra"], ctx.embedder)
        extra = [p for p in more if p["id"] not in held][: settings["k_extra"]]
    else:
        extra = [_hit(h.passage, h.score) for h in ctx.index.search(query, settings["k_extra"], exclude=held)]
    return {
        "passages": existing + extra,
        "corrections": corrections,
        "trace": {"correction": {"fired": True, "rounds": corrections, "added": len(extra)}},
    }
