"""The retrieve-or-not gate (RAGRouter's idea): answer closed-book, or retrieve?

A logistic regression over the question's embedding and cheap *retrieval-probe* features: a
top-10 search of the index costs a few milliseconds and says how decisive retrieval looks (the
best cosine, its gap to the second, the score curve over the top 10, how many of the top hits
come from the best hit's document). Its score is the probability that the closed-book answer is
as good as the retrieved one; the ``retrieve-or-not`` policy answers closed-book at or above the
threshold fitted with it (``python -m training.policies fit``), and retrieves otherwise.

The weights are JSON with their metadata (:class:`components.logistic.LogisticModel`), never pickle.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Mapping, Sequence

import numpy as np

from components.logistic import LogisticModel
from components.model_files import ModelFileError

if TYPE_CHECKING:
    from components.index import PassageIndex

PROBE_K = 10
"""How many passages the probe search looks at."""

PROBE_FEATURES: Mapping[str, str] = {
    "top_score": "the best retrieval cosine",
    "score_gap": "the best cosine minus the second",
    **{f"score_drop_{i}": f"the best cosine minus the cosine at rank {i}" for i in range(3, PROBE_K + 1)},
    "score_mean": "the mean cosine of the top 10",
    "title_agreement": "the share of the top 10 from the best hit's document",
}
"""Every probe feature, with what it measures (the score curve as drops from the best cosine)."""

DEFAULT_GATE = Path(__file__).resolve().parent / "retrieval_gate.json"
"""The gate fit on the train splits that ships with the package."""


def probe_features(scores: Sequence[float], documents: Sequence[str]) -> dict[str, float]:
    """The probe features of a ranked list: its cosines, best first, and each hit's document. A
    list shorter than :data:`PROBE_K` is padded with its last score (a tiny index has no more)."""
    if len(scores) != len(documents):
        raise ValueError(f"{len(scores)} scores for {len(documents)} documents")
    if not scores:
        return {name: 0.0 for name in PROBE_FEATURES}
    padded = [float(s) for s in scores[:PROBE_K]]
    padded += [padded[-1]] * (PROBE_K - len(padded))
    top = padded[0]
    features = {"top_score": top, "score_gap": top - padded[1]}
    features.update({f"score_drop_{i}": top - padded[i - 1] for i in range(3, PROBE_K + 1)})
    features["score_mean"] = float(np.mean(padded))
    features["title_agreement"] = sum(d == documents[0] for d in documents[:PROBE_K]) / min(len(documents), PROBE_K)
    return features


def probe(index: "PassageIndex", embedding: np.ndarray) -> dict[str, float]:
    """The probe features of a top-:data:`PROBE_K` search of ``index`` (a hit's document is its
    ``doc_id``, else its title); all zero for an empty index."""
    hits = index.search(embedding, PROBE_K) if len(index) else []
    return probe_features([h.score for h in hits], [h.passage.metadata.get("doc_id") or h.passage.title for h in hits])


def embedding_features(embedding: Sequence[float]) -> dict[str, float]:
    """The question's embedding as features ``q0``, ``q1``, …"""
    return {f"q{i}": float(v) for i, v in enumerate(embedding)}


class ProbeModelError(ModelFileError):
    """A probe-feature model file that is missing, unreadable or inconsistent."""


@dataclass(frozen=True)
class ProbeModel(LogisticModel):
    """A logistic regression over probe features and (optionally) the question's embedding
    (features ``q0``, ``q1``, …): the retrieve-or-not gate and each rung of the probe router."""

    known_features: ClassVar[Mapping[str, str] | None] = PROBE_FEATURES
    reads_embedding: ClassVar[bool] = True
    error: ClassVar[type[ModelFileError]] = ProbeModelError
    kind: ClassVar[str] = "probe-feature model"

    def probability(self, embedding: Sequence[float], probe: Mapping[str, float]) -> float:
        if self.dimension and len(embedding) < self.dimension:
            raise self.error(f"the {self.kind} reads {self.dimension}-d embeddings, got {len(embedding)}-d")
        return self.score({**probe, **embedding_features(embedding[: self.dimension])})


class RetrievalGateError(ProbeModelError):
    """A retrieve-or-not gate file that is missing, unreadable or inconsistent."""


@dataclass(frozen=True)
class RetrievalGate(ProbeModel):
    """``P(closed book is enough)`` from probe features and (optionally) the question's embedding."""

    error: ClassVar[type[ModelFileError]] = RetrievalGateError
    kind: ClassVar[str] = "retrieve-or-not gate"

    def closed_book_probability(self, embedding: Sequence[float], probe: Mapping[str, float]) -> float:
        return self.probability(embedding, probe)

    @classmethod
    def load(cls, path: str | Path = DEFAULT_GATE) -> "RetrievalGate":
        return super().load(path)
