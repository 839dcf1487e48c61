"""The application service: the one front door behind the command line, the HTTP API and the chat.

One instance per process: it loads the embedder, index, reranker and default generator once and
shares them; the other generator presets the server enables load on first use and stay loaded.
Conversations live in a LangGraph checkpointer keyed by session id (and, when logins are on, by
the user who started them), so sessions never see each other's history. Generation is serialised
per model by the model itself (llama.cpp contexts are not thread-safe); concurrent requests wait
their turn up to ``max_in_flight``, and :meth:`RAGService.status` tells how many are waiting.
A question can be cancelled (the client went away): generation stops at the next token.
"""

from __future__ import annotations

import hashlib
import logging
import re
import shutil
import threading
import time
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Collection, Iterator, Mapping, Sequence

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Overwrite

from app.errors import NotFoundError, RequestError, TooBusyError
from components.answer_probe import AnswerProbe
from components.answerability import AnswerabilityModel
from components.generator import Generator, load_chat_model
from components.ingest import IngestReport, ingest
from components.model_files import PRESETS, cache_dir, gguf_file_name, preset_installed
from components.passages import SourceDocument, closest, ranking_score, source_of
from components.question_type import QuestionTypeModel
from components.sources import Skipped, read_file
from components.storage import atomic_path, sha256_file
from graph import build_graph
from nodes.base import cache_match, replied_without_reading, token_counts
from nodes.check_answer import REASON_TOLD
from nodes.generate import is_abstention, pin_answer_prefix
from pipeline.configuration import ConfigurationError, PipelineConfig, is_probability, not_a_probability, validate_question
from pipeline.context import RAGContext, ResourceConfig, check_for_generator

DEFAULT_MAX_UPLOAD_BYTES = 50 * 1024 * 1024
UPLOAD_PREFIX, UPLOAD_DIGEST_CHARS = "upload/", 12
"""An uploaded file's document id: the prefix, then its stored copy's name, the first characters of
the sha256 of its bytes, a hyphen and the file's own name."""
_WAIT_POLL_S = 0.25  # how often a waiting question looks whether it was cancelled
SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class Cancelled(Exception):
    """The question was cancelled before its answer was complete."""


class _CancelOnSignal(BaseCallbackHandler):
    """Stops a run at the next node or generated token once ``event`` is set."""

    raise_error = True

    def __init__(self, event: threading.Event):
        self.event = event

    def _check(self) -> None:
        if self.event.is_set():
            raise Cancelled("the question was cancelled")

    def on_llm_new_token(self, *args: Any, **kwargs: Any) -> None:
        self._check()

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        self._check()


def _not_a_cancellation(record: logging.LogRecord) -> bool:
    """LangChain logs a callback handler's exception as a warning before raising it ("Error in %s.%s
    callback: %s": the handler's class, the event, the exception's repr): a question stopped by
    :class:`_CancelOnSignal` is no error, so that line is dropped; any other handler's failure is
    still logged."""
    args = record.args if isinstance(record.args, tuple) else ()
    return not (len(args) == 3 and args[0] == _CancelOnSignal.__name__
                and str(args[2]).startswith(f"{Cancelled.__name__}("))


logging.getLogger("langchain_core.callbacks.manager").addFilter(_not_a_cancellation)


class Line:
    """First come, first served, per generator: the question at the front runs, the others wait
    and can ask how many are ahead of them (the chat shows it, counting down). A small model
    answers one question at a time anyway, so waiting here, not in the middle of the graph, costs
    nothing and makes the wait visible."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: list[object] = []

    def join(self) -> object:
        ticket = object()
        with self._cond:
            self._queue.append(ticket)
        return ticket

    def ahead(self, ticket: object) -> int:
        with self._cond:
            return self._queue.index(ticket)

    def wait(self, ticket: object, timeout: float) -> int:
        """Wait up to ``timeout`` seconds for the questions ahead to get fewer; how many are left."""
        with self._cond:
            ahead = self._queue.index(ticket)
            if ahead:
                self._cond.wait_for(lambda: self._queue.index(ticket) < ahead, timeout)
            return self._queue.index(ticket)

    def leave(self, ticket: object) -> None:
        with self._cond:
            self._queue.remove(ticket)
            self._cond.notify_all()


def validate_session_id(session_id: object) -> str:
    if not isinstance(session_id, str) or not SESSION_ID.fullmatch(session_id):
        raise RequestError("session_id must be 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit")
    return session_id


API_DECIMALS = 6
"""How the API rounds a probability (the check's score and threshold, the knob) or a passage's score. The
chat and the terminal round again to show them (in percent to one or two decimals, scores to two), and a
value rounded to four first could cross a tie the real one does not (0.004528 → 0.0045, which reads
"0.4%"; 0.664996 → 0.665, which reads "0.67")."""


def public_citation(c: dict[str, Any]) -> dict[str, Any]:
    return {"n": c["n"], "title": c["title"], "text": c["text"], "score": round(float(c["score"]), API_DECIMALS),
            "source": source_of(c.get("metadata") or {}, c["passage_id"]), "passage_id": c["passage_id"],
            "doc_id": (c.get("metadata") or {}).get("doc_id")}


def public_check(check: dict[str, Any] | None) -> dict[str, Any] | None:
    """The answerability check as the API returns it: the decision, who made it, the score and
    threshold (and whether it was a multi-hop question's, and the setting it came from), which check
    it was, the answer it withheld, the pronoun of a question asked back, the document a request to
    summarize named that no document is, and why (a rule that withheld the answer, or why it went unchecked); probabilities to
    :data:`API_DECIMALS`."""
    if not check:
        return None
    score, knob = check.get("score"), check.get("knob")
    return {"decision": check["decision"], "by": check["by"],
            "score": None if score is None else round(score, API_DECIMALS),
            "threshold": round(check["threshold"], API_DECIMALS), "multi_hop": check.get("multi_hop"),
            "knob": None if knob is None else round(knob, API_DECIMALS), "fit_on": check.get("fit_on"),
            "withheld_answer": check.get("withheld_answer"), "pronoun": check.get("pronoun"), "reply": check.get("reply"),
            "document": check.get("document"), "reason": check.get("reason")}


def public_closest(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """The closest passages, as the API gives them when no answer is given or none is supported."""
    if not trace.get("abstained") and trace.get("supported", True):
        return []
    return public_passages(trace.get("passages") or [], trace.get("held_by") or ())


def public_passages(passages: Sequence[Mapping[str, Any]], holding: Collection[str] = ()) -> list[dict[str, Any]]:
    """The best of ``passages`` (:func:`~components.passages.closest`) as the API gives them, those that hold
    an unsupported answer (``holding``, or marked so before) first, with ``holds_answer``."""
    return [{"title": p["title"], "text": p["text"], "score": round(ranking_score(p), API_DECIMALS), "source": p["source"],
             "passage_id": p["id"], "holds_answer": bool(p.get("holds_answer"))}
            for p in sourced(closest(passages, holding=holding))]


def public_result(result: dict[str, Any], wall_ms: float) -> dict[str, Any]:
    """The answer as the API returns it: tier, answer, citations, timing and tokens (and the trace)."""
    trace = result.get("trace", {})
    timings = {node: round(ms, 1) for node, ms in trace.get("timings_ms", {}).items()}
    return {
        "tier": trace.get("tier"),
        "router": trace.get("router"),
        "question_type": trace.get("question_type"),  # the cascade's start: P(multi-hop), its threshold, the tier
        "answer": result.get("answer", ""),
        "written_answer": trace.get("written_answer"),  # the model's text, when the answer is its short form
        "citations": [public_citation(c) for c in result.get("citations", [])],
        "supported": bool(trace.get("supported", result.get("citations"))),
        "abstained": bool(trace.get("abstained")),
        "answerability": public_check(trace.get("answerability")),
        "closest": public_closest(trace),
        "timing_ms": {"total": round(wall_ms, 1), **timings},
        "tokens": token_counts(trace),
        "final_tier": trace.get("final_tier", trace.get("tier")),
        "escalations": trace.get("escalations", 0),
        "corrected": bool(trace.get("corrected")),
        "rewritten_question": rewritten_question(trace),
        "described": trace.get("described"),  # the answer is the first passage of the document about the thing asked
        "summarized": trace.get("summarized"),  # the answer is a summary of the document the request named
        "aged": trace.get("aged"),  # the answer is an age told from the years a person's description gives
        "compared": trace.get("compared"),  # the answer is the first passages of the two documents a request compares
        "named_documents": trace.get("named_documents"),  # the user's files the question named: only they were searched
        "cache": cache_match(trace),
        "energy": ({"joules": round(trace["energy"]["joules"], 3), "method": trace["energy"]["method"]}
                   if trace.get("energy") else None),
        "trace": trace,
    }


ANSWERING_NODES = frozenset({"generate", "summarize"})
"""The nodes whose model call writes the answer, whose tokens a stream passes on (not the rewrite's, nor a self-check's)."""

FIGURES = ("timing_ms", "energy", "router", "question_type", "corrected", "written_answer")
"""What an answer's figures show (the chat's summary line and details, the terminal's cost line) beyond
what the graph keeps with the turn (its tiers, tokens, check and escalations): the time and energy the
service measures around the graph, and what the trace says of the routing and the answer."""
TRACE_FIGURES = ("gate", "probe_router", "self_route")
KEPT_STEP_FIELDS = ("stopped_early", "output_tokens", "extended_by", "answer", "rule_reason")
"""What a turn keeps of the steps its figures read: the answers stopped early (how many tokens they had), and those a
rule set aside (the answer and the rule's reason, :data:`nodes.check_answer.EXTENDED_RULES`)."""


def kept_figures(result: Mapping[str, Any]) -> dict[str, Any]:
    """:data:`FIGURES` of an answer as the API returned it (:func:`public_result`), and the part of
    its trace the figures read (the routing decisions of :data:`TRACE_FIGURES`, the answers stopped
    early or set aside by a rule: :data:`KEPT_STEP_FIELDS`), kept with the conversation's turn so a
    reload shows the answer's figures as they were."""
    trace = result.get("trace") or {}
    kept_trace: dict[str, Any] = {key: trace[key] for key in TRACE_FIGURES if trace.get(key)}
    kept_steps = [{key: step[key] for key in KEPT_STEP_FIELDS if key in step} for step in trace.get("steps") or []
                  if step.get("stopped_early") or step.get("extended_by") == "rule"]
    if kept_steps:
        kept_trace["steps"] = kept_steps
    return {**{key: result.get(key) for key in FIGURES}, "trace": kept_trace}


def rewritten_question(trace: Mapping[str, Any]) -> str | None:
    """The standalone question a follow-up was read as (:func:`read_as`, from the trace's rewrite)."""
    rewrite = trace.get("rewrite") or {}
    return read_as(rewrite.get("original", ""), rewrite.get("standalone"))


def read_as(question: str, standalone: str | None) -> str | None:
    """``standalone``, the question a follow-up was read as; ``None`` when there was no rewrite or it
    gave the question back as asked (up to spacing and case), so nothing says it was read otherwise."""
    if not standalone or " ".join(standalone.split()).casefold() == " ".join(question.split()).casefold():
        return None
    return standalone


def answered_without_reading(result: Mapping[str, Any]) -> str | None:
    """What the answer did instead of reading, when it read and generated nothing and its words are all
    it has to say: "asked whom the question means" (:mod:`nodes.ask_who`), "answered in kind" to a
    greeting, thanks or a farewell (:mod:`nodes.small_talk`), that it said what it does or read the server's
    clock, that nothing more is held on a thing described (:func:`nodes.describe.describe_more`), or that no
    document is called what a request to summarize names (:mod:`nodes.summarize`); ``None`` for any other answer."""
    if not replied_without_reading(result):
        return None
    reply = result["answerability"].get("reply", "who")
    return {"who": "asked whom the question means", "no more": "nothing more is held on it",
            "no document": "no document is called that", "about": "said what it does",
            "date": "read the server's clock", "arithmetic": "worked out the sum",
            "live": "no live information here"}.get(reply, "answered in kind")


def abstention_note(result: dict[str, Any]) -> str | None:
    """What a reader is told when no answer is given, in the chat and the terminal alike: that the
    knowledge base does not seem to hold it and, when the check withheld the model's answer, that
    answer with how likely it was to be right."""
    check = result.get("answerability") or {}
    if not result.get("abstained") or answered_without_reading(result):
        return None
    note = "The knowledge base does not seem to hold the answer."
    if check.get("by") == "age" and check.get("withheld_answer"):
        note += (f" The model's answer, \u201c{check['withheld_answer']}\u201d, was withheld: no passage states that "
                 "age, and the model does not work one out from a year of birth.")
    elif check.get("by") in REASON_TOLD and check.get("withheld_answer"):
        note += f" The model's answer, \u201c{check['withheld_answer']}\u201d, was withheld: it is {check['reason']}."
    elif check.get("by") == "score" and check.get("withheld_answer") and check.get("score") is not None:
        score, threshold = apart(check["score"], check["threshold"])
        bar = (f"the {threshold} bar of an answer from the Wikipedia summaries" if check.get("fit_on") == "wikipedia"
               else f"the {threshold} threshold")
        note += (f" The model's answer, \u201c{check['withheld_answer']}\u201d, was withheld: it is "
                 f"{score} likely to be right, below {bar}.")
    return note


def both_titles(compared: dict[str, Any]) -> str:
    """The two documents a comparison gave the first passages of: "“Cat” and “Dog”"."""
    return " and ".join(f"“{title}”" for title in compared["titles"])


def passages_read(result: dict[str, Any]) -> int | None:
    """How many evidence items the answer's prompt held (0: answered closed book), ``None`` where
    the result does not say (a turn stored before session 32)."""
    if "passages_read" in result:
        return result["passages_read"]
    if result.get("described") or result.get("aged") or result.get("compared"):  # the answer is (from) the passages it cites
        return len(result.get("citations") or []) or 1
    if result.get("summarized"):  # the paragraphs the summary read
        return result["summarized"]["evidence_items"]
    steps = (result.get("trace") or {}).get("steps") or []
    return steps[-1].get("evidence_items") if steps else None


def unsupported_note(result: dict[str, Any]) -> str | None:
    """What a reader is told, in the chat and the terminal alike, about an answer that no cited
    passage supports: that no passage was read for it (a closed-book answer, a policy's choice), or
    that none of those read holds it. ``None`` for a supported answer or an abstention."""
    if result.get("abstained") or result.get("supported", bool(result.get("citations"))):
        return None
    if passages_read(result) == 0:
        return "Answered from the model's own knowledge: no passage was read for it. Check it before relying on it."
    if result.get("summarized"):
        return ("Partly unsupported: a sentence of this summary is not held by the passages it read. "
                "Check it before relying on it.")
    if held_unread(result):
        return ("Unsupported: none of the passages read holds this answer, but one found and not read does (the first "
                "below). Check it there before relying on it.")
    return "Unsupported: none of the passages read holds this answer. Check it before relying on it."


def held_unread(result: Mapping[str, Any]) -> bool:
    """Whether a passage found and not read holds the unsupported answer: the trace's ``held_by``, or a turn's kept
    closest passages (after a reload) marked ``holds_answer``."""
    return bool((result.get("trace") or {}).get("held_by")) or any(p.get("holds_answer") for p in result.get("closest") or [])


def apart(score: float, threshold: float) -> tuple[str, str]:
    """A score and its threshold as percentages: the threshold as the chat's setting shows it (to
    one decimal, none when it is whole: "7%", "14.2%"), and both with as many more decimals (up to
    two) as tell them apart: 0.120 against 0.125 reads "12.0%" against "12.5%", not "12%" against "12%"."""
    fewest = 0 if round(100 * threshold, 1).is_integer() else 1
    for decimals in range(fewest, 3):
        shown = f"{score:.{decimals}%}", f"{threshold:.{decimals}%}"
        if shown[0] != shown[1]:
            break
    return shown


def closest_passages(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The best retrieved passages, best first by :func:`ranking_score` (the evidence's own order may be
    document-diverse), shown when the answer was not given or not supported. Each names its source; a
    passage kept before passages carried one (an old conversation or cached answer) names its id."""
    trace = result.get("trace", {})
    return sourced(closest(trace.get("passages") or [], holding=trace.get("held_by") or ()))


def sourced(passages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each passage naming its source; one kept before passages carried one names its id."""
    return [{**p, "source": p.get("source") or p["id"]} for p in passages]


def searched_only(result: dict[str, Any]) -> str | None:
    """“Staff handbook” (and “…”): the user's files the question named, or followed from the question
    before, the only ones searched; None for a question that searched the whole index, and for a summary
    (its documents were read in their order, not searched: :func:`summary_of` says which)."""
    named = None if result.get("summarized") else result.get("named_documents")
    return " and ".join(f"“{d['title']}”" for d in named) if named else None


def why_searched_only(result: dict[str, Any]) -> str:
    """Why :func:`searched_only` files were the only ones searched: the question named them, it follows one
    that searched them, or a passage of them is near it (:func:`nodes.retrieve.searched_files`)."""
    named = result.get("named_documents") or []
    if named and all(d.get("followed") for d in named):
        return "as did the question before"
    if named and all(d.get("near") for d in named):
        return "it holds a passage near the question" if len(named) == 1 else "they hold passages near the question"
    return "named in the question"


def summary_of(summarized: Mapping[str, Any]) -> str:
    """What a summary summarized, in words: "a summary of “Kettle K200 manual”"."""
    return "a summary of " + " and ".join(f"“{d['title']}”" for d in summarized["documents"])


def token_cost(tokens: Mapping[str, Any]) -> str:
    """An answer's tokens in words: "412 prompt + 9 output tokens (57 prompt tokens evaluated)"."""
    prompt = tokens["input"] if tokens.get("input") is not None else tokens["prompt"]
    cost = f"{prompt} prompt + {tokens['output']} output tokens"
    return cost + (f" ({tokens['evaluated']} prompt tokens evaluated)" if tokens.get("evaluated") is not None else "")


def cost_line(result: dict[str, Any]) -> str:
    """What an answer cost, in one line: the same words in the terminal and in the chat."""
    tokens, router = result["tokens"], result.get("router")
    seconds = f"{result['timing_ms']['total'] / 1000:.1f} s"
    if (instead := answered_without_reading(result)) is not None:
        return f"{instead}: nothing read or generated · {seconds}"
    tier = f"tier {result['tier']}" + (f" (router {router['confidence']:.0%})" if router else "")
    reading = result.get("question_type")
    if reading:  # where the cascade started, and why
        kind = "multi-hop" if reading["multi_hop_probability"] >= reading["threshold"] else "single-hop"
        tier += f" ({kind} question)"
    escalations = result.get("escalations") or 0
    if escalations:
        tier += f" → {result['final_tier']} ({escalations} escalation{'s' if escalations > 1 else ''})"
    described = result.get("described")
    if described and described["match"] == "more":  # no tier: read on in the document just described
        parts = [f"read on in “{described['title']}” (no model call)", seconds]
    elif described:  # no prompt: the answer is the passage
        parts = [tier, f"described by the first passage of “{described['title']}” (no model call)", seconds]
    elif (aged := result.get("aged")) is not None:  # no prompt: the answer is told from the passage
        parts = [tier, f"told from the description of “{aged['title']}” (no model call)", seconds]
    elif (compared := result.get("compared")) is not None and compared.get("more"):  # read on in the two compared
        parts = [f"read on in {both_titles(compared)} (no model call)", seconds]
    elif compared is not None:  # no prompt: the answer is the two passages
        parts = [tier, f"compared by the first passages of {both_titles(compared)} (no model call)", seconds]
    elif (summarized := result.get("summarized")) is not None:  # no tier: the document, in its order
        parts = [f"{summary_of(summarized)} (read {summarized['passages_read']} of its {summarized['passages']} passages)",
                 token_cost(tokens), seconds]
    else:
        parts = [tier, f"correction {'fired' if result['corrected'] else 'not needed'}", token_cost(tokens), seconds]
        if (files := searched_only(result)) is not None:
            parts.insert(1, f"searched {files} only")
    if result.get("energy"):
        parts.append(f"{result['energy']['joules']:.1f} J ({result['energy']['method']})")
    if result.get("cache"):
        parts.insert(0, f"answered from the query cache ({result['cache']['hit']} match)")
    return " · ".join(parts)


class RAGService:
    def __init__(self, resources: ResourceConfig | None = None, pipeline: PipelineConfig | None = None,
                 *, max_sessions: int = 1000, models: Sequence[str] | None = None,
                 max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES, max_in_flight: int = 64,
                 checkpointer: BaseCheckpointSaver | None = None):
        if max_sessions < 1:
            raise ConfigurationError(f"max_sessions must be >= 1, got {max_sessions}")
        if max_upload_bytes < 1:
            raise ConfigurationError(f"max_upload_bytes must be >= 1, got {max_upload_bytes}")
        if max_in_flight < 1:
            raise ConfigurationError(f"max_in_flight must be >= 1, got {max_in_flight}")
        self.resources = resources or ResourceConfig()
        self.pipeline = pipeline or PipelineConfig()
        self.models = self._check_models(models)
        self.max_upload_bytes = max_upload_bytes
        self.max_in_flight = max_in_flight
        self.checkpointer = checkpointer if checkpointer is not None else InMemorySaver()
        self.graph = build_graph().compile(checkpointer=self.checkpointer, name="adaptive-rag-chat")
        self.stateless_graph = build_graph().compile(name="adaptive-rag")
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, None] = OrderedDict()
        self._context: RAGContext | None = None
        self._generators: dict[str, Generator] = {}
        self._load_lock = threading.Lock()
        self._ingest_lock = threading.Lock()
        self._count_lock = threading.Lock()
        self._in_flight = 0
        self._lines: dict[str, Line] = {}
        self.answered = 0
        self.cancelled = 0

    def _check_models(self, models: Sequence[str] | None) -> tuple[str, ...]:
        """The generators clients may choose: the served one first, then other installed presets."""
        enabled = [self.resources.model]
        for name in models or ():
            if name not in PRESETS:
                raise ConfigurationError(f"unknown model preset {name!r}; valid presets: {', '.join(PRESETS)}")
            if not preset_installed(name):
                raise ConfigurationError(f"model preset {name!r} is not installed; install it with: "
                                         f"{PRESETS[name].install_hint}")
            if name not in enabled:
                enabled.append(name)
        return tuple(enabled)

    @classmethod
    def from_context(cls, ctx: RAGContext, model: str, **kwargs: Any) -> "RAGService":
        """A service over an already loaded context whose generator is the preset ``model``."""
        resources = ctx.resources or (ResourceConfig(index_dir=ctx.index.directory, model=model)
                                      if ctx.index.directory else ResourceConfig(model=model))
        service = cls(resources, ctx.pipeline, **kwargs)
        service._context = ctx
        service._generators[model] = ctx.generator
        return service

    def check_for(self, model: str | None = None) -> AnswerabilityModel | None:
        """The answerability check a question to ``model`` (the served one when ``None``) gets: the
        configured one, or the one fit without the answer probe when the probe does not read that
        generator (as :attr:`RAGContext.check` decides: from the generator once it is loaded, before
        from the GGUF file the model setting names)."""
        name = self.check_model(model)
        configured = self._resource_model("answerability", AnswerabilityModel.load)
        if configured is None or not configured.uses_answer_probe:
            return configured
        probe = self._resource_model("answer_probe", AnswerProbe.load)
        generator = self._generators.get(name)
        reads = probe is not None and (probe.reads(generator) if generator is not None else probe.model == gguf_file_name(name))
        return check_for_generator(configured, self._resource_model("answerability_fallback", AnswerabilityModel.load), reads)

    def default_abstain_threshold_for(self, model: str | None = None) -> float:
        """The threshold a question to ``model`` (the served one when ``None``) is checked against
        when it sets none: the configured one, else the one fitted with the check that model gets
        (:meth:`check_for`; 0 without a check: never abstain)."""
        if self.pipeline.abstain_threshold is not None:
            return self.pipeline.abstain_threshold
        check = self.check_for(model)
        return check.threshold if check is not None else 0.0

    @property
    def default_abstain_threshold(self) -> float:
        """:meth:`default_abstain_threshold_for` the served model."""
        return self.default_abstain_threshold_for(None)

    @property
    def default_multi_hop_threshold(self) -> float | None:
        """P(multi-hop) at or above which the cascade starts a question at the multi-hop tier when
        the question sets none: the configured one, else the one fitted with the loaded question-type
        model (``None`` without a model, or without a multi-hop tier: where a question starts does
        not depend on it)."""
        if self.pipeline.multi_hop_tier is None:
            return None
        model = self._resource_model("question_type", QuestionTypeModel.load)
        if model is None:
            return None
        return self.pipeline.multi_hop_threshold if self.pipeline.multi_hop_threshold is not None else model.threshold

    def _resource_model(self, name: str, load: Callable[[Path], Any]) -> Any:
        """The context's model ``name`` once it is loaded; before, the one the context will load
        from ``ResourceConfig.<name>`` (``None`` when none is configured)."""
        if self._context is not None:
            return getattr(self._context, name)
        path = getattr(self.resources, name)
        return load(path) if path else None

    # ------------------------------------------------------------------ resources
    def warm_up(self) -> RAGContext:
        with self._load_lock:
            if self._context is None:
                self._context = RAGContext.load(self.resources, self.pipeline)
                self._pin(self._context.generator)
                self._generators[self.resources.model] = self._context.generator
            return self._context

    def _pin(self, generator: Generator) -> None:
        """The answer prompt's instructions, evaluated before the first question (which paid for them)."""
        pin_answer_prefix(generator, self.pipeline.prompt_layout, self.pipeline.answer_examples)

    def check_model(self, model: str | None) -> str:
        """The generator a request names (the served one when it names none), if this server enables it."""
        name = model or self.resources.model
        if name not in self.models:
            raise ConfigurationError(f"model {name!r} is not available on this server; available: {', '.join(self.models)}")
        return name

    def generator(self, model: str | None) -> Generator:
        ctx = self.warm_up()
        name = self.check_model(model)
        if name not in self._generators:
            with self._load_lock:
                if name not in self._generators:
                    loaded = load_chat_model(name, n_threads=self.resources.n_threads, n_ctx=self.resources.n_ctx)
                    loaded.warm_up()
                    self._pin(loaded)
                    self._generators[name] = loaded
        return self._generators.get(name, ctx.generator)

    def _context_for(self, model: str | None) -> RAGContext:
        ctx = self.warm_up()
        generator = self.generator(model)
        return ctx if generator is ctx.generator else replace(ctx, generator=generator)

    @staticmethod
    def thread_id(session_id: str, owner: str | None) -> str:
        """The checkpointer's key of a session: with logins on, another user's session of the same id
        is another thread, so nobody reads or deletes a conversation they did not start."""
        session_id = validate_session_id(session_id)
        if owner is None:
            return session_id
        return f"u{hashlib.sha256(owner.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}.{session_id}"

    def _graph_for(self, session_id: str | None, owner: str | None):
        """The checkpointed graph for a conversation (least recently used threads beyond
        ``max_sessions`` are forgotten), the stateless one for a single question."""
        if session_id is None:
            return self.stateless_graph, {}
        thread = self.thread_id(session_id, owner)
        with self._count_lock:
            self._sessions.pop(thread, None)
            self._sessions[thread] = None
            expired = []
            while len(self._sessions) > self.max_sessions:
                expired.append(self._sessions.popitem(last=False)[0])
        for old in expired:
            self.checkpointer.delete_thread(old)
        return self.graph, {"configurable": {"thread_id": thread}}

    # ------------------------------------------------------------------ questions
    def _prepare(self, question: Any, session_id: str | None, policy: str | None, tier: str | None,
                 model: str | None, owner: str | None, cancel: threading.Event | None,
                 abstain_threshold: float | None = None, multi_hop_threshold: float | None = None,
                 fresh: bool = False):
        question = validate_question(question, self.pipeline.max_question_chars)
        overrides: dict[str, Any] = {key: value for key, value in (("policy", policy), ("tier", tier)) if value}
        for name, value in (("abstain_threshold", abstain_threshold), ("multi_hop_threshold", multi_hop_threshold)):
            if value is not None:
                if not is_probability(value):
                    raise not_a_probability(name, value)
                overrides[name] = float(value)
        self.pipeline.with_overrides(overrides)  # an unknown policy or tier fails here, before queueing
        ctx = self._context_for(model)
        graph, config = self._graph_for(session_id, owner)  # a malformed session id fails here, before queueing
        if cancel is not None:
            config = {**config, "callbacks": [_CancelOnSignal(cancel)]}
        # fresh always given: a question of the thread cut off before finish-turn cleared it holds no sway
        return graph, {"question": question, "overrides": overrides, "fresh": bool(fresh)}, ctx, config or None

    def _enter(self, model: str | None) -> tuple[Line, object]:
        """A place in the line of the question's generator (or :class:`TooBusyError`)."""
        with self._count_lock:
            if self._in_flight >= self.max_in_flight:
                raise TooBusyError(f"the server is answering {self._in_flight} questions already; try again shortly")
            self._in_flight += 1
            line = self._lines.setdefault(model or self.resources.model, Line())
        return line, line.join()

    def _leave(self, line: Line, ticket: object, outcome: str) -> None:
        line.leave(ticket)
        with self._count_lock:
            self._in_flight -= 1
            self.answered += outcome == "answered"
            self.cancelled += outcome == "cancelled"

    @staticmethod
    def _wait_turn(line: Line, ticket: object, cancel: threading.Event | None) -> Iterator[int]:
        """Wait for the questions ahead, yielding how many are left each time it changes."""
        ahead = line.ahead(ticket)
        while ahead:
            if cancel is not None and cancel.is_set():
                raise Cancelled("the question was cancelled while waiting")
            left = line.wait(ticket, timeout=_WAIT_POLL_S)
            if left != ahead:
                ahead = left
                yield ahead

    def ask(self, question: Any, *, session_id: str | None = None, policy: str | None = None,
            tier: str | None = None, model: str | None = None, owner: str | None = None,
            cancel: threading.Event | None = None, abstain_threshold: float | None = None,
            multi_hop_threshold: float | None = None, fresh: bool = False) -> dict[str, Any]:
        """The answer to one question. ``owner``: the logged-in user (sessions are theirs alone);
        ``cancel``: set it to stop the run (raises :class:`Cancelled`); ``abstain_threshold``:
        withhold an answer less likely right than this (0 never, 1 always; default: the fitted one);
        ``multi_hop_threshold``: the cascade starts a question this likely multi-hop, or more, at
        the multi-hop tier (0 every question, 1 only a certain one; default: the fitted one);
        ``fresh``: answer afresh, not from the query cache (a retry; the answer replaces the cached one)."""
        graph, inputs, ctx, config = self._prepare(question, session_id, policy, tier, model, owner, cancel,
                                                   abstain_threshold, multi_hop_threshold, fresh)
        line, ticket = self._enter(model)
        start, outcome = time.perf_counter(), "failed"
        try:
            for _ in self._wait_turn(line, ticket, cancel):
                pass
            result = graph.invoke(inputs, config, context=ctx)
            outcome = "answered"
        except (Cancelled, KeyboardInterrupt):
            if cancel is not None:
                cancel.set()  # an interrupt reaches the main thread, not the worker that may be generating
            outcome = "cancelled"
            raise
        finally:
            self._leave(line, ticket, outcome)
        public = public_result(result, (time.perf_counter() - start) * 1000)
        self._keep_figures(graph, config, public)
        return public

    def stream(self, question: Any, *, session_id: str | None = None, policy: str | None = None,
               tier: str | None = None, model: str | None = None, owner: str | None = None,
               cancel: threading.Event | None = None, abstain_threshold: float | None = None,
               multi_hop_threshold: float | None = None, fresh: bool = False) -> Iterator[dict[str, Any]]:
        """Events: ``status`` (the questions ahead in line, again each time fewer are left, then
        each node as it finishes), ``token`` (answer
        text as generated), ``escalate`` (the cascade found the answer so far unsure, ``by``
        ``confidence``, or the check would have withheld it, ``by`` ``check``, and extends the
        evidence: the tokens that follow are a new answer, replacing the one streamed so far),
        and a final ``result`` (as :meth:`ask` returns). Input errors are
        raised by the first ``next()``, before anything is queued. Closing the iterator, or
        setting ``cancel``, stops the run."""
        cancel = cancel or threading.Event()
        graph, inputs, ctx, config = self._prepare(question, session_id, policy, tier, model, owner, cancel,
                                                   abstain_threshold, multi_hop_threshold, fresh)
        line, ticket = self._enter(model)
        start, outcome = time.perf_counter(), "failed"
        try:
            yield {"type": "status", "requests_ahead": line.ahead(ticket)}
            for ahead in self._wait_turn(line, ticket, cancel):
                yield {"type": "status", "requests_ahead": ahead}
            final: dict[str, Any] = {}
            for mode, payload in graph.stream(inputs, config, context=ctx, stream_mode=["messages", "updates", "values"]):
                if mode == "messages":
                    chunk, meta = payload
                    if meta.get("langgraph_node") in ANSWERING_NODES and chunk.text:
                        yield {"type": "token", "text": chunk.text}
                elif mode == "updates":
                    for node, update in payload.items():
                        yield {"type": "status", "node": node}
                        if node in ("grade_answer", "check_answer") and update and "settings" in update:
                            step = update["steps"][-1]
                            yield {"type": "escalate", "from": step["tier"], "to": update["settings"]["tier"],
                                   "answer": step["answer"], "by": step.get("extended_by", "confidence"),
                                   **({"reason": step["rule_reason"]} if step.get("rule_reason") else {})}
                else:
                    final = payload
            outcome = "answered"
        except (Cancelled, GeneratorExit, KeyboardInterrupt):  # the last: Ctrl-C in the terminal chat
            cancel.set()  # a closed stream stops the generation still running in LangGraph's workers
            outcome = "cancelled"
            raise
        finally:
            self._leave(line, ticket, outcome)
        public = public_result(final, (time.perf_counter() - start) * 1000)
        self._keep_figures(graph, config, public)
        yield {"type": "result", **public}

    def _keep_figures(self, graph, config: RunnableConfig | None, result: dict[str, Any]) -> None:
        """Keep the answer's figures (:func:`kept_figures`) with the conversation's turn it just
        finished, which the graph wrote without them: the time is measured around the graph. A
        question asked without a session keeps no turn; a turn that is not this answer's (another
        question of the conversation finished since) is left as it is."""
        if graph is not self.graph or not config:
            return
        thread: RunnableConfig = {"configurable": dict(config["configurable"])}
        state = graph.get_state(thread)
        turns = list(state.values.get("turns", [])) if state and state.values else []
        if not turns or "figures" in turns[-1] or turns[-1]["answer"] != result["answer"]:
            return
        graph.update_state(thread, {"turns": Overwrite([*turns[:-1], {**turns[-1], "figures": kept_figures(result)}])},
                           as_node="finish_turn")

    def reset_session(self, session_id: str, owner: str | None = None) -> None:
        thread = self.thread_id(session_id, owner)
        with self._count_lock:
            self._sessions.pop(thread, None)
        self.checkpointer.delete_thread(thread)

    def _turns(self, session_id: str, owner: str | None) -> tuple[RunnableConfig, list[dict[str, Any]]]:
        config: RunnableConfig = {"configurable": {"thread_id": self.thread_id(session_id, owner)}}
        state = self.graph.get_state(config)
        return config, list(state.values.get("turns", [])) if state and state.values else []

    def history(self, session_id: str, owner: str | None = None) -> list[dict[str, Any]]:
        """The conversation's turns: question, standalone rewrite, answer, its citations and how many passages
        it read (0: closed book; ``None`` for a turn stored before session 32); whether a cited passage
        holds the answer and whether it was given, the check's decision, the escalations, the
        closest passages where no cited one holds an answer, and the query cache's match for an
        answer given before (``None`` for the check and escalations of a turn stored before session 48);
        the tiers and tokens (``None`` for a turn stored before session 49); the rest of its figures
        (:data:`FIGURES` and the trace's part they read, ``None`` for a turn stored before session 50); for an
        answer that is the first passage of the document about the thing asked, which (``described``); for a
        summary, of what (``summarized``); for an age told from a description, whose (``aged``); for a
        comparison, of which documents (``compared``)."""
        _, turns = self._turns(session_id, owner)
        return [{**dict.fromkeys((*FIGURES, "trace")), **(t.get("figures") or {}),
                 "question": t["question"], "standalone_question": t["standalone_question"], "answer": t["answer"],
                 "citations": [public_citation(c) for c in t.get("citations", [])],
                 "passages_read": t.get("passages_read"),
                 "supported": t.get("supported", bool(t.get("citations"))),
                 "abstained": t.get("abstained", is_abstention(t["answer"])),
                 "answerability": public_check(t.get("answerability")), "escalations": t.get("escalations"),
                 "closest": public_passages(t.get("closest") or []), "cache": t.get("cache"),
                 "described": t.get("described"), "summarized": t.get("summarized"), "aged": t.get("aged"),
                 "compared": t.get("compared"),
                 # the turn holds them since session 62; a turn of session 61 kept them with its figures
                 "named_documents": t.get("named_documents") or (t.get("figures") or {}).get("named_documents"),
                 "tier": t.get("tier"), "final_tier": t.get("final_tier"), "tokens": t.get("tokens")} for t in turns]

    def undo_last_turn(self, session_id: str, owner: str | None = None) -> dict[str, Any]:
        """Take the conversation's last question and answer back (a retry, an undo), so the next
        question neither reads it as history nor is rewritten as its follow-up."""
        config, turns = self._turns(session_id, owner)
        if not turns:
            raise NotFoundError(f"session {session_id!r} has no turn to take back")
        self.graph.update_state(config, {"turns": Overwrite(turns[:-1])}, as_node="grade_answer")
        return {"question": turns[-1]["question"], "answer": turns[-1]["answer"]}

    # ------------------------------------------------------------------ documents
    def add_documents(self, paths: Sequence[str | Path], *, allowed_dirs: Sequence[str | Path] | None = None,
                      on_progress: Callable[[int, int], None] | None = None) -> IngestReport:
        """Copy uploaded files into the uploads folder (named by content hash, so re-uploads are
        recognised; each copy written whole or not at all) and add them to the live index, which is
        saved before returning. The stored copy of a file that is skipped does not stay.

        ``allowed_dirs``: where uploads may come from (the chat passes its upload folder); a path
        outside them, a link, or a file over ``max_upload_bytes`` is skipped unread, with the reason.
        """
        ctx = self.warm_up()
        roots = [Path(d).resolve() for d in allowed_dirs] if allowed_dirs is not None else None
        uploads = cache_dir() / "uploads"
        uploads.mkdir(parents=True, exist_ok=True)
        items: list[SourceDocument | Skipped] = []
        stored_now: list[Path] = []  # this upload's stored copies: those no document holds go again
        for raw in paths:
            path = Path(raw)
            refusal = self._upload_refusal(path, roots)
            if refusal:
                items.append(Skipped(path.name, refusal))
                continue
            try:
                digest = sha256_file(path)[:UPLOAD_DIGEST_CHARS]
                stored = uploads / f"{digest}-{path.name}"
                if not stored.exists():
                    with atomic_path(stored) as partial:  # a copy cut off must not pass for the file
                        shutil.copyfile(path, partial)
                stored_now.append(stored)
            except OSError as exc:
                items.append(Skipped(path.name, f"unreadable: {exc.strerror or exc}"))
                continue
            item = read_file(stored, name=path.name)
            if isinstance(item, Skipped):
                items.append(Skipped(path.name, item.reason))
            else:  # ids name the stored copy, not where this server keeps it
                items.append(replace(item, doc_id=f"{UPLOAD_PREFIX}{stored.name}"))
        with self._ingest_lock:
            # A file uploaded again under its name replaces the earlier version (once the new one is in),
            # and a file with the bytes of another one the knowledge base holds is skipped as a copy.
            fresh = {item.metadata["name"]: item.doc_id for item in items if isinstance(item, SourceDocument)}
            earlier = [doc for doc in ctx.index.documents() if doc["metadata"].get("source") == "file"
                       and doc["metadata"].get("name") in fresh and doc["doc_id"] != fresh[doc["metadata"]["name"]]]
            report = ingest(items, ctx.index, ctx.embedder, on_progress=on_progress,
                            replacing=[doc["doc_id"] for doc in earlier])
            skipped = {s.path for s in report.skipped}  # a file skipped (a copy, empty) replaces nothing
            for doc in earlier:
                if doc["metadata"]["name"] not in skipped:
                    self._remove_document(ctx, doc)
                    report.replaced.append(doc["metadata"]["name"])
            held = {Path(doc["metadata"]["path"]).resolve() for doc in ctx.index.documents()
                    if doc["metadata"].get("path")}  # the stored copies the documents left in the index read
            if report.replaced:
                ctx.index.save()
            for copy in {p.resolve() for p in stored_now} - held:  # skipped: empty, unreadable, a copy of another upload
                copy.unlink(missing_ok=True)
            return report

    def documents(self) -> list[dict[str, Any]]:
        """The knowledge base's documents: id, title, source (a page's address, a file's name),
        kind (``file`` for uploads) and passage count, in the order they were added."""
        ctx = self.warm_up()
        return [{"doc_id": d["doc_id"], "title": d["title"], "source": source_of(d["metadata"], d["doc_id"]),
                 "kind": d["metadata"].get("source", "unknown"), "passages": d["passages"]}
                for d in ctx.index.documents()]

    def delete_document(self, doc_id: str) -> dict[str, Any]:
        """Take a document's passages out of the index, which is saved (atomically) before this
        returns; an uploaded file's stored copy goes too."""
        ctx = self.warm_up()
        with self._ingest_lock:
            doc = next((d for d in ctx.index.documents() if d["doc_id"] == doc_id), None)
            if doc is None:
                raise NotFoundError(f"no document {doc_id!r} in the knowledge base")
            removed = self._remove_document(ctx, doc)
            ctx.index.save()
        return {"doc_id": doc_id, "title": doc["title"], "passages_removed": removed,
                "index_passages": len(ctx.index)}

    @staticmethod
    def _remove_document(ctx: RAGContext, doc: dict[str, Any]) -> int:
        removed = ctx.index.remove(ctx.index.document_passages(doc["doc_id"]))
        stored = doc["metadata"].get("path")
        if stored and Path(stored).parent == (cache_dir() / "uploads").resolve():
            Path(stored).unlink(missing_ok=True)
        return removed

    def _upload_refusal(self, path: Path, roots: list[Path] | None) -> str | None:
        if path.is_symlink():
            return "refused: a symbolic link, not an uploaded file"
        if roots is not None:
            resolved = path.resolve()
            if not any(resolved.is_relative_to(root) for root in roots):
                return "refused: not a file uploaded to this server"
        try:
            if not path.is_file():
                return "not a regular file"
            size = path.stat().st_size
        except OSError as exc:
            return f"unreadable: {exc.strerror or exc}"
        if size > self.max_upload_bytes:
            return f"too large: {size / 2**20:.1f} MB, the limit is {self.max_upload_bytes / 2**20:.0f} MB"
        return None

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
            "models": list(self.models),
            "loaded_models": sorted(self._generators),
            "index_passages": len(ctx.index) if ctx else None,
            "reranker": ctx.reranker.name if ctx else None,
            "embedder_runtime": ctx.embedder.query_runtime if ctx else None,
            "policy": self.pipeline.policy,
            "router": self._router_status(ctx),
            "in_flight": self._in_flight,
            "answered": self.answered,
            "cancelled": self.cancelled,
            "max_upload_bytes": self.max_upload_bytes,
        }

