"""One server process: the HTTP API and the Gradio chat, on one FastAPI app.

    adaptive-rag serve [--host 127.0.0.1] [--port 7860] [--auth user:password]

    GET  /health        readiness, loaded models, index size, requests in flight
    POST /ask           {"question": ...} -> {"tier", "answer", "citations", "timing_ms", "tokens", "final_tier", ...}
    POST /ask/stream    the same as server-sent events: status, token ..., escalate (a new answer follows), result
    GET  /session/{id}  the conversation of a session (DELETE forgets it)
    GET  /documents     the knowledge base's documents (POST adds files, DELETE /documents/{id} removes one)
    GET  /docs          OpenAPI documentation
    /                   the Gradio chat

With logins on (``--auth``), every route, the chat and the OpenAPI pages included, asks for the one
HTTP Basic login, wrong passwords are throttled per client address, and a session belongs to the
user who started it. Request bodies are bounded in size and in the time they take to arrive.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import shutil
import socket
import sys
import tempfile
import threading
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, AsyncIterator, Awaitable, Callable, Iterator, Mapping, Optional

from fastapi import FastAPI, File, Query, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.routing import APIRoute
from fastapi_offline import FastAPIOffline
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr
from starlette.concurrency import run_in_threadpool

from app.errors import HANDLED, RequestError, describe
from app.security import (
    USER_KEY,
    BasicAuthMiddleware,
    GuardedRoutesMiddleware,
    LoginThrottle,
    RequestLimitsMiddleware,
)
from app.service import Cancelled, RAGService
from components.ingest import IngestReport
from components.sources import DocumentKind, Skipped

log = logging.getLogger("adaptive_rag.server")

MAX_REQUEST_BYTES = 1 << 20
"""Largest body of an API request (a question is at most a few KB); uploads have their own limit."""
UPLOAD_PATH = "/gradio_api/upload"
_DISCONNECT_POLL_S = 0.25


class AskRequest(BaseModel):
    # the API page's "Try it out" sends its example as given: a question alone, every setting its default (it filled
    # each field with a placeholder, "policy": "string", and was refused)
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"question": "Who wrote Pride and Prejudice?", "session_id": "api-example"}]})

    question: StrictStr = Field(description="the question; non-empty, at most max_question_chars characters")
    session_id: Optional[StrictStr] = Field(None, max_length=128,
                                            description="conversation id (letters, digits, '.', '_', '-'); "
                                                        "follow-ups use its history")
    policy: Optional[StrictStr] = Field(None, description="cascade (default: more evidence only when the answer is "
                                        "unsure), adaptive (the trained router picks the first tier), probe-router (a router "
                                        "that also sees the retrieval picks closed book or the first tier), fixed, baseline, "
                                        "retrieve-or-not (closed book or retrieval, by a gate), lazy (a summary "
                                        "first, passages when unsure) or self-route (the model chooses)")
    tier: Optional[StrictStr] = Field(None, description="easy, medium or hard: a fixed tier (implies policy fixed)")
    model: Optional[StrictStr] = Field(None, description="generator preset, one of /health's `models`")
    abstain_threshold: Optional[float] = Field(
        None, ge=0.0, le=1.0, allow_inf_nan=False,
        description="withhold an answer whose probability of being right is below this: "
                    "0 never abstains, 1 always (default: the threshold fitted on the train splits); "
                    "a question read as multi-hop is held to the bar this gives it through the "
                    "check's fitted pair (lower), and an answer whose evidence is all from the bundled "
                    "Wikipedia summaries to the bar it gives through the Wikipedia check's fitted threshold")
    multi_hop_threshold: Optional[float] = Field(
        None, ge=0.0, le=1.0, allow_inf_nan=False,
        description="the cascade starts a question at least this likely multi-hop at the multi-hop "
                    "tier (Medium), any other at Easy: 0 starts every question there, 1 none "
                    "(default: the threshold fitted on the train splits)")
    fresh: StrictBool = Field(False, description="answer afresh, not from the query cache (a retry: the cache may "
                                                 "have served an answer given to a similar question); the fresh "
                                                 "answer is cached in its place")


class ErrorDetail(BaseModel):
    detail: str = Field(description="what was wrong, in words a user can act on")


ASK_REFUSALS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorDetail, "description": "the question or a setting is refused: empty or too long, an unknown "
                                               "policy, tier or model, a threshold outside 0 to 1, a prompt longer "
                                               "than the model's window"},
    429: {"model": ErrorDetail, "description": "too many questions in flight: ask again shortly (retry-after)"},
    503: {"model": ErrorDetail, "description": "a model or the index cannot be loaded"},
}
"""Why /ask and /ask/stream refuse a question (:func:`app.errors.describe`), for the API's page."""
BAD_SESSION: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorDetail, "description": "the session id is not 1 to 128 letters, digits, '.', '_' or '-'"}}
NO_TURN: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorDetail, "description": "the session has no turn to take back"}}
NO_DOCUMENT: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorDetail, "description": "the knowledge base holds no document with this id"}}
TOO_LARGE: dict[int | str, dict[str, Any]] = {
    413: {"model": ErrorDetail, "description": "the body is over the upload limit (/health's max_upload_bytes)"}}


class NamedDocument(BaseModel):
    doc_id: str = Field(description="as GET /documents lists it")
    title: str
    followed: Optional[bool] = Field(None, description="true when the question did not name the file but follows "
                                     "one that searched it (\"Who is the manager?\" after a question on the handbook)")
    near: Optional[bool] = Field(None, description="true when the question named no file and followed none, and a "
                                 "passage of this file scored at least file_first_score (\"Who leads the finance "
                                 "office?\" with a travel policy added)")


class SummarizedDocument(BaseModel):
    doc_id: str = Field(description="as GET /documents lists it; input/<i> for the i-th document given with the question")
    title: str


class Summarized(BaseModel):
    thing: str = Field(description="what the request asked to have summarized (\"the kettle manual\")")
    documents: list[SummarizedDocument] = Field(description="the documents summarized: the files the request named (or "
                                           "followed), the documents given with it, or the one whose title names the thing")
    passages_read: int = Field(description="how many of their passages the summary read (of a longer document, the "
                                             "first paragraphs of each section)")
    passages: int = Field(description="how many passages they have")
    evidence_items: int = Field(description="the paragraphs read, a numbered evidence item each")


class ClosestPassage(BaseModel):
    title: str
    text: str
    score: float = Field(description="the score it was ranked by: the reranker's where the tier reranks, else the "
                                     "retrieval cosine (as a citation's)")
    source: str = Field(description="where it comes from: a page's address or a file's name")
    passage_id: str
    holds_answer: bool = Field(False, description="it holds the answer no passage read held (an unsupported "
                                                  "answer): found and not read, shown first")


class AnswerabilityCheck(BaseModel):
    decision: str = Field(description="answer, or abstain")
    by: str = Field(description="score (the answerability model), model (the generator itself abstained), "
                                "unchecked (no model loaded, or a closed-book answer) or question (answered without "
                                "reading: a first question on a person it does not name is asked whom it means, and a "
                                "reply with a name is answered as the question asked of it; a greeting, thanks, a "
                                "farewell, a question about the assistant or for the date is answered in kind; a request to "
                                "summarize a document of a name no document has is told so), age (a named person's age "
                                "no passage states, withheld whatever its score), kind (a number given to a question "
                                "that asks where or who, withheld whatever its score), subject (an answer to where or "
                                "when a named person was born or died that only passages on someone else hold, withheld "
                                "whatever its score), rank (an answer the passages that hold it rank second or lower, "
                                "to a question that asks for the largest, withheld whatever its score) or past (someone "
                                "dead or out of office, by the knowledge base, to a question that asks who holds an "
                                "office now, withheld whatever its score)")
    score: Optional[float] = Field(None, description="the probability that the answer is right")
    threshold: float
    multi_hop: Optional[bool] = Field(None, description="whether the check read the question as multi-hop, which "
                                                        "the threshold followed: the question-type model's reading, "
                                                        "but a weak one (under 15%) answered from a passage holding "
                                                        "half the question's words reads single-hop (null: no "
                                                        "reading)")
    knob: Optional[float] = Field(None, description="the setting the threshold came from (the request's "
                                                     "abstain_threshold, else the fitted one): a single-hop question's "
                                                     "threshold, which a multi-hop question's follows")
    fit_on: Optional[str] = Field(None, description="which check scored the answer, by what it was fit on: contexts "
                                  "(questions asked of the paragraph that should hold the answer: the default, and a "
                                  "user's documents) or wikipedia (questions asked of the bundled Wikipedia summaries: "
                                  "an answer whose evidence is all from them), whose threshold follows the knob through "
                                  "the two checks' fitted thresholds")
    withheld_answer: Optional[str] = Field(None, description="the answer not given, when the score abstained")
    pronoun: Optional[str] = Field(None, description="by question: the pronoun whose person the question does not "
                                                     "name (he, she, his, her)")
    reply: Optional[str] = Field(None, description="by question: who (the answer asks whom the question means), "
                                                   "greeting, thanks, farewell, about, date (answered in kind), no more "
                                                   "(nothing more is held on a thing described) or no document (no "
                                                   "document is called what a request to summarize names)")
    document: Optional[str] = Field(None, description="by question, no document: what the request called the "
                                                      "document (\"quarterly report\")")
    reason: Optional[str] = Field(None, description="by age, kind, subject, rank or past: why the answer was withheld "
                                                    "(\"a number or a date, and the question asks where\"); unchecked: "
                                                    "why it went unchecked")


class Compared(BaseModel):
    things: list[str] = Field(description="the two things the request asked to compare (\"cats\", \"dogs\")")
    titles: list[str] = Field(description="the documents whose first passages are the answer, in that order")
    passage_ids: list[str]
    shown: list[str] = Field(default_factory=list, description="the documents' passages given so far, in order "
                                                               "(\"Tell me more\" reads on after them)")
    more: bool = Field(False, description="the answer is their next passages, asked for with \"Tell me more\"")


class Described(BaseModel):
    thing: str = Field(description="what the question asked to be described (\"Napoleon\")")
    title: str = Field(description="the document whose first passage is the answer")
    passage_id: str
    match: str = Field(description="title: the title names the thing; surname: the thing is one word that ends it; "
                                   "more: the next passages of the document, asked for with \"Tell me more\"")
    shown: list[str] = Field(default_factory=list, description="the document's passages given so far, in order "
                                                               "(\"Tell me more\" reads on after them)")


class Aged(BaseModel):
    thing: str = Field(description="the person whose age the question asked (\"Bill Gates\")")
    title: str = Field(description="the document whose first passage's description gives the years")
    passage_id: str
    on: str = Field(description="the day the age was told for (ISO date)")


class Citation(BaseModel):
    n: int
    title: str
    text: str
    score: float
    source: str = Field(description="a page's address or an uploaded file's name")
    passage_id: str
    doc_id: Optional[str] = Field(None, description="the document the passage belongs to (see /documents)")


class RouterDecision(BaseModel):
    tier: str
    confidence: float
    probabilities: dict[str, float]
    inference_ms: float


class QuestionType(BaseModel):
    multi_hop_probability: float
    threshold: float = Field(description="at or above it the question counts as multi-hop")
    start: str = Field(description="the tier the cascade started at")
    inference_ms: float


class CacheHit(BaseModel):
    hit: str = Field(description="exact (the same question, normalised) or semantic (a near-paraphrase)")
    similarity: float
    cached_question: str = Field(description="the question the cached answer was first given to")


class Energy(BaseModel):
    joules: float
    method: str = Field(description="measured (the CPU's RAPL counters) or estimated (CPU time x a power figure)")


class AskResponse(BaseModel):
    tier: Optional[str]
    router: Optional[RouterDecision] = Field(None, description="the router's decision (adaptive policy)")
    question_type: Optional[QuestionType] = Field(None, description="where the cascade started: a multi-hop question "
                                                  "at Medium, any other at Easy (cascade policy)")
    answer: str
    citations: list[Citation]
    timing_ms: dict[str, float]
    tokens: dict[str, Optional[int]] = Field(description="prompt (the final answer's), input (all prompts), evaluated "
                                                        "(prompt tokens the model computed; the rest was cached), output")
    final_tier: Optional[str] = Field(None, description="the tier the cascade stopped at")
    escalations: int = Field(0, description="how often the cascade extended the evidence")
    corrected: bool
    supported: bool = Field(description="a cited passage holds the answer's words; false: no shown passage "
                                        "supports it (or the model abstained)")
    abstained: bool = Field(description="no answer is given: the model said the evidence does not hold it, or "
                                        "the answerability check found it too unlikely to be right")
    answerability: Optional[AnswerabilityCheck] = Field(None, description="the check after the answer")
    closest: list[ClosestPassage] = Field(default_factory=list, description="when no answer is given or no passage "
                                          "supports it: the best passages retrieved")
    rewritten_question: Optional[str]
    written_answer: Optional[str] = Field(None, description="what the model wrote, when the answer is its short form "
                                          "(an answer that restated the question cut to its new words)")
    described: Optional[Described] = Field(None, description="set when the question only asked what a thing is and "
                                           "the answer is the first passage of the document titled as it, as written "
                                           "(no model call)")
    summarized: Optional[Summarized] = Field(None, description="set when the request asked to have a document summarized "
                                             "(\"Summarize the kettle manual\") and the answer is a summary of it")
    aged: Optional[Aged] = Field(None, description="set when the question asked a named person's age (\"How old is "
                                 "Bill Gates?\") and the answer is told from the years their description gives "
                                 "(no model call)")
    compared: Optional[Compared] = Field(None, description="set when the request only asked to compare two things "
                                         "(\"Compare cats and dogs\") and the answer is the first passage of the "
                                         "document titled as each, as written (no model call)")
    named_documents: Optional[list[NamedDocument]] = Field(
        None, description="set when the question named one or more of your files (\"What does the handbook say about "
                          "holidays?\", \"my report\", \"the document\"), or follows a question that did and the "
                          "files hold a passage near it (followed), or names none and your files hold a passage "
                          "near it (near): only they were searched")
    cache: Optional[CacheHit] = Field(None, description="set when the answer came from the query cache")
    energy: Optional[Energy] = Field(None, description="what answering cost in energy")
    trace: dict[str, Any]


class Turn(BaseModel):
    question: str
    standalone_question: str = Field(description="the question as it was answered: a follow-up rewritten to stand alone")
    answer: str
    citations: list[Citation]
    passages_read: Optional[int] = Field(None, description="evidence items the answer read (0: closed book; null: "
                                                           "a turn kept before that was recorded)")
    supported: bool
    abstained: bool
    answerability: Optional[AnswerabilityCheck] = Field(None, description="the check after the answer (null: a turn "
                                                        "kept before the check was recorded with it)")
    escalations: Optional[int] = Field(None, description="how often the cascade extended the evidence")
    closest: list[ClosestPassage] = Field(default_factory=list, description="when no answer was given or no passage "
                                          "supports it: the best passages retrieved")
    cache: Optional[CacheHit] = Field(None, description="set when the answer came from the query cache")
    described: Optional[Described] = Field(None, description="set when the answer is the first passage of the document "
                                           "about the thing asked")
    named_documents: Optional[list[NamedDocument]] = Field(None, description="set when the question named one or more "
                                                           "of your files: only they were searched")
    summarized: Optional[Summarized] = Field(None, description="set when the answer is a summary of a document")
    aged: Optional[Aged] = Field(None, description="set when the answer is an age told from a person's description")
    compared: Optional[Compared] = Field(None, description="set when the answer is the first passages of two documents "
                                         "a request compares")
    tier: Optional[str] = Field(None, description="the tier the answer started at (null: a turn kept before it was recorded)")
    final_tier: Optional[str] = Field(None, description="the tier the cascade stopped at")
    tokens: Optional[dict[str, Optional[int]]] = Field(None, description="as an answer's: prompt, input, evaluated, "
                                                       "output (null: a turn kept before they were recorded)")
    # the rest of the answer's figures, as POST /ask gave them (null: a turn kept before they were recorded)
    timing_ms: Optional[dict[str, float]] = Field(None, description="as the answer's: the total and each step's")
    energy: Optional[Energy] = None
    router: Optional[RouterDecision] = None
    question_type: Optional[QuestionType] = None
    corrected: Optional[bool] = None
    written_answer: Optional[str] = None
    trace: Optional[dict[str, Any]] = Field(None, description="the part of the answer's trace its figures read: the "
                                            "routing decisions (gate, probe_router, self_route), steps stopped early")


class SessionResponse(BaseModel):
    session_id: str
    turns: list[Turn]


class TakenBack(BaseModel):
    question: str
    answer: str


class UndoResponse(SessionResponse):
    removed: TakenBack = Field(description="the question and answer taken back")


class Document(BaseModel):
    doc_id: str = Field(description="what DELETE /documents/{doc_id} removes it by")
    title: str
    source: str = Field(description="a page's address or an uploaded file's name")
    kind: str = Field(description="file (uploads), wikipedia, squad or hotpotqa")
    passages: int


class DocumentList(BaseModel):
    total: int = Field(description="the documents of the asked kind, all pages together")
    documents: list[Document] = Field(description="this page of them, in the order they were added")


class DocumentRemoved(BaseModel):
    doc_id: str
    title: str
    passages_removed: int
    index_passages: int = Field(description="the knowledge base's passages after the removal")


class SkippedFile(BaseModel):
    name: str
    reason: str


class DocumentsAdded(BaseModel):
    documents: list[Document] = Field(description="the documents the files are in the knowledge base as, now (a "
                                                  "file it already held is listed too, with nothing added)")
    skipped: list[SkippedFile] = Field(description="files not added, each with the reason: an unsupported type, "
                                                   "unreadable, empty, too large, or a copy of a document held")
    read_in_part: list[SkippedFile] = Field(description="files added with what kept the reader from all of them")
    replaced: list[str] = Field(description="files whose earlier version (an upload of the same name) this one "
                                            "replaced")
    passages_added: int
    passages_present: int = Field(description="passages the knowledge base already held")
    passages_replaced: int = Field(description="passages whose text changed")
    passages_removed: int = Field(description="passages of a document added again that it no longer has")
    index_passages: int = Field(description="the knowledge base's passages after the upload")


UPLOADED_FILE = {"type": "string", "format": "binary", "contentMediaType": "application/octet-stream"}
"""How the API's documentation describes an uploaded file: FastAPI writes only the OpenAPI 3.1 form
(``contentMediaType``), and the documentation page (Swagger UI) gives a list of such fields text boxes,
not file pickers (swagger-ui#10825); the OpenAPI 3.0 form beside it (``format: binary``), which 3.1
readers ignore, gets pickers."""


MAX_NAME_BYTES = 200
"""Longest name a received file keeps, in UTF-8 bytes: with the stored copy's digest prefix it stays
within a file system's 255."""


def upload_name(filename: str | None) -> str:
    """A received file's name as the client sent it, without any folder (either slash), control
    character or more than :data:`MAX_NAME_BYTES` bytes (the stem is cut, the type kept); ``upload``
    where nothing is left. It names the file in the knowledge base and never reaches outside the
    folder it is written to."""
    name = PurePosixPath((filename or "").replace("\\", "/")).name
    name = "".join(c for c in name if c.isprintable()).strip()
    if name in ("", ".", ".."):
        return "upload"
    if len(name.encode("utf-8")) <= MAX_NAME_BYTES:
        return name
    stem, dot, suffix = name.rpartition(".") if "." in name[1:] else (name, "", "")
    room = MAX_NAME_BYTES - len(f"{dot}{suffix}".encode("utf-8"))  # cut in one step: a name may be megabytes
    return f"{stem.encode('utf-8')[:room].decode('utf-8', 'ignore')}{dot}{suffix}" if room > 0 else "upload"


def added_documents(service: RAGService, report: IngestReport, names: list[str]) -> dict[str, Any]:
    """The answer to an upload: what the files are in the knowledge base as, and the report's counts."""
    skipped = {s.path for s in report.skipped}
    held = {d["source"]: d for d in service.documents() if d["kind"] == "file"}
    return {"documents": [held[n] for n in dict.fromkeys(names) if n not in skipped and n in held],
            "skipped": [{"name": s.path, "reason": s.reason} for s in report.skipped],
            "read_in_part": [{"name": s.path, "reason": s.reason} for s in report.read_in_part],
            "replaced": report.replaced, "passages_added": report.passages_added,
            "passages_present": report.passages_present, "passages_replaced": report.passages_replaced,
            "passages_removed": report.passages_removed, "index_passages": service.status()["index_passages"]}


def _safe_text(value: Any) -> Any:
    """A value as JSON can carry it: strings without lone surrogates, no NaN or infinities."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_safe_text(v) for v in value]
    return value


def _user(request: Request) -> str | None:
    return request.scope.get(USER_KEY)


API_DOCS_ASSETS = "/api-docs-assets"
"""Where the API documentation's scripts and styles are served (/docs, /redoc)."""


def create_app(service: RAGService, *, users: Mapping[str, str] | None = None, with_ui: bool = True,
               throttle: LoginThrottle | None = None, max_request_bytes: int = MAX_REQUEST_BYTES,
               body_timeout_s: float = 30.0) -> FastAPI:
    """The API (and the chat, ``with_ui``) over ``service``; ``users``: logins, none for an open server."""
    # FastAPI's documentation pages load Swagger UI and ReDoc from a CDN, which an offline machine cannot
    # reach (a blank page); fastapi-offline's serve the packaged copies from API_DOCS_ASSETS
    app = FastAPIOffline(title="adaptive-rag", version="0.1.0", static_url=API_DOCS_ASSETS,
                         description="Budget-aware adaptive RAG over a local knowledge base, with small local models.")

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        # Only location, message and type: the offending input may be NaN or a lone surrogate,
        # which JSON cannot carry back.
        errors = [{"loc": _safe_text(list(e.get("loc", ()))), "msg": _safe_text(e.get("msg", "")),
                   "type": e.get("type", "")} for e in exc.errors()]
        return JSONResponse({"detail": errors}, status_code=422)

    async def handled(_: Request, exc: Exception) -> JSONResponse:
        problem = describe(exc)
        assert problem is not None
        headers = {"retry-after": "5"} if problem.status == 429 else None
        return JSONResponse({"detail": problem.message}, status_code=problem.status, headers=headers)

    for error_type in HANDLED:
        app.add_exception_handler(error_type, handled)

    @app.get("/health")
    def health() -> dict[str, Any]:
        return service.status()

    @app.post("/ask", response_model=AskResponse, responses=ASK_REFUSALS)
    async def ask(body: AskRequest, request: Request) -> Any:
        cancel = threading.Event()
        task = asyncio.ensure_future(run_in_threadpool(
            service.ask, body.question, session_id=body.session_id, policy=body.policy, tier=body.tier,
            abstain_threshold=body.abstain_threshold, multi_hop_threshold=body.multi_hop_threshold, model=body.model,
            owner=_user(request), cancel=cancel, fresh=body.fresh))
        while not task.done():
            await asyncio.wait({task}, timeout=_DISCONNECT_POLL_S)
            if not task.done() and await request.is_disconnected():
                cancel.set()  # the client has gone: stop generating for nobody
        try:
            return task.result()
        except Cancelled:
            return JSONResponse({"detail": "cancelled: the client disconnected"}, status_code=499)

    @app.get("/session/{session_id}", response_model=SessionResponse, responses=BAD_SESSION)
    def session_history(session_id: str, request: Request) -> dict[str, Any]:
        """The conversation so far: each turn's question, standalone rewrite and answer, as it was given
        (its citations, or its closest passages where none holds an answer, and the check's decision)."""
        return {"session_id": session_id, "turns": service.history(session_id, owner=_user(request))}

    @app.post("/session/{session_id}/undo", response_model=UndoResponse, responses={**BAD_SESSION, **NO_TURN})
    def session_undo(session_id: str, request: Request) -> dict[str, Any]:
        """Take the last question and its answer back (before asking it again, for instance)."""
        removed = service.undo_last_turn(session_id, owner=_user(request))
        return {"session_id": session_id, "removed": removed,
                "turns": service.history(session_id, owner=_user(request))}

    @app.get("/documents", response_model=DocumentList)
    def documents(kind: Annotated[Optional[DocumentKind], Query(description="only this kind: file (uploads), "
                                                                        "wikipedia, or a benchmark's (squad, hotpotqa)")] = None,
                  limit: int = Query(100, ge=1, le=1000), offset: int = Query(0, ge=0)) -> dict[str, Any]:
        """The knowledge base's documents with their passage counts and sources (shared by all users)."""
        docs = [d for d in service.documents() if kind is None or d["kind"] == kind]
        return {"total": len(docs), "documents": docs[offset:offset + limit]}

    @app.post("/documents", response_model=DocumentsAdded, responses=TOO_LARGE)
    def add_documents(files: Annotated[list[UploadFile], File(description=".pdf, .txt, .md, .html or .htm files",
                                                              json_schema_extra={"items": UPLOADED_FILE})]) -> dict[str, Any]:
        """Add files to the knowledge base (shared by all users) as the chat's upload does: each is
        kept under the cache by its content, a file of the same name as an earlier upload replaces it,
        a copy of a document held is skipped, and the index is saved before the answer. A file that
        cannot be added is listed in `skipped` with the reason (the request still succeeds); a body
        over the upload limit (/health's `max_upload_bytes`, and a megabyte for the form) gets 413."""
        with tempfile.TemporaryDirectory(prefix="adaptive-rag-upload-") as folder:
            paths, unreceived = [], []
            for n, upload in enumerate(files):  # a folder each: two files may share a name
                path = Path(folder) / str(n) / upload_name(upload.filename)
                try:
                    path.parent.mkdir()
                    with path.open("wb") as out:
                        shutil.copyfileobj(upload.file, out)
                except OSError as exc:  # a full disk, say: this file is not added, the others are
                    path.unlink(missing_ok=True)
                    unreceived.append(Skipped(path.name, f"unreadable: {exc.strerror or exc}"))
                    continue
                paths.append(path)
            report = service.add_documents(paths, allowed_dirs=[folder])
        report.skipped[:0] = unreceived
        return added_documents(service, report, [p.name for p in paths])

    @app.delete("/documents/{doc_id:path}", response_model=DocumentRemoved, responses=NO_DOCUMENT)
    def delete_document(doc_id: str) -> dict[str, Any]:
        """Remove a document's passages from the knowledge base; the index is saved atomically."""
        return service.delete_document(doc_id)

    @app.delete("/session/{session_id}", response_model=SessionResponse, responses=BAD_SESSION)
    def session_reset(session_id: str, request: Request) -> dict[str, Any]:
        service.reset_session(session_id, owner=_user(request))
        return {"session_id": session_id, "turns": []}

    @app.post("/ask/stream", responses={200: {"content": {"text/event-stream": {}}, "description": "server-sent events"},
                                        **ASK_REFUSALS})
    async def ask_stream(body: AskRequest, request: Request) -> StreamingResponse:
        cancel = threading.Event()
        events = service.stream(body.question, session_id=body.session_id, policy=body.policy, tier=body.tier,
                                abstain_threshold=body.abstain_threshold, multi_hop_threshold=body.multi_hop_threshold,
                                model=body.model, owner=_user(request), cancel=cancel, fresh=body.fresh)
        first = await run_in_threadpool(next, events)  # input errors surface here, as 4xx, before the stream starts
        return StreamingResponse(_sse(first, events, cancel), media_type="text/event-stream")

    refuse_other_methods(app)
    if with_ui:
        import gradio as gr

        from app.ui import CSS, FOOTER_LINKS, JS, TRANSLATIONS, build_ui, theme

        app = gr.mount_gradio_app(app, build_ui(service), path="/", show_error=True, css=CSS, js=JS, theme=theme(),
                                  i18n=gr.I18n(**TRANSLATIONS), max_file_size=service.max_upload_bytes,
                                  footer_links=FOOTER_LINKS)
        app.add_middleware(GuardedRoutesMiddleware)
    app.add_middleware(RequestLimitsMiddleware, max_body_bytes=max_request_bytes, body_timeout_s=body_timeout_s,
                       path_limits={path: service.max_upload_bytes + (1 << 20) for path in (UPLOAD_PATH, "/documents")})
    if users:
        app.add_middleware(BasicAuthMiddleware, users=users, throttle=throttle)  # outermost: before any body is read
    return app


HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_REFUSAL = "refuse_other_methods"  # the refusals' route name


def refuse_other_methods(app: FastAPI) -> None:
    """Answer a request to an API path with a method the path does not take with 405 and, in
    ``Allow``, every method it takes. Starlette hands such a request on to the next route that
    matches, so with the chat mounted at "/" it got the chat's 404, as if the path did not exist;
    and without the chat, ``Allow`` named only the methods of the path's first route. Call once
    every API route is defined; the refusals are left out of the API's documentation."""
    taken: dict[str, set[str]] = {}
    for route in app.routes:
        if isinstance(route, APIRoute) and route.name != _REFUSAL:
            taken.setdefault(route.path, set()).update(route.methods)
    refused = {route.path for route in app.routes if isinstance(route, APIRoute) and route.name == _REFUSAL}
    for path, methods in taken.items():
        if path not in refused and HTTP_METHODS - methods:  # a second call adds nothing
            app.add_api_route(path, _refusal(", ".join(sorted(methods))), methods=sorted(HTTP_METHODS - methods),
                              include_in_schema=False, name=_REFUSAL)


def _refusal(allow: str) -> Callable[[], Awaitable[JSONResponse]]:
    async def refuse() -> JSONResponse:
        return JSONResponse({"detail": "Method Not Allowed"}, status_code=405, headers={"Allow": allow})
    return refuse


async def _sse(first: dict[str, Any], events: Iterator[dict[str, Any]], cancel: threading.Event) -> AsyncIterator[str]:
    """Server-sent events from the service's stream. A client that goes away cancels the run (the
    iterator is closed and generation stops at its next token), so nothing runs on for nobody."""
    done = object()
    try:
        event: Any = first
        while event is not done:
            yield f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n"
            event = await run_in_threadpool(next, events, done)
    except Cancelled:
        return
    except Exception as exc:  # the stream has started: report in-band
        problem = describe(exc)
        detail = problem.message if problem else f"internal error: {type(exc).__name__}"
        if problem is None:
            log.exception("streamed answer failed")
        yield f"event: error\ndata: {json.dumps({'type': 'error', 'detail': detail})}\n\n"
    finally:
        cancel.set()
        try:
            events.close()
        except ValueError:  # still running in a worker thread: the cancel event stops it there
            pass


SHUTDOWN_GRACE_S = 10
"""Asked to stop, the server lets answers in flight finish for this long, then closes what is still
open: an open chat page holds a connection for as long as it is open, so without a bound the server
would wait for every user to close their tab (a question cut short comes back in the box on reload)."""


LISTEN_BACKLOG = 2048  # uvicorn's default


def listening_socket(host: str, port: int) -> socket.socket:
    """The server's socket, listening before anything loads (the models take a minute on a cold start),
    so that a port another server holds, or a host this machine is not, is said at once. A browser that
    connects while the models load waits for the page rather than being refused."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise RequestError(f"cannot serve on {host}:{port}: {exc.strerror or exc}; check --host") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: a restart need not wait
        sock.bind(address)
        sock.listen(LISTEN_BACKLOG)  # bound alone, the port is not yet held: a second server could bind it too
    except OSError as exc:
        sock.close()
        raise RequestError(f"cannot serve on {host}:{port}: {exc.strerror or exc}; is another server using it? "
                           "choose another --port") from None
    return sock


def run(service: RAGService, *, host: str, port: int, users: Mapping[str, str] | None = None,
        body_timeout_s: float = 30.0) -> None:
    """Serve until interrupted (``adaptive-rag serve``; options parsed by :mod:`app.cli`)."""
    import uvicorn

    with listening_socket(host, port) as sock:  # closed however the server ends, a failed load too
        print("loading models and index ...", file=sys.stderr, flush=True)
        service.warm_up()
        if host not in ("127.0.0.1", "localhost", "::1") and not users:
            print(f"warning: serving on {host} without --auth: anyone who can reach it can use it", file=sys.stderr)

        class Announcing(uvicorn.Server):
            """Says where it serves once it takes connections (building the chat takes a moment after
            the models load: a line printed before then sent people to a refused connection)."""

            async def startup(self, sockets: Any = None) -> None:
                await super().startup(sockets)
                if self.started:
                    print(f"serving on http://{host}:{port}/ (API docs at /docs)", file=sys.stderr, flush=True)

        app = create_app(service, users=users, body_timeout_s=body_timeout_s)
        server = Announcing(uvicorn.Config(app, host=host, port=port, log_level="warning", limit_concurrency=512,
                                           timeout_keep_alive=5, timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
                                           backlog=LISTEN_BACKLOG))
        try:  # as uvicorn.run does: Ctrl-C, which uvicorn raises again once it has shut down, ends quietly
            server.run(sockets=[sock])
        except KeyboardInterrupt:
            pass
    if not server.started:
        from uvicorn.config import STARTUP_FAILURE

        sys.exit(STARTUP_FAILURE)
