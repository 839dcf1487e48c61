"""The graph's nodes, one module each. Every node takes (state, runtime) and returns a partial state."""

from nodes.classify_tier import classify_tier
from nodes.compress import compress
from nodes.generate import generate
from nodes.grade_confidence import grade_confidence
from nodes.rerank import rerank
from nodes.retrieve import retrieve

__all__ = ["classify_tier", "retrieve", "grade_confidence", "rerank", "compress", "generate"]
