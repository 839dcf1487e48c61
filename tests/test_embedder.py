import numpy as np
import pytest

from components.embedder import DEFAULT_EMBEDDER, Embedder, EmbedderError


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
