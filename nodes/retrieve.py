"""retrieve: dense top-k for the tier; on a corrective pass, k_extra more passages, de-duplicated.

When the question comes with its own ``documents``, those are the passages (scored by cosine to
the question, in the order given) and the index is not searched.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from components.passages import Passage
from pipeline.context import RAGContext
from pipeline.state import PassageHit, State
from nodes.base import context_of, timed


def _hit(passage: Passage, score: float) -> PassageHit:
    return {"id": passage.id, "title": passage.title, "text": passage.text, "metadata": passage.metadata, "score": score}


@timed("retrieve")
def retrieve(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    settings = state["settings"]
    query = np.asarray(state["query_embedding"], dtype=np.float32)
    existing = state.get("passages") or []
    documents = state.get("documents") or []
    if documents and not existing:
        vectors = ctx.embedder.embed_documents([f"{d['title']}: {d['text']}" if d["title"] else d["text"] for d in documents])
        return {"passages": [
            {"id": f"input/{i}", "title": d["title"], "text": d["text"], "metadata": {"source": "input"}, "score": float(s)}
            for i, (d, s) in enumerate(zip(documents, (vectors @ query).tolist(), strict=True))
        ]}
    if not existing:
        hits = ctx.index.search(query, settings.get("retrieve_k", settings["budget"]["k"]))
        return {"passages": [_hit(h.passage, h.score) for h in hits]}

    corrections = state.get("corrections", 0) + 1
    extra = ctx.index.search(query, settings["k_extra"], exclude={p["id"] for p in existing})
    return {
        "passages": existing + [_hit(h.passage, h.score) for h in extra],
        "corrections": corrections,
        "trace": {"correction": {"fired": True, "rounds": corrections, "added": len(extra)}},
    }
