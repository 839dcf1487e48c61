"""What a request to summarize a document reads like ("Summarize the kettle manual", "What is the lease about?").

Read by the graph's routing (:func:`graph.routing.asks_to_summarize`), the rewrite of a follow-up ("Summarize
it": :func:`nodes.condense_question.summary_follow_up`) and the summary itself (:mod:`nodes.summarize`); it
loads nothing.
"""

from __future__ import annotations

import re

_POLITE = r"(?:please\s+)?(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
_KIND = r"(?:(?:a|an|the)\s+)?(?:(?:short|brief|quick)\s+)?"
_NOUN = r"(?:summary|overview|outline|recap|rundown|gist|synopsis|main\s+points|key\s+points)"
SUMMARIZE = (
    re.compile(rf"^\W*{_POLITE}(?:summari[sz]e|sum\s+up|recap|give\s+(?:me\s+|us\s+)?{_KIND}{_NOUN}\s+of|"
               rf"(?:what\s+(?:is|are)\s+)?{_KIND}{_NOUN}\s+of|tl;?\s*dr(?:\s+of)?)\s+(?P<thing>[^?]+?)[\s?.!]*$",
               re.IGNORECASE),
    re.compile(r"^\W*what(?:['’]s|\s+is|\s+are)\s+(?P<thing>[^?]+?)\s+about[\s?.!]*$", re.IGNORECASE),
)
"""How a request to summarize a document reads: "Summarize X", "Sum up X", "Give me an overview of X",
"What are the main points of X?", "TL;DR of X", "What is X about?"."""
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


REFERENCES = frozenset({"it", "this", "that", "them", "these", "those", "this one", "that one", "this document",
                        "that document", "this file", "that file", "these documents", "these files"})
"""What a follow-up may call the document the conversation is on ("Summarize it", "What is this document about?")."""


def summarizes_reference(question: str) -> bool:
    """Whether ``question`` asks to summarize what the conversation is on ("Summarize it"), not a document it names."""
    thing = summarized_thing(question)
    return thing is not None and " ".join(thing.lower().split()) in REFERENCES
