"""Source documents, sentence splitting and sentence-level passages.

A passage is p_j = (title, s_j) as in the thesis: one sentence (or, with a sentence window,
n consecutive sentences) together with the title of the document it came from. Each passage
gets a stable id from its source so re-ingesting the same document finds the same ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Collection, Iterable, Iterator, Mapping

import pysbd


SECTION_SEPARATOR = " › "
"""Between the headings of a section's path ("Cleaning › Descaling") and between a document's title and
its section."""


@dataclass(frozen=True)
class Paragraph:
    """A paragraph with the section it stands in: the path of the headings above it ("Guests",
    "Cleaning › Descaling"), from a reader that knows them (a Markdown file's). A source gives a
    paragraph under no heading as plain text."""

    text: str
    section: str


@dataclass(frozen=True)
class SourceDocument:
    """One document from a source: an id unique within the knowledge base, a title and paragraphs.

    ``paragraphs`` may be a one-pass iterator (a large file read lazily): chunk it once. A paragraph is
    text, or a :class:`Paragraph` where the reader knows the section it stands in.
    ``description``: a line that says what the whole document is (Wikipedia's short description,
    "Painting by Leonardo da Vinci"), which its first passage carries in parentheses."""

    doc_id: str
    title: str
    paragraphs: Iterable[str | Paragraph]
    metadata: dict[str, Any] = field(default_factory=dict)
    warning: str | None = None  # what the reader could not do fully (a damaged file read in part): the report says it
    description: str | None = None


@dataclass(frozen=True)
class Passage:
    """A retrievable unit: a title and one or more consecutive sentences of one paragraph. ``title`` is
    its document's; a passage under a heading records the heading's path as ``metadata["section"]``."""

    id: str
    title: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "text": self.text, "metadata": self.metadata}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "Passage":
        return cls(record["id"], record["title"], record["text"], record.get("metadata", {}))

    @property
    def shown_title(self) -> str:
        """What the passage is read under, by the embedder, the reranker, the prompt and the citations:
        its document's title, then its section ("Rules of the Harbour Sailing Club › Guests"). Under
        "Guests", "Members may bring two at a time." says what it is about only with the heading."""
        section = self.metadata.get("section")
        return SECTION_SEPARATOR.join(t for t in (self.title, section) if t)

    @property
    def embedding_text(self) -> str:
        """What the embedder sees: the title (and section) gives a bare sentence its subject."""
        return f"{self.shown_title}: {self.text}" if self.shown_title else self.text


def source_of(metadata: dict[str, Any], fallback: str) -> str:
    """Where a passage comes from, as a reader knows it: a page's address, a file's name (never a path on
    the server); ``fallback`` (its id) when its metadata says neither."""
    if metadata.get("url"):
        return metadata["url"]
    if metadata.get("name"):
        return metadata["name"]
    return Path(metadata["path"]).name if metadata.get("path") else fallback


def ranking_score(passage: Mapping[str, Any]) -> float:
    """The score a passage was ranked by: the reranker's where it scored the passage, else retrieval's
    (0 for a passage with neither). Citations and an abstention's closest passages show this one."""
    rerank = passage.get("rerank_score")
    return float(passage.get("score", 0.0) if rerank is None else rerank)


CLOSEST_SHOWN = 3
"""Passages shown with an answer that was not given or that no cited passage holds."""


def closest(passages: Iterable[Mapping[str, Any]], n: int = CLOSEST_SHOWN, holding: Collection[str] = ()) -> list[Any]:
    """The ``n`` best of ``passages`` by :func:`ranking_score`, best first (the evidence's own order
    may be document-diverse): what an abstention or an unsupported answer shows. The passages that hold
    an unsupported answer (their ids ``holding``: the trace's ``held_by``) come first, marked
    ``holds_answer``; a passage so marked before (a turn's kept ``closest``) stays first."""
    marked = [{**p, "holds_answer": True} if p["id"] in holding else p for p in passages]
    return sorted(marked, key=lambda p: (bool(p.get("holds_answer")), ranking_score(p)), reverse=True)[:n]


MAX_PASSAGE_WORDS = 150
"""The most words one sentence brings to a passage. The embedder reads about the first 256 word
pieces of a passage (all-MiniLM-L6-v2's ``max_seq_length``; 150 words and a title stay within it),
so the end of a longer one could never be retrieved, and a cheap tier that takes one passage whole
would read all of it. A longer "sentence" (a table, a list, a text with few sentence ends) is split
at its line breaks, and a line still longer into runs of this many words."""

PACKED_WORDS = 40
"""The lines of a split sentence are packed back together, in order, into passages of up to this
many words (nine in ten sentences of the benchmark corpora are no longer): a PDF's table comes out
one cell per line, and a passage of one cell ("2028") says nothing."""

CHUNKING_VERSION = 2
"""Changes whenever the same text is cut into other passages (2: long sentences split), so an index
cached by its source's content (the benchmark corpora) is built again, not reused."""


@dataclass(frozen=True)
class ChunkingConfig:
    """``window`` sentences per passage, consecutive passages sharing ``overlap`` sentences; a
    sentence longer than ``max_words`` is split first (:func:`passage_sentences`)."""

    window: int = 1
    overlap: int = 0
    max_words: int = MAX_PASSAGE_WORDS

    def __post_init__(self) -> None:
        if self.window < 1:
            raise ValueError(f"window must be >= 1, got {self.window}")
        if not 0 <= self.overlap < self.window:
            raise ValueError(f"overlap must be in [0, window), got {self.overlap} for window {self.window}")
        if self.max_words < 1:
            raise ValueError(f"max_words must be >= 1, got {self.max_words}")

    def to_record(self) -> dict[str, int]:
        return {"window": self.window, "overlap": self.overlap, "max_words": self.max_words}

    @classmethod
    def from_record(cls, record: Any) -> "ChunkingConfig":
        """The chunking :meth:`to_record` wrote; ``ValueError`` for anything else."""
        fields = ("window", "overlap", "max_words")
        if not isinstance(record, dict) or set(record) != set(fields) or not all(
                isinstance(record[f], int) and not isinstance(record[f], bool) for f in fields):
            raise ValueError(f"a chunking is {{'window': int, 'overlap': int, 'max_words': int}}, not {record!r}")
        return cls(**record)

    def __str__(self) -> str:
        return f"window {self.window}, overlap {self.overlap}, max_words {self.max_words}"


_WHITESPACE = re.compile(r"\s+")


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    # pysbd ships its rules in the package: no data download, unlike nltk's punkt.
    return pysbd.Segmenter(language="en", clean=False)


def split_sentences(text: str) -> list[str]:
    """Split a paragraph into sentences, whitespace-normalised, empty ones dropped."""
    text = _WHITESPACE.sub(" ", text).strip()
    if not text:
        return []
    return [s.strip() for s in _segmenter().segment(text) if s.strip()]


_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^[\s|:-]*-{3,}[\s|:-]*$")


def _cells(row: str) -> list[str]:
    return [" ".join(cell.split()) for cell in row.strip().strip("|").split("|")]


def _lines(lines: list[str]) -> list[str]:
    """Lines of text, a Markdown table's rows as sentences of ``column: value`` pairs (its header
    row names the columns of the rows below its rule; the rule itself is dropped)."""
    out: list[str] = []
    header: list[str] | None = None
    for i, line in enumerate(lines):
        if not _TABLE_ROW.match(line):
            header = None
            out.append(line)
        elif _TABLE_RULE.match(line):
            continue
        elif i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1]):
            header = _cells(line)
        else:
            cells = _cells(line)
            if header is not None and len(header) == len(cells):
                out.append("; ".join(f"{h}: {c}" for h, c in zip(header, cells, strict=True)) + ".")
            else:
                out.append(" | ".join(cells))
    return out


def _split_long(lines: list[str], max_words: int) -> list[str]:
    """One over-long sentence, given as its lines: each line (a table's row named by its columns)
    cut into runs of ``max_words`` words, then the pieces packed back, in order, into sentences of
    up to :data:`PACKED_WORDS` words."""
    packed: list[list[str]] = []
    for line in _lines(lines):
        words = line.split()
        for piece in (words[i:i + max_words] for i in range(0, len(words), max_words)):
            if packed and len(packed[-1]) + len(piece) <= min(PACKED_WORDS, max_words):
                packed[-1].extend(piece)
            else:
                packed.append(list(piece))
    return [" ".join(words) for words in packed]


def passage_sentences(paragraph: str, max_words: int = MAX_PASSAGE_WORDS) -> list[str]:
    """The sentences of a paragraph (:func:`split_sentences`), none longer than ``max_words`` words:
    a longer one is split at the line breaks it had in the paragraph, and further as
    :func:`_split_long` says. The other sentences stay as they are."""
    sentences = split_sentences(paragraph)
    if all(len(s.split()) <= max_words for s in sentences):
        return sentences
    # the paragraph's words, each with whether a line break comes before it: the sentences are runs of them
    found = list(re.finditer(r"\S+", paragraph))
    words = [(m.group(), "\n" in paragraph[found[i - 1].end() if i else 0:m.start()]) for i, m in enumerate(found)]
    out: list[str] = []
    at = 0
    for sentence in sentences:
        n = len(sentence.split())
        run, at = words[at:at + n], at + n
        if n <= max_words:
            out.append(sentence)
            continue
        lines: list[list[str]] = []
        for word, breaks in run:
            if breaks or not lines:
                lines.append([])
            lines[-1].append(word)
        aligned = " ".join(word for word, _ in run) == sentence  # else the segmenter split inside a word
        out.extend(_split_long([" ".join(line) for line in lines] if aligned else [sentence], max_words))
    return out


def chunk_document(doc: SourceDocument, chunking: ChunkingConfig = ChunkingConfig()) -> Iterator[Passage]:
    """Passages of a document, paragraph by paragraph, with ids ``<doc_id>#p<i>s<j>[-<k>]``; the first
    ends with the document's description in parentheses, a sentence of its own left unsplit."""
    description = _WHITESPACE.sub(" ", doc.description or "").strip()
    step = chunking.window - chunking.overlap
    for p_idx, paragraph in enumerate(doc.paragraphs):
        body, section = (paragraph.text, paragraph.section) if isinstance(paragraph, Paragraph) else (paragraph, "")
        sentences = passage_sentences(body, chunking.max_words)
        start = 0
        while start < len(sentences):
            end = min(start + chunking.window, len(sentences))
            span = f"s{start}" if end - start == 1 else f"s{start}-{end - 1}"
            text = " ".join(sentences[start:end])
            if description:
                text, description = f"{text} ({description})", ""
            yield Passage(
                id=f"{doc.doc_id}#p{p_idx}{span}",
                title=doc.title,
                text=text,
                metadata={**doc.metadata, "doc_id": doc.doc_id, "paragraph": p_idx, "sentence": start,
                          **({"section": section} if section else {})},
            )
            if end == len(sentences):
                break
            start += step


def chunk_documents(docs: Iterable[SourceDocument], chunking: ChunkingConfig = ChunkingConfig()) -> Iterator[Passage]:
    for doc in docs:
        yield from chunk_document(doc, chunking)
