"""The query cache: repeated and near-repeated questions answered without retrieval or generation.

Two matches, tried in order:

* **exact**: the same question once normalised (Unicode NFKC, case-folded, punctuation and
  repeated spaces dropped): "Who wrote Hamlet?" and "who wrote hamlet" are one question;
* **semantic**: the cosine of the two questions' embeddings (the retrieval embedder's, which the
  graph computes anyway) reaches ``similarity``. The default was fit on a train stream of
  paraphrases and near-misses (``python -m eval.cache_stream``; docs/policies/README.md).

Every entry is filed under a *scope*: the generator, the effective pipeline configuration and the
index's revision (:attr:`components.index.PassageIndex.revision`, which changes whenever a document is
added or removed). An answer is only served under the scope it was made in, so a changed
knowledge base or another configuration never sees it.

Entries live in SQLite (a file, or ``:memory:``), as JSON and float32 bytes (never pickle); the
oldest beyond ``max_entries`` are dropped. Thread-safe.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import threading
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

DEFAULT_SIMILARITY = 0.8881
"""The cosine at or above which a different question is served a cached answer: fitted on a SQuAD 2.0
train stream (``python -m eval.cache_stream fit``, docs/cache/fit.json) as just above the closest
near-miss (another question about the same paragraph), where it catches 70% of the paraphrases."""

_PUNCT = re.compile(r"[^\w\s]")
_SPACES = re.compile(r"\s+")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    scope TEXT NOT NULL,
    normalised TEXT NOT NULL,
    question TEXT NOT NULL,
    vector BLOB NOT NULL,
    answer TEXT NOT NULL,
    citations TEXT NOT NULL,
    trace TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_scope ON entries (scope, normalised);
"""


def normalise(question: str) -> str:
    """The question as the exact match compares it."""
    text = unicodedata.normalize("NFKC", question).casefold()
    return _SPACES.sub(" ", _PUNCT.sub(" ", text)).strip()


def scope_key(*parts: Any) -> str:
    """A short stable key for what an answer depends on (model, configuration, index revision)."""
    return hashlib.sha256(json.dumps([repr(p) for p in parts]).encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class CacheHit:
    match: str  # "exact" or "semantic"
    similarity: float
    question: str  # the question the answer was given to
    answer: str
    citations: list[dict[str, Any]]
    trace: dict[str, Any]
    age_s: float


class QueryCacheError(RuntimeError):
    """The cache's store cannot be opened or read."""


class QueryCache:
    def __init__(self, path: str | Path = ":memory:", *, similarity: float = DEFAULT_SIMILARITY,
                 max_entries: int = 10_000):
        if not 0.0 < similarity <= 1.0:
            raise ValueError(f"similarity is a cosine in (0, 1], got {similarity}")
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries}")
        self.path = str(path)
        self.similarity = similarity
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._vectors: dict[str, tuple[list[int], np.ndarray]] = {}  # scope -> (row ids, unit vectors)
        try:
            if self.path != ":memory:":
                Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False)
            self._db.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise QueryCacheError(f"query cache {self.path} cannot be opened: {exc}") from exc

    def warm_up(self) -> None:
        """Nothing to load: scopes are read from the store on first use."""

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0])

    def _scope_vectors(self, scope: str) -> tuple[list[int], np.ndarray]:
        if scope not in self._vectors:
            rows = self._db.execute("SELECT id, vector FROM entries WHERE scope = ? ORDER BY id", (scope,)).fetchall()
            ids = [int(r[0]) for r in rows]
            matrix = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows]) if rows else np.zeros((0, 0), np.float32)
            self._vectors[scope] = (ids, matrix)
        return self._vectors[scope]

    def _hit(self, row: tuple, match: str, similarity: float) -> CacheHit:
        question, answer, citations, trace, created = row
        return CacheHit(match, similarity, question, answer, json.loads(citations), json.loads(trace),
                        max(time.time() - created, 0.0))

    def lookup(self, question: str, vector: np.ndarray, scope: str) -> CacheHit | None:
        """The cached answer for ``question`` under ``scope``: an exact match first, else the most
        similar cached question at or above the threshold; ``None`` when there is neither."""
        with self._lock:
            row = self._db.execute(
                "SELECT question, answer, citations, trace, created FROM entries WHERE scope = ? AND normalised = ? "
                "ORDER BY id DESC LIMIT 1", (scope, normalise(question))).fetchone()
            if row is not None:
                return self._hit(row, "exact", 1.0)
            ids, matrix = self._scope_vectors(scope)
            if not ids:
                return None
            query = _unit(vector)
            if matrix.shape[1] != query.shape[0]:
                return None
            sims = matrix @ query
            best = int(np.argmax(sims))
            if float(sims[best]) < self.similarity:
                return None
            row = self._db.execute("SELECT question, answer, citations, trace, created FROM entries WHERE id = ?",
                                   (ids[best],)).fetchone()
            return self._hit(row, "semantic", float(sims[best])) if row is not None else None

    def store(self, question: str, vector: np.ndarray, scope: str, answer: str,
              citations: list[Mapping[str, Any]], trace: Mapping[str, Any]) -> None:
        unit = _unit(vector)
        with self._lock:
            cursor = self._db.execute(
                "INSERT INTO entries (scope, normalised, question, vector, answer, citations, trace, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (scope, normalise(question), question, unit.tobytes(), answer,
                 json.dumps(list(citations), ensure_ascii=False, default=str),
                 json.dumps(dict(trace), ensure_ascii=False, default=str), time.time()))
            if scope in self._vectors and cursor.lastrowid is not None:
                ids, matrix = self._vectors[scope]
                matrix = unit[None, :] if not ids else np.vstack([matrix, unit[None, :]])
                self._vectors[scope] = ([*ids, int(cursor.lastrowid)], matrix)
            over = int(self._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]) - self.max_entries
            if over > 0:
                self._db.execute("DELETE FROM entries WHERE id IN (SELECT id FROM entries ORDER BY id LIMIT ?)", (over,))
                self._vectors.clear()
            self._db.commit()

    def clear(self) -> None:
        with self._lock:
            self._db.execute("DELETE FROM entries")
            self._db.commit()
            self._vectors.clear()

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _unit(vector: np.ndarray) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v
