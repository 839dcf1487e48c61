"""The adaptive RAG graph. ``from graph import graph`` gives the compiled graph:

    from graph import graph, RAGContext
    ctx = RAGContext.load()                       # models and index, once per process
    out = graph.invoke({"question": "..."}, context=ctx)

Invoked without a context it uses the default resources (``pipeline.context.default_context``).
The nodes import only from :mod:`pipeline` (state, configuration, context) and below, never from
here, so this package can build and export the graph without an import circle.
"""

from graph.builder import build_graph, graph
from pipeline.configuration import (
    BASELINE,
    CONFIDENCE_SIGNALS,
    DEFAULT_TIERS,
    POLICIES,
    THESIS_TIERS,
    Budget,
    ConfigurationError,
    PipelineConfig,
    QuestionError,
)
from pipeline.context import RAGContext, ResourceConfig, default_context

__all__ = [
    "graph", "build_graph", "RAGContext", "ResourceConfig", "default_context",
    "PipelineConfig", "Budget", "DEFAULT_TIERS", "THESIS_TIERS", "BASELINE", "POLICIES", "CONFIDENCE_SIGNALS",
    "ConfigurationError", "QuestionError",
]
