"""summarize: answer "Summarize the kettle manual" with a summary of that document.

A request about a document as a whole ("Summarize the kettle manual", "Give me an overview of the lease",
"What is the minutes document about?": :func:`summarized_thing`) had gone down the question path, which
reads the few sentences nearest the request and asks the model for as few words as possible: on three
files with sections, "Summarize the kettle manual" abstained (session 63). This node finds the document
the request names (:func:`summarized_documents`): the documents given with the question; else the user's
files retrieval searched only (named, "the kettle manual", or followed from the question before); else
the best-ranked retrieved document titled as the thing named ("Summarize the French Revolution"), or as the
subject a request asks of as a whole ("Summarize the rules of cricket", "How does the heart work?": session
65, where the question path had withheld 10 of 12 such answers), or whose title holds every
content word of the thing named. Its passages, in the document's order and a paragraph to an evidence item, fill
the setting ``summarize_tokens`` (of a longer document, the first paragraph of each section, then the
second of each, and so on; several documents share it: :func:`document_evidence`), and the summary prompt
asks for three to five sentences of its main points. Each sentence of the summary is cited to the items
that hold it together (:func:`cite_summary`); the check does not score it (it is fit on answers to
questions, not summaries). A request that names a kind of document ("the quarterly report":
:func:`components.requests.missing_document`) that no document is gets a reply saying so, with the user's
documents listed (:func:`no_such_document`), made without the model; where no document is named otherwise the
request goes on as any question. Neither trace says ``summarized``.
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from langgraph.runtime import Runtime

from components.generator import context_room, max_tokens_kwargs
from components.index import PassageIndex
from components.passages import Passage, split_sentences
from components.requests import missing_document, subject_of, summarized_thing
from components.reranker import content_terms
from nodes.base import context_of, direct_reply, finished_turn, timed, traced_passages, unscored_check
from nodes.compress import shortened
from components.titles import title_match
from nodes.generate import SUPPORT_COVERAGE, claim_words, comparable, fit_to_context, grounds, is_abstention, split_citations
from nodes.retrieve import cut_and_embed, user_files
from pipeline.context import RAGContext
from pipeline.state import Citation, EvidenceItem, State, SummarizedTrace
from prompts import ABSTENTION, format_evidence, summary_messages

SUMMARY_MAX_TOKENS = 192
"""The most tokens a summary may have: four or five sentences."""


def finished_sentences(text: str) -> str:
    """``text`` up to the end of its last finished sentence: a summary stopped at its most tokens ends in the
    middle of one ("Volcanism can form where the crust'"). Text with no finished sentence stays as it is."""
    ends = [m.end() for m in re.finditer(r"[.!?][\"'”’)]*(?=\s|$)", text)
            if not text[text.rfind("\n", 0, m.start()) + 1:m.start()].strip().isdigit()]  # "2." numbers an item
    return text[:ends[-1]].rstrip() if ends and ends[-1] < len(text.rstrip()) else text


def names_document(thing: str, title: str, name: str = "") -> bool:
    """Whether ``thing`` names the document titled ``title`` (file name ``name``): every content word of
    it is in the title or the file name, plural or not, in either spelling (:func:`nodes.generate.comparable`):
    "the sailing club rules" names "Rules of the Harbour Sailing Club"; "it" names nothing."""
    wanted = {comparable(w) for w in content_terms(thing)}
    held = {comparable(w) for w in content_terms(f"{title} {' '.join(re.findall(r'[a-z0-9]+', PurePath(name).stem.lower()))}")}
    return bool(wanted) and wanted <= held


def summarized_documents(state: State, index: PassageIndex, thing: str) -> list[tuple[str, str]]:
    """The documents (id, title) a request to summarize ``thing`` names: the user's files retrieval searched
    only (the trace's ``named_documents``); else the first of the retrieved passages' documents, trying in turn
    one titled as the whole of ``thing`` ("History of Japan" for "the history of Japan", as
    :func:`components.titles.title_match` reads a title: up to case, an article, a plural and a disambiguation);
    for a request that asks of a subject as a whole (:func:`components.requests.subject_of`: "the history of the
    Roman Empire", "how vaccines work"), one titled as the subject ("Roman Empire"; not "Hurricane Katrina" for
    "hurricanes": the subject is the whole of what the document is about), then one whose title is a name the
    subject ends (:func:`surname_of`: "Albert Einstein" for "Einstein's life"); then one whose title or file
    name holds every word of ``thing`` (:func:`names_document`); and last one of the user's files whose title or
    name holds every word of the subject ("the kettle" in "How does the kettle work?": "Kettle K200 manual"; an
    article needs the subject's own title). None when none is."""
    searched = (state.get("trace") or {}).get("named_documents") or []
    if searched:
        return [(d["doc_id"], d["title"]) for d in searched]
    file_names = {f.doc_id: f.name for f in user_files(index)}
    retrieved = [index.passage(hit["id"]) for hit in state.get("passages") or [] if hit["id"] in index]
    subject = subject_of(thing) or ""
    tries: list[Callable[[str, str], bool]] = [
        lambda title, _: title_match(thing, title) == 2,
        lambda title, _: bool(subject) and title_match(subject, title) == 2,
        lambda title, _: bool(subject) and surname_of(subject, title),
        lambda title, doc_id: names_document(thing, title, file_names.get(doc_id, "")),
        lambda title, doc_id: bool(subject) and doc_id in file_names and names_document(subject, title, file_names[doc_id]),
    ]
    for names in tries:
        for passage in retrieved:
            if names(passage.title, doc_id := index.document_of(passage)):
                return [(doc_id, passage.title)]
    return []


DOCUMENTS_LISTED = 5
"""The most of the user's documents a reply that finds none of the name asked for lists by title."""


def no_such_document(called: str, titles: Sequence[str]) -> str:
    """The reply to a request to summarize a document ``called`` so that none is: that there is none, and
    the user's documents (``titles``), the first :data:`DOCUMENTS_LISTED` by title."""
    reply = f"I have no document called “{called}” to summarize"
    if not titles:
        return f"{reply}: no documents have been added."
    quoted = [f"“{t}”" for t in titles[:DOCUMENTS_LISTED]]
    if len(titles) > DOCUMENTS_LISTED:
        quoted.append(f"{len(titles) - DOCUMENTS_LISTED} more")
    listed = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} and {quoted[-1]}"
    return f"{reply}. Your document{' is' if len(titles) == 1 else 's are'} {listed}."


WRITING_ABOUT = frozenset({
    "document", "documents", "text", "section", "sections", "summary", "main", "points", "provides", "provide",
    "gives", "information", "instructions", "covers", "includes", "including", "outlines", "describes", "details",
    "explains", "states", "says", "mentions", "lists", "sets", "out"})
"""Words a summary uses of the document itself ("The manual provides instructions for ..."), which claim
nothing the document must hold."""
MAX_ITEMS_PER_SENTENCE = 3
"""The most evidence items one sentence of a summary is cited to."""


def _joined(items: Sequence[EvidenceItem]) -> EvidenceItem:
    return {"n": 0, "passage_id": "", "title": "", "text": " ".join(f"{e['title']} {e['text']}" for e in items)}


def cite_summary(request: str, summary: str, evidence: Sequence[EvidenceItem]) -> tuple[list[int], bool]:
    """The items a summary is cited to, in the order its sentences use them, and whether every sentence is
    held: for each sentence, the fewest items (up to :data:`MAX_ITEMS_PER_SENTENCE`, each adding words of it)
    that together hold :data:`nodes.generate.SUPPORT_COVERAGE` of what it claims (its content words but
    those of :data:`WRITING_ABOUT`), as an answer's item must alone. A sentence they do not hold keeps the
    items that hold most of it, and the summary is not held."""
    cited: list[int] = []
    held = True
    for sentence in split_sentences(summary):
        claim = [w for w in claim_words(request, sentence) if w not in WRITING_ABOUT]
        if not claim:
            continue
        chosen: list[EvidenceItem] = []
        share = 0.0
        while len(chosen) < MAX_ITEMS_PER_SENTENCE and share < SUPPORT_COVERAGE:
            options = [(grounds(_joined([*chosen, e]), claim), -e["n"]) for e in evidence if e not in chosen]
            gain, first = max(options, default=(0.0, 0))
            if gain <= share:
                break
            chosen.append(next(e for e in evidence if e["n"] == -first))
            share = gain
        held = held and share >= SUPPORT_COVERAGE
        cited += [e["n"] for e in sorted(chosen, key=lambda e: e["n"]) if e["n"] not in cited]
    return cited, held and bool(cited)


def surname_of(subject: str, title: str) -> bool:
    """Whether ``subject``, one capitalized word, is the last of a person's name ``title``, every word of it
    capitalized: "Einstein" of "Albert Einstein", as describe reads a surname; not "Japan" of "Empire of Japan"."""
    return (" " not in subject and subject[:1].isupper() and title_match(subject, title) == 1
            and all(w[:1].isupper() for w in title.split()))


def _span(passage: Passage) -> tuple[int, int] | None:
    """The sentences of its paragraph a passage holds, from its id (``#p0s2`` or ``#p0s2-4``)."""
    found = re.search(r"#p\d+s(\d+)(?:-(\d+))?$", passage.id)
    return (int(found[1]), int(found[2] or found[1])) if found else None


def paragraphs(passages: Sequence[Passage]) -> list[tuple[Passage, list[str]]]:
    """A document's passages (in its order) as its paragraphs: (the paragraph's first passage, its passages'
    texts). Passages that share sentences (an index cut with an overlap) give each sentence once."""
    joined: list[tuple[Passage, list[str]]] = []
    last_paragraph: Any = object()
    last_end = -1
    for passage in passages:
        paragraph, span = passage.metadata.get("paragraph"), _span(passage)
        text = passage.text
        if joined and paragraph is not None and paragraph == last_paragraph:
            if span is not None and span[0] <= last_end:  # sentences the passage before already gave
                sentences = split_sentences(text)
                shared = last_end - span[0] + 1
                if len(sentences) == span[1] - span[0] + 1:
                    text = " ".join(sentences[shared:])
            if text:
                joined[-1][1].append(text)
        else:
            joined.append((passage, [text]))
        last_paragraph, last_end = paragraph, span[1] if span else -1
    return joined


def _fits(title: str, budget_tokens: int, count_tokens: Callable[[str], int]) -> Callable[[str], bool]:
    """Whether a text, as an evidence item titled ``title``, is within ``budget_tokens``."""
    return lambda text: count_tokens(format_evidence([{"n": 1, "title": title, "text": text}])) < budget_tokens


def _opening(texts: Sequence[str], fits: Callable[[str], bool]) -> str:
    """As many of a paragraph's first passages as ``fits`` takes; the first cut short when it alone is too long."""
    kept = ""
    for text in texts:
        longer = f"{kept} {text}".strip()
        if not fits(longer):
            break
        kept = longer
    return kept or shortened(texts[0], fits)


def document_evidence(documents: Sequence[Sequence[Passage]], budget_tokens: int,
                      count_tokens: Callable[[str], int]) -> list[EvidenceItem]:
    """The evidence of a summary: each document's paragraphs, one item each, in the document's order, within
    its share of ``budget_tokens``. A document that does not fit gives the first paragraph of each of its
    sections, then the second of each, and so on while they fit (a document without sections: its first
    paragraphs), so that a summary reads every part of it; and at least the start of its first paragraph
    (the passages that fit, or the first cut short)."""
    evidence: list[EvidenceItem] = []
    share = budget_tokens // max(1, len(documents))
    for passages in documents:
        items: list[tuple[EvidenceItem, list[str]]] = [
            ({"n": 0, "passage_id": first.id, "title": first.shown_title, "text": " ".join(texts)}, texts)
            for first, texts in paragraphs(passages)]
        costs = [count_tokens(format_evidence([item])) + 1 for item, _ in items]
        seen: dict[str, int] = {}
        depth: list[int] = []  # how many paragraphs of its section come before each one
        for item, _ in items:
            depth.append(seen.get(item["title"], 0))
            seen[item["title"]] = depth[-1] + 1
        kept: set[int] = set()
        used = 0
        for i in sorted(range(len(items)), key=lambda i: (depth[i], i)):
            if used + costs[i] > share:
                break
            kept.add(i)
            used += costs[i]
        if not kept and items:
            first, texts = items[0]
            first["text"] = _opening(texts, _fits(first["title"], share, count_tokens))
            kept.add(0)
        for i in sorted(kept):
            evidence.append({**items[i][0], "n": len(evidence) + 1})
    return evidence


def _paragraph_of(passage: Passage) -> tuple[str, Any]:
    return PassageIndex.document_of(passage), passage.metadata.get("paragraph", passage.id)


def passages_held(evidence: Sequence[EvidenceItem], documents: Sequence[Sequence[Passage]]) -> int:
    """How many of the documents' passages the evidence holds whole (a paragraph cut short holds those
    before the cut)."""
    every = [p for passages in documents for p in passages]
    by_id = {p.id: p for p in every}
    texts = {_paragraph_of(by_id[item["passage_id"]]): item["text"] for item in evidence if item["passage_id"] in by_id}
    return sum(1 for p in every if p.text in texts.get(_paragraph_of(p), ""))


def _supplied(state: State, ctx: RAGContext) -> tuple[list[tuple[str, str]], list[list[Passage]]]:
    whole, pieces, _ = cut_and_embed(state.get("documents") or [], ctx.embedder)
    by_doc: dict[str, list[Passage]] = {}
    titles: dict[str, str] = {}
    for passage in [*whole, *pieces]:
        doc_id = passage.metadata.get("doc_id") or passage.id
        by_doc.setdefault(doc_id, []).append(passage)
        titles[doc_id] = passage.title
    order = sorted(by_doc, key=lambda d: int(d.split("/", 1)[1]))  # input/<i>: the order given
    return [(d, titles[d]) for d in order], [by_doc[d] for d in order]


@timed("summarize")
def summarize(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    question = state.get("standalone_question") or state["question"]
    thing = summarized_thing(question) or ""
    if state.get("documents"):
        named, documents = _supplied(state, ctx)
    else:
        named = summarized_documents(state, ctx.index, thing)
        documents = [[ctx.index.passage(i) for i in ctx.index.document_passages(doc_id)] for doc_id, _ in named]
    if not named:
        if (called := missing_document(thing)) is None:
            return {"summarized": False}
        return {"summarized": True, **direct_reply(
            ctx, state, no_such_document(called, [f.title for f in user_files(ctx.index)]),
            f"the request names a document, “{called}”, that none of the user's documents is",
            reply="no document", document=called)}
    evidence = document_evidence(documents, state["settings"]["summarize_tokens"], ctx.generator.count_tokens)
    # a budget larger than the model's context holds is cut to it, as an answer's evidence is
    evidence, _ = fit_to_context(evidence, lambda items: context_room(ctx.generator, summary_messages(question, items)),
                                 SUMMARY_MAX_TOKENS)
    reply = ctx.generator.invoke(summary_messages(question, evidence),
                                 **max_tokens_kwargs(ctx.generator, SUMMARY_MAX_TOKENS))
    raw = reply.text.strip()
    answer = split_citations(raw, len(evidence))[0]  # markers the model wrote anyway: cited by the words instead
    usage: Mapping[str, Any] = reply.usage_metadata or {}
    if usage.get("output_tokens", 0) >= SUMMARY_MAX_TOKENS:
        answer = finished_sentences(answer)
    if not any(c.isalnum() for c in answer):
        answer = ABSTENTION
    cited, held = cite_summary(question, answer, evidence) if not is_abstention(answer) else ([], False)
    by_id = {p.id: p for passages in documents for p in passages}
    # a cited paragraph's score is its cosine with the request, as retrieval scores a passage
    vectors = ctx.embedder.embed_documents([f"{evidence[n - 1]['title']}: {evidence[n - 1]['text']}" for n in cited]) \
        if cited else np.zeros((0, 0), np.float32)
    query = np.asarray(state["query_embedding"], dtype=np.float32)
    citations: list[Citation] = [
        {"n": n, "passage_id": evidence[n - 1]["passage_id"], "title": evidence[n - 1]["title"],
         "text": evidence[n - 1]["text"], "score": float(np.dot(query, vector)),
         "metadata": dict(by_id[evidence[n - 1]["passage_id"]].metadata)}
        for n, vector in zip(cited, vectors, strict=True)]
    metadata: Mapping[str, Any] = reply.response_metadata or {}
    abstained = is_abstention(answer)
    summarized: SummarizedTrace = {"thing": thing, "documents": [{"doc_id": d, "title": t} for d, t in named],
                                   "passages_read": passages_held(evidence, documents),
                                   "passages": sum(len(p) for p in documents), "evidence_items": len(evidence)}
    done: dict[str, Any] = {
        "summarized": summarized, "passages": traced_passages(state.get("passages") or []),
        "context": format_evidence(evidence), "raw_output": raw,
        "citation_source": "summary" if cited else "none" if abstained else "unsupported",
        "supported": held, "abstained": abstained,
        "answerability": unscored_check(ctx, state.get("overrides"), "abstain" if abstained else "answer", "summary",
                                        "a summary of the document the request names: the check scores answers to "
                                        "questions, not summaries"),
        "prompt_tokens": usage.get("input_tokens"), "input_tokens": usage.get("input_tokens"),
        "prompt_tokens_evaluated": metadata.get("prompt_tokens_evaluated", usage.get("input_tokens")),
        "output_tokens": usage.get("output_tokens"),
    }
    return {"summarized": True, "answer": answer, "citations": citations, "evidence": evidence, "overrides": {},
            "documents": [],
            "turns": [finished_turn(state["question"], question, answer, citations,
                                    {**(state.get("trace") or {}), **done}, passages_read=len(evidence))],
            "trace": done}
