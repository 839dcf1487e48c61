"""Routing functions for the conditional edges. Pure functions of the state, so each decision is
testable without models."""

from __future__ import annotations

from typing import Literal

from graph.state import State


def _budget(state: State) -> dict:
    return state["settings"]["budget"]


def after_grade(state: State) -> Literal["retrieve", "rerank", "compress", "generate"]:
    """Low confidence on a tier that allows correction goes back to retrieve, at most
    ``max_corrections`` times; otherwise on to rerank, compress or generate as the budget says."""
    settings = state["settings"]
    if (
        state.get("low_confidence")
        and _budget(state)["correct"]
        and state.get("corrections", 0) < settings["max_corrections"]
    ):
        return "retrieve"
    if _budget(state)["rerank"]:
        return "rerank"
    return after_rerank(state)


def after_rerank(state: State) -> Literal["compress", "generate"]:
    return "compress" if _budget(state)["context_chars"] is not None else "generate"
