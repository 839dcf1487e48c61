"""Command line: ``adaptive-rag ask | chat | serve | ingest | models``.

Exit codes: 0 success, 2 bad input or configuration (the message says what is valid),
3 a missing or damaged index or model (the message names the command that fixes it), 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from app.errors import EXIT_INTERRUPTED, EXIT_USAGE, HANDLED, describe
from components.embedder import QUERY_RUNTIMES
from components.model_files import DEFAULT_PRESET, PRESETS
from components.passages import MAX_PASSAGE_WORDS
from pipeline.arguments import run_command, whole_number
from pipeline.configuration import ANSWER_FORMS, POLICIES, PipelineConfig, validate_question

if TYPE_CHECKING:
    from app.service import RAGService


# ---------------------------------------------------------------------------- shared options
def _resource_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--index", type=Path, help="index folder (default: $ADAPTIVE_RAG_INDEX or the Wikipedia index)")
    parser.add_argument("--embedder", help="sentence-transformers name or path (default: bundled all-MiniLM-L6-v2)")


def _score_or_off(text: str) -> float | str:
    """A cosine, or "off" (kept as the word: ``_pipeline`` makes it None, which argparse would take for
    the option not given)."""
    if text.strip().lower() == "off":
        return "off"
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a cosine in [-1, 1] or 'off', got {text!r}") from None


def _pipeline_options(parser: argparse.ArgumentParser) -> None:
    _resource_options(parser)
    parser.add_argument("--model", help=f"generator: a preset ({', '.join(PRESETS)}), a .gguf path or a HF name "
                        f"(default: {DEFAULT_PRESET})")
    parser.add_argument("--policy", help=f"routing policy: {', '.join(POLICIES)} "
                        "(default: cascade, more evidence only when the answer is unsure)")
    parser.add_argument("--accept-threshold", type=float,
                        help="cascade: accept an answer whose confidence reaches this, else extend the evidence "
                             f"(default: {PipelineConfig().accept_threshold:.3g}, fitted on the train splits)")
    parser.add_argument("--stop-early", action=argparse.BooleanOptionalAction, default=None,
                        help="cascade: stop an answer as soon as its confidence is certain to fall short, since it "
                             "will be extended anyway (default: on; --no-stop-early finishes every answer)")
    parser.add_argument("--ask-who", action=argparse.BooleanOptionalAction, default=None,
                        help="a first question on a person it does not name (\"When was he born?\") is answered with "
                             "the question whom it means, and a reply with a name is read into it (default: on; "
                             "--no-ask-who answers it from whatever retrieval finds)")
    parser.add_argument("--describe", action=argparse.BooleanOptionalAction, default=None,
                        help="a question that only asks who or what a thing is (\"Who was Napoleon?\") is answered with "
                             "the first passage of the document titled as the thing, and one that only asks to compare "
                             "two things (\"Compare cats and dogs\") with the first passage of each, with no model call "
                             "(default: on; --no-describe leaves them to the model)")
    parser.add_argument("--named-documents", action=argparse.BooleanOptionalAction, default=None,
                        help="a question that names one of your files (\"What does the handbook say about holidays?\", "
                             "\"my report\", \"the document\") searches that file only (default: on; "
                             "--no-named-documents searches the whole index)")
    parser.add_argument("--follow-up-file-score", type=_score_or_off, metavar="COSINE|off",
                        help="a follow-up that names no file stays in the files the question before it searched when "
                             "one of their passages is at least this close to it (\"Who is the manager?\" after a "
                             f"question on the handbook; default: {PipelineConfig().follow_up_file_score}, fitted in "
                             "session 62; off: it searches the whole index)")
    parser.add_argument("--file-first-score", type=_score_or_off, metavar="COSINE|off",
                        help="a question that names no file and follows none searches only your files when one of "
                             "their passages is at least this close to it (\"Who leads the finance office?\" with a "
                             f"travel policy added; default: {PipelineConfig().file_first_score}, fitted in session 69; "
                             "off: it searches the whole index)")
    parser.add_argument("--summarize", action=argparse.BooleanOptionalAction, default=None,
                        help="a request to summarize a document it names (\"Summarize the kettle manual\", \"What is "
                             "the lease about?\") is answered with a summary of that document, read in its order "
                             "(default: on; --no-summarize answers it as any question)")
    parser.add_argument("--summarize-tokens", type=int, metavar="N",
                        help="the most tokens of a document a summary reads (of a longer one, each section's first paragraphs) "
                             f"(default: {PipelineConfig().summarize_tokens})")
    parser.add_argument("--living-ages", action=argparse.BooleanOptionalAction, default=None,
                        help="a living person's age today is spelled beside the birth year a Wikipedia description "
                             "gives (\"born 1989, aged 36 or 37 in 2026\"), and \"How old is X?\" is told from X's "
                             "description with no model call (default: on; --no-living-ages reads the text as "
                             "stored and leaves the question to the model)")
    parser.add_argument("--place-first", action=argparse.BooleanOptionalAction, default=None,
                        help="a question that asks a place's population (\"How many people live in Germany?\") "
                             "searches the place's own article only (default: off, the whole index; measured in "
                             "session 70: one more right answer and two more wrong ones of twenty)")
    parser.add_argument("--two-things", action=argparse.BooleanOptionalAction, default=None,
                        help="a question that asks two things (\"Who wrote Hamlet and when was it written?\") is told "
                             "to answer each (default: on; --no-two-things asks it as any question)")
    parser.add_argument("--citation-markers", action=argparse.BooleanOptionalAction, default=None,
                        help="let the model write its [n] citation markers (about three more generated tokens per "
                             "answer; default: off, the answer ends where they begin and is cited to the evidence "
                             "that holds its words)")
    parser.add_argument("--answer-examples", action=argparse.BooleanOptionalAction, default=None,
                        help="show the model four worked examples (invented passages) before the question; they are "
                             "part of the instruction prefix, evaluated once per process")
    parser.add_argument("--answer-form", choices=ANSWER_FORMS,
                        help="short: an answer written as a sentence that restates the question is cut to its new "
                             "words (the default, fit on the train splits); as_written: the model's text")
    parser.add_argument("--max-escalations", type=int, help="cascade: extensions allowed per question "
                        f"(default: {PipelineConfig().max_escalations})")
    parser.add_argument("--abstain-threshold", type=float,
                        help="withhold an answer whose probability of being right is below this: 0 never abstains, "
                             "1 always (default: the threshold fitted on the train splits; a question read as multi-hop "
                             "is held to the lower bar this gives it through the check's fitted pair, an answer from the "
                             "Wikipedia summaries alone to the bar it gives through their own check's)")
    parser.add_argument("--extend-before-abstaining", action=argparse.BooleanOptionalAction, default=None,
                        help="cascade: where the answerability check would abstain and a tier is left, extend the "
                             "evidence and answer again instead (default: "
                             f"{'on' if PipelineConfig().extend_before_abstaining else 'off'})")
    parser.add_argument("--extend-after-rule", action=argparse.BooleanOptionalAction, default=None,
                        help="cascade: where a rule withholds an answer because the passages that hold it say it is "
                             "another's (another rank, capital, place or person) and a tier is left, extend the "
                             "evidence and answer again (default: "
                             f"{'on' if PipelineConfig().extend_after_rule else 'off'})")
    parser.add_argument("--qualified-superlatives", action=argparse.BooleanOptionalAction, default=None,
                        help="the rank rule: a superlative a passage narrows to less than the question asks (\"the "
                             "largest by population\" to the largest by area) does not keep an answer the passage "
                             "ranks lower (default: "
                             f"{'on' if PipelineConfig().qualified_superlatives else 'off'})")
    parser.add_argument("--tier", help="a fixed tier: easy, medium, hard (implies --policy fixed unless given)")
    parser.add_argument("--router", type=Path, help="tier router weights (.safetensors; default: the bundled router)")
    parser.add_argument("--probe-router", type=Path,
                        help="the probe-router policy's router (.json; default: the bundled one)")
    parser.add_argument("--router-threshold", type=float,
                        help="probe-router: the cheapest rung at least this likely to be enough is taken (lower: "
                             "cheaper; default: the threshold fitted on the train splits)")
    parser.add_argument("--multi-hop-threshold", type=float,
                        help="cascade: a question at least this likely to be multi-hop starts at Medium, any other at "
                             "Easy (0: every question at Medium; default: the threshold fitted on the train splits)")
    parser.add_argument("--reranker", help="retrieval-order (the default: the dense retrieval's order), hybrid (dense "
                        "+ BM25 + title, fit on SQuAD 2.0 and HotpotQA), learned (a logistic regression over cheap "
                        "features of each candidate, fit on the same), or a cross-encoder's name or path")
    parser.add_argument("--embedder-runtime", choices=QUERY_RUNTIMES,
                        help="what embeds a question: auto (the default: ONNX Runtime where it agrees with torch, "
                             "else torch), onnxruntime, torch")
    parser.add_argument("--threads", type=int, default=2, help="generator threads (default: 2)")
    parser.add_argument("--max-question-chars", type=int, default=2000)


def _resources(args: argparse.Namespace, **extra: Any):
    from pipeline.context import ResourceConfig

    kwargs = {k: v for k, v in {
        "index_dir": args.index, "embedder": args.embedder,
        "model": getattr(args, "model", None), "reranker": getattr(args, "reranker", None),
        "n_threads": getattr(args, "threads", None), "router": getattr(args, "router", None),
        "probe_router": getattr(args, "probe_router", None),
        "embedder_runtime": getattr(args, "embedder_runtime", None),
    }.items() if v is not None}
    return ResourceConfig(**kwargs, **extra)


def _pipeline(args: argparse.Namespace) -> PipelineConfig:
    kwargs = {k: v for k, v in {"policy": args.policy, "tier": args.tier, "accept_threshold": args.accept_threshold,
                                "max_escalations": args.max_escalations, "stop_early": args.stop_early,
                                "ask_who": args.ask_who, "describe": args.describe,
                                "named_documents": args.named_documents,
                                "follow_up_file_score": args.follow_up_file_score,
                                "file_first_score": args.file_first_score, "place_first": args.place_first,
                                "summarize": args.summarize, "summarize_tokens": args.summarize_tokens,
                                "living_ages": args.living_ages, "two_things": args.two_things,
                                "citation_markers": args.citation_markers, "answer_form": args.answer_form,
                                "answer_examples": args.answer_examples,
                                "abstain_threshold": args.abstain_threshold,
                                "extend_before_abstaining": args.extend_before_abstaining,
                                "extend_after_rule": args.extend_after_rule,
                                "qualified_superlatives": args.qualified_superlatives,
                                "router_threshold": args.router_threshold,
                                "multi_hop_threshold": args.multi_hop_threshold}.items() if v is not None}
    if args.tier and not args.policy:
        kwargs["policy"] = "fixed"
    for off in ("follow_up_file_score", "file_first_score"):
        if kwargs.get(off) == "off":
            kwargs[off] = None
    return PipelineConfig(max_question_chars=args.max_question_chars, **kwargs)


# ---------------------------------------------------------------------------- output
def format_answer(result: dict[str, Any], show_trace: bool = False, include_answer: bool = True) -> str:
    """An answer as the service returns it (unless already streamed), its sources, a cost line and
    optionally the trace."""
    from app.service import abstention_note, closest_passages, cost_line, unsupported_note
    from components.passages import ranking_score

    lines = [result["answer"] or "(no answer)"] if include_answer else []
    if result.get("written_answer"):  # the answer is the short form of what the model wrote (and streamed)
        lines.append(f"(as written: {result['written_answer']})" if include_answer else f"Short answer: {result['answer']}")
    trace = result.get("trace", {})
    note = abstention_note(result) or unsupported_note(result)
    if note:
        lines += ["", note]
    if result.get("citations"):
        lines.append("")
        lines.append("Sources:")
        for i, c in enumerate(result["citations"], 1):  # numbered as the chat numbers them: in the order shown
            lines.append(f"  [{i}] {c['title']} ({c['source']}, score {c['score']:.2f}): {c['text']}")
    elif note and (closest := closest_passages(result)):  # none for an answer read from no passage
        lines += ["", "Closest passages:"]
        lines += [f"  {'(holds the answer, not read) ' if p.get('holds_answer') else ''}{p['title']} ({p['source']}, "
                  f"score {ranking_score(p):.2f}): {p['text']}" for p in closest]
    lines.append("")
    lines.append(cost_line(result))
    if show_trace:
        lines.append("")
        lines.append(json.dumps(trace, indent=2, ensure_ascii=False))
    return "\n".join(lines)


WITHHELD_MARK = "(withheld: not the answer, see below)"
"""After a streamed answer the check then withheld: the terminal cannot take printed text back."""


def _ask_once(service, question: str, show_trace: bool, stream: bool, session_id: str | None = None) -> dict[str, Any]:
    if not stream:
        result = service.ask(question, session_id=session_id)
        print(format_answer(result, show_trace))
        return result
    events = service.stream(question, session_id=session_id)
    with contextlib.closing(events):  # closed (Ctrl-C while printing), the stream stops its run
        result, streamed = _print_stream(events)
    if not streamed:  # no model wrote it (the question asked back): printed whole, as without streaming
        print(format_answer(result, show_trace))
        return result
    if (result.get("answerability") or {}).get("withheld_answer"):  # printed as it came: marked, not taken back
        print(f" {WITHHELD_MARK}", end="")
    print("\n")
    print(format_answer(result, show_trace, include_answer=False).lstrip("\n"))
    return result


def _print_stream(events: Iterator[dict[str, Any]]) -> tuple[dict[str, Any], bool]:
    """Print a streamed answer as it comes; the final result, and whether any of it was streamed."""
    result: dict[str, Any] = {}
    held = ""  # trailing whitespace, printed only once a word follows it (an answer ends at its last word)
    streamed = False
    for event in events:
        if event["type"] == "token":
            streamed = True
            text = held + event["text"]
            shown = text.rstrip()
            held = text[len(shown):]
            print(shown, end="", flush=True)
        elif event["type"] == "escalate":  # the streamed answer was unsure or set aside: say so, then stream the new one
            held = ""
            why = f"set aside, {event['reason']}" if event.get("reason") else "not sure"
            print(f"\n({why}: reading more evidence, tier {event['to']})", flush=True)
        elif event["type"] == "result":
            result = event
    return result, streamed


def _service(args: argparse.Namespace):
    """The service for ``ask`` and ``chat``, its models and index loaded."""
    from app.service import RAGService

    pipeline = _pipeline(args)  # configuration errors before anything loads
    service = RAGService(_resources(args), pipeline)
    print("loading models and index ...", file=sys.stderr, flush=True)
    service.warm_up()
    return service


# ---------------------------------------------------------------------------- commands
TERMINALS_LIMIT = "--max-question-chars raises it"
"""Where a question's limit comes from at the terminal, where the asker sets it."""


def cmd_ask(args: argparse.Namespace) -> int:
    # settings, then question: before models load
    validate_question(args.question, _pipeline(args).max_question_chars, TERMINALS_LIMIT)
    service = _service(args)
    _ask_once(service, args.question, args.trace, stream=not args.no_stream)
    return 0


CHAT_SESSION = "terminal"
"""The terminal chat's one conversation (it lives in the process)."""

CHAT_COMMANDS = {
    "/new": "forget this conversation and begin another (a follow-up then reads as a new question)",
    "/quit": "end the chat (so do /exit, /bye, exit, quit and Ctrl-D)",
    "/help": "list these commands",
}
QUIT_LINES = frozenset({"/quit", "/exit", "/bye", "quit", "exit"})
"""Lines that end the chat (compared in lower case, without surrounding spaces): the terminal chats'
usual words, which no one asks a knowledge base."""


def chat_command(line: str) -> str | None:
    """The command a line of the terminal chat gives, or ``None`` for a question: one of
    :data:`QUIT_LINES`, or one word of letters after a "/" ("/etc/hosts: what is it?" is a question)."""
    word = line.strip().lower()
    if word in QUIT_LINES:
        return "/quit"
    return word if re.fullmatch(r"/[a-z]+", word) else None


def cmd_chat(args: argparse.Namespace) -> int:
    service = _service(args)
    print("Ask a question (Ctrl-C stops an answer, Ctrl-D or /quit quits, /help lists the commands).", file=sys.stderr)
    # The conversation lives in this process: neither an Enter too many nor Ctrl-C may end it.
    while True:
        try:
            question = input("\n? ")
        except EOFError:
            return 0
        except KeyboardInterrupt:  # clears the line being typed, as a shell's prompt does
            print(file=sys.stderr)
            continue
        if not question.strip():
            continue
        command = chat_command(question)
        if command == "/quit":
            return 0
        if command == "/new":
            service.reset_session(CHAT_SESSION)
            print("(a new conversation: earlier questions are forgotten)", file=sys.stderr)
            continue
        if command is not None:
            if command != "/help":
                print(f"unknown command {command}; the commands are:", file=sys.stderr)
            print("\n".join(f"  {name:<6} {what}" for name, what in CHAT_COMMANDS.items()), file=sys.stderr)
            continue
        try:
            validate_question(question, service.pipeline.max_question_chars, TERMINALS_LIMIT)
            result = _ask_once(service, question, args.trace, stream=True, session_id=CHAT_SESSION)
            if result.get("rewritten_question"):
                print(f"(follow-up read as: {result['rewritten_question']})")
        except HANDLED as exc:
            print(f"error: {exc}", file=sys.stderr)
        except KeyboardInterrupt:
            print("\n(stopped)", flush=True)


INGEST_SOURCES = ("wiki", "folder", "squad", "hotpotqa")


def cmd_ingest(args: argparse.Namespace) -> int:
    import dataclasses

    from tqdm import tqdm

    from components import sources
    from components.embedder import DEFAULT_EMBEDDER, Embedder
    from components.index import MANIFEST, PassageIndex
    from components.ingest import ingest
    from components.passages import ChunkingConfig
    from pipeline.context import default_index_dir

    index_dir = args.index or default_index_dir()
    if args.if_missing and (index_dir / MANIFEST).is_file():
        print(f"index already exists at {index_dir}; nothing to do", file=sys.stderr)
        if args.source == "wiki":
            _say_if_read_the_old_way(index_dir, args.index)
        return 0
    loaders = {
        "wiki": lambda: sources.wikipedia_summaries(),
        "folder": lambda: sources.folder_documents(args.path),
        "squad": lambda: sources.squad_contexts(args.path),
        "hotpotqa": lambda: sources.hotpotqa_contexts(args.path),
    }
    items = loaders[args.source]()  # read lazily: one document at a time, large files in pieces

    # documents only: the question runtime (ONNX Runtime) would be exported and loaded for nothing
    embedder = Embedder(args.embedder or DEFAULT_EMBEDDER, query_runtime="torch")
    index = PassageIndex.load_or_create(index_dir, embedder=embedder.name, dimension=embedder.dimension)
    given = {name: value for name in ("window", "overlap", "max_words") if (value := getattr(args, name)) is not None}
    chunking = dataclasses.replace(index.chunking or ChunkingConfig(), **given)  # ValueError: a clear message
    with tqdm(unit="doc", desc=f"ingest {args.source}", file=sys.stderr, mininterval=1.0) as bar:
        def progress(docs: int, added: int) -> None:
            bar.update(docs - bar.n)
            bar.set_postfix(passages=added)

        report = ingest(items, index, embedder, chunking=chunking, batch_size=args.batch_size,
                        checkpoint_every=args.checkpoint_every, on_progress=progress)
    if args.source == "wiki" and index.sources.get("wikipedia") != sources.WIKIPEDIA_READER_VERSION:
        index.sources["wikipedia"] = sources.WIKIPEDIA_READER_VERSION  # read whole: recorded, not at a checkpoint
        index.save()
    print(report.summary())
    print(f"index: {index_dir} ({len(index)} passages)")
    return 0


def _say_if_read_the_old_way(index_dir: Path, named: Path | None) -> None:
    """Tell an index holding the Wikipedia summaries as an earlier release read them (``make run``
    runs ``ingest wiki --if-missing``, which leaves an index it finds as it is) how to read them again."""
    from components import sources
    from components.index import PassageIndex, recorded_sources

    if recorded_sources(index_dir).get("wikipedia") == sources.WIKIPEDIA_READER_VERSION:
        return  # the manifest says so: the index itself is not loaded (make run loads it to serve)
    if any(p.metadata.get("source") == "wikipedia" for p in PassageIndex.load(index_dir)):
        again = "adaptive-rag ingest wiki" + (f" --index {named}" if named else "")
        print(f"it holds the Wikipedia summaries as an earlier release read them ({sources.WIKIPEDIA_READER_CHANGE}): "
              f"`{again}` reads them again, embedding only the passages that changed (a few minutes)", file=sys.stderr)


def _query_cache(choice: str) -> str | None:
    """``--query-cache``: sqlite (a file in the cache folder), a .sqlite path, memory, or off."""
    from components.model_files import cache_dir

    if choice == "off":
        return None
    if choice == "memory":
        return ":memory:"
    if choice == "sqlite":
        return str(cache_dir() / "query_cache.sqlite")
    return choice


def serve_service(args: argparse.Namespace) -> RAGService:
    """The service ``serve`` runs for its parsed ``args`` (nothing loaded yet)."""
    from app.conversations import open_store
    from app.service import RAGService

    models = [m.strip() for m in (args.models or "").split(",") if m.strip()]
    return RAGService(_resources(args, query_cache=_query_cache(args.query_cache)), _pipeline(args), models=models,
                      max_upload_bytes=int(args.max_upload_mb * 1024 * 1024),
                      checkpointer=open_store(args.conversations))


def cmd_serve(args: argparse.Namespace) -> int:
    from app.security import parse_users
    from app.server import run

    users = parse_users(args.auth)
    run(serve_service(args), host=args.host, port=args.port, users=users, body_timeout_s=args.body_timeout)
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    for preset in PRESETS.values():
        default = " (default)" if preset.name == DEFAULT_PRESET else ""
        print(f"{preset.name}{default}: {preset.description}; install: {preset.install_hint}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="adaptive-rag", description="Budget-aware adaptive RAG over a local knowledge base")
    sub = parser.add_subparsers(dest="command", required=True)

    ask = sub.add_parser("ask", help="answer one question")
    ask.add_argument("question")
    ask.add_argument("--trace", action="store_true", help="print the full trace as JSON")
    ask.add_argument("--no-stream", action="store_true", help="print the answer when complete")
    _pipeline_options(ask)
    ask.set_defaults(func=cmd_ask)

    chat = sub.add_parser("chat", help="interactive terminal chat")
    chat.add_argument("--trace", action="store_true")
    _pipeline_options(chat)
    chat.set_defaults(func=cmd_chat)

    ing = sub.add_parser("ingest", help="add a source to an index (skips passages already present)")
    ing.add_argument("source", metavar=f"{{{','.join(INGEST_SOURCES)},PATH}}",
                     help="wiki: bundled Wikipedia summaries; folder: .txt/.md/.pdf/.html files; squad/hotpotqa: benchmark "
                          "contexts; or a file or folder, read as folder PATH")
    ing.add_argument("path", nargs="?", type=Path, help="file or folder, for folder/squad/hotpotqa")
    # the chunking options default to the index's own (its manifest records the last ingest's), else these
    ing.add_argument("--window", type=int, help="sentences per passage (default: the index's, else 1)")
    ing.add_argument("--overlap", type=int, help="sentences shared by consecutive passages (default: the index's, else 0)")
    ing.add_argument("--max-words", type=int,
                     help=f"a longer sentence (a table, a list) is split at its lines, then into runs of this many words "
                          f"(default: the index's, else {MAX_PASSAGE_WORDS}: what the embedder reads)")
    ing.add_argument("--if-missing", action="store_true", help="do nothing if the index already exists")
    ing.add_argument("--batch-size", type=int, default=256, help="passages embedded per batch")
    ing.add_argument("--checkpoint-every", type=int, default=5000, help="save the index after this many new passages")
    _resource_options(ing)
    ing.set_defaults(func=cmd_ingest)

    serve = sub.add_parser("serve", help="the Gradio chat and the HTTP API on one server")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=whole_number(0, 65535), default=7860, help="0: any free port")
    serve.add_argument("--auth", action="append", default=None,
                       help="user:password for the one login of the chat and the API; repeat for more users "
                            "(or $ADAPTIVE_RAG_AUTH, comma-separated)")
    serve.add_argument("--models", default="",
                       help="other installed presets clients may choose, comma-separated (default: only --model)")
    serve.add_argument("--max-upload-mb", type=float, default=50, help="largest file the chat or the API accepts (default 50)")
    serve.add_argument("--conversations", default=None,
                       help="where conversations are kept: sqlite (default: a file in the cache folder), "
                            "a .sqlite path, a postgresql:// connection string (for several server processes; "
                            "better given as $ADAPTIVE_RAG_CONVERSATIONS, which keeps a password out of the "
                            "process list), or memory (forgotten on restart)")
    serve.add_argument("--query-cache", default="sqlite",
                       help="answers to repeated and near-repeated questions: sqlite (default: a file in the cache "
                            "folder), a .sqlite path, memory (forgotten on restart) or off; an answer is only served "
                            "for the same model, settings and knowledge base")
    serve.add_argument("--body-timeout", type=float, default=30,
                       help="seconds a client has to send a request body (default 30)")
    _pipeline_options(serve)
    serve.set_defaults(func=cmd_serve)

    models = sub.add_parser("models", help="list generator presets")
    models.set_defaults(func=cmd_models)
    return parser


FIELD_FLAGS = {"n_threads": "--threads", "index_dir": "--index"}
"""The configuration's fields whose flag is not the field's name with dashes."""
_LEADING_FIELD = re.compile(r"[a-z]+(?:_[a-z]+)+\b")


def in_flag_terms(message: str, args: argparse.Namespace) -> str:
    """``message`` with the configuration field it begins with ("max_question_chars must be >= 1", as
    a setting's check says) given as the flag that sets it ("--max-question-chars"): the person at the
    terminal typed the flag. Only a leading name: a path further on may hold one by chance."""
    found = _LEADING_FIELD.match(message)
    if found is None:
        return message
    field = found.group(0)
    flag = FIELD_FLAGS.get(field) or (f"--{field.replace('_', '-')}" if hasattr(args, field) else field)
    return flag + message[found.end():]


def main(argv: Sequence[str] | None = None) -> int:
    """The ``adaptive-rag`` command line (:func:`run`), quiet when the reader of its output goes away first."""
    return run_command(lambda: run(argv))


def run(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "ingest" and args.source not in INGEST_SOURCES:
        if args.path is not None:
            parser.error(f"ingest: unknown source {args.source!r}; sources: {', '.join(INGEST_SOURCES)}")
        if not Path(args.source).expanduser().exists():
            parser.error(f"ingest: {args.source!r} is no source ({', '.join(INGEST_SOURCES)}) and no file or folder "
                         "that exists")
        args.source, args.path = "folder", Path(args.source).expanduser()  # `ingest notes.pdf`: `ingest folder notes.pdf`
    if args.command == "ingest" and args.source != "wiki" and args.path is None:
        parser.error(f"ingest {args.source} needs a path")
    if args.command == "serve" and args.conversations is None:
        args.conversations = os.environ.get("ADAPTIVE_RAG_CONVERSATIONS") or "sqlite"
    if args.command == "serve" and args.auth is None and os.environ.get("ADAPTIVE_RAG_AUTH"):
        args.auth = [os.environ["ADAPTIVE_RAG_AUTH"]]
    try:
        return args.func(args)
    except HANDLED as exc:
        problem = describe(exc)
        assert problem is not None
        print(f"error: {in_flag_terms(problem.message, args)}", file=sys.stderr)
        return problem.exit_code
    except ValueError as exc:  # argument values the parser cannot check (window, batch size, ...)
        print(f"error: {in_flag_terms(str(exc), args)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
