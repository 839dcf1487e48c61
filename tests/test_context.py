"""RAGContext.load: loads every resource once, checks files before the generator, and takes an
embedder or index the caller already holds."""

from __future__ import annotations

import pytest

from components.index import IndexLoadError, PassageIndex
from pipeline.configuration import ConfigurationError
from pipeline.context import RAGContext, ResourceConfig


class TestRAGContextLoad:
    def test_preloaded_embedder_and_index_are_used_not_reloaded(self, embedder, index, index_dir):
        ctx = RAGContext.load(ResourceConfig(index_dir=index_dir, model="smollm2-135m", n_ctx=1024),
                              embedder=embedder, index=index)
        assert ctx.embedder is embedder and ctx.index is index
        assert ctx.router is not None  # the committed router, checked against the embedder

    def test_index_from_another_embedder_is_refused(self, embedder, index_dir):
        other = PassageIndex("some/other-embedder", embedder.dimension)
        with pytest.raises(ConfigurationError, match="some/other-embedder"):
            RAGContext.load(ResourceConfig(index_dir=index_dir, model="smollm2-135m"), embedder=embedder, index=other)

    def test_embedder_other_than_the_resources_name_is_refused(self, embedder, index_dir, tmp_path):
        with pytest.raises(ConfigurationError, match="given, the resources name"):
            RAGContext.load(ResourceConfig(index_dir=index_dir, embedder=str(tmp_path), model="smollm2-135m"),
                            embedder=embedder)

    def test_embedder_with_another_query_runtime_is_refused(self, embedder, index_dir):
        with pytest.raises(ConfigurationError, match="query runtime 'auto', the resources name 'torch'"):
            RAGContext.load(ResourceConfig(index_dir=index_dir, model="smollm2-135m", embedder_runtime="torch"),
                            embedder=embedder)

    def test_missing_index_fails_before_any_model_loads(self, tmp_path):
        with pytest.raises(IndexLoadError):
            RAGContext.load(ResourceConfig(index_dir=tmp_path / "nothing-here", model="smollm2-135m"))
