"""The query cache: repeated and near-repeated questions answered without retrieval or generation.

Two matches, tried in order:

* **exact**: the same question once normalised (Unicode NFKC, case-folded, punctuation and
  repeated spaces dropped): "Who wrote Hamlet?" and "who wrote hamlet" are one question;
* **semantic**: the cosine of the two questions' embeddings (the retrieval embedder's, which the
  graph computes anyway) reaches ``similarity``, and the two ask the same thing as far as their
  words tell (:func:`asks_the_same`: the same question word, numbers and negations, and not one
  content word swapped). The embedding barely sees those: "Where was Einstein born?" is at 0.93
  from "When was Einstein born?", "…not originally concerned…" at 0.99 from "…originally
  concerned…". The default threshold was fit on a train stream of paraphrases and near-misses
  (``python -m eval.cache_stream``; docs/cache/README.md).

Every entry is filed under a *scope*: the generator, the effective pipeline configuration, the
index's revision (:attr:`components.index.PassageIndex.revision`, which changes whenever a document is
added or removed) and the reranker. An answer is only served under the scope it was made in, so a
changed knowledge base, another configuration or another reranker never sees it.

Entries live in SQLite (a file, or ``:memory:``), as JSON and float32 bytes (never pickle); the
oldest beyond ``max_entries`` are dropped. Thread-safe.
"""

from __future__ import annotations

import functools
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

from components.reranker import content_words

DEFAULT_SIMILARITY = 0.8881
"""The cosine at or above which a different question is served a cached answer: fitted on a SQuAD 2.0
train stream (``python -m eval.cache_stream fit``, docs/cache/fit.json) as just above the closest
near-miss (another question about the same paragraph), where it catches 70% of the paraphrases."""

_PUNCT = re.compile(r"[^\w\s]")
_SPACES = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+")
NEGATIONS = frozenset("not no never none nobody nothing neither nor without cannot".split())
"""Words that turn a question into its opposite; "n't" is read as "not"."""
_TIMES = frozenset("year years month date day century decade era time period".split())
"""After "what"/"which", nouns that make the question a *when* ("In what year…?" asks "When…?")."""
NUMBER_WORDS = {
    **{w: str(n) for n, w in enumerate("first second third fourth fifth sixth seventh eighth ninth tenth".split(), 1)},
    **{w: str(n) for n, w in enumerate("two three four five six seven eight nine ten eleven twelve".split(), 2)},
}
"""Words that are numbers to the word check: "the second highest" asks another thing than "the
highest", and as "the 2nd highest" the same. "One" is left out: "which one of" counts nothing."""
_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")
_AUXILIARIES = frozenset("do does did is are was were can could would should will has have had may might must".split())

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


def _words(question: str) -> list[str]:
    text = unicodedata.normalize("NFKC", question).casefold().replace("n't", " not").replace("cannot", "can not")
    return _WORD.findall(text)


def question_kinds(words: list[str]) -> set[str]:
    """What a question asks for, from its question words: who, when (also "in what year"), where, why,
    "how many", "how much", "how tall" and the like, or plain "how"; "what"/"which" alone say nothing."""
    kinds = set()
    for i, word in enumerate(words):
        after = words[i + 1] if i + 1 < len(words) else ""
        if word in ("who", "whom", "whose"):
            kinds.add("who")
        elif word in ("when", "where", "why"):
            kinds.add(word)
        elif word in ("what", "which") and after in _TIMES:
            kinds.add("when")
        elif word == "how":
            kinds.add("how" if not after or after in _AUXILIARIES else f"how {after}")
    return kinds


def as_number(word: str) -> str | None:
    """The number a (case-folded) word is, as digits: "second", "2nd" and "2" are "2"; a word
    holding a digit ("1940s", "b52") is itself; None for any other word."""
    if word in NUMBER_WORDS:
        return NUMBER_WORDS[word]
    ordinal = _ORDINAL.fullmatch(word)
    if ordinal:
        return ordinal.group(1)
    return word if any(c.isdigit() for c in word) else None


STEM = 5
"""Content words are compared by their first letters, so "refer" and "referred" are one word."""


def one_word_swapped(a: str, b: str) -> bool:
    """Whether the two questions' content words are the same but for one, in its place: "When was
    Isaac Newton born?" and "When did Isaac Newton die?". A chat asks about the same thing this way
    ("…built?", then "…destroyed?"); a paraphrase rewords more, or adds a word."""
    ca = [as_number(w) or w[:STEM] for w in content_words(a)]
    cb = [as_number(w) or w[:STEM] for w in content_words(b)]
    return len(ca) == len(cb) and sum(x != y for x, y in zip(ca, cb, strict=True)) == 1


def asks_the_same(a: str, b: str) -> bool:
    """Whether two similar questions can share an answer as far as their words tell: the same kind of
    question (:func:`question_kinds`), the same numbers (:func:`as_number`: "second" is "2"), as
    many negations, and not one content word swapped (:func:`one_word_swapped`). A paraphrase keeps
    these; a near-miss often changes one ("When" → "Where", "Apollo 11" → "Apollo 12", "…not…",
    "born" → "die", "highest" → "second highest")."""
    wa, wb = _words(a), _words(b)

    def numbers(words: list[str]) -> set[str]:
        return {n for n in map(as_number, words) if n is not None}

    def negations(words: list[str]) -> int:
        return sum(w in NEGATIONS for w in words)

    return (question_kinds(wa) == question_kinds(wb) and numbers(wa) == numbers(wb)
            and negations(wa) == negations(wb) and not one_word_swapped(a, b))


ANSWERING_PACKAGES = ("components", "graph", "nodes", "pipeline", "prompts", "router")
"""The packages whose code makes an answer (retrieval, the prompts, the model's call, the check and its rules)."""
CODE_ROOT = Path(__file__).resolve().parent.parent
"""Where :data:`ANSWERING_PACKAGES` are: the checkout, or the installed packages' folder."""


@functools.cache
def code_digest(root: Path = CODE_ROOT) -> str:
    """A digest of the code that makes an answer: every module of :data:`ANSWERING_PACKAGES` under ``root``, by its
    path and its bytes. Part of an answer's scope (:func:`nodes.lookup_cache.answer_scope`), so an answer cached by
    other code is not served. Found trying the chat (session 83): after an upgrade the persistent cache served
    answers made before it, an unsupported answer without the passage that holds it, and it would serve an answer
    a rule of the check now withholds."""
    digest = hashlib.sha256()
    for path in sorted(p for package in ANSWERING_PACKAGES for p in (root / package).rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:32]


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

    def lookup(self, question: str, vector: np.ndarray, scope: str, *, semantic: bool = True) -> CacheHit | None:
        """The cached answer for ``question`` under ``scope``: an exact match first, else (unless
        ``semantic`` is off) the most similar cached question at or above the threshold that asks the
        same (:func:`asks_the_same`); ``None`` when there is neither."""
        with self._lock:
            row = self._db.execute(
                "SELECT question, answer, citations, trace, created FROM entries WHERE scope = ? AND normalised = ? "
                "ORDER BY id DESC LIMIT 1", (scope, normalise(question))).fetchone()
            if row is not None:
                return self._hit(row, "exact", 1.0)
            if not semantic:
                return None
            ids, matrix = self._scope_vectors(scope)
            if not ids:
                return None
            query = _unit(vector)
            if matrix.shape[1] != query.shape[0]:
                return None
            sims = matrix @ query
            above = np.flatnonzero(sims >= self.similarity)
            for best in above[np.argsort(-sims[above], kind="stable")]:  # the most similar first
                row = self._db.execute("SELECT question, answer, citations, trace, created FROM entries WHERE id = ?",
                                       (ids[best],)).fetchone()
                if row is not None and asks_the_same(question, row[0]):
                    return self._hit(row, "semantic", float(sims[best]))
            return None

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
