"""The Gradio chat: streamed answers with their sources and a plain-words cost line (the figures a
click away); follow-up questions; retry and undo that take the answer back on the server too;
a stop button; documents added, listed and removed; a settings sidebar.

The browser keeps its conversation id and settings (``gr.BrowserState``, encrypted with a key kept
in the cache folder, so a server restart does not make them unreadable); the conversation itself
lives in the server's store, and a reload shows it again. No error leaves the chat unusable: a
refused question is a warning and the box keeps it; a failure while answering becomes a message.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import threading
import uuid
from pathlib import Path
from typing import Any, Iterator

import gradio as gr

from app.errors import HANDLED, describe
from app.security import USER_KEY
from app.service import (FIGURES, Cancelled, RAGService, abstention_note, answered_without_reading, apart, both_titles,
                         closest_passages, passages_read, read_as, searched_only, summary_of, unsupported_note,
                         why_searched_only)
from components.ingest import IngestReport
from components.model_files import cache_dir
from components.passages import ranking_score
from components.sources import SUPPORTED_SUFFIXES
from components.storage import atomic_write_text
from nodes.check_answer import REASON_TOLD
from pipeline.configuration import DEFAULT_TIERS, POLICIES, QuestionError, is_probability, validate_question

log = logging.getLogger(__name__)

EXAMPLES = [
    "Who directed 2001: A Space Odyssey?",
    "Who shared the 1903 Nobel Prize in Physics with Marie Curie?",
    "When was the Eiffel Tower built?",
    "What is the highest mountain on Earth?",
]
HEADER = """# Adaptive RAG
Answers from a local knowledge base (English Wikipedia summaries and your documents) with a small
local model, spending only the retrieval and generation budget each question needs. Programs can ask
it too, through its [HTTP API](docs)."""
FOOTER_LINKS = ["gradio", "settings"]
"""Gradio's footer without its "Use via API" page, which documents the chat's own event handlers
("/lambda", "/document_list_1", ...), not the HTTP API the header links to."""
PHONE_WIDTH = 768  # below this many CSS pixels the settings start closed
ASK = "Ask a question…"
LOADING = "Loading your conversation…"
"""The question box's placeholder, until the page has its conversation back (then :data:`ASK`)."""

CSS = """
footer > .divider:first-child { display: none; }  /* Gradio keeps the API link's divider when FOOTER_LINKS drops it */
@media (max-width: 768px) {  /* Gradio opens the sidebar across the whole phone, its toggle off screen */
  #sidebar.sidebar { width: calc(100vw - 56px) !important; }
  #sidebar.sidebar:not(.open) { left: calc(56px - 100vw) !important; }
  #sidebar.sidebar.open { left: 0 !important; transform: none !important; }
}
"""
CSS += """
#chatbot a.cite { text-decoration: none; cursor: pointer; font-weight: 600; }
/* Gradio lays the chat box's label and buttons (26 px tall) over the top of the scrolling
   conversation, so a wide or scrolled-up question showed through them: it scrolls below them */
#chatbot > .wrapper { padding-top: 30px; box-sizing: border-box; }
#documents .cell-wrap { font-family: var(--font); }  /* the page's font, not code's: the sidebar is narrow */
#documents td .cell-wrap { overflow-wrap: anywhere; }  /* a long file name wraps inside its column */
#documents th .header-text { white-space: nowrap; }
/* the files chosen for upload: Gradio keeps 128 px for the size column, which left a name about
   35 px in the sidebar ("p….md"); the size takes what it needs and a long name wraps, never cut */
#upload td.download { min-width: max-content; }
#upload td.filename .stem { white-space: normal; overflow-wrap: anywhere; }
/* with files chosen, the box's two buttons sit over its label's end: the label wraps short of them */
#upload:has(.icon-button-wrapper) > label[data-testid="block-label"] { max-width: calc(100% - 56px); white-space: normal; }
"""
"""Pass to ``gr.mount_gradio_app`` (Gradio 6 takes page CSS there, not in ``Blocks``)."""

JS = """
() => {
  // Citation markers become links to their passage: a click opens the numbered source under the
  // answer and scrolls to it. Only the page changes; the message stays plain text, so copying an
  // answer copies no markup.
  const answers = '#chatbot .bot.message > .message:not(.thought) .message-content .md';
  const link = () => {
    document.querySelectorAll(answers).forEach((md) => {
      const walker = document.createTreeWalker(md, NodeFilter.SHOW_TEXT);
      const found = [];
      while (walker.nextNode()) {
        const node = walker.currentNode;
        if (/\\[\\d+\\]/.test(node.nodeValue) && !node.parentElement.closest('a')) found.push(node);
      }
      found.forEach((node) => {
        const parts = document.createDocumentFragment();
        node.nodeValue.split(/(\\[\\d+\\])/).forEach((part) => {
          const marker = part.match(/^\\[(\\d+)\\]$/);
          if (marker) {
            const a = document.createElement('a');
            a.href = '#';
            a.className = 'cite';
            a.dataset.n = marker[1];
            a.title = 'show source ' + marker[1];
            a.textContent = part;
            parts.appendChild(a);
          } else if (part) {
            parts.appendChild(document.createTextNode(part));
          }
        });
        node.replaceWith(parts);
      });
    });
  };
  document.addEventListener('click', (event) => {
    const a = event.target.closest && event.target.closest('#chatbot a.cite');
    if (!a) return;
    event.preventDefault();
    const titles = a.closest('.bot.message').querySelectorAll('.thought .title');
    const title = [...titles].find((t) => t.textContent.trim().startsWith('[' + a.dataset.n + ']'));
    if (!title) return;
    if (!title.classList.contains('expanded')) title.click();
    title.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  });
  new MutationObserver(link).observe(document.body, { childList: true, subtree: true, characterData: true });
  link();
}
"""
"""Pass to ``gr.mount_gradio_app`` with :data:`CSS`."""


def theme() -> gr.themes.Base:
    """Gradio's default theme without the fonts' semi-bold (600) faces: Gradio 6.31 bundles those two
    files as subsets (Source Sans Pro's holds 55 glyphs: A, B and Cyrillic; IBM Plex Mono's 75), so
    semi-bold text (the title, the sidebar's headings, the upload buttons, the citation markers) was
    drawn in two fonts, the A and B in one and every other letter in the system's bold sans. With no
    600 face the browser draws semi-bold text with the intact bold (700) one. Pass to
    ``gr.mount_gradio_app`` with :data:`CSS`."""
    return gr.themes.Default(
        font=(gr.themes.LocalFont("Source Sans Pro", weights=(400, 700)), "ui-sans-serif", "system-ui", "sans-serif"),
        font_mono=(gr.themes.LocalFont("IBM Plex Mono", weights=(400, 700)), "ui-monospace", "Consolas", "monospace"))


TRANSLATIONS = {"en": {"common.complete": "Complete", "common.upload": "Upload"}}
"""Strings Gradio's own English lacks (``gr.I18n``; other languages fall back to English): after each
finished event it announces ``common.complete`` in a live region, and with files chosen the upload
box's button for more is named ``common.upload``, so a screen reader read the keys out."""

_UNSAFE = re.compile(r"([\\<>\[\]])")


def setting_slider(*args: Any, **kwargs: Any) -> gr.Slider:
    """A slider that refuses a number typed out of its range by naming itself and the range (Gradio's
    own message, "Value 150 is greater than maximum value 100.0.", names neither). Its ``preprocess``
    is wrapped on the instance: a subclass would do it, but Gradio writes a ``.pyi`` stub beside any
    module that defines a component class."""
    slider = gr.Slider(*args, **kwargs)
    check = slider.preprocess

    def preprocess(payload: float) -> float:
        low, high = slider.minimum, slider.maximum
        if not low <= payload <= high:
            # the person's mistake, not the server's: no traceback in the log
            raise gr.Error(f"{slider.label} cannot be {payload:g}: choose from {low:g} to {high:g}.",
                           print_exception=False)
        return check(payload)

    slider.preprocess = preprocess  # type: ignore[method-assign]
    return slider


def plain(text: str) -> str:
    """Text from a document or the model shown as text: no HTML (a ``<form>`` or ``<img>`` stays
    literal), no Markdown images or links (nothing is fetched from another site). Only the
    characters that make those are escaped, so what the copy button puts on the clipboard (the
    message's source) reads as the text: "Tom & Jerry (1940)" stays as it is."""
    return _UNSAFE.sub(r"\\\1", text)


def unplain(shown: str) -> str:
    """The text :func:`plain` was given."""
    return re.sub(r"\\(.)", r"\1", shown, flags=re.DOTALL)


def upload_folder() -> Path:
    """Where Gradio keeps the files its upload component received: the only files the chat ingests."""
    from gradio.utils import get_upload_folder

    return Path(get_upload_folder()).resolve()


def browser_secret() -> str:
    """The key the browser's saved state is encrypted with: made once, kept in the cache folder,
    so a restarted server still reads what browsers saved."""
    path = cache_dir() / "ui-secret"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        key = secrets.token_hex(32)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, key)
        os.chmod(path, 0o600)
        return key


def _owner(request: gr.Request | None) -> str | None:
    """The logged-in user (when logins are on), so their sessions are theirs alone."""
    inner = getattr(request, "request", None)
    scope = getattr(inner, "scope", None) or {}
    return scope.get(USER_KEY)


# ---------------------------------------------------------------------- what an answer shows
def summary_line(result: dict[str, Any]) -> str:
    """What the answer cost, in words a person reads: time, evidence read, and whether it had to
    read more."""
    summarized = result.get("summarized")
    # a summary's prompt gives each paragraph of the document as one evidence item: count the passages it read
    items = summarized["passages_read"] if summarized else passages_read(result)
    read = f"{items} passage{'s' if items != 1 else ''}" if items else "no passages"
    parts = [f"read {read}"]
    if result.get("cache"):  # nothing was read or generated: the answer was given before
        parts = [f"answered before (to “{result['cache']['cached_question']}”)"]
    elif (instead := answered_without_reading(result)) is not None:
        parts = [f"read nothing: {instead}"]
    elif items is None:  # a turn kept before session 32 does not say
        parts = []
    if "timing_ms" in result:  # an answer shown again after a reload has no time of its own
        parts.insert(0, f"{result['timing_ms']['total'] / 1000:.1f} s")
    escalations = result.get("escalations") or 0
    if escalations:
        parts.append(read_more(escalations, len(set_aside(result))))
    check = result.get("answerability") or {}
    if check.get("by") == "score" and check.get("decision") == "answer":
        knob = check.get("knob")  # None: a turn kept before the trace had it
        if check.get("multi_hop") and (knob is None or check["score"] < knob):
            # given only because a multi-hop question is held to the lower bar the setting moves, which it does not show
            score, threshold = apart(check["score"], check["threshold"])
            parts.append(f"{score} likely right, over the {threshold} bar of a question read as multi-hop")
        else:
            parts.append(f"{check['score']:.0%} likely right")
    described = result.get("described")
    if described:
        read = "more of" if described["match"] == "more" else "the first passage of"
        parts.append(f"{read} “{described['title']}”, as written")
    if aged := result.get("aged"):
        parts.append(f"the age in the description of “{aged['title']}”")
    if compared := result.get("compared"):
        read = "more of" if compared.get("more") else "the first passages of"
        parts.append(f"{read} {both_titles(compared)}, as written")
    if summarized:
        cut = summarized["passages_read"] < summarized["passages"]
        parts.append(summary_of(summarized) + (f" ({summarized['passages_read']} of its {summarized['passages']} "
                                              f"passages)" if cut else ""))
    if (files := searched_only(result)) is not None:
        parts.append(f"searched {files} only ({why_searched_only(result)})")
    if result.get("rewritten_question"):
        parts.append("follow-up read as: " + result["rewritten_question"])
    return " · ".join(parts)


def figures(result: dict[str, Any]) -> str:
    """The raw figures behind the summary line, a line each."""
    tokens, router = result["tokens"], result.get("router")
    rows = [tier_row(result)]
    if result.get("written_answer"):
        rows.append(("answer as written", result["written_answer"]))
    if router:
        rows.append(("router confidence", f"{router['confidence']:.0%}"))
    reading = result.get("question_type")
    if reading:  # why the cascade started where it did
        above = reading["multi_hop_probability"] >= reading["threshold"]
        rows.append(("multi-hop question", f"{reading['multi_hop_probability']:.1%} likely, "
                                           f"{'at or above' if above else 'below'} the threshold {reading['threshold']:.1%}: "
                                           f"started at {reading['start']}"))
    rows += [*token_rows(tokens), ("corrective retrieval", "yes" if result["corrected"] else "no")]
    trace = result.get("trace") or {}
    cut = [step.get("output_tokens") for step in trace.get("steps") or [] if step.get("stopped_early")]
    if cut:  # answers the cascade extended, stopped as soon as they were known to be unsure
        rows.append(("unsure answers stopped early", f"{len(cut)}, after {', '.join(map(str, cut))} token(s)"))
    for step in set_aside(result):  # answers a rule said are another's: the cascade read more instead of withholding
        rows.append(("set aside", f"“{step.get('answer', '')}”: {step.get('rule_reason', '')}"))
    check = result.get("answerability") or {}
    if check.get("score") is not None:
        rows.append(answerability_figure(check))
    if trace.get("gate"):
        gate = trace["gate"]
        rows.append(("retrieve-or-not", f"{gate['decision']} (closed book {gate['closed_book_probability']:.0%}, "
                                        f"threshold {gate['threshold']:.0%})"))
    if trace.get("probe_router"):
        route = trace["probe_router"]
        enough = ", ".join(f"{rung} {p:.0%}" for rung, p in route["enough_probability"].items())
        rows.append(("probe router", f"{route['tier']} (enough: {enough}; threshold {route['threshold']:.0%})"))
    if trace.get("self_route"):
        rows.append(("the model chose", trace["self_route"]["choice"]))
    if result.get("cache"):
        rows.append(("query cache", f"{result['cache']['hit']} match, similarity {result['cache']['similarity']:.2f}"))
    if result.get("energy"):
        rows.append(("energy", f"{result['energy']['joules']:.1f} J ({result['energy']['method']})"))
    rows += [(f"{node} (ms)", f"{ms:,.0f}") for node, ms in result["timing_ms"].items()]
    return bullets(rows)


def bullets(rows: list[tuple[str, str]]) -> str:
    """Figures as the chat lists them, a line each."""
    return "\n".join(f"- {k}: {plain(v)}" for k, v in rows)


def set_aside(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The steps whose answer a rule set aside to read more (``extended_by: "rule"``, with the answer and the rule's
    reason: :data:`nodes.check_answer.EXTENDED_RULES`)."""
    return [step for step in (result.get("trace") or {}).get("steps") or [] if step.get("extended_by") == "rule"]


def read_more(escalations: int, aside: int) -> str:
    """Why the cascade read more, ``aside`` of its ``escalations`` because a rule set the answer aside. Reading more
    ends when an answer is sure or when there is no more to read: "until it was sure" is not said."""
    if not aside:
        return ("first answer was unsure, so it read more" if escalations == 1
                else f"answers were unsure, so it read more {escalations} times")
    if aside == escalations:
        return ("first answer was set aside, so it read more" if escalations == 1
                else f"answers were set aside, so it read more {escalations} times")
    return f"read more {escalations} times: {escalations - aside} unsure, {aside} set aside"


def tier_row(result: dict[str, Any]) -> tuple[str, str]:
    """The tier an answer started at, and where the cascade stopped if it read more."""
    if (instead := answered_without_reading(result)) is not None:
        return "tier", f"none: {instead}"
    if (result.get("described") or {}).get("match") == "more":
        return "tier", f"none: read on in “{result['described']['title']}”"
    if (result.get("compared") or {}).get("more"):
        return "tier", f"none: read on in {both_titles(result['compared'])}"
    if result.get("summarized"):
        return "tier", f"none: {summary_of(result['summarized'])}"
    return "tier", result["tier"] if not result.get("escalations") else f"{result['tier']} → {result['final_tier']}"


def token_rows(tokens: dict[str, Any]) -> list[tuple[str, str]]:
    """An answer's tokens: every prompt's, those the model computed (the rest reused), its output."""
    prompt = tokens["input"] if tokens.get("input") is not None else tokens["prompt"]
    return [("prompt tokens", f"{prompt}"), ("prompt tokens computed (the rest reused)", f"{tokens.get('evaluated')}"),
            ("output tokens", f"{tokens['output']}")]


def answerability_figure(check: dict[str, Any]) -> tuple[str, str]:
    """The check's row of the figures: the score in percent against the threshold as the "Abstain
    below (%)" setting shows it, and the decision."""
    score, threshold = apart(check["score"], check["threshold"])
    bar = (" (an answer from the Wikipedia summaries)" if check.get("fit_on") == "wikipedia"
           else " (a multi-hop question's)" if check.get("multi_hop") else "")
    ruled = (", but no passage states the age" if check.get("by") == "age"
             else f", but it is {check['reason']}" if check.get("by") in REASON_TOLD else "")
    return "answerability", f"{score} likely right against threshold {threshold}{bar}{ruled}: {check['decision']}"


def rounded(value: Any) -> Any:
    """The trace with floats to four significant digits, for reading."""
    if isinstance(value, float):
        return float(f"{value:.4g}")
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value


def _source_message(number: int, title: str, text: str, source: str, score: float | None) -> gr.ChatMessage:
    link = f"[{plain(source)}]({source})" if re.match(r"https?://[^\s()<>]+$", source) else plain(source)
    heading = f"[{number}] {title}" + (f" · score {score:.2f}" if score is not None else "")
    return gr.ChatMessage(role="assistant", content=f"{plain(text)}\n\n{link}",
                          metadata={"title": heading, "status": "done"})


def answer_text(result: dict[str, Any]) -> str:
    """The answer with its citation markers, numbered in the order the sources are shown; a
    warning when no shown passage holds it; for an abstention, the note that says so."""
    citations = result["citations"]
    sides = result["answer"].split("\n\n")
    if result.get("compared") and len(sides) == len(citations):  # a paragraph per passage: each marked with its own
        text = "\n\n".join(f"{plain(side)} [{i}]" for i, side in enumerate(sides, 1))
    else:
        markers = " ".join(f"[{i}]" for i in range(1, len(citations) + 1))
        text = f"{plain(result['answer'])} {markers}".strip()
    note = abstention_note(result)
    if note:  # the note says it in words; the abstention's wording adds nothing
        return f"{plain(note)} The closest passages it found are below."
    warning = unsupported_note(result)
    return f"{text}\n\n⚠️ {warning}" if warning else text


def result_messages(result: dict[str, Any], show_trace: bool) -> list[gr.ChatMessage]:
    """The answer (only the answer, so copying it copies nothing else), one expandable message per
    cited passage, numbered as the markers are, the cost in words with the figures a click away,
    and the trace when asked for."""
    messages = [*answer_messages(result, closest_passages(result)),
                gr.ChatMessage(role="assistant", content=figures(result),
                               metadata={"title": summary_line(result), "status": "done"})]
    if show_trace:
        trace = json.dumps(rounded(result["trace"]), indent=2, ensure_ascii=False)
        messages.append(gr.ChatMessage(role="assistant", content=f"```json\n{trace}\n```",
                                       metadata={"title": "Trace", "status": "done"}))
    return messages


def answer_messages(result: dict[str, Any], closest: list[dict[str, Any]]) -> list[gr.ChatMessage]:
    """The answer, then its cited passages, or the ``closest`` passages found where no cited one holds it."""
    messages = [gr.ChatMessage(role="assistant", content=answer_text(result))]
    for i, c in enumerate(result["citations"], 1):
        messages.append(_source_message(i, c["title"], c["text"], c["source"], c["score"]))
    if not result["citations"] and (result.get("abstained") or not result.get("supported", True)):
        for i, p in enumerate(closest, 1):
            shown = "holds the answer, not read" if p.get("holds_answer") else "closest"
            messages.append(_source_message(i, f"{shown}: {p['title']}", p["text"], p["source"], ranking_score(p)))
    return messages


def turn_messages(turn: dict[str, Any]) -> list[gr.ChatMessage]:
    """An earlier turn (as :meth:`RAGService.history` gives it) as the chat shows it again after a
    reload: the answer as it was given (the withheld answer's note, the closest passages, the summary
    line and the figures). A turn kept before session 48 shows its answer and citations, one kept
    before session 49 no tiers or tokens, one kept before session 50 no time or the figures read
    from the trace."""
    result = {"answer": turn["answer"], "citations": turn["citations"], "supported": turn["supported"],
              "abstained": turn["abstained"], "passages_read": turn.get("passages_read"),
              "answerability": turn.get("answerability"), "escalations": turn.get("escalations") or 0,
              "cache": turn.get("cache"), "tier": turn.get("tier"), "final_tier": turn.get("final_tier"),
              "rewritten_question": read_as(turn["question"], turn["standalone_question"]),
              "described": turn.get("described"), "named_documents": turn.get("named_documents"),
              "summarized": turn.get("summarized"), "aged": turn.get("aged"), "compared": turn.get("compared"),
              "closest": turn.get("closest") or []}
    messages = [gr.ChatMessage(role="user", content=plain(turn["question"])),
                *answer_messages(result, turn.get("closest") or [])]
    if turn.get("timing_ms") is not None:  # kept since session 50: the figures as they were shown
        result.update({key: turn.get(key) for key in (*FIGURES, "trace", "tokens")})
        messages.append(gr.ChatMessage(role="assistant", content=figures(result),
                                       metadata={"title": summary_line(result), "status": "done"}))
        return messages
    line = summary_line(result)
    if line:
        check = result["answerability"] or {}
        rows = [tier_row(result)] if result["tier"] else []
        rows += token_rows(turn["tokens"]) if turn.get("tokens") and not result["cache"] else []
        rows += [answerability_figure(check)] if check.get("score") is not None else []
        rows.append(("time", "shown when the answer is given; the conversation does not keep it") if turn.get("tokens")
                    else ("time and tokens", "shown when an answer is given; the conversation does not keep them"))
        messages.append(gr.ChatMessage(role="assistant", content=bullets(rows), metadata={"title": line, "status": "done"}))
    return messages


def _pending(title: str) -> gr.ChatMessage:
    return gr.ChatMessage(role="assistant", content="", metadata={"title": title, "status": "pending"})


def answer_events(service: RAGService, message: str, *, session: str | None, owner: str | None,
                  policy: str | None, tier: str | None, model: str | None, show_trace: bool,
                  cancel: threading.Event | None = None, abstain_threshold: float | None = None,
                  multi_hop_threshold: float | None = None, fresh: bool = False) -> Iterator[list[gr.ChatMessage]]:
    """The chat's view of the service's stream: the wait in line, progress, the growing answer,
    then the answer with its sources. A refused question becomes a ``gr.Error`` with the message
    every front door gives; setting ``cancel`` raises :class:`Cancelled` at the next token; ``fresh``:
    answered afresh, not from the query cache (a retry)."""
    answer = ""
    try:
        for event in service.stream(message, session_id=session, policy=policy, tier=tier, model=model, owner=owner,
                                    cancel=cancel, abstain_threshold=abstain_threshold,
                                    multi_hop_threshold=multi_hop_threshold, fresh=fresh):
            if event["type"] == "status" and event.get("requests_ahead"):
                ahead = event["requests_ahead"]
                yield [_pending(f"Waiting for {ahead} earlier question{'s' if ahead > 1 else ''} to be answered…")]
            elif event["type"] == "status" and event.get("node") in ("start_turn", "condense_question", "lookup_cache",
                                                                       "classify_tier"):
                yield [_pending("Searching the knowledge base…")]
            elif event["type"] == "escalate":  # the answer so far was unsure, or set aside by a rule: a new one follows
                answer = ""
                yield [_pending(f"“{event['answer']}” is {event['reason']}: reading more evidence…" if event.get("reason")
                                else "Not sure yet: reading more evidence…")]
            elif event["type"] == "token":
                answer += event["text"]
                yield [gr.ChatMessage(role="assistant", content=plain(answer))]
            elif event["type"] == "result":
                yield result_messages(event, show_trace)
    except HANDLED as exc:
        problem = describe(exc)
        raise gr.Error(problem.message if problem else str(exc)) from exc


def _failure(text: str) -> gr.ChatMessage:
    return gr.ChatMessage(role="assistant", content=f"**Could not answer:** {plain(text)}")


# ---------------------------------------------------------------------- the settings
def as_percent(probability: float) -> float:
    """A probability as the settings show it: a percentage to one decimal (0.14168 reads 14.2)."""
    return round(100 * probability, 1)


def is_percent(value: Any) -> bool:
    """Whether ``value`` is a number (not a bool) in [0, 100]: what the percent settings take."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and is_probability(value / 100)


FRACTION_KEYS = {"abstain": "abstain_percent", "multi_hop": "multi_hop_percent"}
"""Settings a browser saved before they were set in percent (session 32), and their new names."""


def from_fractions(saved: dict) -> dict:
    """``saved`` with the thresholds a browser kept as fractions (0.142) under their old names
    moved to the percent ones (14.2), so that an open page keeps the user's choice."""
    saved = dict(saved)
    for old, new in FRACTION_KEYS.items():
        value = saved.pop(old, None)
        if new not in saved and is_probability(value):
            saved[new] = as_percent(value)
    return saved


# ---------------------------------------------------------------------- the page
def build_ui(service: RAGService) -> gr.Blocks:
    multi_hop_default = service.default_multi_hop_threshold  # None: no question-type model, no slider
    # the two thresholds are set in percent, as the chat speaks of them ("12% likely to be right")
    default_settings = {"session": None, "policy": service.pipeline.policy, "tier": service.pipeline.tier,
                        "model": service.resources.model, "show_trace": False,
                        "abstain_percent": as_percent(service.default_abstain_threshold),
                        "multi_hop_percent": None if multi_hop_default is None else as_percent(multi_hop_default),
                        "pending": ""}  # the question being answered: a reload mid-answer gives it back

    def restored(saved: dict | None) -> bool:
        """Whether the page has its conversation back: its id is made on load (:func:`restore`), and
        until then nothing may write the browser's saved state (it would race restore's)."""
        return bool((saved or {}).get("session"))

    def settings_of(saved: dict | None) -> dict:
        saved = from_fractions(saved or {})
        saved = {**default_settings, **saved}
        if saved["policy"] not in POLICIES:
            saved["policy"] = default_settings["policy"]
        if saved["tier"] not in DEFAULT_TIERS:
            saved["tier"] = default_settings["tier"]
        if saved["model"] not in service.models:
            saved["model"] = default_settings["model"]
        if not is_percent(saved["abstain_percent"]):
            saved["abstain_percent"] = default_settings["abstain_percent"]
        if multi_hop_default is None or not is_percent(saved["multi_hop_percent"]):
            saved["multi_hop_percent"] = default_settings["multi_hop_percent"]
        return saved

    def thresholds_in_use(saved: dict | None) -> tuple[float, Any]:
        """The two thresholds' boxes as the saved settings have them (the multi-hop slider left alone
        where there is none)."""
        saved = settings_of(saved)
        return (saved["abstain_percent"],
                saved["multi_hop_percent"] if saved["multi_hop_percent"] is not None else gr.Slider())

    def restore(saved: dict | None, request: gr.Request):
        """On load: the settings and the conversation this browser had, from the server's store. The
        conversation's id is made here and only here (the box takes questions once it is back:
        :func:`begin`), so it must not fail: a store it cannot read leaves the chat usable."""
        saved = settings_of(saved)
        history: list[gr.ChatMessage] = []
        turns: list[dict] = []
        if saved["session"]:
            try:
                turns = service.history(saved["session"], owner=_owner(request))
            except HANDLED:  # a malformed id in the browser's storage: start afresh
                saved["session"] = None
            except Exception:  # the store failed: keep the id (the conversation may come back), answer on
                log.exception("reading conversation %s failed", saved["session"])
                gr.Warning("Your earlier conversation could not be read; new questions are answered as usual.")
        for turn in turns:
            history += turn_messages(turn)
        if not saved["session"]:
            saved["session"] = uuid.uuid4().hex
        interrupted = saved["pending"] if saved["pending"] and (not turns or turns[-1]["question"] != saved["pending"]) else ""
        if interrupted:
            gr.Info("The page was reloaded before your last question was answered: it is back in the box.")
        saved["pending"] = ""
        box = gr.Textbox(placeholder=ASK, **({"value": interrupted} if interrupted else {}))
        return (history, saved, saved["policy"], saved["tier"], saved["model"], saved["show_trace"],
                *thresholds_in_use(saved), box)

    def fitted_abstain(model: str) -> float:
        """The abstain threshold fitted for ``model``'s check, as the slider shows it."""
        return as_percent(service.default_abstain_threshold_for(model))

    def remember(saved: dict | None, policy: str, tier: str, model: str, show_trace: bool, abstain: float,
                 multi_hop: float) -> dict:
        if not restored(saved):  # restore sets these controls from what the browser saved
            return gr.skip()
        return settings_of({**(saved or {}), "policy": policy, "tier": tier, "model": model, "show_trace": show_trace,
                            "abstain_percent": abstain, "multi_hop_percent": multi_hop})

    def begin(message: str, history: list, saved: dict | None):
        """Take the question from the box (a refused one stays there, with a warning). Not before
        the page has its conversation back (:func:`restore`): a question sent then has no
        conversation to join, and would be answered as a one-off that no reload shows."""
        if not restored(saved):
            gr.Warning(f"{LOADING} Ask again in a moment.")
            return gr.Textbox(value=message), history, "", False
        try:
            validate_question(message, service.pipeline.max_question_chars)
        except QuestionError as exc:
            gr.Warning(str(exc))
            return gr.Textbox(), history, "", False
        history = [*history, gr.ChatMessage(role="user", content=plain(message))]
        return gr.Textbox(value="", submit_btn=False, stop_btn=True), history, message, False

    # The stop button sets the answer's own cancel event (per browser tab), and the answer ends by
    # itself: Gradio's ``cancels=`` races with the next question (it can cancel that one instead).
    running: dict[str, threading.Event] = {}

    def respond(question: str, history: list, saved: dict | None, fresh: bool, request: gr.Request):
        if not question:  # refused by ``begin``: show the conversation as it was (no update would empty it)
            yield history
            return
        saved = settings_of(saved)
        tab = request.session_hash if request is not None else ""
        cancel = running[tab] = threading.Event()
        shown: list[gr.ChatMessage] = []
        try:
            for shown in answer_events(service, question, session=saved["session"], owner=_owner(request),
                                       policy=saved["policy"], tier=saved["tier"], model=saved["model"],
                                       show_trace=saved["show_trace"], cancel=cancel,
                                       abstain_threshold=saved["abstain_percent"] / 100,
                                       multi_hop_threshold=None if saved["multi_hop_percent"] is None
                                       else saved["multi_hop_percent"] / 100, fresh=fresh):
                yield [*history, *shown]
        except Cancelled:
            partial = [m for m in shown if not (m.metadata or {}).get("status") == "pending"]
            yield [*history, *partial, gr.ChatMessage(role="assistant", content="*Stopped.*")]
        except gr.Error as exc:
            yield [*history, _failure(exc.message)]
        except Exception:  # a bug: say so in the chat, keep the chat usable, log the details
            log.exception("answering %r failed", question)
            yield [*history, _failure("the server failed while answering; try again, or ask another question")]
        finally:
            if running.get(tab) is cancel:
                del running[tab]

    def stop(request: gr.Request):
        cancel = running.get(request.session_hash if request is not None else "")
        if cancel is not None:
            cancel.set()

    def mark_pending(question: str, saved: dict | None) -> dict:
        return {**settings_of(saved), "pending": question} if question else gr.skip()

    def finish(saved: dict | None):
        return (gr.Textbox(submit_btn=True, stop_btn=False),
                {**settings_of(saved), "pending": ""} if restored(saved) else gr.skip())

    def last_question(history: list) -> tuple[int, str]:
        for i in range(len(history) - 1, -1, -1):
            if _role(history[i]) == "user":
                return i, unplain(_content(history[i]))
        return -1, ""

    def take_back(history: list, saved: dict | None, request: gr.Request) -> tuple[list, str]:
        """Remove the last question and its answer, here and in the server's memory (when it was
        answered: a stopped or failed question never reached it)."""
        index, question = last_question(history)
        if index < 0:
            return history, ""
        session = settings_of(saved)["session"]
        if session:
            turns = service.history(session, owner=_owner(request))
            if turns and turns[-1]["question"] == question.strip():
                service.undo_last_turn(session, owner=_owner(request))
        return history[:index], question

    def retry(history: list, saved: dict | None, request: gr.Request):
        """The last question again, answered afresh: not from the query cache, which may have served
        the answer being retried (one given to a similar question)."""
        history, question = take_back(history, saved, request)
        if not question:
            return gr.Textbox(), history, "", False
        box, history, question, _ = begin(question, history, saved)
        return box, history, question, bool(question)

    def undo(history: list, saved: dict | None, request: gr.Request):
        history, question = take_back(history, saved, request)
        return history, question

    def clear(saved: dict | None, request: gr.Request) -> dict:
        if not restored(saved):
            return gr.skip()
        saved = settings_of(saved)
        if saved["session"]:
            service.reset_session(saved["session"], owner=_owner(request))
        return {**saved, "session": uuid.uuid4().hex}

    def example(evt: gr.SelectData, history: list, saved: dict | None):
        return begin(evt.value["text"], history, saved)

    def add_documents(files: list[str] | None, progress: gr.Progress = gr.Progress()) -> tuple[str, Any]:
        """The report of an add, and the upload box emptied of the files it added (a file chosen next
        is added alone); the files stay chosen where nothing could be added."""
        if not files:
            return "Choose one or more `.pdf`, `.txt`, `.md` or `.html` files first.", gr.skip()
        files = [getattr(f, "path", f) for f in files]
        total = len(files)

        def on_progress(docs: int, added: int) -> None:
            progress((docs, total), desc=f"{counted(added, 'passage')} added")

        # Only files that came through the upload component: a client can name any server path in
        # an API call, and Gradio copies such a path into its cache before this function runs.
        received = getattr(demo, "upload_file_set", None)
        if received is None:
            return "**Could not add the documents:** this Gradio version does not record uploads.", gr.skip()
        refused = [f for f in files if str(f) not in received]
        files = [f for f in files if str(f) in received]
        try:
            report = service.add_documents(files, allowed_dirs=[upload_folder()], on_progress=on_progress)
        except Exception as exc:  # never let a bad upload break the app
            log.exception("adding documents failed")
            return f"**Could not add the documents:** {plain(str(exc))}", gr.skip()
        return upload_summary(report, files, refused, service.status()["index_passages"]), None

    def uploaded() -> list[dict]:
        return [d for d in service.documents() if d["kind"] == "file"]

    def document_list():
        docs = uploaded()
        rows = [[d["source"], d["title"], d["passages"]] for d in docs]
        choices = [(f"{d['source']} ({counted(d['passages'], 'passage')})", d["doc_id"]) for d in docs]
        return (gr.Dataframe(value=rows or None), gr.Dropdown(choices=choices, value=None, interactive=bool(choices)))

    def remove_document(doc_id: str | None) -> str:
        if not doc_id:
            return "Choose a document to remove first."
        try:
            removed = service.delete_document(doc_id)
        except HANDLED as exc:
            problem = describe(exc)
            return f"**Could not remove it:** {plain(problem.message if problem else str(exc))}"
        return (f"**Removed {plain(removed['title'])}** ({counted(removed['passages_removed'], 'passage')}). "
                f"The knowledge base now holds {counted(removed['index_passages'], 'passage')}.")

    with gr.Blocks(title="Adaptive RAG", fill_height=True) as demo:
        saved = gr.BrowserState(default_settings, storage_key="adaptive-rag-chat", secret=browser_secret())
        question = gr.State("")
        fresh = gr.State(False)  # the question is a retry: answered afresh, not from the query cache
        width = gr.Number(visible=False)  # the browser's width, for the sidebar (a State cannot take it from JS)
        with gr.Sidebar(open=False, elem_id="sidebar") as sidebar:
            gr.Markdown("### Settings")
            policy = gr.Dropdown(list(POLICIES), value=service.pipeline.policy, label="Policy",
                                 info="cascade: a little evidence first, more only when the answer is "
                                      "unsure; adaptive: the trained router picks the first tier; probe-router: a router "
                                      "that also looks at the retrieval picks closed book or the first tier; fixed: the tier "
                                      "below; baseline: top-5 passages, no rerank or compression; retrieve-or-not: "
                                      "a gate answers closed book or reads the top 5; lazy: a short summary first; "
                                      "self-route: the model chooses")
            tier = gr.Dropdown(list(DEFAULT_TIERS), value=service.pipeline.tier, label="Tier (fixed policy)")
            model = gr.Dropdown(list(service.models), value=service.resources.model, label="Model", elem_id="model",
                                info="other models load on first use" if len(service.models) > 1 else
                                "the only model this server offers (`adaptive-rag serve --models ...` offers other "
                                "installed ones; `adaptive-rag models` lists them)",
                                interactive=len(service.models) > 1)
            # no built-in reset: it goes back to the value the page was built with, the served model's threshold
            abstain = setting_slider(0.0, 100.0, value=default_settings["abstain_percent"], step=0.1, elem_id="abstain",
                                label="Abstain below (%)", buttons=[],
                                info="how likely an answer must be to be right to be given, in percent; below it the chat "
                                     "says the knowledge base does not hold the answer (0: always answer; choosing a model sets "
                                     "its check's fitted threshold; a multi-hop question is held to a lower bar, and "
                                     "an answer from the Wikipedia summaries alone to their own check's, both moving "
                                     "with this one)")
            abstain_default = gr.Button("↺ the model's fitted threshold", size="sm", elem_id="abstain-default")
            multi_hop = setting_slider(0.0, 100.0, value=default_settings["multi_hop_percent"] or 0.0, step=0.1,
                                  elem_id="multi-hop", label="Multi-hop from (%)", visible=multi_hop_default is not None,
                                  info="a question at least this likely (in percent) to be multi-hop starts with more evidence "
                                       "(Medium), any other with the least (0: every one with more)")
            show_trace = gr.Checkbox(value=False, label="Show trace")
            gr.Markdown("### Your documents")
            limit_mb = service.max_upload_bytes / 2**20
            files = gr.File(file_count="multiple", file_types=list(SUPPORTED_SUFFIXES), elem_id="upload",
                            label=f"PDF, text, Markdown or web pages, up to {limit_mb:g} MB each")
            add = gr.Button("Add to knowledge base", variant="secondary")
            summary = gr.Markdown(elem_id="upload-summary")
            # the sidebar is ~280 px wide: the columns share it, and long names wrap rather than push
            # the title and passage count out of sight
            documents = gr.Dataframe(headers=["file", "title", "passages"], interactive=False, elem_id="documents",
                                     label="Uploaded documents (shared by everyone using this server)",
                                     wrap=True, column_widths=["36%", "30%", "34%"])
            chosen = gr.Dropdown(label="Remove a document", choices=[], elem_id="remove-choice")
            remove = gr.Button("Remove from knowledge base", variant="stop", elem_id="remove")

        gr.Markdown(HEADER)
        chatbot = gr.Chatbot(height="70vh", layout="bubble", label="Answers", elem_id="chatbot",
                             examples=[{"text": q} for q in EXAMPLES], feedback_options=None)
        box = gr.Textbox(placeholder=LOADING, elem_id="question", submit_btn=True, stop_btn=False,
                         show_label=False, autofocus=True)

        # Settings are remembered by the browser; the conversation by the server.
        demo.load(restore, saved, [chatbot, saved, policy, tier, model, show_trace, abstain, multi_hop, box])
        demo.load(None, js="() => window.innerWidth", outputs=width).then(
            lambda w: gr.Sidebar(open=not w or w >= PHONE_WIDTH), width, sidebar, queue=False)
        demo.load(document_list, None, [documents, chosen])
        # each model's answers are checked by the check fit for it (with or without the answer probe), on its
        # own scale: choosing a model sets the knob to that check's threshold (.input: not on restoring a page)
        model.input(fitted_abstain, model, abstain)
        abstain_default.click(fitted_abstain, model, abstain)
        for control in (policy, tier, model, show_trace, abstain, multi_hop):
            # a number typed out of a slider's range fails Gradio's own check (its toast says why): the
            # box goes back to the bar in use rather than showing a value no answer is checked against
            control.change(remember, [saved, policy, tier, model, show_trace, abstain, multi_hop], saved).failure(
                thresholds_in_use, saved, [abstain, multi_hop], queue=False)

        def answer_chain(trigger) -> None:
            trigger.then(mark_pending, [question, saved], saved, queue=False).then(
                respond, [question, chatbot, saved, fresh], chatbot, concurrency_limit=None, show_progress="hidden").then(
                finish, saved, [box, saved], queue=False)

        # Queued (a warning needs the queue) but never behind an answer: no concurrency limit.
        answer_chain(box.submit(begin, [box, chatbot, saved], [box, chatbot, question, fresh], concurrency_limit=None))
        answer_chain(chatbot.example_select(example, [chatbot, saved], [box, chatbot, question, fresh],
                                            concurrency_limit=None))
        answer_chain(chatbot.retry(retry, [chatbot, saved], [box, chatbot, question, fresh]))
        box.stop(stop, None, None, queue=False)
        chatbot.undo(undo, [chatbot, saved], [chatbot, box])
        chatbot.clear(clear, saved, saved)

        add.click(add_documents, files, [summary, files], concurrency_limit=1).then(document_list, None, [documents, chosen])
        remove.click(remove_document, chosen, summary, concurrency_limit=1).then(
            document_list, None, [documents, chosen])
    return demo


def upload_summary(report: IngestReport, files: list[str], refused: list[str], index_passages: int) -> str:
    """What an add did, for the sidebar: its first line says what changed ("Added 3 passages from 2
    documents.", "Updated 1 document." where only passages already there changed, or that nothing did),
    then what was already there, replaced or skipped."""
    skipped = {s.path for s in report.skipped}
    read = [Path(f).name for f in files if f not in skipped]
    changed = report.passages_added or report.passages_replaced or report.passages_removed or report.replaced
    if not report.documents:
        lines = ["**Nothing was added.**"]
    elif not changed:
        held = plain(read[0]) if len(read) == report.documents == 1 else f"the {report.documents:,} documents"
        lines = [f"**Nothing new:** {held} {was(report.documents)} already in the knowledge base "
                 f"({counted(report.passages_present, 'passage')})."]
    elif not report.passages_added:
        lines = [f"**Updated {counted(report.documents, 'document')}.**"]
    else:
        lines = [f"**Added {counted(report.passages_added, 'passage')}** from {counted(report.documents, 'document')}."]
        if report.passages_present:
            lines.append(f"{counted(report.passages_present, 'passage')} {was(report.passages_present)} "
                         "already in the knowledge base.")
    if report.passages_replaced or report.passages_removed:
        lines.append(f"{counted(report.passages_replaced, 'passage')} changed and {report.passages_removed} "
                     f"{was(report.passages_removed)} dropped: "
                     "a file added again is cut into passages the way this version cuts it.")
    lines += [f"- replaced the earlier version of {plain(name)}" for name in report.replaced]
    lines += [f"- skipped {plain(Path(s.path).name)}: {s.reason}" for s in report.skipped]
    lines += [f"- {plain(Path(partly.path).name)}: {partly.reason}" for partly in report.read_in_part]
    if refused:
        lines.append(f"- refused {counted(len(refused), 'file')} not uploaded through this page")
    lines.append(f"\nThe knowledge base now holds {counted(index_passages, 'passage')}.")
    return "\n".join(lines)


def counted(n: int, noun: str) -> str:
    """``n`` and the noun, singular for one: "1 passage", "36,526 passages"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def was(n: int) -> str:
    """The verb for ``n`` things: "1 passage was", "2 passages were"."""
    return "was" if n == 1 else "were"


def _role(message: Any) -> str:
    return message.get("role") if isinstance(message, dict) else message.role


def _content(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else message.content
    if isinstance(content, list):  # Gradio 6 gives content as a list of parts
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""
