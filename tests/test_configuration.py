import pytest

from pipeline.configuration import (
    BASELINE,
    DEFAULT_TIERS,
    Budget,
    ConfigurationError,
    PipelineConfig,
    QuestionError,
    validate_question,
)


class TestBudget:
    def test_thesis_tiers(self):
        assert [(b.k, b.context_chars, b.max_new_tokens, b.rerank) for b in DEFAULT_TIERS.values()] == [
            (2, 600, 64, False), (5, 1200, 96, True), (10, 2000, 128, True)]
        assert [b.correct for b in DEFAULT_TIERS.values()] == [True, True, False]

    def test_baseline_is_fixed_k5_without_extras(self):
        assert (BASELINE.k, BASELINE.rerank, BASELINE.compress, BASELINE.correct) == (5, False, False, False)

    @pytest.mark.parametrize("kwargs", [{"k": -1}, {"context_chars": 0}, {"max_new_tokens": 0}])
    def test_invalid(self, kwargs):
        base = dict(name="x", k=1, context_chars=10, max_new_tokens=1, rerank=False, correct=False)
        with pytest.raises(ConfigurationError):
            Budget(**{**base, **kwargs})


class TestPipelineConfig:
    def test_defaults(self):
        config = PipelineConfig()
        assert (config.policy, config.tau, config.k_extra, config.max_corrections) == ("adaptive", 0.52, 5, 1)
        assert config.budget().name == "medium"  # the fixed policy's tier; adaptive passes the router's
        assert config.budget("hard").name == "hard"

    def test_baseline_policy_ignores_tier(self):
        assert PipelineConfig(policy="baseline").budget("hard") is BASELINE

    def test_unknown_policy_lists_valid(self):
        with pytest.raises(ConfigurationError, match="valid policies: adaptive, fixed, baseline"):
            PipelineConfig(policy="magic")

    def test_unknown_tier_lists_valid(self):
        with pytest.raises(ConfigurationError, match="valid tiers: easy, medium, hard"):
            PipelineConfig(tier="extreme")

    @pytest.mark.parametrize("kwargs", [{"tau": 1.5}, {"k_extra": 0}, {"max_corrections": -1}, {"max_question_chars": 0}])
    def test_out_of_range(self, kwargs):
        with pytest.raises(ConfigurationError):
            PipelineConfig(**kwargs)

    def test_overrides_are_validated(self):
        config = PipelineConfig()
        assert config.with_overrides({"tier": "easy"}).budget().name == "easy"
        assert config.with_overrides({"tier": "easy"}).policy == "fixed"  # a tier alone means that tier
        assert config.with_overrides({"tier": "easy", "policy": "baseline"}).policy == "baseline"
        assert config.with_overrides(None) is config
        with pytest.raises(ConfigurationError, match="unknown override"):
            config.with_overrides({"k": 3})
        with pytest.raises(ConfigurationError, match="valid tiers"):
            config.with_overrides({"tier": "nope"})


class TestValidateQuestion:
    def test_strips(self):
        assert validate_question("  Who?  ", 100) == "Who?"

    @pytest.mark.parametrize("question", ["", "   \n\t "])
    def test_empty(self, question):
        with pytest.raises(QuestionError, match="empty"):
            validate_question(question, 100)

    def test_too_long(self):
        with pytest.raises(QuestionError, match="maximum is 10"):
            validate_question("x" * 11, 10)

    def test_wrong_type(self):
        with pytest.raises(QuestionError, match="must be a string"):
            validate_question(42, 10)
