"""A router that sees the retrieval: answer closed book, or at which tier the cascade starts.

The thesis' router decides from the question alone. This one also reads a top-10 probe search of
the index (:func:`components.retrieval_gate.probe`: the best cosine, its gap to the second, the
score curve, title agreement), which costs a few milliseconds and says how decisive retrieval
looks.

Its rungs are configurations, cheapest first (``closed-book``, then the cascade's tiers). The
labels are cost-aware (``training.probe_router``): a question's rung is the cheapest configuration
whose answer is within a small epsilon of the best one's F1, and the cheapest when none is right,
since spending more on a question nothing answers is waste. For every rung but the last a logistic
regression gives ``P(this rung or a cheaper one is enough)``; the router takes the cheapest rung
whose probability reaches the threshold fitted with it, else the last rung. The cascade then
escalates from the chosen tier as usual (a closed-book answer is final).

One JSON file holds the rungs, the threshold, every rung's model and the metadata (never pickle).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping, Sequence

from components.logistic import read_model_file
from components.model_files import ModelFileError
from components.retrieval_gate import ProbeModel, ProbeModelError
from components.storage import atomic_write_text, model_digest

DEFAULT_PROBE_ROUTER = Path(__file__).resolve().parent / "probe_router.json"
"""The probe router fit on the train splits that ships with the package."""

CLOSED_BOOK_RUNG = "closed-book"
"""The rung that answers without retrieval (``pipeline.configuration.CLOSED_BOOK``)."""

KIND = "probe router"


class ProbeRouterError(ModelFileError):
    """A probe router file that is missing, unreadable or inconsistent. The message names the fix."""


@dataclass(frozen=True)
class ProbeRoute:
    """The router's choice and why: each rung's probability of being enough, and the threshold."""

    rung: str
    probabilities: dict[str, float]
    threshold: float

    def as_dict(self) -> dict[str, Any]:
        return {"tier": self.rung, "enough_probability": self.probabilities, "threshold": self.threshold}


@dataclass(frozen=True)
class ProbeRouter:
    """``decide(embedding, probe)``: the cheapest rung whose model says it is enough, else the last."""

    rungs: tuple[str, ...]
    models: tuple[ProbeModel, ...]  # one per rung but the last: P(this rung or a cheaper one is enough)
    threshold: float
    metadata: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if len(self.rungs) < 2:
            raise ProbeRouterError(f"a probe router needs at least two rungs, got {list(self.rungs)}")
        if len(set(self.rungs)) != len(self.rungs):
            raise ProbeRouterError(f"repeated rung in {list(self.rungs)}")
        if len(self.models) != len(self.rungs) - 1:
            raise ProbeRouterError(f"{len(self.models)} models for {len(self.rungs)} rungs (one per rung but the last)")
        if not (isinstance(self.threshold, (int, float)) and math.isfinite(self.threshold) and 0 <= self.threshold <= 1):
            raise ProbeRouterError(f"the threshold is a probability in [0, 1], got {self.threshold!r}")

    @property
    def dimension(self) -> int:
        """How many embedding dimensions the router reads (0: probe features only)."""
        return max(model.dimension for model in self.models)

    def check_tiers(self, tiers: Sequence[str]) -> None:
        """Refuse a router whose rungs the configuration cannot run."""
        missing = [rung for rung in self.rungs if rung != CLOSED_BOOK_RUNG and rung not in tiers]
        if missing:
            raise ProbeRouterError(f"the probe router routes to tier(s) {missing} that the configuration lacks "
                                   f"(configured: {', '.join(tiers)})")

    def decide(self, embedding: Sequence[float], probe: Mapping[str, float],
               threshold: float | None = None) -> ProbeRoute:
        """The cheapest rung whose probability of being enough reaches ``threshold`` (default: the
        fitted one), else the last rung."""
        threshold = self.threshold if threshold is None else threshold
        probabilities = {rung: model.probability(embedding, probe)
                         for rung, model in zip(self.rungs, self.models, strict=False)}
        rung = next((r for r in self.rungs[:-1] if probabilities[r] >= threshold), self.rungs[-1])
        return ProbeRoute(rung, probabilities, threshold)

    @cached_property
    def fingerprint(self) -> str:
        """A digest of the whole router (rungs, threshold, every rung's model, metadata): see the query cache."""
        return model_digest(self.as_dict())

    def as_dict(self) -> dict[str, Any]:
        return {"kind": KIND, "rungs": list(self.rungs), "threshold": self.threshold,
                "models": [model.as_dict() for model in self.models], "metadata": dict(self.metadata)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ProbeRouter":
        if data.get("kind") != KIND:
            raise ProbeRouterError(f"not a {KIND} (kind {data.get('kind')!r})")
        try:
            models = tuple(ProbeModel.from_dict(m) for m in data["models"])
            return cls(tuple(data["rungs"]), models, float(data["threshold"]), dict(data.get("metadata") or {}))
        except ProbeModelError as exc:
            raise ProbeRouterError(f"a rung's model is invalid: {exc}") from exc
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ProbeRouterError):
                raise
            raise ProbeRouterError(f"not a {KIND}: {exc!r}") from exc

    @classmethod
    def load(cls, path: str | Path = DEFAULT_PROBE_ROUTER) -> "ProbeRouter":
        return cls.from_dict(read_model_file(path, KIND, ProbeRouterError,
                                             "fit one with `python -m training.probe_router fit`"))

    def save(self, path: str | Path = DEFAULT_PROBE_ROUTER) -> None:
        atomic_write_text(Path(path), json.dumps(self.as_dict(), indent=2) + "\n")
