"""The graph's nodes, one module each. Every node takes (state, runtime) and returns a partial state."""

from nodes.ask_who import ask_who
from nodes.check_answer import check_answer
from nodes.classify_tier import classify_tier
from nodes.compare import compare, compare_more
from nodes.compress import compress
from nodes.condense_question import condense_question
from nodes.describe import describe, describe_more
from nodes.finish_turn import finish_turn
from nodes.generate import generate
from nodes.grade_answer import grade_answer
from nodes.grade_confidence import grade_confidence
from nodes.lookup_cache import lookup_cache
from nodes.rerank import rerank
from nodes.retrieve import retrieve
from nodes.small_talk import small_talk
from nodes.start_turn import start_turn
from nodes.summarize import summarize
from nodes.tell_age import tell_age

__all__ = [
    "start_turn",
    "condense_question",
    "ask_who",
    "small_talk",
    "lookup_cache",
    "classify_tier",
    "retrieve",
    "summarize",
    "grade_confidence",
    "rerank",
    "describe",
    "describe_more",
    "tell_age",
    "compare",
    "compare_more",
    "compress",
    "generate",
    "grade_answer",
    "check_answer",
    "finish_turn",
]
