"""compare: answer "Compare cats and dogs" with the first passage of each one's article.

Asked to compare two things, the 1.5B model gave a fragment of one side ("Compare cats and dogs":
"solitary and crepuscular hunters", withheld; "What is the difference between a virus and a bacterium?":
"replicates in cells", given) or abstained: five of eight such requests abstained and three got a fragment
(session 66, ``runs/preregistered-s66.md``). A request that only asks to compare or tell apart two things
(:func:`compared_subjects`: "Compare X and Y", "X vs Y", "What is the difference between X and Y?", "How
does X differ from Y?"), each a name as :func:`nodes.describe.thing_named` reads one, is answered, when a
document is titled as each (:func:`components.titles.title_match`), by the first passage of each, as written
and cited: the definitions side by side, which the reader compares. The two are looked for among the
reranked passages, then among the passages closest to each name alone (a request retrieves mostly one of
them). No model call. Where either is not found, the request goes on to the model as any other question.
Under the setting ``describe``, as a description is.

"Tell me more" after a comparison (:func:`nodes.describe.asks_for_more`) goes to :func:`compare_more`, which
reads on in both documents, a passage of each at a time, and then says there is no more.
"""

from __future__ import annotations

import re
from typing import Any

from langgraph.runtime import Runtime

from nodes.base import context_of, direct_reply, timed
from nodes.condense_question import topical
from nodes.describe import given_as_written, read_on, thing_named, titled_first_passage
from nodes.retrieve import passage_hit, reading_day
from pipeline.context import RAGContext
from pipeline.state import PassageHit, State

_POLITE = r"(?:please\s+)?(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
_END = r"[\s?.!]*$"
COMPARE = (
    re.compile(rf"^\W*{_POLITE}(?:compare|contrast)\s+(?P<a>[^?]+?)\s+(?:and|with|to|versus|vs\.?)\s+(?P<b>[^?]+?){_END}",
               re.IGNORECASE),
    re.compile(rf"^\W*(?P<a>[^?]+?)\s+(?:vs\.?|versus)\s+(?P<b>[^?]+?){_END}", re.IGNORECASE),
    re.compile(rf"^\W*what(?:['’]s|\s+is|\s+are)\s+the\s+(?:main\s+|key\s+)?differences?\s+between\s+(?P<a>[^?]+?)"
               rf"\s+and\s+(?P<b>[^?]+?){_END}", re.IGNORECASE),
    re.compile(rf"^\W*how\s+(?:does|do|is|are)\s+(?P<a>[^?]+?)\s+differ(?:ent)?\s+from\s+(?P<b>[^?]+?){_END}",
               re.IGNORECASE),
    re.compile(rf"^\W*how\s+are\s+(?P<a>[^?]+?)\s+and\s+(?P<b>[^?]+?)\s+different{_END}", re.IGNORECASE),
)
"""How a request to compare two things reads: "Compare X and Y" (or with, to, versus), "Contrast X and Y",
"X vs Y", "What is the difference between X and Y?", "How does X differ from Y?", "How are X and Y different?"."""
MOST_WORDS = 5
"""The most words each thing compared may have after an article."""
NEAREST = 10
"""Passages searched for a document titled as a thing the reranked passages do not name."""


def compared_subjects(question: str) -> tuple[str, str] | None:
    """The two things ``question`` only asks to compare ("Compare cats and dogs" gives ("cats", "dogs")), or
    ``None``: a request that compares a fact of them ("Compare the population of France and Germany"), a
    question about a match ("Who won the McGregor vs Mayweather fight?"), or the same thing twice."""
    for pattern in COMPARE:
        found = pattern.match(question)
        if found is None:
            continue
        things = thing_named(found["a"], MOST_WORDS), thing_named(found["b"], MOST_WORDS)
        if things[0] is None or things[1] is None or things[0].casefold() == things[1].casefold():
            return None
        return things[0], things[1]
    return None


def nearest_to(ctx: RAGContext, thing: str) -> list[PassageHit]:
    """The :data:`NEAREST` passages closest to ``thing`` alone, as a title search reads them."""
    return [passage_hit(h.passage, float(h.score)) for h in ctx.index.search(ctx.embedder.embed_query(thing), NEAREST)]


@timed("compare")
def compare(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    question = state.get("standalone_question") or state["question"]
    things = compared_subjects(question)
    if things is None:
        return {"compared": False}
    found = []
    for thing in things:
        first = titled_first_passage(ctx, state, thing) or titled_first_passage(ctx, state, thing, nearest_to(ctx, thing))
        if first is None:
            return {"compared": False}
        found.append(first)
    if found[0][0].id == found[1][0].id:
        return {"compared": False}
    today = reading_day(state["settings"])
    hits = [passage_hit(first, score, today) for first, score, _ in found]
    ids = [first.id for first, _, _ in found]
    return {"compared": True, **given_as_written(
        ctx, state, question, hits, state.get("passages") or [],
        "a comparison: the first passage of the document titled as each thing, given as it is written",
        record=("compared", {"things": list(things), "titles": [first.title for first, _, _ in found],
                             "passage_ids": ids, "shown": ids}),
        answer=side_by_side(hits), k=state["settings"]["budget"]["k"], corrected=state.get("corrections", 0) > 0)}


def side_by_side(hits: list[PassageHit]) -> str:
    """Passages of the documents compared, each after its document's title, a paragraph each."""
    return "\n\n".join(f"{hit['title']}: {hit['text']}" for hit in hits)


@timed("compare_more")
def compare_more(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    """"Tell me more" after a comparison: the next passage of each of the two documents it gave the first
    passages of, as written and cited, and when both are all given, that the knowledge base holds no more
    on them. No retrieval and no model call; each passage's score is its cosine with "Tell me more about
    <title> and <title>"."""
    ctx = context_of(runtime)
    compared = topical(state.get("turns") or [])[-1]["compared"]
    shown = list(compared.get("shown") or compared["passage_ids"])
    titles = " and ".join(f"“{title}”" for title in compared["titles"])
    rest = []
    for first in compared["passage_ids"]:
        if first in ctx.index:
            document = ctx.index.document_passages(ctx.index.document_of(ctx.index.passage(first)))
            rest += [i for i in document if i not in set(shown)][:1]
    if not rest:
        return direct_reply(ctx, state, f"That is all the knowledge base holds on {titles}.",
                            f"asked for more of {titles}, whose every passage has been given", reply="no more")
    standalone = "Tell me more about " + " and ".join(compared["titles"])
    hits = read_on(ctx, state, rest, standalone)
    rewrite = {"original": state["question"], "standalone": standalone, "method": "more", "history_turns": 1}
    return {"standalone_question": standalone, **given_as_written(
        ctx, state, standalone, hits, hits, f"more of {titles}: their next passages, given as they are written",
        record=("compared", {**compared, "shown": [*shown, *rest], "more": True}), answer=side_by_side(hits),
        rewrite=rewrite)}
