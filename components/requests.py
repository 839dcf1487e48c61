"""What a request to summarize a document reads like ("Summarize the kettle manual", "What is the lease about?"),
or one that asks of a subject as a whole ("Explain the rules of cricket", "How does the heart work?"), and how
a question calls a document ("the handbook", "my report"); and whether a question asks two things ("Who wrote
Hamlet and when was it written?").

Read by the graph's routing (:func:`graph.routing.asks_to_summarize`), the rewrite of a follow-up ("Summarize
it": :func:`nodes.condense_question.summary_follow_up`), the summary itself (:mod:`nodes.summarize`), the
search of the files a question names (:func:`nodes.retrieve.named_documents`) and the answer prompt
(:func:`asks_two_things`: :mod:`nodes.generate`, :mod:`components.short_answer`); it loads nothing.
"""

from __future__ import annotations

import re
from typing import Sequence

_POLITE = r"(?:please\s+)?(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
_KIND = r"(?:(?:a|an|the)\s+)?(?:(?:short|brief|quick)\s+)?"
_NOUN = r"(?:summary|overview|outline|recap|rundown|gist|synopsis|main\s+points|key\s+points)"
ASPECTS = ("rules", "history", "basics", "fundamentals", "principles", "story", "plot", "life", "career",
           "origins", "origin", "background")
"""What a request may ask of a subject as a whole ("the rules of cricket", "the history of Japan"), which a
summary of the subject's document tells."""
_ASPECT = rf"(?:the\s+)?(?:{'|'.join(ASPECTS)})\s+of\s+"
_WORKS = r"how\s+(?:(?:does|do)\s+)?(?P<working>[^?]+?)\s+works?"
_HOW_DOES = r"how\s+(?:does|do)\s+[^?]+?\s+work"
_OWNED = rf"(?P<owner>[^?]+?)['’]s\s+(?:{'|'.join(ASPECTS)})"
_REFERRED = rf"(?:its|their|his|her)\s+(?:{'|'.join(ASPECTS)})"
"""An aspect of what the conversation is on: "its history", "his life" (the rewrite of a follow-up reads it)."""
SUMMARIZE = (
    re.compile(rf"^\W*{_POLITE}(?:summari[sz]e|sum\s+up|recap|give\s+(?:me\s+|us\s+)?{_KIND}{_NOUN}\s+of|"
               rf"(?:what\s+(?:is|are)\s+)?{_KIND}{_NOUN}\s+of|tl;?\s*dr(?:\s+of)?)\s+(?P<thing>[^?]+?)[\s?.!]*$",
               re.IGNORECASE),
    re.compile(r"^\W*what(?:['’]s|\s+is|\s+are)\s+(?P<thing>[^?]+?)\s+about[\s?.!]*$", re.IGNORECASE),
    re.compile(rf"^\W*{_POLITE}(?:explain|describe|outline|tell\s+(?:me|us)\s+about)\s+"
               rf"(?P<thing>{_ASPECT}[^?]+?|{_WORKS}|{_OWNED}|{_REFERRED})[\s?.!]*$", re.IGNORECASE),
    re.compile(rf"^\W*(?P<thing>{_HOW_DOES})[\s?.!]*$", re.IGNORECASE),
    re.compile(rf"^\W*{_POLITE}(?:(?:give|tell)\s+(?:me|us)|what\s+are)\s+(?:(?:a\s+few|some|a|\w+)\s+)?"
               r"(?:(?:interesting|fun|key|important|basic|main)\s+)?facts\s+(?:about|on)\s+(?P<thing>[^?]+?)[\s?.!]*$",
               re.IGNORECASE),
)
"""How a request to summarize a document reads: "Summarize X", "Sum up X", "Give me an overview of X",
"What are the main points of X?", "TL;DR of X", "What is X about?"; and how one asks of a subject as a whole:
"Explain the rules of X", "Describe the history of X", "Tell me about the life of X" or "X's life", "Explain how X works",
"How does X work?" (:func:`subject_of`), "Give me three facts about X"; "Describe his life" asks it of what the
conversation is on (:func:`aspect_of_reference`)."""
_ARTICLE = r"(?:the\s+)?(?:wikipedia\s+)?(?:article|page|entry)\s+(?:on|about|for)\s+(?P<titled>.+?)"
"""What asks for the summary of a subject by its article: "the article on Mars", "the Wikipedia page about Rome"."""
_SUBJECT = re.compile(rf"^\W*(?:{_ASPECT}(?P<subject>.+?)|{_WORKS}|{_OWNED}|{_ARTICLE})\W*$", re.IGNORECASE)
MAX_THING_WORDS = 8
"""The most words the thing to summarize may have: a longer one is a question of its own."""


def summarized_thing(question: str) -> str | None:
    """What ``question`` asks to have summarized ("Summarize the kettle manual" → "the kettle manual"),
    ``None`` when it asks no such thing (:data:`SUMMARIZE`)."""
    for pattern in SUMMARIZE:
        found = pattern.match(question)
        if found and len(found["thing"].split()) <= MAX_THING_WORDS:
            return found["thing"].strip()
    return None


def subject_of(thing: str) -> str | None:
    """The subject a request to summarize ``thing`` asks of as a whole ("the rules of cricket" → "cricket",
    "how vaccines work" and "how does the heart work" → "vaccines", "the heart", "Einstein's life" →
    "Einstein") or by its article ("the article on Mars" → "Mars"), ``None`` when ``thing`` is
    not so worded (:data:`ASPECTS`) or the subject is what the conversation is on ("how it works":
    :data:`REFERENCES`, which the rewrite of a follow-up reads)."""
    found = _SUBJECT.match(thing)
    subject = " ".join((found["subject"] or found["working"] or found["owner"] or found["titled"]).split()) \
        if found else None
    return None if subject is None or subject.lower() in REFERENCES else subject


_ASPECT_OF_REFERENCE = re.compile(
    rf"^(?:(?:its|their|his|her)\s+(?P<owned>{'|'.join(ASPECTS)})|(?:the\s+)?(?P<aspect>{'|'.join(ASPECTS)})\s+of\s+"
    r"(?:it|them|this|that|him|her)|how\s+(?P<does>(?:does|do)\s+)?(?:it|they|this|that)\s+works?)$", re.IGNORECASE)


def aspect_of_reference(thing: str, subject: str) -> str | None:
    """``thing``, a request's aspect of what the conversation is on, asked of ``subject`` instead: "its
    history" → "the history of <subject>", "how does it work" → "how does <subject> work", "how it works" →
    "how <subject> works"; ``None`` for anything else."""
    found = _ASPECT_OF_REFERENCE.match(" ".join(thing.split()))
    if found is None:
        return None
    if found["owned"] or found["aspect"]:
        return f"the {(found['owned'] or found['aspect']).lower()} of {subject}"
    return f"how does {subject} work" if found["does"] else f"how {subject} works"


REFERENCES = frozenset({"it", "this", "that", "them", "these", "those", "this one", "that one", "this document",
                        "that document", "this file", "that file", "these documents", "these files"})
"""What a follow-up may call the document the conversation is on ("Summarize it", "What is this document about?")."""


def summarizes_reference(question: str) -> bool:
    """Whether ``question`` asks to summarize what the conversation is on ("Summarize it"), not a document it names."""
    thing = summarized_thing(question)
    return thing is not None and " ".join(thing.lower().split()) in REFERENCES


DETERMINERS = frozenset({"the", "my", "this", "that", "our", "your", "these", "those"})
"""Words before what a question calls one of the user's files ("the handbook", "my report")."""
DOCUMENT_WORDS = frozenset({"document", "documents", "doc", "docs", "file", "files", "upload", "uploads",
                            "pdf", "pdfs", "attachment", "attachments"})
"""What a question calls any of the user's files by: "the document" names them all."""
DOCUMENT_KINDS = frozenset({
    "report", "reports", "manual", "manuals", "handbook", "guide", "guidebook", "lease", "contract", "agreement",
    "policy", "minutes", "memo", "memorandum", "letter", "email", "invoice", "receipt", "statement", "notes",
    "paper", "essay", "thesis", "dissertation", "proposal", "brochure", "leaflet", "booklet", "pamphlet",
    "presentation", "slides", "spreadsheet", "transcript", "agenda", "rules", "rulebook", "regulations",
    "specification", "spec", "readme", "resume", "cv", "newsletter", "draft", "checklist", "syllabus", "manuscript",
})
"""Kinds of document a request may name one of the user's files by ("the quarterly report", "my lease"), whether or
not a file of that kind is there. Not "book" or "article", which Wikipedia's titles and the answers read from them
are called ("the Domesday Book")."""


def called_after(tokens: Sequence[str], at: int) -> list[str]:
    """The words ``tokens[at]``, a determiner, may call a document by: the three after it, but one followed by
    "of", which names something else ("the results of the election", "the rules of cricket")."""
    return [tokens[j] for j in range(at + 1, min(at + 4, len(tokens)))
            if not (j + 1 < len(tokens) and tokens[j + 1] == "of")]


def missing_document(thing: str) -> str | None:
    """What ``thing``, the object of a request to summarize, calls a document by when it names a kind of one
    (:data:`DOCUMENT_KINDS` or :data:`DOCUMENT_WORDS`) among the three words after a leading determiner
    ("the quarterly report" → "quarterly report"); ``None`` for anything else ("the French Revolution", "a report").
    A kind followed by "of" names something else ("the rules of cricket": :func:`called_after`), as in
    :func:`nodes.retrieve.named_documents`."""
    words = thing.split()
    if len(words) < 2 or words[0].lower() not in DETERMINERS:
        return None
    tokens = [re.sub(r"[^a-z0-9]", "", w.lower()) for w in words]
    called = called_after(tokens, 0)
    return " ".join(words[1:]) if any(w in DOCUMENT_KINDS or w in DOCUMENT_WORDS for w in called) else None


_WH = r"(?:who|whom|what|when|where|which|why|how)"
_ASKED = r"(?:did|does|do|is|was|are|were|has|have|had|can|could|will|would|should|many|much|long|old|far|big)"
_TWO_THINGS = re.compile(
    rf"^\W*(?:{_WH}|is|was|are|were|did|does|do|can)\b.*?[,;]?\s+and\s+"
    rf"(?:{_WH}\s+{_ASKED}\b"  # "... and when did he die?", "... and how many moons does it have?"
    r"|(?:who|what)\s+\w+\s+(?:it|him|her|them|this|that)\b"  # "... and who designed it?", "and who built it?"
    r"|(?:who|what)\s+\w+\W*$"  # "... and who won?"
    r"|(?:when|where|why|how|by\s+whom|who\s+by)\W*$)",  # "... and when?", "... and by whom"
    re.IGNORECASE)


def asks_two_things(question: str) -> bool:
    """Whether ``question`` asks two things, a question and then another joined by "and": "Who was Albert Einstein
    and when did he die?", "When was the Eiffel Tower built and who designed it?", "Who founded Microsoft and
    when?", "Where and when was Napoleon born?". The answer prompt asks for as few words as possible, and the
    model then answers the first alone (session 67: "William Shakespeare" to "Who wrote Hamlet and when was it
    written?"). The second must open as a question does (a question word and a verb, or a question word ending
    it), so "and" inside a name ("Pride and Prejudice"), between two things asked of together ("Are Verdi and
    Thomas both composers?") or between relative clauses ("whose main campus is in Lawrence and whose branch
    campuses are ...") asks one thing. No SQuAD 2.0 or HotpotQA dev question reads so (a test counts them)."""
    return _TWO_THINGS.search(question) is not None


POPULATION_ASKED = re.compile(
    r"^\W*(?:how\s+many\s+(?:people|inhabitants|residents)\s+(?:live|lived|reside|resided)\s+in|"
    r"what\s+(?:is|was)\s+the\s+population\s+of)\s+(?P<place>[^?]+?)[?.!\s]*$", re.IGNORECASE)
"""A question that asks a place's population: "How many people live in Germany?", "What is the population of Tokyo?"."""


def population_place(question: str) -> str | None:
    """The place whose population ``question`` asks (:data:`POPULATION_ASKED`: "Germany"), or ``None``."""
    found = POPULATION_ASKED.match(question)
    return " ".join(found["place"].split()) if found else None
