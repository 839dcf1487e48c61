"""Each node alone, on real components (MiniLM, a small Wikipedia index, SmolLM2)."""

import dataclasses

import numpy as np
import pytest
from langgraph.runtime import Runtime

from pipeline.configuration import ConfigurationError, PipelineConfig, QuestionError
from nodes import classify_tier, compress, condense_question, generate, grade_confidence, rerank, retrieve, start_turn
from nodes.compress import ELLIPSIS, extend_evidence, select_evidence
from nodes.generate import attribute, below_threshold, cite, confidence, fit_to_context, split_citations, support
from nodes.grade_answer import can_extend, grade_answer
from prompts import ABSTENTION


@pytest.fixture
def runtime(ctx):
    return Runtime(context=ctx)


def run(node, state, runtime):
    return node(state, runtime)


def classified(runtime, question="Who directed 2001: A Space Odyssey?", **overrides):
    state = {"question": question, "overrides": overrides}
    state.update(run(start_turn, state, runtime))
    state.update(run(classify_tier, state, runtime))
    return state


def over(runtime, embedder, passages):
    """``runtime`` on an index in memory that holds ``passages``, embedded as ingest embeds them."""
    from components.index import PassageIndex

    index = PassageIndex(embedder.name, embedder.dimension)
    index.add(passages, embedder.embed_documents([p.embedding_text for p in passages]))
    return Runtime(context=dataclasses.replace(runtime.context, index=index))


class TestStartTurn:
    def test_strips_and_resets(self, runtime):
        out = run(start_turn, {"question": "  Who painted the Mona Lisa? ", "passages": [{"id": "old"}]}, runtime)
        assert out["question"] == out["standalone_question"] == "Who painted the Mona Lisa?"
        assert out["passages"] == [] and out["evidence"] == [] and out["corrections"] == 0
        assert out["trace"]["new_trace"] is True

    @pytest.mark.parametrize("question", ["", "  ", "x" * 2001, None])
    def test_bad_questions(self, runtime, question):
        with pytest.raises(QuestionError):
            run(start_turn, {"question": question}, runtime)


class TestUnnamedPerson:
    """A question whose subject is a person it does not name: asked with nothing before it, retrieval
    finds some person's birth or death, and the model answers it ("When was he born?" got "975")."""

    @pytest.mark.parametrize("question, pronoun", [
        ("When was he born?", "he"), ("how old is she", "she"), ("What was his first album?", "his"),
        ("In which city was she born?", "she"), ("How many children did he have?", "he"),
        ("Is he still alive?", "he"), ("Who was her father?", "her"), ("What year did he die?", "he"),
        ("Why didn't he sign the treaty?", "he"), ("  Where did she grow up?", "she"),
        ("Who did he marry?", "he"), ("Whose son was he?", "he"),
        ("WHEN WAS HE BORN", "he"), ("When was He born?", "he"), ("Did she marry Prince Charles?", "she"),
    ])
    def test_found(self, question, pronoun):
        from nodes.condense_question import unnamed_person

        assert unnamed_person(question) == pronoun

    @pytest.mark.parametrize("question", [
        "When was Shakespeare born?", "When did Newton publish his laws?", "What is it made of?",
        "When did they stop cigarette advertising on television?",  # a generic "they"
        "Who had his first prize fight in 1914?",  # "his" is the one "who" asks for
        "Who has her own talk show?", "who sings does he love me with reba",  # a title
        "What about his wife?", "Where is the Louvre?", "",
        "Of what were He Kexin and Deng Linlin accused?", "Where does Her Majesty live?",  # names
        "where does she's all that take place",  # a title
    ])
    def test_not_found(self, question):
        from nodes.condense_question import unnamed_person

        assert unnamed_person(question) is None

    def test_start_turn_finds_it_only_in_a_first_question_without_documents(self, runtime):
        assert run(start_turn, {"question": "When was he born?"}, runtime)["unnamed"] == "he"
        assert run(start_turn, {"question": "When was Newton born?"}, runtime)["unnamed"] is None
        turn = {"question": "Who wrote Hamlet?", "standalone_question": "Who wrote Hamlet?", "answer": "Shakespeare"}
        assert run(start_turn, {"question": "When was he born?", "turns": [turn]}, runtime)["unnamed"] is None
        given = {"question": "When was he born?", "documents": [{"title": "CV", "text": "Born in 1970."}]}
        assert run(start_turn, given, runtime)["unnamed"] is None

    def test_start_turn_leaves_it_when_the_settings_say_so(self, runtime):
        from dataclasses import replace

        off = Runtime(context=replace(runtime.context, pipeline=replace(runtime.context.pipeline, ask_who=False)))
        assert run(start_turn, {"question": "When was he born?"}, off)["unnamed"] is None

    @pytest.mark.parametrize("reply, asked", [
        ("Isaac Newton", "When was Isaac Newton born?"), ("isaac newton.", "When was isaac newton born?"),
        ("I mean Marie Curie", "When was Marie Curie born?"), ("Ada Lovelace?", "When was Ada Lovelace born?"),
        ("Will Smith", "When was Will Smith born?"),
    ])
    def test_a_reply_that_names_them_asks_the_question_of_that_name(self, reply, asked):
        from nodes.condense_question import named_in_reply

        assert named_in_reply("When was he born?", reply) == asked

    def test_a_possessive_takes_the_names_possessive(self):
        from nodes.condense_question import named_in_reply

        assert named_in_reply("What was his first album?", "Prince") == "What was Prince's first album?"

    @pytest.mark.parametrize("reply", ["When was Newton born?", "Is he alive?", "no idea", "", "x" * 200,
                                       "the one who wrote the Principia and the Opticks in England"])
    def test_a_reply_that_is_not_a_name_is_not_read_so(self, reply):
        from nodes.condense_question import named_in_reply

        assert named_in_reply("When was he born?", reply) is None


class TestSmallTalk:
    """A greeting, thanks or a farewell: it was retrieved for and answered "The knowledge base does not
    seem to hold the answer", with three passages it had found for "hello"."""

    @pytest.mark.parametrize("message, kind", [
        ("hello", "greeting"), ("Hi!", "greeting"), ("hey there", "greeting"), ("Good morning :)", "greeting"),
        ("thanks!", "thanks"), ("Thank you very much.", "thanks"), ("ok, thanks", "thanks"), ("thx", "thanks"),
        ("bye", "farewell"), ("Goodbye!", "farewell"), ("see you", "farewell"),
        # session 64: "Who are you?" was answered "The knowledge base does not seem to hold the answer", with
        # "Midnight's Children" and "Sadness" as the closest passages; "What can you do?" "Participate in hobbies"
        ("Who are you?", "about"), ("what can you do", "about"), ("What do you do?", "about"), ("help", "about"),
        ("How do you work?", "about"), ("What are you?", "about"), ("Help me!", "about"),
        ("How can you help me?", "about"), ("Tell me about yourself", "about"), ("What should I ask?", "about"),
        # session 65: "What is today's date?" abstained, withholding "22 March"
        ("What is today's date?", "date"), ("what's the date today", "date"), ("What day is it?", "date"),
        ("What time is it?", "date"), ("today's date?", "date"), ("What is the date today?", "date"),
        # session 66: "ok" went to retrieval and up two tiers, and the model abstained
        ("ok", "acknowledgement"), ("Okay.", "acknowledgement"), ("got it", "acknowledgement"), ("cool!", "acknowledgement"),
        ("I see", "acknowledgement"), ("great", "acknowledgement"), ("Alright", "acknowledgement"),
        # session 66: "What is 2+2?" was answered "5", 34% likely right by the check, and given
        # session 66: these went to retrieval ("Who made you?" withheld "Christiaan Huygens"; "Are you an AI?" gave "Yes")
        ("What's your name?", "about"), ("Who made you?", "about"), ("Are you an AI?", "about"), ("are you human", "about"),
        ("How are you?", "greeting"), ("how are you doing today?", "greeting"),
        # session 66: "What's the weather like today?" withheld "It's sunny"; the knowledge base holds no "today"
        ("What's the weather like today?", "live"), ("what is the weather", "live"), ("Will it rain tomorrow?", "live"),
        ("What's the latest news?", "live"), ("What is in the news today?", "live"), ("any news?", "live"),
        ("What is 2+2?", "arithmetic"), ("2 + 2", "arithmetic"), ("calculate 17 * 23", "arithmetic"),
        ("What's 7 times 8?", "arithmetic"), ("(3+4)/2 =", "arithmetic"), ("what is 10 divided by 4", "arithmetic"),
        ("2^10?", "arithmetic"), ("How much is 1,250 - 30.5?", "arithmetic"), ("-3 * -3", "arithmetic"),
    ])
    def test_found(self, message, kind):
        from nodes.small_talk import small_talk_kind

        assert small_talk_kind(message) == kind

    @pytest.mark.parametrize("message", ["Hello, who wrote Hamlet?", "hello world program", "Thanks to whom did Rome fall?",
                                         "Who said goodbye to all that?", "hi-hat", "Hilo", "",
                                         "Who are you in the film Her?", "What can you do with a chemistry degree?",
                                         "How do you work out the area of a circle?", "Help! was released when?",
                                         "Who helped Newton?", "What day is it in the Jewish calendar?",
                                         "What time is it in Tokyo?", "What is the date of Easter?",
                                         "ok, who wrote Hamlet?", "Great Expectations", "What is 2?", "1984",
                                         "What is 10 percent of the population?", "What is Catch-22?", "2-1 win?",
                                         "9/11", "What is 9/11?", "24/7", "1939-1945", "(1+2", "2^0.5",
                                         "Who made you feel like a natural woman?", "What's your name in Spanish?",
                                         "How are you supposed to say it?", "Are you a Beatles fan?",
                                         "What is the weather like in Hawaii in December?", "What is the News of the World?",
                                         "Will it rain on Mars?"])
    def test_not_found(self, message):
        from nodes.small_talk import small_talk_kind

        assert small_talk_kind(message) is None

    def test_the_date_is_read_from_the_clock(self):
        from datetime import datetime, timedelta, timezone

        from nodes.small_talk import clock_reply

        now = datetime(2026, 11, 29, 17, 5, tzinfo=timezone(timedelta(hours=1), "CET"))
        assert clock_reply(now) == "Today is Sunday, 29 November 2026; the time is 17:05 (CET, this server's clock)."

    def test_start_turn_marks_it_unless_documents_come_with_it(self, runtime):
        assert run(start_turn, {"question": "thanks!"}, runtime)["small_talk"] == "thanks"
        given = {"question": "thanks!", "documents": [{"title": "T", "text": "thanks! is a film."}]}
        assert run(start_turn, given, runtime)["small_talk"] is None

    def test_a_turn_answered_without_reading_says_nothing_of_the_topic(self, runtime):
        """After "hello", "When was he born?" still names no one: it is asked whom it means."""
        from nodes.condense_question import topical

        hello = {"question": "hello", "standalone_question": "hello", "answer": "Hello!",
                 "answerability": {"decision": "abstain", "by": "question", "reply": "greeting"}}
        newton = {"question": "Who was Isaac Newton?", "standalone_question": "Who was Isaac Newton?", "answer": "x"}
        assert topical([hello, newton, hello]) == [newton]
        assert run(start_turn, {"question": "When was he born?", "turns": [hello]}, runtime)["unnamed"] == "he"


class TestTellAge:
    """"How old is Bill Gates?" was answered "31" (given, 79% likely right), from "became the world's
    then-youngest billionaire in 1987, at age 31": retrieval had not read the passage with his description,
    "(American businessman and philanthropist (born 1955))" (session 64)."""

    @pytest.mark.parametrize("question, thing", [
        ("How old is Bill Gates?", "Bill Gates"), ("how old is Taylor Swift now?", "Taylor Swift"),
        ("What age is Meryl Streep?", "Meryl Streep"), ("What is the age of Donald Knuth?", "Donald Knuth"),
        ("How old's Brian Eno today", "Brian Eno"), ("How old is Leonardo da Vinci?", "Leonardo da Vinci"),
        ("how old is taylor swift", "taylor swift"), ("How old is Earth?", "Earth"),  # the node checks the years
        ("How old is Catherine de' Medici?", "Catherine de' Medici"),  # session 66: "de'" had read as a possessive
    ])
    def test_asked(self, question, thing):
        from nodes.tell_age import aged_subject

        assert aged_subject(question) == thing

    @pytest.mark.parametrize("question", [
        "How old was Napoleon when he died?", "How old is the Eiffel Tower?", "How old is he?",
        "How old is the universe?", "How old are the Pyramids of Giza?", "When was Bill Gates born?",
        "How old is Bill Gates's wife?", "How old is a lava flow after it cools?", "How old is my dog?",
        "How old is Bill Gates and his wife Melinda French Gates together?", "",
    ])
    def test_not_asked(self, question):
        from nodes.tell_age import aged_subject

        assert aged_subject(question) is None

    @pytest.mark.parametrize("title, text, told", [
        ("Bill Gates", "William Henry Gates III is an American businessman. (American businessman and philanthropist "
                       "(born 1955))", "70 or 71 (born 1955)"),
        ("Napoleon", "Napoleon was a French emperor. (French general and emperor; born 1769, died 1821, aged 51 or 52)",
         "Napoleon died in 1821, aged 51 or 52."),
        ("Peter Abelard", "Abelard was a philosopher. (French philosopher; born c. 1079, died 1142)",
         "Peter Abelard died in 1142."),
        ("Artemisia Gentileschi", "Artemisia was a painter. (Italian painter (born 1593))", None),  # death left out
        ("Eiffel Tower", "The Eiffel Tower is a tower in Paris. (Tower in Paris, France)", None),
    ])
    def test_told_from_the_description(self, title, text, told):
        from datetime import date

        from nodes.tell_age import age_told

        assert age_told(title, text, date(2026, 11, 29)) == told

    def test_a_living_person_s_age_without_the_model(self, runtime, embedder):
        from datetime import date

        from components.passages import Passage
        from nodes.tell_age import tell_age

        meta = {"source": "wikipedia", "doc_id": "wiki/Bill Gates"}
        gates = [Passage("wiki/Bill Gates#p0s0", "Bill Gates", "William Henry Gates III is an American businessman. "
                         "(American businessman and philanthropist (born 1955))", meta),
                 Passage("wiki/Bill Gates#p0s2", "Bill Gates", "Gates became the world's then-youngest billionaire in "
                         "1987, at age 31.", meta)]
        mine = over(runtime, embedder, gates)
        state = classified(mine, question="How old is Bill Gates?", tier="easy")
        state["passages"] = [{"id": gates[1].id, "title": "Bill Gates", "text": gates[1].text, "score": 0.7,
                              "metadata": meta}]  # retrieval read the "at age 31" one only
        out = run(tell_age, state, mine)
        year = date.today().year
        assert out["told_age"] is True and out["answer"] == f"{year - 1956} or {year - 1955} (born 1955)"
        assert [c["passage_id"] for c in out["citations"]] == [gates[0].id]
        assert f"(born 1955, aged {year - 1956} or {year - 1955} in {year})" in out["citations"][0]["text"]
        trace = out["trace"]
        assert trace["aged"] == {"thing": "Bill Gates", "title": "Bill Gates", "passage_id": gates[0].id,
                                 "on": date.today().isoformat()}
        assert trace["answerability"]["by"] == "unchecked" and trace["prompt_tokens_evaluated"] == 0

    def test_no_birth_year_goes_on_as_a_question(self, runtime):
        from nodes.tell_age import tell_age

        state = classified(runtime, question="How old is Abraham Lincoln?", tier="easy")  # his years: not given
        state.update(run(retrieve, state, runtime))
        assert any(p["title"] == "Abraham Lincoln" for p in state["passages"])
        assert run(tell_age, state, runtime)["told_age"] is False


class TestDescribedSubject:
    """A question that only asks what a thing is: the model, asked for as few words as possible, gave
    the name back ("Who was Napoleon?": "Napoleon Bonaparte"; "What is photosynthesis?": "Photosynthesis")."""

    @pytest.mark.parametrize("question, thing", [
        ("Who was Napoleon?", "Napoleon"), ("who is marie curie", "marie curie"), ("What is photosynthesis?", "photosynthesis"),
        ("What is a black hole?", "a black hole"), ("Tell me about the Eiffel Tower.", "the Eiffel Tower"),
        ("Describe Mount Everest", "Mount Everest"), ("What's the Moon?", "the Moon"), ("Who were the Beatles?", "the Beatles"),
        ("explain photosynthesis", "photosynthesis"), ("What do you know about Jupiter?", "Jupiter"),
        ("Tell me more about Mars", "Mars"),
        # a message that is only a name (session 65: "Jupiter" abstained, withholding "Jupiter")
        ("Jupiter", "Jupiter"), ("Isaac Newton?", "Isaac Newton"), ("the French Revolution", "the French Revolution"),
        ("volcanoes", "volcanoes"), ("Leonardo da Vinci", "Leonardo da Vinci"),
        # session 66: "de'" had read as a possessive
        ("Who was Catherine de' Medici?", "Catherine de' Medici"), ("Lorenzo de’ Medici", "Lorenzo de’ Medici"),
    ])
    def test_found(self, question, thing):
        from nodes.describe import described_subject

        assert described_subject(question) == thing

    @pytest.mark.parametrize("question", [
        "Who is the president?", "Who was Kublai Khan's grandfather?", "What is the capital of France?",
        "What is the largest planet?", "What was the Aristocrat record label renamed?", "Who was the first emperor?",
        "What is it made of?", "Explain how a rainbow forms", "When was Napoleon born?", "Who painted the Mona Lisa?",
        "What is the name of the ship?", "Who was Napoleon " + "Bonaparte " * 10, "",
        "Einstein won the Nobel Prize", "Compare cats and dogs", "capital of France", "Did Einstein win?",
    ])
    def test_not_found(self, question):
        from nodes.describe import described_subject

        assert described_subject(question) is None

    @pytest.mark.parametrize("thing, title, match", [
        ("Napoleon", "Napoleon", 2), ("the Eiffel Tower", "Eiffel Tower", 2), ("mercury", "Mercury (planet)", 2),
        ("Einstein", "Albert Einstein", 1), ("Napoleon", "Napoleon III", 0), ("Curie", "Curie", 2),
        ("Marie Curie", "Pierre Curie", 0), ("a black hole", "Black hole", 2), ("Tower", "Eiffel Tower", 1),
        ("volcanoes", "Volcano", 2), ("black holes", "Black hole", 2), ("cities", "City", 2), ("the Beatles", "The Beatles", 2),
        ("glasses", "Glass", 2), ("volcanoes", "Volcanoes National Park", 0), ("Curies", "Marie Curie", 0),
        # accents aside, as the check's rules read names (session 68's review: one normaliser)
        ("Francois Mitterrand", "François Mitterrand", 2), ("Dvorak", "Antonín Dvořák", 1),
        ("Mitterand", "François Mitterrand", 0),
    ])
    def test_title_match(self, thing, title, match):
        from components.titles import title_match

        assert title_match(thing, title) == match


    @pytest.mark.parametrize("thing, title, misspelt", [
        ("Isaac Newtn", "Isaac Newton", True), ("Albert Einstien", "Albert Einstein", True),  # a letter dropped, swapped
        ("Photosynthesys", "Photosynthesis", True), ("Einstien", "Albert Einstein", True),  # one word: the title or surname
        ("the Eifel Tower", "Eiffel Tower", True), ("Mercury", "Mercury (planet)", False),  # as written: title_match's
        ("Mario", "Maria", False), ("Joan Smith", "John Smith", False),  # words too short to read as misspelt
        ("Marie Curie", "Pierre Curie", False), ("Isaac Newtn", "Isaac Newton Institute", False),
        ("Albrt Einstien", "Albert Einstein", True), ("Isaac Nwtn", "Isaac Newton", False),  # two letters off one word
        ("Antonin Dvorrak", "Antonín Dvořák", True),  # a dropped accent costs no edit
    ])
    def test_misspelt(self, thing, title, misspelt):
        from components.titles import misspelt as read_as_misspelt
        from components.titles import plain_words

        assert read_as_misspelt(plain_words(thing), plain_words(title)) is misspelt


class TestComparedSubjects:
    @pytest.mark.parametrize("question, things", [
        ("Compare cats and dogs", ("cats", "dogs")), ("Contrast socialism and capitalism", ("socialism", "capitalism")),
        ("Compare the Roman Empire with the Byzantine Empire", ("the Roman Empire", "the Byzantine Empire")),
        ("Isaac Newton vs Albert Einstein", ("Isaac Newton", "Albert Einstein")),
        ("Jupiter versus Saturn", ("Jupiter", "Saturn")),
        ("What is the difference between a virus and a bacterium?", ("a virus", "a bacterium")),
        ("What's the difference between weather and climate?", ("weather", "climate")),
        ("How does a crocodile differ from an alligator?", ("a crocodile", "an alligator")),
        ("How are frogs and toads different?", ("frogs", "toads")),
        ("Could you compare Mars to Venus, please?", None),  # a comma: not a name
        ("Could you compare Mars to Venus?", ("Mars", "Venus")),
    ])
    def test_asked(self, question, things):
        from nodes.compare import compared_subjects

        assert compared_subjects(question) == things

    def test_a_thing_no_passage_retrieved_is_titled_as_is_found_by_its_own_name(self, runtime, index):
        """A request retrieves mostly one of the two things: the other's article is looked for by its name alone."""
        from nodes.compare import compare

        moon = [index.passage(i) for i in index.document_passages("wiki/Moon")]
        state = {"question": "Compare the Moon and Tokyo", "settings": {"budget": {"k": 5}},
                 "query_embedding": runtime.context.embedder.embed_query("Compare the Moon and Tokyo").tolist(),
                 "passages": [{"id": p.id, "title": p.title, "text": p.text, "score": 0.5, "metadata": dict(p.metadata)}
                              for p in moon]}
        out = compare(state, runtime)
        assert out["compared"] is True and out["trace"]["compared"]["titles"] == ["Moon", "Tokyo"]
        assert out["citations"][1]["passage_id"] == index.document_passages("wiki/Tokyo")[0]
        assert -1.0 <= out["citations"][1]["score"] <= 1.0
        assert compare({**state, "question": "Compare the Moon and Saturn"}, runtime)["compared"] is False  # no article

    @pytest.mark.parametrize("question", [
        "Compare the population of France and Germany", "Who won the McGregor vs Mayweather fight?",
        "Who is the little boy in Kramer vs Kramer?", "Compare Mars and mars", "Which is older, Paris or Rome?",
        "Were Isaac Newton and Albert Einstein of the same nationality?", "Compare them",
    ])
    def test_not_asked(self, question):
        from nodes.compare import compared_subjects

        assert compared_subjects(question) is None


class TestAsksForMore:
    @pytest.mark.parametrize("message", ["Tell me more", "tell me more about him.", "More, please", "more",
                                         "What else?", "Go on", "continue", "anything else?", "Tell me more about it!"])
    def test_found(self, message):
        from nodes.describe import asks_for_more

        assert asks_for_more(message)

    @pytest.mark.parametrize("message", ["Tell me more about Mars", "more than 10 moons?", "What else did he write?",
                                         "Who else won?", "continue the war?", ""])
    def test_not_found(self, message):
        from nodes.describe import asks_for_more

        assert not asks_for_more(message)


class TestCondenseQuestion:
    def test_a_name_given_when_asked_who_is_meant_is_read_into_that_question_without_the_model(self, runtime):
        asked = {"question": "When was he born?", "standalone_question": "When was he born?",
                 "answer": "Who do you mean by “he”?", "answerability": {"decision": "abstain", "by": "question",
                                                                         "pronoun": "he"}}
        out = run(condense_question, {"question": "Isaac Newton", "turns": [asked]}, runtime)
        assert out["standalone_question"] == "When was Isaac Newton born?"
        assert out["trace"]["rewrite"]["method"] == "named"

    def test_rewrites_with_history(self, runtime):
        state = {"question": "When was he born?", "turns": [
            {"question": "Who developed relativity?", "standalone_question": "Who developed relativity?",
             "answer": "Albert Einstein"}]}
        out = run(condense_question, state, runtime)
        rewrite = out["trace"]["rewrite"]
        assert rewrite["original"] == "When was he born?" and rewrite["history_turns"] == 1
        assert out["standalone_question"] and len(out["standalone_question"]) < 500
        assert rewrite["method"] in ("rewritten", "joined")

    @staticmethod
    def turns(*asked):
        return [{"question": q, "standalone_question": q, "answer": a} for q, a in asked]

    @pytest.mark.parametrize("follow_up, last", [
        ("Where was he born?", ("Who painted The Starry Night?", "Vincent van Gogh")),
        ("Who was his wife?", ("Who wrote The Great Gatsby?", "F. Scott Fitzgerald")),
        ("When did she die?", ("whom did Hamlet love?", "Ophelia")),
        ("When did they meet?", ("Who founded Microsoft?", "Bill Gates and Paul Allen")),
        ("How many people live there?", ("Where were the 2012 Summer Olympics held?", "London")),
        ("How many people live there?", ("What is the capital of Italy?", "Rome")),
        ("What is the climate like there?", ("Which city hosted the 1996 Summer Olympics?", "Atlanta")),
        ("What language is spoken there?", ("In which country is Machu Picchu?", "Peru")),
    ])
    def test_a_pronoun_of_the_last_answers_kind_is_shown_only_the_last_turn(self, follow_up, last):
        """Session 53's chain follow-ups: shown three turns, the rewrite took the earlier turn's answer
        of the same kind ("Where was he born?" after the Mona Lisa's painter and then The Starry
        Night's read about Leonardo da Vinci). A person after "Who ...?" or a place ("there") after
        "Where ...?" or "What is the capital of ...?" is nearest in the last turn, so the rewrite is
        shown that turn alone."""
        from nodes.condense_question import shown_turns

        history = self.turns(("Who painted the Mona Lisa?", "Leonardo da Vinci"), ("Where is it?", "The Louvre"), last)
        assert shown_turns(history, follow_up) == history[-1:]

    @pytest.mark.parametrize("follow_up, last", [
        ("When was he born?", ("Where is the Mona Lisa displayed?", "The Louvre")),  # he: not a place
        ("When was it founded?", ("Who founded Apple?", "Steve Jobs")),  # it: not the person asked for
        ("How many people live there?", ("What is the tallest building in Dubai?", "Burj Khalifa")),  # not a place
        ("What other ballets did he compose?", ("When was The Nutcracker first performed?", "1892")),
    ])
    def test_any_other_follow_up_is_shown_the_last_three_turns(self, follow_up, last):
        from nodes.condense_question import HISTORY_TURNS, shown_turns

        history = self.turns(("Who wrote Hamlet?", "William Shakespeare"), ("Who painted the Mona Lisa?", "Leonardo"),
                             ("Who composed The Nutcracker?", "Tchaikovsky"), last)
        assert shown_turns(history, follow_up) == history[-HISTORY_TURNS:]

    @pytest.mark.parametrize("follow_up, earlier, last", [
        ("How many concertos did he compose?", ("Who composed The Four Seasons?", "Antonio Vivaldi"),
         ("Who made the first recording of The Four Seasons?", "Alfredo Campoli")),
        ("When did he write the play?", ("Who wrote Romeo and Juliet?", "William Shakespeare"),
         ("Who directed the 1968 film of Romeo and Juliet?", "Franco Zeffirelli")),
        ("How long did it take him to paint it?", ("Who painted the ceiling of the Sistine Chapel?", "Michelangelo"),
         ("Who commissioned the ceiling of the Sistine Chapel?", "Pope Julius II")),
    ])
    def test_a_follow_up_naming_an_earlier_questions_act_is_shown_three_turns(self, follow_up, earlier, last):
        """Measured after the rule above shipped (session 54): when the last turn asked "Who" about
        a person's work, "How many concertos did he compose?" means the composer an earlier question
        asked for, and shown the last turn alone the model read it about the last answer."""
        from nodes.condense_question import shown_turns

        history = self.turns(earlier, last)
        assert shown_turns(history, follow_up) == history

    def test_the_act_the_last_question_asked_about_keeps_the_last_turn(self):
        from nodes.condense_question import shown_turns

        history = self.turns(("Who painted The Night Watch?", "Rembrandt"), ("Who painted The Starry Night?", "Vincent van Gogh"))
        assert shown_turns(history, "What else did he paint?") == history[-1:]

    @pytest.mark.parametrize("text, named", [
        ("Who wrote Hamlet?", {"write"}), ("When did he write it?", {"write"}),
        ("What did she discover?", {"discover"}), ("In which hospital did he make his discovery?", {"discover", "make"}),
        ("Who composed the Moonlight Sonata?", {"compos"}), ("Where was he born in Pennsylvania?", set()),
        ("Who commissioned it?", set()),
    ])
    def test_an_act_is_read_in_any_of_its_forms(self, text, named):
        from nodes.condense_question import acts

        assert acts(text) == named

    def test_the_last_turn_is_read_as_rewritten(self):
        """"And the last?" after "Who was the first emperor of Rome?" was rewritten "Who was the last
        emperor of Rome?": its answer is a person though the words asked begin with "And"."""
        from nodes.condense_question import shown_turns

        history = [*self.turns(("Who was the first emperor of Rome?", "Augustus")),
                   {"question": "And the last?", "standalone_question": "Who was the last emperor of Rome?",
                    "answer": "Romulus Augustulus"}]
        assert shown_turns(history, "Where was he born?") == history[-1:]

    def test_the_trace_counts_the_turns_shown(self, runtime):
        state = {"question": "Where was he born?", "turns": self.turns(
            ("Who painted the Mona Lisa?", "Leonardo da Vinci"), ("Who painted The Starry Night?", "Vincent van Gogh"))}
        assert run(condense_question, state, runtime)["trace"]["rewrite"]["history_turns"] == 1
        state["question"] = "When was it painted?"
        assert run(condense_question, state, runtime)["trace"]["rewrite"]["history_turns"] == 2

    def test_an_answer_instead_of_a_rewrite_falls_back(self):
        from nodes.condense_question import rewrite_or_fallback

        assert rewrite_or_fallback("Rewritten question: When was Einstein born?", "When was he born?", "Who?") == (
            "When was Einstein born?", "rewritten")
        assert rewrite_or_fallback("Marie Curie discovered radium.", "Which elements did she discover?",
                                   "Who was Marie Curie?") == (
            "Who was Marie Curie? Which elements did she discover?", "joined")

    def test_a_rewrite_that_loses_the_question_word_falls_back(self):
        """Found trying the API (session 54): "Where was he born?" after "Who invented the phonograph?"
        ("Emile Berliner") was rewritten "Who was Emile Berliner born?" and answered "Switzerland". A
        follow-up that opens with a question word asks that: a rewrite without it asks something else.
        A follow-up that only names a new subject ("what about X?") may be rewritten with any."""
        from nodes.condense_question import rewrite_or_fallback

        previous = "Who invented the phonograph?"
        assert rewrite_or_fallback("Who was Emile Berliner born?", "Where was he born?", previous) == (
            f"{previous} Where was he born?", "joined")
        assert rewrite_or_fallback("Where was Emile Berliner born?", "Where was he born?", previous) == (
            "Where was Emile Berliner born?", "rewritten")
        assert rewrite_or_fallback("How old was Mozart when he died?", "how old was he when he died", previous) == (
            "How old was Mozart when he died?", "rewritten")
        for asked, reply in [("What about the Colosseum?", "When was the Colosseum built?"),
                             ("how about in Mexico", "What language is spoken in Mexico?")]:
            assert rewrite_or_fallback(reply, asked, "When was the Eiffel Tower built?") == (reply, "rewritten")

    def test_a_rewrite_that_gives_the_previous_question_back_falls_back(self):
        """Seen in session 32 (SmolLM2): "And where?" after "Who founded Zorblat Industries?" was
        rewritten "User: Who founded Zorblat Industries?", and the follow-up was lost."""
        from nodes.condense_question import rewrite_or_fallback

        previous = "Who founded Zorblat Industries?"
        assert rewrite_or_fallback(f"User: {previous}", "And where?", previous) == (f"{previous} And where?", "joined")
        assert rewrite_or_fallback("User: Where was Zorblat Industries founded?", "And where?", previous) == (
            "Where was Zorblat Industries founded?", "rewritten")
        assert rewrite_or_fallback(previous, previous, previous) == (previous, "rewritten")  # asked again: as it was

    def test_a_follow_up_naming_no_subject_given_back_unchanged_falls_back(self):
        """Found trying the chat (session 39): after "Is the observatory open to visitors?", "what
        about on sundays" was "rewritten" as "What about on Sundays?" and answered about the Sabbath.
        No standalone question begins "what about", "how about" or "and": given back as it was, it
        is joined to the question it follows. A question that may only refer back (a pronoun, "same")
        can be standalone, and its unchanged rewrite stands."""
        from nodes.condense_question import rewrite_or_fallback

        previous = "Is the observatory open to visitors?"
        for asked, reply in [("what about on sundays", "What about on Sundays?"),
                             ("How about its height?", "How about its height?"),
                             ("and on Sundays?", "And on Sundays?")]:
            assert rewrite_or_fallback(reply, asked, previous) == (f"{previous} {asked}", "joined")
        assert rewrite_or_fallback("Is the observatory open on Sundays?", "what about on sundays", previous) == (
            "Is the observatory open on Sundays?", "rewritten")
        same = "Were Isaac Newton and Albert Einstein of the same nationality?"
        assert rewrite_or_fallback(same, same, previous) == (same, "rewritten")

    @pytest.mark.parametrize("previous, asked, reply, expected", [
        ("Who wrote Pride and Prejudice?", "When was it published?", "When was Jane Austen published?",
         "When was Pride and Prejudice published?"),
        ("Who painted the Mona Lisa?", "When was it painted?", "When was Leonardo da Vinci painted?",
         "When was the Mona Lisa painted?"),
        ("Who designed the Eiffel Tower?", "Why was it built?", "Why was Gustave Eiffel's company built?",
         "Why was the Eiffel Tower built?"),
        # the thing kept, but the maker made the passive's subject (the fresh clone's chat: answered 1903, not 1889)
        ("Who painted The Starry Night?", "When was it painted?", "When was Vincent van Gogh painted The Starry Night?",
         "When was The Starry Night painted?"),
    ])
    def test_it_after_a_question_about_who_made_something_is_the_thing_made(self, previous, asked, reply, expected):
        """Found trying the chat (session 51): after "Who wrote Pride and Prejudice?" ("Jane Austen"),
        "When was it published?" was rewritten "When was Jane Austen published?" and answered 1847. The
        thing published, painted or built is the one the earlier question asked about, never its maker:
        the rewrite that put the maker there gives way to the follow-up with "it" read as that thing."""
        from nodes.condense_question import rewrite_or_fallback

        assert rewrite_or_fallback(reply, asked, previous) == (expected, "resolved")

    @pytest.mark.parametrize("previous, asked, reply", [
        ("Who wrote Pride and Prejudice?", "When did she die?", "When did Jane Austen die?"),  # she: the maker
        ("Who painted the Mona Lisa?", "When was it painted?", "When was the Mona Lisa painted?"),  # already right
        ("Which river flows through Cairo?", "How long is it?", "How long is the Nile?"),  # it: the answer
        ("Who founded Microsoft?", "When did they found it?", "When did Bill Gates and Paul Allen found Microsoft?"),
        ("Who was the first president?", "When was it founded?", "When was George Washington founded?"),  # no maker verb
        ("Who wrote Hamlet?", "Is it long?", "Is Hamlet long?"),  # not a passive
        # a question about who won or owns something: its answer (a country, a company) may well be "it"
        ("Who won the 2018 World Cup?", "When was it founded?", "When was France founded?"),
        ("Who owns Instagram?", "When was it founded?", "When was Meta founded?"),
    ])
    def test_a_rewrite_the_rule_does_not_concern_stands(self, previous, asked, reply):
        from nodes.condense_question import rewrite_or_fallback

        assert rewrite_or_fallback(reply, asked, previous) == (reply, "rewritten")

    @pytest.mark.parametrize("previous, asked, expected", [
        ("How many moons does Neptune have?", "And Uranus?", "How many moons does Uranus have?"),
        ("When was the Great Wall of China built?", "What about the Colosseum?", "When was the Colosseum built?"),
        ("Who directed Jaws?", "what about Star Wars", "Who directed Star Wars?"),
        ("When did World War I end?", "What about World War II?", "When did World War II end?"),
        ("What language is spoken in Brazil?", "how about in Mexico", "What language is spoken in Mexico?"),
        ("Who wrote Pride and Prejudice?", "And Emma?", "Who wrote Emma?"),
        ("Where is the Louvre located?", "And the Prado?", "Where is the Prado located?"),
    ])
    def test_what_about_x_asks_the_question_before_about_x_when_the_rewrite_fails(self, previous, asked, expected):
        """Found trying the chat (session 52): "And Uranus?" after "How many moons does Neptune have?" was
        given back as it was, so it was joined to that question, and the query cache served Neptune's
        answer to the join. A follow-up that only names another thing asks the question before about it:
        where that question names one thing (at its end, or as the subject after does/was/...), the
        follow-up's thing takes its place, instead of joining the two."""
        from nodes.condense_question import rewrite_or_fallback

        assert rewrite_or_fallback(asked, asked, previous) == (expected, "substituted")
        # after a follow-up joined before, the thing is swapped in the question the run started from
        joined = f"{previous} And Mercury?"
        assert rewrite_or_fallback(asked, asked, joined, anchor=previous) == (expected, "substituted")

    def test_a_rewrite_that_still_asks_only_what_about_has_failed(self):
        """Found trying the API (session 52): "What about in Wellington?" after "How many people live in
        New Zealand?" was rewritten "What about Wellington?", which names no question either, and was
        answered "I cannot answer from the evidence". Like the follow-up given back as it was, such a
        rewrite has failed; one that asks ("And who wrote Macbeth?") stands."""
        from nodes.condense_question import rewrite_or_fallback

        previous = "How many people live in New Zealand?"
        assert rewrite_or_fallback("What about Wellington?", "What about in Wellington?", previous) == (
            "How many people live in Wellington?", "substituted")
        assert rewrite_or_fallback("And what about its height?", "and its height?", previous) == (
            f"{previous} and its height?", "joined")
        assert rewrite_or_fallback("And who wrote Macbeth?", "And Macbeth?", "Who wrote Hamlet?") == (
            "And who wrote Macbeth?", "rewritten")

    def test_a_rewrite_that_makes_the_asker_the_subject_has_failed(self):
        """Found trying the chat (session 52): after "Who discovered insulin?" was withheld, "Where was he
        born?" was rewritten "Where was I born?", which read passages about the Buddha and Hipparchus (its
        answer, "Nicaea", was withheld). A rewrite does not turn someone the conversation spoke of into the
        asker: one that brings in I, me or my has failed."""
        from nodes.condense_question import rewrite_or_fallback

        previous = "Who discovered insulin?"
        assert rewrite_or_fallback("Where was I born?", "Where was he born?", previous) == (
            f"{previous} Where was he born?", "joined")
        assert rewrite_or_fallback("What is my name?", "what about her name?", previous)[1] == "joined"
        # the asker's own words stand, and an I that is a numeral is no asker
        assert rewrite_or_fallback("Can I visit the Louvre on Mondays?", "Can I visit it on Mondays?",
                                   "Where is the Louvre?") == ("Can I visit the Louvre on Mondays?", "rewritten")
        assert rewrite_or_fallback("When did World War I end?", "When did it end?", "When did World War I begin?") == (
            "When did World War I end?", "rewritten")
        assert rewrite_or_fallback("When did Elizabeth I die?", "When did she die?", "Who was Elizabeth I?") == (
            "When did Elizabeth I die?", "rewritten")

    @pytest.mark.parametrize("previous, asked", [
        ("Who was the first person on the Moon?", "And the second?"),  # no thing named: an ordinal
        ("Who was the first Roman emperor?", "And the Colosseum?"),  # "Roman" describes; nothing to swap
        ("Is the observatory open to visitors?", "what about on sundays"),  # nothing named in the follow-up
        ("Who invented the telephone?", "And the light bulb?"),  # nothing named in the question before
        ("When did the French Revolution end in Paris?", "And Lyon?"),  # two things named: which one?
        ("Who was Isaac Newton?", "And when did Newton die?"),  # a question of its own, not a thing
        ("What language is spoken in Brazil?", "And of Mexico?"),  # the preposition does not fit
        # "Vorlund" names the bridge, not a thing to swap: found at the terminal ("How long is the Tesk bridge?")
        ("How long is the Vorlund bridge?", "what about the Tesk?"),
        ("Which Beatles album was released first?", "And the Rolling Stones?"),  # describes "album" too
    ])
    def test_a_follow_up_with_no_one_thing_to_swap_is_joined_as_before(self, previous, asked):
        from nodes.condense_question import rewrite_or_fallback

        assert rewrite_or_fallback(asked, asked, previous) == (f"{previous} {asked}", "joined")

    def test_a_run_of_failed_rewrites_does_not_grow_the_question(self, runtime):
        """Each fallback joined the follow-up to the previous standalone question, itself a join, so
        a chat whose model kept answering instead of rewriting asked a longer question every turn
        (1,141 characters after these 40 follow-ups, every earlier one retrieved for and read again;
        the 2,000-character limit is checked on what the user typed only). A join now keeps the
        question the run started from, and a rewrite that gives that question back without the
        follow-up is no rewrite either."""
        from langchain_core.language_models.fake_chat_models import FakeListChatModel

        replies = ["He was an English mathematician."] * 40 + ["User: Who was Isaac Newton?"]
        model = Runtime(context=dataclasses.replace(runtime.context, generator=FakeListChatModel(responses=replies)))
        turns = [{"question": "Who was Isaac Newton?", "standalone_question": "Who was Isaac Newton?", "answer": "A physicist."}]
        for i in range(41):
            question = f"And what did he do in {1660 + i}?"
            out = run(condense_question, {"question": question, "turns": turns}, model)
            rewrite = out["trace"]["rewrite"]
            assert (rewrite["standalone"], rewrite["method"]) == (f"Who was Isaac Newton? {question}", "joined")
            turns.append({"question": question, "standalone_question": out["standalone_question"], "answer": "…"})


class TestClassifyTier:
    def test_fixed_tier_and_embedding(self, runtime):
        out = run(classify_tier, {"question": "Who painted the Mona Lisa?"}, runtime)
        assert out["settings"]["tier"] == "medium" and out["settings"]["tau"] == 0.52
        assert len(out["query_embedding"]) == 384
        assert out["trace"]["timings_ms"]["classify_tier"] > 0

    def test_embeds_the_standalone_question(self, runtime, embedder):
        state = {"question": "When was he born?", "standalone_question": "When was Einstein born?"}
        out = run(classify_tier, state, runtime)
        assert np.allclose(out["query_embedding"], embedder.embed_query("When was Einstein born?"), atol=1e-5)

    def test_overrides(self, runtime):
        out = run(classify_tier, {"question": "q?", "overrides": {"policy": "baseline"}}, runtime)
        assert out["settings"]["budget"]["name"] == "baseline"

    def test_bad_override(self, runtime):
        with pytest.raises(ConfigurationError, match="valid tiers"):
            run(classify_tier, {"question": "q?", "overrides": {"tier": "ultra"}}, runtime)


class TestCascadeStart:
    """Where the cascade starts: multi_hop_tier for a question the question-type model calls
    multi-hop, the cheapest tier for any other; every question at multi_hop_tier without a model."""

    @staticmethod
    def runtime_with(runtime, model, **pipeline):
        from pipeline.configuration import PipelineConfig

        return Runtime(context=dataclasses.replace(runtime.context, question_type=model,
                                                   pipeline=PipelineConfig(policy="cascade", **pipeline)))

    @staticmethod
    def by_length(threshold=0.5):
        """P(multi-hop) rises with the question's word count: 0.5 at ten words."""
        from components.question_type import QuestionTypeModel

        return QuestionTypeModel(("words",), (10.0,), (1.0,), (2.0,), 0.0, {"threshold": threshold})

    LONG = "Which magazine was started first, the one about cats or the one that the author of Dune wrote for?"
    SHORT = "Who painted the Mona Lisa?"

    def test_a_multi_hop_question_starts_a_tier_higher(self, runtime):
        rt = self.runtime_with(runtime, self.by_length())
        long, short = run(classify_tier, {"question": self.LONG}, rt), run(classify_tier, {"question": self.SHORT}, rt)
        assert long["settings"]["tier"] == "medium" and [b["name"] for b in long["settings"]["ladder"]] == ["hard"]
        assert short["settings"]["tier"] == "easy" and [b["name"] for b in short["settings"]["ladder"]] == ["medium", "hard"]
        reading = long["trace"]["question_type"]
        assert reading["start"] == "medium" and reading["threshold"] == 0.5 and reading["multi_hop_probability"] > 0.99
        assert short["trace"]["question_type"]["start"] == "easy"

    def test_the_threshold_is_a_setting_and_a_per_question_override(self, runtime):
        assert run(classify_tier, {"question": self.SHORT},
                   self.runtime_with(runtime, self.by_length(), multi_hop_threshold=0.0))["settings"]["tier"] == "medium"
        out = run(classify_tier, {"question": self.LONG, "overrides": {"multi_hop_threshold": 1.0}},
                  self.runtime_with(runtime, self.by_length()))
        assert out["settings"]["tier"] == "easy" and out["trace"]["question_type"]["threshold"] == 1.0

    def test_without_a_model_or_a_multi_hop_tier(self, runtime):
        out = run(classify_tier, {"question": self.SHORT}, self.runtime_with(runtime, None))
        assert out["settings"]["tier"] == "medium" and "question_type" not in out["trace"]  # the start before session 25
        out = run(classify_tier, {"question": self.LONG}, self.runtime_with(runtime, self.by_length(), multi_hop_tier=None))
        assert out["settings"]["tier"] == "easy" and "question_type" not in out["trace"]

    def test_every_policy_reads_the_question_for_the_check(self, runtime):
        """The answerability check may hold a multi-hop question to another threshold: the reading is
        in the settings whatever the policy, and ``None`` without a model."""
        for policy in ("baseline", "cascade"):
            rt = self.runtime_with(runtime, self.by_length())
            rt = Runtime(context=dataclasses.replace(rt.context, pipeline=PipelineConfig(policy=policy)))
            assert run(classify_tier, {"question": self.LONG}, rt)["settings"]["multi_hop"] is True
            assert run(classify_tier, {"question": self.SHORT}, rt)["settings"]["multi_hop"] is False
        assert run(classify_tier, {"question": self.LONG}, self.runtime_with(runtime, None))["settings"]["multi_hop"] is None

    def test_the_shipped_model_reads_the_question_embedding(self, runtime):
        from components.question_type import QuestionTypeModel

        model = QuestionTypeModel.load()
        out = run(classify_tier, {"question": self.LONG}, self.runtime_with(runtime, model))
        reading = out["trace"]["question_type"]
        assert 0.0 <= reading["multi_hop_probability"] <= 1.0 and reading["threshold"] == model.threshold
        assert out["settings"]["tier"] == reading["start"] in ("easy", "medium")


class TestRetrieve:
    def test_top_k_for_tier(self, runtime):
        state = classified(runtime, tier="easy")
        out = run(retrieve, state, runtime)
        assert len(out["passages"]) == 2
        assert out["passages"][0]["title"] == "2001: A Space Odyssey"
        assert out["passages"][0]["score"] >= out["passages"][1]["score"]

    def test_a_passage_under_a_heading_is_read_with_it(self, runtime, embedder):
        """What every later node (the reranker, the prompt, the citations) reads as a hit's title is its
        document's title with the section it stands in."""
        from components.passages import Passage

        rules = Passage("upload/c.md#p1s0", "Rules of the Harbour Sailing Club", "Members may bring two at a time.",
                        {"source": "file", "doc_id": "upload/c.md", "section": "Guests"})
        mine = over(runtime, embedder, [rules])
        out = run(retrieve, classified(mine, question="How many guests may a member bring?", tier="easy"), mine)
        assert out["passages"][0]["title"] == "Rules of the Harbour Sailing Club › Guests"

    SWIFT = ("wiki/Taylor Swift#p0s0", "Taylor Swift",
             "Taylor Alison Swift is an American singer-songwriter. (American singer-songwriter (born 1989))")

    def test_a_living_person_s_age_today_is_spelled_beside_their_birth_year(self, runtime, embedder):
        """Found trying the chat (session 64): "How old is Taylor Swift?" was answered "1989" from the
        description's "(born 1989)"; the age changes with the day, so it is spelled when the passage is read."""
        from datetime import date

        from components.passages import Passage

        passage_id, title, text = self.SWIFT
        swift = Passage(passage_id, title, text, {"source": "wikipedia", "doc_id": "wiki/Taylor Swift"})
        mine = over(runtime, embedder, [swift])
        out = run(retrieve, classified(mine, question="How old is Taylor Swift?", tier="easy"), mine)
        year = date.today().year
        assert out["passages"][0]["text"] == text.replace("(born 1989)", f"(born 1989, aged {year - 1990} or "
                                                                          f"{year - 1989} in {year})")

    def test_a_description_spells_the_age_as_retrieval_does(self, runtime, embedder):
        """Found trying the chat (session 65): "Taylor Swift" was described "(American singer-songwriter (born
        1989))", the index's text, where every passage retrieval hands on spells the age beside the year."""
        from datetime import date

        from components.passages import Passage
        from nodes.describe import describe

        passage_id, title, text = self.SWIFT
        mine = over(runtime, embedder, [Passage(passage_id, title, text, {"source": "wikipedia",
                                                                          "doc_id": "wiki/Taylor Swift"})])
        state = classified(mine, question="Who is Taylor Swift?", tier="easy")
        state.update(run(retrieve, state, mine))
        out = run(describe, state, mine)
        year = date.today().year
        assert out["answer"] == text.replace("(born 1989)", f"(born 1989, aged {year - 1990} or {year - 1989} in {year})")
        assert out["citations"][0]["text"] == out["answer"]

    @pytest.mark.parametrize("source, living_ages", [("file", True), ("wikipedia", False)])
    def test_only_the_wikipedia_reader_s_descriptions_and_only_when_the_settings_say(self, runtime, embedder,
                                                                                    source, living_ages):
        from dataclasses import replace

        from components.passages import Passage

        passage_id, title, text = self.SWIFT
        swift = Passage(passage_id, title, text, {"source": source, "doc_id": "wiki/Taylor Swift"})
        mine = over(runtime, embedder, [swift])
        mine = Runtime(context=replace(mine.context, pipeline=replace(mine.context.pipeline, living_ages=living_ages)))
        out = run(retrieve, classified(mine, question="How old is Taylor Swift?", tier="easy"), mine)
        assert out["passages"][0]["text"] == text

    def test_corrective_pass_adds_k_extra_new_passages(self, runtime):
        state = classified(runtime, tier="easy")
        state.update(run(retrieve, state, runtime))
        out = run(retrieve, state, runtime)
        ids = [p["id"] for p in out["passages"]]
        assert len(ids) == 7 and len(set(ids)) == 7 and out["corrections"] == 1
        assert out["trace"]["correction"] == {"fired": True, "rounds": 1, "added": 5}


class TestNamedDocuments:
    """A question that names one of the user's documents ("the handbook", "my report", "the document")
    searches that document: "What does the handbook say about holidays?" read Wikipedia's "Holiday" and
    answered "I cannot answer" with the uploaded staff handbook in the index (session 61)."""

    FILES = [("upload/1-handbook.md", "Staff handbook of the Quillfeather Bakery", "handbook.md"),
             ("upload/2-q3-report.pdf", "Quarterly results", "q3-report.pdf"),
             ("notes/minutes.txt", "Minutes: board meeting, 3 May", "minutes.txt")]

    @pytest.mark.parametrize(("question", "named"), [
        ("What does the handbook say about holidays?", ["upload/1-handbook.md"]),
        ("Summarize the staff handbook", ["upload/1-handbook.md"]),
        ("What do the handbooks say?", ["upload/1-handbook.md"]),
        ("What is in my report?", ["upload/2-q3-report.pdf"]),  # the file's name
        ("Who spoke first in the minutes?", ["notes/minutes.txt"]),  # the title before its colon
        ("What does the document say about ovens?", ["upload/1-handbook.md", "upload/2-q3-report.pdf", "notes/minutes.txt"]),
        ("Summarize this file", ["upload/1-handbook.md", "upload/2-q3-report.pdf", "notes/minutes.txt"]),
        ("Who is the manager?", []),
        ("What is the staff of an army?", []),  # a word of the title, not the document's kind
        ("What is a handbook?", []),  # no determiner: the thing, not a document
    ])
    def test_what_the_question_names(self, question, named):
        from nodes.retrieve import named_documents

        assert named_documents(question, self.FILES) == named

    def test_no_files_no_names(self):
        from nodes.retrieve import named_documents

        assert named_documents("What does the document say?", []) == []

    def test_the_named_document_is_searched(self, runtime, embedder):
        """Retrieval ranks the named document's passages only, and the trace says which document it read."""
        from components.passages import Passage

        wiki = [Passage(f"wiki/Holiday#p0s{i}", "Holiday", t, {"source": "wikipedia", "doc_id": "wiki/Holiday"})
                for i, t in enumerate(["Public holidays are set by public authorities.",
                                       "A holiday is a day set aside for festivals or recreation."])]
        handbook = [Passage(f"upload/h.md#p0s{i}", "Staff handbook of the Quillfeather Bakery", t,
                            {"source": "file", "name": "h.md", "doc_id": "upload/h.md"})
                    for i, t in enumerate(["The bakery opens at 6 a.m.", "Staff receive 28 days of paid holiday a year.",
                                           "Ovens are cleaned every Friday."])]
        mine = over(runtime, embedder, wiki + handbook)
        state = classified(mine, question="What does the handbook say about holidays?", tier="medium")
        out = run(retrieve, state, mine)
        assert {p["metadata"]["doc_id"] for p in out["passages"]} == {"upload/h.md"}
        assert out["passages"][0]["text"] == "Staff receive 28 days of paid holiday a year."
        named = [{"doc_id": "upload/h.md", "title": "Staff handbook of the Quillfeather Bakery"}]
        assert out["trace"]["named_documents"] == named
        state.update(out)
        again = run(retrieve, state, mine)  # a corrective pass stays in the document too
        assert {p["metadata"]["doc_id"] for p in again["passages"]} == {"upload/h.md"}

        # a question that names no file searches the whole index (the file first, which would take this one, off:
        # the handbook's holiday sentence is near it, TestNearFiles)
        unnamed = classified(mine, question="What are public holidays?", tier="medium", file_first_score=None)
        assert "named_documents" not in run(retrieve, unnamed, mine).get("trace", {})
        off = classified(mine, question="What does the handbook say about holidays?", tier="medium", named_documents=False)
        out = run(retrieve, off, mine)
        assert "named_documents" not in out.get("trace", {})
        assert "wiki/Holiday" in {p["metadata"]["doc_id"] for p in out["passages"]}


HANDBOOK = [{"doc_id": "upload/h.md", "title": "Staff handbook of the Quillfeather Bakery"}]


class UserFileIndex:
    """A small index of Wikipedia passages and a user's handbook, and a question asked after one on the handbook."""

    HANDBOOK = HANDBOOK

    @pytest.fixture()
    def mine(self, runtime, embedder):
        from components.passages import Passage

        wiki = [Passage(f"wiki/{t}#p0s0", t, text, {"source": "wikipedia", "doc_id": f"wiki/{t}"}) for t, text in [
            ("Manager", "A manager is a person responsible for supervising and running an organisation."),
            ("Football manager", "A football manager is the head coach who manages a football team."),
            ("Napoleon", "Napoleon Bonaparte died on Saint Helena in 1821.")]]
        handbook = [Passage(f"upload/h.md#p{i}s0", "Staff handbook of the Quillfeather Bakery", t,
                            {"source": "file", "name": "h.md", "doc_id": "upload/h.md"})
                    for i, t in enumerate(["The bakery opens at 6 a.m.", "The manager is Ruth Okafor.",
                                           "Staff receive 28 days of paid holiday a year."])]
        return over(runtime, embedder, wiki + handbook)

    def asked(self, mine, question, searched=HANDBOOK, **overrides):
        state = classified(mine, question=question, tier="medium", **overrides)
        state["turns"] = [{"question": "What does the handbook say about holidays?", "answer": "28 days",
                           "standalone_question": "What does the handbook say about holidays?", "citations": [],
                           **({"named_documents": searched} if searched is not None else {})}]
        return state


class TestFollowedDocuments(UserFileIndex):
    """Noticed in session 61: "Who is the manager?" after "What does the handbook say about holidays?"
    searched the whole index, where Wikipedia's managers outrank the handbook's. A follow-up that names no
    file stays in the files the question before searched when one of their passages is at least
    ``follow_up_file_score`` close to it; a new topic searches the whole index."""

    def test_a_follow_up_stays_in_the_file(self, mine):
        state = self.asked(mine, "Who is the manager?")
        out = run(retrieve, state, mine)
        assert {p["metadata"]["doc_id"] for p in out["passages"]} == {"upload/h.md"}
        assert out["passages"][0]["text"] == "The manager is Ruth Okafor."
        assert out["trace"]["named_documents"] == [{**self.HANDBOOK[0], "followed": True}]
        state.update(out)
        again = run(retrieve, state, mine)  # a corrective pass stays in the file too
        assert {p["metadata"]["doc_id"] for p in again["passages"]} == {"upload/h.md"}

    def test_a_question_before_that_followed_the_file_is_followed_too(self, mine):
        out = run(retrieve, self.asked(mine, "Who is the manager?", [{**self.HANDBOOK[0], "followed": True}]), mine)
        assert out["trace"]["named_documents"] == [{**self.HANDBOOK[0], "followed": True}]

    @pytest.mark.parametrize(("question", "searched", "overrides"), [
        ("When did Napoleon die?", HANDBOOK, {}),  # a new topic: the file holds nothing near it
        # not carried (the file first, which would take these: TestNearFiles, is off)
        ("Who is the manager?", None, {"file_first_score": None}),  # the question before searched the whole index
        ("Who is the manager?", [{"doc_id": "upload/gone.md", "title": "Removed since"}], {"file_first_score": None}),
        ("Who is the manager?", HANDBOOK, {"follow_up_file_score": None, "file_first_score": None}),
        ("Who is the manager?", HANDBOOK, {"named_documents": False}),
    ])
    def test_the_whole_index_is_searched(self, mine, question, searched, overrides):
        out = run(retrieve, self.asked(mine, question, searched, **overrides), mine)
        assert "named_documents" not in out.get("trace", {})
        assert any(p["metadata"]["source"] == "wikipedia" for p in out["passages"])

    def test_the_turn_keeps_the_files_it_searched(self):
        from nodes.base import finished_turn

        turn = finished_turn("Who is the manager?", "Who is the manager?", "Ruth Okafor", [],
                             {"named_documents": [{**self.HANDBOOK[0], "followed": True}]})
        assert turn["named_documents"] == [{**self.HANDBOOK[0], "followed": True}]
        assert "named_documents" not in finished_turn("Q?", "Q?", "A", [], {})

    def test_a_follow_up_that_may_stay_in_a_file_is_cached_apart(self, mine):
        from nodes.lookup_cache import follow_up_scope

        ctx = mine.context
        state = self.asked(mine, "Who is the manager?")
        assert follow_up_scope(ctx, ctx.pipeline, state) == ("upload/h.md",)
        assert follow_up_scope(ctx, ctx.pipeline, {**state, "turns": []}) == ()
        assert follow_up_scope(ctx, dataclasses.replace(ctx.pipeline, follow_up_file_score=None), state) == ()
        named = {**state, "standalone_question": "What does the handbook say about pay?"}
        assert follow_up_scope(ctx, ctx.pipeline, named) == ()  # it names the file: the question says the scope


class TestPlaceDocument:
    """Found trying the chat (session 69): "How many people live in Germany?" read Stuttgart's "sixth largest city
    in Germany" first and was answered 613,111. With the setting ``place_first`` (off by default), a question that
    asks a place's population searches the document titled as the place only."""

    PASSAGES = [("wiki/Stuttgart", "Stuttgart", "Stuttgart has a population of 613,111, making it the sixth largest city "
                 "in Germany."),
                ("wiki/Germany", "Germany", "Germany is a country in Central Europe."),
                ("wiki/Germany", "Germany", "Its 16 constituent states have a total population of over 83 million."),
                ("wiki/Mercury (planet)", "Mercury (planet)", "Mercury has no people living on it."),
                ("wiki/Mercury (element)", "Mercury (element)", "Mercury is a chemical element.")]

    @pytest.fixture
    def places(self, runtime, embedder):
        from components.passages import Passage

        return over(runtime, embedder, [Passage(f"{doc}#p0s{i}", title, text, {"source": "wikipedia", "doc_id": doc})
                                        for i, (doc, title, text) in enumerate(self.PASSAGES)])

    def asked(self, places, question, **overrides):
        overrides = {"place_first": True, **overrides}
        return run(retrieve, classified(places, question=question, tier="medium", **overrides), places)

    @pytest.mark.parametrize("question", ["How many people live in Germany?", "What is the population of Germany?",
                                          "what was the population of germany"])
    def test_a_places_population_is_searched_in_its_document(self, places, question):
        out = self.asked(places, question)
        assert {p["metadata"]["doc_id"] for p in out["passages"]} == {"wiki/Germany"}
        assert out["trace"]["place_document"] == {"doc_id": "wiki/Germany", "title": "Germany"}

    @pytest.mark.parametrize(("question", "overrides"), [
        ("How many people live in Germany?", {"place_first": False}),  # the setting off, the default
        ("How many people live in Mercury?", {}),  # two documents titled so
        ("How many people live in Bavaria?", {}),  # none
        ("Which is the sixth largest city in Germany?", {}),  # no population asked
    ])
    def test_the_whole_index_is_searched(self, places, question, overrides):
        out = self.asked(places, question, **overrides)
        assert "place_document" not in out.get("trace", {})
        assert len({p["metadata"]["doc_id"] for p in out["passages"]}) > 1


class TestNearFiles(UserFileIndex):
    """Found trying the API (session 69): with a travel policy uploaded, "Who leads the finance office?" searched
    the whole index, where Wikipedia's finance outranked the policy's "The finance office, led by Karin Weiss, ...".
    A question that names no file and follows none searches only the user's files when one of their passages
    scores at least ``file_first_score``; a question on another topic searches the whole index."""

    def first(self, mine, question, **overrides):
        return run(retrieve, classified(mine, question=question, tier="medium", **overrides), mine)

    def test_a_first_question_on_a_file_reads_the_file(self, mine):
        out = self.first(mine, "Who is the manager?")
        assert {p["metadata"]["doc_id"] for p in out["passages"]} == {"upload/h.md"}
        assert out["passages"][0]["text"] == "The manager is Ruth Okafor."
        assert out["trace"]["named_documents"] == [{**self.HANDBOOK[0], "near": True}]

    @pytest.mark.parametrize(("team_too", "searches"), [(False, 1), (True, 2)])
    def test_files_whose_best_passages_are_all_near_are_searched_once(self, runtime, embedder, team_too, searches):
        """The k best passages of all the files, where every one is a passage of a near file, are the near files' k
        best: they are read as found, not searched for again. Where one is not (the team list's, far from the
        question), the near files are searched again for their own k best."""
        from components.passages import Passage

        def file(doc, title, texts):
            return [Passage(f"{doc}#p{i}s0", title, t, {"source": "file", "name": f"{doc}.md", "doc_id": doc})
                    for i, t in enumerate(texts)]

        files = file("upload/p", "Travel policy", ["The finance office, led by Karin Weiss, answers questions on expenses.",
                                                   "Meals are paid up to 45 euros."])
        if team_too:
            files += file("upload/t", "Team", ["Maria Lopez leads the chemistry group.", "She was born in Lyon."])
        mine = over(runtime, embedder, files)
        index, calls = mine.context.index, []
        search = index.search
        index.search = lambda *a, **kw: calls.append(kw.get("within")) or search(*a, **kw)  # type: ignore[method-assign]
        out = self.first(mine, "Who leads the finance office?")
        assert out["trace"]["named_documents"] == [{"doc_id": "upload/p", "title": "Travel policy", "near": True}]
        assert [p["metadata"]["doc_id"] for p in out["passages"]] == ["upload/p", "upload/p"]
        assert out["passages"][0]["text"].startswith("The finance office") and len(calls) == searches

    def test_a_follow_up_of_a_question_that_read_the_whole_index_reads_a_file_near_it(self, mine):
        out = run(retrieve, self.asked(mine, "Who is the manager?", None), mine)  # the question before read the index
        assert out["trace"]["named_documents"] == [{**self.HANDBOOK[0], "near": True}]
        assert out["passages"][0]["text"] == "The manager is Ruth Okafor."

    def test_only_the_files_near_the_question_are_searched(self, runtime, embedder):
        """Found in session 69's walk: with a travel policy and a team list uploaded, "Who leads the finance office?"
        said it "searched “team” and “Travel policy” only (they hold passages near the question)": the five best
        passages of all the files were read, and the team list's, far from the question, marked it near."""
        from components.passages import Passage

        def file(doc, title, texts):
            return [Passage(f"{doc}#p{i}s0", title, t, {"source": "file", "name": f"{doc}.md", "doc_id": doc})
                    for i, t in enumerate(texts)]

        wiki = [Passage("wiki/Finance#p0s0", "Finance", "Finance is the study of money and assets.",
                        {"source": "wikipedia", "doc_id": "wiki/Finance"})]
        two = over(runtime, embedder, wiki + file("upload/p", "Travel policy", [
            "The finance office, led by Karin Weiss, answers questions on expenses.", "Meals are paid up to 45 euros."])
            + file("upload/t", "Team", ["Maria Lopez leads the chemistry group.", "She was born in Lyon."]))
        out = self.first(two, "Who leads the finance office?")
        assert out["trace"]["named_documents"] == [{"doc_id": "upload/p", "title": "Travel policy", "near": True}]
        assert {p["metadata"]["doc_id"] for p in out["passages"]} == {"upload/p"}

    @pytest.mark.parametrize(("question", "file"), [
        ("Where was Beethoven born?", False),  # a name the files never mention: the whole index
        ("Where was Maria Lopez born?", True), ("Which group does Maria Lopez lead?", True),
        ("Where was Maria Schmidt born?", False),  # one of its names the files never mention
    ])
    def test_a_question_naming_what_the_files_never_mention_searches_the_whole_index(self, runtime, embedder, question,
                                                                                     file):
        """Found in session 69's walk: with a team list uploaded ("She was born in Lyon." scores 0.50 against it),
        "Where was Beethoven born?" read the team list only and was withheld; the whole index answers "Bonn"."""
        from components.passages import Passage

        team = [Passage(f"upload/t#p0s{i}", "Team", t, {"source": "file", "name": "team.txt", "doc_id": "upload/t"})
                for i, t in enumerate(["Maria Lopez leads the chemistry group.", "She was born in Lyon."])]
        wiki = [Passage("wiki/Ludwig van Beethoven#p0s0", "Ludwig van Beethoven", "Ludwig van Beethoven was born in Bonn.",
                        {"source": "wikipedia", "doc_id": "wiki/Ludwig van Beethoven"})]
        out = self.first(over(runtime, embedder, wiki + team), question)
        assert bool(out.get("trace", {}).get("named_documents")) is file

    def test_a_files_words_are_read_once_per_revision(self, embedder):
        """The names a question gives are looked up in a word set per file, read once per revision of the index (the
        file's passages are not read again for each question) and again after a change."""
        from components.index import PassageIndex
        from components.passages import Passage
        from nodes.retrieve import document_words, names_held

        def team(i, text):
            return Passage(f"upload/t#p0s{i}", "Team", text, {"source": "file", "name": "team.txt", "doc_id": "upload/t"})

        index = PassageIndex(embedder.name, embedder.dimension)
        index.add([team(0, "Maria López leads the chemistry group.")], embedder.embed_documents(["x"]))
        read = []
        passages = index.document_passages
        index.document_passages = lambda doc: read.append(doc) or passages(doc)  # type: ignore[method-assign]
        assert document_words(index, "upload/t") >= {"team", "maria", "lopez", "chemistry"}
        assert names_held("Which group does Maria Lopez lead?", index, {"upload/t"}) and len(read) == 1
        assert not names_held("Where was Karin Weiss born?", index, {"upload/t"}) and len(read) == 1
        index.add([team(1, "Karin Weiss runs the finance office.")], embedder.embed_documents(["y"]))
        assert names_held("Where was Karin Weiss born?", index, {"upload/t"}) and len(read) == 2

    def test_a_files_words_do_not_keep_the_index_alive(self, embedder):
        """The word sets, the user's files and the titles are kept per index, not by it: an index no one holds any
        more is freed with them (a cache keyed on the index object held the last ones it had read, and their
        passages)."""
        import gc
        import weakref

        from components.index import PassageIndex
        from components.passages import Passage
        from components.titles import plain_titles
        from nodes.retrieve import document_words, user_files

        index = PassageIndex(embedder.name, embedder.dimension)
        index.add([Passage("upload/t#p0s0", "Team", "Maria Lopez leads the chemistry group.",
                           {"source": "file", "name": "team.txt", "doc_id": "upload/t"})], embedder.embed_documents(["x"]))
        assert "lopez" in document_words(index, "upload/t")
        assert [f.doc_id for f in user_files(index)] == ["upload/t"] and plain_titles(index) == {"team": {"upload/t"}}
        held = weakref.ref(index)
        del index
        gc.collect()
        assert held() is None

    def test_followed_files_come_before_near_ones(self, mine):
        out = run(retrieve, self.asked(mine, "Who is the manager?"), mine)
        assert out["trace"]["named_documents"] == [{**self.HANDBOOK[0], "followed": True}]

    @pytest.mark.parametrize(("question", "overrides"), [
        ("When did Napoleon die?", {}), ("Who is the manager?", {"file_first_score": None}),
        ("Who is the manager?", {"named_documents": False}), ("Who is the manager?", {"file_first_score": 1.0}),
    ])
    def test_the_whole_index_is_searched(self, mine, question, overrides):
        out = self.first(mine, question, **overrides)
        assert "named_documents" not in out.get("trace", {})
        assert any(p["metadata"]["source"] == "wikipedia" for p in out["passages"])

    def test_a_request_to_summarize_is_left_to_what_it_names(self, mine):
        """"Summarize the handbook's rules on the manager" names the handbook; a request that names no file must
        find the document it names among the whole index's passages (nodes.summarize), not the user's files."""
        from components.requests import summarized_thing

        question = "Summarize what a manager does"
        assert summarized_thing(question) is not None
        assert "named_documents" not in self.first(mine, question).get("trace", {})

    def test_a_follow_up_after_a_near_file_stays_in_it(self, mine):
        out = run(retrieve, self.asked(mine, "Who is the manager?", [{**self.HANDBOOK[0], "near": True}]), mine)
        assert out["trace"]["named_documents"] == [{**self.HANDBOOK[0], "followed": True}]

    def test_the_setting_is_checked(self):
        from pipeline.configuration import ConfigurationError, PipelineConfig

        assert PipelineConfig(file_first_score=None).file_first_score is None
        for bad in (1.5, True, "high"):
            with pytest.raises(ConfigurationError, match="file_first_score"):
                PipelineConfig(file_first_score=bad)
        assert PipelineConfig().with_overrides({"file_first_score": None}).file_first_score is None


class TestSuppliedPieces:
    """Supplied documents are cut and embedded once per set of documents, for the last SUPPLIED_KEPT sets."""

    class CountingEmbedder:
        name = "counting"

        def __init__(self):
            self.calls: list[list[str]] = []

        def embed_documents(self, texts):
            self.calls.append(list(texts))
            return np.array([[float(len(t)), 1.0] for t in texts], dtype=np.float32)

    def test_the_same_documents_are_embedded_once_and_changed_ones_again(self):
        from nodes.retrieve import supplied_passages

        embedder, query = self.CountingEmbedder(), np.array([1.0, 0.0], dtype=np.float32)
        docs = [{"title": "T", "text": "A short one. A much longer sentence than that."}]
        first = supplied_passages(docs, query, 1, embedder)
        assert supplied_passages(docs, query, 2, embedder)[:1] == first and len(embedder.calls) == 1
        edited = [{"title": "T", "text": "A short one. A much longer sentence than that one."}]
        assert supplied_passages(edited, query, 1, embedder)[0]["text"] == "A much longer sentence than that one."
        assert len(embedder.calls) == 2  # an edited document is never read from the embeddings of the old one

    def test_only_the_last_sets_are_kept(self):
        from nodes.retrieve import SUPPLIED_KEPT, supplied_passages

        embedder, query = self.CountingEmbedder(), np.array([1.0, 0.0], dtype=np.float32)
        sets = [[{"title": "K", "text": f"Kept set number {i}."}] for i in range(SUPPLIED_KEPT + 1)]
        for docs in sets:
            supplied_passages(docs, query, 1, embedder)
        supplied_passages(sets[-1], query, 1, embedder)  # still kept
        assert len(embedder.calls) == SUPPLIED_KEPT + 1
        supplied_passages(sets[0], query, 1, embedder)  # the oldest went
        assert len(embedder.calls) == SUPPLIED_KEPT + 2


class TestGradeConfidence:
    def test_threshold(self, runtime):
        settings = {"tau": 0.52}
        assert run(grade_confidence, {"settings": settings, "passages": [{"score": 0.6}]}, runtime)["low_confidence"] is False
        assert run(grade_confidence, {"settings": settings, "passages": [{"score": 0.5}]}, runtime)["low_confidence"] is True
        assert run(grade_confidence, {"settings": settings, "passages": []}, runtime)["low_confidence"] is True


class TestRerank:
    def test_orders_by_rerank_score(self, runtime):
        state = classified(runtime, "When was the Eiffel Tower built?", tier="hard")
        assert state["settings"]["evidence_order"] == "score"  # the configuration's default
        state.update(run(retrieve, state, runtime))
        out = run(rerank, state, runtime)
        scores = [p["rerank_score"] for p in out["passages"]]
        assert scores == sorted(scores, reverse=True) and len(scores) == 10
        assert out["passages"][0]["title"] == "Eiffel Tower"

    def test_keeps_the_best_k_of_the_candidates_and_what_a_correction_added(self, runtime):
        """Ten candidates for five kept, and two more a corrective retrieval added: the three worst go."""
        passages = [{"id": f"p{i}", "title": f"Filler {i}", "text": f"Unrelated sentence {i}.", "metadata": {},
                     "score": 0.5 - 0.01 * i} for i in range(12)]
        passages[8] = {**passages[8], "title": "Eiffel Tower", "text": "The Eiffel Tower was built from 1887 to 1889."}
        state = {"question": "When was the Eiffel Tower built?", "settings": {"retrieve_k": 10, "keep_k": 5},
                 "passages": passages}
        out = run(rerank, state, runtime)
        assert [p["id"] for p in out["passages"]] == ["p8", "p0", "p1", "p2", "p3", "p4", "p5"]
        assert out["trace"]["rerank"] == {"candidates": 12, "kept": 7, "promoted": 1}

    @pytest.mark.parametrize("found, kept", [(2, 2), (5, 5), (7, 5)])
    def test_fewer_candidates_than_retrieved_keep_the_best_k(self, runtime, found, kept):
        """An index (or a set of supplied documents) holding fewer passages than the budget retrieves
        gives fewer candidates: the best ``keep_k`` of them are kept, never none (dropping the full
        surplus of 5 from 2 candidates left the model with no evidence at all)."""
        passages = [{"id": f"p{i}", "title": f"Filler {i}", "text": f"Unrelated sentence {i}.", "metadata": {},
                     "score": 0.5 - 0.01 * i} for i in range(found)]
        state = {"question": "When was the Eiffel Tower built?", "settings": {"retrieve_k": 10, "keep_k": 5},
                 "passages": passages}
        out = run(rerank, state, runtime)
        assert len(out["passages"]) == kept
        assert out["trace"]["rerank"] == {"candidates": found, "kept": kept, "promoted": 0}

    def test_title_diverse_order_puts_each_documents_best_passage_first(self, runtime):
        """The kept passages, each title's best first: a second passage of a document already in waits
        behind every other document's best; which passages are kept does not change."""
        titles = ["Eiffel Tower", "Eiffel Tower", "Gustave Eiffel", "Eiffel Tower", "Paris", "Gustave Eiffel", "Filler"]
        passages = [{"id": f"p{i}", "title": t, "text": f"{t} sentence {i}.", "metadata": {}, "score": 0.9 - 0.05 * i}
                    for i, t in enumerate(titles)]

        class ByPosition:  # the dense order stands as the rerank order, so the test reads the reordering alone
            name = "by-position"

            def score(self, question, shown, dense):
                return list(dense)

        state = {"question": "When was the Eiffel Tower built?", "passages": passages,
                 "settings": {"retrieve_k": 7, "keep_k": 6, "evidence_order": "title_diverse"}}
        by_position = Runtime(context=dataclasses.replace(runtime.context, reranker=ByPosition()))
        out = run(rerank, state, by_position)
        assert [p["id"] for p in out["passages"]] == ["p0", "p2", "p4", "p1", "p3", "p5"]  # p6, the worst, is dropped
        assert out["trace"]["evidence_order"] == {"order": "title_diverse", "moved": 4}
        state["settings"] = {**state["settings"], "evidence_order": "score"}
        out = run(rerank, state, by_position)
        assert [p["id"] for p in out["passages"]] == ["p0", "p1", "p2", "p3", "p4", "p5"]
        assert "evidence_order" not in out["trace"]


class TestCompress:
    def test_respects_budget_and_keeps_evidence_order(self, runtime):
        state = classified(runtime, "Who discovered radium?", tier="hard")
        state.update(run(retrieve, state, runtime))
        out = run(compress, state, runtime)
        info = out["trace"]["compression"]
        assert 0 < info["context_chars"] <= 2000 and not info["truncated"]
        assert [e["n"] for e in out["evidence"]] == list(range(1, len(out["evidence"]) + 1))
        ranks = [next(i for i, p in enumerate(state["passages"]) if p["id"] == e["passage_id"]) for e in out["evidence"]]
        assert ranks == sorted(ranks)

    def test_truncates_first_passage_when_nothing_fits(self, embedder):
        passages = [{"id": "x", "title": "T", "text": "word " * 100, "metadata": {}, "score": 0.9}]
        evidence, truncated = select_evidence(passages, np.zeros(384, dtype=np.float32), 60, embedder)
        assert truncated and evidence[0]["text"].endswith("…")
        assert len(f"[1] T: {evidence[0]['text']}") <= 60

    def test_multi_sentence_passages_keep_best_sentences(self, embedder):
        text = "Radium was discovered by Marie Curie. The weather was mild that year. Paris had many cafes."
        passages = [{"id": "x", "title": "Radium", "text": text, "metadata": {}, "score": 0.7}]
        query = embedder.embed_query("Who discovered radium?")
        evidence, _ = select_evidence(passages, query, 60, embedder)
        assert evidence[0]["text"] == "Radium was discovered by Marie Curie."


def words(text):
    """A stand-in tokenizer for budget arithmetic: one token per word."""
    return len(text.split())


class TestExtendEvidence:
    PASSAGES = [{"id": f"p{i}", "title": f"T{i}", "text": f"sentence number {i} with five words", "metadata": {},
                 "score": 0.9 - i / 10} for i in range(6)]
    QUERY = np.zeros(384, dtype=np.float32)

    def test_fills_the_budget_with_the_best_passages(self, embedder):
        evidence, truncated = extend_evidence(self.PASSAGES, self.QUERY, [], 18, embedder, words)
        # each item costs 8 words ("[n] Tn: " + six words) and one separator: two fit in 18
        assert [e["passage_id"] for e in evidence] == ["p0", "p1"] and not truncated
        assert [e["n"] for e in evidence] == [1, 2]

    def test_extension_keeps_earlier_items_first_and_unchanged(self, embedder):
        first, _ = extend_evidence(self.PASSAGES, self.QUERY, [], 18, embedder, words)
        second, _ = extend_evidence(self.PASSAGES, self.QUERY, first, 36, embedder, words)
        assert second[: len(first)] == first
        assert [e["passage_id"] for e in second] == ["p0", "p1", "p2", "p3"]
        assert [e["n"] for e in second] == [1, 2, 3, 4]
        assert words("\n".join(f"[{e['n']}] {e['title']}: {e['text']}" for e in second)) <= 36

    def test_nothing_left_adds_nothing(self, embedder):
        everything, _ = extend_evidence(self.PASSAGES, self.QUERY, [], 1000, embedder, words)
        again, _ = extend_evidence(self.PASSAGES, self.QUERY, everything, 2000, embedder, words)
        assert again == everything and len(everything) == len(self.PASSAGES)

    def test_rank_fill_takes_whole_passages_in_order_and_stops_at_the_first_too_big(self, embedder):
        passages = [dict(p) for p in self.PASSAGES]
        passages[1]["text"] = "a much longer second passage " * 4
        evidence, _ = extend_evidence(passages, self.QUERY, [], 30, embedder, words, fill="rank")
        assert [e["passage_id"] for e in evidence] == ["p0"]  # p1 does not fit, and nothing after it is taken
        more, _ = extend_evidence(passages, self.QUERY, evidence, None, embedder, words, fill="rank")
        assert [e["passage_id"] for e in more] == [p["id"] for p in passages]  # no budget: all, in order

    def test_rank_fill_always_takes_one_passage(self, embedder):
        evidence, truncated = extend_evidence(self.PASSAGES, self.QUERY, [], 2, embedder, words, fill="rank")
        assert [e["passage_id"] for e in evidence] == ["p0"] and evidence[0]["text"] == self.PASSAGES[0]["text"]
        assert not truncated

    def test_truncates_the_best_sentence_when_nothing_fits(self, embedder):
        long = [{"id": "x", "title": "T", "text": "word " * 100, "metadata": {}, "score": 0.9}]
        evidence, truncated = extend_evidence(long, self.QUERY, [], 20, embedder, words)
        assert truncated and evidence[0]["text"].endswith("…")
        assert words(f"[1] T: {evidence[0]['text']}") <= 20


class TestConfidence:
    def test_citation_tokens_do_not_count(self):
        metadata = {"token_probs": [0.9, 0.8, 0.1, 0.2, 0.95], "token_margins": [0.85, 0.7, 0.0, 0.1, 0.9],
                    "token_entropies": [0.1, 0.2, 2.0, 1.5, 0.1], "token_pieces": ["Par", "is", " [", "1", "]"]}
        c = confidence(metadata, abstained=False)
        assert c["min_prob"] == pytest.approx(0.8) and c["first_prob"] == pytest.approx(0.9)
        assert c["first_margin"] == pytest.approx(0.85)
        assert c["mean_logprob"] == pytest.approx((np.log(0.9) + np.log(0.8)) / 2)
        assert c["neg_mean_entropy"] == pytest.approx(-0.15)

    def test_abstention_has_no_confidence(self):
        c = confidence({"token_probs": [0.99], "token_pieces": ["I"]}, abstained=True)
        assert c["min_prob"] == 0.0 and c["mean_logprob"] < np.log(1e-12) and np.isfinite(c["mean_logprob"])

    def test_no_probabilities_no_signal(self):
        assert set(confidence({}, abstained=False).values()) == {None}


class TestBelowThreshold:
    """The rule that stops an answer the cascade will extend: it holds only once the answer's
    confidence (read as :func:`confidence` reads it) is certain to end below the threshold."""

    def test_first_token_signals_decide_at_the_first_token(self):
        assert below_threshold("first_prob", 0.5)([0.4], [0.9], [])
        assert not below_threshold("first_prob", 0.5)([0.6, 0.1], [0.9, 0.0], ["Par"])
        assert below_threshold("first_margin", 0.5)([0.9], [0.3], [])

    def test_min_prob_waits_for_a_later_tokens_text(self):
        rule = below_threshold("min_prob", 0.5)
        assert rule([0.3], [0.1], [])  # the first token always counts
        assert not rule([0.9, 0.3], [0.8, 0.1], ["Par"])  # the newest could open a citation marker
        assert rule([0.9, 0.3, 0.8], [0.8, 0.1, 0.7], ["Par", "is"])  # now it is known to count
        assert not rule([0.9, 0.3, 0.8], [0.8, 0.1, 0.7], ["Par", " ["])  # a marker's tokens never count

    def test_a_stopped_answer_would_have_been_extended(self):
        """Whatever the rest of the answer, its confidence stays below the threshold."""
        probs, pieces = [0.9, 0.3, 0.8], ["Par", "is"]
        assert below_threshold("min_prob", 0.5)(probs, [0.0] * 3, pieces)
        for rest in ([], [0.99, 0.99], [0.1]):
            finished = {"token_probs": probs + rest, "token_pieces": pieces + ["x"] * (len(rest) + 1)}
            assert confidence(finished, abstained=False)["min_prob"] < 0.5

    def test_signals_read_from_the_whole_answer_cannot_stop_early(self):
        with pytest.raises(ValueError, match="early signals"):
            below_threshold("mean_logprob", -1.0)


class TestGradeAnswer:
    LADDER = [{"name": "medium", "k": 10, "context_tokens": 128, "context_chars": None, "max_new_tokens": 64,
               "rerank": True, "correct": True}]

    def state(self, score=0.5, abstained=False, ladder=LADDER, left=True, threshold=0.6):
        passages = [{"id": "a"}, {"id": "b"}] if left else [{"id": "a"}]
        return {"settings": {"confidence_signal": "min_prob", "accept_threshold": threshold, "ladder": ladder,
                             "tier": "easy", "budget": {"name": "easy"}},
                "steps": [{"tier": "easy", "abstained": abstained, "confidence": {"min_prob": score},
                           "answer": "Paris"}],
                "passages": passages, "evidence": [{"passage_id": "a"}], "escalations": 0,
                "question": "Where?", "answer": "Paris", "citations": []}

    def test_confident_answer_is_accepted(self):
        out = grade_answer(self.state(score=0.7), None)
        assert out["steps"][-1]["decision"] == "accept" and "settings" not in out

    def test_no_answer_becomes_a_turn_before_the_check(self):
        """An unsure answer that is extended is not part of the conversation (a follow-up's
        rewriting would read it as an earlier answer), and an accepted one is recorded only by
        check_answer, which may still withhold it."""
        assert "turns" not in grade_answer(self.state(score=0.7), None)
        assert "turns" not in grade_answer(self.state(score=0.3), None)

    def test_low_confidence_moves_up_the_ladder(self):
        out = grade_answer(self.state(score=0.3), None)
        assert out["steps"][-1]["decision"] == "extend" and out["escalations"] == 1
        assert out["settings"]["tier"] == "medium" and out["settings"]["budget"]["context_tokens"] == 128
        assert out["settings"]["ladder"] == []

    def test_an_answer_stopped_early_is_extended(self):
        state = self.state(score=0.9)
        state["steps"][0]["stopped_early"] = True
        assert grade_answer(state, None)["steps"][-1]["decision"] == "extend"

    def test_abstention_extends_even_when_confident(self):
        assert grade_answer(self.state(score=0.9, abstained=True), None)["steps"][-1]["decision"] == "extend"

    @pytest.mark.parametrize("kwargs", [{"ladder": []}, {"left": False}, {"score": None}])
    def test_accepts_when_it_cannot_or_need_not_extend(self, kwargs):
        assert grade_answer(self.state(**{"score": 0.1, **kwargs}), None)["steps"][-1]["decision"] == "accept"


class TestGenerate:
    def test_answers_with_trace(self, runtime):
        state = classified(runtime, tier="easy")
        state.update(run(retrieve, state, runtime))
        state.update(run(compress, state, runtime))
        out = run(generate, state, runtime)
        assert isinstance(out["answer"], str)
        trace = out["trace"]
        assert trace["prompt_tokens"] > 0 and 0 < trace["output_tokens"] <= 64
        assert "2001: A Space Odyssey" in trace["context"]
        assert trace["timings_ms"]["generate"] > 0
        assert trace["supported"] == bool(out["citations"])
        assert trace["citation_source"] in ("model", "attributed", "unsupported", "none")

    @pytest.mark.parametrize("reply", ["", "  \n", "[1]", "[1][2]."])
    def test_an_answer_of_nothing_is_the_models_abstention(self, runtime, reply):
        """The chat showed an empty answer, neither withheld nor extended: "What other films did he
        direct?" (read "...Steven Spielberg...") got no token before the end from the default model,
        its confidence was the end token's, so the cascade accepted it, and the check had nothing to
        read. A reply with no answer in it (nothing, or only citation markers) is the model declining,
        as its abstention sentence is: the cascade extends it while a tier is left, then the check
        abstains by the model and the chat shows the closest passages."""
        from langchain_core.language_models.fake_chat_models import FakeListChatModel

        state = classified(runtime, tier="easy")
        state.update(run(retrieve, state, runtime))
        state.update(run(compress, state, runtime))
        silent = Runtime(context=dataclasses.replace(runtime.context, generator=FakeListChatModel(responses=[reply])))
        out = run(generate, state, silent)
        assert out["steps"][-1]["abstained"] is True and out["trace"]["abstained"] is True
        assert out["answer"] == out["steps"][-1]["answer"] == ABSTENTION  # what the chat and the API say
        assert out["citations"] == [] and out["steps"][-1]["raw_output"] == reply.strip()

    def test_a_question_that_asks_two_things_is_told_to_answer_each(self, runtime):
        """Session 67: "Who wrote Hamlet and when was it written?" was answered "William Shakespeare". The prompt
        of a question that asks two things (components.requests.asks_two_things) tells the model to answer each,
        and the trace says so; any other question's prompt is as it was."""
        from langchain_core.language_models.fake_chat_models import FakeListChatModel

        from prompts import template

        seen: list[str] = []

        class Recording(FakeListChatModel):
            def invoke(self, messages, *args, **kwargs):
                seen.append(messages[-1].text)
                return super().invoke(messages, *args, **kwargs)

        model = Recording(responses=["Stanley Kubrick; 1968 [1]", "Stanley Kubrick [1]"])
        recorded = Runtime(context=dataclasses.replace(runtime.context, generator=model))
        for question in ("Who directed 2001: A Space Odyssey and when was it released?",
                         "Who directed 2001: A Space Odyssey?"):
            state = classified(runtime, question, tier="easy")
            state.update(run(retrieve, state, runtime))
            state.update(run(compress, state, runtime))
            out = run(generate, state, recorded)
            assert out["trace"].get("two_things", False) is question.endswith("released?")
        assert [template("answer_two_things") in text for text in seen] == [True, False]
        assert out["answer"] == "Stanley Kubrick"
        seen.clear()  # turned off, the prompt is as before session 67
        off = Runtime(context=dataclasses.replace(
            recorded.context, pipeline=dataclasses.replace(runtime.context.pipeline, two_things=False)))
        state = classified(off, "Who directed 2001: A Space Odyssey and when was it released?", tier="easy")
        state.update(run(retrieve, state, off))
        state.update(run(compress, state, off))
        assert "two_things" not in run(generate, state, off)["trace"]
        assert seen and template("answer_two_things") not in seen[0]

    @staticmethod
    def room_of(window: int):
        """A context of ``window`` characters: what a prompt of the items leaves (10 for the question)."""
        return lambda items: window - 10 - sum(len(e["text"]) for e in items)

    def test_fit_to_context_drops_the_last_ranked_items_first(self):
        evidence = [{"n": n, "passage_id": f"p{n}", "title": f"T{n}", "text": "x" * 40} for n in (1, 2, 3)]
        assert fit_to_context(evidence, self.room_of(200), reserve=20) == (evidence, None)  # 120 + 10 + 20 fit
        assert fit_to_context(evidence, lambda items: None, reserve=20) == (evidence, None)  # no window known
        assert fit_to_context(evidence, self.room_of(100), reserve=20) == (evidence[:1], {"dropped": 2, "cut": 0})

    def test_fit_to_context_cuts_the_one_item_left_at_a_word(self):
        item = {"n": 1, "passage_id": "p1", "title": "T", "text": "The Quux river ends in Lake Bimble. " + "entry " * 200}
        kept, fitted = fit_to_context([item, {**item, "n": 2}], self.room_of(300), reserve=64)
        assert fitted == {"dropped": 1, "cut": 1} and len(kept) == 1
        text = kept[0]["text"]
        assert text.endswith(ELLIPSIS) and item["text"].startswith(text[: -len(ELLIPSIS)])
        assert text.startswith("The Quux river ends in Lake Bimble.") and not text[: -len(ELLIPSIS)].endswith(" ")
        assert 300 - 10 - len(text) >= 64
        unbroken = {**item, "text": "z" * 1000}  # no word to cut at: characters
        (cut,), fitted = fit_to_context([unbroken], self.room_of(300), reserve=64)
        assert fitted == {"dropped": 0, "cut": 1} and 300 - 10 - len(cut["text"]) >= 64

    def test_an_answer_from_evidence_cut_to_the_context_is_not_extended(self, runtime):
        state = classified(runtime, "When was the Eiffel Tower built?")
        state.update(run(retrieve, state, runtime))
        state["settings"] = {**state["settings"], "ladder": [state["settings"]["budget"]]}
        state["evidence"] = []
        step = {"tier": "easy", "evidence_items": 1, "prompt_tokens": 1, "prompt_tokens_evaluated": 1,
                "output_tokens": 1, "answer": "1889", "abstained": False, "confidence": {}, "generate_ms": 1.0}
        assert can_extend({**state, "steps": [step]})
        assert not can_extend({**state, "steps": [{**step, "fitted": {"dropped": 3, "cut": 0}}]})

    def test_split_citations(self):
        assert split_citations("Stanley Kubrick [1][3, 2] [9].", 3) == ("Stanley Kubrick.", [1, 3, 2])
        assert split_citations("no markers", 3) == ("no markers", [])
        assert split_citations("The answer is: Paris [1]", 1) == ("Paris", [1])
        assert split_citations("Answer: 1889", 1) == ("1889", [])

    def test_split_citations_leaves_no_separator_of_a_marker_list(self):
        assert split_citations("Yes [1], [2], [3]", 3) == ("Yes", [1, 2, 3])
        assert split_citations("Economic inequality [1],[2],[3],", 3) == ("Economic inequality", [1, 2, 3])
        assert split_citations("Marie Curie [1]; [2] and [3].", 3) == ("Marie Curie.", [1, 2, 3])

    def test_split_citations_leaves_no_separator_where_the_answer_stopped_at_a_marker(self):
        # without the model's markers generation stops where "[" begins: "older, [1] [2]" arrives as "older,"
        assert split_citations("The Eiffel Tower is older,", 2) == ("The Eiffel Tower is older", [])
        assert split_citations("from 1887 to 1889; ", 2) == ("from 1887 to 1889", [])
        assert split_citations("Gustave Eiffel (", 2) == ("Gustave Eiffel", [])
        assert split_citations("It was built by Gustave Eiffel:", 2) == ("It was built by Gustave Eiffel", [])
        assert split_citations("Paris.", 2) == ("Paris.", [])  # a full stop ends an answer
        assert split_citations("U.S.", 2) == ("U.S.", [])
        assert split_citations("Paris [1], France [2]", 2) == ("Paris, France", [1, 2])
        assert split_citations("1903 [1, 2], with Pierre [2]", 2) == ("1903, with Pierre", [1, 2])

    def test_attribute(self):
        evidence = [{"n": 1, "title": "A", "text": "Paris is in France."},
                    {"n": 2, "title": "B", "text": "Stanley Kubrick directed it."}]
        assert attribute("Who directed it?", "Stanley Kubrick", evidence) == [2]
        assert attribute("Who directed it?", "the", evidence) == []
        assert attribute("Who directed it?", "Stanley Baldwin", evidence) == []  # half the words: not enough

    def test_a_number_written_in_figures_is_held_by_the_same_number_in_words(self):
        """Found trying the chat (session 66): "How many guests may a member bring?" answered "2" beside
        "Members may bring two guests at a time." was cited to nothing, so the chat flagged a right answer
        unsupported. Citations read "two" as 2 (the check's ``support`` feature is left as it was fit)."""
        from nodes.generate import support

        evidence = [{"n": 1, "title": "Club rules › Guests", "text": "Members may bring two guests at a time."},
                    {"n": 2, "title": "Club rules › Boats", "text": "Boats are kept in the yard for 12 weeks."}]
        question = "How many guests may a member bring?"
        assert cite(question, "2", [], evidence) == ([1], "attributed")
        assert cite(question, "two guests", [], evidence) == ([1], "attributed")
        assert cite("How long are boats kept?", "twelve weeks", [], evidence) == ([2], "attributed")
        assert cite(question, "3", [], evidence) == ([], "unsupported")
        assert support(evidence[0], "2") == 0.0  # the check's feature, as fit

    def test_an_answer_that_joins_two_passages_is_cited_to_both(self):
        """Found trying the chat (session 62): "What do the club rules say about guests?" was answered
        "Members may bring two at a time. They must sign the book", the two sentences of the section, and
        marked unsupported: neither passage holds two thirds of its words alone. Two that hold them together
        support it, each holding words the other does not."""
        evidence = [{"n": 1, "title": "Club rules › Guests", "text": "Members may bring two at a time."},
                    {"n": 2, "title": "Club rules › Guests", "text": "They must sign the book in the clubhouse."},
                    {"n": 3, "title": "Club rules › Boats", "text": "Boats are kept in the yard in winter."}]
        question = "What do the club rules say about guests?"
        assert attribute(question, "Members may bring two at a time. They must sign the book", evidence) == [1, 2]
        # best first, as one passage's citations come
        assert cite(question, "They must sign the book in the clubhouse. Members bring two.", [], evidence) == (
            [2, 1], "attributed")
        assert attribute(question, "Members may bring two at a time. They must pay a fee of ten pounds", evidence) == []
        assert attribute(question, "Members may bring two at a time", evidence) == [1]  # one holds it: that one

    def test_an_answer_of_sentences_is_cited_to_what_holds_each(self):
        """An answer of three sentences, each from a passage of its own (session 62: "What do the club rules
        say about guests?", kept as written): each sentence is cited to what holds it, in the answer's order.
        Where one sentence is held by nothing, the answer is held to its words as a whole, as before."""
        evidence = [{"n": 1, "title": "Club rules › Guests", "text": "Members may bring two at a time."},
                    {"n": 2, "title": "Club rules › Guests", "text": "They must sign the book in the clubhouse."},
                    {"n": 3, "title": "Club rules › Subscriptions", "text": "Members under 18 pay half."}]
        question = "What do the club rules say about guests?"
        answer = "Members may bring two at a time. They must sign the book in the clubhouse. Members under 18 pay half."
        assert attribute(question, answer, evidence) == [1, 2, 3]
        assert cite(question, answer, [], evidence) == ([1, 2, 3], "attributed")  # as the answer node cites it
        assert attribute(question, "Members under 18 pay half. Members may bring two at a time.", evidence) == [3, 1]
        unheld = "Members may bring two at a time. They must sign the book in the clubhouse. Boats need radios."
        assert attribute(question, unheld, evidence) == [1, 2]  # the whole: two passages hold two thirds of it

    def test_the_passages_found_that_hold_an_unsupported_answer(self):
        """Found trying the chat (session 83): "Who painted the Mona Lisa?" was answered "Leonardo da Vinci"
        from two passages that do not say so; the one that does had been retrieved, fourth, and not read. The
        passages found that hold an answer are read as its citations are, in rank order."""
        from nodes.generate import found_holders

        def hit(pid: str, title: str, text: str) -> dict:
            return {"id": pid, "title": title, "text": text, "metadata": {}, "score": 0.6}

        passages = [hit("s2", "Mona Lisa", "The painting's novel qualities include the subject's enigmatic expression."),
                    hit("q4", "Along the River", "It has been called China's Mona Lisa."),
                    hit("s0", "Mona Lisa", "The Mona Lisa is a half-length portrait painting by the Italian artist "
                                           "Leonardo da Vinci."),
                    hit("l0", "Leonardo da Vinci", "He was an Italian polymath of the High Renaissance.")]
        question = "Who painted the Mona Lisa?"
        assert found_holders(question, "Leonardo da Vinci", passages) == ["s0", "l0"]  # the title holds it too
        assert found_holders(question, "Leonardo, from 1503 to 1506", passages) == []  # a third of what it claims
        assert found_holders(question, "Michelangelo", passages) == []
        assert found_holders(question, "the", passages) == []  # claims nothing
        assert found_holders(question, "Leonardo da Vinci", []) == []

    EVIDENCE = [{"n": 1, "title": "Brine", "text": "Brine freezes at 0 °F."},
                {"n": 2, "title": "Water", "text": "Water boils at 100 °C, or 212 °F, at sea level."},
                {"n": 3, "title": "Italy", "text": "Rome is the capital of Italy."}]

    @pytest.mark.parametrize("answer, marked, expected", [
        ("212 °F", [2], ([2], "model")),  # its own marker, and the item holds it
        ("212 °F", [1], ([2], "attributed")),  # the marked item does not hold it: the one that does
        ("212 °F", [], ([2], "attributed")),  # no marker
        ("100 °F", [1], ([], "unsupported")),  # item 2 has "100 °C" and "212 °F", nobody "100 °F"
        ("Venice", [3], ([], "unsupported")),
        ("Rome, the capital of Italy in 1871", [3], ([3], "model")),  # 3 of 4 content words
        ("I cannot answer from the evidence.", [], ([], "none")),  # an abstention
    ])
    def test_citations_must_support_the_answer(self, answer, marked, expected):
        assert cite("What is it?", answer, marked, self.EVIDENCE) == expected

    def test_no_evidence_no_citation(self):
        assert cite("What is the capital of France?", "Paris", [], []) == ([], "none")

    @pytest.mark.parametrize("question, answer, marked, expected", [
        # no passage says "yes": a bare yes or no is held to the question it affirms or denies
        ("Is Rome the capital of Italy?", "Yes", [3], ([3], "model")),
        ("Is Rome the capital of Italy?", "Yes.", [], ([3], "attributed")),
        ("Is Venice the capital of Italy?", "No", [], ([3], "attributed")),  # item 3 holds "capital of Italy"
        ("Is Venice a city of canals?", "No", [3], ([], "unsupported")),  # no item is about it
        # a yes or no with more words: the words after it
        ("Is Rome in Italy?", "Yes, Rome is the capital of Italy", [3], ([3], "model")),
        ("Is Rome in Italy?", "No, Venice is", [3], ([], "unsupported")),
    ])
    def test_a_yes_or_no_answer_is_held_to_what_it_claims(self, question, answer, marked, expected):
        """Every yes/no answer was marked unsupported: no passage holds the word "yes" (found trying
        the chat, session 39: "Is the Eiffel Tower in Paris?" "Yes [1]")."""
        assert cite(question, answer, marked, self.EVIDENCE) == expected

    def test_a_word_is_held_in_its_plural_or_third_person_form(self):
        """"Yes, it is open to visitors" was marked unsupported beside "... opens to visitors on the
        first Saturday of every month" (found trying the chat, session 39)."""
        evidence = [{"n": 1, "title": "notes", "text": "The observatory opens to visitors on the first Saturday."}]
        question = "Is the observatory open to visitors?"
        assert cite(question, "Yes, it is open to visitors.", [1], evidence) == ([1], "model")
        assert cite(question, "the first Saturdays", [], evidence) == ([1], "attributed")
        # only a word's final s: numbers and other endings are compared as written
        assert cite(question, "the 1940s", [1], [{"n": 1, "title": "", "text": "It opened in 1940."}]) == ([], "unsupported")
        assert cite("Where is it?", "Paris", [1], [{"n": 1, "title": "", "text": "It is in Pari."}]) == ([], "unsupported")

    @staticmethod
    def cited_beside(answer: str, text: str) -> tuple[list[int], str]:
        """How an answer marked [1] is cited beside one passage holding ``text``."""
        return cite("Which one?", answer, [1], [{"n": 1, "title": "", "text": text}])

    def test_a_plural_in_ies_is_held_by_its_singular(self):
        """Noticed in session 39 and left: "cities" was not held by "city", as a final s alone was
        read; "movies" must still be held by "movie"."""
        cited = self.cited_beside
        assert cited("two large cities", "It is a large city with two ports.") == ([1], "model")
        assert cited("its companies", "Its oldest company is a brewery.") == ([1], "model")
        assert cited("silent movies", "He made a silent movie.") == ([1], "model")
        assert cited("silent movie", "He made silent movies.") == ([1], "model")
        assert cited("it applies", "The rule will apply to all.") == ([1], "model")
        assert cited("the cities", "The citizens voted.") == ([], "unsupported")

    def test_a_word_is_held_in_its_british_or_american_spelling(self):
        """Found trying the terminal (session 52): "412 meters" was marked unsupported, "none of the
        passages read holds this answer", beside "It spans the river Tesk and is 412 metres long."
        The model writes American spelling of evidence in British spelling and the other way round."""
        cited = self.cited_beside
        assert cited("412 meters", "It spans the river Tesk and is 412 metres long.") == ([1], "model")
        assert cited("412 metres", "It is 412 meters long.") == ([1], "model")
        assert cited("3 litres", "It holds 3 liters.") == ([1], "model")
        assert cited("the city centre", "It lies in the city center.") == ([1], "model")
        assert cited("its colour", "Its color is red.") == ([1], "model")
        assert cited("organised by the council", "It was organized by the council in 1901.") == ([1], "model")
        assert cited("412 meters", "It is 412 feet long.") == ([], "unsupported")
        assert cited("four hours", "It takes four days.") == ([], "unsupported")

    def test_the_checks_support_feature_reads_words_as_written(self):
        """The check's ``support`` feature is what the check was fit on: the answer's words exactly,
        yes and no among them; the citations' reading does not change it."""
        item = {"n": 1, "title": "notes", "text": "The observatory opens to visitors."}
        assert support(item, "Yes") == 0.0
        assert support(item, "open to visitors") == 0.0  # no adjacent pair as written
        assert support(item, "opens to visitors") == 1.0


class TestAsksTwoThings:
    @pytest.mark.parametrize("question", [
        "Who was Albert Einstein and when did he die?", "What is the capital of France and what is its population?",
        "When was the Eiffel Tower built and who designed it?", "Who founded Microsoft and when?",
        "when was the first laptop invented and by whom", "where is oxytocin made and what is its function",
        "Where and when was Napoleon born?", "How and why did the Roman Empire fall?",
        "Which band had a UK number one in January 1991, and what was the name of the song?",
        "who started ww2 and how did it start", "When did World War II end and who won?",
        # found trying the chat (session 67): the rewrite of "When was it built and who built it?"
        "When was the Colosseum built, and who built it?", "What is jazz and what makes it special?",
    ])
    def test_found(self, question):
        from components.requests import asks_two_things

        assert asks_two_things(question)

    @pytest.mark.parametrize("question", [
        "Who wrote Pride and Prejudice?", "What government position was held by the woman who portrayed Corliss Archer "
        "in the film Kiss and Tell?", "Are Giuseppe Verdi and Ambroise Thomas both opera composers?",
        "What is the name of the fight song of the university whose main campus is in Lawrence, Kansas and whose "
        "branch campuses are in the Kansas City metropolitan area?", "Compare cats and dogs",
        "What is the difference between weather and climate?", "Tell me about Romeo and Juliet", "When and",
        "Who and what?", "", "Summarize the rules of cricket and when they were written",
    ])
    def test_not_found(self, question):
        from components.requests import asks_two_things

        assert not asks_two_things(question)


class TestSummarizedThing:
    """A request to summarize a document as a whole: the question path read the few sentences nearest it and
    asked the model for as few words as possible, and "Summarize the kettle manual" abstained (session 63)."""

    @pytest.mark.parametrize("question, thing", [
        ("Summarize the kettle manual", "the kettle manual"), ("summarise my report.", "my report"),
        ("Please summarize the lease", "the lease"), ("Can you summarize the handbook?", "the handbook"),
        ("Give me a summary of the minutes", "the minutes"), ("Give a brief overview of the handbook", "the handbook"),
        ("Sum up the sailing club rules", "the sailing club rules"), ("What is the lease about?", "the lease"),
        ("What's the document about?", "the document"), ("What are the main points of the report?", "the report"),
        ("TL;DR of the minutes", "the minutes"), ("Summary of the French Revolution", "the French Revolution"),
        ("Could you please give me a short summary of the kettle manual?", "the kettle manual"),
        ("Summarize it", "it"), ("Summarize the rules of cricket", "the rules of cricket"),
        ("Explain how vaccines work", "how vaccines work"), ("How does the heart work?", "How does the heart work"),
        ("How do refrigerators work", "How do refrigerators work"), ("Describe the history of Japan", "the history of Japan"),
        ("Please tell me about the life of Albert Einstein.", "the life of Albert Einstein"),
        ("Can you explain the basics of democracy?", "the basics of democracy"),
        ("Give me three facts about Mars", "Mars"), ("Tell me some interesting facts about octopuses", "octopuses"),
        ("What are some facts about the Moon?", "the Moon"),
    ])
    def test_found(self, question, thing):
        from components.requests import summarized_thing

        assert summarized_thing(question) == thing

    @pytest.mark.parametrize("question", [
        "What does the handbook say about holidays?", "Who wrote the summary of the report?", "Summarize",
        "What is the summary judgment?", "When was the lease signed?", "What is it about the lease that matters?",
        "How does the manual summarize descaling steps for the kettle" + " and more" * 10, "",
        "Describe the Eiffel Tower", "Tell me about Jupiter", "Explain why the sky is blue",
        "How long does it take to work?", "How did the war work out?", "Explain the difference of two squares",
    ])
    def test_not_found(self, question):
        from components.requests import summarized_thing

        assert summarized_thing(question) is None

    @pytest.mark.parametrize("thing, title, name, holds", [
        ("the kettle manual", "Kettle K200 manual", "kettle_manual.md", True),
        ("the French Revolution", "French Revolution", "", True),
        ("the sailing club rules", "Rules of the Harbour Sailing Club", "sailing_club_rules.md", True),
        ("the kettle manual", "Toaster T1 manual", "toaster.md", False),
        ("it", "Kettle K200 manual", "kettle_manual.md", False),
    ])
    def test_a_title_names_the_thing_when_it_holds_every_content_word(self, thing, title, name, holds):
        from nodes.summarize import names_document

        assert names_document(thing, title, name) is holds


class TestSubjectAskedOf:
    """A request that asks of a subject as a whole ("Summarize the rules of cricket", "How does the heart work?",
    "Explain how vaccines work") went down the question path, where the check withheld 11 of 12 such answers
    (session 65): no title holds "rules" and "cricket", and "How does the heart work?" was no summary request.
    The subject's own document is summarized now."""

    @pytest.mark.parametrize("thing, subject", [
        ("the rules of cricket", "cricket"), ("the history of the Roman Empire", "the Roman Empire"),
        ("how vaccines work", "vaccines"), ("How does the heart work", "the heart"),
        ("how a steam engine works", "a steam engine"), ("the life of Albert Einstein", "Albert Einstein"),
        ("Einstein's life", "Einstein"), ("Napoleon’s career", "Napoleon"), ("its history", None),
        ("the kettle manual", None), ("the sailing club rules", None), ("it", None),
        # "Summarize the article on Mars" summarized "The War of the Worlds" (session 66): no title holds "article"
        ("the article on Mars", "Mars"), ("the Wikipedia article about the Roman Empire", "the Roman Empire"),
        ("the page on black holes", "black holes"), ("the entry for Isaac Newton", "Isaac Newton"),
        ("the article on it", None),
    ])
    def test_the_subject_after_an_aspect(self, thing, subject):
        from components.requests import subject_of

        assert subject_of(thing) == subject

    @pytest.mark.parametrize("subject, title, titled", [
        ("cricket", "Cricket", True), ("vaccines", "Vaccine", True), ("the heart", "Heart", True),
        ("go", "Go (game)", True), ("the Roman Empire", "Roman Empire", True), ("octopuses", "Octopus", True),
        ("hurricanes", "Hurricane Katrina", False),  # a title that holds more is about something else
        ("the Roman Empire", "The History of the Decline and Fall of the Roman Empire", False),
        ("a jet engine", "Engine", False), ("engine", "Jet engine", False),
    ])
    def test_a_title_is_the_subjects_when_it_names_the_same_thing(self, subject, title, titled):
        from components.titles import title_match

        assert (title_match(subject, title) == 2) is titled

    @pytest.mark.parametrize("thing", ["how it works", "How does it work", "the history of this", "the rules of that"])
    def test_what_the_conversation_is_on_is_no_subject(self, thing):
        """"How does it work?" is left to the rewrite of a follow-up, which knows what "it" is: as a subject,
        "it" would be titled "It (novel)"."""
        from components.requests import subject_of

        assert subject_of(thing) is None

    @staticmethod
    def retrieved(embedder, *titles):
        """An index in memory holding one passage of each Wikipedia document ``titles``, and a state whose
        retrieval found them in that order."""
        from components.index import PassageIndex
        from components.passages import Passage

        passages = [Passage(f"wiki/{t}#p0s0", t, f"{t} is a subject.", {"source": "wikipedia"}) for t in titles]
        index = PassageIndex(embedder.name, embedder.dimension)
        index.add(passages, embedder.embed_documents([p.embedding_text for p in passages]))
        return index, {"passages": [{"id": p.id} for p in passages], "trace": {}}

    def test_the_subjects_own_document_comes_before_one_whose_title_holds_the_request(self, embedder):
        from nodes.summarize import summarized_documents

        book = "The History of the Decline and Fall of the Roman Empire"
        index, state = self.retrieved(embedder, book, "Roman Empire")
        assert summarized_documents(state, index, "the history of the Roman Empire") == [("wiki/Roman Empire", "Roman Empire")]
        assert summarized_documents(state, index, "the history of the Decline and Fall") == [(f"wiki/{book}", book)]  # named
        state["passages"] = state["passages"][:1]
        assert summarized_documents(state, index, "the history of the Roman Empire") == [(f"wiki/{book}", book)]  # no own

    def test_a_document_titled_as_the_whole_request_comes_first(self, embedder):
        from nodes.summarize import summarized_documents

        index, state = self.retrieved(embedder, "Japan", "History of Japan")
        assert summarized_documents(state, index, "the history of Japan") == [("wiki/History of Japan", "History of Japan")]
        assert summarized_documents(state, index, "the rules of Japan") == [("wiki/Japan", "Japan")]

    def test_a_user_s_file_is_named_by_the_words_of_the_subject(self, embedder):
        """Found trying the chat (session 65): with the kettle manual added, "How does the kettle work?" abstained."""
        from components.index import PassageIndex
        from components.passages import Passage
        from nodes.summarize import summarized_documents

        manual = Passage("upload/k.md#p0s0", "Kettle K200 manual", "Fill the kettle to the line.",
                         {"source": "file", "doc_id": "upload/k.md", "name": "kettle_manual.md"})
        katrina = Passage("wiki/Hurricane Katrina#p0s0", "Hurricane Katrina", "It struck New Orleans.", {"source": "wikipedia"})
        index = PassageIndex(embedder.name, embedder.dimension)
        index.add([katrina, manual], embedder.embed_documents([katrina.embedding_text, manual.embedding_text]))
        state = {"passages": [{"id": katrina.id}, {"id": manual.id}], "trace": {}}
        assert summarized_documents(state, index, "How does the kettle work") == [("upload/k.md", "Kettle K200 manual")]
        assert summarized_documents(state, index, "How do hurricanes work") == []  # an article needs its own title

    def test_a_capitalized_one_word_subject_may_be_a_surname(self, embedder):
        from nodes.summarize import summarized_documents

        index, state = self.retrieved(embedder, "Relativity", "Albert Einstein", "Jet engine", "Empire of Japan")
        assert summarized_documents(state, index, "Einstein's life") == [("wiki/Albert Einstein", "Albert Einstein")]
        assert summarized_documents(state, index, "how an engine works") == []  # a common noun is no surname
        assert summarized_documents(state, index, "Japan's history") == []  # nor a name's last word
        index, state = self.retrieved(embedder, "Empire of Japan", "Japan")
        assert summarized_documents(state, index, "Japan's history") == [("wiki/Japan", "Japan")]


class TestMissingDocument:
    """A request to summarize a document of a kind ("the quarterly report") that no document is: it had gone
    on as a question over Wikipedia and abstained with the closest articles (session 63); the reply now
    says no document is called that (session 64)."""

    @pytest.mark.parametrize("thing, called", [
        ("the quarterly report", "quarterly report"), ("my lease", "lease"), ("the report", "report"),
        ("our staff handbook", "staff handbook"), ("the document", "document"), ("this PDF", "PDF"),
        ("the minutes", "minutes"), ("The Q3 sales report", "Q3 sales report"),
    ])
    def test_a_kind_of_document_after_a_determiner(self, thing, called):
        from components.requests import missing_document

        assert missing_document(thing) == called

    @pytest.mark.parametrize("thing", [
        "the French Revolution", "Isaac Newton", "the cardamom recipes of Scandinavia", "it", "a report",
        "the rules of cricket", "the history of Rome", "report", "",
    ])
    def test_anything_else(self, thing):
        from components.requests import missing_document

        assert missing_document(thing) is None

    @pytest.mark.parametrize("titles, reply", [
        ([], "I have no document called “quarterly report” to summarize: no documents have been added."),
        (["Kettle K200 manual"], "I have no document called “quarterly report” to summarize. Your document is "
                                 "“Kettle K200 manual”."),
        (["Kettle K200 manual", "Lease", "Minutes"], "I have no document called “quarterly report” to summarize. "
                                                     "Your documents are “Kettle K200 manual”, “Lease” and “Minutes”."),
        ([f"File {i}" for i in range(7)], "I have no document called “quarterly report” to summarize. Your documents "
                                          "are “File 0”, “File 1”, “File 2”, “File 3”, “File 4” and 2 more."),
    ])
    def test_the_reply_lists_the_documents_there_are(self, titles, reply):
        from nodes.summarize import no_such_document

        assert no_such_document("quarterly report", titles) == reply


class TestSummaryEvidence:
    """A summary reads its document's paragraphs in their order, an evidence item each, within its budget."""

    @staticmethod
    def passages(doc="file/k", spans=((0, 0), (0, 1), (1, 0), (2, 0)), section="Cleaning"):
        from components.passages import Passage

        return [Passage(f"{doc}#p{p}s{s}", "Kettle K200 manual", f"Sentence {p}.{s} of the manual.",
                        {"doc_id": doc, "paragraph": p, "sentence": s, "section": section}) for p, s in spans]

    def test_a_paragraph_is_its_sentences_joined_under_its_shown_title(self):
        from nodes.summarize import paragraphs

        joined = paragraphs(self.passages())
        assert [(first.id, " ".join(texts)) for first, texts in joined] == [
            ("file/k#p0s0", "Sentence 0.0 of the manual. Sentence 0.1 of the manual."),
            ("file/k#p1s0", "Sentence 1.0 of the manual."), ("file/k#p2s0", "Sentence 2.0 of the manual.")]

    def test_passages_that_share_sentences_give_each_once(self):
        from components.passages import Passage
        from nodes.summarize import paragraphs

        cut = [Passage("d#p0s0-1", "T", "One is here. Two is here.", {"doc_id": "d", "paragraph": 0, "sentence": 0}),
               Passage("d#p0s1-2", "T", "Two is here. Three is here.", {"doc_id": "d", "paragraph": 0, "sentence": 1})]
        assert [texts for _, texts in paragraphs(cut)] == [["One is here. Two is here.", "Three is here."]]

    def test_paragraphs_fill_the_budget_in_order_and_count_what_they_hold(self):
        from nodes.summarize import document_evidence, passages_held

        words = lambda text: len(text.split())  # noqa: E731 - a token count any machine computes alike
        documents = [self.passages()]
        evidence = document_evidence(documents, 30, words)
        assert [(e["n"], e["passage_id"], e["title"]) for e in evidence] == [
            (1, "file/k#p0s0", "Kettle K200 manual › Cleaning"), (2, "file/k#p1s0", "Kettle K200 manual › Cleaning")]
        assert passages_held(evidence, documents) == 3  # of 4: the third paragraph did not fit
        assert len(document_evidence(documents, 1000, words)) == 3 and passages_held(
            document_evidence(documents, 1000, words), documents) == 4

    def test_a_document_too_long_gives_each_section_its_opening_before_any_its_second_paragraph(self):
        from nodes.summarize import document_evidence

        words = lambda text: len(text.split())  # noqa: E731
        document = [*self.passages(spans=((0, 0), (1, 0), (2, 0)), section="Cleaning"),
                    *self.passages(spans=((3, 0), (4, 0)), section="Warranty")]
        evidence = document_evidence([document], 45, words)  # 15 tokens a paragraph: three fit
        assert [(e["n"], e["passage_id"]) for e in evidence] == [(1, "file/k#p0s0"), (2, "file/k#p1s0"), (3, "file/k#p3s0")]

    def test_documents_share_the_budget_and_each_gives_at_least_its_first_paragraph_cut_to_it(self):
        from nodes.compress import ELLIPSIS
        from nodes.summarize import document_evidence

        words = lambda text: len(text.split())  # noqa: E731
        evidence = document_evidence([self.passages("file/a"), self.passages("file/b")], 30, words)
        assert [e["passage_id"] for e in evidence] == ["file/a#p0s0", "file/b#p0s0"]  # 15 tokens each: one paragraph
        opening = document_evidence([self.passages()], 16, words)  # the paragraph's first sentence fits, not both
        assert [e["text"] for e in opening] == ["Sentence 0.0 of the manual."]
        cut = document_evidence([self.passages()], 9, words)  # not even that: cut short
        assert len(cut) == 1 and cut[0]["text"].endswith(ELLIPSIS) and words(f"[1] {cut[0]['title']}: {cut[0]['text']}") < 9

    def test_a_summary_is_cited_sentence_by_sentence_to_the_items_that_hold_it_together(self):
        from nodes.summarize import cite_summary

        evidence = [{"n": 1, "passage_id": "a", "title": "Club › Guests", "text": "Members may bring two at a time."},
                    {"n": 2, "passage_id": "b", "title": "Club › Boats", "text": "Boats are kept in the yard in winter."},
                    {"n": 3, "passage_id": "c", "title": "Club › Fees", "text": "The annual fee is 180 pounds."}]
        assert cite_summary("Summarize the club rules", "The rules cover boats kept in the yard in winter. "
                            "Members may bring two guests, and the annual fee is 180 pounds.", evidence) == ([2, 1, 3], True)
        # "provides information on" claims nothing the document must hold; "lunch" is held by nothing
        assert cite_summary("Summarize the club rules", "The document provides information on fees of 180 pounds.",
                            evidence) == ([3], True)
        assert cite_summary("Summarize the club rules", "Boats are kept in the yard. Lunch is served at noon daily.",
                            evidence) == ([2], False)


class TestFinishedSentences:
    @pytest.mark.parametrize("text, kept", [
        ("Volcanoes form at plate edges. Volcanism can form where the crust'", "Volcanoes form at plate edges."),
        ("1. Rent is due monthly.\n2. Pets need consent.\n3. The landlord rep", "1. Rent is due monthly.\n2. Pets need consent."),
        ("It lasts two years.", "It lasts two years."), ("No sentence ends here", "No sentence ends here"),
        ('He said "stop." Then he', 'He said "stop."'),
    ])
    def test_a_summary_stopped_mid_sentence_ends_at_its_last_finished_one(self, text, kept):
        from nodes.summarize import finished_sentences

        assert finished_sentences(text) == kept


class TestSummaryFollowUp:
    """"Summarize it" after a question on the kettle manual had been rewritten by the model "What is the
    frequency of descaling for the Kettle K200?" (session 63). It is asked of the documents the last answer read."""

    ON_FILE = {"question": "How often should it be descaled?", "standalone_question": "How often should the K200 be descaled?",
               "answer": "Once a month", "citations": [{"title": "Kettle K200 manual › Cleaning › Descaling"}],
               "named_documents": [{"doc_id": "upload/k", "title": "Kettle K200 manual"}]}

    @pytest.mark.parametrize("question, standalone", [
        ("Summarize it", "Summarize the Kettle K200 manual"),
        ("Can you summarize this?", "Can you summarize the Kettle K200 manual?"),
        ("What is this document about?", "What is the Kettle K200 manual about?"),
        ("Give me an overview of that file.", "Give me an overview of the Kettle K200 manual."),
    ])
    def test_a_request_to_summarize_what_the_conversation_is_on(self, question, standalone):
        from nodes.condense_question import summary_follow_up

        assert summary_follow_up(question, [self.ON_FILE]) == standalone

    def test_the_document_comes_from_what_the_last_answer_read(self):
        from nodes.condense_question import summary_follow_up

        cited = {"question": "When was Newton born?", "standalone_question": "When was Newton born?", "answer": "1643",
                 "citations": [{"title": "Isaac Newton"}]}
        described = {**cited, "described": {"title": "The Beatles", "thing": "the Beatles"}}
        summarized = {**cited, "summarized": {"documents": [{"doc_id": "upload/a", "title": "Lease"},
                                                            {"doc_id": "wiki/Eiffel Tower", "title": "Eiffel Tower"}]}}
        assert summary_follow_up("Summarize it", [cited]) == "Summarize Isaac Newton"
        on_file = {**cited, "citations": [{"title": "Lease › Rent", "metadata": {"source": "file"}}]}
        assert summary_follow_up("Summarize it", [on_file]) == "Summarize the Lease"
        assert summary_follow_up("Summarize it", [described]) == "Summarize The Beatles"
        assert summary_follow_up("Summarize them", [summarized]) == "Summarize the Lease and Eiffel Tower"
        hello = {**cited, "answer": "Hello!", "citations": [], "answerability": {"by": "question", "reply": "greeting"}}
        assert summary_follow_up("Summarize it", [cited, hello]) == "Summarize Isaac Newton"  # small talk names nothing

    VACCINE = [{"question": "What is a vaccine?", "standalone_question": "What is a vaccine?", "answer": "A vaccine is …",
                "citations": [{"title": "Vaccine"}], "described": {"title": "Vaccine", "thing": "a vaccine"}},
               {"question": "Who invented it?", "standalone_question": "Who invented the vaccine?",
                "answer": "Edward Jenner", "citations": [{"title": "Edward Jenner"}]}]

    @pytest.mark.parametrize("turns, question, standalone", [
        # found trying the chat (session 66): the model's rewrite failed and the fallback joined the two questions,
        # "Who invented the vaccine? Summarize its history", answered "Edward Jenner"
        (VACCINE, "Summarize its history", "Summarize the history of the vaccine"),
        (VACCINE, "Explain how it works", "Explain how the vaccine works"),
        (VACCINE[:1], "How does it work?", "How does a vaccine work?"),
        (VACCINE[:1], "Tell me about the origins of it", "Tell me about the origins of a vaccine"),
        ([{**VACCINE[0], "question": "Who was Isaac Newton?", "described": {"title": "Isaac Newton", "thing": "Isaac Newton"}}],
         "Describe his life", "Describe the life of Isaac Newton"),
    ])
    def test_an_aspect_of_what_the_conversation_is_on(self, turns, question, standalone):
        """"Summarize its history": the subject is what the last question's rewrite put for its pronoun, or
        the thing the last answer described; not the document the last answer cites (Edward Jenner)."""
        from nodes.condense_question import summary_follow_up

        assert summary_follow_up(question, turns) == standalone

    def test_an_aspect_of_nothing_named_is_left_to_the_model(self):
        from nodes.condense_question import summary_follow_up

        cited = {"question": "Who invented the vaccine?", "standalone_question": "Who invented the vaccine?",
                 "answer": "Edward Jenner", "citations": [{"title": "Edward Jenner"}]}
        assert summary_follow_up("Summarize its history", [cited]) is None
        named = {**cited, "question": "Who invented it?",
                 "standalone_question": "Who invented the first vaccine against smallpox in eighteenth-century England?"}
        assert summary_follow_up("Summarize its history", [named]) is None

    @pytest.mark.parametrize("question", ["Summarize the lease", "When was it made?", "Summarize"])
    def test_not_a_request_about_what_the_conversation_is_on(self, question):
        from nodes.condense_question import summary_follow_up

        assert summary_follow_up(question, [self.ON_FILE]) is None

    def test_nothing_read_before_leaves_it_to_the_model(self):
        from nodes.condense_question import summary_follow_up

        closed = {"question": "Hi there, who are you?", "standalone_question": "Who are you?", "answer": "A model",
                  "citations": []}
        assert summary_follow_up("Summarize it", [closed]) is None and summary_follow_up("Summarize it", []) is None


class TestDroppedItsWords:
    """"Can it go in the dishwasher?" after a question on a kettle's descaling was rewritten "Can the Kettle
    K200 be descaled?" and answered "Yes" (session 63): a rewrite that keeps none of the follow-up's own words
    asks the question before again, and the follow-up is joined to it instead."""

    @pytest.mark.parametrize("question, rewrite", [
        ("Can it go in the dishwasher?", "Can the Kettle K200 be descaled?"),
        ("When did he write it?", "When did Laurence Olivier play Hamlet in the 1948 film?"),
    ])
    def test_dropped(self, question, rewrite):
        from nodes.condense_question import dropped_its_words

        assert dropped_its_words(question, rewrite)

    @pytest.mark.parametrize("question, rewrite", [
        ("How many people live there?", "How many people live in Tokyo?"),
        ("In what year was he born?", "When was William Shakespeare born?"),  # "born" kept
        ("When did he write the play?", "When did William Shakespeare write Romeo and Juliet?"),
        ("What about Spain?", "What is the capital of Spain?"), ("What about it?", "What is the Eiffel Tower?"),
        ("How many lifeboats did it carry?", "How many lifeboats did the Titanic carry?"),
        ("Does it have lifeboat?", "Did the Titanic have lifeboats?"),  # a plural and a verb's s aside
    ])
    def test_kept(self, question, rewrite):
        from nodes.condense_question import dropped_its_words

        assert not dropped_its_words(question, rewrite)

    def test_the_rewrite_falls_back_to_the_thing_the_question_before_asked_about(self):
        """Joined, "How often should the Kettle K200 be descaled? Can it go in the dishwasher?" was answered
        "Once a month", from its first half (session 63, not finished): its "it" is now read as the one thing
        the question before asked about (:func:`thing_for_it`)."""
        from nodes.condense_question import rewrite_or_fallback

        assert rewrite_or_fallback("Can the Kettle K200 be descaled?", "Can it go in the dishwasher?",
                                   "How often should the Kettle K200 be descaled?") == (
            "Can the Kettle K200 go in the dishwasher?", "resolved")
        assert rewrite_or_fallback("Marie Curie discovered radium.", "Which elements did she discover?",
                                   "Who was Marie Curie?")[1] == "joined"  # "she": a person, not a thing


class TestThingForIt:
    """When a follow-up's rewrite fails, its "it" is read as the one thing the question before asked about, where
    that question's answer is no thing "it" could mean (it asked how, when, where, why, or yes or no)."""

    @pytest.mark.parametrize("question, previous, resolved", [
        ("Can it go in the dishwasher?", "How often should the Kettle K200 be descaled?",
         "Can the Kettle K200 go in the dishwasher?"),
        ("How tall is it?", "When was the Eiffel Tower built?", "How tall is the Eiffel Tower?"),
        ("What is its population?", "Where is Tokyo?", "What is Tokyo's population?"),
        ("Is it open on Sundays?", "Does the Louvre charge for entry?", "Is the Louvre open on Sundays?"),
    ])
    def test_read_as_the_thing(self, question, previous, resolved):
        from nodes.condense_question import thing_for_it

        assert thing_for_it(question, previous) == resolved

    @pytest.mark.parametrize("question, previous", [
        ("How big is it?", "What is the capital of France?"),  # "it" may be the answer, Paris
        ("When was it built?", "Which tower is the tallest in Paris?"),
        ("When did he write it?", "Who played Hamlet in the 1948 film?"),  # a person too
        ("Is it bigger than that?", "How tall is the Eiffel Tower?"),  # another word that refers back
        ("Can it go in the dishwasher?", "How often should the kettle and the toaster be cleaned?"),  # no one thing named
        ("Where is the Louvre?", "When was the Eiffel Tower built?"),  # no "it"
        ("Is it it?", "When was the Eiffel Tower built?"),
        ("and its height?", "How many people live in New Zealand?"),  # asks the question before again: joined
    ])
    def test_left_alone(self, question, previous):
        from nodes.condense_question import thing_for_it

        assert thing_for_it(question, previous) is None
