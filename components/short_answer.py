"""The short form of an answer the model wrote as a sentence.

Small models asked for "a name, a date, a number or a short phrase" still often answer in a
sentence that restates the question: "Who introduced plague to Europe?" gets "The Black Death was
introduced to Europe by Genoese traders". The answer is in there, between the words the question
already holds. :func:`short_answer` takes it out:

1. An answer of fewer than ``min_words`` words, or one that holds no word of the question, is
   kept as written; so is the answer to a question that asks what a text says (:data:`DESCRIBING`:
   "What do the club rules say about guests?", "Summarize ..."), which asks for no name or date, and
   the answer to one that asks two things (:func:`components.requests.asks_two_things`), whose parts
   the cut would leave one of.
   An answer to a yes/no question (:data:`YES_NO_QUESTION`, not offering a choice) that opens with its verdict
   (:data:`VERDICT`: "Yes, it lasts two years from purchase.") is the verdict: "Yes".
2. Each word is a *question word* when every content word in it shares its first ``stem_chars``
   letters with a content word of the question ("introduced", "Europe"); a *function word* when it
   has no content word ("was", "by", "the"); else a *new* word.
3. The question words split the answer into runs; the run with the most new words is kept (the
   later one on a tie: a restated subject comes first), without the function words and
   punctuation at its ends: "Genoese traders".
4. When no run holds a new word the answer is kept as written.

Both values are fit on the train splits (``python -m training.short_answer``,
docs/short_answer/README.md). The text is not rewritten, only cut: every word of the short form is
a word of the answer, in the same order.

An answer given, short or not, is also written as its evidence writes it (:func:`as_written`): its
numbers (the model writes "4" where its passage says "four years") and what stands between its words
("30-75%" where the passage says "30–75%").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise
from typing import Iterable, Sequence

from components.requests import asks_two_things
from components.reranker import STOPWORDS

_WORD = re.compile(r"[a-z0-9]+")
FUNCTION_WORDS = STOPWORDS | frozenset(
    "about after also although among around because been before being between both but can could during each "
    "into like may might more most must not only other over same shall should since so some such than then there "
    "these those through under until upon very while would".split()
)
"""Words that carry no content: they never make a word a question word or a new word."""
_EDGE_PUNCTUATION = " \t\n.,;:!?"
NUMBER_WORDS = {word: str(n) for n, word in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())} | {"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60",
                                                      "seventy": "70", "eighty": "80", "ninety": "90", "hundred": "100"}
"""Numbers written in words, as figures: an answer "2" is held by "Members may bring two guests"
(:func:`nodes.generate.comparable`), and is given as "two" there (:func:`numbers_as_written`)."""
FIGURES = {figure: word for word, figure in NUMBER_WORDS.items()}
_HELD = re.compile(r"[A-Za-z0-9]+(?:[.,][0-9]+)*")
"""A word of the evidence as :func:`numbers_as_written` reads it: "6,100" and "1.5" are one word each, not "6" and
"100"."""
_TOKEN_EDGE = "\"'()[].,;:!?"
_WORDS = re.compile(r"[^\W_]+")
_QUOTES_AND_BRACKETS = frozenset("\"'()[]{}\u201c\u201d\u2018\u2019")
DESCRIBING = re.compile(r"^\W*(?:summari[sz]e|describe|explain|tell me about|give me an overview)\b|\bsays? about\b",
                        re.IGNORECASE)
"""A question that asks what a text says ("What does the handbook say about holidays?", "Summarize the
minutes"): its answer is the text's, in sentences, and a cut would keep a piece of it (session 62: three
sentences shown as two, "clubhouse" sharing "club" with the question). No SQuAD 2.0 or HotpotQA dev question
asks so, nor any of the recorded runs' (docs/results, the training labels the cut was fit on); 2 of NQ-open's
3,610 dev questions do ("describe the three phases of the normal blood clotting process"), and 2 of SQuAD
2.0's 6,247 train questions ("What did Biraben say about the plague in Europe?")."""

YES_NO_QUESTION = re.compile(
    r"^\W*(?:is|are|was|were|am|do|does|did|can|could|has|have|had|will|would|should|shall|must|may|might)"
    r"(?:n['’]t)?\b", re.IGNORECASE)
"""A question asked with an auxiliary or modal verb first ("Does the warranty last two years?"): it asks
for a yes or a no, unless it offers a choice (:data:`CHOICE`)."""
CHOICE = re.compile(r"\bor\b", re.IGNORECASE)
"""A question that offers a choice ("Did Frankie Valli sing with Hellogoodbye or The Four Seasons?") asks for
one of them, not a yes or a no."""
VERDICT = re.compile(r"^\W*(?P<verdict>yes|no)\b(?=\s*[,.;:!\-–—])", re.IGNORECASE)
"""An answer that opens with a yes or a no set off from what follows ("Yes, it lasts ...", "No. It ...")."""


@dataclass(frozen=True)
class ShortAnswer:
    """The cut's two values (see the module's description); the defaults are the train fit."""

    min_words: int = 7
    stem_chars: int = 3

    def __post_init__(self) -> None:
        if self.min_words < 1:
            raise ValueError(f"min_words must be >= 1, got {self.min_words}")
        if self.stem_chars < 1:
            raise ValueError(f"stem_chars must be >= 1, got {self.stem_chars}")

    def __call__(self, question: str, answer: str) -> str:
        words = answer.split()
        if len(words) < self.min_words or DESCRIBING.search(question) or asks_two_things(question):
            return answer
        if YES_NO_QUESTION.match(question) and not CHOICE.search(question) and (verdict := VERDICT.match(answer)):
            return verdict["verdict"]  # the rest restates the question, and ties with the verdict's run
        asked = {self._stem(w) for w in _WORD.findall(question.lower()) if w not in FUNCTION_WORDS}
        kinds = [self._kind(word, asked) for word in words]
        if "question" not in kinds:
            return answer
        runs: list[list[int]] = [[]]
        for i, kind in enumerate(kinds):
            if kind == "question":
                runs.append([])
            else:
                runs[-1].append(i)
        new_words = [sum(kinds[i] == "new" for i in run) for run in runs]
        most = max(new_words)
        if most == 0:
            return answer
        run = runs[len(runs) - 1 - new_words[::-1].index(most)]  # the last of the best
        while kinds[run[0]] == "function":
            run = run[1:]
        while kinds[run[-1]] == "function":
            run = run[:-1]
        return " ".join(words[i] for i in run).strip(_EDGE_PUNCTUATION) or answer

    def _stem(self, word: str) -> str:
        return word[: self.stem_chars]

    def _kind(self, word: str, asked: set[str]) -> str:
        content = [w for w in _WORD.findall(word.lower()) if w not in FUNCTION_WORDS]
        if not content:
            return "function"
        return "question" if all(self._stem(w) in asked for w in content) else "new"


short_answer = ShortAnswer()
"""The fitted cut: ``short_answer(question, answer)``."""


def numbers_as_written(answer: str, texts: Iterable[str]) -> str:
    """``answer`` with each number of :data:`NUMBER_WORDS` written as ``texts`` (its evidence) write it: in words
    where the model wrote figures that the texts hold only in words ("4" given as "four" from "a term of four years"),
    in figures the other way round; every other word as written. A number must be a word of its own: "6,100", "$1"
    and "9%" are left alone. The benchmarks' references are spans of the passages, and users read the passage's
    word: on the 3,750 unseen SQuAD 2.0 train questions of sessions 71–82 it changed 20 answers given, 17 to
    answerable questions, none for the worse (answerable F1 +0.71; ``docs/preregistered/s84-numbers.md``)."""
    held = {word.lower() for text in texts for word in _HELD.findall(text)}
    written = []
    for token in answer.split(" "):
        number = token.strip(_TOKEN_EDGE)
        word = number.lower()
        if word in FIGURES and word not in held and FIGURES[word] in held:
            token = token.replace(number, FIGURES[word], 1)
        elif word in NUMBER_WORDS and word not in held and NUMBER_WORDS[word] in held:
            token = token.replace(number, NUMBER_WORDS[word], 1)
        written.append(token)
    return " ".join(written)


_DASHES = str.maketrans(dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-") | {"\u2019": "'"})
_SOFT = frozenset(" \t\n\u00a0-.,:")
"""What may stand between two words without saying anything of its own: spaces, a dash or a hyphen, a full stop, a
comma, a colon ("Long-lasting" and "Long lasting", "labor, capital, and land" and "labor, capital and land", "2:30pm"
and "2.30pm")."""


def _alike(ours: str, theirs: str) -> bool:
    """Whether two separators say the same: the same up to the kind of dash or apostrophe and spaces ("2p - 1" and
    "2p − 1", "p < 2n" and "p<2n"), or both only :data:`_SOFT` characters. "2p - 1" and "2p + 1" are not."""
    canon = [s.translate(_DASHES).replace(" ", "").replace("\u00a0", "") for s in (ours, theirs)]
    return canon[0] == canon[1] or set((ours + theirs).translate(_DASHES)) <= _SOFT


def separators_as_written(answer: str, texts: Iterable[str]) -> str:
    """``answer`` with what stands between its words taken from the first of ``texts`` that holds them in that order,
    next to each other (letter case aside): "30-75%" given as "30–75%" from "a mortality rate of 30–75%", "1500°C" as
    "1500 °C", "Pharm.D." as "Pharm. D."; its words, and what comes before the first and after the last, stay its
    own. A place whose separators say something else (:func:`_alike`: "2p + 1" for "2p - 1") is passed over for the
    next. Left as written where no text holds its words so, and where the text puts a quote or a bracket between them
    ('"design build" contract')."""
    found = list(_WORDS.finditer(answer))
    words = [word.group().casefold() for word in found]
    if not words:
        return answer
    for text in texts:
        held = list(_WORDS.finditer(text))
        folded = [word.group().casefold() for word in held]
        for i in range(len(folded) - len(words) + 1):
            if folded[i:i + len(words)] != words:
                continue
            separators = [text[a.end():b.start()] for a, b in pairwise(held[i:i + len(words)])]
            if _QUOTES_AND_BRACKETS.intersection("".join(separators)):
                return answer
            ours = [answer[a.end():b.start()] for a, b in pairwise(found)]
            if not all(map(_alike, ours, separators)):
                continue  # another sign between them ("2p + 1" for "2p - 1"): another place may say it
            written = [answer[:found[0].start()], found[0].group()]
            for separator, word in zip(separators, found[1:], strict=True):
                written += [separator, word.group()]
            return "".join([*written, answer[found[-1].end():]])
    return answer


def as_written(answer: str, texts: Sequence[str]) -> str:
    """``answer`` as its evidence (``texts``) writes it, as ``check_answer`` gives it: its numbers
    (:func:`numbers_as_written`), then what stands between its words (:func:`separators_as_written`)."""
    return separators_as_written(numbers_as_written(answer, texts), texts)
