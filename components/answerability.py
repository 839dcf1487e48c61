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
from components.logistic import LogisticModel
from components.model_files import ModelFileError
from components.reranker import content_terms
from components.sources import DocumentKind

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
    "answer_only_in_question": "1 when every content word of the answer is the question's own and the question "
                               "offers no choice (\"What is photosynthesis?\" answered \"Photosynthesis\")",
    "top_score": "the best retrieval cosine",
    "score_gap": "the best retrieval cosine minus the second best",
    "escalated": "1 when the answer came after the evidence was extended",
    "question_logprob_mean": "the mean log-probability the generator gave the question's tokens after the evidence",
    "question_logprob_min": "the lowest log-probability the generator gave a token of the question after the evidence",
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
values copied while the first answer token decodes, and a dot product); the question's likelihood
(:data:`QUESTION_LIKELIHOOD`) needs a llama.cpp generator and a layout that ends with the question,
whose tokens' logits it keeps while the prompt is evaluated (the vocabulary's projection for a dozen
more positions); the others are free."""

SELF_CHECKS = ("self_check", "self_check_question")
ONLY_IN_QUESTION = "answer_only_in_question"
SUFFICIENCY = "sufficiency"
ANSWER_PROBE = "answer_probe"
QUESTION_LIKELIHOOD = ("question_logprob_mean", "question_logprob_min")

FEATURES_VERSION = 3
"""How the features are computed, recorded with them (``trace["answerability"]["features_version"]``).
Version 1 (unrecorded: every record before session 29) counted in ``abstain_prob`` the probability
of the answer's own first piece when that piece also begins the abstention ("I", which begins
"Istanbul" and "I cannot answer ..."). Version 2 did not have :data:`ONLY_IN_QUESTION` (session 38).
:func:`current_features` brings such a record up to date."""


def only_repeats_question(question: str, answer: str) -> bool:
    """Whether every content word of ``answer`` is already in ``question`` (at least one), where the
    question offers no choice: "What is photosynthesis?" answered "Photosynthesis" says nothing the
    question did not, where "Which is older, the Eiffel Tower or the Statue of Liberty?" answered
    "The Eiffel Tower" picks one of the options it offers. On the check's 676 scored training answers
    35 only repeat their question, 2 of them right (session 38)."""
    words = content_terms(answer)
    return bool(words) and words <= content_terms(question) and " or " not in f" {question.lower()} "


def current_features(features: Mapping[str, float], written_answer: str, abstention: str,
                     version: int | None = None, question: str | None = None) -> dict[str, float]:
    """``features`` as :data:`FEATURES_VERSION` computes them, from a record of ``version`` (``None``:
    recorded before versions were, version 1) of the answer as written to ``question``.

    A version-1 answer that began with a piece of the ``abstention`` (``prompts.ABSTENTION``) counted
    that piece's probability, its own ``first_prob``, in ``abstain_prob``: with greedy decoding the
    chosen piece is the most probable one, so a record whose ``abstain_prob`` is at least its
    ``first_prob`` and whose answer begins as the abstention does has it taken out. (Where the answer
    began with another piece and two pieces of the abstention together outweighed it, this takes out
    too much; the records do not keep the pieces.) A record before version 3 gains
    :data:`ONLY_IN_QUESTION` from its question and answer (without the ``question`` it stays unknown,
    and a model that reads it leaves the answer unscored)."""
    out = dict(features)
    if not out:  # an answer the check could not score
        return out
    if (version or 1) < 3 and question is not None and ONLY_IN_QUESTION not in out:
        out[ONLY_IN_QUESTION] = float(only_repeats_question(question, written_answer))
    if (version or 1) >= 2 or "abstain_prob" not in out or "first_prob" not in out:
        return out
    first, opening, written = out["first_prob"], out["abstain_prob"], written_answer.lstrip()
    if first > 0 and opening >= first - 1e-9 and written[:1] and written[:1] == abstention.lstrip()[:1]:
        out["abstain_prob"] = max(0.0, opening - first)
    return out


ONE_PASSAGE_BELOW = 0.15
"""The question-type model's probability of multi-hop under which its multi-hop reading is weak enough for the
check to read the question again with the answer in hand (:func:`checked_as_multi_hop`)."""
ONE_PASSAGE_COVERAGE = 0.5
"""The share of the question's content words (``question_coverage``) that the evidence item holding the answer of
a weakly multi-hop question must hold for the check to read the question single-hop (:func:`checked_as_multi_hop`)."""


def checked_as_multi_hop(multi_hop: bool | None, probability: float | None,
                         features: Mapping[str, float] | None) -> bool | None:
    """How the answerability check reads a question: as the question-type model read it (``multi_hop``, at its
    ``probability``), except that a question read as multi-hop only weakly (``probability`` under
    :data:`ONE_PASSAGE_BELOW`) whose answer came from a passage holding at least :data:`ONE_PASSAGE_COVERAGE` of the
    question's content words (``features["question_coverage"]``) is read single-hop: one passage answered it, so
    it is held to the single-hop bar and the single-hop rules. The reading was made before the answer, to choose
    where the cascade starts; the check reads it again with the answer's passage in hand.

    Found on SQuAD 2.0 train (session 86, docs/preregistered/s86-one-passage.md): of the fifteen unseen runs'
    3,750 questions the model reads 333 as multi-hop, and the lenient multi-hop bar gives 140 answers to unanswerable
    ones. Both values were chosen on train answers alone, the best SQuAD 2.0 figure among those that withhold no
    right HotpotQA train answer (the check's 200, out of fold)."""
    if not multi_hop or probability is None or not features or "question_coverage" not in features:
        return multi_hop
    return not (probability < ONE_PASSAGE_BELOW and features["question_coverage"] >= ONE_PASSAGE_COVERAGE)


DEFAULT_MODEL = Path(__file__).resolve().parent / "answerability.json"
"""The model fit on the train splits that ships with the package."""
FALLBACK_MODEL = DEFAULT_MODEL.with_name("answerability_free.json")
"""The check fit on the same answers without the answer probe, by the same rule: what a generator the
probe does not read (another model) is checked with."""
WIKIPEDIA_MODEL = DEFAULT_MODEL.with_name("answerability_wikipedia.json")
"""The check fit on answers from the bundled Wikipedia summaries (NQ-open and TriviaQA train,
:mod:`training.answerability_wikipedia`): what an answer whose evidence comes from them alone is
checked with. It reads the answer probe, so it checks only the generator the probe was fit on."""
WIKIPEDIA_SOURCE: DocumentKind = "wikipedia"
"""The ``source`` in a passage's metadata that marks it as one of the bundled Wikipedia summaries."""


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

    @property
    def uses_question_likelihood(self) -> bool:
        """Whether scoring needs the question's token log-probabilities after the evidence (a llama.cpp
        generator and a layout that ends with the question)."""
        return any(f in QUESTION_LIKELIHOOD for f in self.features)

    @property
    def multi_hop_threshold(self) -> float | None:
        """The threshold fitted for the questions the question-type model reads as multi-hop
        (``metadata["threshold_multi_hop"]``), or ``None`` when the model has one threshold for all."""
        fitted = self.metadata.get("threshold_multi_hop")
        return None if fitted is None else float(fitted)

    def threshold_for(self, knob: float | None, multi_hop: bool | None) -> float:
        """The threshold one question's answer is checked against, from the one knob
        (``abstain_threshold``; ``None``: the fitted :attr:`threshold`) and the question-type model's
        reading of the question (``None``: none was made).

        A model fit with a threshold per question type (:attr:`multi_hop_threshold`) checks a
        single-hop question (or one without a reading) against the knob itself, and a multi-hop one
        against the knob carried through the fitted pair: 0 stays 0 (never abstain), the fitted
        threshold becomes the fitted multi-hop one, 1 stays 1 (always abstain), linear in between.
        So the knob keeps its meaning at both ends and moves both thresholds the same way."""
        knob = self.threshold if knob is None else knob
        return carried(knob, self.threshold, self.multi_hop_threshold) if multi_hop else knob

    @classmethod
    def load(cls, path: str | Path = DEFAULT_MODEL) -> "AnswerabilityModel":
        return super().load(path)


def carried(knob: float, fitted: float, fitted_multi_hop: float | None) -> float:
    """The multi-hop threshold for ``knob``: the piecewise-linear map through (0, 0), (``fitted``,
    ``fitted_multi_hop``) and (1, 1); ``knob`` itself when there is no multi-hop threshold."""
    if fitted_multi_hop is None or not 0.0 < fitted < 1.0:
        return knob
    if knob <= fitted:
        return knob * fitted_multi_hop / fitted
    return fitted_multi_hop + (knob - fitted) * (1.0 - fitted_multi_hop) / (1.0 - fitted)


fit_logistic = functools.partial(logistic.fit_logistic, model=AnswerabilityModel)
""":func:`components.logistic.fit_logistic` giving an :class:`AnswerabilityModel`."""
