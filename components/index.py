"""Dense passage index: FAISS ``IndexFlatIP`` over L2-normalised vectors, so scores are cosines.

On disk an index is a folder holding a manifest and one *generation* of data files::

    manifest.json            embedder, dimension, count, data file names and their sha256, and
                             how the passages were cut (the chunking of the last ingest)
    index-000003.faiss       written by faiss's own writer
    passages-000003.jsonl    one passage per line, in vector order

:meth:`PassageIndex.save` writes a new generation beside the old one and switches to it by
atomically replacing the manifest, so a process killed at any moment leaves the previous
generation loadable. Nothing is pickled.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
import weakref
from pathlib import Path
from typing import Any, Callable, Collection, Generic, Hashable, Iterable, Mapping, NamedTuple, Sequence, TypeVar

import faiss
import numpy as np

from components.passages import ChunkingConfig, Passage
from components.storage import atomic_path, atomic_write_text, sha256_file

MANIFEST = "manifest.json"
FORMAT_VERSION = 1
_BUILD_HINT = "build it with: adaptive-rag ingest wiki --index {dir}"
_REBUILD_HINT = "move {dir} aside and build it again: adaptive-rag ingest wiki --index {dir}"
"""A damaged index cannot be added to, so building it again starts from an empty folder."""


class SearchHit(NamedTuple):
    """One search result: a passage and its cosine to the query (higher is closer)."""

    passage: Passage
    score: float


class IndexLoadError(RuntimeError):
    """An index folder that is missing, damaged or built for another embedder. Says how to fix it."""


def document_id(passage_id: str, metadata: Mapping[str, Any]) -> str:
    """The id of the document of the passage ``passage_id`` with ``metadata`` (a citation has both)."""
    return metadata.get("doc_id") or passage_id.split("#", 1)[0]


class PassageIndex:
    """Passages and their vectors, searchable by inner product.

    Thread-safe: searches may run while another thread adds passages or saves.
    """

    def __init__(self, embedder: str, dimension: int, directory: Path | None = None):
        if dimension < 1:
            raise ValueError(f"dimension must be >= 1, got {dimension}")
        self.embedder = embedder
        self.dimension = dimension
        self.directory = Path(directory) if directory else None
        self._faiss: faiss.Index = faiss.IndexFlatIP(dimension)
        self._passages: list[Passage] = []
        self._ids: dict[str, int] = {}
        self._documents: dict[str, list[str]] = {}
        """The ids of each document's passages in the order they were added, kept with ``_passages``."""
        self._generation = 0
        self.chunking: ChunkingConfig | None = None
        """How the passages were cut (recorded by ingest): a later ingest that names none cuts so."""
        self.sources: dict[str, int] = {}
        """The version of each bundled source's reader its passages were last read with, by source
        (``adaptive-rag ingest wiki`` records ``wikipedia``): an index read by an older one can say so."""
        self._revision = uuid.uuid4().hex
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ contents
    def __len__(self) -> int:
        return len(self._passages)

    def __contains__(self, passage_id: str) -> bool:
        return passage_id in self._ids

    def __iter__(self):
        with self._lock:
            return iter(list(self._passages))

    @property
    def revision(self) -> str:
        """Names the index's contents: the saved files' checksums while it is as saved or loaded, a
        fresh random id after any change not yet saved. Answers cached under one revision are never
        served under another (:mod:`components.query_cache`)."""
        return self._revision

    def copy(self) -> "PassageIndex":
        """A copy held in memory (no folder), to add to or take from without changing this one."""
        with self._lock:
            other = PassageIndex(self.embedder, self.dimension)
            other._faiss = faiss.clone_index(self._faiss)
            other._passages, other._ids = list(self._passages), dict(self._ids)
            other._documents = {doc: list(ids) for doc, ids in self._documents.items()}
            other.chunking, other.sources = self.chunking, dict(self.sources)
            return other

    def passage(self, passage_id: str) -> Passage:
        return self._passages[self._ids[passage_id]]

    def add(self, passages: Sequence[Passage], vectors: np.ndarray) -> int:
        """Add passages whose ids are new; return how many were added (duplicates are skipped)."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(passages):
            raise ValueError(f"expected {len(passages)} vectors, got array of shape {vectors.shape}")
        if len(passages) and vectors.shape[1] != self.dimension:
            raise ValueError(f"vectors have dimension {vectors.shape[1]}, index has {self.dimension}")
        with self._lock:
            keep = []
            for row, passage in enumerate(passages):
                if passage.id not in self._ids:
                    self._ids[passage.id] = len(self._passages)
                    self._passages.append(passage)
                    self._documents.setdefault(self.document_of(passage), []).append(passage.id)
                    keep.append(row)
            if keep:
                self._faiss.add(vectors[keep])
                self._revision = uuid.uuid4().hex
            return len(keep)

    def remove(self, passage_ids: Iterable[str]) -> int:
        """Take passages out (their vectors too); return how many were there. The rest keep their
        order. Call :meth:`save` to make it last: the saved generation switches atomically."""
        with self._lock:
            rows = sorted({self._ids[pid] for pid in passage_ids if pid in self._ids})
            if not rows:
                return 0
            # A flat index closes the gaps, keeping the order of the rest.
            self._faiss.remove_ids(faiss.IDSelectorBatch(np.asarray(rows, dtype=np.int64)))
            gone = set(rows)
            self._hold([p for row, p in enumerate(self._passages) if row not in gone])
            self._revision = uuid.uuid4().hex
            return len(rows)

    def _hold(self, passages: list[Passage]) -> None:
        """Make ``passages`` the index's, with their ids' rows and each document's passages (the vectors aside)."""
        self._passages = passages
        self._ids = {p.id: row for row, p in enumerate(passages)}
        self._documents = {}
        for passage in passages:
            self._documents.setdefault(self.document_of(passage), []).append(passage.id)

    @staticmethod
    def document_of(passage: Passage) -> str:
        """The id of the document a passage belongs to."""
        return document_id(passage.id, passage.metadata)

    def documents(self) -> list[dict]:
        """Each document in the index: its id, title, source metadata and passage count, in the
        order they were added."""
        with self._lock:
            found: dict[str, dict] = {}
            for passage in self._passages:
                meta = passage.metadata
                doc_id = self.document_of(passage)
                entry = found.get(doc_id)
                if entry is None:
                    entry = found[doc_id] = {"doc_id": doc_id, "title": passage.title, "passages": 0,
                                             "metadata": {k: v for k, v in meta.items()
                                                          if k not in ("doc_id", "paragraph", "sentence", "section")}}
                entry["passages"] += 1
            return list(found.values())

    def document_title(self, doc_id: str) -> str:
        """A document's title (its first passage's, as added), without reading its passages in order; ``KeyError``
        for a document the index does not hold."""
        with self._lock:
            return self.passage(self._documents[doc_id][0]).title

    def document_passages(self, doc_id: str) -> list[str]:
        """The ids of a document's passages in the document's order (by paragraph and sentence, where
        its passages record them; else in the order they were added: a document read again, the
        Wikipedia summaries with their descriptions say, may have added its first passage last)."""
        with self._lock:
            passages = [self.passage(i) for i in self._documents.get(doc_id, ())]
        if all(isinstance(p.metadata.get("paragraph"), int) and isinstance(p.metadata.get("sentence"), int)
               for p in passages):
            passages.sort(key=lambda p: (p.metadata["paragraph"], p.metadata["sentence"]))
        return [p.id for p in passages]

    def warm_up(self) -> None:
        """Nothing to load: an index is in memory from :meth:`load` or construction on."""

    def search(self, vector: np.ndarray, k: int, exclude: Iterable[str] = (),
               within: Collection[str] | None = None) -> list[SearchHit]:
        """The ``k`` best passages for a query vector, best first, skipping ids in ``exclude``; with
        ``within``, only the passages of those documents (ids as :meth:`document_of` gives them)."""
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        excluded = set(exclude)
        want = min(k + len(excluded), len(self._passages))
        if want == 0:
            return []
        query = np.ascontiguousarray(np.asarray(vector, dtype=np.float32).reshape(1, -1))
        if query.shape[1] != self.dimension:
            raise ValueError(f"query has dimension {query.shape[1]}, index has {self.dimension}")
        if within is not None:
            return self._search_within(query[0], k, excluded, set(within))
        with self._lock:
            scores, rows = self._faiss.search(query, want)  # faiss's own (distances, labels) arrays
            found = [SearchHit(self._passages[row], float(score))
                     for score, row in zip(scores[0], rows[0], strict=True) if row >= 0]
        return [hit for hit in found if hit.passage.id not in excluded][:k]

    def _search_within(self, query: np.ndarray, k: int, excluded: set[str], documents: set[str]) -> list[SearchHit]:
        """:meth:`search` over the passages of ``documents`` alone: their vectors scored directly (the flat index
        holds each vector as added), read in one batch, best first and, of equal scores, in the order added."""
        with self._lock:
            rows = np.asarray(sorted(self._ids[i] for doc in documents for i in self._documents.get(doc, ())
                                     if i not in excluded), dtype=np.int64)
            if not len(rows):
                return []
            scores = self._faiss.reconstruct_batch(rows) @ query
            best = np.lexsort((rows, -scores))[:k]
            return [SearchHit(self._passages[rows[i]], float(scores[i])) for i in best]

    # ------------------------------------------------------------------ persistence
    def save(self, directory: Path | None = None) -> Path:
        """Write a new generation atomically and switch the manifest to it."""
        with self._lock:
            return self._save(directory)

    def _save(self, directory: Path | None) -> Path:
        target = directory if directory is not None else self.directory
        if target is None:  # not Path(""): that is the working directory
            raise ValueError("no directory given to save the index to")
        directory = Path(target)
        directory.mkdir(parents=True, exist_ok=True)
        previous = _read_manifest(directory) if (directory / MANIFEST).is_file() else None
        generation = max(self._generation, previous["generation"] if previous else 0) + 1
        files = {"faiss": f"index-{generation:06d}.faiss", "passages": f"passages-{generation:06d}.jsonl"}

        with atomic_path(directory / files["faiss"]) as tmp:
            faiss.write_index(self._faiss, str(tmp))
        with atomic_path(directory / files["passages"]) as tmp:
            with tmp.open("w", encoding="utf-8") as fh:
                for passage in self._passages:
                    fh.write(json.dumps(passage.to_record(), ensure_ascii=False) + "\n")
        manifest = {
            "format_version": FORMAT_VERSION,
            "embedder": self.embedder,
            "dimension": self.dimension,
            "metric": "inner_product",
            "count": len(self._passages),
            "generation": generation,
            "files": files,
            "sha256": {key: sha256_file(directory / name) for key, name in files.items()},
            "updated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            **({"chunking": self.chunking.to_record()} if self.chunking is not None else {}),
            **({"sources": dict(sorted(self.sources.items()))} if self.sources else {}),
        }
        atomic_write_text(directory / MANIFEST, json.dumps(manifest, indent=2) + "\n")
        self._generation, self.directory = generation, directory
        self._revision = _revision(manifest)
        for stale in list(directory.glob("index-*.faiss")) + list(directory.glob("passages-*.jsonl")):
            if stale.name not in files.values():
                stale.unlink(missing_ok=True)
        return directory

    @classmethod
    def load(cls, directory: Path, *, embedder: str | None = None, dimension: int | None = None,
             rebuild: str | None = None) -> "PassageIndex":
        """Load and verify an index; ``embedder``/``dimension`` are what the caller will query with.
        ``rebuild`` says how the index is built again, for the errors (default: ``adaptive-rag ingest``)."""
        directory = Path(directory)
        manifest = _read_manifest(directory, rebuild)
        hint = rebuild or _REBUILD_HINT.format(dir=directory)
        if embedder is not None and manifest["embedder"] != embedder:
            raise IndexLoadError(
                f"index at {directory} was built with embedder {manifest['embedder']!r}, but "
                f"{embedder!r} is configured; configure that embedder, or rebuild the index "
                f"with the new one into an empty folder ({hint})"
            )
        if dimension is not None and manifest["dimension"] != dimension:
            raise IndexLoadError(
                f"index at {directory} holds {manifest['dimension']}-d vectors but the embedder "
                f"gives {dimension}-d ones; rebuild it ({hint})"
            )
        paths = {key: directory / name for key, name in manifest["files"].items()}
        for key, path in paths.items():
            if not path.is_file():
                raise IndexLoadError(f"index file {path} is missing; rebuild the index ({hint})")
            if sha256_file(path) != manifest["sha256"][key]:
                raise IndexLoadError(
                    f"index file {path} does not match its checksum (truncated or modified); "
                    f"rebuild the index ({hint})"
                )
        index = cls(manifest["embedder"], manifest["dimension"], directory)
        if "chunking" in manifest:  # an index saved before it was recorded has none
            try:
                index.chunking = ChunkingConfig.from_record(manifest["chunking"])
            except ValueError as exc:
                raise IndexLoadError(f"index manifest at {directory} has an unreadable chunking ({exc}); "
                                     f"rebuild the index ({hint})") from exc
        index.sources = _sources(manifest, directory, hint)
        try:
            index._faiss = faiss.read_index(str(paths["faiss"]))
            with paths["passages"].open(encoding="utf-8") as fh:
                passages = [Passage.from_record(json.loads(line)) for line in fh if line.strip()]
        except Exception as exc:
            raise IndexLoadError(f"index at {directory} could not be read ({exc}); rebuild it ({hint})") from exc
        counts = {"manifest": manifest["count"], "vectors": index._faiss.ntotal, "passages": len(passages)}
        if len(set(counts.values())) != 1 or index._faiss.d != manifest["dimension"]:
            raise IndexLoadError(f"index at {directory} is inconsistent {counts}; rebuild it ({hint})")
        index._hold(passages)
        index._generation = manifest["generation"]
        index._revision = _revision(manifest)
        return index

    @classmethod
    def load_or_create(cls, directory: Path, *, embedder: str, dimension: int) -> "PassageIndex":
        """Load the index in ``directory`` if it has one, else start an empty one there."""
        if (Path(directory) / MANIFEST).is_file():
            return cls.load(directory, embedder=embedder, dimension=dimension)
        return cls(embedder, dimension, directory)


def _sources(manifest: dict, directory: Path, hint: str | None) -> dict[str, int]:
    """The readers' versions a manifest records (:attr:`PassageIndex.sources`)."""
    recorded = manifest.get("sources", {})  # an index saved before they were recorded has none
    if not (isinstance(recorded, dict) and all(isinstance(v, int) for v in recorded.values())):
        raise IndexLoadError(f"index manifest at {directory} has unreadable sources ({recorded!r}); "
                             f"rebuild the index ({hint or _REBUILD_HINT.format(dir=directory)})")
    return dict(recorded)


def recorded_sources(directory: Path) -> dict[str, int]:
    """The readers' versions the index at ``directory`` records (:attr:`PassageIndex.sources`), read
    from its manifest alone: its vectors and passages are not loaded."""
    directory = Path(directory)
    return _sources(_read_manifest(directory), directory, None)


def _revision(manifest: dict) -> str:
    return f"{manifest['sha256']['faiss'][:16]}-{manifest['sha256']['passages'][:16]}"


def _read_manifest(directory: Path, hint: str | None = None) -> dict:
    path = directory / MANIFEST
    if not path.is_file():
        raise IndexLoadError(f"no index found at {directory}; {hint or _BUILD_HINT.format(dir=directory)}")
    hint = hint or _REBUILD_HINT.format(dir=directory)
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        required = {"format_version", "embedder", "dimension", "count", "generation", "files", "sha256"}
        missing = required - set(manifest)
    except (OSError, ValueError) as exc:
        raise IndexLoadError(f"index manifest {path} is unreadable ({exc}); rebuild the index ({hint})") from exc
    if missing:
        raise IndexLoadError(f"index manifest {path} lacks {sorted(missing)}; rebuild the index ({hint})")
    if manifest["format_version"] != FORMAT_VERSION:
        raise IndexLoadError(
            f"index at {directory} has format version {manifest['format_version']}, this version reads "
            f"{FORMAT_VERSION}; rebuild the index ({hint})"
        )
    return manifest


V = TypeVar("V")


class PerRevision(Generic[V]):
    """Values worked out from an index's contents (its titles, a document's words), each worked out once per
    revision of the index (:attr:`PassageIndex.revision`) and kept per index, not by it: an index no one holds any
    more is freed with them (so a value must not hold its index). Thread-safe; two threads may both work out a
    value that neither had."""

    def __init__(self) -> None:
        self._kept: weakref.WeakKeyDictionary[PassageIndex, tuple[str, dict[Hashable, V]]] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def get(self, index: PassageIndex, key: Hashable, work_out: Callable[[], V]) -> V:
        """The value ``work_out()`` gave for ``key`` at ``index``'s present revision, worked out now if it has none."""
        revision = index.revision
        with self._lock:
            known = self._kept.get(index)
            if known is not None and known[0] == revision and key in known[1]:
                return known[1][key]
        value = work_out()
        with self._lock:
            known = self._kept.get(index)
            if known is None or known[0] != revision:
                known = self._kept[index] = (revision, {})
            known[1][key] = value
        return value
