"""The answerability model: how likely an answer is right, from signals that are free after it.

A logistic regression over a few features of the answer and its evidence (:data:`FEATURES`), fit
on the train splits (``python -m training.answerability``). Its score is a calibrated probability
that the answer is right; the graph's ``check_answer`` node abstains below the configured
threshold. The weights are JSON with their metadata (what they were fit on, the figures of the
fit), never pickle.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from components.storage import atomic_write_text

FEATURES: Mapping[str, str] = {
    "mean_logprob": "the answer's mean token log-probability",
    "min_prob": "the lowest probability of an answer token",
    "first_prob": "the first answer token's probability",
    "first_margin": "the first answer token's margin over the runner-up",
    "neg_mean_entropy": "the negated mean entropy of the answer's tokens",
    "abstain_prob": "the probability, at the answer's first token, of starting the abstention instead",
    "support": "the share of the answer's content words the best evidence item holds",
    "question_coverage": "the share of the question's content words held by the item holding the answer",
    "question_in_evidence": "the share of the question's content words found anywhere in the evidence",
    "question_words_missing": "how many of the question's content words the evidence does not hold",
    "answer_in_question": "the share of the answer's content words that the question already holds",
    "top_score": "the best retrieval cosine",
    "score_gap": "the best retrieval cosine minus the second best",
    "escalated": "1 when the answer came after the evidence was extended",
    "self_check": "the model's probability of 'yes' when asked whether its answer is stated in the evidence",
    "self_check_question": "the model's probability of 'yes' when asked whether the evidence answers exactly "
                           "the question",
}
"""Every feature a model may use, with what it measures. The self-checks (:data:`SELF_CHECKS`)
each cost a short extra model call (a yes/no question appended to the evaluated prompt and
answer); the others are free."""

SELF_CHECKS = ("self_check", "self_check_question")

DEFAULT_MODEL = Path(__file__).resolve().parent / "answerability.json"
"""The model fit on the train splits that ships with the package."""


class AnswerabilityModelError(ValueError):
    """A model file that is missing, unreadable or inconsistent."""


@dataclass(frozen=True)
class AnswerabilityModel:
    """``P(right) = sigmoid(intercept + sum(coef * (x - mean) / scale))`` over ``features``."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.features:
            raise AnswerabilityModelError("an answerability model needs at least one feature")
        unknown = [f for f in self.features if f not in FEATURES]
        if unknown:
            raise AnswerabilityModelError(f"unknown feature(s) {unknown}; known: {', '.join(FEATURES)}")
        if len(set(self.features)) != len(self.features):
            raise AnswerabilityModelError(f"repeated feature in {list(self.features)}")
        for name in ("mean", "scale", "coef"):
            values = getattr(self, name)
            if len(values) != len(self.features):
                raise AnswerabilityModelError(f"{name} has {len(values)} values for {len(self.features)} features")
            if not all(math.isfinite(v) for v in values):
                raise AnswerabilityModelError(f"{name} holds a value that is not a finite number")
        if any(s <= 0 for s in self.scale):
            raise AnswerabilityModelError("every scale must be positive")
        if not math.isfinite(self.intercept):
            raise AnswerabilityModelError("the intercept must be a finite number")

    @property
    def threshold(self) -> float:
        """The abstention threshold fitted with the model (``metadata["threshold"]``), 0.5 without one."""
        return float(self.metadata.get("threshold", 0.5))

    @property
    def self_checks(self) -> tuple[str, ...]:
        """The self-check calls scoring needs."""
        return tuple(f for f in self.features if f in SELF_CHECKS)

    def score(self, values: Mapping[str, float]) -> float:
        """The probability that the answer is right, from its feature values."""
        missing = [f for f in self.features if f not in values]
        if missing:
            raise AnswerabilityModelError(f"feature value(s) missing: {missing}")
        z = self.intercept + sum(c * (float(values[f]) - m) / s
                                 for f, m, s, c in zip(self.features, self.mean, self.scale, self.coef, strict=True))
        return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))

    def as_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "mean": list(self.mean), "scale": list(self.scale),
                "coef": list(self.coef), "intercept": self.intercept, "metadata": dict(self.metadata)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "AnswerabilityModel":
        try:
            return cls(tuple(data["features"]), tuple(map(float, data["mean"])), tuple(map(float, data["scale"])),
                       tuple(map(float, data["coef"])), float(data["intercept"]), dict(data.get("metadata") or {}))
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, AnswerabilityModelError):
                raise
            raise AnswerabilityModelError(f"not an answerability model: {exc!r}") from exc

    @classmethod
    def load(cls, path: str | Path = DEFAULT_MODEL) -> "AnswerabilityModel":
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise AnswerabilityModelError(f"answerability model not found: {path}") from exc
        except (OSError, ValueError) as exc:
            raise AnswerabilityModelError(f"answerability model {path} is unreadable: {exc}") from exc
        if not isinstance(data, dict):
            raise AnswerabilityModelError(f"answerability model {path} is not a JSON object")
        return cls.from_dict(data)

    def save(self, path: str | Path) -> None:
        atomic_write_text(Path(path), json.dumps(self.as_dict(), indent=2) + "\n")


def fit_logistic(rows: Sequence[Sequence[float]], labels: Sequence[int], features: Sequence[str], *,
                 l2: float = 1.0, metadata: Mapping[str, Any] | None = None) -> AnswerabilityModel:
    """A logistic regression on standardised features by Newton's method, with an L2 penalty of
    ``l2`` on the coefficients (not the intercept). Deterministic: the same rows give the same model."""
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
    return AnswerabilityModel(tuple(features), tuple(mean.tolist()), tuple(scale.tolist()), tuple(w[1:].tolist()),
                              float(w[0]), dict(metadata or {}))
