import pytest

from pipeline.configuration import (
    BASELINE,
    DEFAULT_TIERS,
    RERANK_CANDIDATES,
    THESIS_TIERS,
    Budget,
    ConfigurationError,
    PipelineConfig,
    QuestionError,
    validate_question,
)


class TestBudget:
    def test_thesis_tiers(self):
        assert [(b.k, b.context_chars, b.max_new_tokens, b.rerank) for b in THESIS_TIERS.values()] == [
            (2, 600, 64, False), (5, 1200, 96, True), (10, 2000, 128, True)]
        assert [b.correct for b in THESIS_TIERS.values()] == [True, True, False]
        assert all(b.context_tokens is None for b in THESIS_TIERS.values())

    def test_default_tiers_are_token_budgets_that_grow_to_the_baselines_evidence(self):
        *budgets, top = [b.context_tokens for b in DEFAULT_TIERS.values()]
        assert all(isinstance(b, int) for b in budgets) and budgets == sorted(set(budgets)) and top is None
        # one ranked list, filled in rank order, serves every step; the top tier holds all k = 5
        assert {b.k for b in DEFAULT_TIERS.values()} == {BASELINE.k}
        assert {b.fill for b in DEFAULT_TIERS.values()} == {"rank"}
        assert not any(b.correct for b in DEFAULT_TIERS.values())
        # every tier keeps the same five of the same candidates, so each tier's evidence starts the next one's
        assert {(b.rerank, b.candidates) for b in DEFAULT_TIERS.values()} == {(True, RERANK_CANDIDATES)}
        assert RERANK_CANDIDATES > BASELINE.k

    @pytest.mark.parametrize("kwargs", [{"rerank": False, "candidates": 10}, {"rerank": True, "candidates": 4}])
    def test_candidates_need_rerank_and_at_least_k(self, kwargs):
        with pytest.raises(ConfigurationError, match="candidates .* need rerank and must be >= k"):
            Budget("x", k=5, context_chars=None, max_new_tokens=1, correct=False, **kwargs)

    def test_unknown_fill(self):
        with pytest.raises(ConfigurationError, match="valid: relevance, rank"):
            Budget("x", k=1, context_chars=None, max_new_tokens=1, rerank=False, correct=False, fill="random")

    def test_baseline_is_fixed_k5_without_extras(self):
        assert (BASELINE.k, BASELINE.rerank, BASELINE.compress, BASELINE.correct) == (5, False, False, False)

    @pytest.mark.parametrize("kwargs", [{"k": -1}, {"context_chars": 0}, {"context_tokens": 0}, {"max_new_tokens": 0}])
    def test_invalid(self, kwargs):
        base = dict(name="x", k=1, context_chars=10, max_new_tokens=1, rerank=False, correct=False)
        with pytest.raises(ConfigurationError):
            Budget(**{**base, **kwargs})


class TestPipelineConfig:
    def test_defaults(self):
        config = PipelineConfig()
        assert (config.policy, config.tau, config.k_extra, config.max_corrections) == ("cascade", 0.52, 5, 1)
        assert config.budget().name == "medium"  # the fixed policy's tier; adaptive passes the router's
        assert config.budget("hard").name == "hard"
        assert config.start_tier() == "easy"  # the fitted cascade: Easy, Medium, then Hard for a single-hop question,
        assert config.multi_hop_tier == "medium"  # Medium, then Hard for a multi-hop one (docs/question_type)
        assert config.multi_hop_threshold is None  # the threshold fitted with the question-type model
        assert [b.name for b in config.ladder("medium")] == ["hard"]
        assert [b.name for b in config.ladder("easy")] == ["medium", "hard"]  # a router may start below it
        assert (config.confidence_signal, config.stop_early) == ("first_prob", True)
        assert not config.citation_markers  # answers end where their citation markers would begin
        assert config.prompt_layout == "evidence_first"

    def test_the_cascade_defaults_are_the_committed_fit(self):
        """The shipped signal, threshold, early stopping and ladder are what ``python -m training.cascade
        fit`` chose on train (docs/cascade/fit.json), in the layout its runs were answered in."""
        import json
        from pathlib import Path

        fit = json.loads((Path(__file__).resolve().parent.parent / "docs" / "cascade" / "fit.json").read_text("utf-8"))
        config = PipelineConfig()
        chosen = fit["chosen"]
        assert (config.confidence_signal, config.accept_threshold, config.stop_early) == (
            chosen["signal"], chosen["threshold"], chosen["stop_early"])
        start = config.multi_hop_tier  # the fit's ladder; a question the question-type model calls single-hop starts lower
        ladder = [config.budget(start), *config.ladder(start)]
        assert [b.context_tokens for b in ladder] == chosen["ladder"]
        assert fit["layout"] == config.prompt_layout

    def test_ladder_climbs_cheapest_first_within_max_escalations(self):
        assert [b.name for b in PipelineConfig().ladder("easy")] == ["medium", "hard"][: PipelineConfig().max_escalations]
        assert [b.name for b in PipelineConfig(max_escalations=1).ladder("easy")] == ["medium"]
        assert [b.name for b in PipelineConfig(policy="adaptive").ladder("medium")] == ["hard"]
        assert PipelineConfig(policy="adaptive").ladder("hard") == []
        assert PipelineConfig(max_escalations=0).ladder("easy") == []
        assert PipelineConfig(tiers=THESIS_TIERS).ladder("easy") == []  # character budgets do not extend in place
        from dataclasses import replace

        skipping = PipelineConfig(tiers={**DEFAULT_TIERS, "easy": replace(DEFAULT_TIERS["easy"], cascade=True),
                                         "medium": replace(DEFAULT_TIERS["medium"], cascade=False)})
        assert skipping.start_tier() == "easy" and [b.name for b in skipping.ladder("easy")] == ["hard"]
        assert [b.name for b in PipelineConfig().ladder("easy")] == ["medium", "hard"]  # the router may start below

    @pytest.mark.parametrize("policy", ["fixed", "baseline"])
    def test_fixed_and_baseline_never_escalate(self, policy):
        assert PipelineConfig(policy=policy).ladder("easy") == []

    @pytest.mark.parametrize("kwargs, fragment", [
        ({"prompt_layout": "sideways"}, "question_first"),
        ({"confidence_signal": "vibes"}, "min_prob"),
        ({"accept_threshold": float("nan")}, "finite"),
        ({"max_escalations": -1}, ">= 0"),
        ({"stop_early": "yes"}, "true or false"),
        ({"citation_markers": 1}, "true or false"),
        ({"answer_examples": "yes"}, "true or false"),
        ({"lookup_tokens": -1}, ">= 0"),
        ({"lookup_tokens": 2.5}, "whole number"),
        ({"evidence_order": "alphabetical"}, "valid orders: score, title_diverse"),
        ({"multi_hop_tier": "ultra"}, "unknown multi_hop_tier"),
        ({"multi_hop_threshold": 1.5}, "probability"),
    ])
    def test_cascade_settings_are_validated(self, kwargs, fragment):
        with pytest.raises(ConfigurationError, match=fragment):
            PipelineConfig(**kwargs)

    def test_layout_names_match_the_prompt_templates(self):
        from pipeline.configuration import LAYOUTS
        from prompts import LAYOUTS as TEMPLATES

        assert set(LAYOUTS) == set(TEMPLATES)


class TestAnswerExamples:
    """The worked examples come before the question as earlier chat turns, in the question's layout."""

    EVIDENCE = [{"n": 1, "title": "France", "text": "Paris is the capital of France."}]

    def test_examples_are_turns_before_the_question(self):
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

        from prompts import ABSTENTION, answer_examples, answer_messages

        plain = answer_messages("What is the capital of France?", self.EVIDENCE, "question_first")
        shown = answer_messages("What is the capital of France?", self.EVIDENCE, "question_first", examples=True)
        assert [type(m) for m in plain] == [SystemMessage, HumanMessage]
        assert len(shown) == 2 + 2 * len(answer_examples())
        assert shown[0] == plain[0] and shown[-1] == plain[-1]  # the question's turn is unchanged
        assert all(isinstance(m, HumanMessage) for m in shown[1:-1:2])
        assert all(isinstance(m, AIMessage) for m in shown[2:-1:2])
        assert ABSTENTION in [m.text for m in shown[2:-1:2]]  # one example abstains
        # every example is laid out like the question: question first here, evidence numbered from 1
        assert all(m.text.startswith("Question: ") and "\n[1] " in m.text for m in shown[1:-1:2])
        last = answer_messages("Q?", self.EVIDENCE, "evidence_first", examples=True)
        assert all(m.text.startswith("Evidence:") for m in last[1::2])

    def test_a_question_that_asks_two_things_is_told_to_answer_each(self):
        """Session 67: "Who wrote Hamlet and when was it written?" was answered "William Shakespeare" (the prompt
        asks for as few words as possible). Such a question's message says, on the line before the question, to
        answer each; the instructions and the message's opening stay as every answer prompt has them (pinned),
        and the question still ends the prompt where it ends it (its tokens are scored there)."""
        from prompts import LAYOUTS, answer_messages, answer_opening, template

        question = "Who wrote Hamlet and when was it written?"
        note = template("answer_two_things")
        assert "semicolon" in note
        for layout in LAYOUTS:
            plain, told = (answer_messages(question, self.EVIDENCE, layout, two_things=t) for t in (False, True))
            assert told[:-1] == plain[:-1] and told[-1].text.startswith(answer_opening(layout))
            asked = f"Question: {question}"
            if plain[-1].text.endswith(f"\n{asked}"):  # the question ends the prompt: the note comes just before it
                assert told[-1].text == f"{plain[-1].text.removesuffix(asked)}{note}\n{asked}"
            else:
                assert told[-1].text == f"{plain[-1].text}\n{note}"

    def test_every_question_message_starts_with_its_layouts_opening(self):
        from prompts import LAYOUTS, answer_messages, answer_opening

        assert answer_opening("evidence_first") == "Evidence:\n[1] "
        assert answer_opening("question_first") == "Question: "
        for layout in LAYOUTS:
            for evidence in (self.EVIDENCE, [{"n": 1, "title": "", "text": "Untitled."}]):
                assert answer_messages("Who?", evidence, layout)[-1].text.startswith(answer_opening(layout))
        with pytest.raises(ValueError, match="unknown prompt layout"):
            answer_opening("sideways")

    def test_examples_cite_evidence_they_show(self):
        import re

        from prompts import answer_examples

        for question, evidence, answer in answer_examples():
            assert question.endswith("?") and evidence
            cited = {int(n) for n in re.findall(r"\[(\d+)\]", answer)}
            assert cited <= {e["n"] for e in evidence}

    def test_the_setting_reaches_the_graph(self):
        from pipeline.configuration import PipelineConfig

        assert PipelineConfig().answer_examples is False
        assert PipelineConfig(answer_examples=True).answer_examples is True

    def test_baseline_policy_ignores_tier(self):
        assert PipelineConfig(policy="baseline").budget("hard") is BASELINE

    def test_unknown_policy_lists_valid(self):
        with pytest.raises(ConfigurationError, match="valid policies: cascade, adaptive, fixed, baseline"):
            PipelineConfig(policy="magic")

    def test_unknown_tier_lists_valid(self):
        with pytest.raises(ConfigurationError, match="valid tiers: easy, medium, hard"):
            PipelineConfig(tier="extreme")

    @pytest.mark.parametrize("kwargs", [{"tau": 1.5}, {"k_extra": 0}, {"max_corrections": -1}, {"max_question_chars": 0},
                                        {"follow_up_file_score": 1.5}, {"follow_up_file_score": True},
                                        {"follow_up_file_score": "high"}, {"summarize": "yes"}, {"summarize_tokens": 10},
                                        {"summarize_tokens": 512.0}, {"summarize_tokens": True}])
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
        assert config.stop_early and not config.with_overrides({"stop_early": False}).stop_early
        assert config.with_overrides({"follow_up_file_score": None}).follow_up_file_score is None


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
