"""langgraph.json names the compiled graph the way LangGraph's server and Studio load it: a file
path and an attribute. Load it exactly so, and check it is this project's graph."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from langgraph.graph.state import CompiledStateGraph

ROOT = Path(__file__).resolve().parents[1]


def test_langgraph_json_names_the_compiled_graph():
    config = json.loads((ROOT / "langgraph.json").read_text())
    assert config["dependencies"] == ["."]
    (name, target), = config["graphs"].items()
    path, _, attribute = target.partition(":")
    spec = importlib.util.spec_from_file_location(f"langgraph_json_{name}", ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    graph = getattr(module, attribute)
    assert isinstance(graph, CompiledStateGraph)
    assert {"start_turn", "classify_tier", "retrieve", "generate"} <= set(graph.get_graph().nodes)
    assert set(graph.get_input_jsonschema()["properties"]) == {"question", "overrides", "documents", "fresh"}
