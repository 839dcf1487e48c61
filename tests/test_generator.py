import numpy as np
import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from components.generator import LlamaCppChatModel, PromptTooLongError, load_chat_model, token_entropy


def test_token_entropy_matches_definition():
    logits = np.array([2.0, 1.0, 0.0, -1.0], dtype=np.float32)
    p = np.exp(logits) / np.exp(logits).sum()
    assert token_entropy(logits) == pytest.approx(float(-(p * np.log(p)).sum()), rel=1e-6)
    assert token_entropy(np.zeros(8, dtype=np.float32)) == pytest.approx(np.log(8))


class TestLlamaCppChatModel:
    MESSAGES = [SystemMessage("Answer briefly."), HumanMessage("What is the capital of France?")]

    def test_invoke_reports_tokens_and_entropy(self, tiny_generator):
        reply = tiny_generator.invoke(self.MESSAGES, max_tokens=8)
        usage = reply.usage_metadata
        assert reply.text
        assert usage["input_tokens"] > 10 and 1 <= usage["output_tokens"] <= 8
        entropies = reply.response_metadata["token_entropies"]
        assert len(entropies) >= usage["output_tokens"] and all(e >= 0 for e in entropies)

    def test_stream_yields_tokens(self, tiny_generator):
        chunks = list(tiny_generator.stream(self.MESSAGES, max_tokens=8))
        text_chunks = [c for c in chunks if c.text]
        assert len(text_chunks) >= 2
        assert chunks[-1].usage_metadata["output_tokens"] >= 1

    def test_deterministic(self, tiny_generator):
        a = tiny_generator.invoke(self.MESSAGES, max_tokens=12).text
        b = tiny_generator.invoke(self.MESSAGES, max_tokens=12).text
        assert a == b

    def test_reset_cache_forgets_the_evaluated_prompt(self, tiny_generator):
        tiny_generator.invoke(self.MESSAGES, max_tokens=2)
        assert tiny_generator._llama.n_tokens > 0
        tiny_generator.reset_cache()
        assert tiny_generator._llama.n_tokens == 0

    def test_prompt_longer_than_context(self, tiny_generator):
        with pytest.raises(PromptTooLongError, match="more than the model's context"):
            tiny_generator.invoke([HumanMessage("word " * 3000)], max_tokens=4)


class TestLoadChatModel:
    def test_preset(self):
        model = load_chat_model("smollm2-135m")
        assert isinstance(model, LlamaCppChatModel) and model.n_threads == 2

    def test_gguf_path(self, tiny_generator):
        assert isinstance(load_chat_model(tiny_generator.model_path), LlamaCppChatModel)

    @pytest.mark.parametrize("bad", ["", "   "])
    def test_empty(self, bad):
        with pytest.raises(ValueError, match="preset"):
            load_chat_model(bad)

    def test_missing_gguf(self, tmp_path):
        with pytest.raises(FileNotFoundError):
            load_chat_model(str(tmp_path / "missing.gguf"))

    def test_bad_threads(self):
        with pytest.raises(ValueError, match="n_threads"):
            load_chat_model("smollm2-135m", n_threads=0)
