"""Prompt templates, kept as text files beside this module."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from typing import Iterable, Mapping

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

ABSTENTION = "I cannot answer from the evidence."
"""What the answer prompt tells the model to say when the evidence lacks the answer."""


@lru_cache(maxsize=None)
def template(name: str) -> str:
    return resources.files(__name__).joinpath(f"{name}.txt").read_text(encoding="utf-8").strip()


def format_evidence(evidence: Iterable[Mapping]) -> str:
    """``[n] Title: text`` lines, the form the answer prompt and the context budget count."""
    return "\n".join(f"[{e['n']}] {e['title']}: {e['text']}" if e["title"] else f"[{e['n']}] {e['text']}" for e in evidence)


LAYOUTS = {
    "question_first": "answer_user_question_first",
    "question_both": "answer_user_question_both",
    "evidence_first": "answer_user",
}
"""Where the question sits in the answer prompt. ``evidence_first`` (the default: instructions, the
evidence in rank order, then the question) answers best with a small model; evidence appended to
an evaluated prompt costs the added tokens and the question's once more, since the prompt is the
same up to the end of the old evidence. ``question_first`` puts the question before the evidence,
so an extension costs only the added tokens; ``question_both`` repeats the question after the
evidence (a few tokens more per answer)."""


@lru_cache(maxsize=None)
def answer_examples() -> tuple[tuple[str, tuple[Mapping, ...], str], ...]:
    """The answer prompt's worked examples (``answer_examples.json``): invented passages about an
    invented bridge, so they teach the form of an answer (a short span, the abstention when the
    evidence is on the topic but does not say, a two-step answer, a yes/no comparison) and no fact
    a benchmark asks about. Each is (question, numbered evidence, answer)."""
    raw = json.loads(resources.files(__name__).joinpath("answer_examples.json").read_text(encoding="utf-8"))
    return tuple(
        (item["question"], tuple({"n": n, **e} for n, e in enumerate(item["evidence"], 1)), item["answer"])
        for item in raw
    )


def answer_messages(question: str, evidence: Iterable[Mapping], layout: str = "evidence_first",
                    examples: bool = False, two_things: bool = False) -> list[BaseMessage]:
    """The answer prompt: the instructions, then (``examples``) the worked examples as earlier turns
    of the chat in the same layout, then the question with its evidence. Everything before the last
    message is the same for every question, so the generator evaluates it once per process (its
    pinned instruction prefix): the examples cost no prompt evaluation per question. ``two_things``:
    the question asks two things (:func:`components.requests.asks_two_things`), and the message says to
    answer each (``answer_two_things.txt``), on the line before the question where the question ends it."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown prompt layout {layout!r}; valid layouts: {', '.join(LAYOUTS)}")
    user = template(LAYOUTS[layout])
    shots: list[BaseMessage] = []
    for shown_question, shown_evidence, answer in answer_examples() if examples else ():
        shots += [HumanMessage(user.format(evidence=format_evidence(shown_evidence), question=shown_question)),
                  AIMessage(answer)]
    asked = user.format(evidence=format_evidence(evidence), question=question)
    if two_things:
        note, last = template("answer_two_things"), f"\nQuestion: {question}"
        asked = f"{asked.removesuffix(last)}\n{note}{last}" if asked.endswith(last) else f"{asked}\n{note}"
    return [SystemMessage(template("answer_system")), *shots, HumanMessage(asked)]


@lru_cache(maxsize=None)
def answer_opening(layout: str = "evidence_first") -> str:
    """The text every answer prompt's question message starts with in this layout (up to the first
    evidence item's or the question's own words): the generator pins it with the instructions."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown prompt layout {layout!r}; valid layouts: {', '.join(LAYOUTS)}")
    mark = "\x00"
    filled = template(LAYOUTS[layout]).format(evidence=format_evidence([{"n": 1, "title": "", "text": mark}]),
                                              question=mark)
    return filled.split(mark, 1)[0]


CHECKS = {"self_check": "check_user", "self_check_question": "check_question_user"}
"""The self-checks' yes/no questions: is the answer stated in the evidence; does the evidence
answer exactly this question."""


def check_messages(question: str, evidence: Iterable[Mapping], layout: str, answer: str,
                   check: str = "self_check", examples: bool = False, two_things: bool = False) -> list[BaseMessage]:
    """The answer prompt (as :func:`answer_messages` wrote it), the model's answer as it wrote it, and one of
    the yes/no questions of :data:`CHECKS`: everything up to the answer is what the model has just evaluated,
    so only the yes/no question's tokens are new."""
    if check not in CHECKS:
        raise ValueError(f"unknown check {check!r}; valid: {', '.join(CHECKS)}")
    return [*answer_messages(question, evidence, layout, examples, two_things), AIMessage(answer),
            HumanMessage(template(CHECKS[check]).format(question=question))]


def summary_messages(request: str, evidence: Iterable[Mapping]) -> list[BaseMessage]:
    """The summary prompt (:mod:`nodes.summarize`): the instructions, then a document's passages in its
    order and the request ("Summarize the kettle manual")."""
    return [SystemMessage(template("summarize_system")),
            HumanMessage(template("summarize_user").format(evidence=format_evidence(evidence), request=request))]


def closed_book_messages(question: str) -> list[BaseMessage]:
    """No evidence (a budget without retrieval): the model answers from what it knows."""
    return [SystemMessage(template("closed_book_system")), HumanMessage(f"Question: {question}")]


SELF_ROUTE_LETTERS = ("A", "B", "C")
"""The routing prompt's letters for ``pipeline.configuration.SELF_ROUTES`` (straight, reasoning, retrieval)."""


def self_route_messages(question: str) -> list[BaseMessage]:
    """The self-route policy's routing prompt: one letter says how the model wants to answer."""
    return [SystemMessage(template("self_route_system")), HumanMessage(f"Question: {question}")]


def reasoning_messages(question: str) -> list[BaseMessage]:
    """Closed book, thinking step by step first; :func:`final_answer` reads the answer line."""
    return [SystemMessage(template("reasoning_system")), HumanMessage(f"Question: {question}")]


_ANSWER_LINE = re.compile(r"answer\s*:\s*(.+)", re.IGNORECASE)


def final_answer(text: str) -> str:
    """The answer of a step-by-step reply: what follows the last "Answer:", else its last line."""
    found = _ANSWER_LINE.findall(text)
    if found:
        return found[-1].strip()
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def condense_messages(history: Iterable[Mapping], question: str) -> list[BaseMessage]:
    """Messages asking the model to make ``question`` standalone, given earlier turns."""
    lines = []
    for turn in history:
        lines.append(f"User: {turn['standalone_question']}")
        lines.append(f"Assistant: {turn['answer']}")
    return [
        SystemMessage(template("condense_system")),
        HumanMessage(template("condense_user").format(history="\n".join(lines), question=question)),
    ]
