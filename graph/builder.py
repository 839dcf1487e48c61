"""Wire the nodes into the adaptive RAG state machine.

    START -> start_turn --(earlier turns and the question refers back)--> condense_question -> lookup_cache
    start_turn --(a first question on a person it does not name: "When was he born?")--> ask_who -> finish_turn
    start_turn --(a greeting, thanks or a farewell)--> small_talk -> finish_turn
    start_turn --("Tell me more" after a description)--> describe_more -> finish_turn
    start_turn --("Tell me more" after a comparison)--> compare_more -> finish_turn
    start_turn --(otherwise)--> lookup_cache --(answered from the query cache)--> finish_turn
    lookup_cache --(otherwise)--> classify_tier --(k > 0, documents given, or a summary asked for)--> retrieve
    retrieve --(a request to summarize a document: "Summarize the kettle manual")--> summarize
    summarize --(the document it names, summarized)--> finish_turn; else on to grade_confidence
    retrieve --(otherwise)--> grade_confidence
    classify_tier --(k = 0: closed book)--> generate
    grade_confidence --(low confidence, tier allows, not yet corrected)--> retrieve
    grade_confidence --(budget reranks)--> rerank --(a question that only asks what a thing is)--> describe
    describe --(the first passage of the document titled as the thing)--> finish_turn; else as after rerank
    rerank --(a question that asks a named person's age: "How old is Bill Gates?")--> tell_age
    tell_age --(the years the description of the document titled as the person gives)--> finish_turn; else on
    rerank --(a request that only asks to compare two things: "Compare cats and dogs")--> compare
    compare --(the first passages of the documents titled as the two)--> finish_turn; else on
    grade_confidence / rerank --(budget compresses)--> compress -> generate
    grade_confidence / rerank --(otherwise: baseline)--> generate -> grade_answer
    grade_answer --(low confidence, a tier left on the cascade's ladder)--> compress (extend in place)
    grade_answer --(otherwise: accepted)--> check_answer (answer, or abstain below the threshold) -> finish_turn
    check_answer --(below the threshold, extend_before_abstaining, a tier left)--> compress (extend in place)
    finish_turn (energy; the answer into the query cache) -> END
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from pipeline.context import RAGContext
from graph.routing import (after_cache, after_check, after_classify, after_comparing, after_description, after_grade,
                           after_grade_answer, after_rerank, after_retrieve, after_start, after_summary,
                           after_telling_age)
from pipeline.state import InputState, OutputState, State
from nodes import (
    ask_who,
    check_answer,
    classify_tier,
    compare,
    compare_more,
    compress,
    condense_question,
    describe,
    describe_more,
    finish_turn,
    generate,
    grade_answer,
    grade_confidence,
    lookup_cache,
    rerank,
    retrieve,
    small_talk,
    start_turn,
    summarize,
    tell_age,
)


def build_graph() -> StateGraph[State, RAGContext, InputState, OutputState]:
    builder = StateGraph(State, context_schema=RAGContext, input_schema=InputState, output_schema=OutputState)
    builder.add_node("start_turn", start_turn)
    builder.add_node("condense_question", condense_question)
    builder.add_node("ask_who", ask_who)
    builder.add_node("small_talk", small_talk)
    builder.add_node("lookup_cache", lookup_cache)
    builder.add_node("classify_tier", classify_tier)
    builder.add_node("retrieve", retrieve)
    builder.add_node("grade_confidence", grade_confidence)
    builder.add_node("rerank", rerank)
    builder.add_node("describe", describe)
    builder.add_node("describe_more", describe_more)
    builder.add_node("tell_age", tell_age)
    builder.add_node("compare", compare)
    builder.add_node("compare_more", compare_more)
    builder.add_node("summarize", summarize)
    builder.add_node("compress", compress)
    builder.add_node("generate", generate)
    builder.add_node("grade_answer", grade_answer)
    builder.add_node("check_answer", check_answer)
    builder.add_node("finish_turn", finish_turn)

    builder.add_edge(START, "start_turn")
    builder.add_conditional_edges("start_turn", after_start,
                                  ["small_talk", "describe_more", "compare_more", "condense_question", "ask_who",
                                   "lookup_cache"])
    builder.add_edge("describe_more", "finish_turn")
    builder.add_edge("compare_more", "finish_turn")
    builder.add_edge("ask_who", "finish_turn")
    builder.add_edge("small_talk", "finish_turn")
    builder.add_edge("condense_question", "lookup_cache")
    builder.add_conditional_edges("lookup_cache", after_cache, ["finish_turn", "classify_tier"])
    builder.add_conditional_edges("classify_tier", after_classify, ["retrieve", "generate"])
    builder.add_conditional_edges("retrieve", after_retrieve, ["summarize", "grade_confidence"])
    builder.add_conditional_edges("summarize", after_summary, ["finish_turn", "grade_confidence"])
    builder.add_conditional_edges("grade_confidence", after_grade, ["retrieve", "rerank", "compress", "generate"])
    builder.add_conditional_edges("rerank", after_rerank, ["describe", "tell_age", "compare", "compress", "generate"])
    builder.add_conditional_edges("compare", after_comparing, ["finish_turn", "compress", "generate"])
    builder.add_conditional_edges("tell_age", after_telling_age, ["finish_turn", "compress", "generate"])
    builder.add_conditional_edges("describe", after_description, ["finish_turn", "compress", "generate"])
    builder.add_edge("compress", "generate")
    builder.add_edge("generate", "grade_answer")
    builder.add_conditional_edges("grade_answer", after_grade_answer, ["compress", "check_answer"])
    builder.add_conditional_edges("check_answer", after_check, ["compress", "finish_turn"])
    builder.add_edge("finish_turn", END)
    return builder


builder = build_graph()
graph = builder.compile(name="adaptive-rag")
