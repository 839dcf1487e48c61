"""Score one graph output against one example: answer, retrieval and cost figures, as one record."""

from __future__ import annotations

import math
from typing import Any

from eval.datasets import Example
from eval.metrics import exact_match, f1_score, precision_at_k, recall_at_k, reciprocal_rank
from nodes.base import replied_without_reading
from nodes.generate import is_abstention


def prediction_text(answer: str) -> str:
    """The answer as scored: the prompt's abstention wording maps to the empty answer."""
    return "" if is_abstention(answer) else answer


def _units(example: Example, passages: list[dict[str, Any]]) -> tuple[list[str], tuple[str, ...]]:
    """Retrieved units in rank order and the gold units, in the same currency."""
    if example.evidence.get("passage_ids"):
        return [p["id"] for p in passages], example.evidence["passage_ids"]
    return [p["title"] for p in passages], example.evidence.get("titles", ())


def score(example: Example, output: dict[str, Any], wall_ms: float) -> dict[str, Any]:
    trace = output.get("trace", {})
    passages = trace.get("passages", [])
    given = "" if replied_without_reading(trace) else output.get("answer", "")
    prediction = prediction_text(given)
    retrieved, gold = _units(example, passages)
    record: dict[str, Any] = {
        "id": example.id,
        "dataset": example.dataset,
        "question": example.question,
        "gold_answers": list(example.answers),
        "answerable": example.answerable,
        "answer": output.get("answer", ""),
        "prediction": prediction,
        "written_answer": trace.get("written_answer"),  # the model's text, when the answer is its short form
        "em": exact_match(prediction, example.answers),
        "f1": f1_score(prediction, example.answers),
        "tier": trace.get("tier"),
        "corrected": bool(trace.get("corrected")),
        "passages": [{"id": p["id"], "title": p["title"], "score": p["score"], "rerank_score": p.get("rerank_score")}
                     for p in passages],
        "context": trace.get("context", ""),
        "passages_in_prompt": trace.get("context", "").count("\n") + 1 if trace.get("context") else 0,
        "context_chars": len(trace.get("context", "")),
        "input_tokens": trace.get("input_tokens", trace.get("prompt_tokens")),
        "prompt_tokens_evaluated": trace.get("prompt_tokens_evaluated"),
        "output_tokens": trace.get("output_tokens"),
        "final_tier": trace.get("final_tier", trace.get("tier")),
        "escalations": trace.get("escalations", 0),
        "confidence": trace.get("confidence"),
        "steps": [{key: step.get(key) for key in ("tier", "evidence_items", "prompt_tokens", "prompt_tokens_evaluated",
                                                   "output_tokens", "answer", "abstained", "confidence", "generate_ms",
                                                   "decision", "extended_by", "check_score", "rule", "stopped_early",
                                                   "decode_passes", "question_logprob")}
                  for step in trace.get("steps", [])],
        "latency_ms": wall_ms,
        "timings_ms": trace.get("timings_ms", {}),
        "mean_token_entropy": trace.get("mean_token_entropy"),
    }
    energy = trace.get("energy") or {}
    record.update(energy_j=energy.get("joules"), energy_method=energy.get("method"),
                  retrievals=(0 if not passages else 1 + int((trace.get("correction") or {}).get("rounds", 0))))
    for key in ("gate", "self_route", "cache"):  # the policies' decisions, when they made one
        if key in trace:
            record[key] = {k: v for k, v in trace[key].items() if k != "probe"}
    check = trace.get("answerability")
    if check is not None:  # the answer before the answerability check, to score both from one run
        unchecked = prediction_text(check.get("withheld_answer", given))
        record.update(answerability=check, prediction_unchecked=unchecked,
                      em_unchecked=exact_match(unchecked, example.answers),
                      f1_unchecked=f1_score(unchecked, example.answers))
    for k in (5, 10):
        record[f"recall@{k}"] = recall_at_k(retrieved, gold, k) if passages else (math.nan if not gold else 0.0)
    record["precision@5"] = precision_at_k(retrieved, gold, 5) if passages else (math.nan if not gold else 0.0)
    record["mrr"] = reciprocal_rank(retrieved, gold) if passages else (math.nan if not gold else 0.0)
    if example.evidence.get("sentences"):
        texts = [p.get("text", "") for p in passages]
        supporting = example.evidence["sentences"]
        hit = sum(1 for s in supporting if any(s[:60] in t or t[:60] in s for t in texts if t))
        record["supporting_sentence_recall"] = hit / len(supporting)
    return record
