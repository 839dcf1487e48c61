"""Retrieval corpora for the benchmarks, indexed once per dataset split and embedder, then cached.

* SQuAD 2.0: every paragraph of the split, pooled into one sentence-level corpus.
* HotpotQA: all ten paragraphs of every item of the split, pooled (each title once).
* NQ-open and TriviaQA have no contexts: they run against the default Wikipedia index, and
  :func:`answer_coverage` reports the share of questions whose answer string appears in it at all.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

from components import sources
from components.embedder import Embedder
from components.index import MANIFEST, PassageIndex
from components.ingest import ingest
from components.model_files import cache_dir
from components.passages import CHUNKING_VERSION
from components.storage import sha256_file
from eval.datasets import DatasetError, Example, split_file
from pipeline.context import default_index_dir

# The corpus of a split is built from these contexts; the official HotpotQA items are the first
# 100 of the IRCoT dev file, so they share its corpus.
_CONTEXTS = {"squad": sources.squad_contexts, "hotpotqa": sources.hotpotqa_contexts}


def _corpus_split(dataset: str) -> str:
    return "hotpotqa" if dataset == "hotpotqa-official" else dataset


def benchmark_reranker(dataset: str) -> str:
    """The reranker fit for the knowledge base a dataset is evaluated against: the hybrid (fit on SQuAD
    2.0 and HotpotQA's pooled contexts) for those, the retrieval order for the Wikipedia summaries (fit
    on NQ-open and TriviaQA; ``python -m training.rerank weights [--knowledge-base wikipedia]``)."""
    return "hybrid" if _corpus_split(dataset) in _CONTEXTS else "retrieval-order"


def benchmark_index_dir(dataset: str, split: str, embedder: Embedder, wiki_index: Path | None = None,
                        root: str | None = None) -> Path:
    """The folder of the index a dataset split is evaluated against: its cached pooled corpus, or
    the Wikipedia knowledge base for the open-domain sets.

    A cached corpus is named by the content of the split's file (a sha256 prefix), not only by its
    name, so another data folder whose split has the same name never reuses this corpus, and by the
    chunking's version, so a corpus cut the old way is built again.
    """
    name = _corpus_split(dataset)
    if name not in _CONTEXTS:
        return Path(wiki_index or default_index_dir())
    slug = re.sub(r"[^A-Za-z0-9]+", "-", embedder.name).strip("-").lower()
    source = split_file(name, split, root)
    if not source.is_file():
        raise DatasetError(f"{source} not found; the benchmark data folder is set by --data-dir or $ADAPTIVE_RAG_DATA")
    return cache_dir() / "indexes" / f"bench-{name}-{split}-{slug}-{_content_key(source)}-c{CHUNKING_VERSION}"


def _content_key(path: Path) -> str:
    """sha256 prefix of a file, remembered beside the file's size and mtime for the process."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _CONTENT_KEYS:
        _CONTENT_KEYS[key] = sha256_file(path)[:12]
    return _CONTENT_KEYS[key]


_CONTENT_KEYS: dict[tuple[str, int, int], str] = {}


def benchmark_index(dataset: str, split: str, embedder: Embedder, root: str | None = None,
                    wiki_index: Path | None = None) -> PassageIndex:
    """The index a dataset split is evaluated against, built on first use."""
    name = _corpus_split(dataset)
    directory = benchmark_index_dir(dataset, split, embedder, wiki_index, root)
    if name not in _CONTEXTS or (directory / MANIFEST).is_file():
        return PassageIndex.load(directory, embedder=embedder.name, dimension=embedder.dimension)
    index = PassageIndex(embedder.name, embedder.dimension, directory)
    ingest(_CONTEXTS[name](split_file(name, split, root)), index, embedder)
    return index


def answer_coverage(examples: Iterable[Example], index: PassageIndex) -> float:
    """Share of questions with at least one gold answer string (case-insensitive) in the corpus."""
    text = "\n".join(p.text.lower() for p in index)
    examples = list(examples)
    hits = sum(1 for e in examples if any(a.strip() and a.lower() in text for a in e.answers))
    return hits / len(examples) if examples else float("nan")
