"""generate: answer from the evidence only, briefly, with [n] citations, within the tier's tokens.

Small models often forget the markers. Citations are therefore the evidence items the answer
cites with valid [n] markers; when it cites none (and does not abstain), the evidence items that
contain the answer's words are attributed instead, and the trace says which way they came.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from langgraph.runtime import Runtime

from components.generator import max_tokens_kwargs
from components.reranker import content_terms
from pipeline.context import RAGContext
from pipeline.state import Citation, EvidenceItem, PassageHit, State
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


@timed("generate")
def generate(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    budget = state["settings"]["budget"]
    passages = state.get("passages") or []
    evidence = state.get("evidence") or evidence_from_passages(passages)
    question = state.get("standalone_question") or state["question"]
    messages = answer_messages(question, evidence) if evidence else closed_book_messages(question)
    reply = ctx.generator.invoke(messages, **max_tokens_kwargs(ctx.generator, budget["max_new_tokens"]))
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
    entropies = reply.response_metadata.get("token_entropies") or []
    return {
        "answer": answer,
        "citations": citations,
        "evidence": evidence,
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
            "abstained": is_abstention(answer),
            "prompt_tokens": usage.get("input_tokens"),
            "output_tokens": usage.get("output_tokens"),
            "mean_token_entropy": sum(entropies) / len(entropies) if entropies else None,
        },
    }
