"""Questions answered by two or more configurations of the graph, side by side, from one loaded model.

The small comparisons (:mod:`eval.descriptions`, :mod:`eval.lifespans`, :mod:`eval.named_documents`) ask
each question of each way in turn, the ways' order alternating from one question to the next, so that
neither way always answers from the state the other left.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence


def alternating(ways: Mapping[str, Any], questions: Sequence[str]) -> Iterator[tuple[str, str, dict[str, Any], float]]:
    """Each of ``questions`` answered with each way's context (``ways``: name → context), the ways in
    their order for the first question, reversed for the second, and so on: (question, way, the graph's
    output, milliseconds)."""
    from graph import graph

    names = list(ways)
    for i, question in enumerate(questions):
        for way in (names if i % 2 == 0 else names[::-1]):
            start = time.perf_counter()
            out = graph.invoke({"question": question}, context=ways[way])
            yield question, way, out, (time.perf_counter() - start) * 1000


def add_resource_options(parser: argparse.ArgumentParser) -> None:
    """``--index`` and ``--model``, as :func:`loaded` takes them."""
    parser.add_argument("--index", type=Path, help="the index (default: the Wikipedia summaries' in the cache folder)")
    parser.add_argument("--model", help="the generator (default: the default model)")


def loaded(index: Path | None, model: str | None) -> Any:
    """The graph's context on ``index`` and ``model`` (each ``None``: the default), the default pipeline, the
    generator warm."""
    from pipeline.configuration import PipelineConfig
    from pipeline.context import RAGContext, ResourceConfig

    resources = {k: v for k, v in {"index_dir": index, "model": model}.items() if v is not None}
    ctx = RAGContext.load(ResourceConfig(**resources), PipelineConfig())
    ctx.generator.warm_up()
    return ctx
