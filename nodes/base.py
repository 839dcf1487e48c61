"""What every node shares: the run context and per-node timing in the trace."""

from __future__ import annotations

import functools
import time
from typing import Any, Callable

from langgraph.runtime import Runtime

from pipeline.context import RAGContext, default_context

NodeFn = Callable[..., dict[str, Any]]


def context_of(runtime: Runtime[RAGContext] | None) -> RAGContext:
    """The context passed to this run, or the process-wide default one."""
    ctx = getattr(runtime, "context", None)
    return ctx if ctx is not None else default_context()


def timed(name: str) -> Callable[[NodeFn], NodeFn]:
    """Add the node's wall time to ``trace.timings_ms[name]`` (summed over repeated runs)."""

    def decorate(fn: NodeFn) -> NodeFn:
        @functools.wraps(fn)
        def wrapper(state: Any, runtime: Runtime[RAGContext]) -> dict[str, Any]:
            start = time.perf_counter()
            update = fn(state, runtime)
            elapsed = (time.perf_counter() - start) * 1000.0
            trace = dict(update.get("trace", {}))
            trace["timings_ms"] = {name: elapsed}
            return {**update, "trace": trace}

        return wrapper

    return decorate
