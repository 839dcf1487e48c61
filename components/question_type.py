"""Is a question multi-hop? The cascade's first look is sized by the answer.

A small model answers a single-hop question (a fact in one passage) better from less evidence: on
the train splits the evidence-first cascade's SQuAD 2.0 answers score higher from 96 tokens of
evidence than from 128 or all five passages, while a two-hop HotpotQA question needs its second
document and loses F1 from 96 tokens. So the cascade starts a single-hop question at the cheapest
tier and a multi-hop one a tier higher (``PipelineConfig.multi_hop_tier``); both extend in place
while the answer is unsure. This is Adaptive-RAG's idea (Jeong et al., 2024: a query-complexity
classifier trained on labels that come from which dataset a question belongs to), with a logistic
regression instead of a T5 model.

The model reads the question's MiniLM embedding (features ``q0``, ``q1``, …, the one the retriever
already computed) and a few counts of its words (:data:`LEXICAL_FEATURES`); it is fit on the train
splits by ``python -m training.question_type``. JSON with its metadata, never pickle
(:class:`components.logistic.LogisticModel`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Mapping, Sequence

from components.logistic import LogisticModel
from components.model_files import ModelFileError

DEFAULT_QUESTION_TYPE = Path(__file__).resolve().parent / "question_type.json"
"""The question-type model fit on the train splits that ships with the package."""

_COMPARISON = re.compile(r"\b(both|same|also|either|which of|who was born first|older|younger|first)\b", re.IGNORECASE)

LEXICAL_FEATURES: Mapping[str, str] = {
    "words": "how many words the question has",
    "capitalised": "how many of its words after the first start with a capital (names)",
    "commas": "how many commas it has",
    "comparison": "1 when it has a comparison cue (both, same, either, which of, older, first, …)",
    "quotes": "how many double quotes it has (quoted titles)",
}
"""The question's word counts the model may read besides its embedding."""


def lexical_features(question: str) -> dict[str, float]:
    """:data:`LEXICAL_FEATURES` of ``question``."""
    words = question.split()
    return {
        "words": float(len(words)),
        "capitalised": float(sum(1 for w in words[1:] if w[:1].isupper())),
        "commas": float(question.count(",")),
        "comparison": float(bool(_COMPARISON.search(question))),
        "quotes": float(question.count('"')),
    }


def question_features(question: str, embedding: Sequence[float]) -> dict[str, float]:
    """Every feature the model may read: the embedding as ``q0``, ``q1``, … and the word counts."""
    return {**{f"q{i}": float(v) for i, v in enumerate(embedding)}, **lexical_features(question)}


class QuestionTypeModelError(ModelFileError):
    """A question-type model file that is missing, unreadable or inconsistent."""


@dataclass(frozen=True)
class QuestionTypeModel(LogisticModel):
    """``P(multi-hop)`` from the question's embedding and word counts; ``threshold`` (fitted with
    it) is where a question counts as multi-hop."""

    known_features: ClassVar[Mapping[str, str] | None] = LEXICAL_FEATURES
    reads_embedding: ClassVar[bool] = True
    error: ClassVar[type[ModelFileError]] = QuestionTypeModelError
    kind: ClassVar[str] = "question-type model"

    def multi_hop_probability(self, question: str, embedding: Sequence[float]) -> float:
        if len(embedding) < self.dimension:
            raise self.error(f"the {self.kind} reads {self.dimension}-d embeddings, got {len(embedding)}-d")
        return self.score(question_features(question, embedding[: self.dimension]))

    @classmethod
    def load(cls, path: str | Path = DEFAULT_QUESTION_TYPE) -> "QuestionTypeModel":
        return super().load(path)
