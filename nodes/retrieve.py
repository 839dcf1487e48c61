"""retrieve: dense top-k for the tier; on a corrective pass, k_extra more passages, de-duplicated.

A question that names one of the user's files in the index ("What does the handbook say about
holidays?", "Summarize my report", "the document") searches that file's passages only
(:func:`named_documents`), and the trace says which (``named_documents``); else the whole index.

When the question comes with its own ``documents``, the index is not searched: the documents are
cut into passages as ingest cuts a file (paragraphs at blank lines, then sentences; ids
``input/<i>#p<j>s<k>``, ``metadata["doc_id"]`` ``input/<i>``), and the ``k`` closest to the question
are the passages, as a search would give them. A document marked ``whole`` is one passage (id
``input/<i>``), always among them, first and in the order given. A corrective pass then takes the
next ``k_extra`` pieces of the documents, never the index's, from the pieces and embeddings of the
first pass (kept for the last :data:`SUPPLIED_KEPT` sets of documents, so a follow-up over the same
documents does not cut and embed them again either).
"""

from __future__ import annotations

import json
import re
from datetime import date
from functools import lru_cache
from pathlib import PurePath
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np
from langgraph.runtime import Runtime

from components.embedder import Embedder
from components.index import PassageIndex, PerRevision, SearchHit
from components.passages import Passage, SourceDocument, chunk_document
from components.reranker import folded_words
from components.requests import DETERMINERS, DOCUMENT_WORDS, called_after, population_place, summarized_thing
from components.sources import aged_today, text_paragraphs
from components.titles import titled_document
from pipeline.context import RAGContext
from pipeline.state import InputDocument, NamedDocumentTrace, PassageHit, PlaceDocumentTrace, State, Turn
from nodes.base import context_of, timed
from nodes.condense_question import topical


def passage_hit(passage: Passage, score: float, today: date | None = None) -> PassageHit:
    """A passage as retrieval hands it on; with ``today``, a Wikipedia summary's living person's age on that
    day spelled beside the birth year its description gives (:func:`components.sources.aged_today`). What a
    description gives of the index's passages (:mod:`nodes.describe`) is read so too."""
    text = aged_today(passage.text, today) if today is not None and passage.metadata.get("source") == "wikipedia" \
        else passage.text
    return {"id": passage.id, "title": passage.shown_title, "text": text, "metadata": passage.metadata, "score": score}


def reading_day(settings: Mapping[str, Any]) -> date | None:
    """The day a passage's living person's age is spelled for: today, unless the settings say not to
    (``living_ages``)."""
    return date.today() if settings.get("living_ages", True) else None


SUPPLIED_KEPT = 4
"""How many sets of supplied documents keep their pieces and embeddings in this process (a set of
documents may hold 200,000 characters: some seconds of embedding on a CPU, and a few MB kept)."""


class SuppliedPieces(NamedTuple):
    """Supplied documents as passages: the ``whole`` ones, the ``pieces`` of the others, and the
    embeddings of both, in that order."""

    whole: list[Passage]
    pieces: list[Passage]
    embeddings: np.ndarray


def cut_and_embed(documents: Sequence[InputDocument], embedder: Embedder) -> SuppliedPieces:
    """The passages of ``documents`` and their embeddings, cut and embedded once per set of documents
    and embedder (the last :data:`SUPPLIED_KEPT` are kept)."""
    return _cut_and_embed(embedder, json.dumps(list(documents), sort_keys=True, ensure_ascii=False))


@lru_cache(maxsize=SUPPLIED_KEPT)
def _cut_and_embed(embedder: Embedder, documents_json: str) -> SuppliedPieces:
    documents = json.loads(documents_json)
    whole = [Passage(f"input/{i}", d["title"], d["text"], {"source": "input", "doc_id": f"input/{i}"})
             for i, d in enumerate(documents) if d.get("whole")]
    pieces = [p for i, d in enumerate(documents) if not d.get("whole")
              for p in chunk_document(SourceDocument(f"input/{i}", d["title"], tuple(text_paragraphs(d["text"])),
                                                     {"source": "input"}))]
    texts = [p.embedding_text for p in [*whole, *pieces]]
    return SuppliedPieces(whole, pieces, embedder.embed_documents(texts) if texts else np.zeros((0, 0), np.float32))


def supplied_passages(documents: Sequence[InputDocument], query: np.ndarray, k: int, embedder: Embedder) -> list[PassageHit]:
    """The passages of ``documents`` (:mod:`nodes.retrieve`'s rule): the whole documents in the order
    given, then the ``k`` pieces of the others closest to ``query``, best first (ties in order)."""
    whole, pieces, embeddings = cut_and_embed(documents, embedder)
    if not whole and not pieces:
        return []
    scores = (embeddings @ query).tolist()
    best = sorted(range(len(pieces)), key=lambda i: -scores[len(whole) + i])[:k]
    return [*(passage_hit(p, float(s)) for p, s in zip(whole, scores[:len(whole)], strict=True)),
            *(passage_hit(pieces[i], float(scores[len(whole) + i])) for i in best)]


_NOT_A_NAME = frozenset({"the", "and", "for", "with", "from", "this", "that", "your", "our", "new", "final", "copy"})
_TITLE_HEAD_ENDS = re.compile(r"\s(?:of|for|on|about|from|by|in|to|at|and|with)\s|[:(,;–—]")


class UserFile(NamedTuple):
    doc_id: str
    title: str
    name: str  # the file's name ("handbook.md"); "" when unknown


def document_kind(title: str, name: str) -> set[str]:
    """The words a question calls a file by: the head of its title (the last word before "of", "for", a
    colon...: "Staff handbook of the Quillfeather Bakery" → handbook) and the last word of its file
    name ("q3-report.pdf" → report)."""
    head = _TITLE_HEAD_ENDS.split(title, maxsplit=1)[0]
    found = set()
    for words in (re.findall(r"[a-z]+", head.lower()), re.findall(r"[a-z]+", PurePath(name).stem.lower())):
        if words and len(words[-1]) >= 3 and words[-1] not in _NOT_A_NAME:
            found.add(words[-1])
    return found


def _calls(word: str, kinds: set[str]) -> bool:
    return word in kinds or (word.endswith("s") and word[:-1] in kinds) or f"{word}s" in kinds


def named_documents(question: str, files: Sequence[tuple[str, str, str]]) -> list[str]:
    """The ids of the ``files`` (id, title, file name) that ``question`` names: one of the three words
    after a determiner ("the", "my", "this"...) is a file's kind (:func:`document_kind`: "the staff
    handbook", "my report") or a word for any file ("the document": all of them). A word followed by
    "of" names something else ("the results of the election"); "a handbook" is the thing, not a file."""
    if not files:
        return []
    tokens = re.findall(r"[a-z]+", question.lower())
    kinds = [document_kind(title, name) for _, title, name in files]
    named: set[int] = set()
    for i, token in enumerate(tokens):
        if token not in DETERMINERS:
            continue
        for word in called_after(tokens, i):
            if word in DOCUMENT_WORDS:
                return [doc_id for doc_id, _, _ in files]
            named.update(n for n, kind in enumerate(kinds) if _calls(word, kind))
    return [files[n][0] for n in sorted(named)]


def user_files(index: PassageIndex) -> tuple[UserFile, ...]:
    """The user's files in ``index`` (passages whose source is a file), listed once per revision."""
    return _FILES.get(index, None, lambda: tuple(
        UserFile(d["doc_id"], d["title"], d["metadata"].get("name") or PurePath(d["metadata"].get("path") or "").name)
        for d in index.documents() if d["metadata"].get("source") == "file"))


_FILES: PerRevision[tuple[UserFile, ...]] = PerRevision()


def files_followed(question: str, turns: Sequence[Turn], files: Sequence[UserFile]) -> list[str]:
    """The ids of the files a follow-up that names none may stay in (:func:`_searched_before`); none for a
    question that names one."""
    return [] if not files or named_documents(question, files) else _searched_before(turns, files)


def _searched_before(turns: Sequence[Turn], files: Sequence[UserFile]) -> list[str]:
    """The ids of the files the last turn that read anything searched only (it named them, or followed
    them itself), where they are still in ``files``."""
    before = topical(turns)
    held = {f.doc_id for f in files}
    return [d["doc_id"] for d in (before[-1].get("named_documents") or [] if before else []) if d["doc_id"] in held]


def searched_files(state: State, index: PassageIndex, query: np.ndarray,
                   k: int) -> tuple[list[NamedDocumentTrace], list[SearchHit] | None]:
    """The user's files retrieval searches only, none for the whole index: those the question names
    (:func:`named_documents`); else, for a follow-up, those the question before searched
    (:func:`files_followed`), ``followed``, when their best passage scores at least the setting
    ``follow_up_file_score`` ("Who is the manager?" after a question on the handbook; "When did Napoleon
    die?" after it is a new topic); else those of the user's files among whose ``k`` best passages one
    scores at least ``file_first_score``, ``near`` (:func:`near_files`). With followed or near files, the ``k``
    best passages of them, which that test has just searched for (``None`` where it did not)."""
    settings = state["settings"]
    files = user_files(index) if settings.get("named_documents", True) else ()
    question = state.get("standalone_question") or state["question"]
    named = set(named_documents(question, files))
    if named:
        return [{"doc_id": f.doc_id, "title": f.title} for f in files if f.doc_id in named], None
    bar = settings.get("follow_up_file_score")
    followed = set(_searched_before(state.get("turns") or [], files)) if bar is not None else set()
    best = index.search(query, k, within=followed) if followed else []  # the question names none: just read
    if bar is not None and best and best[0].score >= bar:
        return [{"doc_id": f.doc_id, "title": f.title, "followed": True} for f in files if f.doc_id in followed], best
    return near_files(settings, question, files, index, query, k)


def near_files(settings: Mapping[str, Any], question: str, files: Sequence[UserFile], index: PassageIndex,
               query: np.ndarray, k: int) -> tuple[list[NamedDocumentTrace], list[SearchHit] | None]:
    """The user's files a question that names none and follows none searches only: those among whose ``k`` best
    passages one scores at least the setting ``file_first_score`` (cosine), ``near``, with their ``k`` best
    passages; none (and the whole index) below it, with the setting ``None``, and for a request to summarize (it
    names what it wants summarized: :func:`components.requests.summarized_thing`). Found trying the API (session
    69): with a travel policy uploaded, "Who leads the finance office?" searched the whole index, where the
    policy's "The finance office, led by Karin Weiss, ..." (0.376) ranked twelfth behind Wikipedia's finance. A
    file none of whose passages is near is not searched (session 69's walk: a team list was, beside the policy), nor
    are files that never mention a name the question gives (:func:`names_held`)."""
    bar = settings.get("file_first_score")
    if bar is None or not files or (settings.get("summarize") and summarized_thing(question) is not None):
        return [], None
    hits = index.search(query, k, within={f.doc_id for f in files})
    near = {index.document_of(hit.passage) for hit in hits if hit.score >= bar}
    if not near or not names_held(question, index, near):
        return [], None
    if any(index.document_of(hit.passage) not in near for hit in hits):  # else they are the near files' k best
        hits = index.search(query, k, within=near)
    return [{"doc_id": f.doc_id, "title": f.title, "near": True} for f in files if f.doc_id in near], hits


def given_names(question: str) -> set[str]:
    """The names ``question`` gives: each capitalized word of three letters or more after its first word, accents and
    case aside (:func:`components.reranker.folded_words`): "Where was Beethoven born?": "beethoven"."""
    _, _, rest = question.strip().partition(" ")
    return {w for word in re.findall(r"\w+", rest) if word[:1].isupper() for w in folded_words(word) if len(w) >= 3}


def names_held(question: str, index: PassageIndex, documents: set[str]) -> bool:
    """Whether the passages of ``documents`` (titles and texts: :func:`document_words`) hold every name ``question``
    gives (:func:`given_names`). Found in session 69's walk: with a team list uploaded, "Where was Beethoven born?" is
    near its "She was born in Lyon." (0.50), and read only it."""
    names = given_names(question)
    return not names or names <= set().union(*(document_words(index, doc) for doc in documents))


_WORDS: PerRevision[frozenset[str]] = PerRevision()


def document_words(index: PassageIndex, doc_id: str) -> frozenset[str]:
    """The words of a document's passages, titles and texts (:func:`components.reranker.folded_words`), read once
    per revision of ``index``."""
    def read() -> frozenset[str]:
        passages = (index.passage(pid) for pid in index.document_passages(doc_id))
        return frozenset().union(*(folded_words(f"{p.title} {p.text}") for p in passages))

    return _WORDS.get(index, doc_id, read)


def place_document(state: State, index: PassageIndex) -> PlaceDocumentTrace | None:
    """The document a question that asks a place's population searches only, with the setting ``place_first``: the
    one the index holds titled as the place (:func:`components.requests.population_place`,
    :func:`components.titles.titled_document`, as written); ``None`` for any other question, or where no document
    or two are titled so. Found trying the chat (session 69): "How many people live in Germany?" read Stuttgart's
    "sixth largest city in Germany" first and was answered its 613,111; Germany's own passage ranked second."""
    place = population_place(state.get("standalone_question") or state["question"])
    if not state["settings"].get("place_first") or place is None:
        return None
    doc_id = titled_document(index, place, spelling=False)
    return None if doc_id is None else {"doc_id": doc_id, "title": index.document_title(doc_id)}


@timed("retrieve")
def retrieve(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    settings = state["settings"]
    query = np.asarray(state["query_embedding"], dtype=np.float32)
    existing = state.get("passages") or []
    documents = state.get("documents") or []
    k = settings.get("retrieve_k", settings["budget"]["k"])
    if documents and not existing:
        return {"passages": supplied_passages(documents, query, k, ctx.embedder)}
    searched, read = searched_files(state, ctx.index, query, k)
    place = place_document(state, ctx.index) if not searched else None
    within = {d["doc_id"] for d in searched} or ({place["doc_id"]} if place else None)
    trace: dict[str, Any] = {"named_documents": searched} if searched else {"place_document": place} if place else {}
    today = reading_day(settings)
    if not existing:
        hits = read if read is not None else ctx.index.search(query, k, within=within)
        found = [passage_hit(h.passage, h.score, today) for h in hits]
        return {"passages": found, **({"trace": trace} if trace else {})}

    corrections = state.get("corrections", 0) + 1
    held = {p["id"] for p in existing}
    if documents:
        more = supplied_passages(documents, query, len(existing) + settings["k_extra"], ctx.embedder)
        extra = [p for p in more if p["id"] not in held][: settings["k_extra"]]
    else:
        extra = [passage_hit(h.passage, h.score, today) for h in ctx.index.search(query, settings["k_extra"], exclude=held,
                                                                        within=within)]
    return {
        "passages": existing + extra,
        "corrections": corrections,
        "trace": {**trace, "correction": {"fired": True, "rounds": corrections, "added": len(extra)}},
    }
