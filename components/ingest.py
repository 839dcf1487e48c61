"""Ingest documents into a passage index: chunk, embed in batches, add what is new, save.

Documents are chunked lazily and embedded a batch at a time, so memory stays bounded however large
a file is. The index is saved every ``checkpoint_every`` new passages (inside a document too) and at
the end, each save atomic, so an interrupted ingest keeps what it finished and a rerun skips the
passages already present.

A document already in the index comes out of ingest as its chunking cuts it now: a passage whose id
it keeps but whose title or text changed is replaced, and one whose id it no longer makes (the
file changed, or is cut differently: another ``--window``, or long sentences split since) is
removed. The passages of a document an interrupted ingest left half done are all still made, so a
rerun only adds the rest.

The index records the chunking it was cut with, and an ingest that names none cuts the same way (a
file uploaded to an index built with ``--window 3`` is cut three sentences a passage); one that names
another cuts its documents so, records it, and its report says that the index's other documents keep
the cut of before.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Union

from components.embedder import Embedder
from components.index import PassageIndex
from components.passages import ChunkingConfig, Passage, SourceDocument, chunk_document
from components.sources import Skipped


@dataclass
class IngestReport:
    documents: int = 0
    passages_added: int = 0
    passages_present: int = 0
    passages_replaced: int = 0  # same id, new title or text
    passages_removed: int = 0  # ids a document already in the index no longer has
    skipped: list[Skipped] = field(default_factory=list)
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
) -> IngestReport:
    """Add the passages of ``items`` to ``index`` and save it (if it has a folder; an index without one
    stays in memory). ``chunking`` defaults to the index's (the default cut for an index that records
    none). ``on_progress(documents, passages_added)``."""
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
    for held in index:
        indexed[PassageIndex.document_of(held)].add(held.id)
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

    for item in items:
        if isinstance(item, Skipped):
            report.skipped.append(item)
            continue
        report.documents += 1
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
                if (held.title, held.text) == (passage.title, passage.text):
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
        gone = indexed.get(item.doc_id, set()) - made
        if gone:
            flush()
            report.passages_removed += index.remove(gone)
            since_save += len(gone)
        if not chunked:
            report.skipped.append(Skipped(item.doc_id, "empty (no sentences)"))
            continue
        if on_progress:
            on_progress(report.documents, report.passages_added)
    flush()
    if index.directory is not None and (since_save or not (index.directory / "manifest.json").exists()):
        index.save()  # an index without a folder stays in memory: its owner saves it where it wants
    if on_progress:
        on_progress(report.documents, report.passages_added)
    return report
