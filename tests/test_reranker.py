import numpy as np
import pytest

from components.passages import Passage
from components.reranker import CrossEncoderReranker, HybridReranker, RetrievalOrder, content_terms, load_reranker

PASSAGES = [
    Passage("a", "Jupiter", "Jupiter is the fifth planet from the Sun."),
    Passage("b", "Eiffel Tower", "The Eiffel Tower was built from 1887 to 1889 by Gustave Eiffel's company."),
]


class TestHybridReranker:
    def test_lexical_and_title_evidence_lift_the_right_passage(self):
        # equal dense scores: BM25 and title overlap must decide
        scores = HybridReranker().score("When was the Eiffel Tower built?", PASSAGES, [0.5, 0.5])
        assert scores[1] > scores[0]
        assert all(0.0 <= s <= 1.0 for s in scores)

    def test_dense_only_when_no_term_matches(self):
        scores = HybridReranker().score("xyzzy", PASSAGES, [0.9, 0.1])
        assert scores[0] > scores[1]

    def test_empty(self):
        assert HybridReranker().score("q", [], []) == []

    def test_length_mismatch(self):
        with pytest.raises(ValueError, match="dense scores"):
            HybridReranker().score("q", PASSAGES, [0.1])

    @pytest.mark.parametrize("weights", [(-1, 1, 1), (0, 0, 0)])
    def test_invalid_weights(self, weights):
        with pytest.raises(ValueError):
            HybridReranker(*weights)


class TestRetrievalOrder:
    def test_keeps_the_dense_order_whatever_the_words(self):
        # the hybrid would lift the passage that repeats the question's words; the retrieval order does not
        question, dense = "When was the Eiffel Tower built?", [0.52, 0.5]
        assert HybridReranker().score(question, PASSAGES, dense)[1] > HybridReranker().score(question, PASSAGES, dense)[0]
        assert RetrievalOrder().score(question, PASSAGES, dense) == dense

    def test_empty_and_mismatch(self):
        assert RetrievalOrder().score("q", [], []) == []
        with pytest.raises(ValueError, match="dense scores"):
            RetrievalOrder().score("q", PASSAGES, [0.1])


class TestLearnedReranker:
    """The learned reranker: its features, its model file and the ranking its weights give."""

    @staticmethod
    def model(**coef):
        """A model file's content weighing only the features named (every scale 1, every mean 0)."""
        from components.reranker import RANK_FEATURES, RankerModel

        names = tuple(RANK_FEATURES)
        return RankerModel(names, (0.0,) * len(names), (1.0,) * len(names), tuple(coef.get(n, 0.0) for n in names), 0.0)

    def test_the_features_are_one_row_per_candidate_in_the_model_s_order(self):
        from components.reranker import RANK_FEATURES, rank_features

        question, dense = "When was the Eiffel Tower built?", [0.5, 0.3]
        rows = rank_features(question, PASSAGES, dense)
        assert rows.shape == (2, len(RANK_FEATURES))
        named = [dict(zip(RANK_FEATURES, row, strict=True)) for row in rows]
        assert rows[:, :3].tolist() == HybridReranker().features(question, PASSAGES, dense).tolist()
        assert [n["inverse_rank"] for n in named] == [1.0, 0.5]
        assert [n["when_year"] for n in named] == [0.0, 1.0]  # "1887": a year, asked when
        assert [n["word_share"] for n in named] == [0.0, 1.0]  # "eiffel", "tower", "built": all in the second
        assert [n["word_share_gap"] for n in named] == [-1.0, 0.0]
        assert named[1]["dense_gap"] == pytest.approx(-0.2, abs=1e-12) and named[0]["dense_gap"] == 0.0
        assert not any(n["count_number"] or n["who_name"] or n["where_name"] or n["other_question"] for n in named)
        assert rank_features("q", [], []).shape == (0, len(RANK_FEATURES))

    @pytest.mark.parametrize("question, kind", [
        ("When did Apollo 11 land?", "when"), ("In what year was it built?", "when"),
        ("How many moons has Mars?", "count"), ("What percentage voted?", "count"),
        ("Who wrote Hamlet?", "who"), ("Where is Timbuktu?", "where"), ("What is the capital of France?", "other")])
    def test_what_a_question_asks_for(self, question, kind):
        from components.reranker import asked_kind

        assert asked_kind(question) == kind

    def test_its_weights_decide_the_order(self):
        from components.reranker import LearnedReranker

        question, dense = "When was the Eiffel Tower built?", [0.52, 0.5]
        assert LearnedReranker(self.model(inverse_rank=1.0)).score(question, PASSAGES, dense) == [1.0, 0.5]
        by_year = LearnedReranker(self.model(when_year=2.0)).score(question, PASSAGES, dense)
        assert by_year[1] > by_year[0]
        with pytest.raises(ValueError, match="dense scores"):
            LearnedReranker(self.model()).score(question, PASSAGES, [0.1])
        assert LearnedReranker(self.model()).score(question, [], []) == []

    def test_the_shipped_model_loads_by_name_and_says_what_it_was_fit_on(self):
        from components.reranker import RANK_FEATURES, LearnedReranker

        reranker = load_reranker("learned")
        assert isinstance(reranker, LearnedReranker) and reranker.name == "learned"
        reranker.warm_up()
        assert reranker.model is not None and set(reranker.model.features) == set(RANK_FEATURES)
        assert reranker.model.metadata["fit_on"] == ["squad train"]  # the one corpus it ranks for (session 77)
        assert reranker.fingerprint == reranker.model.fingerprint != LearnedReranker(self.model()).fingerprint

    def test_a_bad_model_file_is_refused_with_its_path(self, tmp_path):
        from components.reranker import RankerModel, RerankerModelError

        with pytest.raises(RerankerModelError, match="learned reranker not found"):
            RankerModel.load(tmp_path / "none.json")
        bad = tmp_path / "bad.json"
        bad.write_text('{"features": ["colour"], "mean": [0], "scale": [1], "coef": [1], "intercept": 0}')
        with pytest.raises(RerankerModelError, match="unknown feature"):
            RankerModel.load(bad)

    def test_a_subset_of_features_in_any_order_is_read_by_name(self):
        from components.reranker import RANK_FEATURES, RankerModel, rank_features

        model = RankerModel(("when_year", "inverse_rank"), (0.0, 0.0), (1.0, 1.0), (2.0, 1.0), 0.5)
        rows = rank_features("When was the Eiffel Tower built?", PASSAGES, [0.52, 0.5])
        named = [dict(zip(RANK_FEATURES, row, strict=True)) for row in rows]
        assert model.logits(rows).tolist() == [0.5 + 2 * n["when_year"] + n["inverse_rank"] for n in named]


def test_content_terms_drop_stopwords():
    assert content_terms("Who was the first man on the Moon?") == {"first", "man", "moon"}


def test_a_cross_encoder_that_cannot_load_says_so(tmp_path):
    from components.reranker import RerankerError

    with pytest.raises(RerankerError, match="could not load reranker .*offline rerankers: retrieval-order, hybrid"):
        CrossEncoderReranker(str(tmp_path / "no-such-model")).warm_up()


def test_load_reranker():
    assert isinstance(load_reranker(None), RetrievalOrder) and load_reranker(None).name == "retrieval-order"
    assert isinstance(load_reranker("retrieval-order"), RetrievalOrder)
    assert isinstance(load_reranker("hybrid"), HybridReranker)
    assert load_reranker("learned").name == "learned"
    assert isinstance(load_reranker("some/cross-encoder"), CrossEncoderReranker)
    with pytest.raises(ValueError):
        CrossEncoderReranker(" ")


class TestCandidateMeasurement:
    """training.rerank: the five passages each ordering keeps, and what counts as relevant."""

    def hits(self):
        from types import SimpleNamespace

        filler = [Passage(f"f{i}", f"Filler {i}", f"Unrelated text number {i}.") for i in range(5)]
        # the passage that answers ranks sixth by dense score: only a reranker given ten candidates can keep it
        ordered = [*filler, PASSAGES[1], PASSAGES[0]]
        return [SimpleNamespace(passage=p, score=0.5 - 0.01 * i) for i, p in enumerate(ordered)]

    def test_more_candidates_let_the_reranker_keep_a_passage_dense_rank_left_out(self):
        from training.rerank import kept_five

        question, hits = "When was the Eiffel Tower built?", self.hits()
        assert [p.id for p in kept_five(question, hits, None, HybridReranker())] == ["f0", "f1", "f2", "f3", "f4"]
        assert "b" not in [p.id for p in kept_five(question, hits, 5, HybridReranker())]
        assert kept_five(question, hits, 10, HybridReranker())[0].id == "b"

    def test_relevance_is_a_gold_answer_or_a_gold_title(self):
        from eval.datasets import Example
        from training.rerank import relevance

        squad = Example("q1", "When was it built?", ("1887 to 1889",), "squad", evidence={"titles": ("Jupiter",)})
        hotpot = Example("q2", "Which is bigger?", ("Jupiter",), "hotpotqa", evidence={"titles": ("Jupiter",)})
        assert [relevance(squad)(p) for p in PASSAGES] == [False, True]
        assert [relevance(hotpot)(p) for p in PASSAGES] == [True, False]


class TestWeightsFit:
    """training.rerank weights: the grid fit on one half of the questions, reported on the other."""

    @staticmethod
    def row(dataset: str, held_out: bool, relevant_first_by: str):
        """Two candidates: the relevant one wins on dense similarity or on BM25, as ``relevant_first_by`` says."""
        from training.rerank import Scored

        dense_wins = relevant_first_by == "dense"
        features = np.array([[0.9 if dense_wins else 0.6, 0.0 if dense_wins else 1.0, 0.0],
                             [0.6 if dense_wins else 0.9, 1.0 if dense_wins else 0.0, 0.0]])
        return Scored(dataset, held_out, features, np.array([True, False]), ("A", "B"), frozenset())

    def test_features_weighed_are_the_score(self):
        reranker = HybridReranker(0.7, 0.2, 0.1)
        question, dense = "When was the Eiffel Tower built?", [0.5, 0.3]
        features = reranker.features(question, PASSAGES, dense)
        assert features.shape == (2, 3)
        assert reranker.weigh(features).tolist() == pytest.approx(reranker.score(question, PASSAGES, dense), abs=1e-12)

    def test_the_halves_split_squad_by_article(self):
        from eval.datasets import Example
        from training.rerank import held_out

        questions = [Example(f"q{i}", "?", ("a",), "squad", meta={"title": "Jupiter"}) for i in range(20)]
        assert len({held_out(e) for e in questions}) == 1
        assert len({held_out(Example(f"q{i}", "?", ("a",), "hotpotqa")) for i in range(20)}) == 2

    def test_rates_follow_the_weights(self):
        from training.rerank import rates

        rows = [self.row("squad", False, "dense")]
        assert rates(rows, (1.0, 0.0, 0.0)) == [100.0, 100.0, 100.0]
        assert rates(rows, (0.1, 1.0, 0.0))[0] == 0.0

    def test_the_fit_chooses_on_the_fit_half_and_reports_the_other(self):
        from training.rerank import fit_weights

        # the fit half rewards dense weight; the held-out half rewards BM25, so the chosen triple loses there
        rows = [self.row("squad", False, "dense"), self.row("hotpotqa", False, "dense"),
                self.row("squad", True, "bm25"), self.row("hotpotqa", True, "bm25")]
        fit = fit_weights(rows, grid=[(0.1, 1.0, 0.0), (1.0, 0.0, 0.0), (1.0, 0.1, 0.0)], shipped=(0.1, 1.0, 0.0))
        assert fit["chosen"]["weights"] == [1.0, 0.1, 0.0]  # ties with (1.0, 0.0, 0.0): nearer the shipped triple
        assert fit["chosen"]["fit"]["squad"][0] == 100.0
        assert fit["chosen"]["held_out"]["squad"][0] == 0.0
        assert fit["shipped"]["held_out"]["squad"][0] == 100.0
        assert fit["questions"] == {"hotpotqa": {"fit": 1, "held_out": 1}, "squad": {"fit": 1, "held_out": 1}}

    def test_the_wikipedia_fit_counts_where_the_order_can_matter(self):
        """--knowledge-base wikipedia: most questions have no relevant candidate; the report also counts the
        rest alone, and how often each order puts a relevant passage first where the other does not."""
        from training.rerank import Scored, fit_weights, weights_report, where_relevant

        nothing = Scored("nq", False, np.array([[0.9, 1.0, 0.0], [0.6, 0.0, 0.0]]), np.array([False, False]),
                         ("A", "B"), frozenset())
        rows = [self.row("nq", False, "dense"), self.row("nq", True, "dense"), nothing]
        fit = fit_weights(rows, grid=[(1.0, 0.0, 0.0), (0.1, 1.0, 0.0)], shipped=(0.1, 1.0, 0.0))
        assert fit["chosen"]["weights"] == [1.0, 0.0, 0.0]
        fit["where_relevant"] = where_relevant(rows, fit)
        assert fit["where_relevant"]["chosen"]["nq"] == {"questions": 2, "rates": [100.0, 100.0, 100.0], "first_only": 2}
        assert fit["where_relevant"]["shipped"]["nq"] == {"questions": 2, "rates": [0.0, 100.0, 100.0], "first_only": 0}
        report = weights_report(fit, "wikipedia")
        assert "--knowledge-base wikipedia" in report and "| chosen (1.0, 0.0, 0.0) | nq | 2 | 100.0 |" in report


class TestLearnedFit:
    """training.rerank learned: the logistic fit on every candidate, scored on the half it was not fit on."""

    @staticmethod
    def row(dataset: str, held_out: bool, relevant_first: bool):
        """Two candidates told apart by ``when_year`` alone; the relevant one first by dense rank or second."""
        from components.reranker import RANK_FEATURES
        from training.rerank import Scored

        features = np.zeros((2, len(RANK_FEATURES)))
        year = list(RANK_FEATURES).index("when_year")
        features[0 if relevant_first else 1, year] = 1.0
        features[:, 0] = [0.9, 0.8]
        return Scored(dataset, held_out, features, np.array([relevant_first, not relevant_first]), ("A", "B"), frozenset())

    def test_the_fit_learns_the_feature_that_marks_the_relevant_candidate(self):
        from training.rerank import fit_ranker, ranked

        rows = [self.row("squad", h, first) for h in (False, True) for first in (True, False) for _ in range(5)]
        model = fit_ranker(rows, {"fit_on": ["squad train"]})
        assert dict(zip(model.features, model.coef, strict=True))["when_year"] > 0
        assert ranked(rows, model.logits) == [100.0, 100.0, 100.0]

    def test_each_half_is_scored_by_a_fit_on_the_other_and_the_runs_by_a_fit_on_all(self):
        from training.rerank import learned_fit, learned_report

        rows = [self.row(d, h, first) for d in ("squad", "hotpotqa") for h in (False, True)
                for first in (True, False) for _ in range(3)]
        held = [self.row("squad", False, False) for _ in range(4)]
        model, figures = learned_fit(rows, held)
        assert set(figures["halves"]) == {"hotpotqa, half 0", "hotpotqa, half 1", "squad, half 0", "squad, half 1"}
        assert figures["halves"]["squad, half 1"] == {"questions": 6, "hybrid": [50.0, 100.0, 100.0],
                                                      "learned": [100.0, 100.0, 100.0]}
        # the hybrid keeps the dense order here: the relevant candidate is second on each of the held questions
        assert figures["committed_runs"] == {"questions": 4, "hybrid": [0.0, 100.0, 100.0], "learned": [100.0, 100.0, 100.0]}
        assert model.metadata["questions"] == {"hotpotqa": 12, "squad": 12}
        report = learned_report(model, figures)
        assert "| squad, half 1 | 6 | learned | 100.0 | 100.0 | 100.0 |" in report and "| when_year | +" in report
        assert "fit on the answerable HotpotQA (12) and SQuAD 2.0 (12) train questions" in report

    def test_another_fit_is_scored_beside_it_question_by_question(self):
        from components.reranker import RankerModel
        from training.rerank import learned_fit, learned_report, paired_first

        rows = [self.row("squad", h, first) for h in (False, True) for first in (True, False) for _ in range(3)]
        held = [self.row("squad", False, first) for first in (False, False, False, True)]
        # a fit that learned nothing but the dense order: it gets only the held question whose relevant candidate is first
        dense_only = RankerModel(("dense",), (0.0,), (1.0,), (1.0,), 0.0, {"fit_on": ["squad train"]})
        model, figures = learned_fit(rows, held, against=dense_only)
        against = figures["committed_runs"]["against"]
        assert against["fit_on"] == ["squad train"] and against["figures"] == [25.0, 100.0, 100.0]
        assert (against["first_relevant_gain"], against["wins"], against["losses"]) == (75.0, 3, 0)
        assert against["standard_error"] == pytest.approx(25.0)  # three gains of 1 and one of 0: sd 0.5, over 2
        assert "first relevant +75.00 points (standard error 25.00, paired), 3 questions only this fit" \
            in learned_report(model, figures)
        assert "against" not in learned_fit(rows, held)[1]["committed_runs"]
        assert paired_first(held, model.logits, model.logits) == {"first_relevant_gain": 0.0, "standard_error": 0.0,
                                                                  "wins": 0, "losses": 0}

    def test_the_shipped_fit_is_on_squad_alone_and_fit_on_takes_only_the_corpora_it_knows(self):
        from training.rerank import LEARNED_FIT_ON, main

        assert LEARNED_FIT_ON == ("squad",)
        with pytest.raises(SystemExit):
            main(["learned", "--fit-on", "nq"])


class TestArticleRankers:
    """training.rerank.article_rankers: the learned reranker cross-fitted by SQuAD 2.0 article, for the check's
    recording (training.answer_probe record --cross-fit-reranker)."""

    TITLES = [f"Article {n}" for n in range(12)]

    def test_the_folds_deal_the_articles_evenly_and_the_same_way_every_time(self):
        from training.rerank import article_folds

        folds = article_folds(self.TITLES * 2, 5)
        assert set(folds) == set(self.TITLES)
        assert sorted(list(folds.values()).count(f) for f in range(5)) == [2, 2, 2, 3, 3]
        assert article_folds(list(reversed(self.TITLES)), 5) == folds
        with pytest.raises(ValueError, match="at least 2 folds"):
            article_folds(self.TITLES, 1)
        with pytest.raises(ValueError, match="3 articles cannot fill 5 folds"):
            article_folds(self.TITLES[:3], 5)

    def test_each_articles_reranker_is_fit_without_its_fold_on_the_named_answerable_questions(self, monkeypatch):
        import eval.runner
        import training.rerank as rerank
        from eval.datasets import Example

        questions = [Example(f"{t}-{k}", "When?", ("1889",) if k != 2 else (), "squad", meta={"title": t})
                     for t in self.TITLES for k in range(3)]  # the third of each article is unanswerable
        unnamed = {"Article 0-1"}  # a question the labels do not name is no one's training question
        monkeypatch.setattr(eval.runner, "seen_questions", lambda paths: {q.id for q in questions} - unnamed)
        monkeypatch.setattr(rerank, "scored", lambda examples, index, embedder, features: [
            rerank.Scored("squad", False, np.zeros((1, 1)), np.array([True]), (e.meta["title"], e.id), frozenset())
            for e in examples])
        monkeypatch.setattr(rerank, "fit_ranker", lambda rows, metadata: (frozenset(r.titles[1] for r in rows), metadata))

        fits = rerank.article_rankers(questions, index=None, embedder=None, folds=4)
        folds = rerank.article_folds(self.TITLES, 4)
        assert set(fits) == set(self.TITLES)
        for title, (fit_on, metadata) in fits.items():
            expected = {q.id for q in questions if q.answerable and q.id not in unnamed
                        and folds[q.meta["title"]] != folds[title]}
            assert fit_on == expected
            assert metadata["cross_fit"] == f"articles outside fold {folds[title]} of 4"
