"""One server process: the HTTP API and the Gradio chat, on one FastAPI app.

    adaptive-rag serve [--host 127.0.0.1] [--port 7860] [--auth user:password]

    GET  /health        readiness, loaded models, index size, requests in flight
    POST /ask           {"question": ...} -> {"tier", "answer", "citations", "timing_ms", "tokens", ...}
    POST /ask/stream    the same as server-sent events: status, token ..., result
    GET  /session/{id}  the conversation of a session (DELETE forgets it)
    GET  /docs          OpenAPI documentation
    /                   the Gradio chat
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from typing import Any, Iterator, Optional

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.security import HTTPBasic, HTTPBasicCredentials
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from app.service import RAGService
from components.index import IndexLoadError
from components.model_files import ModelFileError
from graph.configuration import ConfigurationError, QuestionError
from router.model import RouterError


class AskRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: StrictStr = Field(description="the question; non-empty, at most max_question_chars characters")
    session_id: Optional[StrictStr] = Field(None, max_length=200, description="conversation id; follow-ups use its history")
    policy: Optional[StrictStr] = Field(None, description="adaptive (default: the trained router), fixed or baseline")
    tier: Optional[StrictStr] = Field(None, description="easy, medium or hard: a fixed tier (implies policy fixed)")
    model: Optional[StrictStr] = Field(None, description="generator preset")


class Citation(BaseModel):
    n: int
    title: str
    text: str
    score: float
    source: str
    passage_id: str


class RouterDecision(BaseModel):
    tier: str
    confidence: float
    probabilities: dict[str, float]
    inference_ms: float


class AskResponse(BaseModel):
    tier: Optional[str]
    router: Optional[RouterDecision] = Field(None, description="the router's decision (adaptive policy)")
    answer: str
    citations: list[Citation]
    timing_ms: dict[str, float]
    tokens: dict[str, Optional[int]]
    corrected: bool
    rewritten_question: Optional[str]
    trace: dict[str, Any]


def _parse_auth(value: str | None) -> tuple[str, str] | None:
    if not value:
        return None
    user, sep, password = value.partition(":")
    if not sep or not user or not password:
        raise ConfigurationError("auth must be given as user:password")
    return user, password


def create_app(service: RAGService, *, auth: tuple[str, str] | None = None, with_ui: bool = True) -> FastAPI:
    app = FastAPI(title="adaptive-rag", version="0.1.0",
                  description="Budget-aware adaptive RAG over a local knowledge base, with small local models.")
    basic = HTTPBasic(auto_error=False)

    def authorised(credentials: Optional[HTTPBasicCredentials] = Depends(basic)) -> None:
        if auth is None:
            return
        ok = credentials is not None and secrets.compare_digest(credentials.username, auth[0]) \
            and secrets.compare_digest(credentials.password, auth[1])
        if not ok:
            raise HTTPException(401, "authentication required", headers={"WWW-Authenticate": "Basic"})

    @app.exception_handler(QuestionError)
    @app.exception_handler(ConfigurationError)
    async def bad_input(_: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=400)

    @app.exception_handler(IndexLoadError)
    @app.exception_handler(ModelFileError)
    @app.exception_handler(RouterError)
    async def unavailable(_: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=503)

    @app.get("/health", dependencies=[Depends(authorised)])
    def health() -> dict[str, Any]:
        return service.status()

    @app.post("/ask", response_model=AskResponse, dependencies=[Depends(authorised)])
    def ask(request: AskRequest) -> dict[str, Any]:
        return service.ask(request.question, session_id=request.session_id, policy=request.policy,
                           tier=request.tier, model=request.model)

    @app.get("/session/{session_id}", dependencies=[Depends(authorised)])
    def session_history(session_id: str) -> dict[str, Any]:
        """The conversation so far: each turn's question, standalone rewrite and answer."""
        return {"session_id": session_id, "turns": service.history(session_id)}

    @app.delete("/session/{session_id}", dependencies=[Depends(authorised)])
    def session_reset(session_id: str) -> dict[str, Any]:
        service.reset_session(session_id)
        return {"session_id": session_id, "turns": []}

    @app.post("/ask/stream", dependencies=[Depends(authorised)],
              responses={200: {"content": {"text/event-stream": {}}, "description": "server-sent events"}})
    def ask_stream(request: AskRequest) -> StreamingResponse:
        events = service.stream(request.question, session_id=request.session_id, policy=request.policy,
                                tier=request.tier, model=request.model)
        first = next(events)  # validation errors surface here, as 4xx, before the stream starts

        def sse() -> Iterator[str]:
            try:
                for event in _chain(first, events):
                    yield f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n"
            except Exception as exc:  # the stream has started: report in-band
                yield f"event: error\ndata: {json.dumps({'type': 'error', 'detail': str(exc)})}\n\n"

        return StreamingResponse(sse(), media_type="text/event-stream")

    if with_ui:
        import gradio as gr

        from app.ui import build_ui

        app = gr.mount_gradio_app(app, build_ui(service), path="/", auth=auth, show_error=True)
    return app


def _chain(first: dict[str, Any], rest: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    yield first
    yield from rest


def serve(args: argparse.Namespace) -> int:
    """Start the server for ``adaptive-rag serve`` (options parsed by :mod:`app.cli`)."""
    import uvicorn

    from app.cli import _pipeline, _resources

    auth = _parse_auth(args.auth)
    service = RAGService(_resources(args), _pipeline(args))
    print("loading models and index ...", file=sys.stderr, flush=True)
    service.warm_up()
    if args.host not in ("127.0.0.1", "localhost", "::1") and auth is None:
        print(f"warning: serving on {args.host} without --auth: anyone who can reach it can use it", file=sys.stderr)
    print(f"serving on http://{args.host}:{args.port}/ (API docs at /docs)", file=sys.stderr, flush=True)
    uvicorn.run(create_app(service, auth=auth), host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    from app.cli import main

    sys.exit(main(["serve", *sys.argv[1:]]))
