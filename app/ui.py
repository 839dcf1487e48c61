"""The Gradio chat: streamed answers with their tier, cost and expandable cited sources; follow-up
questions; document upload; a settings sidebar. One conversation per browser session."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any, Iterator

import gradio as gr

from app.errors import HANDLED, describe
from app.security import USER_KEY
from app.service import RAGService, cost_line
from pipeline.configuration import DEFAULT_TIERS, POLICIES

EXAMPLES = [
    "Who directed 2001: A Space Odyssey?",
    "Who shared the 1903 Nobel Prize in Physics with Marie Curie?",
    "When was the Eiffel Tower built?",
    "What is the highest mountain on Earth?",
]
HEADER = """# Adaptive RAG
Answers from a local knowledge base (English Wikipedia summaries and your documents) with a small
local model, spending only the retrieval and generation budget each question needs."""


_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+!|~])")


def plain(text: str) -> str:
    """Text from a document or the model shown as text: no HTML (a ``<form>`` or ``<img>`` stays
    literal), no Markdown images or links (nothing is fetched from another site)."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", html.escape(text, quote=False))


def upload_folder() -> Path:
    """Where Gradio keeps the files its upload component received: the only files the chat ingests."""
    from gradio.utils import get_upload_folder

    return Path(get_upload_folder()).resolve()


def _owner(request: gr.Request | None) -> str | None:
    """The logged-in user (when logins are on), so their sessions are theirs alone."""
    inner = getattr(request, "request", None)
    scope = getattr(inner, "scope", None) or {}
    return scope.get(USER_KEY)


def _footer(result: dict[str, Any]) -> str:
    line = cost_line(result)
    if result.get("rewritten_question"):
        line += f"\n\nfollow-up read as: *{result['rewritten_question']}*"
    return line


def result_messages(result: dict[str, Any], show_trace: bool) -> list[gr.ChatMessage]:
    """The answer with its [n] markers and cost line, one expandable message per cited passage,
    and the trace when asked for."""
    markers = " ".join(f"[{c['n']}]" for c in result["citations"])
    answer = f"{plain(result['answer'])} {markers}".strip()
    messages = [gr.ChatMessage(role="assistant", content=f"{answer}\n\n<small>{_footer(result)}</small>")]
    for c in result["citations"]:
        source = c["source"]
        link = f"[{plain(source)}]({source})" if re.match(r"https?://[^\s()<>]+$", source) else plain(source)
        messages.append(gr.ChatMessage(
            role="assistant",
            content=f"{plain(c['text'])}\n\n{link}",
            metadata={"title": f"[{c['n']}] {c['title']} · score {c['score']:.2f}", "status": "done"},
        ))
    if show_trace:
        trace = json.dumps(result["trace"], indent=2, ensure_ascii=False)
        messages.append(gr.ChatMessage(role="assistant", content=f"```json\n{trace}\n```",
                                       metadata={"title": "Trace", "status": "done"}))
    return messages


def answer_events(service: RAGService, message: str, *, session: str | None, owner: str | None,
                  policy: str | None, tier: str | None, model: str | None,
                  show_trace: bool) -> Iterator[list[gr.ChatMessage]]:
    """The chat's view of the service's stream: progress, the growing answer, then the answer with
    its sources. A refused question becomes a ``gr.Error`` with the message every front door gives."""
    answer = ""
    try:
        for event in service.stream(message, session_id=session, policy=policy, tier=tier, model=model, owner=owner):
            if event["type"] == "status" and event.get("requests_ahead"):
                yield [gr.ChatMessage(role="assistant", content="", metadata={
                    "title": f"Waiting for {event['requests_ahead']} earlier question(s)…", "status": "pending"})]
            elif event["type"] == "status" and event.get("node") in ("start_turn", "condense_question", "classify_tier"):
                yield [gr.ChatMessage(role="assistant", content="", metadata={
                    "title": "Searching the knowledge base…", "status": "pending"})]
            elif event["type"] == "escalate":  # the answer so far was unsure: a new one follows
                answer = ""
                yield [gr.ChatMessage(role="assistant", content="", metadata={
                    "title": f"Not sure yet: reading more evidence ({event['to']})…", "status": "pending"})]
            elif event["type"] == "token":
                answer += event["text"]
                yield [gr.ChatMessage(role="assistant", content=plain(answer))]
            elif event["type"] == "result":
                yield result_messages(event, show_trace)
    except HANDLED as exc:
        problem = describe(exc)
        raise gr.Error(problem.message if problem else str(exc)) from exc


def build_ui(service: RAGService) -> gr.Blocks:
    def respond(message: str, history: list, policy: str, tier: str, model: str, show_trace: bool,
                request: gr.Request) -> Iterator[list[gr.ChatMessage]]:
        session = request.session_hash if request is not None else None
        yield from answer_events(service, message, session=session, owner=_owner(request), policy=policy,
                                 tier=tier, model=model, show_trace=show_trace)

    def add_documents(files: list[str] | None, progress: gr.Progress = gr.Progress()) -> str:
        if not files:
            return "Choose one or more `.pdf`, `.txt` or `.md` files first."
        files = [getattr(f, "path", f) for f in files]
        total = len(files)

        def on_progress(docs: int, added: int) -> None:
            progress((docs, total), desc=f"{added} passages added")

        # Only files that came through the upload component: a client can name any server path in
        # an API call, and Gradio copies such a path into its cache before this function runs.
        received = getattr(demo, "upload_file_set", None)
        if received is None:
            return "**Could not add the documents:** this Gradio version does not record uploads."
        refused = [f for f in files if str(f) not in received]
        files = [f for f in files if str(f) in received]
        try:
            report = service.add_documents(files, allowed_dirs=[upload_folder()], on_progress=on_progress)
        except Exception as exc:  # never let a bad upload break the app
            return f"**Could not add the documents:** {exc}"
        lines = [f"**Added {report.passages_added} passages** from {report.documents} document(s)."]
        if report.passages_present:
            lines.append(f"{report.passages_present} passages were already in the knowledge base.")
        for skipped in report.skipped:
            lines.append(f"- skipped {plain(Path(skipped.path).name)}: {skipped.reason}")
        if refused:
            lines.append(f"- refused {len(refused)} file(s) that were not uploaded through this page")
        lines.append(f"\nThe knowledge base now holds {service.status()['index_passages']:,} passages.")
        return "\n".join(lines)

    def reset(request: gr.Request) -> None:
        if request is not None:
            service.reset_session(request.session_hash, owner=_owner(request))

    with gr.Blocks(title="Adaptive RAG", fill_height=True) as demo:
        with gr.Sidebar(open=True):
            gr.Markdown("### Settings")
            policy = gr.Dropdown(list(POLICIES), value=service.pipeline.policy, label="Policy",
                                 info="cascade: a little evidence first, more only when the answer is "
                                      "unsure; adaptive: the trained router picks the first tier; fixed: the tier "
                                      "below; baseline: top-5 passages, no rerank or compression")
            tier = gr.Dropdown(list(DEFAULT_TIERS), value=service.pipeline.tier, label="Tier (fixed policy)")
            model = gr.Dropdown(list(service.models), value=service.resources.model, label="Model",
                                info="other models load on first use" if len(service.models) > 1 else None,
                                interactive=len(service.models) > 1)
            show_trace = gr.Checkbox(value=False, label="Show trace")
            gr.Markdown("### Add documents")
            limit_mb = service.max_upload_bytes / 2**20
            files = gr.File(file_count="multiple", file_types=[".pdf", ".txt", ".md"],
                            label=f"PDF, text or Markdown, up to {limit_mb:g} MB each")
            add = gr.Button("Add to knowledge base", variant="secondary")
            summary = gr.Markdown(elem_id="upload-summary")
            add.click(add_documents, inputs=files, outputs=summary, concurrency_limit=1)

        gr.Markdown(HEADER)
        chat = gr.ChatInterface(
            fn=respond,
            additional_inputs=[policy, tier, model, show_trace],
            chatbot=gr.Chatbot(height="70vh", layout="panel", label="Answers", elem_id="chatbot"),
            textbox=gr.Textbox(placeholder="Ask a question…", elem_id="question", submit_btn=True),
            concurrency_limit=1,
            fill_height=True,
        )
        gr.Examples(EXAMPLES, inputs=chat.textbox, label="Questions the Wikipedia knowledge base answers well")
        chat.chatbot.clear(reset)
    return demo
