"""The import graph, read from the code: no circles between modules or between packages, and every
import runs down the layers (README, "Layers")."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = [
    {"prompts", "components"},  # building blocks: no project imports but their own
    {"router"},  # tier router inference
    {"pipeline"},  # configuration, state, run context
    {"nodes"},
    {"graph"},  # routing functions, builder, the compiled graph
    {"app"}, {"eval"},  # front doors; evaluation (neither imports the other)
    {"training"},  # oracle labelling and router training, which run the evaluation code
]
LAYER_OF = {package: i for i, layer in enumerate(LAYERS) for package in layer}
# app and eval share a level in the README's drawing but must not import each other.
SAME_LEVEL = {"app": 5, "eval": 5}


def project_imports() -> dict[str, set[str]]:
    """module -> project modules it imports (at any depth of the file: lazy imports count too)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for package in LAYER_OF:
        for path in (ROOT / package).glob("*.py"):
            module = f"{package}.{path.stem}" if path.stem != "__init__" else package
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = []
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                elif isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                for name in names:
                    if name.split(".")[0] in LAYER_OF and (name in _modules() or name.split(".")[0] == name):
                        if name != module:
                            graph[module].add(name)
    return graph


def _modules() -> set[str]:
    found = set()
    for package in LAYER_OF:
        found.add(package)
        found.update(f"{package}.{p.stem}" for p in (ROOT / package).glob("*.py") if p.stem != "__init__")
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found, state, stack = [], {}, []

    def visit(node: str) -> None:
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def test_no_module_circles():
    assert cycles(project_imports()) == []


def test_no_package_circles():
    packages: dict[str, set[str]] = defaultdict(set)
    for module, imported in project_imports().items():
        for name in imported:
            if name.split(".")[0] != module.split(".")[0]:
                packages[module.split(".")[0]].add(name.split(".")[0])
    assert cycles(packages) == []


def test_imports_run_down_the_layers():
    upward = []
    for module, imported in project_imports().items():
        here = module.split(".")[0]
        for name in imported:
            there = name.split(".")[0]
            if there == here:
                continue
            same_level = here in SAME_LEVEL and there in SAME_LEVEL
            if same_level or LAYER_OF[there] > LAYER_OF[here]:
                upward.append(f"{module} -> {name}")
    assert upward == []


def test_every_package_has_a_layer():
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "docs"}
    assert packages <= set(LAYER_OF), packages - set(LAYER_OF)
