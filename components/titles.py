"""The index's titles as a question names them: up to case, accents, an article, a disambiguation and a plural
(:func:`title_match`: "the Eiffel Tower" is "Eiffel Tower", "Mercury" is "Mercury (planet)"), or misspelt by a letter
(:func:`misspelt`: "Isaac Newtn"); :func:`titled_document` finds the one document of an index so titled. Read by
the description of a thing (:mod:`nodes.describe`), the check's rules (:mod:`nodes.check_answer`) and retrieval."""

from __future__ import annotations

import re
from typing import Sequence

from components.index import PassageIndex, PerRevision
from components.reranker import folded

ARTICLE = r"(?:the|a|an)"
WORD = re.compile(r"[\w.’'-]+")
"""A word of a name or a title: letters, digits, and the dots, apostrophes and hyphens inside one ("St.", "O'Brien")."""


def plain(text: str) -> str:
    """``text`` as titles are compared: accents and case aside, without a leading article or a disambiguation
    ("The Eiffel Tower (Paris)": "eiffel tower")."""
    text = re.sub(r"\s*\([^()]*\)\s*$", "", text.replace("_", " "))  # a disambiguation: "Mercury (planet)"
    text = " ".join(WORD.findall(folded(text)))
    return re.sub(rf"^{ARTICLE}\s+", "", text)


def plain_words(text: str) -> list[str]:
    """The words of ``text`` as titles are compared (:func:`title_match`, :func:`misspelt`): accents, case, a
    leading article and a disambiguation aside ("The Eiffel Tower (Paris)": "eiffel", "tower")."""
    return plain(text).split()


def singulars(words: str) -> list[str]:
    """``words`` with its last word read as a plural, each way English makes one ("volcanoes":
    "volcano", "volcanoe"; "cities": "city"); none for a word that does not end in "s"."""
    if not words.endswith("s") or words.endswith("ss"):
        return []
    stem = words[:-1]
    return [stem, *([words[:-2]] if words.endswith("es") else []), *([words[:-3] + "y"] if words.endswith("ies") else [])]


def title_match(thing: str, title: str) -> int:
    """2 when ``title`` names ``thing`` (up to case, an article, a disambiguation and a plural: "the
    Eiffel Tower" and "Eiffel Tower", "Mercury" and "Mercury (planet)", "volcanoes" and "Volcano"), 1
    when ``thing`` is one word that ends the title (a surname: "Einstein" and "Albert Einstein"), else 0."""
    asked, named = plain(thing), plain(title)
    if not asked or not named:
        return 0
    if asked == named or named in singulars(asked):
        return 2
    return 1 if " " not in asked and named.endswith(f" {asked}") else 0


def one_edit_apart(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by one letter added, dropped or changed, or two next to each other swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    short, long = sorted((a, b), key=len)
    i = next((k for k, (x, y) in enumerate(zip(short, long, strict=False)) if x != y), len(short))
    return short[i:] == long[i + 1:]


MISSPELT_WORD = 5
"""The fewest letters a word of a name of two or more words has to be read as misspelt by one ("Newtn"); a name of
one word needs :data:`MISSPELT_NAME` ("Mario" is not "Maria")."""
MISSPELT_NAME = 7


def misspelt(asked: Sequence[str], named: Sequence[str], surname: bool = True) -> bool:
    """Whether the words ``asked`` read as the title ``named`` misspelt (both :func:`plain_words`): a name of two or
    more words with each word as the title's or one edit from it (:func:`one_edit_apart`, words of
    :data:`MISSPELT_WORD` letters or more: "Isaac Newtn"), or one word of :data:`MISSPELT_NAME` letters or more one
    edit from the title or, with ``surname``, from its last word ("Einstien"). The title itself is no misspelling."""
    if not asked or not named or asked == named:
        return False
    if len(asked) == 1:
        return (len(asked[0]) >= MISSPELT_NAME and (surname or len(named) == 1)
                and one_edit_apart(asked[0], named[-1]))
    return len(asked) == len(named) and all(a == n or (len(a) >= MISSPELT_WORD and one_edit_apart(a, n))
                                            for a, n in zip(asked, named, strict=True))


_TITLES: PerRevision[dict[str, set[str]]] = PerRevision()


def plain_titles(index: PassageIndex) -> dict[str, set[str]]:
    """The ids of ``index``'s documents by their plain titles (up to case, an article and a disambiguation: "mercury"
    for "Mercury (planet)" and "Mercury (element)"), read once per revision of the index."""
    def read() -> dict[str, set[str]]:
        titles: dict[str, set[str]] = {}
        for document in index.documents():
            titles.setdefault(plain(document["title"]), set()).add(document["doc_id"])
        return titles

    return _TITLES.get(index, None, read)


def titled_document(index: PassageIndex, thing: str, spelling: bool = True) -> str | None:
    """The id of the one document of ``index`` titled as ``thing`` (as :func:`title_match` names it, a surname aside),
    else the one whose whole title it misspells by a letter, else, for one word, the one whose last word it
    misspells (:func:`misspelt`: "democrasy" is "Democracy", not also "Social democracy"); ``None`` where none is,
    or two or more are ("Mercury": the planet and the element). With ``spelling`` false, only the title named."""
    titles, asked = plain_titles(index), plain(thing)
    named = set().union(*(titles.get(t, set()) for t in (asked, *singulars(asked))))
    words = asked.split()
    for surname in (False, True):
        if not named and spelling:
            named = {doc for plain, docs in titles.items() if misspelt(words, plain.split(), surname) for doc in docs}
    return next(iter(named)) if len(named) == 1 else None
