"""generate: answer from the evidence only, briefly, with [n] citations, within the tier's tokens.

Each answer is one step of the cascade: the step records its tier, what its prompt cost (whole
and actually evaluated: with the question-first layout an extended prompt shares everything up to
the old evidence with the previous one) and the answer's confidence signals, read from the
probabilities of its tokens before any citation marker.

Small models often forget the markers. Citations are therefore the evidence items the answer
cites with valid [n] markers; when it cites none (and does not abstain), the evidence items that
contain the answer's words are attributed instead, and the trace says which way they came.
"""

from __future__ import annotations

import math
import re
import time
from typing import Any, Mapping, Sequence

from langgraph.runtime import Runtime

from components.generator import max_tokens_kwargs
from components.reranker import content_terms
from pipeline.context import RAGContext
from pipeline.state import Citation, Confidence, EvidenceItem, PassageHit, State, Step
from nodes.base import context_of, timed
from prompts import ABSTENTION, answer_messages, closed_book_messages, format_evidence

_MARKER = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_PREAMBLE = re.compile(r"^\s*(?:the\s+)?answer(?:\s+is)?\s*:\s*", re.IGNORECASE)


def evidence_from_passages(passages: Sequence[PassageHit]) -> list[EvidenceItem]:
    """Uncompressed evidence: every passage, in order (the baseline's context)."""
    return [{"n": i, "passage_id": p["id"], "title": p["title"], "text": p["text"]} for i, p in enumerate(passages, 1)]


def is_abstention(answer: str) -> bool:
    return answer.strip().lower().startswith(ABSTENTION.lower().rstrip("."))


def split_citations(text: str, n_evidence: int) -> tuple[str, list[int]]:
    """The answer without its [n] markers, and the valid cited numbers in order of appearance."""
    cited: list[int] = []
    for group in _MARKER.findall(text):
        for number in (int(x) for x in group.split(",")):
            if 1 <= number <= n_evidence and number not in cited:
                cited.append(number)
    answer = re.sub(r"\s+([.,;:!?])", r"\1", _MARKER.sub("", text))
    answer = _PREAMBLE.sub("", re.sub(r"\s{2,}", " ", answer).strip())
    return answer, cited


def attribute(answer: str, evidence: Sequence[EvidenceItem]) -> list[int]:
    """Evidence items holding every content word of the answer (else the best partial match)."""
    terms = content_terms(answer)
    if not terms:
        return []
    overlap = [(len(terms & content_terms(f"{e['title']} {e['text']}")), e["n"]) for e in evidence]
    full = [n for hits, n in overlap if hits == len(terms)]
    if full:
        return full[:2]
    best = max(overlap, default=(0, 0))
    return [best[1]] if best[0] > 0 else []


NO_CONFIDENCE = -100.0
"""An abstention's log-probability and negated entropy: below any answer's (log-probabilities are
clamped at log 1e-12, about -27.6; entropies stay below log(vocabulary), about 12)."""


def confidence(metadata: Mapping[str, Any], abstained: bool) -> Confidence:
    """The answer's confidence signals from the generator's per-token figures. Only the tokens
    before the first citation marker count (the marker's number says which item, not whether the
    answer is right); an abstention has no confidence (0, or :data:`NO_CONFIDENCE` for the
    log-probability and the negated entropy)."""
    probs: list[float] = list(metadata.get("token_probs") or [])
    if not probs:
        return {"min_prob": None, "first_prob": None, "first_margin": None, "mean_logprob": None,
                "neg_mean_entropy": None}
    if abstained:  # below any answer's value of every signal, and finite, so JSON carries it
        return {"min_prob": 0.0, "first_prob": 0.0, "first_margin": 0.0, "mean_logprob": NO_CONFIDENCE,
                "neg_mean_entropy": NO_CONFIDENCE}
    pieces: list[str] = list(metadata.get("token_pieces") or [])
    n = next((i for i, piece in enumerate(pieces) if "[" in piece), len(pieces))
    n = min(max(n, 1), len(probs))
    margins = list(metadata.get("token_margins") or [0.0])
    entropies = list(metadata.get("token_entropies") or [0.0])[:n]
    return {
        "min_prob": min(probs[:n]),
        "first_prob": probs[0],
        "first_margin": margins[0],
        "mean_logprob": sum(math.log(max(p, 1e-12)) for p in probs[:n]) / n,
        "neg_mean_entropy": -sum(entropies) / max(len(entropies), 1),
    }


@timed("generate")
def generate(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    settings = state["settings"]
    budget = settings["budget"]
    passages = state.get("passages") or []
    evidence = state.get("evidence") or evidence_from_passages(passages)
    question = state.get("standalone_question") or state["question"]
    layout = settings.get("layout", "question_first")
    messages = answer_messages(question, evidence, layout) if evidence else closed_book_messages(question)
    start = time.perf_counter()
    reply = ctx.generator.invoke(messages, **max_tokens_kwargs(ctx.generator, budget["max_new_tokens"]))
    generate_ms = (time.perf_counter() - start) * 1000.0
    raw = reply.text.strip()
    answer, cited = split_citations(raw, len(evidence))
    source = "model"
    if not cited and not is_abstention(answer):
        cited, source = attribute(answer, evidence), "attributed"

    by_id = {p["id"]: p for p in passages}
    citations: list[Citation] = []
    for n in cited:
        item = evidence[n - 1]
        hit: Mapping[str, Any] = by_id.get(item["passage_id"], {})
        citations.append({
            "n": n,
            "passage_id": item["passage_id"],
            "title": item["title"],
            "text": hit.get("text", item["text"]),
            "score": hit.get("rerank_score", hit.get("score", 0.0)),
            "metadata": hit.get("metadata", {}),
        })
    usage: Mapping[str, Any] = reply.usage_metadata or {}
    metadata: Mapping[str, Any] = reply.response_metadata or {}
    entropies = metadata.get("token_entropies") or []
    abstained = is_abstention(answer)
    step: Step = {
        "tier": budget["name"],
        "evidence_items": len(evidence),
        "prompt_tokens": usage.get("input_tokens"),
        "prompt_tokens_evaluated": metadata.get("prompt_tokens_evaluated", usage.get("input_tokens")),
        "output_tokens": usage.get("output_tokens"),
        "answer": answer,
        "abstained": abstained,
        "confidence": confidence(metadata, abstained),
        "generate_ms": generate_ms,
    }
    steps = [*(state.get("steps") or []), step]

    def total(key: str) -> int | None:
        values = [s[key] for s in steps]  # type: ignore[literal-required]
        return None if any(v is None for v in values) else sum(values)

    return {
        "answer": answer,
        "citations": citations,
        "evidence": evidence,
        "steps": steps,
        "turns": [{"question": state["question"], "standalone_question": question, "answer": answer}],
        "overrides": {},
        "documents": [],
        "trace": {
            "k": budget["k"],
            "corrected": state.get("corrections", 0) > 0,
            "passages": [
                {"id": p["id"], "title": p["title"], "text": p["text"], "score": p["score"],
                 "rerank_score": p.get("rerank_score")}
                for p in passages
            ],
            "context": format_evidence(evidence),
            "raw_output": raw,
            "citation_source": source if cited else "none",
            "abstained": abstained,
            "prompt_tokens": usage.get("input_tokens"),
            "input_tokens": total("prompt_tokens"),
            "prompt_tokens_evaluated": total("prompt_tokens_evaluated"),
            "output_tokens": total("output_tokens"),
            "mean_token_entropy": sum(entropies) / len(entropies) if entropies else None,
            "confidence": step["confidence"],
            "steps": steps,
            "escalations": state.get("escalations", 0),
            "final_tier": budget["name"],
        },
    }
