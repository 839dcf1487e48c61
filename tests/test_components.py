"""The component contract (components/base.py): every building block validates its constructor
arguments, warms up idempotently, and is a Component."""

from __future__ import annotations

import pydantic
import pytest

from components.base import Component
from components.embedder import Embedder, EmbedderError
from components.generator import HuggingFaceChatModel, LlamaCppChatModel
from components.index import PassageIndex, SearchHit
from components.reranker import CrossEncoderReranker, HybridReranker


class TestContract:
    def test_embedder(self, embedder):
        loaded = embedder.langchain
        embedder.warm_up()
        assert isinstance(embedder, Component) and embedder.langchain is loaded
        with pytest.raises(EmbedderError):
            Embedder("  ")
        with pytest.raises(EmbedderError):
            Embedder(batch_size=0)

    def test_index(self, index, embedder):
        index.warm_up()
        index.warm_up()
        assert isinstance(index, Component)
        hits = index.search(embedder.embed_query("Who was Marie Curie?"), 2)
        assert all(isinstance(h, SearchHit) for h in hits) and hits[0].score >= hits[1].score
        with pytest.raises(ValueError):
            PassageIndex("emb", 0)

    def test_rerankers(self):
        hybrid = HybridReranker()
        hybrid.warm_up()
        hybrid.warm_up()
        assert isinstance(hybrid, Component)
        assert isinstance(CrossEncoderReranker("some/cross-encoder"), Component)  # nothing loads until warm_up
        with pytest.raises(ValueError):
            HybridReranker(w_dense=-1)
        with pytest.raises(ValueError):
            CrossEncoderReranker(" ")

    def test_generators(self, tiny_generator):
        loaded = tiny_generator._llama
        tiny_generator.warm_up()
        assert isinstance(tiny_generator, Component) and tiny_generator._llama is loaded
        assert issubclass(HuggingFaceChatModel, Component)  # loads when constructed: no model here
        for bad in ({"n_ctx": 16}, {"n_threads": 0}, {"max_tokens": 0}, {"temperature": -1.0}, {"model_path": ""}):
            with pytest.raises(pydantic.ValidationError):
                LlamaCppChatModel(**{"model_path": "x.gguf", **bad})
