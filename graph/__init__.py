"""The adaptive RAG graph. ``from graph import graph`` gives the compiled graph:

    from graph import graph, RAGContext
    ctx = RAGContext.load()                       # models and index, once per process
    out = graph.invoke({"question": "..."}, context=ctx)

Invoked without a context it uses the default resources (``graph.context.default_context``).
"""

from graph.builder import build_graph, builder, graph
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

__all__ = [
    "graph", "builder", "build_graph", "RAGContext", "ResourceConfig", "default_context",
    "PipelineConfig", "Budget", "DEFAULT_TIERS", "BASELINE", "POLICIES", "ConfigurationError", "QuestionError",
]
