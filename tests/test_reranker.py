import pytest

from components.passages import Passage
from components.reranker import CrossEncoderReranker, HybridReranker, content_terms, load_reranker

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


def test_content_terms_drop_stopwords():
    assert content_terms("Who was the first man on the Moon?") == {"first", "man", "moon"}


def test_load_reranker():
    assert isinstance(load_reranker(None), HybridReranker)
    assert isinstance(load_reranker("some/cross-encoder"), CrossEncoderReranker)
    with pytest.raises(ValueError):
        CrossEncoderReranker(" ")
