"""The adaptive RAG graph. ``from graph import graph`` gives the compiled graph:

    from graph import graph, RAGContext
    ctx = RAGContext.load()                       # models and index, once per process
    out = graph.invoke({"question": "..."}, context=ctx)

Invoked without a context it uses the default resources (``graph.context.default_context``).

The builder is imported on first access of ``graph`` or ``build_graph``: the nodes
import ``graph.state`` and ``graph.context``, which must not pull the builder (and so the nodes)
in while they load.
"""

from graph.configuration import (
    BASELINE,
    DEFAULT_TIERS,
    POLICIES,
    Budget,
    ConfigurationError,
    PipelineConfig,
    QuestionError,
)
from graph.context import RAGContext, ResourceConfig, default_context

def __getattr__(name: str):
    if name in ("graph", "build_graph"):
        import importlib

        return getattr(importlib.import_module("graph.builder"), name)
    raise AttributeError(f"module 'graph' has no attribute {name!r}")


__all__ = [
    "graph", "build_graph", "RAGContext", "ResourceConfig", "default_context",
    "PipelineConfig", "Budget", "DEFAULT_TIERS", "BASELINE", "POLICIES", "ConfigurationError", "QuestionError",
]
