import sys

import numpy as np
import pytest

from components import embedder_onnx
from components.embedder import DEFAULT_EMBEDDER, Embedder, EmbedderError
from pipeline.configuration import ConfigurationError
from pipeline.context import ResourceConfig


class TestEmbedder:
    def test_bundled_model_normalised(self, embedder):
        assert embedder.name == DEFAULT_EMBEDDER and embedder.dimension == 384
        vectors = embedder.embed_documents(["The cat sat.", "Stocks fell sharply."])
        assert vectors.shape == (2, 384) and vectors.dtype == np.float32
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)

    def test_similar_texts_score_higher(self, embedder):
        q = embedder.embed_query("Who painted the Mona Lisa?")
        docs = embedder.embed_documents(["Leonardo da Vinci painted the Mona Lisa.", "Jupiter is a gas giant."])
        assert docs[0] @ q > docs[1] @ q

    def test_short_name_resolves_to_bundle(self):
        assert Embedder("all-MiniLM-L6-v2").name == DEFAULT_EMBEDDER

    def test_empty_input(self, embedder):
        assert embedder.embed_documents([]).shape == (0, 384)

    @pytest.mark.parametrize("kwargs", [{"model": ""}, {"batch_size": 0}])
    def test_invalid_arguments(self, kwargs):
        with pytest.raises(EmbedderError):
            Embedder(**{"model": DEFAULT_EMBEDDER, **kwargs})

    def test_unloadable_model(self, tmp_path):
        (tmp_path / "empty-model").mkdir()
        with pytest.raises(EmbedderError, match="could not load"):
            Embedder(str(tmp_path / "empty-model")).warm_up()

    def test_loading_prints_no_progress_bar(self, capfd):
        """transformers draws a "Loading weights" bar on stderr while the model loads; in the CLI it
        landed between "loading models and index ..." and the answer."""
        import transformers

        Embedder().warm_up()
        assert "Loading weights" not in capfd.readouterr().err
        assert transformers.utils.logging.is_progress_bar_enabled()  # left as the embedding app had it


@pytest.fixture(scope="module")
def torch_embedder():
    embedder = Embedder(query_runtime="torch")
    embedder.warm_up()
    return embedder


class TestOnnxQueryEncoder:
    """A question is embedded through ONNX Runtime: the same vector as torch's, from a model exported
    once into the cache folder and checked against torch on load."""

    TEXTS = ("Who painted the Mona Lisa?", "Where is it?\nAnd when was it built?", "river " * 400)

    @pytest.fixture
    def cache(self, tmp_path, monkeypatch):
        monkeypatch.setenv("ADAPTIVE_RAG_CACHE", str(tmp_path))
        return tmp_path / "onnx"

    def test_questions_match_torch(self, embedder, torch_embedder):
        assert embedder.query_runtime == "onnxruntime" and torch_embedder.query_runtime == "torch"
        for text in self.TEXTS:
            vector = embedder.embed_query(text)
            assert vector.shape == (384,) and vector.dtype == np.float32
            # float32 products summed in another order differ by ~1e-7 per component; 1e-5 leaves
            # room for another CPU's kernels and is far below the score gaps retrieval ranks by
            assert np.abs(vector - torch_embedder.embed_query(text)).max() <= 1e-5

    def test_export_is_saved_and_loaded_again_without_exporting(self, cache, monkeypatch):
        assert Embedder().query_runtime == "onnxruntime"
        saved = list(cache.glob("*.onnx"))
        assert len(saved) == 1 and not list(cache.glob(".*.tmp"))

        def no_export(*args):
            raise AssertionError("exported again")

        monkeypatch.setattr(embedder_onnx, "_export", no_export)
        assert Embedder().query_runtime == "onnxruntime"

    def test_corrupt_saved_export_is_made_again(self, cache, torch_embedder):
        Embedder().warm_up()
        (saved,) = cache.glob("*.onnx")
        saved.write_bytes(b"not an onnx model")
        again = Embedder()
        assert again.query_runtime == "onnxruntime"
        assert saved.stat().st_size > 1_000_000
        assert np.abs(again.embed_query(self.TEXTS[0]) - torch_embedder.embed_query(self.TEXTS[0])).max() <= 1e-5

    def test_without_onnx_questions_stay_on_torch_and_say_why(self, cache, monkeypatch):
        monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx raises ImportError
        auto = Embedder()
        assert auto.query_runtime == "torch" and "onnx package is not installed" in auto.query_runtime_note
        assert auto.embed_query(self.TEXTS[0]).shape == (384,)
        with pytest.raises(EmbedderError, match="cannot embed questions through ONNX Runtime: the onnx package"):
            Embedder(query_runtime="onnxruntime").warm_up()

    def test_export_that_disagrees_with_torch_is_not_used(self, cache, monkeypatch):
        real_session = embedder_onnx._session

        class Off:
            def __init__(self, session):
                self.session = session

            def run(self, outputs, inputs):
                return [v + 0.01 for v in self.session.run(outputs, inputs)]

        monkeypatch.setattr(embedder_onnx, "_session", lambda model: Off(real_session(model)))
        embedder = Embedder()
        assert embedder.query_runtime == "torch"
        assert "differ from torch's by up to 0.01" in embedder.query_runtime_note

    def test_export_onnx_runtime_cannot_load_is_not_used(self, cache, monkeypatch):
        def refuse(model):
            raise RuntimeError("unsupported operator")

        monkeypatch.setattr(embedder_onnx, "_session", refuse)
        embedder = Embedder()
        assert embedder.query_runtime == "torch"
        assert "could not load the export (RuntimeError: unsupported operator)" in embedder.query_runtime_note

    def test_unknown_runtime_is_refused(self):
        with pytest.raises(EmbedderError, match="unknown query runtime 'tensorrt'; valid: auto, onnxruntime, torch"):
            Embedder(query_runtime="tensorrt")
        with pytest.raises(ConfigurationError, match="unknown embedder runtime 'tensorrt'"):
            ResourceConfig(embedder_runtime="tensorrt")
