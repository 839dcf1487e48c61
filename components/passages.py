"""Source documents, sentence splitting and sentence-level passages.

A passage is p_j = (title, s_j) as in the thesis: one sentence (or, with a sentence window,
n consecutive sentences) together with the title of the document it came from. Each passage
gets a stable id from its source so re-ingesting the same document finds the same ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Iterator

import pysbd


@dataclass(frozen=True)
class SourceDocument:
    """One document from a source: an id unique within the knowledge base, a title and paragraphs.

    ``paragraphs`` may be a one-pass iterator (a large file read lazily): chunk it once."""

    doc_id: str
    title: str
    paragraphs: Iterable[str]
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Passage:
    """A retrievable unit: a title and one or more consecutive sentences of one paragraph."""

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
    def embedding_text(self) -> str:
        """What the embedder sees: the title gives a bare sentence its subject."""
        return f"{self.title}: {self.text}" if self.title else self.text


@dataclass(frozen=True)
class ChunkingConfig:
    """``window`` sentences per passage, consecutive passages sharing ``overlap`` sentences."""

    window: int = 1
    overlap: int = 0

    def __post_init__(self) -> None:
        if self.window < 1:
            raise ValueError(f"window must be >= 1, got {self.window}")
        if not 0 <= self.overlap < self.window:
            raise ValueError(f"overlap must be in [0, window), got {self.overlap} for window {self.window}")


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


def chunk_document(doc: SourceDocument, chunking: ChunkingConfig = ChunkingConfig()) -> Iterator[Passage]:
    """Passages of a document, paragraph by paragraph, with ids ``<doc_id>#p<i>s<j>[-<k>]``."""
    step = chunking.window - chunking.overlap
    for p_idx, paragraph in enumerate(doc.paragraphs):
        sentences = split_sentences(paragraph)
        start = 0
        while start < len(sentences):
            end = min(start + chunking.window, len(sentences))
            span = f"s{start}" if end - start == 1 else f"s{start}-{end - 1}"
            yield Passage(
                id=f"{doc.doc_id}#p{p_idx}{span}",
                title=doc.title,
                text=" ".join(sentences[start:end]),
                metadata={**doc.metadata, "doc_id": doc.doc_id, "paragraph": p_idx, "sentence": start},
            )
            if end == len(sentences):
                break
            start += step


def chunk_documents(docs: Iterable[SourceDocument], chunking: ChunkingConfig = ChunkingConfig()) -> Iterator[Passage]:
    for doc in docs:
        yield from chunk_document(doc, chunking)
