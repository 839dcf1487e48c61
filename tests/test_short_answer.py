"""The short-answer cut (components.short_answer), its train fit (training.short_answer), and the
check_answer node giving the short form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from components.short_answer import ShortAnswer, as_written, numbers_as_written, separators_as_written, short_answer
from training import short_answer as fitting

QUESTION = "Who introduced plague to Europe?"
SENTENCE = "The Black Death was introduced to Europe by Genoese traders."


class TestShortAnswer:
    def test_a_sentence_restating_the_question_keeps_its_new_words(self):
        assert short_answer(QUESTION, SENTENCE) == "Genoese traders"
        assert short_answer("Against whom did the Camisards rise up to fight?",
                            "The Camisards rose up to fight against the Catholic Church.") == "Catholic Church"

    def test_the_run_with_the_most_new_words_wins_and_the_later_on_a_tie(self):
        cut = ShortAnswer(min_words=1)
        # "Black Death" and "Genoese traders": two new words each; the later run is the answer
        assert cut(QUESTION, "Black Death introduced Europe Genoese traders") == "Genoese traders"
        assert cut(QUESTION, "Black Death introduced Europe by Genoese traders and ships") == "Genoese traders and ships"

    @pytest.mark.parametrize("answer", [
        "Genoese traders",  # shorter than min_words
        "Merchants sailing from Kaffa brought rats carrying fleas to ports",  # no word of the question
        "Plague was introduced to Europe, introduced to Europe.",  # nothing new in any run
        "I cannot answer from the evidence.",
    ])
    def test_answers_it_cannot_shorten_are_kept_as_written(self, answer):
        assert short_answer(QUESTION, answer) == answer

    @pytest.mark.parametrize("question", [
        "What do the club rules say about guests?", "What does the handbook say about holidays?",
        "Summarize the rules on guests", "Describe the rules on guests", "Explain the rules on guests",
    ])
    def test_an_answer_to_a_question_that_asks_what_a_text_says_is_kept_as_written(self, question):
        """Found trying the chat (session 62): "What do the club rules say about guests?" was answered in
        three sentences and shown cut to two, "clubhouse" sharing "club" with the question. Such a question
        asks for what the text says, not for a name or a date inside a restated question."""
        answer = ("Members may bring two at a time. They must sign the book in the clubhouse. "
                  "Members under 18 pay half.")
        assert short_answer(question, answer) == answer
        assert short_answer("Where must club guests sign?", answer) != answer  # a question for a span is still cut

    def test_an_answer_to_a_question_that_asks_two_things_is_kept_as_written(self):
        """Session 67: a question that asks two things ("Who wrote Hamlet and when was it written?") is answered
        with both, separated by a semicolon; the cut keeps one run, so it would give back one of them."""
        question, answer = "Who wrote Hamlet and when was it written?", "Hamlet was written by Shakespeare; in 1600"
        assert short_answer(question, answer) == answer
        assert short_answer("Who wrote Hamlet?", "Hamlet was written by Shakespeare; in 1600") != answer

    @pytest.mark.parametrize("question, answer, short", [
        ("Does the Kettle K200's warranty last two years?", "Yes, it lasts two years from purchase.", "Yes"),
        ("Can the Kettle K200 go in the dishwasher?", "No. It should be wiped with a damp cloth instead.", "No"),
        ("Are the ovens cleaned every Friday after closing?", "yes - they are cleaned every Friday after closing", "yes"),
    ])
    def test_a_yes_or_no_question_answered_with_a_verdict_keeps_the_verdict(self, question, answer, short):
        """Found asking yes/no questions of a kettle's manual (session 64): "Does the Kettle K200's warranty last
        two years?" was answered "Yes, it lasts two years from purchase." and shown "purchase", the run of new
        words after the restated question, which ties with "Yes" and is the later."""
        assert short_answer(question, answer) == short

    @pytest.mark.parametrize("question, answer", [
        ("Who made the Kettle K200's warranty last two years?", "Yes, the maker made it last two years from purchase."),
        ("Does the Kettle K200's warranty last two years?", "Yes, two years."),  # shorter than min_words: as written
        ("Does the warranty last two years or three years?", "Yes, the warranty lasts two years from purchase."),
        ("Does the Kettle K200's warranty last two years?", "Yesterday's models lasted two years from purchase."),
    ])
    def test_only_a_verdict_that_opens_an_answer_to_a_yes_or_no_question(self, question, answer):
        assert short_answer(question, answer) != answer.split()[0].strip(",.")

    def test_the_cut_only_removes_words(self):
        cut = ShortAnswer(min_words=1)
        for question, answer in [(QUESTION, SENTENCE), ("What is Opry Mills?", "Opry Mills is a super-regional mall."),
                                 ("When did the war end?", "The war ended in 1945, after six years.")]:
            short = cut(question, answer)
            assert short != answer and short in answer  # a stretch of the answer's own text

    def test_stems_decide_what_the_question_holds(self):
        # "introduction" shares "intr" with "introduced", not "introduct"
        answer = "Its introduction happened by Genoese traders arriving"
        assert ShortAnswer(min_words=1, stem_chars=4)(QUESTION, answer) == "happened by Genoese traders arriving"
        assert ShortAnswer(min_words=1, stem_chars=9)(QUESTION, answer) == answer  # no question word left

    @pytest.mark.parametrize("field", ["min_words", "stem_chars"])
    def test_values_below_one_are_refused(self, field):
        with pytest.raises(ValueError, match=field):
            ShortAnswer(**{field: 0})


class TestNumbersAsWritten:
    """An answer given writes its numbers as its evidence does (session 84): SQuAD 2.0's references are spans of the
    passage, and the model writes "4" where its passage says "four"."""

    TERM = "Members of the house serve a term of four years."
    MOONS = "Mars has 2 moons, Phobos and Deimos."

    @pytest.mark.parametrize("answer, texts, given", [
        ("4 years", [TERM], "four years"),  # figures the passage spells
        ("4", [TERM], "four"),
        ("(4)", [TERM], "(four)"),  # its punctuation kept
        ("Two", [MOONS], "2"),  # words the passage writes in figures
        ("two moons", ["Mars", MOONS], "2 moons"),  # read from every text
    ])
    def test_a_number_is_written_as_the_evidence_writes_it(self, answer, texts, given):
        assert numbers_as_written(answer, texts) == given

    @pytest.mark.parametrize("answer, texts", [
        ("4 years", [TERM, "It rose by 4 points."]),  # the evidence writes both: the model's is kept
        ("4 years", ["A term lasts a few years."]),  # the evidence writes neither
        ("6,100 acres", ["six thousand acres, 6 or 100"]),  # a number of more than one word is not read as two
        ("$4", [TERM]),
        ("4%", [TERM]),
        ("24 years", [TERM]),  # "4" inside another number
        ("four years", [TERM]),  # already as written
        ("Paris", [TERM]),
        ("", [TERM]),
    ])
    def test_anything_else_is_kept_as_written(self, answer, texts):
        assert numbers_as_written(answer, texts) == answer

    def test_writing_it_again_changes_nothing(self):
        once = numbers_as_written("4 years, 2 moons", [self.TERM, self.MOONS])
        assert once == "four years, 2 moons" and numbers_as_written(once, [self.TERM, self.MOONS]) == once


class TestSeparatorsAsWritten:
    """An answer given takes what stands between its words from its evidence (session 84): the model writes "-" where
    the passage has "–", and SQuAD 2.0's metric reads "30-75%" as one word, "3075", against "30–75%"."""

    PLAGUE = "Black Death: The modern bubonic plague has a mortality rate of 30–75% without treatment."
    STEAM = "Steam turbine: Inlet temperatures reach 1500 °C in the \"design build\" contract's gas turbines."

    @pytest.mark.parametrize("answer, texts, given", [
        ("30-75%", [PLAGUE], "30–75%"),  # the passage's dash, the answer's own "%" after its last word
        ("1500°C", [STEAM], "1500 °C"),
        ("a mortality Rate of 30 75", [PLAGUE], "a mortality Rate of 30–75"),  # its words keep their letters
        ("Black Death: the modern", [PLAGUE], "Black Death: the modern"),  # a title read as the prompt shows it
        ("(30-75%)", ["Elsewhere 30 to 75%.", PLAGUE], "(30–75%)"),  # the first text that holds its words in a row
        # found replaying the dev blocks (session 84): another sign says another thing, another place may say it
        ("2p - 1", ["Either 2p + 1 or", "A prime is 2p − 1 here."], "2p − 1"),
        ("p < 2n - 2", ["where n < p < 2n − 2"], "p < 2n − 2"),
        ("Long-lasting effect", ["a long lasting effect"], "Long lasting effect"),  # spaces, dashes, stops, commas
        ("labor, capital, and land", ["by labor, capital and land"], "labor, capital and land"),
    ])
    def test_what_stands_between_the_words_is_the_evidence_s(self, answer, texts, given):
        assert separators_as_written(answer, texts) == given

    @pytest.mark.parametrize("answer, texts", [
        ("Design build contract", [STEAM]),  # a quote between the words in the passage
        ("(p-1)!", ["Wilson: (p > 1)! is"]),  # another sign, and no place says it with a dash
        ("30-75 percent", [PLAGUE]),  # the words are not the passage's in a row
        ("75-30%", [PLAGUE]),
        ("", [PLAGUE]),
        ("%", [PLAGUE]),
    ])
    def test_an_answer_the_evidence_does_not_hold_so_is_kept_as_written(self, answer, texts):
        assert separators_as_written(answer, texts) == answer

    def test_numbers_first_then_what_stands_between(self):
        assert as_written("4 years-long", ["Members serve a four years–long term."]) == "four years–long"
        assert as_written("Paris", ["Paris: the capital of France."]) == "Paris"


def run_line(dataset, question, answer, golds, answerable=True, grid=False):
    if grid:
        return {"dataset": dataset, "question": question, "answerable": answerable, "gold_answers": golds,
                "grid": [{"budget": 64, "answer": answer, "abstained": False},
                         {"budget": None, "answer": "I cannot answer from the evidence.", "abstained": True}]}
    return {"dataset": dataset, "question": question, "answerable": answerable, "gold_answers": golds, "answer": answer}


class TestFit:
    def write(self, path: Path, lines) -> Path:
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        return path

    def test_answers_are_read_from_both_kinds_of_run(self, tmp_path):
        shipped = self.write(tmp_path / "shipped.jsonl", [run_line("squad", QUESTION, SENTENCE, ["Genoese traders"]),
                                                           run_line("squad", "q?", "x", [], answerable=False),
                                                           {**run_line("squad", QUESTION, "Genoese traders", ["Genoese traders"]),
                                                            "written_answer": SENTENCE}])
        grid = self.write(tmp_path / "grid.jsonl", [run_line("hotpotqa", "q?", "Paris", ["Paris"], grid=True)])
        found = fitting.answers([shipped, grid])
        assert [(a.dataset, a.source, a.answer) for a in found] == [
            ("squad", "shipped.jsonl", SENTENCE), ("squad", "shipped.jsonl", SENTENCE),  # as written, even when cut
            ("hotpotqa", "grid.jsonl at 64", "Paris")]

    def test_the_fit_keeps_f1_on_every_dataset(self, tmp_path):
        # squad gains from any cut; hotpotqa loses when a short name of three words or more is cut
        lines = [run_line("squad", QUESTION, SENTENCE + " It was 1347 then and there too", ["Genoese traders"])] * 3
        lines += [run_line("hotpotqa", "Which film is a Nolan film?", "The Nolan film Tenet by Warner Bros",
                           ["The Nolan film Tenet by Warner Bros"])]
        given = fitting.answers([self.write(tmp_path / "runs.jsonl", lines)])
        chosen, table = fitting.fit(given)
        assert all(min(g.values()) >= 0 for cut, g in table if cut == chosen)
        assert chosen.min_words > 7  # the hotpotqa answer has seven words: a cut that touches it loses F1
        assert any(g["hotpotqa"] < 0 for _, g in table)

    def test_the_shipped_cut_is_the_recorded_fit(self):
        fit = json.loads((fitting.REPORT_DIR / "fit.json").read_text(encoding="utf-8"))
        assert (fit["min_words"], fit["stem_chars"]) == (short_answer.min_words, short_answer.stem_chars)
