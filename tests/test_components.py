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


class TestQuestionTypeModel:
    """components.question_type: the multi-hop model's features, file and checks."""

    def test_word_counts(self):
        from components.question_type import lexical_features

        assert lexical_features('Are "Dune" and Solaris both novels, or films?') == {
            "words": 8.0, "capitalised": 1.0, "commas": 1.0, "comparison": 1.0, "quotes": 2.0}
        assert lexical_features("who wrote it")["comparison"] == 0.0

    def test_the_shipped_model_loads_with_its_threshold(self):
        from components.question_type import LEXICAL_FEATURES, QuestionTypeModel

        model = QuestionTypeModel.load()
        assert model.dimension == 384 and set(LEXICAL_FEATURES) <= set(model.features)
        assert 0.0 < model.threshold < 1.0 and model.metadata["fitted_by"] == "python -m training.question_type"
        p = model.multi_hop_probability("Who wrote Dune?", [0.0] * 384)
        assert 0.0 <= p <= 1.0

    def test_bad_models_and_inputs_are_refused(self, tmp_path):
        from components.question_type import QuestionTypeModel, QuestionTypeModelError

        with pytest.raises(QuestionTypeModelError, match="unknown feature"):
            QuestionTypeModel(("top_score",), (0.0,), (1.0,), (1.0,), 0.0)
        model = QuestionTypeModel(("q0", "q2", "words"), (0.0,) * 3, (1.0,) * 3, (1.0,) * 3, 0.0)
        assert model.dimension == 3
        with pytest.raises(QuestionTypeModelError, match="reads 3-d embeddings"):
            model.multi_hop_probability("q?", [0.1, 0.2])
        bad = tmp_path / "question_type.json"
        bad.write_text("[1, 2]")
        with pytest.raises(QuestionTypeModelError, match="not a JSON object"):
            QuestionTypeModel.load(bad)


class TestArithmetic:
    """A message that is only a sum, worked out exactly (session 66: "What is 2+2?" was answered "5" and given)."""

    @pytest.mark.parametrize("message, reply", [
        ("What is 2+2?", "2 + 2 = 4"), ("calculate 17 * 23", "17 × 23 = 391"), ("What's 7 times 8?", "7 × 8 = 56"),
        ("(3+4)/2 =", "(3 + 4) ÷ 2 = 3.5"), ("what is 10 divided by 4", "10 ÷ 4 = 2.5"), ("2^10?", "2^10 = 1,024"),
        ("How much is 1,250 - 30.5?", "1,250 − 30.5 = 1,219.5"), ("-3 * -3", "−3 × −3 = 9"), ("1 / 3", "1 ÷ 3 ≈ 0.333333"),
        ("10 / 0", "10 ÷ 0 has no value: division by zero."), ("0.1 + 0.2", "0.1 + 0.2 = 0.3"),
        ("9 ** 999999", "9^999,999 is too large to work out here."),
        ("2*(3+4)-5/2", "2 × (3 + 4) − 5 ÷ 2 = 11.5"), ("2 ^ -1", "2^−1 = 0.5"),
    ])
    def test_a_sum_is_worked_out_exactly(self, message, reply):
        from components.arithmetic import worked_out

        assert worked_out(message) == reply

    @pytest.mark.parametrize("message", ["What is 2?", "1984", "What is Catch-22?", "2-1 win?", "9/11", "24/7",
                                         "What is 9/11?", "1939-1945", "(1+2", "2^0.5", "3 x 4", "1e5+1",
                                         "What is 10 percent of the population?", "Who wrote Hamlet?", ""])
    def test_anything_else_is_no_sum(self, message):
        from components.arithmetic import worked_out

        assert worked_out(message) is None
