"""What every run over a dataset sample shares (the benchmark, the RAGAS suite, oracle labelling):
its command-line options and its loaded context over the split's benchmark index; and what the
measurement commands share: one line and an exit status for the errors a user can mend
(:func:`reports_errors`), and argparse types for counts."""

from __future__ import annotations

import argparse
import functools
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable

from components.embedder import QUERY_RUNTIMES
from components.index import PassageIndex
from eval.datasets import DATASETS, DatasetError
from eval.run_setup import RunMismatchError
from pipeline.arguments import whole_number
from pipeline.context import RAGContext, ResourceConfig
from pipeline.errors import EXIT_RESOURCE, EXIT_USAGE, INPUT_ERRORS, RESOURCE_ERRORS

USAGE_ERRORS = (*INPUT_ERRORS, DatasetError, RunMismatchError)
"""What was asked cannot be run: the pipeline's own (an unknown system or setting, say), an unknown
dataset split, a missing data folder, a run folder recorded with another setup."""


def reports_errors(main: Callable[..., int]) -> Callable[..., int]:
    """A run command's ``main`` that says ``error: ...`` (and exits 2 or 3) on the errors a user can
    mend, instead of a traceback; any other error is a bug, and keeps its traceback."""
    @functools.wraps(main)
    def wrapper(*args: Any, **kwargs: Any) -> int:
        try:
            return main(*args, **kwargs)
        except USAGE_ERRORS as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        except RESOURCE_ERRORS as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_RESOURCE
    return wrapper


count, positive = whole_number(0), whole_number(1)
"""Argparse types: a whole number >= 0, and >= 1."""


def add_run_arguments(parser: argparse.ArgumentParser, *, limit: int, limit_help: str) -> None:
    """The options every run over a dataset sample shares (benchmark, RAGAS suite)."""
    parser.add_argument("--dataset", required=True, choices=DATASETS)
    parser.add_argument("--split", default="dev")
    parser.add_argument("--limit", type=count, default=limit, help=limit_help)
    parser.add_argument("--systems", default="baseline,adaptive")
    parser.add_argument("--adaptive-tier", default=None, choices=("easy", "medium", "hard"),
                        help="run the adaptive systems at this fixed tier instead of the trained router")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--model", default=None, help="generator preset (default: the default model)")
    parser.add_argument("--data-dir", default=None, help="benchmark data folder (default: $ADAPTIVE_RAG_DATA or ../shared/data)")
    parser.add_argument("--embedder-runtime", default="auto", choices=QUERY_RUNTIMES,
                        help="what embeds a question (default: auto, ONNX Runtime where it agrees with torch)")


def load_contexts(splits: Iterable[tuple[str, str]], data_dir: str | None = None,
                  model: str | None = None, **resource_options: Any) -> dict[tuple[str, str], RAGContext]:
    """One loaded context per (dataset, split), each over its benchmark index (built and cached on
    first use) with the reranker fit for that index (:func:`~eval.corpora.benchmark_reranker`). The
    models load once; the contexts differ only in their index and reranker. ``resource_options`` are
    further :class:`ResourceConfig` fields (an ``answerability`` model path, say)."""
    from components.embedder import Embedder
    from components.reranker import load_reranker
    from eval.corpora import benchmark_index, benchmark_index_dir, benchmark_reranker

    embedder = Embedder(query_runtime=resource_options.get("embedder_runtime", "auto"))
    embedder.warm_up()
    by_dir: dict[Path, PassageIndex] = {}  # splits that share a corpus (NQ, TriviaQA: Wikipedia) share one copy
    indexes = {}
    for split in dict.fromkeys(splits):
        directory = benchmark_index_dir(*split, embedder, root=data_dir)
        if directory not in by_dir:
            by_dir[directory] = benchmark_index(*split, embedder, data_dir)
        indexes[split] = by_dir[directory]
    if not indexes:
        raise ValueError("no dataset split to load")
    first = next(iter(indexes.values()))
    resources = ResourceConfig(index_dir=first.directory, embedder=embedder.name, **({"model": model} if model else {}),
                               **resource_options)
    base = RAGContext.load(resources, embedder=embedder, index=first)
    contexts = {}
    for split, index in indexes.items():
        name = benchmark_reranker(split[0])
        contexts[split] = replace(base, index=index, reranker=load_reranker(name),
                                  resources=replace(base.resources, index_dir=index.directory, reranker=name))
    return contexts


def load_run_context(args: argparse.Namespace) -> RAGContext:
    """The loaded models over the run's dataset split (``--dataset``, ``--split``, ``--data-dir``, ``--model``)."""
    split = (args.dataset, args.split)
    return load_contexts([split], args.data_dir, args.model, embedder_runtime=args.embedder_runtime)[split]
