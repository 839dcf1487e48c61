"""The answer probe: how likely an answer is right, read from the generator's own hidden state.

A small model's token probabilities say how sure it is of the words it writes, and it writes wrong
answers to SQuAD 2.0's unanswerable questions as surely as right ones. What it has made of the
question and the evidence is richer than that, and a middle layer holds it: a linear probe over
one layer's output at the answer's first token (read by :class:`components.layer_tap.LayerTap`
while the generator decodes that token, so it costs no extra pass) tells right answers from wrong
ones far better than the probabilities do. Probes of this kind are the "the hidden state knows"
line of work (Azaria and Mitchell 2023; Slobodkin et al. 2023 on SQuAD 2.0's unanswerable
questions); here the probe is a feature of the answerability check (:mod:`components.answerability`).

A probe belongs to one model: it names the GGUF file whose hidden states it was fit on, and the
pipeline uses it only with that generator. It is a logistic regression over the layer's
``hidden_size`` values (features ``h0``, ``h1``, …), fit on the train splits (``python -m
training.answer_probe``), saved as JSON with its metadata (never pickle).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Sequence

import numpy as np

from components import logistic
from components.logistic import LogisticModel
from components.model_files import ModelFileError

DEFAULT_PROBE = Path(__file__).resolve().parent / "answer_probe.json"
"""The probe of the default generator, fit on the train splits, that ships with the package."""


class AnswerProbeError(ModelFileError):
    """An answer probe file that is missing, unreadable or inconsistent."""


def hidden_features(width: int) -> tuple[str, ...]:
    """The probe's feature names for a layer of ``width`` values: ``h0`` … ``h<width-1>``."""
    return tuple(f"h{i}" for i in range(width))


@dataclass(frozen=True)
class AnswerProbe(LogisticModel):
    """``P(the answer is right)`` from one layer's output at the answer's first token.

    ``metadata["model"]`` is the GGUF file name it reads, ``metadata["layer"]`` the layer."""

    error: ClassVar[type[ModelFileError]] = AnswerProbeError
    kind: ClassVar[str] = "answer probe"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.features != hidden_features(len(self.features)):
            raise self.error("an answer probe's features are h0, h1, … in order, one per hidden value")
        if not isinstance(self.metadata.get("model"), str) or not self.metadata["model"]:
            raise self.error("an answer probe names the model file it reads (metadata 'model')")
        layer = self.metadata.get("layer")
        if not isinstance(layer, int) or isinstance(layer, bool) or layer < 0:
            raise self.error(f"an answer probe names the layer it reads (metadata 'layer', >= 0), got {layer!r}")

    @property
    def model(self) -> str:
        return str(self.metadata["model"])

    @property
    def layer(self) -> int:
        return int(self.metadata["layer"])

    @property
    def width(self) -> int:
        return len(self.features)

    @functools.cached_property
    def _weights(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return (np.asarray(self.mean), np.asarray(self.scale), np.asarray(self.coef))

    def reads(self, generator: Any) -> bool:
        """Whether ``generator`` is the model this probe was fit on (a llama.cpp model from the same
        GGUF file name with hidden states as wide)."""
        from components.generator import LlamaCppChatModel

        return (isinstance(generator, LlamaCppChatModel) and Path(generator.model_path).name == self.model
                and generator.hidden_size == self.width)

    def score_hidden(self, hidden: Sequence[float]) -> float:
        """The probability that the answer is right, from the layer's values."""
        values = np.asarray(hidden, dtype=np.float64)
        if values.shape != (self.width,):
            raise self.error(f"the probe reads {self.width} hidden values, got {values.shape}")
        mean, scale, coef = self._weights
        z = self.intercept + float(((values - mean) / scale) @ coef)
        return float(1.0 / (1.0 + np.exp(-z)) if z >= 0 else np.exp(z) / (1.0 + np.exp(z)))

    @classmethod
    def load(cls, path: str | Path = DEFAULT_PROBE) -> "AnswerProbe":
        return super().load(path)


fit_probe = functools.partial(logistic.fit_logistic, model=AnswerProbe)
""":func:`components.logistic.fit_logistic` giving an :class:`AnswerProbe` (its metadata must
name the model and layer)."""
