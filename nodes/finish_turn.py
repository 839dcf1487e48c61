"""finish-turn: what the question cost in energy, and the answer into the query cache.

The last node of every path. The energy is measured from the mark ``start_turn`` took
(:mod:`components.energy`: RAPL counters where readable, else CPU time times a documented power
figure, labelled as such). A fresh answer is stored in the query cache, when one is configured,
under the scope ``lookup_cache`` computed; an answer served from the cache is not stored again.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from nodes.base import context_of, timed
from nodes.lookup_cache import NOT_CACHED
from pipeline.context import RAGContext
from pipeline.state import State


@timed("finish_turn")
def finish_turn(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    scope = state.get("cache_scope")
    if ctx.query_cache is not None and scope and not state.get("cached") and state.get("query_embedding"):
        trace = {key: value for key, value in (state.get("trace") or {}).items() if key not in NOT_CACHED}
        ctx.query_cache.store(state.get("standalone_question") or state["question"],
                              np.asarray(state["query_embedding"], dtype=np.float32), scope,
                              state.get("answer", ""), list(state.get("citations") or []), trace)
    mark = state.get("energy_mark")
    done: dict[str, Any] = {"fresh": False} if state.get("fresh") else {}  # it held for this question only
    return {**done, "trace": {"energy": ctx.energy.since(mark)}} if mark else done
