"""The application service behind the Gradio chat and the HTTP API.

One instance per process: it loads the embedder, index, reranker and default generator once and
shares them; other generator presets load on first use and stay loaded. Conversations live in a
LangGraph checkpointer keyed by session id, so sessions never see each other's history.
Generation is serialised per model by the model itself (llama.cpp contexts are not thread-safe);
concurrent requests wait their turn, and :meth:`RAGService.status` tells how many are waiting.
"""

from __future__ import annotations

import hashlib
import shutil
from collections import OrderedDict
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.memory import InMemorySaver

from components.generator import load_chat_model
from components.ingest import IngestReport, ingest
from components.model_files import PRESETS, cache_dir
from components.sources import Skipped, read_file
from graph import build_graph
from graph.configuration import ConfigurationError, PipelineConfig, validate_question
from graph.context import RAGContext, ResourceConfig


def public_result(result: dict[str, Any], wall_ms: float) -> dict[str, Any]:
    """The answer as the API returns it: tier, answer, citations, timing and tokens (and the trace)."""
    trace = result.get("trace", {})
    timings = {node: round(ms, 1) for node, ms in trace.get("timings_ms", {}).items()}
    return {
        "tier": trace.get("tier"),
        "router": trace.get("router"),
        "answer": result.get("answer", ""),
        "citations": [
            {
                "n": c["n"],
                "title": c["title"],
                "text": c["text"],
                "score": round(float(c["score"]), 4),
                "source": c["metadata"].get("url") or c["metadata"].get("path") or c["passage_id"],
                "passage_id": c["passage_id"],
            }
            for c in result.get("citations", [])
        ],
        "timing_ms": {"total": round(wall_ms, 1), **timings},
        "tokens": {"prompt": trace.get("prompt_tokens"), "output": trace.get("output_tokens")},
        "corrected": bool(trace.get("corrected")),
        "rewritten_question": (trace.get("rewrite") or {}).get("standalone"),
        "trace": trace,
    }


class RAGService:
    def __init__(self, resources: ResourceConfig | None = None, pipeline: PipelineConfig | None = None,
                 *, max_sessions: int = 1000):
        if max_sessions < 1:
            raise ConfigurationError(f"max_sessions must be >= 1, got {max_sessions}")
        self.resources = resources or ResourceConfig()
        self.pipeline = pipeline or PipelineConfig()
        self.graph = build_graph().compile(checkpointer=InMemorySaver(), name="adaptive-rag-chat")
        self.stateless_graph = build_graph().compile(name="adaptive-rag")
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, None] = OrderedDict()
        self._context: RAGContext | None = None
        self._generators: dict[str, BaseChatModel] = {}
        self._load_lock = threading.Lock()
        self._ingest_lock = threading.Lock()
        self._count_lock = threading.Lock()
        self._in_flight = 0
        self.answered = 0

    @classmethod
    def from_context(cls, ctx: RAGContext, model: str, **kwargs: Any) -> "RAGService":
        """A service over an already loaded context whose generator is the preset ``model``."""
        resources = ctx.resources or ResourceConfig(index_dir=ctx.index.directory, model=model)
        service = cls(resources, ctx.pipeline, **kwargs)
        service._context = ctx
        service._generators[model] = ctx.generator
        return service

    # ------------------------------------------------------------------ resources
    def warm_up(self) -> RAGContext:
        with self._load_lock:
            if self._context is None:
                self._context = RAGContext.load(self.resources, self.pipeline)
                self._generators[self.resources.model] = self._context.generator
            return self._context

    def generator(self, model: str | None) -> BaseChatModel:
        ctx = self.warm_up()
        name = model or self.resources.model
        if name not in self._generators:
            if name not in PRESETS:
                raise ConfigurationError(f"unknown model preset {name!r}; valid presets: {', '.join(PRESETS)}")
            with self._load_lock:
                if name not in self._generators:
                    loaded = load_chat_model(name, n_threads=self.resources.n_threads, n_ctx=self.resources.n_ctx)
                    loaded.warm_up()
                    self._generators[name] = loaded
        return self._generators.get(name, ctx.generator)

    def _context_for(self, model: str | None) -> RAGContext:
        ctx = self.warm_up()
        generator = self.generator(model)
        return ctx if generator is ctx.generator else replace(ctx, generator=generator)

    def _graph_for(self, session_id: str | None):
        """The checkpointed graph for a conversation (least recently used threads beyond
        ``max_sessions`` are forgotten), the stateless one for a single question."""
        if session_id is None:
            return self.stateless_graph, None
        with self._count_lock:
            self._sessions.pop(session_id, None)
            self._sessions[session_id] = None
            expired = []
            while len(self._sessions) > self.max_sessions:
                expired.append(self._sessions.popitem(last=False)[0])
        for old in expired:
            self.graph.checkpointer.delete_thread(old)
        return self.graph, {"configurable": {"thread_id": session_id}}

    # ------------------------------------------------------------------ questions
    def _prepare(self, question: Any, session_id: str | None, policy: str | None, tier: str | None, model: str | None):
        question = validate_question(question, self.pipeline.max_question_chars)
        overrides = {key: value for key, value in (("policy", policy), ("tier", tier)) if value}
        self.pipeline.with_overrides(overrides)  # an unknown policy or tier fails here, before queueing
        ctx = self._context_for(model)
        graph, config = self._graph_for(session_id)
        return graph, {"question": question, "overrides": overrides}, ctx, config

    def _enter(self) -> int:
        with self._count_lock:
            ahead = self._in_flight
            self._in_flight += 1
            return ahead

    def _leave(self, answered: bool) -> None:
        with self._count_lock:
            self._in_flight -= 1
            self.answered += int(answered)

    def ask(self, question: Any, *, session_id: str | None = None, policy: str | None = None,
            tier: str | None = None, model: str | None = None) -> dict[str, Any]:
        graph, inputs, ctx, config = self._prepare(question, session_id, policy, tier, model)
        self._enter()
        start, ok = time.perf_counter(), False
        try:
            result = graph.invoke(inputs, config, context=ctx)
            ok = True
        finally:
            self._leave(ok)
        return public_result(result, (time.perf_counter() - start) * 1000)

    def stream(self, question: Any, *, session_id: str | None = None, policy: str | None = None,
               tier: str | None = None, model: str | None = None) -> Iterator[dict[str, Any]]:
        """Events: ``status`` (requests ahead, then each node as it finishes), ``token`` (answer
        text as generated), and a final ``result`` (as :meth:`ask` returns)."""
        graph, inputs, ctx, config = self._prepare(question, session_id, policy, tier, model)
        ahead = self._enter()
        start, ok = time.perf_counter(), False
        try:
            yield {"type": "status", "requests_ahead": ahead}
            final: dict[str, Any] = {}
            for mode, payload in graph.stream(inputs, config, context=ctx, stream_mode=["messages", "updates", "values"]):
                if mode == "messages":
                    chunk, meta = payload
                    if meta.get("langgraph_node") == "generate" and chunk.text:
                        yield {"type": "token", "text": chunk.text}
                elif mode == "updates":
                    for node in payload:
                        yield {"type": "status", "node": node}
                else:
                    final = payload
            ok = True
        finally:
            self._leave(ok)
        yield {"type": "result", **public_result(final, (time.perf_counter() - start) * 1000)}

    def reset_session(self, session_id: str) -> None:
        with self._count_lock:
            self._sessions.pop(session_id, None)
        self.graph.checkpointer.delete_thread(session_id)

    def history(self, session_id: str) -> list[dict[str, Any]]:
        state = self.graph.get_state({"configurable": {"thread_id": session_id}})
        return list(state.values.get("turns", [])) if state and state.values else []

    # ------------------------------------------------------------------ documents
    def add_documents(self, paths: Sequence[str | Path],
                      on_progress: Callable[[int, int], None] | None = None) -> IngestReport:
        """Copy uploaded files into the uploads folder (named by content hash, so re-uploads are
        recognised) and add them to the live index, which is saved before returning."""
        ctx = self.warm_up()
        uploads = cache_dir() / "uploads"
        uploads.mkdir(parents=True, exist_ok=True)
        items = []
        for raw in paths:
            path = Path(raw)
            try:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
            except OSError as exc:
                items.append(Skipped(path.name, f"unreadable: {exc}"))
                continue
            stored = uploads / f"{digest}-{path.name}"
            if not stored.exists():
                shutil.copyfile(path, stored)
            item = read_file(stored)
            items.append(Skipped(path.name, item.reason) if isinstance(item, Skipped) else item)
        with self._ingest_lock:
            return ingest(items, ctx.index, ctx.embedder, on_progress=on_progress)

    # ------------------------------------------------------------------ health
    @staticmethod
    def _router_status(ctx: RAGContext | None) -> dict[str, Any] | None:
        if ctx is None or ctx.router is None:
            return None
        meta = ctx.router.metadata
        return {"path": str(ctx.router.path), "labels": list(ctx.router.labels),
                "trained_on": meta.get("data", {}).get("questions"),
                "validation_accuracy": meta.get("validation", {}).get("accuracy")}

    def status(self) -> dict[str, Any]:
        ctx = self._context
        return {
            "status": "ok" if ctx is not None else "loading",
            "model": self.resources.model,
            "loaded_models": sorted(self._generators),
            "index_passages": len(ctx.index) if ctx else None,
            "policy": self.pipeline.policy,
            "router": self._router_status(ctx),
            "in_flight": self._in_flight,
            "answered": self.answered,
        }
