"""lookup-cache: embed the question once, and answer it from the query cache when it can.

The (standalone) question is embedded here; classification, the policies' probes and retrieval
reuse the vector. With a query cache configured (``RAGContext.query_cache``), a question asked
before under the same generator, configuration, knowledge-base revision and reranker, or a
near-paraphrase of one (:mod:`components.query_cache`; a follow-up joined to the question before it
only by an exact match), gets the cached answer, its citations and
its trace, with ``trace.cache`` saying which match served it; the edge then skips straight to
``finish_turn``.
Questions that come with their own documents are never cached; one asked ``fresh`` (a retry) is
answered afresh, and its answer cached in place of the one before. A question that asks to describe a
thing is served only the answer to one that asked to describe the same thing (:func:`describes_alike`).
"""

from __future__ import annotations

from datetime import date
from typing import Any, cast

from langgraph.runtime import Runtime

from components.query_cache import code_digest, scope_key
from nodes.base import context_of, finished_turn, timed
from components.titles import title_match
from nodes.describe import described_subject
from nodes.retrieve import files_followed, user_files
from pipeline.configuration import PipelineConfig
from pipeline.context import RAGContext
from pipeline.state import Citation, State

NOT_CACHED = ("question", "timings_ms", "energy", "cache", "rewrite")
"""Trace keys that describe one run, not the answer: never stored, never served (``rewrite``: how that
turn's question was read, which a later turn asking the same did not need)."""


def answer_scope(ctx: RAGContext, pipeline: PipelineConfig) -> str:
    """What a cached answer depends on: the generator and the weights it loaded (another file at the
    same path, or another of a server's models, answers differently), the effective configuration,
    the knowledge base's revision, the reranker, which chooses the evidence from it, and every fitted
    model that decides how much evidence it reads and whether it is given (the tier router, the
    retrieve-or-not gate, the router that sees the retrieval, the question-type reading, the check,
    the check without the probe, the Wikipedia summaries' check, the probe, the sufficiency scorer): a
    refit one makes answers of its own. And the code that makes an answer (:func:`components.query_cache.code_digest`:
    another rule of the check, another prompt); while living persons' ages are spelled (``living_ages``), the year
    they are spelled for."""
    fitted = [None if model is None else model.fingerprint
              for model in (ctx.router, ctx.retrieval_gate, ctx.probe_router, ctx.question_type, ctx.answerability,
                            ctx.answerability_fallback, ctx.answerability_wikipedia, ctx.answer_probe, ctx.sufficiency)]
    year = [date.today().year] if pipeline.living_ages else []
    reranker = [ctx.reranker.name, *([ctx.reranker.fingerprint] if hasattr(ctx.reranker, "fingerprint") else [])]
    return scope_key(ctx.model_name, ctx.generator.fingerprint, pipeline, ctx.index.revision, *reranker, *fitted,
                     code_digest(), *year)


def follow_up_scope(ctx: RAGContext, pipeline: PipelineConfig, state: State) -> tuple[str, ...]:
    """The files a follow-up may stay in (:func:`nodes.retrieve.files_followed`), which its answer depends
    on as much as on the question: "Who is the manager?" after a question on the handbook is cached apart
    from the same question asked first."""
    if not pipeline.named_documents or pipeline.follow_up_file_score is None:
        return ()
    question = state.get("standalone_question") or state["question"]
    return tuple(files_followed(question, state.get("turns") or [], user_files(ctx.index)))


def describes_alike(question: str, cached: str) -> bool:
    """Whether ``question`` and a ``cached`` one either both ask to describe the same thing or neither
    asks to describe anything (:func:`nodes.describe.described_subject`). Near in embedding, "Who was
    Marie Curie's husband?" and "Who was Marie Curie?" ask the same kind of question with no word
    swapped, yet one is answered by her article's first passage and the other by a name."""
    asked, held = described_subject(question), described_subject(cached)
    if asked is None or held is None:
        return asked is held
    return title_match(asked, held) == 2


@timed("lookup_cache")
def lookup_cache(state: State, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    ctx = context_of(runtime)
    question = state.get("standalone_question") or state["question"]
    embedding = ctx.embedder.embed_query(question)
    update: dict[str, Any] = {"query_embedding": embedding.tolist(), "cache_scope": None, "cached": False}
    if ctx.query_cache is None or state.get("documents"):
        return update
    pipeline = ctx.pipeline.with_overrides(state.get("overrides"))
    scope = answer_scope(ctx, pipeline)
    if followed := follow_up_scope(ctx, pipeline, state):
        scope = scope_key(scope, "follows", *followed)
    update["cache_scope"] = scope
    if state.get("fresh"):  # asked to answer afresh: the answer is stored, not looked up
        return update
    # A follow-up joined to the question before it (its rewrite failed) holds that question word for
    # word, so it is near that question's answer by construction: exact matches only.
    joined = (state.get("trace") or {}).get("rewrite", {}).get("method") == "joined"
    hit = ctx.query_cache.lookup(question, embedding, scope, semantic=not joined)
    if hit is None or not describes_alike(question, hit.question):
        return update
    trace = {key: value for key, value in hit.trace.items() if key not in NOT_CACHED}
    # what this run cost: nothing was evaluated or generated (the steps still tell how the answer was made)
    trace.update(input_tokens=0, prompt_tokens_evaluated=0, output_tokens=0)
    trace["cache"] = {"hit": hit.match, "similarity": hit.similarity, "cached_question": hit.question,
                      "age_s": hit.age_s}
    return {
        **update,
        "cached": True,
        "answer": hit.answer,
        "citations": hit.citations,
        "overrides": {},
        "documents": [],
        "turns": [finished_turn(state["question"], question, hit.answer, cast(list[Citation], hit.citations), trace)],
        "trace": trace,
    }
