"""The answerability model: how likely an answer is right, from signals that are free after it.

A logistic regression over a few features of the answer and its evidence (:data:`FEATURES`), fit
on the train splits (``python -m training.answerability``). Its score is a calibrated probability
that the answer is right; the graph's ``check_answer`` node abstains below the configured
threshold. The weights are JSON with their metadata (what they were fit on, the figures of the
fit), never pickle.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Mapping

from components import logistic
from components.logistic import LogisticModel, ModelFileError

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
    "sufficiency": "the sufficiency scorer's probability that the retrieved passages hold an answer to the question",
    "answer_probe": "the answer probe's probability that the answer is right, read from a middle layer of the "
                    "generator at the answer's first token",
}
"""Every feature a model may use, with what it measures. The self-checks (:data:`SELF_CHECKS`)
each cost a short extra model call (a yes/no question appended to the evaluated prompt and
answer); ``sufficiency`` costs one pass of a small cross-encoder (:mod:`components.sufficiency`);
``answer_probe`` needs the probe of the generator in use (:mod:`components.answer_probe`: a layer's
values copied while the first answer token decodes, and a dot product); the others are free."""

SELF_CHECKS = ("self_check", "self_check_question")
SUFFICIENCY = "sufficiency"
ANSWER_PROBE = "answer_probe"

FEATURES_VERSION = 2
"""How the features are computed, recorded with them (``trace["answerability"]["features_version"]``).
Version 1 (unrecorded: every record before session 29) counted in ``abstain_prob`` the probability
of the answer's own first piece when that piece also begins the abstention ("I", which begins
"Istanbul" and "I cannot answer ..."); :func:`current_features` corrects such a record."""


def current_features(features: Mapping[str, float], written_answer: str, abstention: str,
                     version: int | None = None) -> dict[str, float]:
    """``features`` as :data:`FEATURES_VERSION` computes them, from a record of ``version`` (``None``:
    recorded before versions were, version 1). A version-1 answer that began with a piece of the
    ``abstention`` (``prompts.ABSTENTION``) counted that piece's probability, its own ``first_prob``,
    in ``abstain_prob``: with greedy decoding the chosen piece is the most probable one, so a record
    whose ``abstain_prob`` is at least its ``first_prob`` and whose answer begins as the abstention
    does has it taken out. (Where the answer began with another piece and two pieces of the
    abstention together outweighed it, this takes out too much; the records do not keep the pieces.)"""
    out = dict(features)
    if (version or 1) >= 2 or "abstain_prob" not in out or "first_prob" not in out:
        return out
    first, opening, written = out["first_prob"], out["abstain_prob"], written_answer.lstrip()
    if first > 0 and opening >= first - 1e-9 and written[:1] and written[:1] == abstention.lstrip()[:1]:
        out["abstain_prob"] = max(0.0, opening - first)
    return out


DEFAULT_MODEL = Path(__file__).resolve().parent / "answerability.json"
"""The model fit on the train splits that ships with the package."""
FALLBACK_MODEL = DEFAULT_MODEL.with_name("answerability_free.json")
"""The check fit on the same answers without the answer probe, by the same rule: what a generator the
probe does not read (another model) is checked with."""


class AnswerabilityModelError(ModelFileError):
    """An answerability model file that is missing, unreadable or inconsistent."""


@dataclass(frozen=True)
class AnswerabilityModel(LogisticModel):
    """``P(right)`` over features of :data:`FEATURES`; its threshold is the default abstention threshold."""

    known_features: ClassVar[Mapping[str, str] | None] = FEATURES
    error: ClassVar[type[ModelFileError]] = AnswerabilityModelError
    kind: ClassVar[str] = "answerability model"

    @property
    def self_checks(self) -> tuple[str, ...]:
        """The self-check calls scoring needs."""
        return tuple(f for f in self.features if f in SELF_CHECKS)

    @property
    def uses_sufficiency(self) -> bool:
        """Whether scoring needs the sufficiency scorer."""
        return SUFFICIENCY in self.features

    @property
    def uses_answer_probe(self) -> bool:
        """Whether scoring needs the generator's answer probe."""
        return ANSWER_PROBE in self.features

    def threshold_for(self, extending: bool) -> float:
        """The default abstention threshold: with ``extending`` (``extend_before_abstaining``, where a
        withheld answer first goes up the cascade's ladder), the one fitted for that way
        (``metadata["threshold_extending"]``, by ``python -m training.extend_check fit``) when the model
        has one; else :attr:`threshold`."""
        fitted = self.metadata.get("threshold_extending") if extending else None
        return self.threshold if fitted is None else float(fitted)

    @classmethod
    def load(cls, path: str | Path = DEFAULT_MODEL) -> "AnswerabilityModel":
        return super().load(path)


fit_logistic = functools.partial(logistic.fit_logistic, model=AnswerabilityModel)
""":func:`components.logistic.fit_logistic` giving an :class:`AnswerabilityModel`."""
