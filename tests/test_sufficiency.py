"""The sufficiency scorer (components.sufficiency), its training (training.sufficiency), and its
feature in the answerability check, its fit and the rescoring of recorded runs."""

import json
from dataclasses import replace

import pytest
from langgraph.runtime import Runtime

from components.answerability import SUFFICIENCY, AnswerabilityModel
from components.sufficiency import CARD, DEFAULT_SCORER, WEIGHTS, SufficiencyModelError, SufficiencyScorer, pair_text
from nodes.check_answer import check_answer
from training.sufficiency import holds_answer

CAPITAL = "What is the capital of France?"
HOLDS = ["Paris is the capital and largest city of France.", "France is a country in Western Europe."]
UNRELATED = ["The mitochondrion is an organelle found in most eukaryotic cells.",
             "Photosynthesis converts light energy into chemical energy."]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A scorer trained for two steps on four rows, saved and loaded back (no shipped weights involved)."""
    from training.sufficiency import save, train

    rows = [{"question": CAPITAL, "passages": HOLDS, "label": True},
            {"question": CAPITAL, "passages": UNRELATED, "label": False}] * 2
    model, _, head = train(rows, epochs=8, layers=(5,), max_length=64, batch_size=2, log=lambda _: None)
    out = tmp_path_factory.mktemp("scorer")
    save(model, head, out, {"name": "test", "base": "all-MiniLM-L6-v2", "max_length": 64, "trained_layers": [5]})
    return out


class TestSufficiencyScorer:
    def test_a_saved_scorer_loads_and_scores_probabilities(self, trained):
        scorer = SufficiencyScorer(trained)
        p = scorer.score(CAPITAL, HOLDS)
        assert 0.0 < p < 1.0
        assert scorer.score(CAPITAL, []) == 0.0 and scorer.score(CAPITAL, ["  "]) == 0.0  # nothing to read
        # batched (padded) and one at a time agree: padding is masked out of the pooling
        batch = scorer.score_batch([(CAPITAL, HOLDS), (CAPITAL, []), ("Who wrote Hamlet?", UNRELATED)])
        assert batch[0] == pytest.approx(p, abs=1e-4) and batch[1] == 0.0
        assert batch[2] == pytest.approx(scorer.score("Who wrote Hamlet?", UNRELATED), abs=1e-4)

    def test_only_the_trained_tensors_are_stored(self, trained):
        from safetensors import safe_open

        with safe_open(str(trained / WEIGHTS), "pt") as fh:
            keys = set(fh.keys())
        assert keys and all(k.startswith(("encoder.layer.5.", "head.")) for k in keys)
        assert {"head.weight", "head.bias"} <= keys

    def test_a_missing_folder_or_card_says_so(self, tmp_path):
        with pytest.raises(SufficiencyModelError, match="no card.json"):
            SufficiencyScorer(tmp_path / "nowhere")

    @pytest.mark.parametrize("card, message", [("{not json", "cannot read"), ("[1]", "not a JSON object"),
                                               ('{"base": "x"}', "lacks a valid"),
                                               ('{"base": "x", "max_length": 4, "trained_layers": []}', "max_length")])
    def test_a_corrupt_card_says_what_is_wrong(self, tmp_path, card, message):
        (tmp_path / CARD).write_text(card)
        (tmp_path / WEIGHTS).write_bytes(b"")
        with pytest.raises(SufficiencyModelError, match=message):
            SufficiencyScorer(tmp_path)

    def test_weights_that_do_not_fit_the_base_are_refused(self, tmp_path, trained):
        import torch
        from safetensors.torch import save_file

        (tmp_path / CARD).write_text((trained / CARD).read_text())
        save_file({"encoder.layer.5.output.dense.weight": torch.zeros(3, 3), "head.weight": torch.zeros(1, 384),
                   "head.bias": torch.zeros(1)}, str(tmp_path / WEIGHTS))
        with pytest.raises(SufficiencyModelError, match="does not fit"):
            SufficiencyScorer(tmp_path).warm_up()
        (tmp_path / WEIGHTS).write_bytes(b"corrupt")
        with pytest.raises(SufficiencyModelError, match="cannot read"):
            SufficiencyScorer(tmp_path).warm_up()

    def test_the_shipped_scorer_was_trained_on_train_only_and_reads_the_evidence(self):
        card = json.loads((DEFAULT_SCORER / CARD).read_text())
        assert card["trained_on"]["dataset"] == "squad train articles"
        assert card["held_out"]["squad_questions"] > 0
        scorer = SufficiencyScorer()
        # a passage that states the answer against ones about something else: a wide margin, not a rounding
        assert scorer.score(CAPITAL, HOLDS) > scorer.score(CAPITAL, UNRELATED) + 0.2

    def test_pair_text_joins_the_passages_in_order(self):
        assert pair_text([" a. ", "", "b."]) == "a. b."


class TestTraining:
    def test_holds_answer_normalises(self):
        assert holds_answer(["the Eiffel Tower"], ["It stands near eiffel tower, in Paris."])
        assert not holds_answer(["Lyon"], HOLDS) and not holds_answer([], HOLDS) and not holds_answer(["a"], HOLDS)

    def test_training_moves_the_scores_apart(self, trained):
        scorer = SufficiencyScorer(trained)
        assert scorer.score(CAPITAL, HOLDS) > scorer.score(CAPITAL, UNRELATED)

    def test_held_out_figures(self):
        from training.sufficiency import held_out_figures

        records = [{"dataset": "squad", "answerable": True, "label": True, "f1": 1.0},
                   {"dataset": "squad", "answerable": False, "label": False, "f1": 0.0},
                   {"dataset": "hotpotqa", "answerable": True, "label": True, "f1": 1.0},
                   {"dataset": "hotpotqa", "answerable": True, "label": False, "f1": 0.0}]
        fig = held_out_figures(records, [0.9, 0.2, 0.6, 0.4])
        assert fig["auroc_label_squad"] == 1.0 and fig["auroc_answerable_squad"] == 1.0
        assert fig["auroc_answer_right_hotpotqa"] == 1.0
        assert fig["mean_score"] == {"squad answerable": 0.9, "squad unanswerable": 0.2, "hotpotqa": 0.5}


class FakeScorer:
    """Scores by whether the question's last word is in the passages; records what it read."""

    def __init__(self):
        self.read = []

    def score(self, question, passages):
        self.read.append((question, list(passages)))
        return 0.9 if question.rstrip("?").split()[-1].lower() in " ".join(passages).lower() else 0.1


class TestCheckAnswer:
    STEP = {"tier": "medium", "answer": "Paris", "raw_output": "Paris [1]", "abstained": False, "abstain_prob": 0.05,
            "confidence": {"min_prob": 0.5, "first_prob": 0.6, "first_margin": 0.2, "mean_logprob": -0.4,
                           "neg_mean_entropy": -1.0}}
    EVIDENCE = [{"n": 1, "passage_id": "p1", "title": "Paris", "text": "Paris is the capital of France."}]

    def state(self, question=CAPITAL):
        return {"question": question, "answer": "Paris", "steps": [self.STEP], "citations": [],
                "evidence": self.EVIDENCE, "settings": {"abstain_threshold": 0.5, "layout": "question_first"},
                "escalations": 0, "passages": [{"id": "p1", "score": 0.7, "text": "Paris is the capital of France."},
                                               {"id": "p2", "score": 0.5, "text": "Lyon is a city."}]}

    @staticmethod
    def model():
        return AnswerabilityModel((SUFFICIENCY,), (0.5,), (0.25,), (3.0,), 0.0, {"threshold": 0.5})

    def test_the_scorer_reads_the_question_and_every_retrieved_passage(self, ctx):
        scorer = FakeScorer()
        runtime = Runtime(context=replace(ctx, answerability=self.model(), sufficiency=scorer))
        check = check_answer(self.state(), runtime)["trace"]["answerability"]
        assert scorer.read == [(CAPITAL, ["Paris is the capital of France.", "Lyon is a city."])]
        assert check["features"][SUFFICIENCY] == 0.9 and check["decision"] == "answer" and check["sufficiency_ms"] >= 0
        out = check_answer(self.state("What is the capital of Peru?"), runtime)
        assert out["trace"]["answerability"]["decision"] == "abstain"  # the passages do not hold it

    def test_a_model_that_needs_the_scorer_without_one_leaves_the_answer_unchecked(self, ctx):
        runtime = Runtime(context=replace(ctx, answerability=self.model(), sufficiency=None))
        check = check_answer(self.state(), runtime)["trace"]["answerability"]
        assert check["by"] == "unchecked" and "sufficiency scorer" in check["reason"]


class TestFitAndRescore:
    @staticmethod
    def run(features, dataset="squad"):
        return {"dataset": dataset, "answerability": {"by": "score", "features": features}}

    def test_the_scorer_is_a_candidate_only_when_every_answer_has_its_feature(self):
        from training.answerability import candidate_extras

        assert (SUFFICIENCY,) in candidate_extras([self.run({SUFFICIENCY: 0.3}), self.run({SUFFICIENCY: 0.8})])
        assert all(SUFFICIENCY not in e for e in candidate_extras([self.run({SUFFICIENCY: 0.3}), self.run({})]))

    def test_the_time_added_counts_the_scorers_pass(self):
        from training.answerability import time_added

        runs = [{"latency_ms": 1000.0, "answerability": {"self_check_ms": 0.0, "sufficiency_ms": 50.0}}] * 3
        assert time_added(runs, 0) == 0.0 and time_added(runs, 0, sufficiency=True) == pytest.approx(5.0)

    def test_rescoring_adds_the_feature_from_the_recorded_passages(self):
        from eval.rescore import with_sufficiency

        texts = {("squad", "p1"): "Paris is the capital of France.", ("squad", "p2"): "Lyon is a city."}
        records = [{"dataset": "squad", "question": CAPITAL, "passages": [{"id": "p1"}, {"id": "p2"}],
                    "answerability": {"by": "score", "features": {"support": 1.0}}},
                   {"dataset": "squad", "question": CAPITAL, "passages": [{"id": "p1"}],
                    "answerability": {"by": "score", "features": {SUFFICIENCY: 0.42}}},  # has it: kept
                   {"dataset": "squad", "question": CAPITAL, "passages": [],
                    "answerability": {"by": "model", "features": {}}}]  # the model's own abstention: nothing to score
        scorer = FakeScorer()
        out = with_sufficiency(records, scorer.score, lambda d, pid: texts[(d, pid)])
        assert out[0]["answerability"]["features"] == {"support": 1.0, SUFFICIENCY: 0.9}
        assert out[1] == records[1] and out[2] == records[2]
        assert scorer.read == [(CAPITAL, ["Paris is the capital of France.", "Lyon is a city."])]
        assert "answerability" in records[0] and SUFFICIENCY not in records[0]["answerability"]["features"]  # not mutated

    def test_the_sufficiency_variant_of_the_check_ships_as_an_option(self):
        from components.answerability import DEFAULT_MODEL
        from training.answerability import SUFFICIENCY_MODEL

        option = AnswerabilityModel.load(SUFFICIENCY_MODEL)
        assert option.uses_sufficiency and not AnswerabilityModel.load(DEFAULT_MODEL).uses_sufficiency
        assert all(s.endswith(" train") for s in option.metadata["fit_on"])
        assert option.metadata["loss_confidence"] == 0.9

    def test_cross_fitted_scores_replace_the_recorded_feature_and_its_time(self):
        from training.answerability import with_scores

        runs = [{"id": "q1", **self.run({"support": 1.0, SUFFICIENCY: 0.99})}, {"id": "q2", **self.run({})}]
        out = with_scores(runs, {"q1": 0.2, "q2": 0.7, "other": 0.5}, score_ms=30.0)
        assert [r["answerability"]["features"].get(SUFFICIENCY) for r in out] == [0.2, 0.7]
        assert out[0]["answerability"]["features"]["support"] == 1.0
        assert all(r["answerability"]["sufficiency_ms"] == 30.0 for r in out)
        assert runs[0]["answerability"]["features"][SUFFICIENCY] == 0.99  # not mutated

    def test_a_question_without_a_cross_fitted_score_stops_the_fit(self, tmp_path):
        from training.answerability import read_scores, with_scores

        with pytest.raises(SystemExit, match="1 recorded questions have no cross-fitted"):
            with_scores([{"id": "q1", **self.run({})}], {}, score_ms=30.0)
        with pytest.raises(SystemExit, match="--cross-fit 2"):
            read_scores(tmp_path / "absent.jsonl")
        path = tmp_path / "scores.jsonl"
        path.write_text('{"id": "q1", "dataset": "squad", "fold": 0, "sufficiency": 0.25}\n', encoding="utf-8")
        assert read_scores(path) == {"q1": 0.25}

    def test_article_folds_deal_every_article_to_one_fold(self):
        from training.sufficiency import article_folds

        titles = ["Normans", "Amazon", "Normans", "Oxygen", "Victoria", "Amazon"]
        folds = article_folds(titles, 2)
        assert folds == {"Amazon": 0, "Normans": 1, "Oxygen": 0, "Victoria": 1}
        assert article_folds(list(reversed(titles)), 2) == folds  # order-free
        assert set(article_folds(titles, 3).values()) == {0, 1, 2}

    def test_a_single_fold_is_refused(self, capsys):
        from training.sufficiency import main

        with pytest.raises(SystemExit):
            main(["--cross-fit", "1"])
        assert "at least 2 folds" in capsys.readouterr().err
