"""Answer and retrieval metrics.

Exact Match and token F1 follow the official SQuAD 2.0 evaluation script: lower-case, strip
punctuation and the articles a/an/the, collapse whitespace; the score is the maximum over the gold
answers; a question with no gold answer (unanswerable) scores 1 only for an empty prediction.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Iterable, Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCT = set(string.punctuation)


def normalize_answer(text: str) -> str:
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _tokens(text: str) -> list[str]:
    return normalize_answer(text).split() if text else []


def exact_match(prediction: str, golds: Sequence[str]) -> float:
    if not golds:
        return float(normalize_answer(prediction) == "")
    return max(float(normalize_answer(prediction) == normalize_answer(g)) for g in golds)


def _f1(prediction: str, gold: str) -> float:
    pred, ref = _tokens(prediction), _tokens(gold)
    if not pred or not ref:
        return float(pred == ref)
    common = Counter(pred) & Counter(ref)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def f1_score(prediction: str, golds: Sequence[str]) -> float:
    if not golds:
        return float(normalize_answer(prediction) == "")
    return max(_f1(prediction, g) for g in golds)


def recall_at_k(retrieved: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Share of gold evidence units found among the first ``k`` retrieved units."""
    gold = set(gold)
    if not gold:
        return float("nan")
    return len(gold & set(retrieved[:k])) / len(gold)


def precision_at_k(retrieved: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Share of the first ``k`` retrieved units that are gold (fewer retrieved count as misses)."""
    gold = set(gold)
    if not gold:
        return float("nan")
    return sum(1 for r in retrieved[:k] if r in gold) / k


def reciprocal_rank(retrieved: Sequence[str], gold: Iterable[str]) -> float:
    gold = set(gold)
    if not gold:
        return float("nan")
    for rank, unit in enumerate(retrieved, start=1):
        if unit in gold:
            return 1.0 / rank
    return 0.0
