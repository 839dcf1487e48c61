"""The answerability model, the check_answer node and the fitting of its threshold."""

import json
import math
import sys
from dataclasses import replace

import pytest
from langgraph.runtime import Runtime

from components.answerability import (ANSWER_PROBE, DEFAULT_MODEL, FEATURES, FEATURES_VERSION, QUESTION_LIKELIHOOD,
                                      ONLY_IN_QUESTION, SELF_CHECKS, SUFFICIENCY, AnswerabilityModel,
                                      AnswerabilityModelError, current_features, fit_logistic, only_repeats_question)
from nodes.check_answer import answer_features, check_answer, yes_share
from nodes.generate import opening_prob
from pipeline.configuration import ConfigurationError, PipelineConfig
from prompts import ABSTENTION, check_messages
from eval.abstention import abstention_f1, area_under, risk_coverage
from graph.routing import after_check
from training.answerability import choose, recording_model, sweep


def model(coef=(2.0,), features=("support",), threshold=0.5, **kwargs):
    n = len(features)
    return AnswerabilityModel(tuple(features), (0.5,) * n, (0.25,) * n, tuple(coef), 0.0,
                              {"threshold": threshold, **kwargs})


class TestAnswerabilityModel:
    def test_score_is_a_probability_rising_with_a_positive_coefficient(self):
        m = model()
        scores = [m.score({"support": s}) for s in (0.0, 0.25, 0.5, 0.75, 1.0)]
        assert all(0.0 < s < 1.0 for s in scores)
        assert scores == sorted(scores) and scores[2] == pytest.approx(0.5)

    def test_extreme_values_do_not_overflow(self):
        m = model(coef=(1000.0,))
        assert m.score({"support": 1e6}) == pytest.approx(1.0) and m.score({"support": -1e6}) == pytest.approx(0.0)

    @pytest.mark.parametrize("kwargs, message", [
        ({"features": ("nonsense",)}, "unknown feature"),
        ({"features": ("support", "support"), "coef": (1.0, 1.0)}, "repeated"),
        ({"coef": (1.0, 2.0)}, "coef has 2 values"),
        ({"coef": (math.nan,)}, "finite"),
    ])
    def test_inconsistent_models_are_refused(self, kwargs, message):
        with pytest.raises(AnswerabilityModelError, match=message):
            model(**kwargs)

    def test_a_missing_feature_value_is_an_error(self):
        with pytest.raises(AnswerabilityModelError, match="missing"):
            model().score({"top_score": 0.3})

    def test_the_knob_is_carried_through_the_fitted_pair_for_a_multi_hop_question(self):
        m = model(threshold=0.4, threshold_multi_hop=0.1)
        assert m.multi_hop_threshold == 0.1 and model().multi_hop_threshold is None
        assert [m.threshold_for(k, False) for k in (None, 0.0, 0.2, 1.0)] == [0.4, 0.0, 0.2, 1.0]
        assert m.threshold_for(None, None) == 0.4  # no reading: the knob itself
        carried = [m.threshold_for(k, True) for k in (0.0, 0.2, 0.4, 0.7, 1.0)]
        assert carried == pytest.approx([0.0, 0.05, 0.1, 0.55, 1.0])
        knobs = [i / 100 for i in range(101)]
        thresholds = [m.threshold_for(k, True) for k in knobs]
        assert thresholds == sorted(thresholds)  # monotone
        assert model(threshold=0.4).threshold_for(0.3, True) == 0.3  # one threshold for all

    def test_save_and_load_round_trip(self, tmp_path):
        m = model(features=("support", "self_check"), coef=(1.5, -0.5), threshold=0.3, fit_on=["squad train"])
        m.save(tmp_path / "m.json")
        loaded = AnswerabilityModel.load(tmp_path / "m.json")
        assert loaded == m and loaded.threshold == 0.3 and loaded.self_checks == ("self_check",)

    @pytest.mark.parametrize("content, message", [(None, "not found"), ("{not json", "unreadable"),
                                                  ("[1, 2]", "not a JSON object"), ('{"features": ["support"]}', "not an")])
    def test_bad_files_say_what_is_wrong(self, tmp_path, content, message):
        path = tmp_path / "m.json"
        if content is not None:
            path.write_text(content)
        with pytest.raises(AnswerabilityModelError, match=message):
            AnswerabilityModel.load(path)

    def test_the_shipped_model_loads_and_was_fit_on_train_only(self):
        shipped = AnswerabilityModel.load(DEFAULT_MODEL)
        assert 0.0 <= shipped.threshold <= 1.0
        assert shipped.metadata["fit_on"] and all(s.endswith(" train") for s in shipped.metadata["fit_on"])

    def test_fit_logistic_learns_the_direction_and_is_deterministic(self):
        rows = [[x / 20, (x * 7 % 20) / 20] for x in range(40)]
        labels = [int(r[0] > 0.9) for r in rows]  # the first feature decides, the second is noise
        a = fit_logistic(rows, labels, ("support", "top_score"))
        assert a == fit_logistic(rows, labels, ("support", "top_score"))
        assert a.coef[0] > 0 and abs(a.coef[0]) > abs(a.coef[1])
        assert a.score({"support": 1.9, "top_score": 0.5}) > 0.5 > a.score({"support": 0.1, "top_score": 0.5})

    def test_fit_logistic_needs_both_classes(self):
        with pytest.raises(ValueError, match="one class"):
            fit_logistic([[0.1], [0.2]], [1, 1], ("support",))


class TestSignals:
    def test_opening_prob_sums_the_pieces_that_begin_the_text(self):
        meta = {"first_top": [["I", 0.3], [" I", 0.1], ["Paris", 0.5], ["", 0.05]]}
        assert opening_prob(meta, ABSTENTION) == pytest.approx(0.4)
        assert opening_prob({}, ABSTENTION) is None

    def test_verdict_probs_sum_each_verdict_s_pieces(self):
        from nodes.generate import verdict_probs

        meta = {"first_top": [["Yes", 0.5], [" yes", 0.1], ["No", 0.2], ["Not", 0.1], ["I", 0.1]]}
        assert verdict_probs(meta) == pytest.approx({"yes": 0.6, "no": 0.2})
        assert verdict_probs({"first_top": [["Paris", 1.0]]}) == {"yes": 0.0, "no": 0.0}
        assert verdict_probs({}) is None

    @pytest.mark.parametrize("answer, verdict", [("Yes", "yes"), ("No.", "no"), ("yes, it lasts two years", "yes"),
                                                 ("Nobody", None), ("Norway", None), ("", None), ("Not at all", None)])
    def test_the_verdict_an_answer_opens_with(self, answer, verdict):
        from nodes.generate import verdict_of

        assert verdict_of(answer) == verdict

    def test_opening_prob_leaves_out_the_answers_own_first_piece(self):
        # "Istanbul" begins with the piece "I", as the abstention does: the mass of that piece went
        # to the answer the model wrote, so only the other pieces that begin the abstention count
        meta = {"first_top": [["I", 0.7], [" I", 0.1], ["Paris", 0.2]], "token_pieces": ["I", "stan", "bul"]}
        assert opening_prob(meta, ABSTENTION, exclude_first=True) == pytest.approx(0.1)
        assert opening_prob(meta, ABSTENTION) == pytest.approx(0.8)
        # an answer that begins otherwise keeps every piece
        other = {**meta, "token_pieces": ["Paris"]}
        assert opening_prob(other, ABSTENTION, exclude_first=True) == pytest.approx(0.8)

    def test_an_old_record_that_counted_its_own_first_piece_is_corrected(self):
        old = {"first_prob": 0.7, "abstain_prob": 0.75, "min_prob": 0.5}
        fixed = current_features(old, "Istanbul", ABSTENTION)
        assert fixed["abstain_prob"] == pytest.approx(0.05) and fixed["min_prob"] == 0.5
        assert old["abstain_prob"] == 0.75  # the record itself is left as it was

    @pytest.mark.parametrize("question, answer, repeats", [
        ("What is photosynthesis?", "Photosynthesis", True),  # found trying the chat
        ("What is the scientific designation of oxygen?", "Oxygen", True),
        ("Where was the world cup hosted that Algeria qualified for?", "in Algeria.", True),
        ("Who designed the Eiffel Tower?", "Gustave Eiffel", False),  # a new word
        ("Which is older, the Eiffel Tower or the Statue of Liberty?", "The Eiffel Tower", False),  # a choice offered
        ("Is Paris in France?", "Yes", False),
        ("What is photosynthesis?", "The", False),  # no content word: nothing repeated
    ])
    def test_an_answer_that_only_repeats_the_question(self, question, answer, repeats):
        assert only_repeats_question(question, answer) is repeats

    def test_a_record_from_before_the_repetition_feature_gains_it_from_its_question(self):
        features = {"first_prob": 0.7, "abstain_prob": 0.1}
        gained = current_features(features, "Photosynthesis", ABSTENTION, 2, question="What is photosynthesis?")
        assert gained == {**features, ONLY_IN_QUESTION: 1.0}
        other = current_features(features, "Chlorophyll", ABSTENTION, 2, question="What is photosynthesis?")
        assert other[ONLY_IN_QUESTION] == 0.0
        assert ONLY_IN_QUESTION not in current_features(features, "Photosynthesis", ABSTENTION, 2)  # no question: unknown
        assert current_features({}, "Photosynthesis", ABSTENTION, 2, question="What is photosynthesis?") == {}  # unscored
        recorded = {**features, ONLY_IN_QUESTION: 0.0}  # computed at the time, as the check computes it
        assert current_features(recorded, "Photosynthesis", ABSTENTION, FEATURES_VERSION,
                                question="What is photosynthesis?") == recorded

    @pytest.mark.parametrize("features, written, version", [
        ({"first_prob": 0.7, "abstain_prob": 0.75}, "Paris", None),  # begins otherwise: "I" was another piece
        ({"first_prob": 0.45, "abstain_prob": 0.2}, "Ink", None),  # "I" less likely than the piece chosen
        ({"first_prob": 0.7, "abstain_prob": 0.75}, "Istanbul", FEATURES_VERSION),  # computed as today
        ({"first_prob": 0.7}, "Istanbul", None),  # nothing to correct
    ])
    def test_other_records_are_unchanged(self, features, written, version):
        assert current_features(features, written, ABSTENTION, version) == features

    def test_yes_share(self):
        assert yes_share({"first_top": [["Yes", 0.6], [" no", 0.2], ["Maybe", 0.2]]}) == pytest.approx(0.75)
        assert yes_share({"first_top": [["Maybe", 1.0]]}) == 0.5

    def test_check_messages_extend_the_answer_prompt(self):
        evidence = [{"n": 1, "title": "Paris", "text": "Paris is the capital of France."}]
        messages = check_messages("What is the capital of France?", evidence, "question_first", "Paris [1]")
        assert [m.type for m in messages] == ["system", "human", "ai", "human"]
        assert messages[2].content == "Paris [1]" and "yes or no" in messages[3].content
        asked = check_messages("What is the capital of France?", evidence, "question_first", "Paris", "self_check_question")
        assert '"What is the capital of France?"' in asked[3].content
        with pytest.raises(ValueError, match="unknown check"):
            check_messages("q", evidence, "question_first", "a", "vibes")

    def test_answer_features(self):
        step = {"confidence": {"min_prob": 0.5, "first_prob": 0.6, "first_margin": 0.2, "mean_logprob": -0.4,
                               "neg_mean_entropy": -1.0}, "abstain_prob": 0.1}
        evidence = [{"n": 1, "title": "Rome", "text": "Rome is in Italy."},
                    {"n": 2, "title": "Paris", "text": "Paris is the capital of France."}]
        passages = [{"score": 0.7}, {"score": 0.5}]
        f = answer_features("What is the capital city of France?", "Paris", step, evidence, passages, True)
        assert set(f) == set(FEATURES) - set(SELF_CHECKS) - {SUFFICIENCY, ANSWER_PROBE, *QUESTION_LIKELIHOOD}  # read by generate
        assert f["question_in_evidence"] == pytest.approx(2 / 3) and f["question_words_missing"] == 1.0  # city
        assert f["answer_in_question"] == 0.0 and f[ONLY_IN_QUESTION] == 0.0
        echo = answer_features("What is the capital city of France?", "The capital city", step, evidence, passages, True)
        assert echo["answer_in_question"] == 1.0 and echo[ONLY_IN_QUESTION] == 1.0
        assert f["support"] == 1.0 and f["escalated"] == 1.0 and f["abstain_prob"] == 0.1
        assert f["question_coverage"] == pytest.approx(2 / 3)  # capital, france; not city
        assert f["top_score"] == 0.7 and f["score_gap"] == pytest.approx(0.2)
        assert answer_features("q", "a", {**step, "abstain_prob": None}, evidence, passages, False) is None


class TestCheckAnswer:
    """The node on a real context (SmolLM2 for the self-check)."""

    STEP = {"tier": "medium", "answer": "Paris", "raw_output": "Paris [1]", "abstained": False, "abstain_prob": 0.05,
            "confidence": {"min_prob": 0.5, "first_prob": 0.6, "first_margin": 0.2, "mean_logprob": -0.4,
                           "neg_mean_entropy": -1.0}}
    EVIDENCE = [{"n": 1, "passage_id": "p1", "title": "Paris", "text": "Paris is the capital of France."}]
    CITATION = {"n": 1, "passage_id": "p1", "title": "Paris", "text": "Paris is the capital of France.",
                "score": 0.7, "metadata": {}}

    def state(self, threshold=None, abstained=False, evidence=EVIDENCE):
        step = {**self.STEP, "abstained": abstained}
        return {"question": "What is the capital of France?", "answer": step["answer"], "steps": [step],
                "citations": [self.CITATION], "evidence": evidence,
                "passages": [{"id": "p1", "score": 0.7, "text": "Paris is the capital of France."}],
                "settings": {"abstain_threshold": threshold, "layout": "question_first"}, "escalations": 0}

    def runtime(self, ctx, m):
        return Runtime(context=replace(ctx, answerability=m))

    def test_a_likely_answer_is_given_and_becomes_the_turn(self, ctx):
        out = check_answer(self.state(), self.runtime(ctx, model()))  # support 1.0: score > 0.5
        check = out["trace"]["answerability"]
        assert check["decision"] == "answer" and check["by"] == "score" and check["score"] > 0.5
        assert "answer" not in out and out["turns"][0]["answer"] == "Paris"
        assert out["turns"][0]["citations"] == [self.CITATION]

    def test_an_unlikely_answer_is_withheld(self, ctx):
        out = check_answer(self.state(), self.runtime(ctx, model(coef=(-2.0,))))
        check = out["trace"]["answerability"]
        assert check["decision"] == "abstain" and check["withheld_answer"] == "Paris" and check["score"] < 0.5
        assert out["answer"] == ABSTENTION and out["citations"] == []
        assert out["trace"]["abstained"] is True and out["trace"]["supported"] is False
        assert out["turns"][0]["answer"] == ABSTENTION

    @pytest.mark.parametrize("threshold, decision", [(0.0, "answer"), (1.0, "abstain")])
    def test_the_threshold_is_the_knob(self, ctx, threshold, decision):
        out = check_answer(self.state(threshold=threshold), self.runtime(ctx, model()))
        assert out["trace"]["answerability"]["decision"] == decision
        assert out["trace"]["answerability"]["threshold"] == threshold

    def test_the_trace_says_how_its_features_were_computed(self, ctx):
        check = check_answer(self.state(), self.runtime(ctx, model()))["trace"]["answerability"]
        assert check["features_version"] == FEATURES_VERSION and check["features"]["abstain_prob"] == 0.05

    def test_no_threshold_means_the_fitted_one(self, ctx):
        out = check_answer(self.state(), self.runtime(ctx, model(threshold=0.99)))
        assert out["trace"]["answerability"]["threshold"] == 0.99
        assert out["trace"]["answerability"]["decision"] == "abstain"

    def test_a_multi_hop_question_is_held_to_its_own_threshold(self, ctx):
        m = model(threshold=0.4, threshold_multi_hop=0.1)
        single, multi = self.state(), self.state()
        multi["settings"] = {**multi["settings"], "multi_hop": True}
        single_check = check_answer(single, self.runtime(ctx, m))["trace"]["answerability"]
        multi_check = check_answer(multi, self.runtime(ctx, m))["trace"]["answerability"]
        assert single_check["threshold"] == 0.4 and multi_check["threshold"] == pytest.approx(0.1)
        assert multi_check["multi_hop"] is True and multi_check["fitted_thresholds"] == [0.4, 0.1]
        assert single_check["knob"] == multi_check["knob"] == 0.4  # the setting both came from: the fitted one
        multi["settings"]["abstain_threshold"] = 0.2  # the knob moves both
        moved = check_answer(multi, self.runtime(ctx, m))["trace"]["answerability"]
        assert moved["threshold"] == pytest.approx(0.05) and moved["knob"] == 0.2

    @pytest.mark.parametrize("probability, multi_hop", [(0.1, False), (0.2, True)])
    def test_a_weak_multi_hop_reading_answered_from_one_passage_is_read_single_hop(self, ctx, probability, multi_hop):
        # "Paris is the capital of France." holds every content word of the question: question_coverage 1.0
        m = model(threshold=0.4, threshold_multi_hop=0.1)
        state = self.state()
        state["settings"] = {**state["settings"], "multi_hop": True, "multi_hop_probability": probability}
        check = check_answer(state, self.runtime(ctx, m))["trace"]["answerability"]
        assert check["features"]["question_coverage"] == 1.0
        assert check["multi_hop"] is multi_hop and check["multi_hop_probability"] == probability
        assert check["threshold"] == pytest.approx(0.1 if multi_hop else 0.4)

    def wikipedia_state(self, sources, threshold=None):
        """:meth:`state` with two evidence items, from passages of these ``sources``."""
        state = self.state(threshold=threshold)
        state["evidence"] = [{**self.EVIDENCE[0], "n": n, "passage_id": f"p{n}"} for n in (1, 2)]
        state["passages"] = [{"id": f"p{n}", "score": 0.7, "text": "Paris is the capital of France.",
                              "metadata": {"source": source}} for n, source in enumerate(sources, 1)]
        return state

    def test_an_answer_from_the_wikipedia_summaries_alone_gets_their_check(self, ctx):
        default, wikipedia = model(threshold=0.2), model(coef=(-2.0,), threshold=0.6)
        runtime = Runtime(context=replace(ctx, answerability=default, answerability_wikipedia=wikipedia))
        check = check_answer(self.wikipedia_state(["wikipedia", "wikipedia"]), runtime)["trace"]["answerability"]
        assert check["fit_on"] == "wikipedia" and check["threshold"] == pytest.approx(0.6)  # its own fitted one
        assert check["score"] == pytest.approx(wikipedia.score(check["features"])) and check["decision"] == "abstain"
        assert check["knob"] == 0.2 and check["fitted_thresholds"] == [0.2, 0.6]  # the knob: the default check's
        moved = check_answer(self.wikipedia_state(["wikipedia"] * 2, threshold=0.1), runtime)["trace"]["answerability"]
        assert moved["threshold"] == pytest.approx(0.3) and moved["knob"] == 0.1  # carried: 0.1 * 0.6 / 0.2
        ends = [check_answer(self.wikipedia_state(["wikipedia"] * 2, threshold=t), runtime)["trace"]["answerability"]
                for t in (0.0, 1.0)]
        assert [c["threshold"] for c in ends] == [0.0, 1.0]  # never and always abstain keep their meaning

    @pytest.mark.parametrize("sources", [["wikipedia", "file"], ["file", "file"], ["squad", "squad"], [None, None]])
    def test_other_evidence_gets_the_default_check(self, ctx, sources):
        default, wikipedia = model(threshold=0.2), model(coef=(-2.0,), threshold=0.6)
        runtime = Runtime(context=replace(ctx, answerability=default, answerability_wikipedia=wikipedia))
        check = check_answer(self.wikipedia_state(sources), runtime)["trace"]["answerability"]
        assert check["fit_on"] == "contexts" and check["threshold"] == 0.2 and check["decision"] == "answer"

    def test_the_wikipedia_check_needs_the_probe_it_reads(self, ctx):
        """SmolLM2 is not the generator the answer probe reads: its answers get the check fit without
        the probe, wherever the evidence comes from."""
        probe_check = model(features=("support", ANSWER_PROBE), coef=(1.0, 1.0))
        fallback = model(threshold=0.3)
        runtime = Runtime(context=replace(ctx, answerability=probe_check, answerability_fallback=fallback,
                                          answerability_wikipedia=replace(probe_check, metadata={"threshold": 0.6})))
        check = check_answer(self.wikipedia_state(["wikipedia"] * 2), runtime)["trace"]["answerability"]
        assert check["fit_on"] == "contexts" and check["threshold"] == 0.3

    def test_evidence_sources_come_from_the_passages_or_the_index(self, ctx):
        from nodes.check_answer import evidence_sources

        indexed = next(iter(ctx.index))
        evidence = [{"n": 1, "passage_id": "p1"}, {"n": 2, "passage_id": indexed.id}, {"n": 3, "passage_id": "nowhere"}]
        passages = [{"id": "p1", "metadata": {"source": "wikipedia"}}]
        assert evidence_sources(evidence, passages, ctx.index) == ["wikipedia", indexed.metadata.get("source"), None]

    OBAMA = {"n": 1, "passage_id": "p1", "title": "Barack Obama",
             "text": "Barack Hussein Obama II served as the 44th president of the United States from 2009 to 2017."}

    SURE = model(coef=(-2.0,))  # an answer the evidence does not hold scores over 0.88

    def age_state(self, citations, threshold=0.1, **settings):
        """"How old is Barack Obama?" answered "44 years old" from a passage that gives no year of birth."""
        return {**self.state(threshold=threshold, evidence=[self.OBAMA]), "question": "How old is Barack Obama?",
                "answer": "44 years old", "steps": [{**self.STEP, "answer": "44 years old", "raw_output": "44 years old"}],
                "citations": citations, "passages": [{"id": "p1", "score": 0.7, "text": self.OBAMA["text"]}],
                "settings": {"abstain_threshold": threshold, "layout": "question_first", "living_ages": True, **settings}}

    def test_an_age_no_passage_states_is_withheld_whatever_its_score(self, ctx):
        # the 1.5B model does not subtract: an age no passage holds was not read from the evidence
        out = check_answer(self.age_state([]), self.runtime(ctx, self.SURE))
        check = out["trace"]["answerability"]
        assert check["decision"] == "abstain" and check["by"] == "age" and check["score"] > check["threshold"]
        assert check["withheld_answer"] == "44 years old" and "no passage" in check["reason"]
        assert out["answer"] == ABSTENTION and out["citations"] == [] and out["trace"]["abstained"] is True
        assert out["turns"][0]["answer"] == ABSTENTION and out["turns"][0]["answerability"]["by"] == "age"

    DARWIN = {"n": 1, "passage_id": "p1", "title": "Charles Darwin",
              "text": "Charles Robert Darwin was an English naturalist. (English naturalist; born 1809, died 1882)"}

    EVEN = model(coef=(0.0,))  # every answer scores 0.5, over the knob of 0.1

    def kind_state(self, question, answer, threshold=0.1):
        """``question`` answered ``answer`` from Darwin's description, cited to it."""
        cited = {**self.DARWIN, "score": 0.7, "metadata": {}}
        return {**self.state(threshold=threshold, evidence=[self.DARWIN]), "question": question, "answer": answer,
                "steps": [{**self.STEP, "answer": answer, "raw_output": answer}], "citations": [cited],
                "passages": [{"id": "p1", "score": 0.7, "text": self.DARWIN["text"]}],
                "settings": {"abstain_threshold": threshold, "layout": "question_first", "answer_form": "short"}}

    @pytest.mark.parametrize("question, answer, asks", [
        ("Where was Charles Darwin born?", "1809", "where"), ("Where was Charles Darwin born?", "in 1809.", "where"),
        ("Who was born in Shrewsbury?", "1,809", "who"),
        ("Where was Svante Arrhenius born?", "1859, died 1927, aged 67 or 68", "where"),
        ("Where did Charles Darwin die?", "in April 1882", "where"), ("Where did he live?", "the 1850s", "where"),
        # as it is given: the short form of "Swedish scientist; born 1859, died 1927, aged 67 or 68"
        ("Where was Svante Arrhenius born?", "Swedish scientist; born 1859, died 1927, aged 67 or 68", "where"),
    ])
    def test_a_number_to_a_question_that_asks_where_or_who_is_withheld_whatever_its_score(self, ctx, question, answer,
                                                                                            asks):
        """Found trying the chat (session 67): "Where was Charles Darwin born?" was answered "1809", the year his
        description gives, and given at 30%; "Where was he born?" after a question on Shakespeare "1564". A number
        is no place and no person."""
        out = check_answer(self.kind_state(question, answer), self.runtime(ctx, self.EVEN))
        check = out["trace"]["answerability"]
        assert check["decision"] == "abstain" and check["by"] == "kind" and check["score"] > check["threshold"]
        assert check["withheld_answer"] == answer.removeprefix("Swedish scientist; born ")
        assert check["reason"] == f"a number or a date, and the question asks {asks}"
        assert out["answer"] == ABSTENTION and out["citations"] == [] and out["turns"][0]["answerability"]["by"] == "kind"

    @pytest.mark.parametrize("question, answer, threshold", [
        ("Where was Charles Darwin born?", "Shrewsbury", 0.1), ("When was Charles Darwin born?", "1809", 0.1),
        ("Who wrote On the Origin of Species?", "Charles Darwin", 0.1), ("How many books did Darwin write?", "19", 0.1),
        ("Where was Charles Darwin born?", "1809", 0.0),  # the knob at 0 never abstains
        ("Where is the 221B of Baker Street?", "221B", 0.1), ("Where was Anna Pavlova born?", "Russia", 0.1),
        ("Where was Darwin born in 1809?", "Shrewsbury, in 1809", 0.1), ("Who was Agent 007?", "James Bond", 0.1),
    ])
    def test_other_answers_are_left_to_the_score(self, ctx, question, answer, threshold):
        out = check_answer(self.kind_state(question, answer, threshold), self.runtime(ctx, self.EVEN))
        assert out["trace"]["answerability"]["by"] == "score" and out["trace"]["answerability"]["decision"] == "answer"

    VESALIUS = {"n": 2, "passage_id": "p2", "title": "Andreas Vesalius",
                "text": "He was born in Brussels, which was then part of the Habsburg Netherlands."}
    EINSTEIN = {"n": 1, "passage_id": "p1", "title": "Albert Einstein",
                "text": "Albert Einstein was a German-born theoretical physicist, best known for the theory of relativity."}

    def subject_state(self, question, answer, evidence, threshold=0.1, qualified=None):
        """``question`` answered ``answer`` from ``evidence``, cited to the items that hold it (``qualified``: the
        setting ``qualified_superlatives``)."""
        held = [{**item, "score": 0.7, "metadata": {}} for item in evidence if answer.lower() in item["text"].lower()]
        return {**self.state(threshold=threshold, evidence=evidence), "question": question, "answer": answer,
                "steps": [{**self.STEP, "answer": answer, "raw_output": answer}], "citations": held,
                "passages": [{"id": item["passage_id"], "score": 0.7, "text": item["text"]} for item in evidence],
                "settings": {"abstain_threshold": threshold, "layout": "question_first", "answer_form": "short",
                             **({} if qualified is None else {"qualified_superlatives": qualified})}}

    @pytest.mark.parametrize("question", ["Where was Albert Einstein born?", "Where was Beethoven born?",
                                          "Where did Harry Houdini grow up?", "When was Ludwig van Beethoven born?"])
    def test_an_answer_held_only_by_passages_on_someone_else_is_withheld_whatever_its_score(self, ctx, question):
        """Found trying the chat (session 68): "Where was Albert Einstein born?" and "Where was Beethoven born?"
        were both answered "Brussels", cited to Andreas Vesalius's "He was born in Brussels", and given: the
        passage that holds the answer does not name the person asked about."""
        out = check_answer(self.subject_state(question, "Brussels", [self.EINSTEIN, self.VESALIUS]),
                           self.runtime(ctx, self.EVEN))
        check = out["trace"]["answerability"]
        assert check["decision"] == "abstain" and check["by"] == "subject" and check["score"] > check["threshold"]
        assert check["withheld_answer"] == "Brussels"
        name = question.split(" ", 2)[2].rsplit(" ", 1 + question.endswith("grow up?"))[0]
        assert check["reason"] == f"held only by passages of \u201cAndreas Vesalius\u201d, which do not name {name}"
        assert out["answer"] == ABSTENTION and out["citations"] == [] and out["turns"][0]["answerability"]["by"] == "subject"

    def test_a_passage_that_names_the_person_by_a_pronoun_is_read_with_the_passages_before_it(self, ctx):
        """Found trying the chat (session 68): a user's file "Maria Lopez leads the chemistry group. She was born in
        Lyon." answered "Where was Maria Lopez born?" "Lyon", and the rule withheld it: the passage that holds the
        answer is a sentence whose "She" the one before it names. Andreas Vesalius's "He was born in Brussels" is
        still no answer for Albert Einstein."""
        import numpy as np

        from components.index import PassageIndex
        from components.passages import Passage

        index = PassageIndex("e", 2)
        sentences = ["Maria Lopez leads the chemistry group.", "She was born in Lyon and studied in Geneva.",
                     "Tom Baker runs the lab.", "He was born in Leeds."]
        team = [Passage(id=f"upload/team#p0s{i}", title="team", text=text,
                        metadata={"doc_id": "upload/team", "paragraph": 0, "sentence": i}) for i, text in enumerate(sentences)]
        vesalius = [Passage(id="wiki/Andreas Vesalius#p0s0", title="Andreas Vesalius", text="Andreas Vesalius was an "
                            "anatomist.", metadata={"doc_id": "wiki/Andreas Vesalius", "paragraph": 0, "sentence": 0}),
                    Passage(id="wiki/Andreas Vesalius#p0s1", title="Andreas Vesalius", text=self.VESALIUS["text"],
                            metadata={"doc_id": "wiki/Andreas Vesalius", "paragraph": 0, "sentence": 1})]
        index.add(team + vesalius, np.eye(2, dtype=np.float32)[[0, 1, 0, 1, 0, 1]])
        runtime = Runtime(context=replace(ctx, answerability=self.EVEN, index=index))

        def checked(question, answer, passage):
            evidence = [{"n": 1, "passage_id": passage.id, "title": passage.title, "text": passage.text}]
            return check_answer(self.subject_state(question, answer, evidence), runtime)["trace"]["answerability"]

        assert checked("Where was Maria Lopez born?", "Lyon", team[1])["by"] == "score"
        assert checked("Where was Tom Baker born?", "Leeds", team[3])["by"] == "score"
        assert checked("Where was Tom Baker born?", "Lyon", team[1])["by"] == "subject"  # Maria's, not Tom's
        assert checked("Where was Albert Einstein born?", "Brussels", vesalius[1])["by"] == "subject"

    @pytest.mark.parametrize("question, answer, evidence, threshold", [
        # the passage that holds it names the person: in its title, or in its text (accents aside)
        ("Where was Andreas Vesalius born?", "Brussels", [VESALIUS], 0.1),
        ("When did Temur die?", "1328", [{"n": 1, "passage_id": "p1", "title": "Yuan dynasty",
                                          "text": "When Yesün Temür died in Shangdu in 1328, Tugh Temür was recalled."}], 0.1),
        ("Where was Einstein born?", "Ulm", [{**EINSTEIN, "text": "He was born in Ulm."}], 0.1),
        ("Where was Albert Einstein born?", "Brussels", [EINSTEIN, VESALIUS], 0.0),  # the knob at 0 never abstains
        ("Where was he born?", "Brussels", [EINSTEIN, VESALIUS], 0.1),  # no name: left to the score
        ("Where was Einstein's wife born?", "Brussels", [EINSTEIN, VESALIUS], 0.1),  # a possessive: not the person
        ("Where is the capital of Belgium?", "Brussels", [VESALIUS], 0.1),  # asks no life of a person
        ("Where was Albert Einstein born?", "Germany", [EINSTEIN, VESALIUS], 0.1),  # held by no passage: the score's
    ])
    def test_an_answer_a_passage_on_the_person_holds_is_left_to_the_score(self, ctx, question, answer, evidence, threshold):
        out = check_answer(self.subject_state(question, answer, evidence, threshold), self.runtime(ctx, self.EVEN))
        assert out["trace"]["answerability"]["by"] == "score" and out["trace"]["answerability"]["decision"] == "answer"

    NEPTUNE = {"n": 1, "passage_id": "p1", "title": "Neptune",
               "text": "It is the fourth-largest planet in the Solar System by diameter, and the densest giant planet."}
    SATURN = {"n": 2, "passage_id": "p2", "title": "Saturn",
              "text": "Saturn is the sixth planet from the Sun and the second largest in the Solar System, after Jupiter."}
    CHINA = {"n": 1, "passage_id": "p1", "title": "China",
             "text": "It is the world's second-most populous country after India, with a population exceeding 1.4 billion."}
    INDIA = {"n": 2, "passage_id": "p2", "title": "India",
             "text": "It is the world's seventh-largest country by area and the largest by population."}

    BEIRUT = {"n": 1, "passage_id": "p1", "title": "Beirut",
              "text": "Beirut has been inhabited for more than 5,000 years, making it one of the oldest cities in the world."}
    PUNJAB = {"n": 2, "passage_id": "p2", "title": "Punjab, Pakistan",
              "text": "Lahore is the capital and largest city of the province."}
    LAHORE = {"n": 3, "passage_id": "p3", "title": "Lahore",
              "text": "It is the second-largest city in Pakistan, after Karachi, with a population of over 14 million."}
    PAKISTAN = {"n": 4, "passage_id": "p4", "title": "Pakistan", "text": "Lahore is the largest city in Pakistan."}
    BRISBANE = {"n": 1, "passage_id": "p1", "title": "Brisbane",
                "text": "Brisbane is the capital and largest city of the Australian state of Queensland and the third-most "
                        "populous city in Australia."}

    @pytest.mark.parametrize("question, answer, evidence, reason", [
        ("What is the largest planet in the solar system?", "Neptune", [NEPTUNE, SATURN],
         "ranked fourth-largest by the passages that hold it, and the question asks for the largest"),
        ("What is the largest planet?", "Saturn", [NEPTUNE, SATURN],
         "ranked second largest by the passages that hold it, and the question asks for the largest"),
        ("Which country has the largest population?", "China", [CHINA, INDIA],
         "ranked second-most populous by the passages that hold it, and the question asks for the largest"),
        ("What is the most populous country?", "China", [CHINA, INDIA],
         "ranked second-most populous by the passages that hold it, and the question asks for the most populous"),
        ("What is the oldest city in the world?", "Beirut", [BEIRUT],  # "one of" the oldest is not the oldest
         "ranked one of the oldest by the passages that hold it, and the question asks for the oldest"),
        # session 70: the largest of a state the question does not name is not the largest asked
        ("What is the largest city in Australia?", "Brisbane", [BRISBANE],
         "ranked third-most populous by the passages that hold it, and the question asks for the largest"),
        # a passage on another subject that holds it without the superlative asked ("of the province") keeps nothing
        ("What is the largest city in Pakistan?", "Lahore", [PUNJAB, LAHORE],
         "ranked second-largest by the passages that hold it, and the question asks for the largest"),
    ])
    def test_an_answer_its_passages_rank_below_the_first_is_withheld_whatever_its_score(self, ctx, question, answer,
                                                                                         evidence, reason):
        """Found trying the chat (session 68): "What is the largest planet in the solar system?" was answered
        "Neptune", cited to "It is the fourth-largest planet in the Solar System", and given at 68%; "Which country
        has the largest population?" "China", cited to "the world's second-most populous country after India"."""
        out = check_answer(self.subject_state(question, answer, evidence), self.runtime(ctx, self.EVEN))
        check = out["trace"]["answerability"]
        assert check["decision"] == "abstain" and check["by"] == "rank" and check["reason"] == reason
        assert check["withheld_answer"] == answer and out["answer"] == ABSTENTION

    @pytest.mark.parametrize("question, answer, evidence, threshold", [
        ("Which country has the largest population?", "India", [CHINA, INDIA], 0.1),  # "the largest by population"
        ("What is the second largest planet?", "Saturn", [NEPTUNE, SATURN], 0.1),  # asks the rank the passage gives
        ("What is the 4th largest planet?", "Neptune", [NEPTUNE, SATURN], 0.1),
        ("Which planet is the densest?", "Neptune", [NEPTUNE, SATURN], 0.1),  # "densest" is not ranked there
        ("What is Neptune's rank by size?", "fourth-largest", [NEPTUNE, SATURN], 0.1),  # no superlative asked
        ("What is the largest planet in the solar system?", "Neptune", [NEPTUNE, SATURN], 0.0),  # the knob at 0
        ("What is the largest planet in the solar system?", "Jupiter", [NEPTUNE, SATURN], 0.1),  # held: "after Jupiter"
        ("What is the largest city in Queensland?", "Brisbane", [BRISBANE], 0.1),  # the state asked
        ("What is the largest city in Pakistan?", "Lahore", [PAKISTAN, LAHORE], 0.1),  # another passage says it is
        ("What is the largest city in Pakistan?", "Lahore", [PUNJAB], 0.1),  # no passage titled as it ranks it
    ])
    def test_an_answer_its_passages_do_not_rank_below_what_is_asked_is_left_to_the_score(self, ctx, question, answer,
                                                                                           evidence, threshold):
        out = check_answer(self.subject_state(question, answer, evidence, threshold), self.runtime(ctx, self.EVEN))
        assert out["trace"]["answerability"]["by"] == "score" and out["trace"]["answerability"]["decision"] == "answer"

    @staticmethod
    def item(n, title, text):
        """An evidence item ``n`` (passage ``p<n>``)."""
        return {"n": n, "passage_id": f"p{n}", "title": title, "text": text}

    KILIMANJARO = item(1, "Mount Kilimanjaro", "It is the highest mountain in Africa and the highest free-standing "
                                               "mountain above sea level in the world, at 5,895 m (19,341 ft) above "
                                               "sea level.")
    EVEREST = item(2, "Mount Everest", "Mount Everest is Earth's highest mountain above sea level, located in the "
                                       "Himalayas.")
    BETELGEUSE = item(1, "Betelgeuse", "Betelgeuse is the brightest star in the night sky at near-infrared "
                                       "wavelengths.")
    BEIJING = item(1, "Beijing", "With more than 21.8 million residents, it is the world's most populous national "
                                 "capital city, as well as China's second-largest city by urban area, after "
                                 "Shanghai.")
    MONTREAL = item(1, "Montreal", "Montreal is the largest city in the province of Quebec, the second-largest in "
                                   "Canada, and the eighth-largest in North America.")
    CANADA = item(2, "Canada", "Its capital is Ottawa and its three largest metropolitan areas are Toronto, "
                               "Montreal, and Vancouver.")
    JUPITER = item(1, "Jupiter", "Jupiter is the fifth planet from the Sun and the largest in the Solar System.")
    NEW_YORK = item(1, "New York City", "New York City is the most populous city in the U.S. and the largest city "
                                        "in the U.S. by area.")
    TORONTO = item(1, "Toronto", "Toronto is the largest Canadian city and the capital of the Canadian province of "
                                 "Ontario.")
    CALIFORNIA = item(1, "California", "With over 39 million residents, it is the largest U.S. state by population "
                                       "and third-largest by area.")
    TEXAS = item(1, "Texas", "Texas is the most populous state in the Southern United States and the second-most "
                             "populous state in the country.")
    CRETE = item(1, "Crete", "Crete is the largest and most populous island of Greece, the 89th largest island in "
                             "the world, and the fifth largest island in the Mediterranean Sea, after Sicily. "
                             "(Largest Greek island)")
    BURJ_KHALIFA = item(1, "Burj Khalifa", "It has been the tallest building in the world since its topping out in "
                                           "2009, and the second-tallest structure ever built.")

    @pytest.mark.parametrize("question, answer, evidence, reason", [
        ("What is the largest country by area?", "India", [INDIA],  # "the largest by population"
         "ranked seventh-largest by the passages that hold it, and the question asks for the largest"),
        ("What is the largest state in the United States by area?", "California", [CALIFORNIA],
         "ranked third-largest by the passages that hold it, and the question asks for the largest"),
        ("What is the most populous state in the United States?", "Texas", [TEXAS],  # a part of the place asked
         "ranked second-most populous by the passages that hold it, and the question asks for the most populous"),
        ("What is the most populous city in the world?", "Beijing", [BEIJING],  # "national capital": a narrower noun
         "ranked second-largest by the passages that hold it, and the question asks for the most populous"),
        # "of Greece" narrows "largest" too, which "and most populous" joins; "Greek" is a narrower noun
        ("What is the largest island in the Mediterranean Sea?", "Crete", [CRETE],
         "ranked 89th largest by the passages that hold it, and the question asks for the largest"),
    ])
    def test_a_superlative_said_of_less_than_is_asked_keeps_no_ranked_answer(self, ctx, question, answer, evidence,
                                                                            reason):
        """Found trying the chat (session 88): each was given with confidence; the passage shown ranks the answer
        lower, and calls it the first only of less than is asked (``qualified_superlatives``, the default)."""
        out = check_answer(self.subject_state(question, answer, evidence), self.runtime(ctx, self.EVEN))
        check = out["trace"]["answerability"]
        assert check["decision"] == "abstain" and check["by"] == "rank" and check["reason"] == reason

    @pytest.mark.parametrize("question, withheld", [("What is the largest city in Canada?", True),
                                                     ("What is the largest city in Quebec?", False)])
    def test_a_description_that_names_a_part_of_the_country_keeps_no_answer_of_the_country(self, ctx, question,
                                                                                           withheld):
        """Session 88: Montreal's passage ends with its description, "(Largest city in Quebec, Canada)": the
        largest of a part of the country the question names only when it names the part."""
        montreal = {**self.MONTREAL, "text": self.MONTREAL["text"] + " (Largest city in Quebec, Canada)"}
        out = check_answer(self.subject_state(question, "Montreal", [montreal, self.CANADA]), self.runtime(ctx, self.EVEN))
        check = out["trace"]["answerability"]
        assert (check["decision"], check["by"]) == (("abstain", "rank") if withheld else ("answer", "score"))

    def test_a_count_before_a_superlative_is_a_rank_among_others(self, ctx):
        """Found trying the chat (session 88): "What is the largest city in Canada?" was given "Montreal", which
        its own passage ranks second-largest, because Canada's passage also held it, unranked as it was read: "its
        three largest metropolitan areas are Toronto, Montreal, and Vancouver"."""
        out = check_answer(self.subject_state("What is the largest city in Canada?", "Montreal",
                                              [self.MONTREAL, self.CANADA]), self.runtime(ctx, self.EVEN))
        check = out["trace"]["answerability"]
        assert check["decision"] == "abstain" and check["by"] == "rank"
        assert check["reason"] == "ranked second-largest by the passages that hold it, and the question asks for the largest"

    SOUTHERN_OCEAN = item(1, "Southern Ocean", "With a size of 21,960,000 km2 (8,480,000 mi2), it is the "
                          "second-smallest of the five principal oceanic divisions, smaller than the Pacific, Atlantic "
                          "and Indian oceans, and larger than the Arctic Ocean.")
    KRISHNA = item(1, "Krishna River", "The Krishnā River in the Deccan Plateau is the third-longest in India, after "
                   "the Ganga and Godavari. (River in southern India)")
    GREAT_LAKES = item(1, "African Great Lakes", "Lake Victoria, the second-largest freshwater lake in the world by "
                       "area, is one of them.")

    @pytest.mark.parametrize("question, answer, evidence, withheld", [
        ("What is the smallest ocean?", "Arctic Ocean", [SOUTHERN_OCEAN], False),  # "Ocean": the kind asked
        ("What is the largest lake in Africa?", "Lake Victoria", [GREAT_LAKES], False),  # "Lakes": the kind asked
        ("What is the smallest ocean?", "Southern Ocean", [SOUTHERN_OCEAN], True),  # "Southern": the answer's own
        ("What is the smallest ocean?", "Ocean", [SOUTHERN_OCEAN], True),  # nothing but the kind: all its words
        ("What is the longest river in India?", "The Krishnā River", [KRISHNA], True),  # accents aside
    ])
    def test_a_passage_titled_only_by_the_kind_asked_is_not_titled_as_the_answer(self, ctx, question, answer,
                                                                               evidence, withheld):
        """Session 89: "What is the smallest ocean?" was answered "Arctic Ocean" and withheld, ranked
        "second-smallest" by Southern Ocean's passage, titled as the answer by "Ocean" alone. A title without the
        answer's accents still titles it ("Krishna River" for "The Krishnā River")."""
        out = check_answer(self.subject_state(question, answer, evidence), self.runtime(ctx, self.EVEN))
        check = out["trace"]["answerability"]
        assert (check["decision"], check["by"]) == (("abstain", "rank") if withheld else ("answer", "score"))

    @pytest.mark.parametrize("question, asked, noun", [
        ("What is the smallest ocean?", "smallest", "ocean"),
        ("What is the largest lake in Africa?", "largest", "lake"),
        ("What is the most populous city in Africa?", "most populous", "city"),
        ("What is the most-populous city in Africa?", "most populous", "city"),
        ("What elements follow oxygen as the most abundant in the universe?", "most abundant", None),
        ("Which ocean is the smallest?", "smallest", None),
    ])
    def test_the_noun_asked_is_the_word_after_the_superlative(self, question, asked, noun):
        from nodes.check_answer import asked_noun

        assert asked_noun(question, asked) == noun

    ANGEL_FALLS = item(1, "Angel Falls", "Angel Falls is the world's tallest uninterrupted waterfall, with a height of "
                                         "979 metres.")
    LAKE_VAN = item(1, "Lake Van", "Lake Van is the largest lake in Turkey. (Large salt lake in eastern Turkey)")

    @pytest.mark.parametrize("question, answer, evidence, reason", [
        ("What is the largest lake in Scotland?", "Lake Van", [LAKE_VAN], "called the largest only in Turkey"),
        ("What is the largest lake in the world?", "Lake Van", [LAKE_VAN], "called the largest only in Turkey"),
        ("What is the tallest mountain in the world?", "Mount Kilimanjaro", [KILIMANJARO],
         "called the highest only in Africa"),  # and "the highest free-standing mountain": a narrower noun
    ])
    def test_an_answer_its_passages_call_the_first_only_of_another_place_is_withheld(self, ctx, question, answer,
                                                                                    evidence, reason):
        """Session 89: a passage that calls the answer the first only of another place ("the largest lake in Turkey")
        withholds it as a rank does."""
        out = check_answer(self.subject_state(question, answer, evidence), self.runtime(ctx, self.EVEN))
        check = out["trace"]["answerability"]
        assert check["decision"] == "abstain" and check["by"] == "rank"
        assert check["reason"] == (f"{reason} by the passages that hold it, and the question asks for the "
                                   f"{question.split()[3]}")

    @pytest.mark.parametrize("question, answer, evidence", [
        ("What is the tallest mountain in the world?", "Mount Everest", [EVEREST]),  # "above sea level" narrows nothing
        ("What is the largest planet?", "Jupiter", [JUPITER]),  # the Solar System is the whole
        ("What is the largest city in the United States?", "New York City", [NEW_YORK]),  # "U.S.": its initials
        ("What is the largest city in Canada?", "Toronto", [TORONTO]),  # "Canadian": the place asked
        ("Which country has the largest population?", "India", [INDIA]),  # no "by" asked, so none narrows
        ("What is the tallest building in the world?", "Burj Khalifa", [BURJ_KHALIFA]),  # "since …" still is
        ("What is the largest island of Greece?", "Crete", [CRETE]),  # the place asked
        ("What is the largest Greek island?", "Crete", [CRETE]),
        # narrowed, but not to a place and ranked nowhere: a superlative of less than is asked keeps nothing, and
        # withholds nothing
        ("What is the brightest star in the night sky?", "Betelgeuse", [BETELGEUSE]),
        ("What is the highest waterfall in the world?", "Angel Falls", [ANGEL_FALLS]),
        ("What is the highest mountain in Africa?", "Mount Kilimanjaro", [KILIMANJARO]),  # the place asked
        ("What is the largest lake in Turkey?", "Lake Van", [LAKE_VAN]),
        # the question's place named too: "in Germany" may hold it ("the largest conurbation of the Rhine", SQuAD 2.0 dev)
        ("What is the region called that is the largest conurbation of the Rhine?", "Rhine-Ruhr region",
         [item(1, "Rhine", "Here the Rhine flows through the largest conurbation in Germany, the Rhine-Ruhr region.")]),
    ])
    def test_an_answer_its_passages_call_the_first_of_what_is_asked_is_left_to_the_score(self, ctx, question, answer,
                                                                                        evidence):
        out = check_answer(self.subject_state(question, answer, evidence), self.runtime(ctx, self.EVEN))
        assert out["trace"]["answerability"]["by"] == "score" and out["trace"]["answerability"]["decision"] == "answer"

    @pytest.mark.parametrize("question, after", [
        ("What is the name of the largest university press in the U.S?", "university press in the United States"),
        ("What is the largest city in the US?", "city in the United States"),
        ("What is the largest city in the United States?", "city in the U.S."),
        ("What is the largest city in Canada?", "Canadian city"),
    ])
    def test_a_place_named_by_its_initials_either_way_narrows_nothing(self, question, after):
        """Seen in session 88's dev replay of the setting's first form: "the largest university press in the
        U.S?" was read as narrowed by "in the United States" (the initials were compared one way only)."""
        from nodes.check_answer import qualified_by

        assert qualified_by(question, "largest", after) is None
        assert qualified_by("What is the largest city in the US?", "largest", "city in the United Kingdom") \
            == "in the United Kingdom"  # other initials

    @pytest.mark.parametrize("question, answer, evidence", [
        ("What is the largest country by area?", "India", [INDIA]),
        ("What is the largest state in the United States by area?", "California", [CALIFORNIA]),
        ("What is the most populous state in the United States?", "Texas", [TEXAS]),
    ])
    def test_without_qualified_superlatives_any_superlative_asked_keeps_the_answer(self, ctx, question, answer, evidence):
        out = check_answer(self.subject_state(question, answer, evidence, qualified=False), self.runtime(ctx, self.EVEN))
        assert out["trace"]["answerability"]["by"] == "score" and out["trace"]["answerability"]["decision"] == "answer"

    OLYMPICS = item(1, "Summer Olympic Games", "The inaugural Games took place in 1896 in Athens, then part of the "
                    "Kingdom of Greece, and the most recent was held in 2024 in Paris, France.")
    FLEMING = item(1, "Alexander Fleming", "His discovery in 1928 of what was later named benzylpenicillin was made by "
                   "Alexander Fleming.")
    HARVARD = item(2, "Harvard University", "It was named for its first benefactor, John Harvard, in 1639.")
    UNDATED = item(3, "Harvard University", "John Harvard left the college his library and half of his estate.")
    BEATLES = item(4, "The Beatles", "The Beatles were led by John Lennon in the 1960s.")
    WAR = item(5, "World War I", "The war of 1914–18 was fought by the Allies, among them France.")
    ORWELL = item(6, "Nineteen Eighty-Four", "Nineteen Eighty-Four is a dystopian novel by the English writer George "
                  "Orwell, published in 1949.")
    NAPOLEON = item(7, "Napoleon", "Napoleon I was Emperor of the French from 18 May 1804 until his first abdication in "
                    "1814, with a brief restoration during the Hundred Days in 1815.")
    BERNERS_LEE = item(9, "Tim Berners-Lee", "Sir Timothy John Berners-Lee is an English computer scientist best known as "
                       "the inventor of the World Wide Web. (English computer scientist (born 1955, aged 70 or 71 in 2026))")
    FLORENCE = item(10, "John John Florence", "John John Florence (born 18 October 1992) is an American professional "
                    "surfer who won the world title of 2016.")
    POPE = item(8, "Pope", "The pope has been sovereign of Vatican City since 1929; the current pope, Leo XIV, was elected "
                "in 2025.")

    @pytest.mark.parametrize("question, answer, evidence, reason", [
        ("Which country hosted the 2016 Summer Olympics?", "France", [OLYMPICS],
         "held only by passages that name other years (1896, 2024), and the question asks of 2016"),
        # SQuAD 2.0's unanswerable questions change a year of their paragraph
        ("Who founded Cambridge in 1650?", "John Harvard", [HARVARD],
         "held only by passages that name other years (1639), and the question asks of 1650"),
        # a term's span holds the years of the term; only an election is the year before it
        ("Who was the President of the United States in 2008?", "Barack Obama", [OBAMA],
         "held only by passages that name other years (2009, 2017), and the question asks of 2008"),
        # "since 1929" is no term that holds every year after it
        ("Who became Pope in 2013?", "Leo XIV", [POPE],
         "held only by passages that name other years (1929, 2025), and the question asks of 2013"),
    ])
    def test_an_answer_held_only_by_passages_on_other_years_is_withheld_whatever_its_score(self, ctx, question, answer,
                                                                                             evidence, reason):
        """Found trying the chat (session 73): "Which country hosted the 2016 Summer Olympics?" was answered "France",
        cited to the passage on the 1896 and 2024 Games, and given at 51%."""
        out = check_answer(self.subject_state(question, answer, evidence), self.runtime(ctx, self.EVEN))
        check = out["trace"]["answerability"]
        assert check["decision"] == "abstain" and check["by"] == "year" and check["reason"] == reason
        assert check["withheld_answer"] == answer and out["answer"] == ABSTENTION

    @pytest.mark.parametrize("question, answer, evidence, settings", [
        ("Who won the 2008 United States presidential election?", "Barack Obama", [OBAMA], {}),  # elected the year before
        ("Who was the President of the United States in 2012?", "Barack Obama", [OBAMA], {}),  # within "from 2009 to 2017"
        ("Who discovered penicillin in 1928?", "Alexander Fleming", [FLEMING], {}),  # the year asked
        ("Who founded Cambridge in 1650?", "John Harvard", [HARVARD, UNDATED], {}),  # one holder names no year
        ("Who led the Beatles in 1965?", "John Lennon", [BEATLES], {}),  # "the 1960s"
        ("Which country fought with the Allies in 1916?", "France", [WAR], {}),  # "1914–18"
        ("Which country hosted the 2016 Summer Olympics?", "France", [OLYMPICS], {"multi_hop": True}),  # left to the score
        ("Which country hosted the 2016 Summer Olympics?", "France", [OLYMPICS], {"abstain_threshold": 0.0}),  # the knob 0
        ("Which country hosted the Summer Olympics in Athens?", "Greece", [OLYMPICS], {}),  # no year asked
        # session 73: a year that is a work's title is no time ("Who wrote 1984?" had withheld "George Orwell")
        ("Who wrote 1984?", "George Orwell", [ORWELL], {}),
        # a term written with words between its years ("from 18 May 1804 until his first abdication in 1814")
        ("Who was the Emperor of the French in 1810?", "Napoleon I", [NAPOLEON], {}),
        # the only years its passage names are those of his life (session 73: "Tim Berners-Lee" had been withheld)
        ("Who invented the World Wide Web in 1989?", "Tim Berners-Lee", [BERNERS_LEE], {}),
        # a question that asks of a life reads the life's years (a HotpotQA question: "born 18 October 1992")
        ("Which American surfer born 18 October 1992 won a world title?", "John John Florence", [FLORENCE], {}),
    ])
    def test_an_answer_a_passage_dates_to_the_year_asked_or_does_not_date_is_left_to_the_score(self, ctx, question,
                                                                                               answer, evidence, settings):
        state = self.subject_state(question, answer, evidence)
        state["settings"] = {**state["settings"], **settings}
        out = check_answer(state, self.runtime(ctx, self.EVEN))
        assert out["trace"]["answerability"]["by"] == "score" and out["trace"]["answerability"]["decision"] == "answer"

    @pytest.mark.parametrize("question, years", [
        ("Which country hosted the 2016 Summer Olympics?", [2016]),
        ("In 1785 James Hutton presented what paper?", [1785]),
        ("As of 2017, how many courses are required?", [2017]),
        ("In May 2010, Parliament was relocated where?", [2010]),
        ("What was released on July 31, 1974?", [1974]),
        ("What was built by the pre-1875 County Council?", [1875]),
        ("Who won in 2014 and 2018?", [2014, 2018]),
        ("Who wrote 1984?", []),  # titles: after a verb or a kind of work
        ("Who directed the film 1917?", []),
        ("The Scotland Act 2002 extends what?", []),
        ("How many of the 1,500 men came back?", []),
        # a number of years is a length of time, no year (session 75: a seed-79 question, "2005" withheld "of 1000")
        ("In what year did the Amazon basin experience its worst drought in 1000 years?", []),
        ("What happened to the empire in 1200 years of rule, and in 1453?", [1453]),
    ])
    def test_the_years_a_question_names_as_times(self, question, years):
        from nodes.check_answer import years_asked

        assert years_asked(question) == years

    @pytest.mark.parametrize("text, years, spans", [
        ("from 1969 to 1974", {1969, 1974}, [range(1969, 1975)]),
        ("1939–1945", {1939, 1945}, [range(1939, 1946)]),
        ("between 1990 and 2000", {1990, 2000}, [range(1990, 2001)]),
        ("the war of 1914–18", {1914}, [range(1914, 1919)]),
        ("in the 1960s", {1960}, [range(1960, 1970)]),
        ("in 1896 in Athens and in 2024 in Paris.", {1896, 2024}, []),
        ("1,500 people, 12016 items, 3.2014 and 2016.5", set(), []),  # parts of other numbers are no years
        # a life's years, as a description writes them, are no years of what the passage tells
        ("(English computer scientist (born 1955, aged 70 or 71 in 2026))", set(), []),
        ("(French general and emperor; born 1769, died 1821, aged 51 or 52)", set(), []),
        ("He was born in Ulm in 1879 and moved to Munich in 1880.", {1880}, []),
        ("from 18 May 1804 until his first abdication in 1814, and in 1815", {1804, 1814, 1815}, [range(1804, 1815)]),
        ("from 1 September 1643 until his death in 1715", {1643, 1715}, [range(1643, 1716)]),
        ("sovereign since 1929", {1929}, []),
        ("the worst drought in 1000 years, in 2005", {2005}, []),  # a number of years is no year
    ])
    def test_the_years_and_spans_a_passage_names(self, text, years, spans):
        from nodes.check_answer import years_named

        assert years_named(text) == (years, spans)

    SOYBEAN = item(1, "Soybean", "Brazil is the second largest producer of soybeans, after the United States.")
    PHARMACY = item(2, "Pharmacy", "Rules set a minimum distance of 1.6 km between a patient's home and the nearest "
                    "pharmacy that may dispense.")
    RANKED = item(3, "Soybean", "The largest producer is the United States, and the smallest of the top ten is Brazil.")
    ECHEGARAY = item(4, "José Echegaray", "José Echegaray was born in 1832, the last of the writers of his circle.")
    MARS = item(5, "Mars", "Mars is smaller than Earth and has two moons.")

    @pytest.mark.parametrize("question, answer, evidence, reason", [
        # SQuAD 2.0's unanswerable questions swap a word of their paragraph for its opposite (session 75)
        ("What is the second smallest global producer of soybean?", "Brazil", [SOYBEAN],
         "held only by passages that say \u201clargest\u201d, and the question asks \u201csmallest\u201d"),
        ("What is the maximum distance between a patient's home and the nearest pharmacy?", "1.6 km", [PHARMACY],
         "held only by passages that say \u201cminimum\u201d, and the question asks \u201cmaximum\u201d"),
    ])
    def test_an_answer_held_only_by_passages_that_say_the_opposite_is_withheld_whatever_its_score(
            self, ctx, question, answer, evidence, reason):
        self.assert_ruled(self.checked_evenly(ctx, question, answer, evidence), "opposite", reason, answer)

    def checked_evenly(self, ctx, question, answer, evidence, settings=None):
        """The check's output for ``question`` answered ``answer`` from ``evidence`` (cited to the items that hold it)
        under ``settings``, every answer scoring 0.5, over the knob."""
        state = self.subject_state(question, answer, evidence)
        state["settings"] = {**state["settings"], **(settings or {})}
        return check_answer(state, self.runtime(ctx, self.EVEN))

    @pytest.mark.parametrize("question, answer, evidence, settings", [
        ("What is the second largest global producer of soybean?", "Brazil", [SOYBEAN], {}),  # the word asked
        ("What is the smallest of the top ten producers of soybean?", "Brazil", [RANKED], {}),  # both words said
        ("What is the second smallest global producer of soybean?", "Brazil", [SOYBEAN, RANKED], {}),  # one says it
        ("Who is the second best producer of soybean?", "Brazil", [SOYBEAN], {}),  # no opposite said
        ("Who was born first, José Echegaray or P. J. O'Rourke?", "José Echegaray", [ECHEGARAY], {}),  # a choice
        ("Is Mars larger than Earth?", "No", [MARS], {}),  # a bare verdict: the opposite is what it is answered from
        ("What is the second smallest global producer of soybean?", "Brazil", [SOYBEAN], {"multi_hop": True}),
        ("What is the second smallest global producer of soybean?", "Brazil", [SOYBEAN], {"abstain_threshold": 0.0}),
    ])
    def test_an_answer_a_passage_says_the_word_asked_of_or_no_opposite_is_left_to_the_score(self, ctx, question, answer,
                                                                                              evidence, settings):
        self.assert_ruled(self.checked_evenly(ctx, question, answer, evidence, settings), "opposite", None, answer)

    NEW_FRANCE = item(1, "Huguenot", "The French crown's refusal to allow non-Catholics to settle in New France may "
                      "help to explain that colony's slow rate of population growth.")
    SOCIAL_CHARTER = item(2, "European Union law", "The Social Charter was adopted in 1989 by every member state but "
                          "the United Kingdom.")
    OPTED_OUT = item(3, "European Union law", "The United Kingdom did not adopt the Social Charter until 1997.")
    SONG = item(4, "Don't Give Up on Me", "The song was written by Dan Penn, Carson Whitsett and Hoy Lindsey.")
    NEPTUNE = item(5, "Neptune", "Being composed primarily of gases and liquids, it has no well-defined solid surface.")

    @pytest.mark.parametrize("question, answer, evidence, word", [
        # SQuAD 2.0's unanswerable questions deny what their paragraph says (session 83)
        ("Who did not adopt the Social Charter?", "every member state", [SOCIAL_CHARTER], "not"),
        ("What persons were never allowed to settle in New France?", "non-Catholics", [NEW_FRANCE], "never"),
        ("Which member state didn\u2019t adopt the Social Charter in 1989?", "every member state", [SOCIAL_CHARTER],
         "didn\u2019t"),
    ])
    def test_an_answer_to_a_denial_held_only_by_passages_that_deny_nothing_is_withheld_whatever_its_score(
            self, ctx, question, answer, evidence, word):
        reason = f"an answer to a question that says \u201c{word}\u201d, held only by passages that deny nothing"
        self.assert_ruled(self.checked_evenly(ctx, question, answer, evidence), "negation", reason, answer)

    @pytest.mark.parametrize("question, answer, evidence, settings", [
        ("Who did not adopt the Social Charter until 1997?", "The United Kingdom", [OPTED_OUT], {}),  # it says "not"
        ("Who did not adopt the Social Charter?", "The United Kingdom", [SOCIAL_CHARTER, OPTED_OUT], {}),  # one does
        ("Who wrote the song Don't Give Up on Me?", "Dan Penn", [SONG], {}),  # the title denies: it is the song's name
        # found trying the chat (session 83): the passage denies with "no", which a question alone is not read by
        ("Which planet does not have a solid surface?", "Neptune", [NEPTUNE], {}),
        ("Who founded the not-for-profit outlet?", "every member state", [SOCIAL_CHARTER], {}),  # a compound
        ("Did the United Kingdom not adopt the Social Charter?", "Yes", [SOCIAL_CHARTER], {}),  # a bare verdict
        ("Who adopted the Social Charter?", "every member state", [SOCIAL_CHARTER], {}),  # nothing denied
        ("Who did not adopt the Social Charter?", "every member state", [SOCIAL_CHARTER], {"multi_hop": True}),
        ("Who did not adopt the Social Charter?", "every member state", [SOCIAL_CHARTER], {"abstain_threshold": 0.0}),
    ])
    def test_an_answer_to_a_denial_a_passage_also_denies_or_no_denial_is_left_to_the_score(self, ctx, question, answer,
                                                                                          evidence, settings):
        self.assert_ruled(self.checked_evenly(ctx, question, answer, evidence, settings), "negation", None, answer)

    NILE = item(1, "Nile", "At 7,088 kilometers (4,404 mi) long, it is the longest river in the world, although the "
                "volume of water it carries is much smaller than other major rivers such as the Amazon.")
    NILE_AFRICA = item(1, "Nile", "It is the longest river in Africa.")
    AMAZON = item(2, "Amazon River", "It is the longest river in the world, by some measurements.")
    SAHARA = item(1, "Sahara", "It is the largest hot desert in the world.")
    ATLANTIC = item(1, "Atlantic Ocean", "The Atlantic Ocean is the second largest of the world's five oceans.")

    @pytest.mark.parametrize("question, answer, evidence, reason", [
        ("Is the Amazon longer than the Nile?", "Yes", [NILE],
         "contradicted by the passages, which call the Nile the longest, and the question asks whether the Amazon is "
         "longer than the Nile"),
        ("Is the Nile longer than the Amazon?", "No", [NILE],
         "contradicted by the passages, which call the Nile the longest, and the question asks whether the Nile is "
         "longer than the Amazon"),
        # a passage that ranks it below the other, with the superlative a passage says for "bigger"
        ("Is Saturn bigger than Jupiter?", "Yes, Saturn is bigger than Jupiter.", [SATURN],
         "contradicted by the passages, which rank Saturn second largest, after Jupiter, and the question asks whether "
         "Saturn is bigger than Jupiter"),
        ("Is China more populous than India?", "Yes", [CHINA],
         "contradicted by the passages, which rank China second-most populous, after India, and the question asks "
         "whether China is more populous than India"),
    ])
    def test_a_verdict_the_passages_superlative_contradicts_is_withheld_whatever_its_score(self, ctx, question, answer,
                                                                                           evidence, reason):
        """Found trying the chat (session 73): "Is the Amazon longer than the Nile?" was answered "Yes", uncited, and given
        at 68%, with the Nile's passage "it is the longest river in the world" in the prompt."""
        out = check_answer(self.subject_state(question, answer, evidence), self.runtime(ctx, self.EVEN))
        check = out["trace"]["answerability"]
        assert check["decision"] == "abstain" and check["by"] == "compared" and check["reason"] == reason
        assert check["withheld_answer"] == answer and out["answer"] == ABSTENTION

    @pytest.mark.parametrize("question, answer, evidence, threshold", [
        ("Is the Nile longer than the Amazon?", "Yes", [NILE], 0.1),  # the verdict the passage gives
        ("Is the Amazon longer than the Nile?", "No", [NILE], 0.1),
        ("Is the Amazon longer than the Nile?", "Yes", [NILE_AFRICA], 0.1),  # the longest of a part of the world
        ("Is the Sahara larger than Antarctica?", "Yes", [SAHARA], 0.1),  # "hot desert": a kind of its own
        ("Is the Sahara larger than Antarctica?", "No", [SAHARA], 0.1),
        ("Is the Atlantic Ocean larger than the Pacific Ocean?", "Yes", [ATLANTIC], 0.1),  # second, after none named
        ("Is the Amazon longer than the Nile?", "Yes", [NILE, AMAZON], 0.1),  # both called the longest: no reading
        ("Is the Amazon longer than the Nile?", "Yes", [NILE], 0.0),  # the knob at 0
        ("Is the Amazon longer than the Nile?", "The Nile", [NILE], 0.1),  # no verdict
        ("Is the Amazon other than the Nile?", "Yes", [NILE], 0.1),  # no comparative
    ])
    def test_a_verdict_the_passages_do_not_contradict_is_left_to_the_score(self, ctx, question, answer, evidence,
                                                                          threshold):
        out = check_answer(self.subject_state(question, answer, evidence, threshold), self.runtime(ctx, self.EVEN))
        assert out["trace"]["answerability"]["by"] == "score"

    MELBOURNE = item(1, "Melbourne", "Melbourne is the capital and most populous city of the Australian state of Victoria "
                                     "and the second-most populous city in Australia.")
    TORONTO = item(2, "Toronto", "Toronto is the capital city of the Canadian province of Ontario.")
    OTTAWA = item(3, "Ottawa", "Ottawa is the capital city of Canada, in the province of Ontario.")
    MUMBAI = item(4, "Mumbai", "It is the financial capital and the most populous city proper of India, with an estimated "
                               "population of 12.5 million (1.25 crore).")
    ABIDJAN = item(5, "Abidjan", "Abidjan is the largest city and the former capital of Ivory Coast.")
    ABU_DHABI = item(6, "Abu Dhabi", "Abu Dhabi is the capital city of the United Arab Emirates (UAE), and of the Emirate "
                                     "of Abu Dhabi.")
    FLORIDA = item(7, "Florida", "Florida's other major population centers include Tampa Bay, Orlando, Cape Coral, and "
                                 "the state capital of Tallahassee.")
    PRAGUE = item(8, "Prague", "Prague is the capital and largest city of the Czech Republic and the historical capital "
                               "of Bohemia.")
    ZURICH = item(9, "Zurich", "Zurich is the largest city in Switzerland and the capital of the canton of Zurich.")
    MILAN = item(11, "Milan", "Milan is the regional capital of Lombardy, in northern Italy.")
    CHICAGO = item(12, "Chicago", "Chicago is the most populous city in the U.S. state of Illinois and in the Midwestern "
                                  "United States.")
    MICHIGAN = item(13, "Michigan", "Detroit is its largest city; Lansing lies inland, on the Grand River.")
    SEVILLE = item(16, "Seville", "Seville is the capital and largest city of the Spanish autonomous community of "
                                  "Andalusia and the province of Seville.")
    BOSTON = item(17, "Boston", "Boston is the capital and most populous city of the U.S. state of Massachusetts. "
                                "(Capital and largest city in Massachusetts, United States)")
    CAPE_TOWN = item(21, "Cape Town", "Cape Town is the legislative capital of South Africa.")
    CANADA = item(10, "Canada", "Its capital is Ottawa and its three largest metropolitan areas are Toronto, Montreal, "
                                "and Vancouver.")

    @pytest.mark.parametrize("question, answer, evidence, reason", [
        ("What is the capital of Australia?", "Melbourne", [MELBOURNE],
         "the capital of Victoria by the passages that hold it, and the question asks the capital of Australia"),
        ("What's the capital city of Canada?", "Toronto", [TORONTO, OTTAWA],
         "the capital of Ontario by the passages that hold it, and the question asks the capital of Canada"),
        # session 70: any other place's capital, and a capital a word makes another than the one asked
        ("What is the capital of Ontario?", "Ottawa", [TORONTO, OTTAWA],
         "the capital of Canada by the passages that hold it, and the question asks the capital of Ontario"),
        ("What is the capital of India?", "Mumbai", [MUMBAI],
         "the financial capital of India by the passages that hold it, and the question asks the capital of India"),
        ("What is the capital of Switzerland?", "Zurich", [ZURICH],  # a canton named as its capital
         "the capital of Zurich by the passages that hold it, and the question asks the capital of Switzerland"),
        ("What is the capital of Ivory Coast?", "Abidjan", [ABIDJAN],
         "the former capital of Ivory Coast by the passages that hold it, and the question asks the capital of Ivory Coast"),
        # session 71: "Its capital is Ottawa", in Canada's passage, is Canada's capital
        ("What is the capital of Alberta?", "Ottawa", [CANADA],
         "the capital of Canada by the passages that hold it, and the question asks the capital of Alberta"),
        ("What is the capital of Italy?", "Milan", [MILAN],  # a regional capital is its region's
         "the capital of Lombardy by the passages that hold it, and the question asks the capital of Italy"),
        # session 71: "Chicago" for Illinois, cited to its own passage, which calls it no capital
        # session 72: a part's kind after any words ("the Spanish autonomous community of Andalusia")
        ("What is the capital of Spain?", "Seville", [SEVILLE],
         "the capital of Andalusia by the passages that hold it, and the question asks the capital of Spain"),
        ("What is the capital of Maine?", "Boston", [BOSTON],  # a description's "(Capital ... in Massachusetts"
         "the capital of Massachusetts by the passages that hold it, and the question asks the capital of Maine"),
        # session 72: "South Africa" is no name of South Carolina
        ("What is the capital of South Carolina?", "Cape Town", [CAPE_TOWN],
         "the capital of South Africa by the passages that hold it, and the question asks the capital of South Carolina"),
        ("What is the capital of Newfoundland and Labrador?", "Port of Spain",  # "and" names no place
         [item(22, "Port of Spain", "Port of Spain is the capital of Trinidad and Tobago.")],
         "the capital of Trinidad and Tobago by the passages that hold it, and the question asks the capital of "
         "Newfoundland and Labrador"),
        ("What is the capital of Illinois?", "Chicago", [CHICAGO], "the most populous city, not called a capital, by "
                                                                   "the passages that hold it, and the question asks "
                                                                   "the capital of Illinois"),
    ])
    def test_a_states_capital_given_for_another_place_is_withheld_whatever_its_score(self, ctx, question, answer,
                                                                                     evidence, reason):
        """Found trying the API (session 69): "What is the capital of Australia?" was answered "Melbourne", cited to
        "the capital and most populous city of the Australian state of Victoria", and given at 81%."""
        out = check_answer(self.subject_state(question, answer, evidence), self.runtime(ctx, self.EVEN))
        check = out["trace"]["answerability"]
        assert check["decision"] == "abstain" and check["by"] == "capital" and check["reason"] == reason
        assert check["withheld_answer"] == answer and out["answer"] == ABSTENTION

    @pytest.mark.parametrize("question, answer, evidence, threshold", [
        ("What is the capital of Victoria?", "Melbourne", [MELBOURNE], 0.1),  # the state asked
        ("What is the capital of Ontario?", "Toronto", [TORONTO, OTTAWA], 0.1),
        ("What is the capital of Canada?", "Ottawa", [TORONTO, OTTAWA], 0.1),  # "capital city of Canada"
        ("Of which state is Melbourne the capital?", "Victoria", [MELBOURNE], 0.1),  # no place's capital asked
        ("What is the capital of Australia?", "Melbourne", [MELBOURNE], 0.0),  # the knob at 0
        ("What is the capital of the UAE?", "Abu Dhabi", [ABU_DHABI], 0.1),  # the place as the passage writes it after
        ("What is the capital of Florida?", "Tallahassee", [FLORIDA], 0.1),  # "capital of Tallahassee": of the answer
        ("What is the capital of the Czech Republic?", "Prague", [PRAGUE], 0.1),  # the capital, and a historical one
        ("What is the capital of Bohemia?", "Prague", [PRAGUE], 0.1),  # historically the capital: not another's
        ("What is the capital of Canada?", "Ottawa", [CANADA], 0.1),  # "Its capital", in the passage of the place asked
        ("What is the capital of Lombardy?", "Milan", [MILAN], 0.1),  # session 71: withheld as "the regional capital"
        ("What is the capital of Michigan?", "Lansing", [MICHIGAN], 0.1),  # a passage on the state, not on the answer
        ("What is the capital of Queensland?", "Brisbane",  # the largest city, and called the capital
         [item(14, "Brisbane", "Brisbane is the capital and largest city of the Australian state of Queensland.")], 0.1),
        # session 72: read as "the capital of U" and "of Spanish" before
        ("What is the capital of California?", "Sacramento",
         [item(15, "Sacramento", "Sacramento is the capital city of the U.S. state of California.")], 0.1),
        ("What is the capital of Andalusia?", "Seville", [SEVILLE], 0.1),
        ("What is the capital of Mexico?", "Mexico City",  # "of Mexico" is no capital "of the answer itself"
         [item(23, "Mexico City", "Mexico City is the capital and largest city of Mexico.")], 0.1),
        ("What is the capital of South Korea?", "Seoul",  # "korea" names it, whatever the rest of the name
         [item(18, "Seoul", "Seoul is the capital of the Republic of Korea.")], 0.1),
        ("What is the capital of the United States?", "Washington, D.C.",  # a name of shared words only, whole
         [item(19, "Washington, D.C.", "Washington, D.C. is the capital city of the United States.")], 0.1),
        ("What is the capital of Newfoundland and Labrador?", "St. John's",  # "and" names nothing
         [item(20, "St. John's", "St. John's is the capital of Newfoundland and Labrador.")], 0.1),
    ])
    def test_a_capital_of_the_place_asked_is_left_to_the_score(self, ctx, question, answer, evidence, threshold):
        out = check_answer(self.subject_state(question, answer, evidence, threshold), self.runtime(ctx, self.EVEN))
        assert out["trace"]["answerability"]["by"] == "score" and out["trace"]["answerability"]["decision"] == "answer"

    PROVINCES = {"Ontario": "It is home to the nation's capital, Ottawa, and its most populous city, Toronto, which is "
                            "Ontario's provincial capital. (Province of Canada)",
                 "Canada": "Canada is a country in North America; Ottawa is the nation's capital. (Country in North America)",
                 "Texas": "Austin is the state capital of Texas; Houston is its largest city. (U.S. state)",
                 "Quebec": "Quebec is one of the thirteen provinces and territories of Canada. (Province of Canada)",
                 "Montreal": "It lies east of the national capital, Ottawa, and southwest of the provincial capital, "
                             "Quebec City."}

    @pytest.mark.parametrize("question, answer, reason", [
        ("What is the capital of Ontario?", "Ottawa",  # found trying the API (session 71), given
         "the nation's capital by the passages that hold it, and the question asks the capital of Ontario"),
        ("What is the capital of Canada?", "Ottawa", None),  # a country: the nation's capital is its own
        ("What is the capital of Ontario?", "Toronto", None),  # the passage calls it the provincial capital
        ("What is the capital of Texas?", "Austin", None),
        # found trying the API (session 71): "Ottawa" for Quebec, from Montreal's "the national capital, Ottawa"
        ("What is the capital of Quebec?", "Ottawa",
         "the nation's capital by the passages that hold it, and the question asks the capital of Quebec"),
        ("What is the capital of Quebec?", "Quebec City", None),  # "the provincial capital, Quebec City"
    ])
    def test_a_national_capital_given_for_a_province_is_withheld(self, ctx, question, answer, reason):
        """Found trying the API (session 71): "What is the capital of Ontario?" was answered "Ottawa", cited to
        Ontario's "It is home to the nation's capital, Ottawa" and given. The index's description of the place
        asked ("(Province of Canada)") says it is a part of a country, whose capital a national one is not."""
        self.assert_ruled(self.checked_on_summaries(ctx, question, answer, self.PROVINCES), "capital", reason, answer)

    def test_a_national_capital_needs_the_index_to_say_the_place_is_a_province(self):
        """A replay of recorded answers has no index (:func:`eval.rescore.ruled`): a national capital is then read
        as a capital it does not say of what, and the answer is left to the score."""
        ontario = self.item(1, "Ontario", self.PROVINCES["Ontario"])
        checking = sys.modules["nodes.check_answer"]
        assert checking.capital_elsewhere("What is the capital of Ontario?", "Ottawa", [ontario]) is None

    ARTICLES = {
        "Tanzania": ["Tanzania is a country in East Africa within the African Great Lakes region. (Country in East Africa)"],
        "Dar es Salaam": ["Dar es Salaam is the largest city and financial hub of Tanzania and capital of the Dar es "
                          "Salaam Region. (Largest city in Tanzania and capital of Dar es Salaam Region)",
                          "It is located on the Swahili coast."],
        "Baltimore": ["Baltimore is the most populous city in the U.S. state of Maryland. (Largest city in Maryland, "
                      "United States)", "Baltimore was designated as an independent city by the Constitution of "
                      "Maryland in 1851."],
        "St. Louis": ["St. Louis is an independent city in the U.S. state of Missouri. (Independent city in Missouri, "
                      "United States)", "It is the largest metropolitan area in Missouri and the second-largest in "
                      "Illinois."],
        "Dodoma": ["Dodoma is the capital city of Tanzania.", "It is the largest city in the Dodoma Region."],
        "Seville": ["Seville is the largest city of Andalusia.", "It is the capital of the Spanish autonomous community "
                    "of Andalusia."],
        "Ottawa": ["Ottawa is the capital city of Canada. (Capital city of Canada)",
                   "Ottawa forms the core of the National Capital Region."],
        "Karachi": ["Karachi is the largest city and the former capital of Pakistan.",
                    "Karachi formerly served as the country's capital from 1947 to 1959."],
        "Yangon": ["Yangon was the capital city of Myanmar until 2005."],
        "Saint Petersburg": ["Saint Petersburg is the second-largest city in Russia, after Moscow, the nation's capital."],
        "Osaka": ["It is the capital of and most populous city in Osaka Prefecture."],
        "Canberra": ["Canberra is the capital city of Australia.", "It was once a sheep station, selected as the "
                     "capital in 1908."],
        "Wellington": ["Wellington, once a small port, is now the capital of New Zealand and was its largest city until "
                       "1900."],
        "Montreal": ["Montreal is the largest city in Quebec.", "Montreal lies east of the national capital, Ottawa, "
                     "and southwest of the provincial capital, Quebec City."],
    }

    @pytest.mark.parametrize("question, answer, read, reason", [
        # found trying the API (session 72): given, cited to nothing (the Easy tier read Tanzania's passage only)
        ("What is the capital of Tanzania?", "Dar es Salaam", ["Tanzania#0"],
         "the capital of Dar es Salaam Region by its own article in the knowledge base, and the question asks the "
         "capital of Tanzania"),
        ("What is the capital of Maryland?", "Baltimore", ["Baltimore#1"],  # held by a passage that names no capital
         "the most populous city, not called a capital, by its own article in the knowledge base, and the question "
         "asks the capital of Maryland"),
        ("What is the capital of Missouri?", "St. Louis", ["St. Louis#0"],
         "the most populous city, not called a capital, by its own article in the knowledge base, and the question "
         "asks the capital of Missouri"),
        ("What is the capital of Alberta?", "Ottawa", ["Ottawa#1"],  # "Capital" in a name calls it no capital
         "the capital of Canada by its own article in the knowledge base, and the question asks the capital of Alberta"),
        ("What is the capital of Manitoba?", "Montreal", ["Montreal#1"],  # each capital there is another city's
         "the most populous city, not called a capital, by its own article in the knowledge base, and the question asks "
         "the capital of Manitoba"),
        ("What is the capital of Pakistan?", "Karachi", ["Karachi#0"],  # its article may read as the capital: the
         # evidence's "former capital" still withholds it (the article overrides only "the largest city")
         "the former capital of Pakistan by the passages that hold it, and the question asks the capital of Pakistan"),
        # session 72 (§4): a former capital, and one said of the city named before it, read as such
        ("What is the capital of Pakistan?", "Karachi", ["Tanzania#0"],  # "formerly served as the country's capital"
         "the former capital of Pakistan by its own article in the knowledge base, and the question asks the capital "
         "of Pakistan"),
        ("What is the capital of Myanmar?", "Yangon", ["Tanzania#0"],  # "... until 2005"
         "the former capital of Myanmar by its own article in the knowledge base, and the question asks the capital of "
         "Myanmar"),
        ("What is the capital of Russia?", "Saint Petersburg", ["Tanzania#0"],  # "after Moscow, the nation's capital"
         "the most populous city, not called a capital, by its own article in the knowledge base, and the question "
         "asks the capital of Russia"),
        ("What is the capital of Japan?", "Osaka", ["Tanzania#0"],
         "the capital of Osaka Prefecture by its own article in the knowledge base, and the question asks the capital "
         "of Japan"),
        ("What is the capital of Australia?", "Canberra", ["Tanzania#0"], None),  # "once" in another sentence
        ("What is the capital of New Zealand?", "Wellington", ["Tanzania#0"], None),  # "once", "until" far from it
        ("What is the capital of Tanzania?", "Dodoma", ["Tanzania#0"], None),  # its article calls it the capital
        ("What is the capital of Andalusia?", "Seville", ["Seville#0"], None),  # its article's second passage does
        ("What is the capital of Maryland?", "Baltimore",  # a passage that holds it calls it the capital
         ["Baltimore#1", "Tanzania#0"], None),
    ])
    def test_a_capital_its_own_article_calls_another_places_is_withheld(self, ctx, question, answer, read, reason):
        """Found trying the API (session 72): "What is the capital of Tanzania?" was answered "Dar es Salaam", cited
        to nothing, and given at 62%; "Baltimore" for Maryland's at 63%, "St. Louis" for Missouri's at 40%. The
        knowledge base holds no article on either state or on their capitals, but it holds the answers' own, which
        call them no capital of the place asked. ``read``: the passages given as evidence (title#number)."""
        articles = dict(self.ARTICLES)
        if len(read) == 2:  # a passage of another document calls the answer the capital asked
            articles["Tanzania"] = ["Baltimore, the capital of Maryland, lies on the Patapsco River."]
        self.assert_ruled(self.checked_on_articles(ctx, question, answer, articles, read), "capital", reason, answer)

    SUMMITS = {"Mount Kilimanjaro": ["Mount Kilimanjaro is a large dormant volcano in Tanzania. (Mountain in Tanzania, "
                                     "highest in Africa)",
                                     "It is the highest mountain in Africa and the highest free-standing mountain above "
                                     "sea level in the world."],
               "Aconcagua": ["Aconcagua is a mountain in the Principal Cordillera of the Andes range, located in Mendoza "
                             "Province, Argentina. (Highest mountain in the Americas)",
                             "With a summit elevation of 6,967.15 metres, it is the highest mountain in the Americas, the "
                             "highest outside Asia, and the highest peak in both the Western and Southern Hemispheres."],
               "Denali": ["Located in the Alaska Range in the interior of the U.S. state of Alaska, Denali is the "
                          "centerpiece of Denali National Park and Preserve.",
                          "Denali is the highest mountain peak in North America, with a summit elevation of 20,310 "
                          "feet (6,190 m) above sea level."]}

    @pytest.mark.parametrize("question, answer, reason", [
        ("What is the highest mountain in Peru?", "Aconcagua", "called the highest only in the Americas by the passages "
                                                              "that hold it, and the question asks for the highest"),
        ("What is the highest mountain in Chile?", "Aconcagua", "called the highest only in the Americas by the "
                                                               "passages that hold it, and the question asks for the "
                                                               "highest"),
        ("What is the highest mountain in Argentina?", "Aconcagua", None),  # its article: "Mendoza Province, Argentina"
        ("What is the highest mountain in Tanzania?", "Mount Kilimanjaro", None),  # "a large dormant volcano in Tanzania"
        ("What is the highest mountain in the United States?", "Denali", None),  # "the U.S. state of Alaska"
        ("What is the highest mountain in Canada?", "Denali", "called the highest only in North America by the "
                                                             "passages that hold it, and the question asks for the "
                                                             "highest"),
    ])
    def test_the_first_of_another_place_withholds_unless_the_answers_article_puts_it_in_the_place_asked(
            self, ctx, question, answer, reason):
        """Session 89: "the highest mountain in Africa" is no reason to withhold Kilimanjaro for Tanzania, which its
        own article puts in Tanzania; the first form, reading the evidence alone, withheld it (and Aconcagua for
        Argentina). A place the article writes with its initials is named ("the U.S. state of Alaska": seen in the
        development run, Denali withheld for the United States). Only the second passage of each article is the
        evidence."""
        out = self.checked_on_articles(ctx, question, answer, self.SUMMITS, [f"{answer}#1"])
        self.assert_ruled(out, "rank", reason, answer)

    LAKES = {"Lake Van": ["Lake Van is the largest lake in Turkey, located in the far east of the country.",
                          "Lake Van is a saline soda lake, fed by numerous small streams from the surrounding mountains."],
             "Loch Lomond": ["Loch Lomond is a freshwater loch which crosses the Highland Boundary Fault, often "
                             "considered the boundary between the lowlands of Central Scotland and the Highlands.",
                             "Loch Lomond is the largest lake in Great Britain by surface area."],
             "Lake Victoria": ["Lake Victoria is one of the African Great Lakes.",
                               "Lake Victoria is the largest lake in Africa by area."],
             "Uganda": ["Uganda shares Lake Victoria with Kenya and Tanzania."],
             "Christianity": ["Christianity is an Abrahamic monotheistic religion."]}

    @pytest.mark.parametrize("question, answer, read, reason", [
        ("What is the largest lake in Scotland?", "Lake Van", ["Lake Van#1"],
         "put in Scotland neither by its own article nor by a passage that holds it, and the question asks for the "
         "largest"),
        ("What is the largest lake in Turkey?", "Lake Van", ["Lake Van#1"], None),  # its article names Turkey
        ("What is the largest lake in Scotland?", "Loch Lomond", ["Loch Lomond#1"], None),  # and Scotland
        ("What is the largest lake?", "Lake Van", ["Lake Van#1"], None),  # no place asked
        ("What is the largest lake in Uganda?", "Lake Victoria", ["Uganda#0"], None),  # the passage holding it does
        ("What is the largest lake in Scotland?", "Loch Ness", ["Uganda#0"], None),  # no article on it
        # a first of no kind of thing that lies somewhere (LOCATED_KINDS): its article need not name the place
        ("What is the most popular religion in Sweden?", "Christianity", ["Christianity#0"], None),
    ])
    def test_an_answer_that_neither_its_article_nor_its_passages_place_in_the_place_asked_is_withheld(
            self, ctx, question, answer, read, reason):
        """Session 90: "What is the largest lake in Scotland?" was answered "Lake Van" in the chat, from a passage
        that says nothing of its size or of Scotland; its own article says "the largest lake in Turkey". Where the
        question asks the first of a place, an answer whose own article is in the knowledge base is withheld when
        neither that article nor a passage that holds the answer names the place."""
        out = self.checked_on_articles(ctx, question, answer, self.LAKES, read)
        self.assert_ruled(out, "rank", reason, answer)

    def test_an_answers_own_article_is_read_only_where_it_is_a_wikipedia_summary(self, ctx):
        """A user's file titled as the answer is no article on it: its words are the user's."""
        out = self.checked_on_articles(ctx, "What is the capital of Tanzania?", "Dar es Salaam", self.ARTICLES,
                                       ["Tanzania#0"], source="files")
        self.assert_ruled(out, "capital", None, "Dar es Salaam")
        checking = sys.modules["nodes.check_answer"]  # and without an index (a replay of records), nothing is read
        assert checking.capital_elsewhere("What is the capital of Tanzania?", "Dar es Salaam", []) is None

    def checked_on_articles(self, ctx, question, answer, articles, read, source="wikipedia"):
        """``question`` answered ``answer``, checked over an index of ``articles`` (title to its passages' texts,
        from ``source``), the passages ``read`` (title#number) its evidence."""
        from components.passages import Passage

        passages = [Passage(id=f"wiki/{title}#p0s{n}", title=title, text=text,
                            metadata={"doc_id": f"wiki/{title}", "source": source, "sentence": n})
                    for title, texts in articles.items() for n, text in enumerate(texts)]
        shown = [p for p in passages if f"{p.title}#{p.id.rsplit('s', 1)[1]}" in read]
        return self.checked_over(ctx, question, answer, passages, shown)

    def checked_on_summaries(self, ctx, question, answer, texts, more=(), trace=None):
        """``question`` answered ``answer``, checked over an index of Wikipedia summaries' passages (``texts``: title
        to text; ``more`` passages beside them), every passage of it the evidence; ``trace``, what the steps before
        wrote."""
        from components.passages import Passage

        passages = [Passage(id=f"wiki/{title}#p0s0", title=title, text=text,
                            metadata={"doc_id": f"wiki/{title}", "source": "wikipedia"}) for title, text in texts.items()]
        passages += list(more)
        return self.checked_over(ctx, question, answer, passages, passages, trace)

    def checked_over(self, ctx, question, answer, passages, shown, trace=None):
        """``question`` answered ``answer``, checked over an index of ``passages``, those ``shown`` its evidence;
        ``trace``, what the steps before wrote."""
        import numpy as np

        from components.index import PassageIndex

        index = PassageIndex("e", 2)
        index.add(passages, np.eye(2, dtype=np.float32)[[i % 2 for i in range(len(passages))]])
        evidence = [{"n": n, "passage_id": p.id, "title": p.title, "text": p.text} for n, p in enumerate(shown, 1)]
        state = {**self.subject_state(question, answer, evidence), **({"trace": trace} if trace else {})}
        return check_answer(state, Runtime(context=replace(ctx, answerability=self.EVEN, index=index)))

    @staticmethod
    def assert_ruled(out, by, reason, answer):
        """The check withheld ``answer`` by the rule ``by`` for ``reason``; with no reason, the score gave it."""
        check = out["trace"]["answerability"]
        if reason is None:
            assert check["by"] == "score" and check["decision"] == "answer"
        else:
            assert check["decision"] == "abstain" and check["by"] == by and check["reason"] == reason
            assert check["withheld_answer"] == answer and out["answer"] == ABSTENTION

    @pytest.mark.parametrize("question, answer, reason", [
        ("Who is the CEO of Apple?", "Steve Jobs", "someone who died in 2011, by the knowledge base, and the question "
                                                   "asks who is the CEO now"),
        ("Who is the current president of France?", "François Mitterrand",
         "someone whose time as president ended in 1995, by the knowledge base, and the question asks who is the "
         "president now"),
        ("Who's France's president?", "Francois Mitterrand",  # a title up to its accents is no title: left alone
         None),
        ("Who is the president of Brazil?", "Getúlio Vargas",  # a closed term written as years
         "someone whose time as president ended in 1954, by the knowledge base, and the question asks who is the "
         "president now"),
        ("Who was the president of France?", "François Mitterrand", None),  # asks of the past
        ("Who is the first president of France?", "François Mitterrand", None),
        ("Who is the longest serving president of France?", "François Mitterrand", None),
        ("Who is the president of France?", "Emmanuel Macron", None),  # no closed term: in office, for all it says
        ("Who is the author of Hamlet?", "Steve Jobs", None),  # no office asked
        ("Who is the CEO of Apple?", "Steven Jobs", None),  # a benchmark's document, not the summaries'
        ("Who is the king of Spain?", "Philip II",  # titled with the country the question names
         "someone whose time as king ended in 1598, by the knowledge base, and the question asks who is the king now"),
    ])
    def test_an_office_asked_of_now_answered_with_someone_whose_time_is_over_is_withheld(self, ctx, question, answer,
                                                                                         reason):
        """Found trying the chat (session 68): "Who is the president of France?" was answered "François Mitterrand",
        cited to "(President of France from 1981 to 1995)", given at 72%; "Who is the CEO of Apple?" "Steve Jobs",
        whose description spells his death, at 69%. The rule reads the first passage of the document titled as the
        answer."""
        from components.passages import Passage

        texts = {"Steve Jobs": "Steven Paul Jobs was an American businessman. (American businessman and inventor; born "
                               "1955, died 2011, aged 55 or 56)",
                 "François Mitterrand": "François Mitterrand was President of France from 1981 to 1995. (President of "
                                        "France from 1981 to 1995)",
                 "Emmanuel Macron": "Emmanuel Macron is a French politician. (President of France since 2017)",
                 "Getúlio Vargas": "Getúlio Vargas served as president of Brazil. (President of Brazil (1930–1945; "
                                   "1951–1954))",
                 "Philip II of Spain": "Philip II was King of Spain. (King of Spain from 1556 to 1598)"}
        benchmark = Passage(id="squad/Steven_Jobs#p0s0", title="Steven Jobs", text=texts["Steve Jobs"],
                            metadata={"source": "squad"})  # a benchmark's passage: no description
        self.assert_ruled(self.checked_on_summaries(ctx, question, answer, texts, [benchmark]), "past", reason, answer)

    @pytest.mark.parametrize("question, answer, reason", [
        ("How many people live in Germany?", "613,111",
         "held only by passages of \u201cStuttgart\u201d, and the question asks the population of Germany"),
        ("What is the population of Germany?", "613,111",
         "held only by passages of \u201cStuttgart\u201d, and the question asks the population of Germany"),
        ("How many people live in Germany?", "84 million", None),  # held by Germany's own passage
        ("How many people live in Stuttgart?", "613,111", None),  # the place asked
        ("How many people live in Bavaria?", "613,111", None),  # no document titled so: nothing to say
        ("How many people live in the sixth largest city?", "613,111", None),  # no place named
        ("How many cities does Germany have?", "613,111", None),  # no population asked
    ])
    def test_a_population_held_only_by_another_places_passages_is_withheld(self, ctx, question, answer, reason):
        """Found trying the chat (session 69): "How many people live in Germany?" was answered "613,111", cited to
        Stuttgart's "sixth largest city in Germany" (Germany's own passage ranked second), and given."""
        texts = {"Germany": "Germany has a population of over 84 million.",
                 "Stuttgart": "Stuttgart has a population of 613,111 as of 2023, making it the sixth largest city in Germany."}
        self.assert_ruled(self.checked_on_summaries(ctx, question, answer, texts), "population", reason, answer)

    def test_the_place_document_retrieval_found_is_not_looked_up_again(self, ctx, monkeypatch):
        """With the setting ``place_first``, retrieval found the document titled as the place (its trace's
        ``place_document``); the check reads it there, not in the index's titles again."""
        checking = sys.modules["nodes.check_answer"]  # the package's check_answer is the node function

        def looked_up(*args, **kwargs):
            raise AssertionError("the titles were looked up again")

        monkeypatch.setattr(checking, "titled_document", looked_up)
        texts = {"Germany": "Germany has a population of over 84 million.",
                 "Stuttgart": "Stuttgart has a population of 613,111 as of 2023, making it the sixth largest city in Germany."}
        found = {"place_document": {"doc_id": "wiki/Germany", "title": "Germany"}}
        for answer, reason in (("613,111", "held only by passages of \u201cStuttgart\u201d, and the question asks the "
                                           "population of Germany"), ("84 million", None)):
            out = self.checked_on_summaries(ctx, "How many people live in Germany?", answer, texts, trace=found)
            self.assert_ruled(out, "population", reason, answer)

    KING = {"n": 1, "passage_id": "p1", "title": "Martin Luther King Jr.",
            "text": "Martin Luther King Jr. was a prominent leader of the civil rights movement until his assassination in 1968."}

    @pytest.mark.parametrize("question, answer, echo", [
        ("Where did Martin Luther King Jr. die?", "Cite", True),  # found trying the chat (session 68), given at 55%
        ("Where did Martin Luther King Jr. die?", "The evidence does not contain the answer.", True),
        ("Where did Martin Luther King Jr. die?", "Paris", True),  # the instructions' example, "Paris [2]"
        ("Where did Martin Luther King Jr. die?", "A name, a date, a number.", True),
        ("When was the leader assassinated?", "1968", False),  # held by the evidence
        ("How many movements did he lead?", "1", False),  # not a word of the instructions
        ("Which city did he die in, Paris or Memphis?", "Paris", False),  # the question's word
        ("What did he lead?", "civil rights movement", False),
    ])
    def test_an_answer_made_of_the_instructions_words_is_withheld(self, ctx, question, answer, echo):
        """Words of the answer prompt's instructions that neither the evidence nor the question has are no answer:
        the model echoed its instructions ("Cite", the example's "Paris") or refused in other words."""
        out = check_answer(self.subject_state(question, answer, [self.KING]), self.runtime(ctx, self.EVEN))
        check = out["trace"]["answerability"]
        if echo:
            assert check["decision"] == "abstain" and check["by"] == "echo" and check["withheld_answer"] == answer
            assert check["reason"] == "words of the prompt's instructions, which neither the evidence nor the question has"
        else:
            assert check["by"] == "score" and check["decision"] == "answer"

    def test_a_number_withheld_as_an_echo_is_told_as_a_number_no_passage_holds(self, ctx):
        """Found trying the API (session 71): "How many moons does Mars have?" was answered "2" and withheld, rightly
        (no passage mentions Mars's moons), but the chat said it "is words of the prompt's instructions", which a
        reader asking for a number cannot make sense of ("2" is the instructions' example, "Paris [2]")."""
        mars = {"n": 1, "passage_id": "p1", "title": "Mars", "text": "Mars is the fourth planet from the Sun."}
        out = check_answer(self.subject_state("How many moons does Mars have?", "2", [mars]), self.runtime(ctx, self.EVEN))
        check = out["trace"]["answerability"]
        assert check["decision"] == "abstain" and check["by"] == "echo" and check["withheld_answer"] == "2"
        assert check["reason"] == "a number that neither the evidence nor the question holds"

    def test_an_age_a_passage_holds_is_left_to_the_score(self, ctx):
        cited = {**self.OBAMA, "text": "He took office at 44 years old.", "score": 0.7, "metadata": {}}
        out = check_answer(self.age_state([cited]), self.runtime(ctx, self.SURE))
        assert out["trace"]["answerability"]["by"] == "score" and out["trace"]["answerability"]["decision"] == "answer"

    @pytest.mark.parametrize("threshold, settings", [(0.0, {}), (0.1, {"living_ages": False})])
    def test_the_age_rule_keeps_the_knob_s_never_and_its_setting(self, ctx, threshold, settings):
        out = check_answer(self.age_state([], threshold, **settings), self.runtime(ctx, self.SURE))
        assert out["trace"]["answerability"]["decision"] == "answer"

    def test_the_models_own_abstention_stays(self, ctx):
        out = check_answer(self.state(abstained=True), self.runtime(ctx, model()))
        assert out["trace"]["answerability"]["by"] == "model" and "withheld_answer" not in out["trace"]["answerability"]

    @pytest.mark.parametrize("m, evidence, reason", [(None, EVIDENCE, "no answerability model"),
                                                     (model(), [], "closed book")])
    def test_unchecked_answers_are_given_with_the_reason(self, ctx, m, evidence, reason):
        out = check_answer(self.state(evidence=evidence), self.runtime(ctx, m))
        check = out["trace"]["answerability"]
        assert check["decision"] == "answer" and check["by"] == "unchecked" and reason in check["reason"]

    def test_the_question_s_likelihood_is_a_feature_where_generate_read_it(self, ctx):
        m = model(features=("support", "question_logprob_min"), coef=(1.0, 1.0))
        state = self.state()
        unread = check_answer(state, self.runtime(ctx, m))["trace"]["answerability"]
        assert unread["by"] == "unchecked" and "question's likelihood" in unread["reason"]
        assert "question_logprob_min" not in unread["features"]
        state["steps"] = [{**self.STEP, "question_logprob": {"mean": -1.5, "min": -6.0, "tokens": 8}}]
        check = check_answer(state, self.runtime(ctx, m))["trace"]["answerability"]
        assert check["by"] == "score"
        assert check["features"]["question_logprob_mean"] == -1.5 and check["features"]["question_logprob_min"] == -6.0
        assert check["score"] == pytest.approx(m.score(check["features"]))

    def test_the_self_checks_ask_the_generator(self, ctx):
        m = model(features=("support", *SELF_CHECKS), coef=(1.0, 1.0, 1.0))
        check = check_answer(self.state(), self.runtime(ctx, m))["trace"]["answerability"]
        assert all(0.0 <= check["features"][name] <= 1.0 for name in SELF_CHECKS) and check["self_check_ms"] > 0

    @pytest.mark.parametrize("form", ["short", "as_written"])
    def test_a_sentence_answer_is_given_in_the_configured_form(self, ctx, form):
        sentence = "The capital of France is the city of Paris."
        state = self.state(threshold=0.0)
        state["steps"] = [{**self.STEP, "answer": sentence, "raw_output": sentence}]
        state.update(answer=sentence, settings={**state["settings"], "answer_form": form})
        out = check_answer(state, self.runtime(ctx, model()))
        given = "city of Paris" if form == "short" else sentence
        assert out.get("answer", sentence) == given and out["turns"][0]["answer"] == given
        assert out["turns"][0]["citations"] == [self.CITATION]  # cited as written
        assert out["trace"].get("written_answer") == (sentence if form == "short" else None)
        assert out["trace"]["answerability"]["features"]["answer_in_question"] > 0  # scored as written

    @pytest.mark.parametrize("form", ["short", "as_written"])
    def test_an_answer_is_given_with_its_numbers_as_its_evidence_writes_them(self, ctx, form):
        """Session 84: the model writes "4" where its passage says "four"; the answer is given as the passage
        writes it, cited and scored as the model wrote it, and a withheld one is kept so too."""
        evidence = [{"n": 1, "passage_id": "p1", "title": "House", "text": "Members serve a term of four years."}]
        state = self.state(threshold=0.0, evidence=evidence)
        state["steps"] = [{**self.STEP, "answer": "4 years", "raw_output": "4 years [1]"}]
        state.update(answer="4 years", settings={**state["settings"], "answer_form": form})
        out = check_answer(state, self.runtime(ctx, model()))
        assert out["answer"] == "four years" and out["turns"][0]["answer"] == "four years"
        assert out["trace"]["written_answer"] == "4 years"
        withheld = check_answer({**state, "settings": {**state["settings"], "abstain_threshold": 1.0}},
                                self.runtime(ctx, model()))
        assert withheld["answer"] == ABSTENTION and withheld["trace"]["answerability"]["withheld_answer"] == "four years"

    def test_an_answer_is_given_with_the_separators_its_evidence_writes(self, ctx):
        evidence = [{"n": 1, "passage_id": "p1", "title": "Black Death",
                     "text": "The modern bubonic plague has a mortality rate of 30–75%."}]
        state = self.state(threshold=0.0, evidence=evidence)
        state["steps"] = [{**self.STEP, "answer": "30-75%", "raw_output": "30-75% [1]"}]
        state["answer"] = "30-75%"
        out = check_answer(state, self.runtime(ctx, model()))
        assert out["answer"] == "30\u201375%" and out["trace"]["written_answer"] == "30-75%"

    def test_a_withheld_answer_is_kept_in_the_form_it_would_have_had(self, ctx):
        sentence = "The capital of France is the city of Paris."
        state = self.state(threshold=1.0)
        state.update(answer=sentence, settings={**state["settings"], "answer_form": "short"})
        out = check_answer(state, self.runtime(ctx, model()))
        assert out["answer"] == ABSTENTION and out["trace"]["answerability"]["withheld_answer"] == "city of Paris"
        assert "written_answer" not in out["trace"]  # nothing was given

    MEDIUM = {"name": "medium", "k": 5, "context_tokens": 128}
    HARD = {"name": "hard", "k": 5, "context_tokens": None}

    def extending_state(self, extend=True, ladder=(HARD,)):
        state = self.state(threshold=1.0)
        state["passages"] = [*state["passages"], {"id": "p2", "score": 0.6, "text": "France is in Europe."}]
        state["settings"] = {**state["settings"], "extend_before_abstaining": extend, "tier": "medium",
                             "budget": self.MEDIUM, "ladder": list(ladder)}
        return state

    def test_an_answer_below_the_threshold_goes_up_the_ladder_when_asked_to(self, ctx):
        out = check_answer(self.extending_state(), self.runtime(ctx, model()))
        step = out["steps"][-1]
        assert step["decision"] == "extend" and step["extended_by"] == "check" and 0 < step["check_score"] < 1
        assert out["settings"]["tier"] == "hard" and out["settings"]["budget"] == self.HARD
        assert out["settings"]["ladder"] == [] and out["escalations"] == 1
        assert "turns" not in out and "answer" not in out  # nothing is given yet
        assert after_check({**self.extending_state(), **out}) == "compress"

    @pytest.mark.parametrize("extend, ladder", [(False, (HARD,)), (True, ())])
    def test_otherwise_it_is_withheld(self, ctx, extend, ladder):
        state = self.extending_state(extend, ladder)
        out = check_answer(state, self.runtime(ctx, model()))
        assert out["answer"] == ABSTENTION and out["trace"]["answerability"]["decision"] == "abstain"
        assert "settings" not in out and after_check({**state, **out}) == "finish_turn"

    def test_an_answer_above_the_threshold_is_given_without_going_up(self, ctx):
        state = self.extending_state()
        state["settings"]["abstain_threshold"] = 0.0
        out = check_answer(state, self.runtime(ctx, model()))
        assert out["trace"]["answerability"]["decision"] == "answer" and "settings" not in out
        assert out["turns"][0]["answer"] == "Paris"

    JUPITER = {"id": "p3", "score": 0.6, "text": "Jupiter is the fifth planet from the Sun, and the largest in the Solar System."}
    FOURTH_LARGEST = {"n": 1, "passage_id": "p1", "title": "Neptune",
                      "text": "It is the fourth-largest planet in the Solar System by diameter, and the densest giant planet."}

    def with_ladder(self, state, extend=True, ladder=(HARD,)):
        """``state`` answered at Medium, with Jupiter's passage not read yet and ``ladder`` left."""
        state["passages"] = [*state["passages"], self.JUPITER]
        state["settings"] = {**state["settings"], "extend_after_rule": extend, "tier": "medium", "budget": self.MEDIUM,
                             "ladder": list(ladder)}
        return state

    def test_an_answer_a_rule_says_is_anothers_goes_up_the_ladder(self, ctx):
        """Found trying the chat (session 87): "Which planet is the largest in the solar system?" read Neptune's
        and Saturn's passages at Easy, answered "Neptune", and the rank rule withheld it; Jupiter's own passage was
        the next candidate, never read."""
        state = self.with_ladder(self.subject_state("Which planet is the largest in the solar system?", "Neptune",
                                                    [self.FOURTH_LARGEST, self.SATURN]))
        out = check_answer(state, self.runtime(ctx, self.EVEN))
        step = out["steps"][-1]
        assert step["decision"] == "extend" and step["extended_by"] == "rule" and step["rule"] == "rank"
        assert step["rule_reason"] == ("ranked fourth-largest by the passages that hold it, and the question asks for "
                                       "the largest") and step["check_score"] == 0.5
        assert out["settings"]["tier"] == "hard" and out["settings"]["ladder"] == [] and out["escalations"] == 1
        assert "turns" not in out and "answer" not in out  # nothing is given yet
        assert after_check({**state, **out}) == "compress"

    @pytest.mark.parametrize("extend, ladder", [(False, (HARD,)), (True, ())])
    def test_otherwise_an_answer_a_rule_says_is_anothers_is_withheld(self, ctx, extend, ladder):
        state = self.with_ladder(self.subject_state("Which planet is the largest in the solar system?", "Neptune",
                                                    [self.FOURTH_LARGEST, self.SATURN]), extend, ladder)
        out = check_answer(state, self.runtime(ctx, self.EVEN))
        check = out["trace"]["answerability"]
        assert check["decision"] == "abstain" and check["by"] == "rank" and out["answer"] == ABSTENTION
        assert "settings" not in out and after_check({**state, **out}) == "finish_turn"

    def test_a_rule_that_says_nothing_of_another_withholds_at_once(self, ctx):
        """A number to "where" (``kind``) is not another's answer: no passage would make it right."""
        state = self.with_ladder(self.kind_state("Where was Charles Darwin born?", "1809"))
        out = check_answer(state, self.runtime(ctx, self.EVEN))
        assert out["trace"]["answerability"]["by"] == "kind" and out["answer"] == ABSTENTION and "settings" not in out

    @pytest.mark.parametrize("answer, by", [("Neptune", "rank"), ("The largest planet is Neptune.", "rank"),
                                             ("Jupiter", "score")])
    def test_an_answer_set_aside_is_withheld_again_when_given_again(self, ctx, answer, by):
        """Read further, the evidence holds Neptune's other sentence, which ranks nothing: the rank rule alone would
        let "Neptune" stand on it. The answer set aside stays set aside; another is checked as any answer is."""
        reason = "ranked fourth-largest by the passages that hold it, and the question asks for the largest"
        other = {"n": 3, "passage_id": "p4", "title": "Neptune", "text": "Neptune is the eighth planet from the Sun."}
        jupiter = {"n": 4, "passage_id": "p3", "title": "Jupiter", "text": self.JUPITER["text"]}
        state = self.with_ladder(self.subject_state("Which planet is the largest in the solar system?", answer,
                                                    [self.FOURTH_LARGEST, self.SATURN, other, jupiter]), ladder=())
        earlier = {**self.STEP, "answer": "Neptune", "decision": "extend", "extended_by": "rule", "rule": "rank",
                   "rule_reason": reason}
        state["steps"] = [earlier, *state["steps"]]
        out = check_answer(state, self.runtime(ctx, self.EVEN))
        check = out["trace"]["answerability"]
        assert check["by"] == by and check["decision"] == ("abstain" if by == "rank" else "answer")
        assert check.get("reason") == (reason if by == "rank" else None)

    def test_the_rules_that_send_an_answer_up_are_rules_of_the_check(self):
        from nodes.check_answer import EXTENDED_RULES, RULED

        assert set(EXTENDED_RULES) <= set(RULED)

    def test_the_recording_model_never_abstains_at_zero(self, ctx):
        class Scorer:
            def score(self, question, passages):
                return 0.5

        runtime = Runtime(context=replace(ctx, answerability=recording_model(), sufficiency=Scorer()))
        out = check_answer(self.state(threshold=0.0), runtime)
        check = out["trace"]["answerability"]
        assert check["score"] == 0.5 and check["decision"] == "answer"
        assert set(check["features"]) == set(FEATURES) - {ANSWER_PROBE, *QUESTION_LIKELIHOOD}  # the probe's: its cross-fit
        state = self.state(threshold=0.0)
        state["steps"] = [{**self.STEP, "question_logprob": {"mean": -1.0, "min": -3.0, "tokens": 8}}]
        check = check_answer(state, runtime)["trace"]["answerability"]
        assert set(check["features"]) == set(FEATURES) - {ANSWER_PROBE} and check["score"] == 0.5  # recorded where read

    def test_generate_reads_the_question_s_likelihood_where_the_question_ends_the_prompt(self, ctx):
        from graph import graph

        question = "What is the capital of France?"
        out = graph.invoke({"question": question}, context=ctx)  # the default layout: evidence, then the question
        likelihood = out["trace"]["steps"][-1]["question_logprob"]
        assert likelihood["tokens"] == len(ctx.generator._text_tokens(" " + question))
        assert likelihood["min"] <= likelihood["mean"] <= 0.0
        values = likelihood["values"]  # each token's, kept so that other summaries of them can be fit
        assert len(values) == likelihood["tokens"] and min(values) == likelihood["min"]
        assert likelihood["mean"] == pytest.approx(sum(values) / len(values))
        assert out["trace"]["answerability"]["features"]["question_logprob_min"] == likelihood["min"]
        first = replace(ctx, pipeline=replace(ctx.pipeline, prompt_layout="question_first"))
        assert "question_logprob" not in graph.invoke({"question": question}, context=first)["trace"]["steps"][-1]

    def test_question_likelihood_false_reads_nothing_and_the_check_says_why(self, ctx, monkeypatch):
        from components.generator import LlamaCppChatModel
        from graph import graph

        asked = []
        real = LlamaCppChatModel.invoke
        monkeypatch.setattr(LlamaCppChatModel, "invoke", lambda self, messages, **kwargs: (
            asked.append(kwargs.get("score_suffix")), real(self, messages, **kwargs))[1])
        unread = replace(ctx, pipeline=replace(ctx.pipeline, question_likelihood=False),
                         answerability=model(features=("support", "question_logprob_mean"), coef=(1.0, 1.0)))
        out = graph.invoke({"question": "What is the capital of France?"}, context=unread)
        assert asked and asked[-1] is None and "question_logprob" not in out["trace"]["steps"][-1]
        check = out["trace"]["answerability"]
        assert check["by"] == "unchecked" and "question_likelihood=False" in check["reason"]


class TestConfiguration:
    @pytest.mark.parametrize("value", [-0.1, 1.5, math.nan])
    def test_out_of_range_thresholds_are_refused(self, value):
        with pytest.raises(ConfigurationError, match="abstain_threshold"):
            PipelineConfig(abstain_threshold=value)

    def test_an_unknown_answer_form_is_refused(self):
        with pytest.raises(ConfigurationError, match="answer_form"):
            PipelineConfig(answer_form="poem")

    def test_the_threshold_is_a_per_question_override(self):
        assert PipelineConfig().with_overrides({"abstain_threshold": 0.2}).abstain_threshold == 0.2


class TestFitting:
    def test_a_recorded_answer_keeps_its_question_s_token_log_probabilities(self):
        from training.answerability import kept_record

        steps = [{"question_logprob": {"mean": -2.0, "min": -3.0, "tokens": 2, "values": [-1.0, -3.0]}},
                 {"question_logprob": {"mean": -1.0, "min": -1.5, "tokens": 2, "values": [-0.5, -1.5]}}]
        assert kept_record({"id": "q", "steps": steps})["question_logprobs"] == [-0.5, -1.5]  # the final answer's
        assert kept_record({"id": "q", "steps": [{"tier": "easy"}]})["question_logprobs"] is None  # not read
        assert kept_record({"id": "q"})["question_logprobs"] is None

    def test_a_recorded_answer_keeps_the_evidence_it_was_checked_against(self):
        """The check's word-overlap features can then be computed anew from the recording."""
        from training.answerability import kept_record

        context = "[1] Dog: Dogs are welcome on Fridays.\n[2] Cat: Cats are not allowed."
        assert kept_record({"id": "q", "context": context})["context"] == context
        assert kept_record({"id": "q"})["context"] is None

    RUNS = [
        {"dataset": "squad", "answerable": True, "f1": 1.0, "answerability": {"by": "score"}},
        {"dataset": "squad", "answerable": False, "f1": 0.0, "answerability": {"by": "score"}},
        {"dataset": "squad", "answerable": False, "f1": 0.0, "answerability": {"by": "model"}},
        {"dataset": "hotpotqa", "answerable": True, "f1": 1.0, "answerability": {"by": "score"}},
        {"dataset": "hotpotqa", "answerable": True, "f1": 0.0, "answerability": {"by": "score"}},
    ]
    SCORES = {0: 0.9, 1: 0.2, 3: 0.8, 4: 0.1}

    def test_the_question_s_likelihood_joins_from_another_recording_by_the_answer_s_path(self):
        from training.answerability import with_question_likelihood

        def run(i, answer, tier="easy", **features):
            return {"dataset": "squad", "id": f"q{i}", "answer": answer, "written_answer": answer, "final_tier": tier,
                    "escalations": 0, "answerability": {"by": "score", "features": {"support": 0.5, **features}}}

        recorded = [run(0, "Paris"), run(1, "Lyon"), run(2, "Nice"), run(3, "Rome", question_logprob_min=-1.0)]
        again = [run(0, "Paris", support=0.9, answer_probe=0.9, question_logprob_min=-2.0, question_logprob_mean=-1.0),
                 run(1, "Marseille", question_logprob_min=-3.0),       # another answer from the same prompt
                 run(2, "Nice", tier="medium", question_logprob_min=-4.0),  # another path: another prompt
                 run(3, "Rome", question_logprob_min=-5.0)]             # a recorded value stays
        joined, gained = with_question_likelihood(recorded, again)
        assert gained == 2
        # only the question's likelihood joins: not the other recording's probe reading or its other features
        assert joined[0]["answerability"]["features"] == {"support": 0.5, "question_logprob_min": -2.0,
                                                          "question_logprob_mean": -1.0}
        assert joined[1]["answerability"]["features"] == {"support": 0.5, "question_logprob_min": -3.0}
        assert joined[2]["answerability"]["features"] == {"support": 0.5}
        assert joined[3]["answerability"]["features"] == {"support": 0.5, "question_logprob_min": -1.0}
        assert recorded[0]["answerability"]["features"] == {"support": 0.5}  # the records are not changed

    def test_abstention_scoring(self):
        assert abstention_f1({"answerable": False, "f1": 0.0}, True) == 1.0
        assert abstention_f1({"answerable": True, "f1": 0.7}, True) == 0.0
        assert abstention_f1({"answerable": True, "f1": 0.7}, False) == 0.7

    def test_sweep_and_choice(self):
        table = sweep(self.RUNS, self.SCORES)
        never = table[0]
        assert never["threshold"] == 0.0
        assert never["squad_f1"] == pytest.approx(100 * 2 / 3) and never["hotpotqa_f1"] == 50.0
        chosen = choose(table, max_hotpot_loss=1.0)
        # abstaining below 0.8 drops the wrong HotpotQA answer (no loss) and the unanswerable SQuAD one (a gain)
        assert 0.2 < chosen["threshold"] <= 0.8 and chosen["squad_f1"] == 100.0 and chosen["hotpotqa_f1"] == 50.0

    def test_a_threshold_per_question_type(self):
        from training.answerability import choose_by_type, read_multi_hop

        def run(dataset, answerable, f1, tier):
            return {"dataset": dataset, "answerable": answerable, "f1": f1, "final_tier": tier, "escalations": 0,
                    "answerability": {"by": "score"}}

        runs = [run("squad", False, 0.0, "easy"), run("squad", True, 1.0, "easy"), run("squad", False, 0.0, "medium"),
                run("hotpotqa", True, 1.0, "medium"), run("hotpotqa", True, 0.0, "medium")]
        assert [read_multi_hop(r) for r in runs] == [False, False, True, True, True]
        assert read_multi_hop({**runs[0], "answerability": {"by": "score", "multi_hop": True}}) is True
        scores = {0: 0.3, 1: 0.6, 2: 0.2, 3: 0.25, 4: 0.1}
        chosen = choose_by_type(runs, scores, max_hotpot_loss=1.0, max_answerable_loss=None)
        # single-hop: withhold the unanswerable 0.3, keep the right 0.6 (the lowest such: 0.6); multi-hop: withhold the
        # unanswerable SQuAD 0.2 and the wrong HotpotQA 0.1, keep the right HotpotQA 0.25 (the lowest such: 0.25)
        assert chosen["threshold"] == 0.6 and chosen["threshold_multi_hop"] == 0.25
        assert chosen["squad_f1"] == 100.0 and chosen["hotpotqa_f1"] == 50.0
        one = choose(sweep(runs, scores), max_hotpot_loss=1.0)
        assert one["squad_f1"] < chosen["squad_f1"]
        strict = choose_by_type(runs, scores, max_hotpot_loss=1.0, max_answerable_loss=0.0)
        assert strict["squad_answerable_f1"] == 100.0

    def test_the_types_are_read_out_of_fold_where_the_question_type_model_saw_the_question(self, tmp_path):
        """The shipped question-type model was trained on the HotpotQA train questions: its reading of
        them, recorded with the answers, is in-sample. The thresholds are fit on the out-of-fold one."""
        from training.answerability import choose_by_type, read_multi_hop, read_question_types

        def run(qid, dataset, answerable, f1):
            return {"id": qid, "dataset": dataset, "answerable": answerable, "f1": f1,
                    "answerability": {"by": "score", "multi_hop": dataset == "hotpotqa"}}

        runs = [run("s1", "squad", False, 0.0), run("s2", "squad", True, 1.0), run("h1", "hotpotqa", True, 1.0),
                run("h2", "hotpotqa", True, 0.0)]
        readings_file = tmp_path / "question_type_cross_fit.jsonl"
        readings_file.write_text("".join(json.dumps({"dataset": d, "id": i, "multi_hop_probability": p}) + "\n"
                                         for d, i, p in (("hotpotqa", "h1", 0.02), ("hotpotqa", "h2", 0.4),
                                                         ("nq", "n1", 0.9))))
        readings = read_question_types(readings_file, threshold=0.05)
        assert readings == {("hotpotqa", "h1"): False, ("hotpotqa", "h2"): True, ("nq", "n1"): True}
        assert [read_multi_hop(r, readings) for r in runs] == [False, False, False, True]
        assert [read_multi_hop(r) for r in runs] == [False, False, True, True]
        scores = {0: 0.3, 1: 0.6, 2: 0.35, 3: 0.1}
        # recorded: h1 is multi-hop, so the single-hop bar can rise to 0.6 at no HotpotQA cost
        assert choose_by_type(runs, scores, 1.0, None)["threshold"] == 0.6
        # out of fold h1 is single-hop: a bar above its 0.35 withholds a right HotpotQA answer
        honest = choose_by_type(runs, scores, 1.0, None, readings)
        assert 0.3 < honest["threshold"] <= 0.35 and honest["hotpotqa_f1"] == 50.0
        assert honest["multi_hop_questions"] == {"squad": 0, "hotpotqa": 1}
        with pytest.raises(SystemExit, match="training.question_type"):
            read_question_types(tmp_path / "missing.jsonl", threshold=0.05)

    def test_a_bootstrap_bound_keeps_a_pair_that_a_few_questions_make_look_safe(self):
        """Ten HotpotQA questions, one right answer scored low: withholding it loses 10 points, within a
        10-point bound by the point estimate; in a resample that answer is drawn twice or more about a
        quarter of the time, so the 90% bound is above 10 and the multi-hop bar must stay under it."""
        from training.answerability import choose_by_type

        def run(qid, dataset, answerable, f1):
            return {"id": qid, "dataset": dataset, "answerable": answerable, "f1": f1,
                    "answerability": {"by": "score", "multi_hop": dataset == "hotpotqa"}}

        runs = [run("s1", "squad", False, 0.0), run("s2", "squad", True, 1.0), run("m", "squad", False, 0.0)]
        runs[2]["answerability"]["multi_hop"] = True  # an unanswerable SQuAD question read as multi-hop, scored 0.2
        runs += [run("h0", "hotpotqa", True, 1.0)] + [run(f"h{k}", "hotpotqa", True, 0.0) for k in range(1, 10)]
        # the right HotpotQA answer scores 0.15, under the unanswerable one's 0.2; a wrong one scores 0.3
        scores = {0: 0.3, 1: 0.6, 2: 0.2, 3: 0.15, 4: 0.3, **{3 + k: 0.1 for k in range(2, 10)}}
        point = choose_by_type(runs, scores, max_hotpot_loss=10.0, max_answerable_loss=None)
        assert point["threshold_multi_hop"] == 0.3 and point["hotpotqa_f1"] == 0.0  # the right answer withheld
        bounded = choose_by_type(runs, scores, max_hotpot_loss=10.0, max_answerable_loss=None, confidence=0.9,
                                 resamples=2000)
        assert bounded["threshold_multi_hop"] <= 0.15 and bounded["hotpotqa_f1"] == 10.0
        assert bounded["hotpotqa_loss_bound"] == 0.0 and bounded["threshold"] == point["threshold"]

    def test_held_out_halves_measure_the_rule_on_the_other_half(self):
        from training.answerability import figures_at, held_out_halves, summarise_halves

        def run(qid, dataset, answerable, f1):
            return {"id": qid, "dataset": dataset, "answerable": answerable, "f1": f1, "answerability": {"by": "score"}}

        runs = ([run(f"s{k}", "squad", k % 2 == 0, 1.0 if k % 2 == 0 else 0.0) for k in range(8)]
                + [run(f"h{k}", "hotpotqa", True, 1.0) for k in range(4)])
        scores = {n: 0.5 for n in range(len(runs))}
        withhold_all = held_out_halves(runs, scores, lambda part, _: {"threshold": 1.0, "threshold_multi_hop": 1.0},
                                       halves=5)
        assert len(withhold_all) == 5
        # every held-out half: 4 SQuAD questions (any mix) and 2 HotpotQA ones, each HotpotQA answer right
        assert all(r["hotpotqa_f1"] == 0.0 and r["hotpotqa_loss"] == 100.0 and r["unanswerable_abstained"] == 100.0
                   for r in withhold_all)
        summary = summarise_halves(withhold_all, max_hotpot_loss=1.0, max_answerable_loss=None)
        assert summary["hotpotqa_over_bound"] == 100.0 and summary["halves"] == 5
        assert "answerable_over_bound" not in summary
        never = summarise_halves(held_out_halves(runs, scores, lambda part, _: {"threshold": 0.0,
                                                                               "threshold_multi_hop": 0.0}, halves=5),
                                 max_hotpot_loss=1.0, max_answerable_loss=0.0)
        assert never["mean_hotpotqa_loss"] == 0.0 and never["hotpotqa_over_bound"] == 0.0
        assert never["answerable_over_bound"] == 0.0 and never["mean_unanswerable_abstained"] == 0.0
        everything = figures_at(runs, scores, [False] * len(runs), 0.6, 0.6)
        assert everything["squad_f1"] == 50.0 and everything["answerable_loss"] == 100.0

    def test_a_pair_is_chosen_over_the_whole_grid(self):
        """best_pair: the best SQuAD F1 within the bounds, then the best HotpotQA F1, then the lowest pair."""
        import numpy as np

        from training.answerability import best_pair

        sizes = {"squad": 2, "hotpotqa": 2, "answerable": 1}
        # single-hop candidates 0, a, b; multi-hop candidates 0, c (sums of F1 per group at each)
        single = {"squad": np.array([1.0, 2.0, 2.0]), "hotpotqa": np.array([1.0, 0.0, 1.0]),
                  "answerable": np.array([1.0, 1.0, 1.0])}
        multi = {"squad": np.array([0.0, 0.0]), "hotpotqa": np.array([1.0, 0.0]), "answerable": np.array([0.0, 0.0])}
        i, j, f1 = best_pair(single, multi, sizes, max_hotpot_loss=100.0, max_answerable_loss=None)
        # (a, 0), (b, 0), (a, c) and (b, c) all give SQuAD 100; (b, 0) keeps every HotpotQA point (with extending
        # before abstaining, a higher bar can win an answer back), so it beats the lower (a, 0)
        assert (i, j) == (2, 0) and f1["squad"][i, j] == 100.0 and f1["hotpotqa"][i, j] == 100.0
        assert f1["hotpotqa"].shape == (3, 2)
        # no HotpotQA loss allowed and the answerable bound met: the same pair
        assert best_pair(single, multi, sizes, 0.0, 0.0)[:2] == (2, 0)
        # an answerable loss the bound forbids: only the never-abstaining column of that group remains
        lossy = {**single, "answerable": np.array([1.0, 0.0, 0.0])}
        assert best_pair(lossy, multi, sizes, 100.0, 0.0)[:2] == (0, 0)

    def test_the_answerable_floor_bounds_the_pair_as_an_absolute_f1(self):
        """--min-answerable-f1 (#15's "answerable F1 >= 58" as stated): a pair must keep SQuAD's
        answerable questions at that F1 (%), whatever never abstaining gives them; the relative bound
        measures the loss from never abstaining instead."""
        import numpy as np

        from training.answerability import best_pair

        sizes = {"squad": 4, "hotpotqa": 1, "answerable": 2}
        # single-hop candidates 0, a, b: a withholds one unanswerable answer, b that one and a right one
        single = {"squad": np.array([1.0, 2.0, 2.5]), "hotpotqa": np.array([1.0, 1.0, 1.0]),
                  "answerable": np.array([1.0, 1.0, 0.5])}
        multi = {"squad": np.array([0.0]), "hotpotqa": np.array([0.0]), "answerable": np.array([0.0])}
        # never abstaining: answerable F1 50%; b keeps 25%
        assert best_pair(single, multi, sizes, 100.0, None)[:2] == (2, 0)
        assert best_pair(single, multi, sizes, 100.0, None, min_answerable_f1=50.0)[:2] == (1, 0)
        assert best_pair(single, multi, sizes, 100.0, None, min_answerable_f1=25.0)[:2] == (2, 0)
        # from never abstaining's 50%, a loss of at most 25 points and a floor of 25% allow the same pairs
        assert best_pair(single, multi, sizes, 100.0, 25.0)[:2] == best_pair(single, multi, sizes, 100.0, None,
                                                                             min_answerable_f1=25.0)[:2]

    def test_the_halvings_count_how_often_the_floor_is_broken(self):
        from training.answerability import summarise_halves

        results = [{"threshold": 0.2, "threshold_multi_hop": 0.0, "squad_f1": 50.0, "squad_loss": -10.0,
                    "hotpotqa_f1": 30.0, "hotpotqa_loss": 0.5, "answerable_f1": f1, "answerable_loss": 1.0,
                    "unanswerable_abstained": 50.0} for f1 in (57.0, 58.0, 59.0, 60.0)]
        summary = summarise_halves(results, max_hotpot_loss=1.0, max_answerable_loss=None, min_answerable_f1=58.0)
        assert summary["answerable_under_floor"] == 25.0 and summary["mean_answerable_f1"] == 58.5
        assert "answerable_under_floor" not in summarise_halves(results, 1.0, None)

    def test_the_recorded_sufficiency_feature_is_left_out_unless_asked_for(self):
        """The recording run scores every feature, the sufficiency scorer's too, with a scorer trained
        on the recorded questions' articles; the default fit must not see that feature."""
        from training.answerability import candidate_extras, without_sufficiency

        features = {name: 0.5 for name in FEATURES}
        runs = [{**r, "answerability": {**r["answerability"], "features": dict(features)}} for r in self.RUNS]
        assert any(SUFFICIENCY in c for c in candidate_extras(runs))
        stripped = without_sufficiency(runs)
        assert all(SUFFICIENCY not in r["answerability"]["features"] for r in stripped)
        assert all(set(r["answerability"]["features"]) == set(features) - {SUFFICIENCY} for r in stripped)
        assert not any(SUFFICIENCY in c for c in candidate_extras(stripped))
        assert all(SUFFICIENCY in r["answerability"]["features"] for r in runs)  # the records are not changed

    def test_the_hotpotqa_loss_is_bounded_over_bootstrap_resamples(self):
        # 20 HotpotQA answers, 4 right; abstaining below 0.5 drops one right answer (5 points) and 4 wrong ones
        runs = [{"dataset": "squad", "answerable": False, "f1": 0.0, "answerability": {"by": "score"}}]
        runs += [{"dataset": "hotpotqa", "answerable": True, "f1": 1.0 if i < 4 else 0.0, "answerability": {"by": "score"}}
                 for i in range(20)]
        # the unanswerable SQuAD question scores low with them: only a threshold above 0.3 gains it
        scores = {0: 0.3, **{1 + i: (0.3 if i in (0, 4, 5, 6, 7) else 0.9) for i in range(20)}}
        point = sweep(runs, scores)
        bounded = sweep(runs, scores, confidence=0.9)
        assert "hotpotqa_loss_bound" not in point[0]
        assert bounded[0]["hotpotqa_loss_bound"] == 0.0  # threshold 0 loses nothing on any resample
        at_half = next(row for row in bounded if row["threshold"] == 0.9)  # abstains on the five scored 0.3
        assert point[0]["hotpotqa_f1"] - next(r for r in point if r["threshold"] == 0.9)["hotpotqa_f1"] == pytest.approx(5.0)
        # the loss on a resample is 5 points times the dropped answer's copies: its 90% quantile is above 5
        assert at_half["hotpotqa_loss_bound"] >= 10.0 - 1e-9
        assert choose(point, max_hotpot_loss=6.0)["threshold"] == 0.9  # the point estimate allows dropping it
        assert choose(bounded, max_hotpot_loss=6.0)["threshold"] == 0.0  # the bound does not
        assert sweep(runs, scores, confidence=0.9) == bounded  # seeded

    def test_risk_coverage(self):
        curve = risk_coverage([(0.9, True), (0.2, False), (0.8, True), (0.1, False)])
        assert [c for c, _ in curve] == [25.0, 50.0, 75.0, 100.0]
        assert [a for _, a in curve] == [100.0, 100.0, pytest.approx(200 / 3), 50.0]
        assert area_under(curve) == pytest.approx((0 + (100 / 3) / 2 + (100 / 3 + 50) / 2) * 25 / 75)

    def test_tied_scores_are_answered_together(self):
        assert risk_coverage([(0.5, True), (0.5, False), (0.1, False)]) == [(pytest.approx(200 / 3), 50.0),
                                                                              (100.0, pytest.approx(100 / 3))]

    def test_the_runs_files_are_json_lines(self):
        from training.answerability import LIKELIHOOD_RUNS, RUNS_FILE

        for path in (RUNS_FILE, LIKELIHOOD_RUNS):
            if not path.is_file():
                pytest.skip(f"{path} not recorded yet")
        first = json.loads(RUNS_FILE.read_text(encoding="utf-8").splitlines()[0])
        # recorded before the sufficiency scorer, the answer probe and the question's likelihood existed: their
        # features are added when the check is fit
        # (and ONLY_IN_QUESTION, computed from the question and the answer: current_features)
        added = {SUFFICIENCY, ANSWER_PROBE, *QUESTION_LIKELIHOOD, ONLY_IN_QUESTION}
        assert set(first["answerability"]["features"]) | added == set(FEATURES)
        again = json.loads(LIKELIHOOD_RUNS.read_text(encoding="utf-8").splitlines()[0])
        # the probe's reading recorded, never joined
        assert set(again["answerability"]["features"]) | {ONLY_IN_QUESTION} == set(FEATURES)


class TestAbstentionFigures:
    """The benchmark's table: with and without the check, from the same records."""

    @staticmethod
    def record(answerable, f1, withheld, score, by="score", check_ms=10.0, latency=1000.0):
        """A record as the benchmark writes it: ``f1`` is the answer's before the check; an
        abstention (the check's or the model's) scores 1 on an unanswerable question, 0 otherwise."""
        abstained = withheld or by == "model"
        given = (0.0 if answerable else 1.0) if abstained else f1
        return {"answerable": answerable, "f1": given, "em": given, "prediction": "" if abstained else "x",
                "f1_unchecked": f1, "em_unchecked": f1, "prediction_unchecked": "" if by == "model" else "x",
                "answerability": {"by": by, "score": 0.0 if by == "model" else score, "threshold": 0.4,
                                  "decision": "abstain" if abstained else "answer"},
                "timings_ms": {"check_answer": check_ms}, "latency_ms": latency}

    def test_the_table(self):
        from eval.abstention import abstention_figures

        rows = [self.record(True, 1.0, False, 0.9), self.record(True, 0.5, True, 0.3),
                self.record(False, 0.0, True, 0.2), self.record(False, 1.0, False, None, by="model"),
                self.record(True, 0.5, False, 0.45)]
        f = abstention_figures(rows)
        assert f["f1"] == pytest.approx(70.0) and f["f1_unchecked"] == pytest.approx(60.0)
        assert f["f1_answerable"] == pytest.approx(50.0) and f["f1_answerable_unchecked"] == pytest.approx(200 / 3)
        assert f["false_abstention"] == pytest.approx(100 / 3) and f["unanswerable_abstained"] == 100.0
        assert f["unanswerable_abstained_unchecked"] == 50.0 and f["never_answer_f1"] == 40.0
        assert f["answered"] == 40.0 and f["by_model"] == 20.0 and f["threshold"] == 0.4
        assert f["threshold_multi_hop"] is None and f["multi_hop"] == 0.0
        assert f["median_time_added"] == pytest.approx(100 * (1000 / 990 - 1))
        assert [c for c, _ in f["curve"]][-1] == 100.0
        never, strict = f["knob"][0], f["knob"][-1]
        assert never["threshold"] == 0.0 and never["f1"] == pytest.approx(60.0) and never["answered"] == 80.0
        assert strict["threshold"] == 0.5 and strict["f1"] == pytest.approx(60.0) and strict["answered"] == 20.0

    def test_the_knob_table_holds_a_multi_hop_question_to_what_the_knob_gives_it(self):
        from eval.abstention import at_threshold

        multi = self.record(True, 1.0, False, 0.15)
        multi["answerability"].update(multi_hop=True, fitted_thresholds=[0.4, 0.1])
        # knob 0.2: a single-hop question is held to 0.2, this one to 0.05: it is answered
        assert at_threshold([multi], 0.2)["answered"] == 100.0
        assert at_threshold([{**multi, "answerability": {**multi["answerability"], "multi_hop": False}}], 0.2)["answered"] == 0

    def test_the_knob_table_holds_a_wikipedia_checked_answer_to_what_the_knob_gives_it(self):
        from eval.abstention import at_threshold

        wiki = self.record(True, 1.0, False, 0.25)
        wiki["answerability"].update(multi_hop=False, fit_on="wikipedia", fitted_thresholds=[0.2, 0.3])
        assert at_threshold([wiki], 0.2)["answered"] == 0.0  # held to 0.3 (its fitted threshold), not 0.2
        assert at_threshold([wiki], 0.1)["answered"] == 100.0  # held to 0.15

    @pytest.mark.parametrize("by", ["age", "kind"])
    def test_the_knob_table_withholds_an_answer_a_rule_withholds_at_every_bar_but_0(self, by):
        from eval.abstention import at_threshold

        ruled = self.record(True, 0.0, True, 0.9)
        ruled["answerability"].update(by=by, decision="abstain")
        assert at_threshold([ruled], 0.1)["answered"] == 0.0 and at_threshold([ruled], 0.0)["answered"] == 100.0

    def test_answers_scored_against_a_knowledge_base_that_may_not_hold_them(self):
        from eval.abstention import knowledge_base_figures

        def row(holds, f1, abstained, unchecked_f1=None):
            r = self.record(True, f1 if unchecked_f1 is None else unchecked_f1, abstained, 0.5)
            return {**r, "kb_holds_answer": holds, "f1": 0.0 if abstained else f1}

        rows = [row(True, 1.0, False), row(True, 0.0, True, unchecked_f1=1.0), row(False, 0.0, True),
                row(False, 0.6, False)]  # not held, answered: scores 0 though it overlaps a gold answer
        f = knowledge_base_figures(rows)
        assert f["held"] == 50.0 and f["f1"] == 50.0 and f["f1_unchecked"] == 50.0  # 1+0+1+0 and 1+1+0+0
        assert f["given"] == 2 and f["right_given"] == 1 and f["right_share"] == 50.0 and f["unheld_abstained"] == 50.0
        assert knowledge_base_figures([{k: v for k, v in rows[0].items() if k != "kb_holds_answer"}]) is None

    def test_records_without_a_check_have_no_table(self):
        from eval.abstention import abstention_figures

        row = self.record(True, 1.0, False, 0.9)
        del row["answerability"]
        assert abstention_figures([row]) is None


class TestRescore:
    """eval.rescore replays a check on recorded answers."""

    @staticmethod
    def record(qid, answerable, support, prediction, golds, by="score"):
        return {"system": "cascade", "id": qid, "question": "Where is the Louvre?", "answerable": answerable,
                "gold_answers": golds,
                "prediction_unchecked": prediction, "prediction": prediction, "f1_unchecked": 0.0,
                "answerability": {"by": by, "score": None, "features": {"support": support}}}

    def test_a_check_replayed_withholds_the_answers_below_its_threshold(self):
        from eval.rescore import rescored

        records = [self.record("a", True, 1.0, "Paris", ["Paris"]),  # score 0.98: answered
                   self.record("b", False, 0.0, "Lyon", []),  # score 0.02: withheld, right to abstain
                   self.record("c", False, 0.0, "", [], by="model")]  # the model's own abstention stays
        out = rescored(records, model())
        assert [r["prediction"] for r in out] == ["Paris", "", ""]
        assert [r["f1"] for r in out[:2]] == [1.0, 1.0] and out[1]["answerability"]["decision"] == "abstain"
        assert out[2] == records[2]
        assert [r["prediction"] for r in rescored(records, model(), threshold=0.99)] == ["", "", ""]

    def test_a_question_read_as_multi_hop_is_replayed_at_its_own_threshold(self):
        from eval.rescore import rescored

        record = self.record("a", True, 0.5, "Paris", ["Paris"])  # score 0.5
        record["answerability"]["multi_hop"] = True
        m = model(threshold=0.6, threshold_multi_hop=0.3)
        assert rescored([record], m)[0]["prediction"] == "Paris"  # held to 0.3
        assert rescored([record], m)[0]["answerability"]["threshold"] == pytest.approx(0.3)
        single = {**record, "answerability": {**record["answerability"], "multi_hop": False}}
        assert rescored([single], m)[0]["prediction"] == ""  # held to 0.6

    def test_a_weak_multi_hop_reading_is_read_again_with_the_answers_passage(self):
        from eval.rescore import rescored

        record = self.record("a", False, 0.5, "Paris", [])  # score 0.5, between the bars
        record["answerability"].update(multi_hop=True)
        record["answerability"]["features"]["question_coverage"] = 0.5
        m = model(threshold=0.6, threshold_multi_hop=0.3)
        assert rescored([record], m)[0]["prediction"] == "Paris"  # no probability: the recorded reading
        assert rescored([record], m, probabilities={"Where is the Louvre?": 0.2})[0]["prediction"] == "Paris"
        weak = rescored([record], m, probabilities={"Where is the Louvre?": 0.1})[0]
        assert weak["prediction"] == "" and weak["f1"] == 1.0 and weak["answerability"]["multi_hop"] is False
        recorded = {**record, "answerability": {**record["answerability"], "multi_hop_probability": 0.1}}
        assert rescored([recorded], m, probabilities={"Where is the Louvre?": 0.9})[0]["prediction"] == ""  # its own

    def test_features_of_an_older_version_are_corrected_before_scoring(self):
        from eval.rescore import rescored

        # recorded before the fix: "Istanbul"'s own first piece counted as the abstention's
        features = {"first_prob": 0.7, "abstain_prob": 0.75}
        record = {**self.record("a", True, 1.0, "Istanbul", ["Istanbul"]), "steps": [{"answer": "Istanbul"}]}
        record["answerability"]["features"] = features
        check = model(features=("abstain_prob",), coef=(-10.0,))  # high abstain_prob: withheld
        assert rescored([record], check)[0]["prediction"] == "Istanbul"
        current = {**record, "answerability": {**record["answerability"], "features_version": FEATURES_VERSION}}
        assert rescored([current], check)[0]["prediction"] == ""

    def test_the_rules_withhold_a_replayed_answer_whatever_its_score(self):
        """As the check does (nodes.check_answer.RULED): "Brussels" for Albert Einstein, held only by Andreas
        Vesalius's passage, and "1809" to a question that asks where; at the knob of 0 neither is withheld."""
        from eval.rescore import rescored

        vesalius = "[1] Andreas Vesalius: He was born in Brussels, which was then part of the Habsburg Netherlands."
        records = [{**self.record("a", True, 1.0, "Brussels", ["Ulm"]), "question": "Where was Albert Einstein born?",
                    "context": vesalius},
                   {**self.record("b", True, 1.0, "1809", ["Shrewsbury"]), "question": "Where was Charles Darwin born?"},
                   {**self.record("c", True, 1.0, "Brussels", ["Brussels"]), "question": "Where was Andreas Vesalius born?",
                    "context": vesalius}]
        out = rescored(records, model(), threshold=0.5)
        assert [r["prediction"] for r in out] == ["", "", "Brussels"]
        assert [r["answerability"]["by"] for r in out] == ["subject", "kind", "score"]
        assert out[0]["answerability"]["reason"].startswith("held only by passages of \u201cAndreas Vesalius\u201d")
        assert [r["prediction"] for r in rescored(records, model(), threshold=0.0)] == ["Brussels", "1809", "Brussels"]

    def test_a_replayed_answer_is_given_with_its_numbers_as_its_evidence_writes_them(self):
        """As the check gives it since session 84: records made before gave "4" where the passage says "four"."""
        from eval.rescore import rescored

        term = "[1] House: Members serve a term of four years."
        record = {**self.record("a", True, 1.0, "4 years", ["four years"]), "question": "How long is a term?",
                  "context": term}
        out = rescored([record], model(), threshold=0.5)[0]
        assert out["prediction"] == "four years" and out["f1"] == 1.0 and out["em"] == 1.0
        assert rescored([{**record, "prediction_unchecked": "four years"}], model(), threshold=0.5)[0]["prediction"] \
            == "four years"  # a record made since: the same
        assert rescored([{**record, "context": ""}], model(), threshold=0.5)[0]["prediction"] == "4 years"

    def test_a_replayed_question_read_as_multi_hop_keeps_an_answer_on_other_years(self):
        """The year rule leaves a multi-hop question to the score, as the check does with its recorded reading:
        its year may be said of another passage's subject."""
        from eval.rescore import rescored

        games = "[1] Summer Olympic Games: The first Games took place in 1896 in Athens, and the most recent in 2024 in Paris."
        record = {**self.record("a", False, 1.0, "Paris", []), "question": "Which city hosted the 2016 Summer Olympics?",
                  "context": games}
        assert rescored([record], model(), threshold=0.5)[0]["answerability"]["by"] == "year"
        record["answerability"]["multi_hop"] = True
        assert rescored([record], model(), threshold=0.5)[0]["prediction"] == "Paris"

    def test_an_answer_without_a_feature_the_model_uses_is_given_unchecked(self):
        from eval.rescore import rescored

        withheld = {**self.record("b", True, 0.0, "", ["Lyon"]), "prediction_unchecked": "Lyon"}  # withheld before
        out = rescored([withheld], model(features=("support", ANSWER_PROBE), coef=(2.0, 2.0)))
        assert out[0]["prediction"] == "Lyon" and out[0]["f1"] == 1.0
        assert out[0]["answerability"]["by"] == "unchecked" and out[0]["answerability"]["decision"] == "answer"


    def test_open_domain_answers_are_also_scored_against_the_knowledge_base(self, tmp_path, capsys):
        from eval.rescore import main

        # what else a benchmark record of an NQ-open question holds, with the knowledge base's flag set below
        run = {"dataset": "nq", "em": 0.0, "em_unchecked": 0.0, "latency_ms": 1000.0, "input_tokens": 300,
               "output_tokens": 4, "passages_in_prompt": 3, "corrected": False, "tier": "easy",
               "timings_ms": {"check_answer": 1.0}}
        held = {**self.record("a", True, 1.0, "Paris", ["Paris"]), **run, "f1": 1.0, "f1_unchecked": 1.0,
                "kb_holds_answer": True}
        unheld = {**self.record("b", True, 0.0, "Lyon", ["Nice"]), **run, "f1": 0.0, "kb_holds_answer": False}
        records = tmp_path / "records.jsonl"
        records.write_text("".join(json.dumps(r) + "\n" for r in (held, unheld)))
        model().save(tmp_path / "m.json")
        assert main([str(records), "--model", str(tmp_path / "m.json")]) == 0
        kb = json.loads(capsys.readouterr().out)["knowledge_base"]["cascade"]
        # "Paris" is given (score 0.98) and right; "Lyon" is withheld (0.02) where the knowledge base holds no answer
        assert kb["f1"] == 100.0 and kb["given"] == 1 and kb["right_given"] == 1 and kb["unheld_abstained"] == 100.0
        assert kb["f1_unchecked"] == 50.0


    def test_open_domain_records_learn_whether_the_knowledge_base_holds_their_answer(self):
        from types import SimpleNamespace

        from eval.corpora import with_holds

        corpus = [SimpleNamespace(text="Paris is the capital of France.")]
        asked = []

        def index_of(dataset):
            asked.append(dataset)
            return corpus

        records = [{"dataset": "nq", "id": "1", "gold_answers": ["paris"]},
                   {"dataset": "triviaqa", "id": "2", "gold_answers": ["Lyon"]},
                   {"dataset": "squad", "id": "3", "gold_answers": ["Lyon"]},
                   {"dataset": "nq", "id": "4", "gold_answers": [], "kb_holds_answer": True}]
        out = with_holds(records, index_of)
        assert [r.get("kb_holds_answer") for r in out] == [True, False, None, True]
        assert asked == ["nq", "triviaqa"]  # the corpus is read once a dataset, and only where a record lacks the flag
        assert with_holds(records[2:], index_of) == records[2:] and asked == ["nq", "triviaqa"]


class TestExtendBeforeAbstaining:
    """``training.extend_check``: the cascade's path replayed over recorded answers at every tier."""

    @staticmethod
    def step(f1, confident=True, abstained=False, tokens=100):
        return {"f1": f1, "confident": confident, "abstained": abstained, "prompt_tokens_evaluated": tokens,
                "prompt_tokens": 300, "generate_ms": 10.0}

    def test_abstaining_withholds_the_accepted_answer_and_extending_tries_the_next(self):
        from training.extend_check import replay

        record = {"answerable": True, "steps": [self.step(0.0), self.step(1.0, tokens=50)]}
        scores = [0.1, 0.8]
        at_once = replay(record, scores, 0.5, extend=False)
        assert at_once["step"] == 0 and at_once["abstain"] and at_once["tokens"] == 100
        extended = replay(record, scores, 0.5, extend=True)
        assert extended["step"] == 1 and not extended["abstain"] and extended["f1"] == 1.0
        assert extended["tokens"] == 150 and extended["extended_by_check"] == 1
        assert replay(record, scores, 0.05, extend=True)["step"] == 0  # above the threshold: accepted at once

    def test_the_cascades_own_extensions_are_the_same_either_way(self):
        from training.extend_check import replay

        record = {"answerable": False, "steps": [self.step(0.0, confident=False), self.step(0.0, abstained=True),
                                                 self.step(0.0)]}
        for extend in (False, True):
            out = replay(record, [0.9, None, 0.3], 0.5, extend)
            assert out["step"] == 2 and out["abstain"] and out["extended_by_check"] == 0

    def test_the_top_answer_is_withheld_below_the_threshold(self):
        from training.extend_check import replay

        record = {"answerable": False, "steps": [self.step(0.0), self.step(0.0)]}
        out = replay(record, [0.2, 0.3], 0.5, extend=True)
        assert out["step"] == 1 and out["abstain"]

    def test_the_table_starts_at_never_abstaining(self):
        from training.extend_check import table

        records = [{"dataset": "squad", "answerable": False, "steps": [self.step(0.0), self.step(0.0)]},
                   {"dataset": "hotpotqa", "answerable": True, "steps": [self.step(0.0), self.step(1.0)]}]
        scores = [[0.2, 0.3], [0.2, 0.9]]
        never, strict = table(records, scores, [0.0, 0.5], extend=True)
        assert never["squad_f1"] == 0.0 and never["hotpotqa_f1"] == 0.0 and never["hotpotqa_extended_by_check"] == 0
        assert strict["squad_f1"] == 100.0 and strict["squad_unanswerable_abstained"] == 100.0
        assert strict["hotpotqa_f1"] == 100.0 and strict["hotpotqa_tokens"] == 200

    def test_a_pair_of_thresholds_by_where_the_cascade_started(self):
        from training.extend_check import choose_pair

        def record(dataset, answerable, tier, *f1s):
            return {"dataset": dataset, "answerable": answerable,
                    "steps": [{**self.step(f1), "tier": t} for f1, t in zip(f1s, (tier, "hard"), strict=False)]}

        records = [record("squad", False, "easy", 0.0, 0.0), record("squad", True, "easy", 1.0, 1.0),
                   record("hotpotqa", True, "medium", 0.0, 1.0)]
        scores = [[0.2, 0.3], [0.6, 0.7], [0.1, 0.5]]
        at_once = choose_pair(records, scores, [False] * 3, max_hotpot_loss=0.0, max_answerable_loss=0.0)
        # single-hop: withhold the unanswerable 0.2, keep 0.6 (the lowest such candidate: 0.3); multi-hop:
        # withholding 0.1 loses nothing (its F1 is 0)
        assert at_once["threshold"] == 0.3 and at_once["squad_f1"] == 100.0 and at_once["hotpotqa_f1"] == 0.0
        extending = choose_pair(records, scores, [True] * 3, max_hotpot_loss=0.0, max_answerable_loss=0.0)
        # extending the multi-hop question's withheld answer reaches the right one (0.5)
        assert extending["threshold_multi_hop"] == 0.5 and extending["hotpotqa_f1"] == 100.0
        assert extending["hotpotqa_extended_by_check"] == 100.0 and extending["hotpotqa_tokens"] == 200

    def test_recorded_steps_are_read_as_the_check_computes_features_today(self):
        from training.extend_check import step_features

        record = {"question": "What is photosynthesis?"}
        old = {"answer": "Photosynthesis", "abstained": False, "features": {"support": 1.0, "abstain_prob": 0.0}}
        assert step_features(record, old) == {"support": 1.0, "abstain_prob": 0.0, ONLY_IN_QUESTION: 1.0}
        assert step_features(record, {**old, "abstained": True}) is None  # the model's own abstention: unscored
        recorded = {**old, "features_version": FEATURES_VERSION, "features": {"support": 1.0, ONLY_IN_QUESTION: 0.0}}
        assert step_features(record, recorded) == recorded["features"]

    def test_steps_recorded_without_a_feature_the_check_reads_are_refused_by_name(self):
        from training.extend_check import missing_features

        records = [{"question": "Who wrote Hamlet?", "steps": [
            {"answer": "Shakespeare", "abstained": False, "features": {"support": 1.0}}]}]
        assert missing_features(records, model(features=("support", ONLY_IN_QUESTION), coef=(1.0, -1.0))) == []
        reads_likelihood = model(features=("support", *QUESTION_LIKELIHOOD), coef=(1.0, 1.0, 1.0))
        assert missing_features(records, reads_likelihood) == sorted(QUESTION_LIKELIHOOD)
        # the probe's score is computed from the recorded state, not read from the features
        assert missing_features(records, model(features=("support", ANSWER_PROBE), coef=(1.0, 1.0))) == []


class TestWikipediaFit:
    """The check for answers from the Wikipedia summaries (:mod:`training.answerability_wikipedia`)."""

    @staticmethod
    def run(held, f1, decision="answer", by="score", score=0.5, dataset="nq"):
        return {"dataset": dataset, "answerable": held, "f1": f1,
                "answerability": {"by": by, "decision": decision, "score": score, "features": {"support": score}}}

    def test_abstaining_scores_where_the_summaries_hold_no_answer(self):
        from training.answerability_wikipedia import figures

        runs = [self.run(True, 1.0), self.run(True, 0.4), self.run(False, 0.0), self.run(False, 1.0)]
        f = figures(runs, [False, True, True, False])
        # held and right: 1; held, withheld: 0; not held, withheld: 1; not held, answered (even right): 0
        assert f["f1"] == 50.0 and f["given"] == 2 and f["right_given"] == 1 and f["unheld_abstained"] == 50.0
        assert f["precision"] == 50.0

    def test_the_threshold_gives_no_fewer_right_answers_than_the_floor(self):
        from training.answerability_wikipedia import choose

        held, unheld = self.run(True, 1.0), self.run(False, 0.0)
        runs = [held, unheld, unheld, held, unheld, unheld]
        scores = {0: 0.9, 1: 0.5, 2: 0.45, 3: 0.4, 4: 0.2, 5: 0.1}
        best, figures = choose(runs, scores, min_right=0)
        assert best == 0.9 and figures["right_given"] == 1 and figures["f1"] == pytest.approx(500 / 6)
        floored, figures = choose(runs, scores, min_right=2)  # two wrong answers come with the second right one
        assert floored == 0.4 and figures["right_given"] == 2 and figures["f1"] == pytest.approx(400 / 6)

    def test_a_record_is_kept_as_given_before_the_check(self):
        from training.answerability_wikipedia import interleaved, trimmed

        record = {"dataset": "nq", "id": "nq-1", "question": "q?", "gold_answers": ["Paris"], "prediction": "",
                  "prediction_unchecked": "Lyon", "f1": 0.0, "f1_unchecked": 0.25,
                  "answerability": {"by": "score", "decision": "abstain", "score": 0.1, "features": {"support": 1.0},
                                    "withheld_answer": "Lyon"}}
        kept = trimmed(record, holds=True)
        assert kept["prediction"] == "Lyon" and kept["f1"] == 0.25 and kept["answerable"] is True
        assert "withheld_answer" not in kept["answerability"] and kept["answerability"]["score"] == 0.1
        assert interleaved([[1, 2, 3], ["a"]]) == [1, "a", 2, 3]

    def test_a_run_gives_the_answers_of_the_first_system_it_holds(self):
        from training.answerability_wikipedia import answers_of

        records = [{"system": s, "id": i} for i in ("a", "b") for s in ("cascade", "cascade-one-check")]
        # a run of both systems gives one answer per question: the first system listed that it holds
        assert [r["id"] for r in answers_of(records, ("cascade-one-check", "cascade"))] == ["a", "b"]
        assert {r["system"] for r in answers_of(records, ("cascade-one-check", "cascade"))} == {"cascade-one-check"}
        assert {r["system"] for r in answers_of(records[::2], ("cascade-one-check", "cascade"))} == {"cascade"}
        assert answers_of(records, ("baseline",)) == []

    def test_the_committed_model_is_what_the_committed_labels_fit(self, tmp_path):
        from components.answerability import WIKIPEDIA_MODEL
        from training.answerability_wikipedia import main

        assert main(["fit", "--model-out", str(tmp_path / "m.json"), "--report", str(tmp_path / "doc")]) == 0
        fitted, shipped = AnswerabilityModel.load(tmp_path / "m.json"), AnswerabilityModel.load(WIKIPEDIA_MODEL)
        assert fitted.features == shipped.features
        assert fitted.coef == pytest.approx(shipped.coef, rel=1e-6, abs=1e-9)  # Newton's method: rounding only
        assert fitted.threshold == pytest.approx(shipped.threshold, rel=1e-6)
        assert fitted.metadata["rule"] == shipped.metadata["rule"]
        assert "Threshold" in (tmp_path / "doc" / "README.md").read_text()


class TestCheckedAsMultiHop:
    """components.answerability.checked_as_multi_hop: the check's reading of a question, the answer's passage in hand."""

    @pytest.mark.parametrize("multi_hop, probability, coverage, read", [
        (True, 0.10, 0.5, False),  # weak, and one passage holds half the question: single-hop
        (True, 0.10, 0.4, True),  # the passage holds too little of the question
        (True, 0.15, 1.0, True),  # not weak: the bound is exclusive
        (True, None, 1.0, True),  # no probability: the reading stands
        (False, 0.01, 1.0, False),
        (None, None, 1.0, None),  # no reading was made
    ])
    def test_the_reading(self, multi_hop, probability, coverage, read):
        from components.answerability import checked_as_multi_hop

        assert checked_as_multi_hop(multi_hop, probability, {"question_coverage": coverage}) is read

    def test_an_answer_without_features_keeps_the_reading(self):
        from components.answerability import checked_as_multi_hop

        assert checked_as_multi_hop(True, 0.1, None) is True and checked_as_multi_hop(True, 0.1, {}) is True
