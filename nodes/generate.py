"""generate: answer from the evidence only, briefly, with [n] citations, within the tier's tokens.

Each answer is one step of the cascade: the step records its tier, what its prompt cost (whole
and actually evaluated: with the question-first layout an extended prompt shares everything up to
the old evidence with the previous one) and the answer's confidence signals, read from the
probabilities of its tokens before any citation marker.

Small models often forget the markers, and sometimes cite an item that does not hold the answer.
A citation is therefore kept only when the item supports the answer: it holds at least
:data:`SUPPORT_COVERAGE` of the content words of what the answer claims (a yes/no answer's: what it
affirms). When none of the cited items does (or the answer cites none), the evidence items that do
are attributed instead; when no item does, the answer has no citation and is marked unsupported.
The trace says which way the citations came.
"""

from __future__ import annotations

import math
import re
import time
from typing import Any, Callable, Mapping, Sequence

from langgraph.runtime import Runtime

from components.answer_probe import AnswerProbe
from components.generator import LlamaCppChatModel, StopRule, context_room, max_tokens_kwargs
from components.passages import ranking_score, split_sentences
from components.reranker import content_words
from components.requests import asks_two_things
from components.short_answer import NUMBER_WORDS
from pipeline.context import RAGContext
from pipeline.configuration import DEFAULT_LAYOUT, EARLY_SIGNALS
from pipeline.state import Citation, Confidence, EvidenceItem, PassageHit, QuestionLikelihood, State, Step
from nodes.base import context_of, timed, traced_passages
from nodes.compress import ELLIPSIS, shortened
from nodes.grade_answer import can_extend
from prompts import (
    ABSTENTION,
    answer_messages,
    answer_opening,
    closed_book_messages,
    final_answer,
    format_evidence,
    reasoning_messages,
)

MARKER_START = "["
"""How a citation marker begins (``[2]``): the answer's text ends before it."""
_MARKER = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_MARKER_RUN = re.compile(rf"{_MARKER.pattern}(?:\s*(?:[,;]|and)?\s*{_MARKER.pattern})*(?:\s*[,;](?=\s*$))?")
"""Markers one after another, with what separates them ("[1], [2] and [3]"), and a comma or
semicolon after the last one when nothing follows: taken out as one, so no stray separator is left."""
_PREAMBLE = re.compile(r"^\s*(?:the\s+)?answer(?:\s+is)?\s*:\s*", re.IGNORECASE)
_DANGLING = re.compile(r"[\s,;:(\u2013\u2014]+$")
"""What an answer cut where a marker began leaves at its end ("The Eiffel Tower is older, [1]" stops
at "older,"): a comma, semicolon, colon, opening bracket or dash ends no answer."""


def evidence_from_passages(passages: Sequence[PassageHit]) -> list[EvidenceItem]:
    """Uncompressed evidence: every passage, in order (the baseline's context)."""
    return [{"n": i, "passage_id": p["id"], "title": p["title"], "text": p["text"]} for i, p in enumerate(passages, 1)]


def fit_to_context(evidence: Sequence[EvidenceItem], room: Callable[[Sequence[EvidenceItem]], int | None],
                   reserve: int) -> tuple[list[EvidenceItem], dict[str, int] | None]:
    """``evidence`` cut so that its prompt leaves ``reserve`` tokens of the model's context for the
    answer, and what was cut (``None``: nothing). ``room`` gives the tokens a prompt of the given
    items leaves (``None``: the model reports no window, and nothing is cut).

    The last-ranked items go first; of the one left, the end is cut as compress cuts a sentence
    (:func:`nodes.compress.shortened`), then by characters if one word is still too long.
    Tiers without a token budget (Hard, the baseline) read whole passages, and a passage holds up to a
    few thousand characters (a document with few sentence ends: a table, a PDF's text), so five of
    them can outgrow a small model's context. A prompt whose question alone does not fit is left
    for the generator to refuse."""
    left = room(evidence)
    if left is None or left >= reserve:
        return list(evidence), None
    kept = list(evidence)
    while len(kept) > 1:
        kept.pop()
        if (room(kept) or 0) >= reserve:
            return kept, {"dropped": len(evidence) - len(kept), "cut": 0}
    item = kept[0]

    def fits(text: str) -> bool:
        return (room([{**item, "text": text}]) or 0) >= reserve

    text = shortened(item["text"], fits)
    while not fits(text) and len(text) > 1 + len(ELLIPSIS):  # one word, still too long: its characters
        body = text[: -len(ELLIPSIS)]
        text = body[: max(1, len(body) * 3 // 4)] + ELLIPSIS
    return [{**item, "text": text}], {"dropped": len(evidence) - 1, "cut": 1}


def is_abstention(answer: str) -> bool:
    return answer.strip().lower().startswith(ABSTENTION.lower().rstrip("."))


def split_citations(text: str, n_evidence: int) -> tuple[str, list[int]]:
    """The answer without its [n] markers, and the valid cited numbers in order of appearance."""
    cited: list[int] = []
    for group in _MARKER.findall(text):
        for number in (int(x) for x in group.split(",")):
            if 1 <= number <= n_evidence and number not in cited:
                cited.append(number)
    answer = re.sub(r"\s+([.,;:!?])", r"\1", _MARKER_RUN.sub("", text))
    answer = _PREAMBLE.sub("", re.sub(r"\s{2,}", " ", answer).strip())
    return _DANGLING.sub("", answer), cited


SUPPORT_COVERAGE = 2 / 3
"""The share of an answer's content words an evidence item must hold to support it: every word
of a one- or two-word answer ("Venice" is not supported by a sentence without it), two of three of
a longer one (its connecting words need not be quoted). An answer of two or more content words
must also share one adjacent pair of them with the item, so "100 °F" is not supported by a
passage that has "100 °C" and "212 °F"."""

VERDICTS = frozenset({"yes", "no"})
"""Words of an answer no passage is expected to hold: a yes/no answer affirms or denies, and the
passage that supports it holds what is affirmed, not the word "yes"."""


def _held_share(words: Sequence[str], held: Sequence[str]) -> float:
    """The share of ``words`` among ``held``, or 0 when two or more of them share no adjacent pair
    with it; 1 for no words (:data:`SUPPORT_COVERAGE`)."""
    if not words:
        return 1.0
    pairs = set(zip(words, words[1:], strict=False))
    if pairs and not pairs & set(zip(held, held[1:], strict=False)):
        return 0.0
    return len(set(words) & set(held)) / len(set(words))


def _item_words(item: EvidenceItem) -> list[str]:
    return content_words(f"{item['title']} {item['text']}")


def support(item: EvidenceItem, answer: str) -> float:
    """How well the item (its title and text) holds the answer's content words as written: the
    share of them it holds, or 0 when an answer of two or more of them shares no adjacent pair with
    it; 1 for an answer without content words. This is the check's ``support`` feature, as the check
    was fit on it; an answer's citations read it more leniently (:func:`grounds`)."""
    return _held_share(content_words(answer), _item_words(item))


def _singular(word: str) -> str:
    """A word without a plural or third-person final s ("visitors", "opens"), so that "open to
    visitors" is held by "opens to visitors"; a final "ies" or "ie" reads as "y", so that "cities"
    is "city" and "movies" and "movie" are one ("movy"). Numbers ("1940s") and words ending in ss,
    us or is ("Paris") are kept as written."""
    if len(word) > 4 and word.isalpha() and word.endswith(("ies", "ie")):
        return word[: -3 if word.endswith("s") else -2] + "y"
    if len(word) > 3 and word.isalpha() and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


_BRITISH_IZE = re.compile(r"(?<=\w{3})is(e|ed|es|ing|ation|ations)$")


def _american(word: str) -> str:
    """A word in American spelling, so that either spelling holds the other: "metre" is "meter",
    "colour" "color", "organised" "organized". Only endings that mark a spelling, on words long
    enough that they do not end so by chance ("four", "hour" and "rise" are kept)."""
    if not word.isalpha():
        return word
    if len(word) >= 5 and word.endswith("tre"):
        return word[:-3] + "ter"
    if len(word) > 5 and word.endswith("our"):
        return word[:-3] + "or"
    if len(word) >= 7:
        return _BRITISH_IZE.sub(lambda m: "iz" + m.group(1), word)
    return word


def comparable(word: str) -> str:
    """A word as an answer's citations compare it: without a final s (:func:`_singular`), in
    American spelling (:func:`_american`), a number in figures ("two" is "2": :data:`NUMBER_WORDS`)."""
    return NUMBER_WORDS.get(word) or _american(_singular(word))


def answer_claim(answer: str) -> list[str]:
    """The answer's own content words, without a yes or no (:data:`VERDICTS`), as citations compare
    them: none for a bare yes or no."""
    return [comparable(w) for w in content_words(answer) if w not in VERDICTS]


def claim_words(question: str, answer: str) -> list[str]:
    """What an item must hold to support the answer, as content words: the answer's
    (:func:`answer_claim`); a bare yes or no claims what the question asks ("Is the Eiffel Tower in
    Paris?" "Yes": eiffel, tower, paris)."""
    own = answer_claim(answer)
    if not own and VERDICTS.intersection(content_words(answer)):
        return [comparable(w) for w in content_words(question)]
    return own


def grounds(item: EvidenceItem, claim: Sequence[str]) -> float:
    """How well the item supports an answer, for its citations: :func:`support` of what the answer
    claims (``claim``, its :func:`claim_words`), a word's plural or third-person s and its spelling
    aside (:func:`comparable`)."""
    return _held_share(claim, [comparable(w) for w in _item_words(item)])


def attribute(question: str, answer: str, evidence: Sequence[EvidenceItem]) -> list[int]:
    """The evidence items that support the answer (:func:`grounds`): for an answer of two or more
    sentences each held by one or two items, those of each sentence in the answer's order
    (:func:`_by_sentence`); else the (at most two) items that best support it, best first, or where no
    item holds :data:`SUPPORT_COVERAGE` of what it claims alone, the two that hold it together
    (:func:`_joint_grounds`); none when no one or two do, or it claims nothing."""
    return _by_sentence(question, answer, evidence) or _best_grounds(claim_words(question, answer), evidence)


def _by_sentence(question: str, answer: str, evidence: Sequence[EvidenceItem]) -> list[int]:
    """The items that hold each sentence of a multi-sentence answer ("Members may bring two at a time.
    They must sign the book in the clubhouse."), in the answer's order, each once; none when the answer
    is one sentence or a sentence that claims something is held by no item."""
    if not re.search(r"[.!?]\s+\S", answer):  # one sentence: no segmenter needed
        return []
    sentences = split_sentences(answer)
    if len(sentences) < 2:
        return []
    cited: list[int] = []
    for sentence in sentences:
        claim = claim_words(question, sentence)
        held = _best_grounds(claim, evidence)
        if claim and not held:
            return []
        cited += [n for n in held if n not in cited]
    return cited


def _best_grounds(claim: Sequence[str], evidence: Sequence[EvidenceItem]) -> list[int]:
    if not claim:
        return []
    scored = sorted(((grounds(e, claim), e["n"]) for e in evidence), key=lambda x: (-x[0], x[1]))
    return [n for share, n in scored if share >= SUPPORT_COVERAGE][:2] or _joint_grounds(claim, evidence, scored)


def _joint_grounds(claim: Sequence[str], evidence: Sequence[EvidenceItem],
                   scored: Sequence[tuple[float, int]]) -> list[int]:
    """Two items that together hold :data:`SUPPORT_COVERAGE` of what the answer claims, each holding
    words of it the other does not, best first: an answer that joins two sentences of a section ("Members
    may bring two at a time. They must sign the book") is held by both, and by neither alone. The pair
    holding the most, of those the better items come first in."""
    words = {e["n"]: [comparable(w) for w in _item_words(e)] for e in evidence}
    wanted = set(claim)
    best: tuple[float, list[int]] = (0.0, [])
    for i, (_, a) in enumerate(scored):
        for _, b in scored[i + 1:]:
            only_a, only_b = (wanted & set(words[a])) - set(words[b]), (wanted & set(words[b])) - set(words[a])
            share = _held_share(claim, words[a] + words[b]) if only_a and only_b else 0.0
            if share >= SUPPORT_COVERAGE and share > best[0]:
                best = (share, [a, b])
    return best[1]


def cite(question: str, answer: str, marked: Sequence[int], evidence: Sequence[EvidenceItem]) -> tuple[list[int], str]:
    """The evidence items an answer is cited to, and how: ``model`` (its own markers, those that
    support it), ``attributed`` (items holding what it claims, when its markers point elsewhere or
    are missing), ``unsupported`` (no item holds it) or ``none`` (an abstention, or no evidence)."""
    if not evidence or is_abstention(answer):
        return [], "none"
    claim = claim_words(question, answer)
    supported = [n for n in marked if grounds(evidence[n - 1], claim) >= SUPPORT_COVERAGE]
    if supported:
        return supported, "model"
    attributed = attribute(question, answer, evidence)
    return (attributed, "attributed") if attributed else ([], "unsupported")


def holders(claim: Sequence[str], evidence: Sequence[EvidenceItem]) -> list[EvidenceItem]:
    """The evidence items that hold what an answer claims (:func:`claim_words`), as its citations read them
    (:func:`grounds`): those an answer's citations come from."""
    return [item for item in evidence if claim and grounds(item, claim) >= SUPPORT_COVERAGE]


def found_holders(question: str, answer: str, passages: Sequence[PassageHit]) -> list[str]:
    """The ids of the retrieved ``passages`` that hold what ``answer`` claims, read as its citations are
    (:func:`grounds`), in rank order. For an answer no evidence item holds (``unsupported``) these are passages
    found and not read, or not read whole, that a reader can check it against. Found trying the chat (session
    83): "Who painted the Mona Lisa?" was answered "Leonardo da Vinci" from two passages that do not say so, and
    "The Mona Lisa is a half-length portrait painting by the Italian artist Leonardo da Vinci", retrieved fourth
    and not read, was not among the passages shown."""
    items: list[EvidenceItem] = [{"n": 0, "passage_id": p["id"], "title": p["title"], "text": p["text"]} for p in passages]
    return [item["passage_id"] for item in holders(claim_words(question, answer), items)]


NO_CONFIDENCE = -100.0
"""An abstention's log-probability and negated entropy: below any answer's (log-probabilities are
clamped at log 1e-12, about -27.6; entropies stay below log(vocabulary), about 12)."""


def opening_prob(metadata: Mapping[str, Any], text: str, exclude_first: bool = False) -> float | None:
    """The probability, at the answer's first token, of a token that begins ``text`` (the
    abstention, say); ``None`` when the generator reports no first-step probabilities.

    ``exclude_first`` leaves out the piece the answer itself began with: an answer that is not
    ``text`` but shares its first piece ("Istanbul" and "I cannot ...", both from "I") took that
    piece's probability for itself, and counting it would make a confident answer look like a near
    abstention."""
    top = metadata.get("first_top")
    if not top:
        return None
    pieces = metadata.get("token_pieces") or []
    chosen = pieces[0] if exclude_first and pieces else None
    return min(1.0, sum(p for piece, p in top if piece.strip() and piece != chosen and text.startswith(piece.lstrip())))


def verdict_probs(metadata: Mapping[str, Any]) -> dict[str, float] | None:
    """The probabilities, at the answer's first token, of its opening with "yes" and with "no" (each the sum
    of the first step's most probable pieces that are that word, in any case, with any space); ``None``
    when the generator reports no first-step probabilities. A piece not among them counts 0."""
    top = metadata.get("first_top")
    if not top:
        return None
    probs = dict.fromkeys(sorted(VERDICTS), 0.0)
    for piece, p in top:
        word = piece.strip().lower()
        if word in probs:
            probs[word] += p
    return probs


def verdict_of(answer: str) -> str | None:
    """The verdict an answer opens with ("Yes, it lasts ..." → "yes"); ``None`` when it opens with neither."""
    words = answer.split()
    first = words[0].strip(".,;:!?").lower() if words else ""
    return first if first in VERDICTS else None


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
    n = counted_tokens(list(metadata.get("token_pieces") or []), len(probs))
    margins = list(metadata.get("token_margins") or [0.0])
    entropies = list(metadata.get("token_entropies") or [0.0])[:n]
    return {
        "min_prob": min(probs[:n]),
        "first_prob": probs[0],
        "first_margin": margins[0],
        "mean_logprob": sum(math.log(max(p, 1e-12)) for p in probs[:n]) / n,
        "neg_mean_entropy": -sum(entropies) / max(len(entropies), 1),
    }


def counted_tokens(pieces: Sequence[str], n_probs: int) -> int:
    """How many leading tokens an answer's confidence reads: those before the first citation
    marker's piece (at least the first token, at most those with a probability)."""
    n = next((i for i, piece in enumerate(pieces) if MARKER_START in piece), len(pieces))
    return min(max(n, 1), n_probs)


def below_threshold(signal: str, threshold: float) -> StopRule:
    """A rule that holds as soon as an answer's ``signal`` is certain to end below ``threshold``:
    after the first token for ``first_prob`` and ``first_margin``; for ``min_prob``, once a counted
    token is below it (the minimum can only fall). The newest token's text is not known yet, so it
    counts only when it is the first. The same reading as :func:`confidence`, so an answer stopped
    by it would have been extended had it been finished."""
    if signal not in EARLY_SIGNALS:
        raise ValueError(f"signal {signal!r} is not known before the answer ends; early signals: {', '.join(EARLY_SIGNALS)}")

    def rule(probs: Sequence[float], margins: Sequence[float], pieces: Sequence[str]) -> bool:
        if not probs:
            return False
        if signal == "first_prob":
            return probs[0] < threshold
        if signal == "first_margin":
            return margins[0] < threshold
        return min(probs[:counted_tokens(pieces, len(probs))]) < threshold

    return rule


def probe_score(probe: AnswerProbe, metadata: Mapping[str, Any]) -> float | None:
    """The probe's P(right) from the layer the generator read at the answer's first token; None when
    it read none (an answer that ended at its first token decodes nothing more)."""
    hidden = (metadata.get("hidden_states") or {}).get(probe.layer)
    return probe.score_hidden(hidden) if hidden is not None else None


QUESTION_LAST = ("evidence_first", "question_both")
"""The prompt layouts that end with the question, so the generator reads its tokens after the evidence."""


def question_likelihood(metadata: Mapping[str, Any]) -> QuestionLikelihood | None:
    """The mean and lowest log-probability of the question's tokens after the evidence, from the
    generator's ``suffix_logprobs``; ``None`` when it reported none."""
    logprobs = metadata.get("suffix_logprobs")
    if not logprobs:
        return None
    return {"mean": sum(logprobs) / len(logprobs), "min": min(logprobs), "tokens": len(logprobs),
            "values": [float(x) for x in logprobs]}


def pin_answer_prefix(generator: Any, layout: str = DEFAULT_LAYOUT, examples: bool = False) -> None:
    """Evaluate and pin the answer prompt's instructions and opening now (a server starting up), so
    the first question costs what every later one does instead of paying for them; one generated
    token. A model that keeps no cache (transformers) has nothing to pin."""
    if not isinstance(generator, LlamaCppChatModel):
        return
    generator.invoke(answer_messages("?", [{"n": 1, "title": "", "text": "."}], layout, examples),
                     **max_tokens_kwargs(generator, 1, opening=answer_opening(layout)))
    generator.reset_cache()  # the placeholder question's cache and snapshot go; the pinned prefix stays


@timed("generate")
def generate(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    settings = state["settings"]
    budget = settings["budget"]
    passages = state.get("passages") or []
    evidence = state.get("evidence") or evidence_from_passages(passages)
    question = state.get("standalone_question") or state["question"]
    layout = settings.get("layout", DEFAULT_LAYOUT)
    reasoning = not evidence and budget.get("reasoning", False)
    fitted = None
    two_things = settings.get("two_things", True) and bool(evidence) and asks_two_things(question)
    if evidence:
        examples = settings.get("answer_examples", False)
        evidence, fitted = fit_to_context(evidence, lambda items: context_room(
            ctx.generator, answer_messages(question, items, layout, examples, two_things)), budget["max_new_tokens"])
        messages = answer_messages(question, evidence, layout, examples, two_things)
    else:
        messages = reasoning_messages(question) if reasoning else closed_book_messages(question)
    # an answer the cascade would extend anyway is stopped as soon as its confidence says so (evidence
    # cut to fit the model's context is all it can hold: that answer is not extended, so not stopped)
    signal = settings["confidence_signal"]
    early = settings.get("stop_early", False) and signal in EARLY_SIGNALS and can_extend(state) and fitted is None
    stop_when = below_threshold(signal, settings["accept_threshold"]) if early else None
    start = time.perf_counter()
    # without the model's markers the answer ends where the first one begins ("Paris [2]" costs "Paris")
    stop_at = [MARKER_START] if evidence and not settings.get("citation_markers", True) else []
    # the opening every answer prompt shares ("Evidence:\n[1]") is pinned with the instructions
    opening = answer_opening(layout) if evidence else ""
    probe = ctx.probe if evidence else None  # the probe of this generator, fit on answers from evidence
    # the question's tokens are scored where it ends the prompt, after the evidence (a check feature)
    scored = question if evidence and layout in QUESTION_LAST and settings.get("question_likelihood", True) else None
    call = max_tokens_kwargs(ctx.generator, budget["max_new_tokens"], stop_when, stop_at, settings.get("lookup_tokens", 0),
                             opening=opening, score_suffix=scored)
    if probe is not None:
        call["hidden_layers"] = [probe.layer]
    reply = ctx.generator.invoke(messages, **call)
    generate_ms = (time.perf_counter() - start) * 1000.0
    raw = reply.text.strip()
    answer, marked = split_citations(final_answer(raw) if reasoning else raw, len(evidence))
    if not any(c.isalnum() for c in answer):  # nothing, or markers and punctuation only: the model declined
        answer, marked = ABSTENTION, []
    cited, source = cite(question, answer, marked, evidence)

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
            "score": ranking_score(hit),
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
        "abstain_prob": opening_prob(metadata, ABSTENTION, exclude_first=not abstained),
        "stopped_early": bool(metadata.get("stopped_early")),
        "decode_passes": metadata.get("decode_passes"),
        "raw_output": raw,
        "generate_ms": generate_ms,
    }
    if probe is not None:
        step["answer_probe"] = probe_score(probe, metadata)
    likelihood = question_likelihood(metadata)
    if likelihood is not None:
        step["question_logprob"] = likelihood
    if fitted is not None:
        step["fitted"] = fitted
    steps = [*(state.get("steps") or []), step]

    def total(key: str) -> int | None:
        """Over every answer and any other prompt the question cost (self-route's routing prompt)."""
        values = [s.get(key) for s in [*steps, *(state.get("overhead") or [])]]
        return None if any(v is None for v in values) else sum(v for v in values if v is not None)

    return {
        "answer": answer,
        "citations": citations,
        "evidence": evidence,
        "steps": steps,
        "overrides": {},
        "documents": [],
        "trace": {
            "k": budget["k"],
            "corrected": state.get("corrections", 0) > 0,
            "passages": traced_passages(passages),
            "context": format_evidence(evidence),
            "raw_output": raw,
            "citation_source": source,
            "supported": bool(cited),
            "held_by": found_holders(question, answer, passages) if source == "unsupported" else [],
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
            **({"two_things": True} if two_things else {}),
        },
    }
