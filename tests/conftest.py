"""Shared fixtures: the real embedder, a small real index of Wikipedia summaries, the smallest GGUF."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from components.embedder import Embedder  # noqa: E402
from components.index import PassageIndex  # noqa: E402
from components.ingest import ingest  # noqa: E402
from components.sources import wikipedia_summaries  # noqa: E402

# Articles for the test knowledge base: a spread of topics with well-known facts.
TEST_ARTICLES = (
    "2001: A Space Odyssey", "Albert Einstein", "Amazon River", "Apollo 11", "Charles Darwin",
    "Eiffel Tower", "Isaac Newton", "Leonardo da Vinci", "Marie Curie", "Mount Everest",
    "Photosynthesis", "Pacific Ocean",
    "Tokyo", "William Shakespeare", "World War I", "Abraham Lincoln", "Moon", "Jupiter",
)


def test_documents():
    wanted = set(TEST_ARTICLES)
    return [d for d in wikipedia_summaries() if d.title in wanted]


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    e = Embedder()
    e.warm_up()
    return e


@pytest.fixture(scope="session")
def index_dir(tmp_path_factory, embedder) -> Path:
    directory = tmp_path_factory.mktemp("wiki-index")
    index = PassageIndex(embedder.name, embedder.dimension, directory)
    ingest(test_documents(), index, embedder)
    return directory


@pytest.fixture
def small_wikipedia(tmp_path, monkeypatch):
    """The open-domain benchmarks' corpus (the bundled summaries) cut down to the test articles, and
    cached in a private folder."""
    from components import sources
    from eval import corpora

    documents = test_documents()
    monkeypatch.setattr(sources, "wikipedia_summaries", lambda: iter(documents))
    monkeypatch.setattr(corpora, "cache_dir", lambda: tmp_path / "bench-cache")
    return documents


@pytest.fixture(scope="session")
def index(index_dir, embedder) -> PassageIndex:
    return PassageIndex.load(index_dir, embedder=embedder.name, dimension=embedder.dimension)


@pytest.fixture(scope="session")
def tiny_generator():
    from components.generator import load_chat_model

    model = load_chat_model("smollm2-135m", n_ctx=2048)
    model.warm_up()
    return model


@pytest.fixture(scope="session")
def ctx(embedder, index, tiny_generator):
    """A full context on real components: MiniLM, the small index, hybrid reranker, SmolLM2, the
    committed tier router, answerability models and answer probe (which does not read SmolLM2: the check
    fit without it applies, as ``RAGContext.load`` sets it up, and the Wikipedia check, which reads it, never
    does); the pipeline is the thesis' fixed Medium tier (character budgets) so that tests know the budget;
    the cascade's tests set their own pipeline."""
    from components.answer_probe import AnswerProbe
    from components.answerability import FALLBACK_MODEL, WIKIPEDIA_MODEL, AnswerabilityModel
    from components.reranker import HybridReranker
    from pipeline.configuration import THESIS_TIERS, PipelineConfig
    from pipeline.context import RAGContext
    from router.model import TierRouter

    router = TierRouter.load(embedder=embedder.name, dimension=embedder.dimension)
    answerability = AnswerabilityModel.load()
    return RAGContext(embedder=embedder, index=index, reranker=HybridReranker(), generator=tiny_generator,
                      pipeline=PipelineConfig(policy="fixed", tiers=THESIS_TIERS), router=router,
                      answerability=answerability, sufficiency=sufficiency_scorer() if answerability.uses_sufficiency else None,
                      answer_probe=AnswerProbe.load(),
                      answerability_fallback=AnswerabilityModel.load(FALLBACK_MODEL) if answerability.uses_answer_probe else None,
                      answerability_wikipedia=AnswerabilityModel.load(WIKIPEDIA_MODEL))


@pytest.fixture(scope="session")
def withholding_ctx(ctx):
    """``ctx`` with an answerability check that scores every answer 0.120 and is fit at 0.125: it
    withholds every answer the model gives (and the two read alike in whole percents)."""
    import math
    from dataclasses import replace

    from components.answerability import AnswerabilityModel

    check = AnswerabilityModel(("support",), (0.5,), (0.25,), (0.0,), math.log(0.12 / 0.88), {"threshold": 0.125})
    return replace(ctx, answerability=check)


@functools.cache
def sufficiency_scorer():
    """The shipped sufficiency scorer, loaded once per test process."""
    from components.sufficiency import SufficiencyScorer

    scorer = SufficiencyScorer()
    scorer.warm_up()
    return scorer


@pytest.fixture
def data_dir() -> Path:
    from eval.datasets import DatasetError, data_dir as find_data_dir

    try:
        return find_data_dir()
    except DatasetError as exc:
        pytest.skip(f"benchmark data absent: {exc}")


@pytest.fixture
def tiny_squad(tmp_path, monkeypatch):
    """A data folder holding a two-question SQuAD 2.0 dev file (one answerable, one not), and a
    private cache so its benchmark corpus is built fresh."""
    import json

    data = tmp_path / "data" / "squad_v2"
    data.mkdir(parents=True)
    context = "The Eiffel Tower was built from 1887 to 1889. It is in Paris. Gustave Eiffel's company designed it."
    squad = {"version": "v2.0", "data": [{"title": "Eiffel_Tower", "paragraphs": [{"context": context, "qas": [
        {"id": "a1", "question": "Where is the Eiffel Tower?", "is_impossible": False,
         "answers": [{"text": "Paris", "answer_start": context.index("Paris")}]},
        {"id": "u1", "question": "How tall is the Leaning Tower of Pisa?", "is_impossible": True, "answers": []},
    ]}]}]}
    (data / "dev.json").write_text(json.dumps(squad))
    monkeypatch.setenv("ADAPTIVE_RAG_CACHE", str(tmp_path / "cache"))
    return tmp_path / "data"
