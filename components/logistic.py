"""A logistic regression with its metadata, saved as JSON (never pickle).

``P(positive) = sigmoid(intercept + sum(coef * (x - mean) / scale))`` over named features. The
answerability check (:mod:`components.answerability`) and the retrieve-or-not gate
(:mod:`components.retrieval_gate`) are such models; each subclass names the features it knows
and the error it raises for a bad file.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar, Mapping, Sequence, TypeVar

from components.model_files import ModelFileError
from components.storage import atomic_write_text, model_digest

M = TypeVar("M", bound="LogisticModel")


def read_model_file(path: str | Path, kind: str, error: type[ModelFileError], fix: str = "") -> dict[str, Any]:
    """A model file's JSON object, or ``error`` saying the ``kind`` of file is missing, unreadable or
    not a JSON object (followed by ``fix``, what to do about it, when given)."""
    path = Path(path).expanduser()
    hint = f"; {fix}" if fix else ""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise error(f"{kind} not found: {path}{hint}") from exc
    except (OSError, ValueError) as exc:
        raise error(f"{kind} {path} is unreadable: {exc}{hint}") from exc
    if not isinstance(data, dict):
        raise error(f"{kind} {path} is not a JSON object{hint}")
    return data


def is_embedding_feature(name: str) -> bool:
    """Whether ``name`` is one of the question embedding's features, ``q0``, ``q1``, …"""
    return name.startswith("q") and name[1:].isdigit()


@dataclass(frozen=True)
class LogisticModel:
    """``P(positive) = sigmoid(intercept + sum(coef * (x - mean) / scale))`` over ``features``.

    A subclass sets :attr:`known_features` (``None``: any name), :attr:`reads_embedding` (the question's
    embedding may be features ``q0``, ``q1``, … besides them) and :attr:`error`."""

    known_features: ClassVar[Mapping[str, str] | None] = None
    reads_embedding: ClassVar[bool] = False
    error: ClassVar[type[ModelFileError]] = ModelFileError
    kind: ClassVar[str] = "logistic model"

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.features:
            raise self.error(f"the {self.kind} needs at least one feature")
        known = self.known_features
        unknown = [f for f in self.features
                   if known is not None and f not in known and not (self.reads_embedding and is_embedding_feature(f))]
        if unknown:
            also = " and q0, q1, …" if self.reads_embedding else ""
            raise self.error(f"unknown feature(s) {unknown}; known: {', '.join(known or ())}{also}")
        if len(set(self.features)) != len(self.features):
            raise self.error(f"repeated feature in {list(self.features)}")
        for name in ("mean", "scale", "coef"):
            values = getattr(self, name)
            if len(values) != len(self.features):
                raise self.error(f"{name} has {len(values)} values for {len(self.features)} features")
            if not all(math.isfinite(v) for v in values):
                raise self.error(f"{name} holds a value that is not a finite number")
        if any(s <= 0 for s in self.scale):
            raise self.error("every scale must be positive")
        if not math.isfinite(self.intercept):
            raise self.error("the intercept must be a finite number")

    @property
    def dimension(self) -> int:
        """How many embedding dimensions the model reads: one past the highest ``q<i>`` it uses (0: none)."""
        return max((int(f[1:]) + 1 for f in self.features if is_embedding_feature(f)), default=0)

    @property
    def threshold(self) -> float:
        """The decision threshold fitted with the model (``metadata["threshold"]``), 0.5 without one."""
        return float(self.metadata.get("threshold", 0.5))

    def score(self, values: Mapping[str, float]) -> float:
        """The probability of the positive class, from the feature values."""
        missing = [f for f in self.features if f not in values]
        if missing:
            raise self.error(f"feature value(s) missing: {missing}")
        z = self.intercept + sum(c * (float(values[f]) - m) / s
                                 for f, m, s, c in zip(self.features, self.mean, self.scale, self.coef, strict=True))
        return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))

    @cached_property
    def fingerprint(self) -> str:
        """A digest of the whole model (features, weights, metadata with its thresholds): what an answer
        it decided depends on, so a cached answer is not served under a refit model."""
        return model_digest(self.as_dict())

    def as_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "mean": list(self.mean), "scale": list(self.scale),
                "coef": list(self.coef), "intercept": self.intercept, "metadata": dict(self.metadata)}

    @classmethod
    def from_dict(cls: type[M], data: Mapping[str, Any]) -> M:
        try:
            return cls(tuple(data["features"]), tuple(map(float, data["mean"])), tuple(map(float, data["scale"])),
                       tuple(map(float, data["coef"])), float(data["intercept"]), dict(data.get("metadata") or {}))
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, cls.error):
                raise
            article = "an" if cls.kind[:1] in "aeiou" else "a"
            raise cls.error(f"not {article} {cls.kind}: {exc!r}") from exc

    @classmethod
    def load(cls: type[M], path: str | Path) -> M:
        return cls.from_dict(read_model_file(path, cls.kind, cls.error))

    def save(self, path: str | Path) -> None:
        atomic_write_text(Path(path), json.dumps(self.as_dict(), indent=2) + "\n")


def fit_logistic(rows: Sequence[Sequence[float]], labels: Sequence[int], features: Sequence[str], *,
                 l2: float = 1.0, metadata: Mapping[str, Any] | None = None,
                 model: type[M] = LogisticModel) -> M:  # type: ignore[assignment]
    """A logistic regression on standardised features by Newton's method, with an L2 penalty of
    ``l2`` on the coefficients (not the intercept), as a ``model``. Deterministic: the same rows give the same model."""
    import numpy as np

    x = np.asarray(rows, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] != y.shape[0] or x.shape[1] != len(features):
        raise ValueError(f"rows are {x.shape}, labels {y.shape}, features {len(features)}")
    if len(set(y.tolist())) < 2:
        raise ValueError("the labels hold one class only: nothing to fit")
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([np.ones((x.shape[0], 1)), (x - mean) / scale])
    w = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ w, -30, 30)))
        gradient = z.T @ (p - y) + penalty * w
        hessian = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalty) + 1e-9 * np.eye(z.shape[1])
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return model(tuple(features), tuple(mean.tolist()), tuple(scale.tolist()), tuple(w[1:].tolist()),
                              float(w[0]), dict(metadata or {}))
