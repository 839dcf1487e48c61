"""Capping an answer's generated tokens (training.answer_cap): recorded answers, a word tokenizer."""

from training.answer_cap import answers, measure, report


def words(text):
    return text.split()


def join(tokens):
    return " ".join(tokens)


RUN = {"dataset": "squad", "question": "Who discovered radium?", "gold_answers": ["Marie Curie"],
       "grid": [{"budget": 128, "answer": "Marie Curie", "decode_passes": 3, "output_tokens": 3},
                {"budget": None, "answer": "It was discovered by Marie Curie and Pierre Curie in 1898", "decode_passes": 12,
                 "output_tokens": 12}]}


def test_a_cap_cuts_only_the_long_answers_and_counts_the_passes_it_saves():
    rows = answers([RUN], "cascade")
    assert [r["way"] for r in rows] == ["cascade at 128", "cascade at all"]
    capped = measure(rows, 4, words, join)
    short, long = capped[("cascade at 128", "squad")], capped[("cascade at all", "squad")]
    assert (short["cut"], short["saved"], short["f1"]) == (0, 0.0, short["f1_capped"])  # two words: not cut
    assert (long["cut"], long["saved"]) == (1, 8.0)  # twelve passes, four kept
    assert long["f1_capped"] < long["f1"]  # "It was discovered by" has lost the answer


def test_the_report_names_the_caps_that_lose_nothing():
    rows = answers([RUN], "cascade")
    text = report({4: measure(rows, 4, words, join), 40: measure(rows, 40, words, join)}, [])
    assert "Caps that lose no F1 anywhere: 40." in text and "| 4 | cascade at all | squad | 1 |" in text
