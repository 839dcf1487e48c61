"""The default generator (Qwen2.5-Coder-1.5B, assembled from its PyPI chunks) answers correctly and
cites passages that contain the answer."""

import pytest

from components.model_files import DEFAULT_PRESET, ModelFileError
from graph import graph

QUESTIONS = [
    ("Who directed 2001: A Space Odyssey?", "kubrick"),
    ("In which city is the Eiffel Tower?", "paris"),
    ("Who shared the 1903 Nobel Prize in Physics with Marie Curie?", "pierre"),
]


@pytest.fixture(scope="module")
def default_ctx(ctx):
    from components.generator import load_chat_model

    try:
        model = load_chat_model(DEFAULT_PRESET)
    except ModelFileError as exc:
        pytest.fail(f"default model unavailable: {exc}")
    model.warm_up()
    return ctx.__class__(ctx.embedder, ctx.index, ctx.reranker, model)


@pytest.mark.slow
@pytest.mark.parametrize("question,expected", QUESTIONS)
def test_answers_with_supporting_citation(default_ctx, question, expected):
    out = graph.invoke({"question": question, "overrides": {"tier": "medium"}}, context=default_ctx)
    assert expected in out["answer"].lower(), out
    assert out["citations"], out
    assert any(expected in c["text"].lower() for c in out["citations"]), out["citations"]


@pytest.mark.slow
def test_abstains_without_evidence(default_ctx):
    out = graph.invoke({"question": "What is the airspeed of an unladen swallow carrying a coconut?",
                        "overrides": {"tier": "easy"}}, context=default_ctx)
    assert out["trace"]["abstained"] or not out["citations"], out
