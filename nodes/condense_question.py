"""condense-question: rewrite a follow-up ("when did he die?") into a standalone question from the
conversation, before retrieval. The edge from start_turn only comes here when the thread has
earlier turns and the question refers back to them."""

from __future__ import annotations

import re
from typing import Any

from langgraph.runtime import Runtime

from components.generator import max_tokens_kwargs
from graph.context import RAGContext
from graph.state import State
from nodes.base import context_of, timed
from prompts import condense_messages

HISTORY_TURNS = 3
_MAX_TOKENS = 48


def _clean(text: str, fallback: str) -> str:
    line = next((ln.strip() for ln in text.strip().splitlines() if ln.strip()), "")
    line = re.sub(r"^(standalone question|question|rewritten question)\s*:\s*", "", line, flags=re.I).strip(' "')
    return line if 3 <= len(line) <= 4 * len(fallback) + 200 else fallback


@timed("condense_question")
def condense_question(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    question = state["question"]
    history = (state.get("turns") or [])[-HISTORY_TURNS:]
    reply = ctx.generator.invoke(condense_messages(history, question), **max_tokens_kwargs(ctx.generator, _MAX_TOKENS))
    standalone = _clean(reply.text, question)
    return {
        "standalone_question": standalone,
        "trace": {"rewrite": {"original": question, "standalone": standalone, "history_turns": len(history)}},
    }
