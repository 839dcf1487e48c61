"""Rerankers: order retrieved passages by relevance to the question.

* :class:`CrossEncoderReranker`: a sentence-transformers ``CrossEncoder`` by name or path, for
  users who have such weights (none ship offline).
* :class:`RetrievalOrder`, the default: the dense retrieval's own order. Fit on NQ-open and
  TriviaQA train against the Wikipedia summaries (``python -m training.rerank weights
  --knowledge-base wikipedia``), no BM25 or title weight did better: natural questions, written
  without the passage in view, share few words with the sentence that answers them, and BM25 over
  ten candidates favours the ones that repeat the question's words.
* :class:`HybridReranker`, as the thesis describes a cross-encoder-style score without a
  cross-encoder: a weighted sum of the dense cosine, BM25 over the candidates (``bm25s``), and the
  share of question terms found in the passage title. Its weights are fit on SQuAD 2.0 and
  HotpotQA's pooled contexts, whose questions were written beside their paragraphs; the benchmarks
  on those corpora use it.
* :class:`LearnedReranker`: a logistic regression over cheap features of each candidate
  (:data:`RANK_FEATURES`: the hybrid's three, the dense rank, the question's words and word pairs
  in the passage, and whether the passage holds what the question asks for: a year for "when", a
  number for "how many", a name for "who"), fit on SQuAD 2.0 train, the corpus the benchmarks use it
  for (``python -m training.rerank learned``; JSON, never pickle). Well under a millisecond for ten.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar, Mapping, Protocol, Sequence

import bm25s
import numpy as np

from components.logistic import LogisticModel
from components.model_files import ModelFileError
from components.passages import Passage

_TOKEN = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    "a an and are as at be by did do does for from had has have he her his how in is it its of on or "
    "she that the their them they this to was were what when where which who whom whose why will with".split()
)


def content_words(text: str) -> list[str]:
    """The text's lower-cased words, stopwords left out, in order."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


def folded(text: str) -> str:
    """``text`` in lower case without accents ("François Mitterrand": "francois mitterrand"): how names are compared,
    by the titles a question names (:mod:`nodes.describe`), and word by word (:func:`folded_words`)."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)).casefold()


_WORD = re.compile(r"\w+")


def folded_words(text: str) -> set[str]:
    """The words of ``text``, :func:`folded` ("Temür Khan": "temur", "khan"): a name's words as the check's rules
    (:mod:`nodes.check_answer`) and the files a question is near (:func:`nodes.retrieve.names_held`) compare them."""
    return set(_WORD.findall(folded(text)))


def content_terms(text: str) -> set[str]:
    return set(content_words(text))


def _check_lengths(passages: Sequence[Passage], dense_scores: Sequence[float]) -> None:
    if len(passages) != len(dense_scores):
        raise ValueError(f"{len(passages)} passages but {len(dense_scores)} dense scores")


class RerankerError(RuntimeError):
    """A reranker named by the configuration cannot be loaded."""


class Reranker(Protocol):
    name: str

    def warm_up(self) -> None: ...

    def score(self, question: str, passages: Sequence[Passage], dense_scores: Sequence[float]) -> list[float]:
        """One relevance score per passage, higher is better."""
        ...


@dataclass
class HybridReranker:
    """Dense similarity + BM25 + title overlap; all three in [0, 1] before weighting."""

    w_dense: float = 0.6
    w_bm25: float = 0.3
    w_title: float = 0.1
    name: str = "hybrid"

    def __post_init__(self) -> None:
        weights = (self.w_dense, self.w_bm25, self.w_title)
        if any(w < 0 for w in weights) or sum(weights) <= 0:
            raise ValueError(f"reranker weights must be non-negative and not all zero, got {weights}")

    def warm_up(self) -> None:
        return None

    def score(self, question: str, passages: Sequence[Passage], dense_scores: Sequence[float]) -> list[float]:
        return self.weigh(self.features(question, passages, dense_scores)).tolist()

    def weigh(self, features: np.ndarray) -> np.ndarray:
        """The score of each row of :meth:`features`: their weighted mean."""
        weights = np.array([self.w_dense, self.w_bm25, self.w_title])
        return features @ weights / weights.sum()

    def features(self, question: str, passages: Sequence[Passage], dense_scores: Sequence[float]) -> np.ndarray:
        """One row per passage: the dense cosine, BM25 over the candidates and the share of the question's
        terms in the title, each in [0, 1]. Independent of the weights, so a fit computes them once."""
        _check_lengths(passages, dense_scores)
        if not passages:
            return np.zeros((0, 3))
        dense = (np.asarray(dense_scores, dtype=np.float64) + 1.0) / 2.0  # cosine -> [0, 1]
        lexical = self._bm25(question, passages)
        q_terms = content_terms(question)
        title = np.array(
            [len(q_terms & content_terms(p.title)) / len(q_terms) if q_terms else 0.0 for p in passages]
        )
        return np.column_stack([dense, lexical, title])

    @staticmethod
    def _bm25(question: str, passages: Sequence[Passage]) -> np.ndarray:
        corpus = [f"{p.title} {p.text}" for p in passages]
        corpus_tokens = bm25s.tokenize(corpus, stopwords="en", show_progress=False)
        query_words = bm25s.tokenize([question], stopwords="en", return_ids=False, show_progress=False)[0]
        # Query terms absent from every candidate are unknown to this tiny vocabulary.
        words = [w for w in query_words if w in corpus_tokens.vocab]
        if not words:
            return np.zeros(len(passages))
        retriever = bm25s.BM25()
        retriever.index(corpus_tokens, show_progress=False)
        scores = np.asarray(retriever.get_scores(words), dtype=np.float64)
        top = scores.max()
        return scores / top if top > 0 else scores


RANK_FEATURES: Mapping[str, str] = {
    "dense": "the dense cosine, in [0, 1] (the hybrid's)",
    "bm25": "BM25 over the candidates, over the best candidate's (the hybrid's)",
    "title": "the share of the question's words in the title (the hybrid's)",
    "inverse_rank": "1 / the dense rank (1 for the first)",
    "word_share": "the share of the question's words in the passage",
    "pair_share": "the share of the question's adjacent word pairs in the passage",
    "log_length": "log(1 + the passage's words)",
    "new_word_share": "the share of the passage's words the question does not hold",
    "when_year": "a question asking when, and a passage with a year or a month",
    "count_number": "a question asking how many or how much, and a passage with a number",
    "who_name": "a question asking who, and a passage with a capitalised word the question does not hold",
    "where_name": "a question asking where, and a passage with a capitalised word the question does not hold",
    "dense_gap": "the dense cosine minus the best candidate's",
    "word_share_gap": "the share of the question's words minus the best candidate's",
    "paragraph_first": "the passage is its paragraph's first sentence",
    "other_question": "a question asking none of when, how many, who or where",
}
"""The learned reranker's features of a candidate, with what each measures (:func:`rank_features`)."""

_ASKS = (("when", re.compile(r"\b(when|what year|which year|what century|what decade|what date)\b")),
         ("count", re.compile(r"\bhow (many|much|long|old|far|big|large|tall|high)\b"
                              r"|\bwhat (percentage|percent|number|amount)\b")),
         ("who", re.compile(r"\b(who|whom|whose)\b")),
         ("where", re.compile(r"\bwhere\b")))
_YEAR_OR_MONTH = re.compile(r"\b(1\d{3}|20\d{2})s?\b|\b(January|February|March|April|May|June|July|August|September"
                            r"|October|November|December)\b")
_NUMBER = re.compile(r"\b\d[\d,.]*\b|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|hundred"
                     r"|thousand|million|billion|dozen)\b", re.IGNORECASE)
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+")


def asked_kind(question: str) -> str:
    """What ``question`` asks for, as the learned reranker reads it: ``when``, ``count``, ``who``, ``where`` (the
    first that its words say, in that order) or ``other``."""
    lowered = question.lower()
    return next((kind for kind, pattern in _ASKS if pattern.search(lowered)), "other")


def _pairs(words: Sequence[str]) -> set[tuple[str, str]]:
    return set(zip(words, words[1:], strict=False))


def rank_features(question: str, passages: Sequence[Passage], dense_scores: Sequence[float]) -> np.ndarray:
    """One row per candidate (in dense rank order), one column per :data:`RANK_FEATURES` entry, in its order."""
    hybrid = HybridReranker().features(question, passages, dense_scores)
    if not passages:
        return np.zeros((0, len(RANK_FEATURES)))
    words = content_words(question)
    terms, pairs, kind = set(words), _pairs(words), asked_kind(question)
    named = set(_CAPITALISED.findall(question))
    texts = [content_words(p.text) for p in passages]
    held = [set(text) for text in texts]
    share = np.array([len(terms & words) / max(len(terms), 1) for words in held])
    new_name = [bool(set(_CAPITALISED.findall(p.text)) - named) for p in passages]
    dense = np.asarray(dense_scores, dtype=np.float64)
    columns = {
        "dense": hybrid[:, 0], "bm25": hybrid[:, 1], "title": hybrid[:, 2],
        "inverse_rank": 1 / np.arange(1, len(passages) + 1),
        "word_share": share,
        "pair_share": [len(pairs & _pairs(text)) / max(len(pairs), 1) for text in texts],
        "log_length": [math.log1p(len(text)) for text in texts],
        "new_word_share": [len(words - terms) / max(len(words), 1) for words in held],
        "when_year": [kind == "when" and bool(_YEAR_OR_MONTH.search(p.text)) for p in passages],
        "count_number": [kind == "count" and bool(_NUMBER.search(p.text)) for p in passages],
        "who_name": [kind == "who" and new for new in new_name],
        "where_name": [kind == "where" and new for new in new_name],
        "dense_gap": dense - dense.max(),
        "word_share_gap": share - share.max(),
        "paragraph_first": [p.id.endswith("s0") for p in passages],
        "other_question": [kind == "other"] * len(passages),
    }
    return np.column_stack([np.asarray(columns[name], dtype=np.float64) for name in RANK_FEATURES])


class RerankerModelError(ModelFileError):
    """A learned reranker's weights file that is missing, unreadable or not such a model."""


@dataclass(frozen=True)
class RankerModel(LogisticModel):
    """The learned reranker's logistic regression over :data:`RANK_FEATURES` (a subset, in any order)."""

    known_features: ClassVar[Mapping[str, str] | None] = RANK_FEATURES
    error: ClassVar[type[ModelFileError]] = RerankerModelError
    kind: ClassVar[str] = "learned reranker"

    @cached_property
    def _columns(self) -> list[int]:
        """Where each of the model's features stands among :func:`rank_features`' columns (read once per model)."""
        return [list(RANK_FEATURES).index(name) for name in self.features]

    def logits(self, rows: np.ndarray) -> np.ndarray:
        """The log-odds of each row of :func:`rank_features` holding the answer (the ranking :meth:`score` gives,
        for a whole array at once)."""
        standard = (rows[:, self._columns] - np.asarray(self.mean)) / np.asarray(self.scale)
        return self.intercept + standard @ np.asarray(self.coef)


DEFAULT_RANKER = Path(__file__).resolve().parent / "reranker_learned.json"
"""The learned reranker fit on the train splits that ships with the package."""


@dataclass
class LearnedReranker:
    """Orders the candidates by a :class:`RankerModel` (the shipped one, :data:`DEFAULT_RANKER`, unless given)."""

    model: RankerModel | None = None
    name: str = "learned"

    def warm_up(self) -> None:
        if self.model is None:
            self.model = RankerModel.load(DEFAULT_RANKER)

    @cached_property
    def fingerprint(self) -> str:
        """The model's digest: answers cached under one fit are not served under another."""
        self.warm_up()
        assert self.model is not None
        return self.model.fingerprint

    def score(self, question: str, passages: Sequence[Passage], dense_scores: Sequence[float]) -> list[float]:
        self.warm_up()
        assert self.model is not None
        _check_lengths(passages, dense_scores)
        if not passages:
            return []
        return self.model.logits(rank_features(question, passages, dense_scores)).tolist()


@dataclass
class RetrievalOrder:
    """Keeps the dense retrieval's order: each passage's score is its cosine. A budget with more
    candidates than it keeps then keeps the dense top ``k``."""

    name: str = "retrieval-order"

    def warm_up(self) -> None:
        return None

    def score(self, question: str, passages: Sequence[Passage], dense_scores: Sequence[float]) -> list[float]:
        _check_lengths(passages, dense_scores)
        return [float(s) for s in dense_scores]


class CrossEncoderReranker:
    """A sentence-transformers cross-encoder; scores pass through a sigmoid when they are logits."""

    def __init__(self, model: str, *, device: str = "cpu"):
        if not model or not model.strip():
            raise ValueError("cross-encoder model name or path must be non-empty")
        self.model = model
        self.device = device
        self.name = f"cross-encoder:{model}"
        self._encoder: Any = None  # a sentence_transformers.CrossEncoder once warmed up

    def warm_up(self) -> None:
        if self._encoder is None:
            from sentence_transformers import CrossEncoder

            try:
                self._encoder = CrossEncoder(self.model, device=self.device)
            except Exception as exc:  # a mistyped offline name lands here too, as a cross-encoder's
                why = next(iter(str(exc).splitlines()), "no message")
                raise RerankerError(
                    f"could not load reranker {self.model!r} as a cross-encoder ({type(exc).__name__}: {why}); "
                    f"offline rerankers: {', '.join(OFFLINE_RERANKERS)}"
                ) from exc

    def score(self, question: str, passages: Sequence[Passage], dense_scores: Sequence[float]) -> list[float]:
        if not passages:
            return []
        self.warm_up()
        pairs = [(question, p.embedding_text) for p in passages]
        return [float(s) for s in self._encoder.predict(pairs, show_progress_bar=False)]


OFFLINE_RERANKERS: dict[str, type[RetrievalOrder] | type[HybridReranker] | type[LearnedReranker]] = {
    "retrieval-order": RetrievalOrder, "hybrid": HybridReranker, "learned": LearnedReranker}
"""The rerankers that ship with the package (weights, where one has any, included), by name; the first is the
default."""


def load_reranker(model: str | None) -> Reranker:
    """An offline reranker by name (the retrieval order for ``None``), else a cross-encoder by name or path."""
    name = model or next(iter(OFFLINE_RERANKERS))
    if name in OFFLINE_RERANKERS:
        return OFFLINE_RERANKERS[name]()
    return CrossEncoderReranker(name)
