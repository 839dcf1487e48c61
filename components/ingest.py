"""Ingest documents into a passage index: chunk, embed in batches, add what is new, save.

Documents are chunked lazily and embedded a batch at a time, so memory stays bounded however large
a file is. The index is saved every ``checkpoint_every`` new passages (inside a document too) and at
the end, each save atomic, so an interrupted ingest keeps what it finished and a rerun skips the
passages already present.

A document already in the index comes out of ingest as its chunking cuts it now: a passage whose id
it keeps but whose title, text or metadata changed is replaced, and one whose id it no longer makes (the
file changed, or is cut differently: another ``--window``, or long sentences split since) is
removed. The passages of a document an interrupted ingest left half done are all still made, so a
rerun only adds the rest.

A file document whose bytes (``CONTENT_DIGEST`` in its metadata) another document of the index
already holds is a copy ("report (1).txt" beside "report.txt"): it is skipped, with the reason, and
keeps no passages, since an answer that found one copy's passage would read the other's too. Copies
are told at the end of an ingest, so that a document the same ingest changes no longer counts as
holding its old content.

The index records the chunking it was cut with, and an ingest that names none cuts the same way (a
file uploaded to an index built with ``--window 3`` is cut three sentences a passage); one that names
another cuts its documents so, records it, and its report says that the index's other documents keep
the cut of before.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Iterable, Mapping, Union

from components.embedder import Embedder
from components.index import PassageIndex
from components.passages import ChunkingConfig, Passage, SourceDocument, chunk_document
from components.sources import CONTENT_DIGEST, Skipped


def _called(metadata: Mapping[str, Any], doc_id: str) -> str:
    """What a report calls a document: the name it was uploaded under, else its file's path."""
    return metadata.get("name") or metadata.get("path") or doc_id


class _Holders:
    """Which document holds each content digest, as the ingest goes."""

    def __init__(self) -> None:
        self._digest: dict[str, str] = {}  # doc_id -> its content digest
        self._holders: dict[str, dict[str, str]] = defaultdict(dict)  # digest -> {doc_id: what to call it}

    def hold(self, doc_id: str, metadata: Mapping[str, Any]) -> None:
        self.drop(doc_id)
        digest = metadata.get(CONTENT_DIGEST)
        if digest:
            self._digest[doc_id] = digest
            self._holders[digest][doc_id] = _called(metadata, doc_id)

    def drop(self, doc_id: str) -> None:
        digest = self._digest.pop(doc_id, None)
        if digest is not None:
            self._holders[digest].pop(doc_id, None)

    def other(self, doc: SourceDocument) -> str | None:
        """What to call another document with ``doc``'s content, if one holds it."""
        digest = doc.metadata.get(CONTENT_DIGEST)
        others = [name for held, name in self._holders.get(digest, {}).items() if held != doc.doc_id] if digest else []
        return others[0] if others else None


@dataclass
class IngestReport:
    documents: int = 0
    passages_added: int = 0
    passages_present: int = 0
    passages_replaced: int = 0  # same id, new title or text
    passages_removed: int = 0  # ids a document already in the index no longer has
    skipped: list[Skipped] = field(default_factory=list)
    read_in_part: list[Skipped] = field(default_factory=list)  # added, with what kept the reader from all of it
    replaced: list[str] = field(default_factory=list)  # earlier versions of re-uploaded files, removed
    chunking_before: ChunkingConfig | None = None  # the index's chunking, where this ingest cut another way

    def summary(self) -> str:
        lines = [
            f"documents read: {self.documents}",
            f"passages added: {self.passages_added}",
            f"passages already in the index (skipped): {self.passages_present}",
            *([f"passages changed (replaced): {self.passages_replaced}"] if self.passages_replaced else []),
            *([f"passages no longer in their document (removed): {self.passages_removed}"] if self.passages_removed else []),
            f"files skipped: {len(self.skipped)}",
        ]
        reasons = Counter(s.reason.split(":")[0] for s in self.skipped)
        lines += [f"  {count} x {reason}" for reason, count in reasons.most_common()]
        lines += [f"  - {s.path}: {s.reason}" for s in self.skipped[:20]]
        if len(self.skipped) > 20:
            lines.append(f"  ... and {len(self.skipped) - 20} more")
        if self.read_in_part:
            lines.append(f"files read in part: {len(self.read_in_part)}")
            lines += [f"  - {s.path}: {s.reason}" for s in self.read_in_part]
        if self.chunking_before is not None:
            lines.append(f"the index's other documents keep the cut of before ({self.chunking_before}): "
                         "ingest them again to cut them alike")
        return "\n".join(lines)


def ingest(
    items: Iterable[Union[SourceDocument, Skipped]],
    index: PassageIndex,
    embedder: Embedder,
    *,
    chunking: ChunkingConfig | None = None,
    batch_size: int = 256,
    checkpoint_every: int = 5000,
    on_progress: Callable[[int, int], None] | None = None,
    replacing: Collection[str] = (),
) -> IngestReport:
    """Add the passages of ``items`` to ``index`` and save it (if it has a folder; an index without one
    stays in memory). ``chunking`` defaults to the index's (the default cut for an index that records
    none). ``on_progress(documents, passages_added)``. ``replacing``: the ids of documents the
    caller removes once this ingest is done (earlier versions of uploaded files); their content
    does not count as held when telling copies."""
    if batch_size < 1 or checkpoint_every < 1:
        raise ValueError("batch_size and checkpoint_every must be >= 1")
    if index.embedder != embedder.name:
        raise ValueError(f"index uses embedder {index.embedder!r}, not {embedder.name!r}")
    report = IngestReport()
    if chunking is None:
        chunking = index.chunking or ChunkingConfig()
    elif index.chunking is not None and chunking != index.chunking and len(index):
        report.chunking_before = index.chunking
    index.chunking = chunking
    pending: list[Passage] = []
    pending_ids: set[str] = set()
    outdated: list[str] = []  # indexed passages a pending one replaces: taken out just before it goes in
    indexed: dict[str, set[str]] = defaultdict(set)  # each document's passage ids in the index before this ingest
    holders = _Holders()
    gone_soon = set(replacing)
    for held in index:
        doc_id = PassageIndex.document_of(held)
        indexed[doc_id].add(held.id)
        if doc_id not in gone_soon:
            holders.hold(doc_id, held.metadata)
    since_save = 0

    def flush() -> None:
        nonlocal since_save
        replacing = len(outdated)  # passages that go in again: changed, not new
        if outdated:
            index.remove(outdated)
            outdated.clear()
        if pending:
            vectors = embedder.embed_documents([p.embedding_text for p in pending])
            added = index.add(pending, vectors)
            report.passages_added += added - replacing
            since_save += added
            pending.clear()
            pending_ids.clear()

    def remove_gone(doc_id: str, made: set[str]) -> None:
        nonlocal since_save
        gone = indexed.get(doc_id, set()) - made
        if gone:
            flush()
            report.passages_removed += index.remove(gone)
            since_save += len(gone)

    def take(item: SourceDocument) -> None:
        nonlocal since_save
        report.documents += 1  # a copy skipped is not one
        holders.hold(item.doc_id, item.metadata)
        chunked = 0
        made: set[str] = set()
        for passage in chunk_document(item, chunking):  # lazily: a large file is never held whole
            chunked += 1
            made.add(passage.id)
            if passage.id in pending_ids:
                report.passages_present += 1
                continue
            if passage.id in index:
                held = index.passage(passage.id)
                if (held.title, held.text, held.metadata) == (passage.title, passage.text, passage.metadata):
                    report.passages_present += 1
                    continue
                outdated.append(passage.id)
                report.passages_replaced += 1
            pending.append(passage)
            pending_ids.add(passage.id)
            if len(pending) >= batch_size:
                flush()
                if since_save >= checkpoint_every and index.directory is not None:  # checkpoints inside a document too
                    index.save()
                    since_save = 0
                if on_progress:
                    on_progress(report.documents - 1, report.passages_added)
        remove_gone(item.doc_id, made)
        if not chunked:
            report.skipped.append(Skipped(_called(item.metadata, item.doc_id), "empty (no sentences)"))
        elif item.warning:
            report.read_in_part.append(Skipped(_called(item.metadata, item.doc_id), item.warning))

    copies: list[SourceDocument] = []  # told only at the end: what they copy may change later in this ingest
    for item in items:
        if isinstance(item, Skipped):
            report.skipped.append(item)
            continue
        if holders.other(item) is not None:
            copies.append(item)
            continue
        take(item)
        if on_progress:
            on_progress(report.documents, report.passages_added)
    for item in copies:
        original = holders.other(item)
        if original is None:  # what it copied changed in this ingest: its content is new after all
            take(item)
            continue
        report.skipped.append(Skipped(_called(item.metadata, item.doc_id),
                                      f"the same content as {original}, already in the knowledge base"))
        holders.drop(item.doc_id)
        remove_gone(item.doc_id, set())  # a document that has become a copy keeps no passages of before
    flush()
    if index.directory is not None and (since_save or not (index.directory / "manifest.json").exists()):
        index.save()  # an index without a folder stays in memory: its owner saves it where it wants
    if on_progress:
        on_progress(report.documents, report.passages_added)
    return report
