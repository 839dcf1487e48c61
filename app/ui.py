"""The Gradio chat: streamed answers with their tier, cost and expandable cited sources; follow-up
questions; document upload; a settings sidebar. One conversation per browser session."""

from __future__ import annotations

import json
from typing import Any, Iterator

import gradio as gr

from app.service import RAGService
from components.index import IndexLoadError
from components.model_files import PRESETS, ModelFileError
from graph.configuration import DEFAULT_TIERS, POLICIES, ConfigurationError, QuestionError

EXAMPLES = [
    "Who directed 2001: A Space Odyssey?",
    "Who shared the 1903 Nobel Prize in Physics with Marie Curie?",
    "When was the Eiffel Tower built?",
    "What is the highest mountain on Earth?",
]
HEADER = """# Adaptive RAG
Answers from a local knowledge base (English Wikipedia summaries and your documents) with a small
local model, spending only the retrieval and generation budget each question needs."""


def _footer(result: dict[str, Any]) -> str:
    tokens, timing = result["tokens"], result["timing_ms"]
    parts = [
        f"tier **{result['tier']}**" + (f" (router {result['router']['confidence']:.0%})" if result.get("router") else ""),
        f"correction {'fired' if result['corrected'] else 'not needed'}",
        f"{timing['total'] / 1000:.1f} s",
        f"{tokens['prompt']} prompt + {tokens['output']} output tokens",
    ]
    line = " · ".join(parts)
    if result.get("rewritten_question"):
        line += f"\n\nfollow-up read as: *{result['rewritten_question']}*"
    return line


def result_messages(result: dict[str, Any], show_trace: bool) -> list[gr.ChatMessage]:
    """The answer with its [n] markers and cost line, one expandable message per cited passage,
    and the trace when asked for."""
    markers = " ".join(f"[{c['n']}]" for c in result["citations"])
    answer = f"{result['answer']} {markers}".strip()
    messages = [gr.ChatMessage(role="assistant", content=f"{answer}\n\n<small>{_footer(result)}</small>")]
    for c in result["citations"]:
        source = c["source"]
        link = f"[{source}]({source})" if source.startswith("http") else f"`{source}`"
        messages.append(gr.ChatMessage(
            role="assistant",
            content=f"{c['text']}\n\n{link}",
            metadata={"title": f"[{c['n']}] {c['title']} · score {c['score']:.2f}", "status": "done"},
        ))
    if show_trace:
        trace = json.dumps(result["trace"], indent=2, ensure_ascii=False)
        messages.append(gr.ChatMessage(role="assistant", content=f"```json\n{trace}\n```",
                                       metadata={"title": "Trace", "status": "done"}))
    return messages


def build_ui(service: RAGService) -> gr.Blocks:
    def respond(message: str, history: list, policy: str, tier: str, model: str, show_trace: bool,
                request: gr.Request) -> Iterator[list[gr.ChatMessage]]:
        session = request.session_hash if request is not None else None
        answer = ""
        try:
            for event in service.stream(message, session_id=session, policy=policy, tier=tier, model=model):
                if event["type"] == "status" and event.get("requests_ahead"):
                    yield [gr.ChatMessage(role="assistant", content="", metadata={
                        "title": f"Waiting for {event['requests_ahead']} earlier question(s)…", "status": "pending"})]
                elif event["type"] == "status" and event.get("node") in ("start_turn", "condense_question", "classify_tier"):
                    yield [gr.ChatMessage(role="assistant", content="", metadata={
                        "title": "Searching the knowledge base…", "status": "pending"})]
                elif event["type"] == "token":
                    answer += event["text"]
                    yield [gr.ChatMessage(role="assistant", content=answer)]
                elif event["type"] == "result":
                    yield result_messages(event, show_trace)
        except (QuestionError, ConfigurationError, ModelFileError, IndexLoadError) as exc:
            raise gr.Error(str(exc)) from exc

    def add_documents(files: list[str] | None, progress: gr.Progress = gr.Progress()) -> str:
        if not files:
            return "Choose one or more `.pdf`, `.txt` or `.md` files first."
        total = len(files)

        def on_progress(docs: int, added: int) -> None:
            progress((docs, total), desc=f"{added} passages added")

        try:
            report = service.add_documents(files, on_progress=on_progress)
        except Exception as exc:  # never let a bad upload break the app
            return f"**Could not add the documents:** {exc}"
        lines = [f"**Added {report.passages_added} passages** from {report.documents} document(s)."]
        if report.passages_present:
            lines.append(f"{report.passages_present} passages were already in the knowledge base.")
        for skipped in report.skipped:
            lines.append(f"- skipped `{skipped.path}`: {skipped.reason}")
        lines.append(f"\nThe knowledge base now holds {service.status()['index_passages']:,} passages.")
        return "\n".join(lines)

    def reset(request: gr.Request) -> None:
        if request is not None:
            service.reset_session(request.session_hash)

    with gr.Blocks(title="Adaptive RAG", fill_height=True) as demo:
        with gr.Sidebar(open=True):
            gr.Markdown("### Settings")
            policy = gr.Dropdown(list(POLICIES), value=service.pipeline.policy, label="Policy",
                                 info="adaptive: the trained router picks the tier; fixed: the tier below; "
                                      "baseline: top-5 passages, no rerank or compression")
            tier = gr.Dropdown(list(DEFAULT_TIERS), value=service.pipeline.tier, label="Tier (fixed policy)")
            model = gr.Dropdown(list(PRESETS), value=service.resources.model, label="Model",
                                info="other presets load on first use")
            show_trace = gr.Checkbox(value=False, label="Show trace")
            gr.Markdown("### Add documents")
            files = gr.File(file_count="multiple", file_types=[".pdf", ".txt", ".md"], label="PDF, text or Markdown")
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
