"""check-answer: give the final answer, or say that the knowledge base does not hold it.

Runs after the cascade has accepted an answer. The answerability model
(:class:`components.answerability.AnswerabilityModel`, fit on the train splits) scores how likely
the answer is right from signals that cost no model call: the answer's token confidence, the
probability the model gave to starting its abstention instead, whether the evidence holds the
answer's words, how much of the question the passage holding the answer covers, whether the answer
only repeats the question ("What is photosynthesis?" answered "Photosynthesis"), the retrieval
scores, and how expected the question was after the evidence (the log-probabilities the generator
gave its tokens, kept by ``generate`` while the prompt was evaluated: a swapped name or a negation
the evidence does not bear out makes a question unlikely). A model that uses the answer probe
(:mod:`components.answer_probe`) also reads the probe's score of the generator's hidden state at
the answer's first token, recorded by ``generate`` (free: the layer is copied while that token
decodes). A model that uses the sufficiency scorer (:mod:`components.sufficiency`) also has a
small cross-encoder read the question with the retrieved passages: one pass, a few tens of
milliseconds on CPU. A model that uses a self-check also asks the generator, on the prompt and
answer it has just evaluated, a yes/no question (does the evidence state the answer; does it answer
exactly this question): a few new tokens and one generated token each.

Below ``abstain_threshold`` (the one knob: 0 never abstains, 1 always does; by default the
threshold fitted with the model) the answer is withheld, unless the settings say
``extend_before_abstaining`` and the cascade's ladder still has evidence to add: then the question
goes up one tier as an unsure answer does (the step records ``extended_by: "check"`` and the score)
and is answered and checked again. For a withheld answer the reply is the abstention, with no
citations, and the trace keeps the withheld answer and the score. An answer the model itself
abstained on stays an abstention. So does an age no passage states, asked of a named person (the
model does not subtract; :func:`age_unstated`), at any knob but 0 (``by: "age"``), and a number given to a
question that asks where or who (:func:`number_asked_of`; ``by: "kind"``), and an answer to where or when a
named person was born or died that only passages on someone else hold (:func:`subject_elsewhere`; ``by:
"subject"``), and an answer its passages rank second or lower, to a question that asks for the first, where no
passage says the superlative asked of it unranked and not narrowed to less than is asked ("the largest by
population" to "the largest by area"), or that its passages call the first only of another place than the
question's ("the largest lake in Turkey" to the largest lake in Scotland) (:func:`ranked_below`; ``by: "rank"``),
and a capital its passages call another place's, or not the capital asked
(:func:`capital_elsewhere`; ``by: "capital"``), and a population only other places' passages hold
(:func:`population_elsewhere`; ``by: "population"``), and an answer held only by passages that name other years than
the one a single-hop question names (:func:`year_elsewhere`; ``by: "year"``), and an answer held only by passages that
say the opposite of a word of a single-hop question, "largest" to "smallest" (:func:`opposite_elsewhere`; ``by:
"opposite"``), and an answer to a single-hop question that denies something ("not", "never") held only by passages
that deny nothing (:func:`negation_unsaid`; ``by: "negation"``), and a yes or no to "Is A longer than B?" that
the passages' superlative contradicts (:func:`superlative_elsewhere`; ``by: "compared"``), and someone dead or out
of office, by the knowledge base, to a question that asks who holds an office now (:func:`out_of_office`; ``by:
"past"``), and an answer made only of the instructions' words (:func:`echoes_instructions`; ``by: "echo"``). A rule
that withholds an answer because the passages that hold it say it is another's (:data:`EXTENDED_RULES`: another
person's birthplace, another rank, another place's capital or population, someone out of office) first sends the
question up the ladder when the settings say ``extend_after_rule`` (the default) and a tier is left: the passage on
what was asked may not have been read yet ("Which planet is the largest?" read Neptune's "fourth-largest planet" and
Saturn's "second largest, after Jupiter" at Easy, Jupiter's own passage only at the next tier). The step records
``extended_by: "rule"``, the rule and its reason; the answer that follows is checked again, and withheld by the same
rule when it is the one set aside (:func:`set_aside_before`). An
answer given is cut to its short form when the settings ask for it (``answer_form``: a sentence that restates the
question keeps only its new words, :mod:`components.short_answer`); the features, the citations and
``trace["written_answer"]`` are the text as written. The finished answer becomes the conversation's next turn.
"""

from __future__ import annotations

import re
import time
from functools import lru_cache
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from langgraph.runtime import Runtime

from components.answerability import (
    ANSWER_PROBE,
    FEATURES_VERSION,
    ONLY_IN_QUESTION,
    SUFFICIENCY,
    carried,
    checked_as_multi_hop,
    only_repeats_question,
)
from components.generator import max_tokens_kwargs
from components.index import PassageIndex
from components.passages import Passage
from components.query_cache import NEGATIONS
from components.reranker import content_terms, content_words, folded, folded_words
from components.requests import population_place
from components.short_answer import as_written, short_answer
from components.sources import SPELLED_LIFE
from components.titles import titled_document
from nodes.base import context_of, finished_turn, timed
from nodes.describe import possessive
from nodes.generate import answer_claim, claim_words, comparable, holders, support, verdict_probs
from nodes.grade_answer import can_extend, extended
from nodes.tell_age import aged_subject
from pipeline.configuration import DEFAULT_LAYOUT, PipelineConfig
from pipeline.context import RAGContext
from pipeline.state import AnswerabilityTrace, Citation, EvidenceItem, PassageHit, PlaceDocumentTrace, State, Step, Trace
from prompts import ABSTENTION, check_messages, template


def answer_features(question: str, answer: str, step: Step, evidence: Sequence[EvidenceItem],
                    passages: Sequence[PassageHit], escalated: bool) -> dict[str, float] | None:
    """The free features of :data:`components.answerability.FEATURES` (all but ``self_check``), or
    ``None`` when the generator reported no token probabilities."""
    conf = step["confidence"]
    if conf["mean_logprob"] is None or step.get("abstain_prob") is None:
        return None
    shares = [(support(item, answer), -item["n"], item) for item in evidence]
    best_share, _, best = max(shares, key=lambda s: (s[0], s[1])) if shares else (0.0, 0, None)
    question_words = content_terms(question)
    holder = best if best is not None and best_share > 0 else (evidence[0] if evidence else None)
    held = content_terms(f"{holder['title']} {holder['text']}") if holder is not None else set()
    everywhere = content_terms(" ".join(f"{item['title']} {item['text']}" for item in evidence))
    answer_words = content_terms(answer)
    scores = sorted((p["score"] for p in passages), reverse=True)
    return {
        **{name: float(value) for name, value in conf.items()},  # type: ignore[arg-type]
        "abstain_prob": float(step.get("abstain_prob") or 0.0),
        "support": best_share,
        "question_coverage": len(question_words & held) / len(question_words) if question_words else 1.0,
        "question_in_evidence": len(question_words & everywhere) / len(question_words) if question_words else 1.0,
        "question_words_missing": float(len(question_words - everywhere)),
        "answer_in_question": len(answer_words & question_words) / len(answer_words) if answer_words else 0.0,
        ONLY_IN_QUESTION: float(only_repeats_question(question, answer)),
        "top_score": scores[0] if scores else 0.0,
        "score_gap": scores[0] - scores[1] if len(scores) > 1 else (scores[0] if scores else 0.0),
        "escalated": 1.0 if escalated else 0.0,
    }


def as_read(evidence: Sequence[EvidenceItem]) -> list[str]:
    """The evidence items as the answer prompt shows them ("Title: text"), which the answer given is written as
    (:func:`components.short_answer.as_written`)."""
    return [f"{item['title']}: {item['text']}" for item in evidence]


def check_features(question: str, answer: str, step: Step, evidence: Sequence[EvidenceItem],
                   passages: Sequence[PassageHit], escalated: bool) -> dict[str, float] | None:
    """What the check can read of an answer without a model call: the free features
    (:func:`answer_features`), and the answer probe's score and the question's likelihood where
    ``generate`` recorded them in the ``step``; ``None`` as :func:`answer_features` gives it."""
    features = answer_features(question, answer, step, evidence, passages, escalated)
    if features is None:
        return None
    if step.get("answer_probe") is not None:
        features[ANSWER_PROBE] = float(step["answer_probe"])  # type: ignore[arg-type]  # recorded whether used or not
    likelihood = step.get("question_logprob")
    if likelihood is not None:
        features.update(question_logprob_mean=likelihood["mean"], question_logprob_min=likelihood["min"])
    return features


def yes_share(metadata: Mapping[str, Any]) -> float:
    """P(yes) / (P(yes) + P(no)) over the first generated token's most probable pieces
    (:func:`nodes.generate.verdict_probs`); 0.5 when neither is among them."""
    probs = verdict_probs(metadata) or {"yes": 0.0, "no": 0.0}
    total = probs["yes"] + probs["no"]
    return probs["yes"] / total if total > 0 else 0.5


def evidence_sources(evidence: Sequence[EvidenceItem], passages: Sequence[PassageHit], index: PassageIndex) -> list[str | None]:
    """Where each evidence item comes from: its passage's metadata ``source`` (``"wikipedia"``, ``"file"``,
    a benchmark's name), from the retrieved passages or else the index (a summary's lead); ``None``
    where neither knows the passage."""
    known = {p["id"]: (p.get("metadata") or {}).get("source") for p in passages}
    known.update({item["passage_id"]: index.passage(item["passage_id"]).metadata.get("source")
                  for item in evidence if item["passage_id"] not in known and item["passage_id"] in index})
    return [known.get(item["passage_id"]) for item in evidence]


AGE_UNSTATED = "an age no passage holds: the model does not work one out from a year of birth"
"""The check's reason for withholding such an age (``answerability.by == "age"``)."""


def age_unstated(question: str, citations: Sequence[Citation], settings: Mapping[str, Any]) -> bool:
    """Whether ``question`` asks a named person's age (:func:`nodes.tell_age.aged_subject`, under the setting
    ``living_ages``) and no passage holds the answer (it has no citation). Such a question reaches the model
    only where the person's article gives no year (else :mod:`nodes.tell_age` answers it), and the 1.5B model
    does not subtract: "How old is Barack Obama?" was answered "44 years old" from "the 44th president", 41%
    likely right by the score, and "How old is Donald Trump?" "68" (session 66)."""
    return bool(settings.get("living_ages")) and not citations and aged_subject(question) is not None


_ASKS_WHERE_OR_WHO = re.compile(r"^\W*(?P<asks>where|who|whom)\b", re.IGNORECASE)
DATE_WORDS = frozenset("""the of born died aged age old in on or and to from between c ca circa ad bc bce ce year years
    century centuries st nd rd th s january february march april may june july august september october november
    december""".split())
"""The words a number or a date may come with ("in 1809", "born 1859, died 1927, aged 67 or 68", "8th century")."""
RULED = ("age", "kind", "subject", "rank", "capital", "population", "year", "opposite", "negation", "compared", "past",
         "echo")
"""The check's ``by`` of an answer withheld by a rule whatever its score, at any knob but 0 (:func:`age_unstated`,
:func:`number_asked_of`, :func:`subject_elsewhere`, :func:`ranked_below`, :func:`capital_elsewhere`, :func:`population_elsewhere`,
:func:`year_elsewhere`, :func:`opposite_elsewhere`, :func:`negation_unsaid`, :func:`superlative_elsewhere`,
:func:`out_of_office`, :func:`echoes_instructions`)."""
REASON_TOLD = ("kind", "subject", "rank", "capital", "population", "year", "opposite", "negation", "compared", "past",
               "echo")
"""The rules whose ``reason`` the reader is told as written: "The model's answer, “1809”, was withheld: it is {reason}."."""
EXTENDED_RULES = ("subject", "rank", "capital", "population", "past")
"""The rules that withhold an answer because the passages that hold it say it is another's: another person's birthplace
(:func:`subject_elsewhere`), another rank (:func:`ranked_below`), another place's capital or population
(:func:`capital_elsewhere`, :func:`population_elsewhere`), someone out of office (:func:`out_of_office`). What was
asked may be in passages not read yet, so with ``extend_after_rule`` such an answer sends the question up the ladder
while a tier is left. The others (a year, an opposite, a denial, ...) mostly catch questions the passages cannot
answer, where reading more would buy another wrong answer: replayed on the hybrid cascade's answers to the fifteen
unseen SQuAD 2.0 train runs (3,750), the rules withheld 59, 44 of them to unanswerable questions, and of these five
only the rank rule fired, once, on an unanswerable question (the replay has no index, which the population and
office rules read)."""


def number_asked_of(question: str, answer: str) -> str | None:
    """The check's reason for withholding ``answer`` when it is only a number or a date ("1809", "in 1564", "born
    1859, died 1927, aged 67 or 68": numbers and :data:`DATE_WORDS`) and ``question`` asks where or who, which
    neither answers; ``None`` otherwise. Found trying the chat (session 67): "Where was Charles Darwin born?" was
    answered "1809", the year his description gives, 30% likely right by the score and given; "Where was he born?"
    after a question on Shakespeare, "1564". No answer of the recorded benchmark runs (docs/results) is such a
    number to such a question (a test checks it)."""
    asked = _ASKS_WHERE_OR_WHO.match(question)
    words = re.findall(r"[^\W\d_]+|\d+", answer.lower())
    if asked is None or not any(w.isdigit() for w in words) or not all(w.isdigit() or w in DATE_WORDS for w in words):
        return None
    return f"a number or a date, and the question asks {asked['asks'].lower()}"


LIFE_ASKED = re.compile(r"^\W*(?:where|when)\s+(?:was|were|is|did)\s+(?P<name>[^?]+?)\s+(?:born|die|died|buried|raised|"
                        r"grow\s+up|grew\s+up|live|lived|study|studied|educated)\b[^?]*[?.!\s]*$", re.IGNORECASE)
"""A question that asks where or when a named person was born, died, lived, grew up or studied."""
NAME_PARTICLES = frozenset("van von de da di del della der den du la le bin ibn al of the".split())
"""Words of a name that are not capitalized ("Ludwig van Beethoven", "the Archduke Sigismund of Austria")."""
HONORIFICS = frozenset("""sir dame lord lady king queen prince princess duke duchess archduke emperor empress pope saint
    st dr president general""".split())
"""Words of a name that do not tell whose it is ("Sir Isaac Newton": any Sir)."""


def life_subject(question: str) -> str | None:
    """Whose life ``question`` asks about (:data:`LIFE_ASKED`: "Where was Albert Einstein born?" gives "Albert
    Einstein"), when it reads as a name: every word capitalized but a particle (:data:`NAME_PARTICLES`), none a
    possessive; else ``None`` ("Where was he born?", "Where was Einstein's wife born?")."""
    found = LIFE_ASKED.match(question)
    words = found["name"].split() if found else []
    if (not words or not words[-1][:1].isupper() or any(possessive(w) for w in words)
            or not all(w[:1].isupper() or w.lower() in NAME_PARTICLES for w in words)):
        return None
    return " ".join(words)


def every_holder(claim: Sequence[str], evidence: Sequence[EvidenceItem],
                 says: Callable[[EvidenceItem], str | None]) -> str | None:
    """What ``says`` reads in the first evidence item that holds ``claim`` (:func:`holders`) and reads something
    in, when it reads something (or "", nothing either way) in every one; ``None`` when one says nothing, or none
    holds it: how a rule withholds an answer only where every passage its citations come from says so, or is silent
    (:func:`ranked_below`, :func:`capital_elsewhere`)."""
    read = [says(item) for item in holders(claim, evidence)]
    return next((r for r in read if r), None) if read and all(r is not None for r in read) else None


def names_claim(claim: Sequence[str], text: str, every: bool = False) -> bool:
    """Whether ``text`` (a title, a name a passage gives) has a word of ``claim`` (``every``: all of them), as
    citations compare words (:func:`nodes.generate.comparable`): a passage titled as the answer; a capital said of
    the answer itself ("the state capital of Tallahassee", where "the capital of Mexico" is no capital of Mexico
    City)."""
    words = {comparable(w) for w in content_words(text)}
    return set(claim) <= words if every else bool(set(claim) & words)


def held_only_by(held: Sequence[EvidenceItem]) -> str:
    """How a rule says whose passages hold an answer: "held only by passages of “Stuttgart” and “Baden”"."""
    titles = " and ".join(dict.fromkeys(f"\u201c{item['title']}\u201d" for item in held))
    return f"held only by passages of {titles}"


BEFORE = 2
"""How many passages before one that holds an answer are read with it for the name its pronoun stands for: a
sentence ("She was born in Lyon.") is a passage, and the one before it names her."""


def passages_before(index: PassageIndex, item: EvidenceItem) -> str:
    """The text of the :data:`BEFORE` passages before ``item``'s in its document, or "" (a passage the index does not
    hold, or a document's first)."""
    if item["passage_id"] not in index:
        return ""
    ids = index.document_passages(index.document_of(index.passage(item["passage_id"])))
    at = ids.index(item["passage_id"])
    return " ".join(index.passage(i).text for i in ids[max(0, at - BEFORE):at])


def subject_elsewhere(question: str, answer: str, evidence: Sequence[EvidenceItem],
                      before: Callable[[EvidenceItem], str] | None = None) -> str | None:
    """The check's reason for withholding ``answer`` when ``question`` asks of a named person's life
    (:func:`life_subject`) and the evidence items that hold the answer (those its citations come from:
    :func:`nodes.generate.grounds`) name someone else: none has a word of the name (three letters or more, not a
    particle or an honorific, accents aside) in its title or text, or in the text ``before`` gives of it (the
    passages before it in its document: :func:`passages_before`). ``None`` otherwise, and where no item holds the
    answer (the score decides an unsupported answer). Found trying the chat (session 68): "Where was Albert
    Einstein born?" and "Where was Beethoven born?" were both answered "Brussels", cited to Andreas Vesalius's "He
    was born in Brussels", and given; "Where was Harry Houdini born?" "Florence", cited to Michelangelo's "He
    was born in the Republic of Florence", given at 28%."""
    name = life_subject(question)
    claim = claim_words(question, answer)
    if name is None or not claim:
        return None
    named = {w for w in folded_words(name) if len(w) >= 3 and w not in NAME_PARTICLES | HONORIFICS}
    held = holders(claim, evidence)
    if not held or not named or any(named & folded_words(f"{item['title']} {item['text']} {before(item) if before else ''}")
                                    for item in held):
        return None
    return f"{held_only_by(held)}, which do not name {name}"


SUBDIVISIONS = r"state|province|region|county|prefecture|canton|oblast|governorate|territory|autonomous\s+community"
_CAPS = r"[A-Z][\w'’-]*(?:\s+(?:(?:of|the|and|de|du|la)\s+)*[A-Z][\w'’-]*)*"
"""A country's parts a passage may scope a superlative or a capital to ("the Australian state of Queensland"), and a
place's name as a passage writes it (capitalized words, "of", "the", "and" between them)."""
SUPERLATIVES = frozenset("""largest biggest greatest tallest highest longest deepest widest smallest shortest lowest
    oldest youngest fastest slowest heaviest lightest hottest coldest richest poorest busiest brightest densest nearest
    farthest furthest""".split())
"""The superlatives a question asks for the first of ("the largest planet"), with "most" or "least" and a word."""
_ORDINAL = r"(?:second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|\d+(?:st|nd|rd|th))"
_CARDINAL = r"(?:two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|fifty|hundred|\d+)"
_RANKED = re.compile(rf"\b(?:{_ORDINAL}[\s-]+|(?:one|some|among)\s+(?:of\s+)?the\s+|{_CARDINAL}\s+)"
                     r"(?:(?:most|least)[\s-]+[^\W\d_]+|[^\W\d_]+est)\b", re.IGNORECASE)
"""A rank below the first, or none: "fourth-largest", "second largest", "second-most populous", "one of the oldest",
"among the largest", "its three largest metropolitan areas"."""
_IN_A_PART = re.compile(
    r"\b(?:(?:most|least)\s+[^\W\d_]+|[^\W\d_]+est)(?:\s+city)?\s+(?:of|in)\s+(?:the\s+(?:[A-Z][\w'’-]*\s+){0,3}"
    rf"(?:{SUBDIVISIONS})\b(?:\s+of\s+(?P<unit>{_CAPS}))?|(?P<part>{_CAPS}),\s+{_CAPS})")
"""A superlative a passage scopes to a part of a country: "largest city of the Australian state of Queensland",
"largest city in the province of Quebec", "largest city of the province", and a part named with its country
after a comma, as the knowledge base's descriptions name it: "(Largest city in Quebec, Canada)"."""
_SUPERLATIVE = re.compile(r"\b(?:(?:most|least)\s+(?!(?:of|the|a|an|to|in|at|people|likely)\b)[^\W\d_]+|[^\W\d_]+est)\b",
                          re.IGNORECASE)


SAME_SUPERLATIVE = {"tallest": ("highest",), "highest": ("tallest",), "largest": ("biggest",), "biggest": ("largest",)}
"""The superlatives a passage may give for the one a question asks ("Earth's highest mountain" for "the tallest")."""
UNSCOPED = frozenset("""world earth globe planet universe solar system history all existence country nation state city
    town region kingdom empire republic island area population volume mass size length height elevation diameter weight
    number term terms""".split())
"""Words of a passage's "in …" or "of …" after a superlative that do not narrow it: the whole ("in the world", "in the
Solar System"), a place the question names in other words ("in the country"), or a measure ("in area"), which only
"by …" compares (:func:`qualified_by`)."""
PLACES = frozenset("in on of within among".split())
DIRECTIONS = frozenset("""north south east west northern southern eastern western central northeast northwest southeast
    southwest northeastern northwestern southeastern southwestern upper lower""".split())
"""Words that make a named place a part of it ("the Southern United States", "West Asia")."""
SCOPES = PLACES | frozenset("at outside by after behind except excluding".split())
"""The words that open what may narrow a superlative a passage says (:func:`qualified_by`): a place (:data:`PLACES`,
"in Africa", "of the Australian state of Queensland"), a time or a way ("at near-infrared wavelengths"), a measure
("by population"), or what is left out or ahead ("after Jupiter")."""
_SCOPE = re.compile(rf"\s(?=(?:{'|'.join(SCOPES)})\s)", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[,;:()\u2013\u2014]|(?<![A-Z])\.|"
                         r"\s(?i:and|but|or|while|whereas|which|who|that|with|making|as|than|since)\s")
"""Where the clause a superlative is said in ends: what qualifies it comes before ("the U.S." goes on; "the tallest
building in the world since its topping out in 2009" still is)."""
_BY = re.compile(r"\bby\s+([^\W\d_]+)", re.IGNORECASE)
_COORDINATED = re.compile(r"^\s+and\s+(?:the\s+)?(?:(?:most|least)\s+[^\W\d_]+|[^\W\d_]+est)\b", re.IGNORECASE)
"""A second superlative joined to the first, which shares what follows it: "the largest and most populous island of
Greece"."""


_NAME_RUN = re.compile(r"[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+")
_ABBREVIATION = re.compile(r"\b[A-Z](?:\.[A-Z])+\.?|\b[A-Z]{2,4}\b")
_POSSESSIVE = re.compile(r"['’]s\b")


def initials(text: str) -> set[str]:
    """The initials of ``text``'s runs of capitalized words ("United States": "US") and its abbreviations ("U.S.",
    "UK": "US", "UK"), each without dots: how a place named both ways is one place (:func:`named_by`)."""
    return ({"".join(w[0] for w in run.split()) for run in _NAME_RUN.findall(text)}
            | {found.replace(".", "") for found in _ABBREVIATION.findall(text)})


def abbreviated(phrase: str, question: str) -> str:
    """``phrase`` with each run of capitalized words whose initials the question writes as an abbreviation written
    so: "in the United States" to "in the US" for "… in the U.S.?" (:func:`qualified_by`)."""
    asked = {found.replace(".", "") for found in _ABBREVIATION.findall(question)}
    return _NAME_RUN.sub(lambda run: short if (short := "".join(w[0] for w in run[0].split())) in asked else run[0],
                         phrase)


@lru_cache(maxsize=256)
def question_names(question: str) -> tuple[frozenset[str], frozenset[str]]:
    """``question``'s content words as :func:`named_by` compares them (possessives and :data:`UNSCOPED` aside), and
    its :func:`initials`: read once per question, not once per word a passage's superlative is followed by."""
    asked = frozenset(comparable(w) for w in content_words(_POSSESSIVE.sub("", question))) - UNSCOPED
    return asked, frozenset(initials(question))


def named_by(term: str, question: str) -> bool:
    """Whether ``question`` names a passage's ``term`` (a word, "Canadian", "U.S."): a content word of it is one of
    the question's, as citations compare them, or the same name's stem ("Canadian" for "Canada": five letters alike);
    or it is the initials of the question's capitalized words or one of its abbreviations ("US" for "United States"
    or "U.S.")."""
    asked, named = question_names(question)
    return term.replace(".", "") in named or any(
        (low := comparable(word)) in asked or len(low) >= 5 and any(len(w) >= 5 and w[:5] == low[:5] for w in asked)
        for word in content_words(term))


def narrows(term: str, question: str) -> bool:
    """Whether a passage's ``term`` says more than ``question``: it has a content word that is not the question's
    (:func:`named_by`) and does not stand for the whole, a place in general or a measure (:data:`UNSCOPED`)."""
    return any(comparable(word) not in UNSCOPED and not named_by(word, question) for word in content_words(term)) \
        and not named_by(term, question)


def qualified_by(question: str, asked: str, after: str) -> str | None:
    """The words that narrow a superlative a passage says (``after``: what follows it, to the end of its clause) to
    less than ``question`` asks for (``asked``: :func:`asked_superlative`), or ``None``: a word between it and the
    question's noun that the question does not have ("the most populous national capital city" for "the most populous
    city"), a place the question does not name where the passage names none it does ("the highest mountain in
    Africa"; not "the largest city of the Australian state of Queensland" to "the largest city in Queensland"; a
    year is no place), a part of a place it names ("the most populous state in the Southern United States"), a time
    or a way ("the brightest star in the night sky at near-infrared wavelengths"), or another measure than the
    question's own "by …" ("the largest by population" for "the largest country by area"). Found trying the chat
    (session 88)."""
    noun = asked_noun(question, asked)
    words = after.split()
    modifiers = next((words[:i] for i, word in enumerate(words[:4]) if noun and comparable(word.lower()) == noun), [])
    if all(re.fullmatch(r"[^\W\d_][\w-]*", w) and w.lower() not in ("most", "least", "and", "or")
           and not w.lower().endswith("est") for w in modifiers):  # "national capital", "Greek": a narrower noun
        if narrowing := [w for w in modifiers if narrows(w, question)]:
            return " ".join(narrowing)
    measure = _BY.search(question)
    place_named, place = False, None
    for scope in _SCOPE.split(f" {after}")[1:]:
        word, _, phrase = scope.partition(" ")
        terms = re.findall(r"[\w.-]+", _POSSESSIVE.sub("", abbreviated(phrase, question)))  # "Earth's": "Earth"
        if word.lower() == "by":
            if measure and not {comparable(measure[1].lower())} & {comparable(w) for w in content_words(phrase)}:
                return scope
        elif word.lower() in PLACES:
            if any(term.lower() in DIRECTIONS and not named_by(term, question) and named_by(after_it, question)
                   for term, after_it in zip(terms, terms[1:], strict=False)):
                return scope  # "in the Southern United States" to "in the United States"
            place_named = place_named or any(named_by(term, question) for term in terms)
            place = place or (scope if any(narrows(term, question) for term in terms if not term.isdigit()) else None)
        elif any(narrows(term, question) for term in terms):
            return scope
    return None if place_named else place


def spelled(superlative: str) -> str:
    """A pattern for ``superlative`` as written with spaces or hyphens ("most populous", "most-populous")."""
    return r"[\s-]+".join(superlative.split())


def asked_place(question: str, asked: str) -> str | None:
    """The place ``question`` asks the first of its superlative ``asked`` in, as written ("What is the largest lake
    in Scotland?": "Scotland"; "the largest conurbation of the Rhine": "the Rhine"), or ``None``: none, or only the
    whole or a place in general ("in the world", "in the country": :data:`UNSCOPED`)."""
    at = re.search(spelled(asked), question, re.IGNORECASE)
    for scope in _SCOPE.split(f" {question[at.end():]}")[1:] if at else ():
        word, _, phrase = scope.partition(" ")
        if word.lower() in PLACES and any(comparable(w) not in UNSCOPED for w in content_words(phrase)):
            return phrase.strip(" ?.!")
    return None


def names_place(text: str, place: str) -> bool:
    """Whether ``text`` names all of a question's ``place`` (:func:`asked_place`): each of its words, as
    :func:`named_by` compares them, or its initials either way ("the U.S. state of Alaska" for "the United
    States")."""
    return all(named_by(word, text) for word in content_words(place) if comparable(word) not in UNSCOPED) \
        or bool(initials(place) & initials(text))


def asked_superlative(question: str) -> str | None:
    """The superlative ``question`` asks for the first of ("What is the largest planet?": "largest"; "the most
    populous country": "most populous"), or ``None``: none, or it asks a rank ("the second largest")."""
    if re.search(rf"\b{_ORDINAL}\b", question, re.IGNORECASE):
        return None
    found = (m[0].lower() for m in _SUPERLATIVE.finditer(question))
    return next((word for word in found if word in SUPERLATIVES or " " in word), None)


def asked_noun(question: str, asked: str) -> str | None:
    """The noun ``question`` asks the first of by its superlative ``asked`` (:func:`asked_superlative`), as citations
    compare words: "ocean" for "What is the smallest ocean?"; ``None`` where a word such as "of" or "in" follows it
    ("the most abundant in the universe")."""
    noun = re.search(spelled(asked) + r"\s+(?!(?:of|in|on|by|at|among|and|or)\b)([^\W\d_]+)", question, re.IGNORECASE)
    return comparable(noun[1].lower()) if noun else None


def ranked_below(question: str, answer: str, evidence: Sequence[EvidenceItem], qualified: bool = True,
                 index: PassageIndex | None = None) -> str | None:
    """The check's reason for withholding ``answer`` when ``question`` asks for the first by a superlative
    (:func:`asked_superlative`) and every evidence item that holds the answer (as :func:`subject_elsewhere` finds
    them) is titled as the answer and ranks it lower ("fourth-largest", "second-most populous") or among others
    ("one of the oldest"), with no word of the superlative asked outside such a rank or a part of a country the
    question does not name (:data:`_IN_A_PART`); ``None`` otherwise. Found trying the chat (session 68): "What is
    the largest planet in the solar system?" was answered "Neptune", cited to "It is the fourth-largest planet in
    the Solar System", given at 68%; "Which country has the largest population?" "China", cited to "It is the
    world's second-most populous country after India". Session 70: "What is the largest city in Australia?"
    "Brisbane", cited to "the capital and largest city of the Australian state of Queensland and the third-most
    populous city in Australia", given at 72%.

    ``qualified`` (the setting ``qualified_superlatives``, session 88): the superlative asked, or its like
    ("highest" for "tallest"), keeps the answer only where no words narrow it (:func:`qualified_by`). A passage
    that ranks the answer lower and calls it the first only of less than is asked withholds it too: "What is the
    largest state in the United States by area?" was answered "California", from "the largest U.S. state by
    population and third-largest by area"; "What is the largest country by area?" "India", from "the world's
    seventh-largest country by area and the largest by population". A superlative narrowed with no rank beside it
    withholds nothing (it did in the setting's first form, which failed its bar: "the tallest uninterrupted
    waterfall" withheld "Angel Falls").

    A passage is titled as the answer by a word of the answer other than the noun the question asks the first of
    (:func:`asked_noun`), which names the kind and not the thing (session 89): "What is the smallest ocean?" was
    answered "Arctic Ocean" and set aside, because "Southern Ocean"'s passage, "the second-smallest of the five
    principal oceanic divisions, … larger than the Arctic Ocean", counted as titled by "Ocean"; "Lake Victoria" for
    the largest lake in Africa, by "African Great Lakes". The words are compared without accents: "The Krishnā River"
    is titled by "Krishna River" ("the third-longest in India"), which that change alone let through.

    With ``qualified``, a passage titled as the answer that ranks it nowhere and calls it the first only of a place
    the question does not ask about withholds it as a rank does (session 89): "What is the highest mountain in
    Bolivia?" was answered "Aconcagua", from "the highest mountain in the Americas"; "the tallest mountain in the
    world" "Mount Kilimanjaro", "the highest mountain in Africa". Narrowed another way, it still withholds nothing
    ("the world's tallest uninterrupted waterfall"). Where the question names a place, that place may lie within the
    passage's: such a passage withholds only where the ``index`` is given and neither the passage nor the answer's
    own article (:func:`own_article`) names the question's place ("the highest mountain in Africa" keeps Mount
    Kilimanjaro for Tanzania, "a large dormant volcano in Tanzania"; "the largest conurbation in Germany" the
    Rhine-Ruhr for the Rhine, in a passage on the Rhine). Session 89's first form, without the article, failed its
    bar: it withheld Kilimanjaro for Tanzania and Aconcagua for Argentina.

    Where no passage that holds the answer decides and the question asks the first of a place by a kind of thing
    that lies somewhere (:data:`LOCATED_KINDS`), an answer that neither its own article nor those passages put in
    that place is withheld (:func:`located_elsewhere`, session 90)."""
    asked = asked_superlative(question)
    claim = claim_words(question, answer)
    if asked is None or not claim:
        return None
    noun = asked_noun(question, asked)
    naming = [word for word in claim_words(question, folded(answer)) if word != noun] or claim  # not "Ocean"
    place = asked_place(question, asked)

    @lru_cache(maxsize=1)
    def answer_article() -> tuple[EvidenceItem, ...]:  # where the answer is: "a large dormant volcano in Tanzania"
        return tuple(own_article(answer, index)) if index is not None else ()

    alike = (asked, *(SAME_SUPERLATIVE.get(asked, ()) if qualified else ()))
    asked_here = re.compile(rf"\b(?:{'|'.join(spelled(word) for word in alike)})\b", re.IGNORECASE)
    question_words = folded_words(question)

    def elsewhere(part: re.Match[str]) -> str:  # a superlative of a part the question does not name is not its scope
        name = part["unit"] or part["part"]
        return " " if name is None or not question_words & folded_words(name) else part[0]

    def clause(text: str, at: re.Match[str]) -> str:  # what follows a superlative, to the end of its clause
        after = _COORDINATED.sub("", text[at.end():], count=1)  # "the largest and most populous island of Greece"
        return _CLAUSE_END.split(after, maxsplit=1)[0]

    def keeps(text: str, at: re.Match[str]) -> bool:  # not "the largest by population" to "the largest by area"
        return not qualified or qualified_by(question, asked, clause(text, at)) is None

    def first_elsewhere(text: str) -> str | None:  # "the largest lake in Turkey" to "the largest lake in Scotland"
        if place is not None and (index is None or names_place(text, place)
                                  or any(names_place(item["text"], place) for item in answer_article())):
            return None  # "the largest conurbation in Germany" of the Rhine; "in Africa" of Kilimanjaro, in Tanzania
        for at in asked_here.finditer(text):
            scope = qualified_by(question, asked, clause(text, at))
            if scope and scope.partition(" ")[0].lower() in PLACES:
                return f"called the {at[0].lower()} only {scope}"
        return None

    def rank(item: EvidenceItem) -> str | None:  # "": a passage on another subject that neither ranks nor keeps it
        found = _RANKED.search(item["text"])
        titled = names_claim(naming, folded(item["title"]))
        text = _IN_A_PART.sub(elsewhere, _RANKED.sub(" ", item["text"]))
        if any(keeps(text, at) for at in asked_here.finditer(text)):
            return None
        if not titled:
            return ""
        if found is not None:
            return f"ranked {found[0]}"
        return first_elsewhere(text) if qualified else None

    ranked = every_holder(claim, evidence, rank)
    if ranked:
        return f"{ranked} by the passages that hold it, and the question asks for the {asked}"
    if not qualified or place is None or noun not in LOCATED_KINDS:
        return None
    return located_elsewhere(place, asked, answer_article(), holders(claim, evidence))


LOCATED_KINDS = frozenset(comparable(word) for word in """lake loch reservoir river waterfall falls mountain peak volcano
    hill island archipelago peninsula desert glacier bay gulf sea lagoon canyon cave valley forest rainforest reef
    city town village capital municipality metropolis port country state province region county""".split())
"""What a question may ask the first of in a place that lies where it is (:func:`located_elsewhere`), as
:func:`asked_noun` gives it: "the largest lake in Scotland"; not "the most popular religion in Sweden" or "the most
home runs in MLB history", whose answers' articles need not name the place."""


def located_elsewhere(place: str, asked: str, article: Sequence[EvidenceItem], held: Sequence[EvidenceItem]) -> str | None:
    """:func:`ranked_below`'s reason for withholding an answer to the first of a ``place`` by the superlative
    ``asked`` where its own ``article`` (:func:`own_article`) is in the knowledge base and neither it nor a passage
    that holds the answer (``held``), title or text, names the place (:func:`names_place`); ``None``
    otherwise. Found trying the chat (session 89): "What is the largest lake in Scotland?" was answered "Lake Van",
    from a passage that says nothing of its size or of Scotland; its article says "Lake Van is the largest lake in
    Turkey". Session 90's first form, which withheld only where the article called the answer the first of another
    place, failed its bar: most answers in another place are not called so ("Australia's longest river" for New
    Zealand's). The reason reads after "it is", as the chat tells it (session 90's first wording did not)."""
    if not article or any(names_place(f"{item['title']} {item['text']}", place) for item in (*article, *held)):
        return None
    return f"put in {place} neither by its own article nor by a passage that holds it, and the question asks for the {asked}"


CAPITAL_ASKED = re.compile(r"^\W*(?:what|which)(?:\s+city)?(?:\s+(?:is|was)|['’]s)\s+the\s+capital(?:\s+city)?\s+of\s+"
                           r"(?P<place>[^?]+?)[?.!\s]*$", re.IGNORECASE)
"""A question that asks a place's capital: "What is the capital of Australia?", "What's the capital city of Canada?"."""
LARGEST = r"largest|biggest|most\s+populous"
"""How a passage calls a city the largest: "the capital and largest city of", "the most populous city in"."""
CAPITAL_OF = re.compile(
    rf"(?:\s+city)?(?:(?:\s+of)?\s+and\s+(?:the\s+)?(?:{LARGEST})(?:\s+city)?(?:\s+proper)?)?\s+(?:of|in)\s+(?:the\s+)?"
    rf"(?:(?:[\w.'’-]+\s+){{0,3}}?(?:{SUBDIVISIONS})\s+of\s+(?P<subdivision>{_CAPS})"
    rf"|(?P<part>{_CAPS}(?:\s+[a-z]{{1,3}}\s+{_CAPS})*\s+(?i:{SUBDIVISIONS}))\b"
    rf"|(?P<unit>{_CAPS})(?:\s*\((?P<also>[^)]*)\))?)")
"""What follows "capital" where a passage says what a city is the capital of: "... and most populous city of the
Australian state of Victoria", "city of the U.S. state of California", "of the Spanish autonomous community of
Andalusia" (a part of a country: "Victoria"), "of the Dar es Salaam Region" (a part named with its kind: "Dar es
Salaam Region"), "city of Canada" ("Canada"), "city of the United Arab Emirates (UAE)" ("United Arab Emirates", also
"UAE"), "(Capital and largest city in Massachusetts" (a description: "Massachusetts"), "capital of and most populous
city in Osaka Prefecture" ("Osaka Prefecture")."""
NOT_THE_CAPITAL = (r"former|financial|commercial|economic|cultural|business|old|first|royal|"
                   r"ceremonial|spiritual|religious|fashion|entertainment|judicial|summer|winter")
"""Words by which a passage calls a city a capital that is not the capital asked ("the former capital of Ivory
Coast", "the financial capital ... of India")."""
NATIONAL = r"national|nation['’]s|country['’]s|federal"
"""Words by which a passage calls a city its country's capital ("the nation's capital, Ottawa"), which is not the
capital of a state or a province asked (:func:`subdivision_asked`)."""
_CAPITAL = re.compile(rf"\b(?:(?P<kind>{NOT_THE_CAPITAL})\s+|(?P<national>{NATIONAL})\s+)?(?-i:capital|Capital(?!\s+[A-Z]))\b",
                      re.IGNORECASE)
"""A passage calling a city a capital ("the capital of", "the former capital", "(Capital city of Canada)"); a name
with "Capital" in it is none ("the National Capital Region", "the Australian Capital Territory")."""
_ITS = re.compile(r"\bits\s+$", re.IGNORECASE)
"""Before "capital": a passage's "Its capital is Ottawa" says whose capital by the passage's title ("Canada")."""
_NAMED_AFTER = re.compile(rf",\s+(?P<name>{_CAPS})")
_NAMED_BEFORE = re.compile(rf"(?P<name>{_CAPS})(?:,?\s+(?:which|that)\s+is\s+(?:[\w'’]+\s+){{0,3}}|,\s+the\s+)$")
"""The city a capital is said of, named beside it: after ("the provincial capital, Quebec City") or before ("Toronto,
which is Ontario's provincial capital"; "after Moscow, the nation's capital")."""
_PAST_BEFORE = re.compile(r"\b(?:formerly|once|previously|historically|had\s+been|having\s+(?:been|served))\s+"
                          r"(?:[\w'’-]+\s+){0,4}$", re.IGNORECASE)
_PAST_AFTER = re.compile(r"(?:(?!\band\b)[^.;,]){0,40}?\buntil\b")
"""A capital its clause makes a past one, a few words before it or after: "Karachi formerly served as the country's
capital", "Yangon was the capital city of Myanmar until 2005"; not "Ottawa, once a lumber town, is now the capital"
or "the capital and the largest city until 1990"."""
LARGEST_CITY = re.compile(rf"\b(?:{LARGEST})\s+(?:city|municipality|metropolis|metropolitan\s+area)\b", re.IGNORECASE)
"""What a passage on a city that does not call it a capital may call it instead: "the most populous city in the U.S.
state of Illinois" (Chicago's), "the largest metropolitan area in Missouri" (St. Louis's)."""
SUBDIVISION_DESCRIBED = re.compile(rf"\((?:[^()]*\W)?(?:{SUBDIVISIONS})\b[^()]*\)\s*$", re.IGNORECASE)
"""A Wikipedia summary's description, ending its first passage, of a part of a country: "(Province of Canada)",
"(U.S. state)", "(Region of Italy)"."""


PLACE_WORDS = frozenset("""north south east west northern southern eastern western central upper lower new great
united republic democratic federal people peoples islands island saint kingdom state states and""".split())
"""Words many places' names share, which do not name a place alone: a capital "of South Africa" is no capital of
South Carolina, while one "of the Republic of Korea" is South Korea's ("korea"). A name made only of such words
("the United States") is compared whole."""


NOT_CALLED = "the most populous city, not called a capital,"
"""What :func:`capital_called` reads in a passage titled as the answer that calls it the largest city and no capital:
the one reading the answer's own article overrides where it calls the answer the capital asked."""


def capital_called(item: EvidenceItem, place: set[str], claim: Sequence[str], subdivision: bool = False) -> str | None:
    """What an evidence item calls the city it holds a capital of, when that is not the capital of ``place`` (its
    words, folded): "the capital of Victoria" (a state, or another place: :data:`CAPITAL_OF`; "Its capital is
    Ottawa" in a passage titled "Canada": :data:`_ITS`), "the financial capital of India" (:data:`NOT_THE_CAPITAL`)
    or, where the place asked is a ``subdivision`` of a country, "the nation's capital" (:data:`NATIONAL`); ``None``
    where it calls it the capital of the place, or a capital it does not say of what, or no capital at all. A capital
    said of another city named beside it (:data:`_NAMED_AFTER`, :data:`_NAMED_BEFORE`) is passed over. A capital
    "of" the answer itself ("the state capital of Tallahassee") says nothing of what the answer is the capital of; a
    state or a canton may share its name ("the capital of the canton of Zurich"). A capital its sentence makes past
    ("formerly", "until": :data:`_PAST_BEFORE`, :data:`_PAST_AFTER`) is a former one. A passage titled as the answer
    that calls it no capital at all (or only other cities') but the largest or most populous city
    (:data:`LARGEST_CITY`: Chicago's "the most populous city in the U.S. state of Illinois") calls it
    :data:`NOT_CALLED`."""
    said = list(capitals_said(item, place, claim, subdivision))
    if not said:  # no capital, or only other cities' ("after Moscow, the nation's capital")
        titled = names_claim(claim, item["title"])
        return NOT_CALLED if titled and LARGEST_CITY.search(item["text"]) else None
    return said[0] if None not in said else None


def capitals_said(item: EvidenceItem, place: set[str], claim: Sequence[str], subdivision: bool = False) -> Iterator[str | None]:
    """Each capital an evidence item calls the city it holds, as :func:`capital_called` reads it: ``None`` for one
    the question may mean (the capital of ``place``, or a capital it does not say of what), and what it calls it
    otherwise ("the capital of Victoria"); a capital said of another city named beside it, or "of" the answer
    itself, is none."""
    for mention in _CAPITAL.finditer(item["text"]):
        named = _NAMED_AFTER.match(item["text"], mention.end()) or _NAMED_BEFORE.search(item["text"], 0, mention.start())
        if named and not names_claim(claim, named["name"]):
            continue  # a capital said of another city the passage names: "the provincial capital, Quebec City"
        of = CAPITAL_OF.match(item["text"], mention.end())
        unit = (of["subdivision"] or of["part"] or of["unit"]) if of else None
        if of and of["unit"] and names_claim(claim, of["unit"], every=True):
            continue  # "the state capital of Tallahassee"; "the capital of the canton of Zurich" is the canton's
        if unit is None and not mention["kind"] and _ITS.search(item["text"], 0, mention.start()):
            unit = item["title"]  # "Its capital is Ottawa", in Canada's passage
        past = _PAST_BEFORE.search(item["text"], 0, mention.start()) or _PAST_AFTER.match(item["text"], mention.end())
        kind = mention["kind"] or ("former" if past else None) or (mention["national"] if subdivision and unit is None else None)
        if kind:
            yield f"the {kind.lower()} capital" + (f" of {unit}" if unit else "")
        elif unit is None or place & folded_words(f"{unit} {'' if of is None or of['subdivision'] else of['also'] or ''}"):
            yield None
        else:
            yield f"the capital of {unit}"


def described(index: PassageIndex, document: str | None) -> Passage | None:
    """The first passage of ``document`` where it is a Wikipedia summary's, which ends with the article's description
    ("Ontario is ... (Province of Canada)"; only the summaries' reader writes descriptions); ``None`` otherwise."""
    first = index.passage(index.document_passages(document)[0]) if document is not None else None
    return first if first is not None and first.metadata.get("source") == "wikipedia" else None


def subdivision_asked(place: str, index: PassageIndex | None) -> bool:
    """Whether the index's document titled as ``place`` (:func:`components.titles.titled_document`, as written) is
    a Wikipedia summary whose description makes it a part of a country (:data:`SUBDIVISION_DESCRIBED`: "Ontario
    ... (Province of Canada)"); ``False`` without an index."""
    first = described(index, titled_document(index, place, spelling=False)) if index is not None else None
    return first is not None and bool(SUBDIVISION_DESCRIBED.search(first.text))


def keeps_capital(item: EvidenceItem, place: set[str], claim: Sequence[str], subdivision: bool = False) -> bool:
    """Whether an evidence item calls the city it holds a capital the question may mean: the capital of ``place``,
    or a capital it does not say of what (:func:`capitals_said`)."""
    return any(said is None for said in capitals_said(item, place, claim, subdivision))


def own_article(answer: str, index: PassageIndex) -> list[EvidenceItem]:
    """The passages of the answer's own article, as evidence items: the document titled as ``answer``
    (:func:`components.titles.titled_document`, as written) where it is a Wikipedia summary; none otherwise (a
    user's file titled as the answer is no article on it). Session 72: "Dar es Salaam" for Tanzania's capital, cited
    to nothing, whose article calls it "the largest city and financial hub of Tanzania and capital of the Dar es
    Salaam Region"; "St. Louis" for Missouri's, "the largest metropolitan area in Missouri"."""
    document = titled_document(index, answer, spelling=False)
    if document is None or described(index, document) is None:
        return []
    title = index.document_title(document)
    return [EvidenceItem(n=0, passage_id=pid, title=title, text=index.passage(pid).text)
            for pid in index.document_passages(document)]


def capital_elsewhere(question: str, answer: str, evidence: Sequence[EvidenceItem],
                      index: PassageIndex | None = None) -> str | None:
    """The check's reason for withholding ``answer`` when ``question`` asks the capital of a place
    (:data:`CAPITAL_ASKED`) and every evidence item that holds the answer (as :func:`subject_elsewhere` finds them)
    calls it the capital of somewhere else, or a capital that is not the one asked (:func:`capital_called`; a
    national capital, where the index describes the place as a part of a country: :func:`subdivision_asked`);
    ``None`` otherwise. Found trying the API (session 69): "What is the capital of Australia?" was answered
    "Melbourne", cited to "Melbourne is the capital and most populous city of the Australian state of Victoria", and
    given at 81% (the summaries hold no article on Canberra). Session 70: "Mumbai" for India's capital, from "It is
    the financial capital and the most populous city proper of India", and "Abidjan" for Ivory Coast's, "the former
    capital of Ivory Coast". Session 71: "Ottawa" for Ontario's, from "home to the nation's capital, Ottawa" and
    Canada's "Its capital is Ottawa". With an index, the answer's own article (:func:`own_article`) is read too: an
    answer it calls a capital the question may mean (:func:`keeps_capital`) is not withheld for a passage that only
    calls it the largest city (:data:`NOT_CALLED`), and one that no evidence item holding it calls so is withheld
    where its article calls it another place's capital or its largest city."""
    asked = CAPITAL_ASKED.match(question)
    claim = claim_words(question, answer)
    if asked is None or not claim:
        return None
    place = {w for w in folded_words(asked["place"]) if len(w) >= 3 and w != "the"}
    if not place:
        return None
    place = place - PLACE_WORDS or place  # "South Carolina" is not named by "South Africa"
    subdivision = subdivision_asked(asked["place"], index)
    asks = f"and the question asks the capital of {asked['place']}"
    article = own_article(answer, index) if index is not None else []
    kept = any(keeps_capital(item, place, claim, subdivision) for item in article)
    elsewhere = every_holder(claim, evidence, lambda item: capital_called(item, place, claim, subdivision))
    if elsewhere and not (kept and elsewhere == NOT_CALLED):  # a passage calling Seville only the largest city
        return f"{elsewhere} by the passages that hold it, {asks}"
    if kept or any(keeps_capital(item, place, claim, subdivision) for item in holders(claim, evidence)):
        return None
    if elsewhere := next(filter(None, (capital_called(item, place, claim, subdivision) for item in article)), None):
        return f"{elsewhere} by its own article in the knowledge base, {asks}"
    return None


def population_elsewhere(question: str, answer: str, evidence: Sequence[EvidenceItem], index: PassageIndex,
                         found: PlaceDocumentTrace | None = None) -> str | None:
    """The check's reason for withholding ``answer`` when ``question`` asks the population of a place the index has
    a document titled as (:func:`components.requests.population_place`; :func:`components.titles.titled_document`,
    as written: ``found``, where retrieval found it with the setting ``place_first``) and every evidence item that
    holds the answer (as :func:`subject_elsewhere` finds them) is a passage of another document; ``None`` otherwise,
    and where one is not a passage of the index. Found trying the chat (session 69): "How many people live in
    Germany?" was answered "613,111", cited to "Stuttgart has a population of 613,111 as of 2023, making it the sixth
    largest city in Germany" (Germany's own passage ranked second)."""
    place = population_place(question)
    claim = claim_words(question, answer)
    if place is None or not claim:
        return None
    document = found["doc_id"] if found else titled_document(index, place, spelling=False)
    held = holders(claim, evidence) if document is not None else []
    if (not held or any(item["passage_id"] not in index for item in held)
            or any(index.document_of(index.passage(item["passage_id"])) == document for item in held)):
        return None
    return f"{held_only_by(held)}, and the question asks the population of {place}"


OFFICES = (r"president|vice[- ]president|prime\s+minister|premier|chancellor|ceo|chief\s+executive(?:\s+officer)?|"
           r"chair(?:man|woman|person)?|king|queen|monarch|emperor|empress|pope|mayor|governor|leader|"
           r"head\s+of\s+(?:state|government)|secretary[- ]general|director[- ]general")
OFFICE_NOW = re.compile(r"^\W*who\s+(?:is|['’]s)\s+(?:the\s+)?(?:(?:current|present|incumbent|reigning|sitting)\s+)?"
                        rf"(?:[\w.'’-]+\s+){{0,3}}?(?P<office>{OFFICES})\b(?:\s+of\s+(?P<place>[^?]+?)|[^?]*?)[?.!\s]*$",
                        re.IGNORECASE)
"""A question that asks who holds an office now: "Who is the president of France?", "Who's the CEO of Apple?"."""
OF_THE_PAST = re.compile(rf"\b(?:first|last|former|past|previous|ever|history|only|{_ORDINAL}|\d{{3,4}}|[^\W\d_]+est)\b",
                         re.IGNORECASE)
"""Words with which such a question asks of the past or of a rank ("the first president", "the longest serving",
"the 12th prime minister"), which someone out of office answers."""
ENDED_TERM = re.compile(r"(?:\bfrom (?:c\. )?\d{3,4} to |\d{3,4}\s*[–-]\s*)(?:c\. )?(?P<ended>\d{3,4})\)+\s*$")
"""A description of a closed term, ending a first passage: "(President of France from 1981 to 1995)", "(President of
Brazil (1930–1945; 1951–1954))"."""


def out_of_office(question: str, answer: str, index: PassageIndex) -> str | None:
    """The check's reason for withholding ``answer`` when ``question`` asks who holds an office now
    (:data:`OFFICE_NOW`, nothing of the past: :data:`OF_THE_PAST`) and the answer is the title of one document of
    the Wikipedia summaries in the index (:func:`components.titles.titled_document`; a benchmark's passages are no
    source's descriptions), or is with the place the question names ("Philip II" for "the king of Spain": "Philip
    II of Spain"), whose first passage spells a death (the Wikipedia reader's
    "; born 1955, died 2011, aged 55 or 56)": :data:`components.sources.SPELLED_LIFE`) or ends with a closed term
    (:data:`ENDED_TERM`); ``None`` otherwise. Found trying the chat (session 68): "Who is the president of
    France?" was answered "François Mitterrand", cited to "(President of France from 1981 to 1995)", and given at
    72%; "Who is the CEO of Apple?" "Steve Jobs" at 69%."""
    asked = OFFICE_NOW.match(question)
    if asked is None or OF_THE_PAST.search(question):
        return None
    document = titled_document(index, answer, spelling=False)
    if document is None and asked["place"]:  # a monarch's document is titled with the country: "Philip II of Spain"
        document = titled_document(index, f"{answer} of {asked['place']}", spelling=False)
    first = described(index, document)
    if first is None:
        return None
    office = " ".join(asked["office"].split())
    now = f"by the knowledge base, and the question asks who is the {office} now"
    if died := SPELLED_LIFE.search(first.text):
        return f"someone who died in {died['died']}, {now}"
    if ended := ENDED_TERM.search(first.text):
        return f"someone whose time as {office} ended in {ended['ended']}, {now}"
    return None


_YEAR = r"(?<![\d.,])(?:1\d{3}|20\d{2})(?![\d.,]?\d)(?!\s+years?\b)"
YEAR = re.compile(_YEAR)
"""A year as a question or a passage writes it: four digits, 1000–2099, not part of a longer number ("1,500") nor a
number of years ("its worst drought in 1000 years")."""
_SPAN = re.compile(rf"(?P<start>{_YEAR})(?:\s*[–—-]\s*|\s+(?:to|until|till|through|and)\s+)(?P<end>{_YEAR}|\d{{2}}(?!\d))"
                   r"|\b(?P<decade>1\d{2}0|20\d0)s\b")
"""A span of years a passage writes, which any year in it is said of: "from 1969 to 1974", "1939–1945",
"between 1990 and 2000", "1914–18", "the 1960s"."""


_MONTHS = "january february march april may june july august september october november december"
_AS_A_TIME = re.compile(
    r"\b(?:in|of|since|from|during|before|after|until|till|by|between|and|to|through|the|a|an|circa|c\.|around|"
    rf"early|late|mid|pre|post|{_MONTHS.replace(' ', '|')}|\d{{1,2}}(?:st|nd|rd|th)?,?)[\s-]+(?P<year>{_YEAR})",
    re.IGNORECASE)
"""A year a question names as a time: after a preposition, an article or a date's day or month ("in 1969", "the 2016
Summer Olympics", "since 1904", "as of 2017", "May 2010", "July 31, 1974", "pre-1875"), not after a verb or a kind of
work, where it is a title ("Who wrote 1984?", "the film 1917")."""


def years_asked(question: str) -> list[int]:
    """The years ``question`` names as times (:data:`_AS_A_TIME`), in order, each once."""
    return sorted({int(found["year"]) for found in _AS_A_TIME.finditer(question)})


_TERM = re.compile(rf"\bfrom\s+(?:[^.;()]{{0,20}}?\s)?(?P<start>{_YEAR})[^.;()]{{0,50}}?\b(?:to|until|till|through)\b"
                   rf"[^.;()]{{0,40}}?(?P<end>{_YEAR})", re.IGNORECASE)
"""A term a sentence writes with words between its years, which any year in it is said of: "from 18 May 1804 until his
first abdication in 1814", "from 1 September 1643 until his death in 1715". Not "since 1929", which would hold every
year after it ("sovereign of Vatican City since 1929" kept "Leo XIV" for the pope elected in 2013)."""


_LIFE_YEAR = re.compile(rf"\b(?:born|died|aged\s+\d+(?:\s+or\s+\d+)?\s+in)\s+(?:c\.\s+)?(?:[^\W\d_]+\s+){{0,2}}?"
                        rf"(?:\d{{1,2}}\s+)?(?:[^\W\d_]+\s+)?{_YEAR}", re.IGNORECASE)
"""A year of a life as a description writes it, which says nothing of when what the passage tells happened: "born
1955", "died 1821", "aged 70 or 71 in 2026" (the year the knowledge base tells a living person's age in:
:func:`components.sources.aged_today`)."""


def years_named(text: str, lives: bool = False) -> tuple[set[int], list[range]]:
    """The years ``text`` names (:data:`YEAR`) and the spans it writes (:data:`_SPAN`, :data:`_TERM`), as ranges of
    years, a life's years aside (:data:`_LIFE_YEAR`) unless ``lives`` (a question that asks of a life: "born 18
    October 1992")."""
    text = text if lives else _LIFE_YEAR.sub(" ", text)
    spans = [range(int(term["start"]), int(term["end"]) + 1) for term in _TERM.finditer(text)]
    for span in _SPAN.finditer(text):
        if span["decade"]:
            start = int(span["decade"])
            spans.append(range(start, start + 10))
            continue
        start, end = int(span["start"]), span["end"]
        last = int(end) if len(end) == 4 else start // 100 * 100 + int(end)
        spans.append(range(start, last + 1))
    return {int(y) for y in YEAR.findall(text)}, list(dict.fromkeys(spans))


ELECTED = re.compile(r"\belect(?:s|ed|ion|ions)?\b", re.IGNORECASE)
"""A question that asks of an election, whose winner's term a passage dates from the year after ("Who won the 2008
United States presidential election?": "the 44th president of the United States from 2009 to 2017")."""


def year_elsewhere(question: str, answer: str, evidence: Sequence[EvidenceItem],
                   before: Callable[[EvidenceItem], str] | None = None, multi_hop: bool | None = None) -> str | None:
    """The check's reason for withholding ``answer`` when ``question`` names a year as a time (:func:`years_asked`) and
    every evidence item that holds the answer (those its citations come from) names other years, and neither that year
    nor a span holding it (:func:`years_named`; for an election, :data:`ELECTED`, a span from the year after), in its
    title, its text or the passages ``before`` it in its document (:func:`passages_before`); ``None`` otherwise, where
    one names no year (it says nothing of when), and for a question read as multi-hop (``multi_hop``: its year may be
    said of another passage's subject, "Who was the writer of These Boots Are Made for Walkin' and who died in 2007?").
    Found trying the chat (session 73): "Which country hosted the 2016 Summer Olympics?" was answered "France",
    cited to "The inaugural Games took place in 1896 in Athens ... and the most recent was held in 2024 in Paris,
    France.", and given at 51%. SQuAD 2.0's unanswerable questions often change a year of their paragraph ("Who
    founded Cambridge in 1650?": the passage has 1639)."""
    asked = years_asked(question)
    claim = claim_words(question, answer)
    if not asked or not claim or multi_hop:
        return None
    elected, lives = ELECTED.search(question) is not None, _LIFE_YEAR.search(question) is not None
    other: set[int] = set()

    def says(item: EvidenceItem) -> str | None:
        years, spans = years_named(f"{item['title']} {item['text']} {before(item) if before else ''}", lives)
        if not years or any(year in years or any(year in span or (elected and span.start == year + 1) for span in spans)
                            for year in asked):
            return None
        other.update(years)
        return "other"

    if every_holder(claim, evidence, says) is None:
        return None
    said, named = ", ".join(str(y) for y in sorted(other)), " and ".join(str(y) for y in asked)
    return f"held only by passages that name other years ({said}), and the question asks of {named}"


OPPOSITES = (("largest", "smallest"), ("biggest", "smallest"), ("highest", "lowest"), ("first", "last"),
             ("earliest", "latest"), ("most", "least"), ("more", "less"), ("increase", "decrease"),
             ("increased", "decreased"), ("before", "after"), ("north", "south"), ("east", "west"),
             ("northern", "southern"), ("eastern", "western"), ("maximum", "minimum"), ("upper", "lower"),
             ("oldest", "youngest"), ("older", "younger"), ("longest", "shortest"), ("earlier", "later"),
             ("strongest", "weakest"), ("best", "worst"), ("majority", "minority"), ("import", "export"),
             ("imported", "exported"), ("legal", "illegal"), ("success", "failure"), ("successful", "unsuccessful"),
             ("private", "public"), ("inner", "outer"), ("internal", "external"), ("richest", "poorest"),
             ("fastest", "slowest"), ("heaviest", "lightest"), ("higher", "lower"), ("larger", "smaller"),
             ("accepted", "rejected"), ("allowed", "banned"), ("positive", "negative"), ("major", "minor"))
"""Pairs of words a question may have the one of where a passage says the other: SQuAD 2.0's writers made many of
its unanswerable questions by such a swap ("What is the second smallest global producer of soybean?" of a paragraph
on the second largest), which the embedding barely sees. Written down before any record was read for it (session 75,
``runs/preregistered-s75.md`` §2)."""


def _opposites(pairs: Sequence[tuple[str, str]]) -> dict[str, frozenset[str]]:
    """Each word of ``pairs`` and the words it is paired with, either way round."""
    found: dict[str, set[str]] = {}
    for a, b in pairs:
        found.setdefault(a, set()).add(b)
        found.setdefault(b, set()).add(a)
    return {word: frozenset(others) for word, others in found.items()}


_OPPOSITE = _opposites(OPPOSITES)
_CHOICE = re.compile(r"\bor\b[^?]*\?*\s*$", re.IGNORECASE)
"""A question that offers its answers ("Who was born first, José Echegaray or P. J. O'Rourke?"): its word compares
the two it names, which no passage need say of either."""


def opposite_elsewhere(question: str, answer: str, evidence: Sequence[EvidenceItem],
                       multi_hop: bool | None = None) -> str | None:
    """The check's reason for withholding ``answer`` when ``question`` has a word of :data:`OPPOSITES` and every
    evidence item that holds the answer (those its citations come from) says its opposite and never the word: "What is
    the second smallest global producer of soybean?" answered "Brazil", held only by a passage on the second largest;
    ``None`` otherwise, for a bare yes or no (a passage that says the opposite is what "Is Mars larger than Earth?"
    is answered "No" from), for a question that offers its answers (:data:`_CHOICE`), and for one read as multi-hop
    (``multi_hop``: its word may be said of another passage's subject). Found reading SQuAD 2.0 train records (session
    75): on the 1,750 unseen questions of sessions 71–74 it withheld 7 answers the score had given, all to unanswerable
    questions, and on seeds 77 and 78, replayed before anyone read them for it, 3, all wrong."""
    claim = answer_claim(answer)
    asked = sorted(folded_words(question) & _OPPOSITE.keys())
    if not asked or not claim or multi_hop or _CHOICE.search(question):
        return None
    for word in asked:
        def says(item: EvidenceItem, word: str = word) -> str | None:
            said = folded_words(item["text"])
            return None if word in said or not said & _OPPOSITE[word] else ", ".join(
                f"\u201c{w}\u201d" for w in sorted(said & _OPPOSITE[word]))
        if said := every_holder(claim, evidence, says):
            return f"held only by passages that say {said}, and the question asks \u201c{word}\u201d"
    return None


def _denying(words: Iterable[str]) -> re.Pattern[str]:
    """A word of ``words``, or one ending in "n't" ("didn't", "don’t"), not within a hyphenated compound
    ("not-for-profit" names a kind of thing)."""
    return re.compile(rf"(?<![\w-])(?:{'|'.join(sorted(words))})(?![\w-])|\w+n['\u2019]t\b", re.IGNORECASE)


NEGATION = _denying(("not", "never", "cannot", "neither", "nor"))
"""What a question must say to be read as a denial: "not", "never", "cannot", "neither", "nor", or a word ending in
"n't"."""
DENIAL_SAID = _denying(NEGATIONS | {"nowhere"})
"""What a passage may deny with: the words a question denies with, as the query cache reads them
(:data:`components.query_cache.NEGATIONS`: :data:`NEGATION`'s and "no", "none", "nothing", "nobody", "without"), and
"nowhere" ("it has no well-defined solid surface" answers "Which planet does not have a solid surface?"). A question
with only the others is not read as a denial: on train they withheld more right answers and no more wrong ones."""


def negation_unsaid(question: str, answer: str, evidence: Sequence[EvidenceItem],
                    multi_hop: bool | None = None) -> str | None:
    """The check's reason for withholding ``answer`` when a single-hop ``question`` denies something (a word of
    :data:`NEGATION`) and no evidence item that holds a word of the answer (:func:`nodes.generate.support` above 0)
    denies anything (:data:`DENIAL_SAID`), in its title or its text; ``None`` otherwise, for a bare yes or no, and
    for a question read as multi-hop (``multi_hop``). SQuAD 2.0's writers made unanswerable questions by denying
    what their paragraph says ("What persons were not allowed to settle in New France?" against "The French crown's
    refusal to allow non-Catholics to settle"), and the 1.5B model answers them from the plain statement: on the
    SQuAD 2.0 train split 78% of the questions with such a word are unanswerable, against 49% of the others. Found
    reading train records (session 83; ``docs/preregistered/s83-negation.md``): on the 3,750 unseen train questions
    of sessions 71–82 it withholds 25 answers the score had given to unanswerable questions and 6 to answerable ones
    (4.0 F1 points)."""
    asked = NEGATION.search(question)
    if asked is None or multi_hop or not answer_claim(answer):
        return None
    if any(DENIAL_SAID.search(f"{item['title']} {item['text']}") for item in evidence if support(item, answer) > 0):
        return None
    return f"an answer to a question that says \u201c{asked.group(0).lower()}\u201d, held only by passages that deny nothing"


COMPARED = re.compile(r"^\W*(?:is|are|was|were)\s+(?P<a>[^?]+?)\s+(?:(?P<more>more|less)\s+(?P<adj>[^\W\d_]+)|"
                      r"(?P<er>[^\W\d_]{2,}er))\s+than\s+(?P<b>[^?]+?)[?.!\s]*$", re.IGNORECASE)
"""A yes/no question that compares two things by a comparative: "Is the Amazon longer than the Nile?", "Is China more
populous than India?"."""
IRREGULAR = {"better": "best", "worse": "worst"}
"""Comparatives whose superlative is not the word less its "-er" and "-est"."""
SAME_SUPERLATIVE = {"biggest": ("largest",), "largest": ("biggest",), "tallest": ("highest",), "highest": ("tallest",)}
"""Superlatives a passage may say for the one a question's comparative comes from ("Is Saturn bigger than Jupiter?":
"the second largest ... after Jupiter")."""
_WORLD = r"(?:\s+(?:in|on|of)\s+(?:the\s+)?(?:world|earth|solar\s+system|universe|planet))?"
"""The scope a superlative may have and still be the first of all: "the longest river in the world"."""


def superlative_of(question: str) -> tuple[str, str, str, str] | None:
    """The two things ``question`` compares (:data:`COMPARED`, as written), its comparative and the superlative it
    comes from ("Is the Amazon longer than the Nile?": "the Amazon", "the Nile", "longer", "longest"), or ``None``."""
    found = COMPARED.match(question)
    if found is None or (found["er"] and found["er"].lower() in ("other", "rather")):
        return None
    if found["more"]:
        comparative = f"{found['more'].lower()} {found['adj'].lower()}"
        superlative = f"{'most' if found['more'].lower() == 'more' else 'least'} {found['adj'].lower()}"
    else:
        comparative = found["er"].lower()
        superlative = IRREGULAR.get(comparative, comparative[:-2] + "est")
    return found["a"].strip(), found["b"].strip(), comparative, superlative


def _said_for(superlative: str) -> str:
    """``superlative`` and those a passage may say for it (:data:`SAME_SUPERLATIVE`), as a pattern's alternatives."""
    return "|".join((superlative, *SAME_SUPERLATIVE.get(superlative, ())))


def ranks_first(thing: str, superlative: str, evidence: Sequence[EvidenceItem]) -> str | None:
    """What an evidence item titled as ``thing`` says of it being the first by ``superlative`` (or one a passage may say
    for it, :data:`SAME_SUPERLATIVE`), as "call <thing> the <superlative>": "is the longest river in the world", "is
    the world's largest ocean", with no rank ("second-longest", "one of the longest"), at most one word after it (not
    "the largest hot desert", a kind of its own) and no scope but the world's (not "the longest river in Africa");
    else ``None``."""
    first = re.compile(rf"\b(?:is|was|are|were)\s+(?:also\s+)?(?:the\s+)?(?:world['’]s\s+)?(?P<said>{_said_for(superlative)})"
                       rf"(?:\s+[^\W\d_]+)?{_WORLD}(?=\s*(?:[,.;:()]|by\b|$))", re.IGNORECASE)
    named = [comparable(w) for w in content_words(thing)]  # "the Nile": a passage titled "Nile"
    for item in evidence:
        found = first.search(item["text"]) if named and names_claim(named, item["title"], every=True) else None
        if found and not _RANKED.search(item["text"][max(0, found.start() - 30):found.end()]):
            return f"call {thing} the {found['said'].lower()}"
    return None


def ranks_after(thing: str, other: str, superlative: str, evidence: Sequence[EvidenceItem]) -> str | None:
    """What an evidence item titled as ``thing`` says of it ranking below ``other`` by ``superlative`` (or one a passage
    may say for it), as "rank <thing> <rank> after <other>": "the second largest in the Solar System, after Jupiter",
    "the world's second-most populous country after India"; else ``None``."""
    after = re.compile(rf"\b(?P<rank>{_ORDINAL}[\s-]+(?:{_said_for(superlative)}))\b[^.;]{{0,60}}?\bafter\s+"
                       r"(?P<first>[^,.;()]+)", re.IGNORECASE)
    named, others = ([comparable(w) for w in content_words(name)] for name in (thing, other))
    if not named or not others:
        return None
    for item in evidence:
        found = after.search(item["text"]) if names_claim(named, item["title"], every=True) else None
        if found and names_claim(others, found["first"], every=True):
            return f"rank {thing} {found['rank'].lower()}, after {other}"
    return None


def superlative_elsewhere(question: str, shown: str, evidence: Sequence[EvidenceItem]) -> str | None:
    """The check's reason for withholding a yes or no (``shown``, as it would be given) to a question that compares two
    things (:func:`superlative_of`) when the passages say one of them is the more, and not the other, and the verdict
    says otherwise: a passage on one calls it the first of all by the superlative (:func:`ranks_first`), or a passage
    on the other ranks it below that one (:func:`ranks_after`). "Yes" to "Is the Amazon longer than the Nile?" where
    the Nile's passage says "it is the longest river in the world"; "Yes" to "Is Saturn bigger than Jupiter?" where
    Saturn's says "the second largest in the Solar System, after Jupiter"; ``None`` otherwise. Found trying the chat
    (session 73): "Is the Amazon longer than the Nile?" was answered "Yes", uncited, and given at 68%."""
    compared = superlative_of(question)
    said = re.match(r"\W*(yes|no)\b", shown, re.IGNORECASE)
    if compared is None or said is None:
        return None
    verdict = said[1].lower()
    a, b, comparative, superlative = compared
    a_more = ranks_first(a, superlative, evidence) or ranks_after(b, a, superlative, evidence)
    b_more = ranks_first(b, superlative, evidence) or ranks_after(a, b, superlative, evidence)
    if bool(a_more) == bool(b_more) or (verdict == "yes") == bool(a_more):
        return None
    return f"contradicted by the passages, which {a_more or b_more}, and the question asks whether {a} is {comparative} than {b}"


@lru_cache(maxsize=1)
def instruction_words() -> frozenset[str]:
    """The content words of the answer prompt's instructions (``prompts/answer_system.txt``), as citations compare
    words (:func:`nodes.generate.comparable`)."""
    return frozenset(comparable(w) for w in content_words(template("answer_system")))


ECHO = "words of the prompt's instructions, which neither the evidence nor the question has"
ECHO_NUMBER = "a number that neither the evidence nor the question holds"
"""The echo's reason as the reader is told it where the answer is only numbers (the instructions' example has "2"):
what is wrong with "2" for "How many moons does Mars have?" is that nothing read holds it."""


def echoes_instructions(question: str, answer: str, evidence: Sequence[EvidenceItem]) -> str | None:
    """The check's reason for withholding ``answer`` when its content words are all words of the answer prompt's
    instructions (:func:`instruction_words`) and none is in the evidence (titles and texts) or the question: the model
    echoed its instructions, or refused in words of its own; ``None`` otherwise, and with no evidence (closed book).
    Found trying the chat (session 68): "Where did Martin Luther King Jr. die?" was answered "Cite" and given at 55%;
    the committed benchmark runs hold "The evidence does not contain the answer." given 27 times, the instructions'
    example "Paris [2]" as "Paris" or "2" (51 given answers with evidence, all wrong). An answer of numbers alone is
    told as such (:data:`ECHO_NUMBER`)."""
    words = {comparable(w) for w in content_words(answer)}
    if not evidence or not words or not words <= instruction_words():  # closed book: the check does not judge it
        return None
    read = " ".join([question, *(f"{item['title']} {item['text']}" for item in evidence)])
    if words & {comparable(w) for w in content_words(read)}:
        return None
    return ECHO_NUMBER if all(w.isdigit() for w in words) else ECHO


def rule_of(question: str, answer: str, shown: str, evidence: Sequence[EvidenceItem], *,
            citations: Sequence[Citation] | None = None, settings: Mapping[str, Any] | None = None,
            index: PassageIndex | None = None, place_document: PlaceDocumentTrace | None = None,
            multi_hop: bool | None = None) -> tuple[str, str] | None:
    """The rule (its ``by``, :data:`RULED`) that withholds ``answer`` (``shown``: as it would be given) whatever its
    score, and its reason; ``None`` where none does. A rule whose inputs are not given is not applied (a replay of
    recorded answers keeps no citations, settings or index: :func:`eval.rescore.ruled`): an age no passage states
    needs the citations and the settings; someone out of office, the index; without the index, a passage that holds
    the answer is read without the passages before it. ``place_document``: the document retrieval searched as the
    place whose population the question asks (:func:`nodes.retrieve.place_document`); ``multi_hop``: whether the
    question reads as multi-hop (the setting ``multi_hop``, :mod:`nodes.classify_tier`), which :func:`year_elsewhere`
    leaves to the score."""
    if citations is not None and settings is not None and age_unstated(question, citations, settings):
        return "age", AGE_UNSTATED
    before = (lambda item: passages_before(index, item)) if index is not None else None
    for by, reason in (("kind", lambda: number_asked_of(question, shown)),
                       ("subject", lambda: subject_elsewhere(question, answer, evidence, before)),
                       ("rank", lambda: ranked_below(question, answer, evidence,
                                                     (settings or {}).get("qualified_superlatives",
                                                                             PipelineConfig.qualified_superlatives),
                                                     index=index)),
                       ("capital", lambda: capital_elsewhere(question, answer, evidence, index)),
                       ("population", lambda: population_elsewhere(question, answer, evidence, index, place_document)
                        if index is not None else None),
                       ("year", lambda: year_elsewhere(question, answer, evidence, before, multi_hop)),
                       ("opposite", lambda: opposite_elsewhere(question, answer, evidence, multi_hop)),
                       ("negation", lambda: negation_unsaid(question, answer, evidence, multi_hop)),
                       ("compared", lambda: superlative_elsewhere(question, shown, evidence)),
                       ("past", lambda: out_of_office(question, shown, index) if index is not None else None),
                       ("echo", lambda: echoes_instructions(question, answer, evidence))):
        if said := reason():
            return by, said
    return None


def set_aside_before(question: str, answer: str, steps: Sequence[Step]) -> tuple[str, str] | None:
    """The rule and reason that set ``answer`` aside at an earlier step to read more (``extended_by: "rule"``, with
    ``extend_after_rule``), when that step's answer makes the same claim (its content words beyond the question's:
    "Neptune" and "The largest planet is Neptune"); ``None`` otherwise. Reading more does not make an answer its
    passage ranks fourth-largest the largest, but it may stop the rule from firing: a rule withholds an answer only
    when every passage holding it says it is another's, and the next tier may add the answer's own article's other
    sentences ("Jupiter is the fifth planet from the Sun", beside "the third-brightest natural object")."""
    asked = set(answer_claim(question))

    def claim(text: str) -> set[str]:
        return set(claim_words(question, text)) - asked

    given = claim(answer)
    for step in steps[:-1]:
        if step.get("extended_by") == "rule" and given and claim(step["answer"]) == given:
            return step["rule"], step["rule_reason"]
    return None


@timed("check_answer")
def check_answer(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    settings = state["settings"]
    steps = state.get("steps") or []
    if not steps:
        raise ValueError("check_answer runs after generate: the state holds no answer")
    step = steps[-1]
    question = state.get("standalone_question") or state["question"]
    answer = state.get("answer", step["answer"])
    evidence = state.get("evidence") or []
    default = ctx.check  # the answerability model for this generator (without the probe when it has none)
    model, fit_on = ctx.check_for(evidence_sources(evidence, state.get("passages") or [], ctx.index))
    features = check_features(question, answer, step, evidence, state.get("passages") or [],
                              state.get("escalations", 0) > 0)
    # the question-type reading, made before the answer, read again with the answer's passage in hand
    probability = settings.get("multi_hop_probability")
    knob, multi_hop = settings.get("abstain_threshold"), checked_as_multi_hop(settings.get("multi_hop"), probability,
                                                                              features)
    # the knob is the default check's single-hop bar; the Wikipedia check's, or a multi-hop question's,
    # follows it through a fitted pair (components.answerability.carried)
    pair: list[float] | None = None
    if model is not None and default is not None:
        knob = default.threshold if knob is None else knob
        if fit_on == "wikipedia":
            pair = [default.threshold, model.threshold]
            threshold = carried(knob, *pair)
        else:
            threshold = model.threshold_for(knob, multi_hop)
            if model.multi_hop_threshold is not None:
                pair = [model.threshold, model.multi_hop_threshold]
    else:
        threshold = knob = 0.0 if knob is None else knob
    check: AnswerabilityTrace = {"decision": "answer", "by": "unchecked", "score": None, "threshold": threshold,
                                 "knob": knob, "multi_hop": multi_hop, "fit_on": fit_on, "features": {}}
    if pair is not None:  # how the knob maps, to replay another knob
        check["fitted_thresholds"] = pair
    if probability is not None:  # to replay the reading
        check["multi_hop_probability"] = probability
    shown = short_answer(question, answer) if settings.get("answer_form") == "short" else answer  # as it would be given
    if step["abstained"]:
        check.update({"decision": "abstain", "by": "model", "score": 0.0})
    elif model is None:
        check["reason"] = "no answerability model is loaded"
    elif not evidence:
        check["reason"] = "closed book: no evidence to check the answer against"
    elif features is None:
        check["reason"] = "the generator reports no token probabilities"
    elif model.uses_sufficiency and ctx.sufficiency is None:
        check["reason"] = "the answerability model needs the sufficiency scorer, and none is loaded"
    elif model.uses_answer_probe and ctx.probe is None:
        check["reason"] = "the answerability model needs the answer probe of the generator in use, and none is loaded"
    elif model.uses_answer_probe and step.get("answer_probe") is None:
        check["reason"] = "the answer probe has no reading: the answer ended at its first token"
    elif model.uses_question_likelihood and step.get("question_logprob") is None:
        check["reason"] = ("the answerability model needs the question's likelihood after the evidence, which "
                           + ("this generator or prompt layout does not give" if settings.get("question_likelihood", True)
                              else "question_likelihood=False leaves unread"))
    else:
        if model.uses_sufficiency and ctx.sufficiency is not None:
            start = time.perf_counter()
            features[SUFFICIENCY] = ctx.sufficiency.score(question, [p["text"] for p in state.get("passages") or []])
            check["sufficiency_ms"] = (time.perf_counter() - start) * 1000.0
        start = time.perf_counter()
        for name in model.self_checks:
            reply = ctx.generator.invoke(
                check_messages(question, evidence, settings.get("layout", DEFAULT_LAYOUT),
                               step.get("raw_output", answer), name, settings.get("answer_examples", False),
                               bool(state.get("trace", {}).get("two_things"))),  # as the answer was asked
                **max_tokens_kwargs(ctx.generator, 1), pin_prefix=False)
            features[name] = yes_share(reply.response_metadata or {})
        if model.self_checks:
            check["self_check_ms"] = (time.perf_counter() - start) * 1000.0
        score = model.score(features)
        if score < threshold and settings.get("extend_before_abstaining") and can_extend(state):
            return extended(state, [*steps[:-1], {**step, "decision": "extend", "extended_by": "check", "check_score": score}])
        check.update({"score": score, "by": "score", "decision": "abstain" if score < threshold else "answer"})
        retrieved: Trace = state.get("trace") or {}  # what the steps before wrote: retrieval's place_document
        ruled = (rule_of(question, answer, shown, evidence, citations=state.get("citations") or [], settings=settings,
                         index=ctx.index, place_document=retrieved.get("place_document"), multi_hop=multi_hop)
                 or set_aside_before(question, answer, steps)) if check["decision"] == "answer" and knob > 0 else None
        if ruled is not None:
            if ruled[0] in EXTENDED_RULES and settings.get("extend_after_rule") and can_extend(state):
                return extended(state, [*steps[:-1], {**step, "decision": "extend", "extended_by": "rule",
                                                      "check_score": score, "rule": ruled[0], "rule_reason": ruled[1]}])
            check.update({"decision": "abstain", "by": ruled[0], "reason": ruled[1]})
    if features is not None:
        check["features"] = features
        check["features_version"] = FEATURES_VERSION

    update: dict[str, Any] = {"trace": {"answerability": check}}
    citations = list(state.get("citations") or [])
    given = as_written(shown, as_read(evidence)) if check["by"] != "model" else answer  # as its evidence writes it
    if check["decision"] == "abstain" and check["by"] in ("score", *RULED):
        check["withheld_answer"] = given
        answer, citations = ABSTENTION, []
        update.update(answer=answer, citations=citations)
        update["trace"].update(abstained=True, supported=False, citation_source="none")
    elif given != answer:
        update["answer"] = given
        update["trace"]["written_answer"] = answer
        answer = given
    trace = {**(state.get("trace") or {}), **update["trace"]}  # generate wrote the escalations there
    update["turns"] = [finished_turn(state["question"], question, answer, citations, trace, len(evidence))]
    return update
