import numpy as np
import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from components.generator import (
    LlamaCppChatModel,
    PromptTooLongError,
    _default_params,
    built_with_amx,
    load_chat_model,
    max_tokens_kwargs,
    token_entropy,
)
from components.model_files import ModelFileError


def test_token_entropy_matches_definition():
    logits = np.array([2.0, 1.0, 0.0, -1.0], dtype=np.float32)
    p = np.exp(logits) / np.exp(logits).sum()
    assert token_entropy(logits) == pytest.approx(float(-(p * np.log(p)).sum()), rel=1e-6)
    assert token_entropy(np.zeros(8, dtype=np.float32)) == pytest.approx(np.log(8))


class TestWeightBuffers:
    """AMX buffers crash some virtual machines on the first decode, so they are off by default
    wherever llama.cpp was built with AMX (see the generator's notes)."""

    def test_amx_is_read_from_the_system_information(self):
        assert built_with_amx("CPU : AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | OPENMP = 1 |")
        assert not built_with_amx("CPU : AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 0 | OPENMP = 1 |")
        assert not built_with_amx("CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | FMA = 1 |")
        assert isinstance(built_with_amx(), bool)  # this machine's library answers too

    def test_default_params_apply_while_loading_and_are_restored(self):
        from llama_cpp import llama_cpp as lib

        defaults = lib.llama_model_default_params, lib.llama_context_default_params
        with _default_params({"use_extra_bufts": False, "vocab_only": True}, {"n_ubatch": 7}):
            params = lib.llama_model_default_params()
            assert params.use_extra_bufts is False and params.vocab_only is True
            assert lib.llama_context_default_params().n_ubatch == 7
        assert (lib.llama_model_default_params, lib.llama_context_default_params) == defaults
        assert lib.llama_model_default_params().vocab_only is False
        with pytest.raises(RuntimeError), _default_params({"vocab_only": True}, {}):
            raise RuntimeError("a failed load")
        assert (lib.llama_model_default_params, lib.llama_context_default_params) == defaults

    def test_extra_buffers_can_be_chosen(self, tiny_generator):
        for extra_buffers in (False, None):
            model = LlamaCppChatModel(model_path=tiny_generator.model_path, n_ctx=512, extra_buffers=extra_buffers)
            assert model.invoke([HumanMessage("Hello")], max_tokens=2).usage_metadata["output_tokens"] >= 1


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

    def test_reports_token_probabilities(self, tiny_generator):
        metadata = tiny_generator.invoke(self.MESSAGES, max_tokens=8).response_metadata
        probs, margins = metadata["token_probs"], metadata["token_margins"]
        assert len(probs) == len(margins) == len(metadata["token_entropies"])
        assert all(0.0 <= m <= p <= 1.0 for p, m in zip(probs, margins, strict=True))
        assert len(metadata["token_pieces"]) in (len(probs), len(probs) - 1)

    def test_stop_when_stops_the_answer_where_the_rule_holds(self, tiny_generator):
        full = tiny_generator.invoke(self.MESSAGES, max_tokens=12)
        seen = []

        def after_three(probs, margins, pieces):
            seen.append((len(probs), len(pieces)))
            return len(probs) > 3

        cut = tiny_generator.invoke(self.MESSAGES, max_tokens=12, stop_when=after_three)
        assert full.usage_metadata["output_tokens"] > 3 and not full.response_metadata["stopped_early"]
        assert cut.response_metadata["stopped_early"]
        assert cut.usage_metadata["output_tokens"] == 3  # the fourth token was chosen, never evaluated or given
        assert full.text.startswith(cut.text)
        assert seen[0] == (1, 0)  # asked after each token is chosen: the newest token's text is not known yet
        assert all(pieces == probs - 1 for probs, pieces in seen)

    def test_stop_when_at_the_first_token_gives_nothing(self, tiny_generator):
        reply = tiny_generator.invoke(self.MESSAGES, max_tokens=12, stop_when=lambda probs, margins, pieces: True)
        assert reply.text == "" and reply.usage_metadata["output_tokens"] == 0
        assert reply.response_metadata["stopped_early"] and len(reply.response_metadata["token_probs"]) == 1

    def test_stop_at_ends_the_answer_where_its_text_begins(self, tiny_generator):
        """``stop_at`` (the answer node's "[": no citation marker is generated) cuts the same answer
        where the text begins, and the tokens after it are neither given nor evaluated."""
        copy = [SystemMessage("You repeat the user's message exactly, with nothing else."),
                HumanMessage("Write this text exactly: Paris [2]")]
        tiny_generator.reset_cache()  # both from the same state: the same greedy answer
        full = tiny_generator.invoke(copy, **max_tokens_kwargs(tiny_generator, 16))
        tiny_generator.reset_cache()
        cut = tiny_generator.invoke(copy, **max_tokens_kwargs(tiny_generator, 16, stop_at=["["]))
        assert "[" in full.text and cut.text == full.text[:full.text.index("[")]
        assert cut.usage_metadata["output_tokens"] < full.usage_metadata["output_tokens"]
        assert cut.response_metadata["finish_reason"] == "stop" and not cut.response_metadata["stopped_early"]

    def test_prompt_longer_than_context(self, tiny_generator):
        with pytest.raises(PromptTooLongError, match="more than the model's context"):
            tiny_generator.invoke([HumanMessage("word " * 3000)], max_tokens=4)


class TestPrefixReuse:
    """Only tokens not already in the key/value cache are evaluated; snapshots bring a prefix back."""

    SYSTEM = SystemMessage("You answer questions about geography in one short phrase, citing nothing.")

    def ask(self, model, text):
        return model.invoke([self.SYSTEM, HumanMessage(text)], max_tokens=4)

    @staticmethod
    def evaluated(reply):
        return reply.response_metadata["prompt_tokens_evaluated"]

    def test_cold_prompt_is_evaluated_whole(self, tiny_generator):
        tiny_generator.reset_cache(pinned=True)
        reply = self.ask(tiny_generator, "What is the capital of France?")
        assert self.evaluated(reply) == reply.usage_metadata["input_tokens"]

    def test_instruction_prefix_survives_other_prompts_and_resets(self, tiny_generator):
        tiny_generator.reset_cache(pinned=True)
        first = self.ask(tiny_generator, "What is the capital of France?")
        tiny_generator.invoke([HumanMessage("Say hello.")], max_tokens=2)  # evicts the live cache
        tiny_generator.reset_cache()  # forgets all but the pinned instruction prefix
        second = self.ask(tiny_generator, "What is the capital of Peru?")
        assert self.evaluated(second) < second.usage_metadata["input_tokens"] - 10
        assert self.evaluated(first) == first.usage_metadata["input_tokens"]

    def test_worked_examples_belong_to_the_pinned_prefix(self, tiny_generator):
        from prompts import answer_messages

        evidence = [{"n": 1, "title": "Peru", "text": "Lima is the capital of Peru."}]
        tiny_generator.reset_cache(pinned=True)
        first = tiny_generator.invoke(answer_messages("What is the capital of Peru?", evidence, examples=True), max_tokens=2)
        tiny_generator.reset_cache()
        second = tiny_generator.invoke(answer_messages("Which city is Peru's capital?", evidence, examples=True),
                                       max_tokens=2)
        plain = tiny_generator._prompt_tokens(answer_messages("Which city is Peru's capital?", evidence))[0]
        # the examples add hundreds of input tokens and no evaluated ones: only the question's turn is evaluated
        assert second.usage_metadata["input_tokens"] > len(plain) + 200
        assert self.evaluated(second) < len(plain) - 10
        assert self.evaluated(first) == first.usage_metadata["input_tokens"]

    def test_a_named_opening_is_pinned_with_the_instructions(self, tiny_generator):
        from prompts import answer_messages, answer_opening

        opening = answer_opening()
        first = answer_messages("What is the capital of Peru?", [{"n": 1, "title": "Peru", "text": "Lima is the capital."}])
        second = answer_messages("Where is Quito?", [{"n": 1, "title": "Ecuador", "text": "Quito is in Ecuador."}])
        shared = tiny_generator._prompt_tokens(second, opening)[2] - tiny_generator._prompt_tokens(second)[2]
        assert shared >= 3  # "Evidence", ":\n", "[1" or so: the opening's tokens the content starts with
        assert tiny_generator._prompt_tokens(second, "Question: ")[2] == tiny_generator._prompt_tokens(second)[2]
        evaluated, texts = {}, {}
        for pin in (True, opening):
            tiny_generator.reset_cache(pinned=True)
            tiny_generator.invoke(first, max_tokens=2, pin_prefix=pin)
            tiny_generator.reset_cache()
            reply = tiny_generator.invoke(second, max_tokens=4, pin_prefix=pin)
            evaluated[pin], texts[pin] = self.evaluated(reply), reply.text
        assert evaluated[True] - evaluated[opening] == shared
        assert texts[True] == texts[opening]

    @pytest.mark.parametrize("title", ["2011–12 VCU Rams", "(The) Band", "\"Heroes\" (song)", "'Tis the Season", "Éire"])
    def test_the_pinned_opening_is_the_same_whatever_the_first_title(self, tiny_generator, title):
        """The opening's last space goes with the first title's first word, except where the tokenizer
        keeps the space apart (a title that starts with a digit, with Qwen's): the pinned prefix took the
        space in then, a second instruction snapshot was evaluated whole, and the first question with
        such a title paid for it (105 prompt tokens with the default model)."""
        from prompts import answer_messages, answer_opening

        def pinned(first_title: str) -> int:
            messages = answer_messages("When?", [{"n": 1, "title": first_title, "text": "It was in 1961."}])
            return tiny_generator._prompt_tokens(messages, answer_opening())[2]

        assert pinned(title) == pinned("Peru")

    def test_extended_prompt_evaluates_only_what_was_added(self, tiny_generator):
        tiny_generator.reset_cache()
        short = self.ask(tiny_generator, "Evidence: Lima is the capital of Peru.")
        tiny_generator.invoke([HumanMessage("Say hello.")], max_tokens=2)  # another session's prompt in between
        longer = self.ask(tiny_generator, "Evidence: Lima is the capital of Peru. Quito is the capital of Ecuador.")
        added = longer.usage_metadata["input_tokens"] - short.usage_metadata["input_tokens"]
        assert 0 < self.evaluated(longer) <= added + 12  # the template's few tokens after the content change too

    def test_reuse_does_not_change_the_answer(self, tiny_generator):
        question = "What is the capital of Japan?"
        tiny_generator.reset_cache(pinned=True)
        cold = self.ask(tiny_generator, question)
        tiny_generator.reset_cache()
        warm = self.ask(tiny_generator, question)
        assert self.evaluated(warm) < self.evaluated(cold)
        # the same greedy tokens; probabilities agree up to the float rounding of a different batch shape
        assert warm.text == cold.text
        assert warm.response_metadata["token_probs"] == pytest.approx(cold.response_metadata["token_probs"], abs=0.02)

    def test_reuse_off_evaluates_every_prompt_whole(self, tiny_generator):
        model = LlamaCppChatModel(model_path=tiny_generator.model_path, n_ctx=512, prefix_reuse=False)
        for _ in range(2):
            reply = self.ask(model, "What is the capital of France?")
            assert self.evaluated(reply) == reply.usage_metadata["input_tokens"]


class TestQuestionLikelihood:
    """``score_suffix``: the log-probabilities of the tokens that end the prompt's last message, read
    while the prompt is evaluated (the check's question-likelihood features)."""

    QUESTION = "What is the capital of France?"
    EVIDENCE = [{"n": 1, "title": "Paris", "text": "Paris is the capital and largest city of France."},
                {"n": 2, "title": "Lyon", "text": "Lyon is the third-largest city of France."}]

    def messages(self, question=QUESTION):
        from prompts import answer_messages

        return answer_messages(question, self.EVIDENCE)

    def from_scratch(self, model, messages, n):
        """The same log-probabilities by the definition: every position's logits, the prompt from nothing."""
        model.reset_cache(pinned=True)
        tokens = model._prompt_tokens(messages)[0]
        end = model._layout(messages).content_end
        model._llama.reset()
        return model._llama.eval_scoring(tokens, range(end - n, end))

    def test_the_question_s_tokens_are_scored_and_the_answer_is_unchanged(self, tiny_generator):
        messages = self.messages()
        tiny_generator.reset_cache(pinned=True)
        plain = tiny_generator.invoke(messages, max_tokens=8)
        tiny_generator.reset_cache(pinned=True)
        scored = tiny_generator.invoke(messages, max_tokens=8, score_suffix=self.QUESTION)
        logprobs = scored.response_metadata["suffix_logprobs"]
        assert "suffix_logprobs" not in plain.response_metadata
        assert scored.text == plain.text
        assert scored.response_metadata["token_probs"] == pytest.approx(plain.response_metadata["token_probs"], abs=1e-6)
        assert scored.response_metadata["prompt_tokens_evaluated"] == plain.response_metadata["prompt_tokens_evaluated"]
        # " What is the capital of France?" in its own tokens: the space before it goes with its first word
        assert len(logprobs) == len(tiny_generator._text_tokens(" " + self.QUESTION))
        assert all(lp <= 0 for lp in logprobs)
        # by the definition, up to the float rounding of another batch shape
        assert logprobs == pytest.approx(self.from_scratch(tiny_generator, messages, len(logprobs)).tolist(), abs=0.05)

    def test_a_cached_prompt_is_scored_again(self, tiny_generator):
        messages = self.messages()
        tiny_generator.reset_cache(pinned=True)
        cold = tiny_generator.invoke(messages, max_tokens=4, score_suffix=self.QUESTION)
        warm = tiny_generator.invoke(messages, max_tokens=4, score_suffix=self.QUESTION)
        n = len(cold.response_metadata["suffix_logprobs"])
        # all of it was cached: only the question (and the token before it) and the template's close evaluated again
        assert n < warm.response_metadata["prompt_tokens_evaluated"] <= n + 8
        assert warm.response_metadata["suffix_logprobs"] == pytest.approx(cold.response_metadata["suffix_logprobs"], abs=0.05)
        assert warm.text == cold.text

    def test_a_question_the_evidence_makes_unlikely_scores_lower(self, tiny_generator):
        tiny_generator.reset_cache(pinned=True)
        asked = {q: tiny_generator.invoke(self.messages(q), max_tokens=2, score_suffix=q).response_metadata["suffix_logprobs"]
                 for q in (self.QUESTION, "What is the capital of Uzbekistan?")}
        assert min(asked["What is the capital of Uzbekistan?"]) < min(asked[self.QUESTION])

    def test_a_long_question_is_scored_in_passes(self, tiny_generator, monkeypatch):
        import components.generator as generator

        question = "Which of these cities is the capital of France: " + ", ".join(["Lyon", "Nice", "Lille"] * 25) + "?"
        n = len(tiny_generator._text_tokens(" " + question))
        assert n > 2 * generator.SCORED_CHUNK
        results = []
        for chunk in (generator.SCORED_CHUNK, 1024):
            monkeypatch.setattr(generator, "SCORED_CHUNK", chunk)
            tiny_generator.reset_cache(pinned=True)
            reply = tiny_generator.invoke(self.messages(question), max_tokens=2, score_suffix=question)
            results.append(reply.response_metadata["suffix_logprobs"])
        assert len(results[0]) == n and all(lp <= 0 for lp in results[0])
        assert results[0] == pytest.approx(results[1], abs=0.05)  # the same up to another batch shape's rounding

    def test_the_suffix_must_end_the_last_message(self, tiny_generator):
        with pytest.raises(ValueError, match="must end the last message"):
            tiny_generator.invoke(self.messages(), max_tokens=2, score_suffix="Paris")
        assert max_tokens_kwargs(tiny_generator, 4, score_suffix="Why?")["score_suffix"] == "Why?"


class TestPromptLookup:
    """The draft: what followed the answer's last tokens in the question's part of the prompt."""

    def draft(self, tokens, start, end, **kwargs):
        import numpy as np

        from components.generator import PromptLookup

        return PromptLookup(**{"max_tokens": 4, **kwargs}, start=start, end=end)(np.array(tokens, dtype=np.intc)).tolist()

    def test_drafts_what_followed_the_longest_match_in_the_prompt(self):
        #         instructions | question and evidence         | answer so far
        tokens = [7, 8, 9, 1, 2, 3, 50, 60, 2, 3, 4, 5, 6, 70, 80, 2, 3]
        # "2 3" occurs twice after the instructions; the latest is followed by 4 5 6 70
        assert self.draft(tokens, 3, 15) == [4, 5, 6, 70]
        assert self.draft(tokens, 3, 15, max_tokens=2) == [4, 5]
        # "1 2 3" (three tokens) beats "2 3" when the answer ends with it
        assert self.draft([*tokens[:15], 1, 2, 3], 3, 15) == [50, 60, 2, 3]

    def test_no_draft_without_a_match_or_from_the_instructions(self):
        tokens = [7, 8, 9, 1, 2, 3, 50, 60, 9]
        assert self.draft(tokens, 3, 8) == []  # 9 occurs only in the instructions
        assert self.draft([1, 2, 3, 50], 0, 4) == []  # nothing generated yet
        assert self.draft([1, 2, 3, 3], 0, 3) == []  # 3 ends the prompt: nothing follows it

    def test_validated(self):
        from components.generator import PromptLookup

        with pytest.raises(ValueError, match=">= 1"):
            PromptLookup(0)


class TestLookupDecoding:
    """Drafted tokens verified in one pass: the answer token-by-token decoding gives, in fewer passes."""

    EVIDENCE = [{"n": 1, "title": "Black Death", "text": "The plague was introduced to Europe by Genoese traders at the "
                 "port city of Kaffa in the Crimea in 1347."}]

    def test_same_answer_and_cache_in_fewer_passes(self, tiny_generator):
        from prompts import answer_messages

        fast = LlamaCppChatModel(model_path=tiny_generator.model_path, n_ctx=1024, lookup_tokens=5)
        messages = answer_messages("Who introduced the plague to Europe?", self.EVIDENCE)
        replies = []
        for model, kwargs in ((tiny_generator, {}), (fast, {}), (tiny_generator, {"lookup_tokens": 5})):
            model.reset_cache(pinned=True)
            reply = model.invoke(messages, max_tokens=16, **kwargs)  # fewer tokens, fewer near-ties for rounding to flip
            # the cache holds the prompt and every chosen token but the last, drafts or not
            assert model._llama.n_tokens == reply.usage_metadata["input_tokens"] + len(reply.response_metadata["token_probs"]) - 1
            replies.append(reply)
        slow, quick, asked = replies
        assert slow.response_metadata["decode_passes"] == len(slow.response_metadata["token_probs"]) - 1
        # the call's own setting: the same as the model's
        assert (asked.text, asked.response_metadata["decode_passes"]) == (quick.text, quick.response_metadata["decode_passes"])
        assert quick.response_metadata["decode_passes"] < slow.response_metadata["decode_passes"] / 2
        # greedy decoding verified position by position: the same tokens. A pass over several positions runs
        # llama.cpp's batched matrix kernels instead of its one-row ones, so the logits differ in their rounding:
        # up to 0.042 in a probability for this 135M model, so the bound leaves room for another CPU's kernels
        assert quick.text == slow.text
        assert quick.response_metadata["token_probs"] == pytest.approx(slow.response_metadata["token_probs"], abs=0.08)
        assert quick.response_metadata["prompt_tokens_evaluated"] == slow.response_metadata["prompt_tokens_evaluated"]

    def test_stop_at_and_max_tokens_hold_with_drafts(self, tiny_generator):
        from prompts import answer_messages

        fast = LlamaCppChatModel(model_path=tiny_generator.model_path, n_ctx=1024, lookup_tokens=8)
        messages = answer_messages("Who introduced the plague to Europe?", self.EVIDENCE)
        with pytest.raises(ValueError, match=">= 0"):
            fast.invoke(messages, lookup_tokens=-1)
        capped = fast.invoke(messages, max_tokens=3)
        assert len(capped.response_metadata["token_probs"]) == 3 and capped.usage_metadata["output_tokens"] <= 3
        assert fast._llama.n_tokens == capped.usage_metadata["input_tokens"] + 2
        cut = fast.invoke(messages, max_tokens=32, stop=["Genoese"])
        assert "Genoese" not in cut.text and cut.text


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

    def test_a_file_that_is_not_gguf(self, tmp_path):
        """Noticed in session 50: ``--model notes.txt`` (or a PDF) was taken for a transformers model
        folder and ended in transformers' traceback about a config file that is not JSON."""
        path = tmp_path / "notes.txt"
        path.write_text("not a model")
        with pytest.raises(ModelFileError, match=r"notes\.txt is not a \.gguf file"):
            load_chat_model(str(path))

    def test_a_folder_without_a_model(self, tmp_path):
        """A folder with no ``config.json`` ended in a tokenizer-conversion traceback."""
        (tmp_path / "notes.txt").write_text("not a model")
        with pytest.raises(ModelFileError, match="holds no transformers model"):
            load_chat_model(str(tmp_path))

    @pytest.mark.parametrize("relative", [False, True])
    def test_a_path_that_is_not_there(self, tmp_path, monkeypatch, relative):
        """A path to nothing was taken for a Hugging Face name (HFValidationError's traceback)."""
        monkeypatch.chdir(tmp_path)
        missing = "./models/qwen" if relative else str(tmp_path / "models" / "qwen")
        with pytest.raises(ModelFileError, match="no model at"):
            load_chat_model(missing)

    def test_a_hugging_face_name_that_does_not_load(self):
        """A name transformers cannot load is reported with its first line, not a traceback."""
        with pytest.raises(ModelFileError, match="could not load 'no such/model!' as a Hugging Face model"):
            load_chat_model("no such/model!")
