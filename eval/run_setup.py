"""The run-setup guard: a run folder remembers the generator and the trained routers that wrote its
records (``run.json``), and resuming it with another is refused rather than mixed in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eval.systems import System
from pipeline.context import RAGContext

RUN_SETUP = "run.json"
REQUIRED = ("model", "router_weights_sha256")
"""Setup keys every run records; others (the probe router's) only when a system uses them."""


class RunMismatchError(RuntimeError):
    """A run folder's records came from another generator or tier router than this invocation's."""


def run_setup(ctx: RAGContext, systems: list[System]) -> dict[str, Any]:
    """What decides the answers besides the questions: the generator, the knowledge base's reranker
    and the runtime that embeds the questions (a folder from before they were recorded is not
    checked for them; the runtime decides the non-generation time, not the vectors) and, when a
    system routes with it, the trained router's weights and the probe router's file."""
    routed = any(s.pipeline.policy == "adaptive" for s in systems)
    router = ctx.router.metadata.get("weights_sha256") if routed and ctx.router is not None else None
    setup = {"model": ctx.model_name, "router_weights_sha256": router, "reranker": ctx.reranker.name,
             "embedder_runtime": ctx.embedder.query_runtime}
    if any(s.pipeline.policy == "probe-router" for s in systems) and ctx.probe_router is not None:
        setup["probe_router_sha256"] = probe_router_digest(ctx.probe_router)
    return setup


def probe_router_digest(router) -> str:
    """sha256 of the probe router as saved (its rungs, threshold, models and metadata)."""
    import hashlib

    return hashlib.sha256(json.dumps(router.as_dict(), sort_keys=True).encode()).hexdigest()


def _recorded_setup(out: Path, routed: bool) -> dict[str, Any] | None:
    """The setup that wrote ``out``'s records: its run.json, else (a folder from before run.json) what
    its summary names; None for a new folder."""
    path = out / RUN_SETUP
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        pass
    except ValueError as exc:
        raise RunMismatchError(f"{path} is unreadable ({exc}); delete it only if the records in {out} "
                               "match this invocation's model and router") from exc
    try:
        meta = json.loads((out / "summary.json").read_text(encoding="utf-8"))["meta"]
        router = (meta.get("router") or {}).get("weights_sha256") if routed else None
        return {"model": meta["model"], "router_weights_sha256": router}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def check_run_setup(out: Path, setup: dict[str, Any]) -> None:
    """Refuse to resume a run folder whose records another generator or router wrote (mixing them
    would average two systems into one row); record the setup of a new folder."""
    from components.storage import atomic_write_text

    earlier = _recorded_setup(out, routed=setup["router_weights_sha256"] is not None)
    # a router the earlier invocations did not use (a system added to the run) is recorded, not a mismatch
    core = {k: v for k, v in setup.items() if earlier is None or k in REQUIRED or k in earlier}
    if earlier is not None and any(earlier.get(k) != v for k, v in core.items()):
        changed = ", ".join(f"{k} {earlier.get(k)!r} -> {v!r}" for k, v in core.items() if earlier.get(k) != v)
        raise RunMismatchError(f"{out} holds answers from another setup ({changed}); "
                               "pass a new --out to start a fresh run")
    merged = {**(earlier or {}), **setup}
    if not (out / RUN_SETUP).exists() or merged != earlier:
        atomic_write_text(out / RUN_SETUP, json.dumps(merged, indent=2) + "\n")


def previous_peak_rss(out: Path) -> float:
    """The peak RSS an earlier invocation on this run folder recorded (0 if none), so that a resumed
    run reports the peak over all of them."""
    try:
        return float(json.loads((out / "summary.json").read_text(encoding="utf-8"))["meta"]["peak_rss_mb"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0
