"""Graph state: a narrow input, a public output, and the full state the nodes share.

Every value is plain JSON data (strings, numbers, lists, dicts) so a checkpointer can store it.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Mapping

from typing_extensions import NotRequired, TypedDict  # pydantic needs these on Python 3.11

NEW_TRACE = "new_trace"
"""A trace update holding ``{NEW_TRACE: True}`` starts a fresh trace: the first node of each
question sends it, so with a checkpointer one question's trace never leaks into the next."""


def merge_trace(current: Mapping[str, Any] | None, update: Mapping[str, Any] | None) -> dict[str, Any]:
    """Reducer for ``trace``: keys are overwritten, except ``timings_ms`` whose per-node times add up
    (a node that runs twice, like retrieve with correction, reports its total)."""
    update = dict(update or {})
    merged = {} if update.pop(NEW_TRACE, False) else dict(current or {})
    for key, value in update.items():
        if key == "timings_ms":
            timings = dict(merged.get("timings_ms", {}))
            for node, ms in value.items():
                timings[node] = timings.get(node, 0.0) + ms
            merged["timings_ms"] = timings
        else:
            merged[key] = value
    return merged


class Overrides(TypedDict, total=False):
    """Per-question changes to the configured pipeline (validated by ``classify_tier``)."""

    policy: str
    tier: str
    tau: float
    k_extra: int
    max_corrections: int
    accept_threshold: float
    stop_early: bool
    max_escalations: int
    abstain_threshold: float | None
    gate_threshold: float | None
    lazy_threshold: float
    router_threshold: float | None


class InputDocument(TypedDict):
    """A text supplied with the question; the graph then answers from these instead of the index.
    It is cut into passages as ingest cuts a file, unless ``whole`` (then it is one passage, read
    as given: the benchmarks' oracle hands the gold paragraphs so)."""

    title: str
    text: str
    whole: NotRequired[bool]


class InputState(TypedDict):
    """``overrides`` and ``documents`` hold for one question: generate clears them, so with a
    checkpointer they do not carry over to the next question of the thread. ``fresh``: answer
    afresh, not from the query cache (a retry); the fresh answer is cached in its place, and
    finish-turn clears the flag."""

    question: str
    overrides: NotRequired[Overrides]
    documents: NotRequired[list[InputDocument]]
    fresh: NotRequired[bool]


class PassageHit(TypedDict):
    """A retrieved passage with its scores; ``rerank_score`` is set by the rerank node."""

    id: str
    title: str
    text: str
    metadata: dict[str, Any]
    score: float
    rerank_score: NotRequired[float]


class EvidenceItem(TypedDict):
    """A piece of evidence in the prompt; ``n`` is its citation number [n]."""

    n: int
    passage_id: str
    title: str
    text: str


class Citation(TypedDict):
    n: int
    passage_id: str
    title: str
    text: str
    score: float
    metadata: dict[str, Any]


class BudgetData(TypedDict):
    """A tier's budget as plain data (:meth:`pipeline.configuration.Budget.as_dict`)."""

    name: str
    k: int  # passages retrieved; 0: closed book
    context_tokens: int | None  # evidence budget in the generator's tokens; None: in characters, if any
    fill: str  # relevance (best sentences first) or rank (whole passages in ranked order)
    context_chars: int | None  # evidence budget in characters; None (and no tokens): uncompressed
    max_new_tokens: int
    rerank: bool
    correct: bool  # may a low-confidence retrieval trigger the corrective step
    reasoning: NotRequired[bool]  # closed book: think step by step, then answer
    candidates: NotRequired[int | None]  # passages retrieved for the reranker to keep k of; None: k


class Settings(TypedDict):
    """The effective settings of one question, fixed by classify_tier from the configuration and the
    question's overrides; every later node and edge reads them from here."""

    policy: str  # cascade, adaptive, fixed or baseline
    tier: str  # the current budget's name: easy, medium, hard or baseline
    budget: BudgetData  # the current budget (an escalation moves it up the ladder)
    ladder: list[BudgetData]  # the budgets the cascade may still escalate to, cheapest first
    retrieve_k: int  # passages retrieved: the most candidates or k of the budget and its ladder
    keep_k: NotRequired[int]  # passages the reranker keeps of them: the largest k of the budget and its ladder
    layout: str  # the answer prompt's layout
    confidence_signal: str
    accept_threshold: float
    stop_early: bool  # stop an answer that will be extended as soon as its confidence says so
    citation_markers: bool  # the model writes its [n] markers; False: the answer ends where they begin
    answer_examples: bool  # the worked examples of prompts/answer_examples.json come before the question
    lookup_tokens: NotRequired[int]  # prompt-lookup decoding: drafted tokens verified with each generated one
    question_likelihood: NotRequired[bool]  # read the question's token log-probabilities after the evidence
    answer_form: NotRequired[str]  # "short": an answer that restates the question is cut to its new words
    describe: NotRequired[bool]  # a question that asks what a thing is gets the first passage of its document
    named_documents: NotRequired[bool]  # a question that names one of the user's files searches that file only
    follow_up_file_score: NotRequired[float | None]  # a follow-up stays in the files searched before from this score
    file_first_score: NotRequired[float | None]  # a question that names no file searches the files from this score
    summarize: NotRequired[bool]  # a request to summarize a document it names is answered with a summary of it
    summarize_tokens: NotRequired[int]  # the most tokens of the document a summary reads
    place_first: NotRequired[bool]  # a place's population is searched for in the place's own document
    living_ages: NotRequired[bool]  # a living person's age today is spelled beside their description's birth year
    two_things: NotRequired[bool]  # a question that asks two things is told to answer each
    evidence_order: NotRequired[str]  # the reranked passages' order: "score" or "title_diverse"
    tau: float  # cosine below which retrieval counts as low-confidence
    k_extra: int  # passages a corrective retrieval adds
    max_corrections: int
    abstain_threshold: float | None  # abstain when the answerability score is below this; None: the model's own
    extend_before_abstaining: NotRequired[bool]  # below the threshold, extend the evidence while the ladder allows
    qualified_superlatives: NotRequired[bool]  # the rank rule: "the largest by population" keeps no "largest by area"
    extend_after_rule: NotRequired[bool]  # an answer a rule says is another's: extend while the ladder allows
    multi_hop: NotRequired[bool | None]  # the question-type model's reading of the question; None: no model loaded
    multi_hop_probability: NotRequired[float | None]  # its probability of multi-hop (the check reads it again)



class GateTrace(TypedDict):
    """The retrieve-or-not policy's decision (:mod:`components.retrieval_gate`)."""

    decision: str  # "closed-book" or "retrieve"
    closed_book_probability: float  # the gate's probability that the closed-book answer is enough
    threshold: float  # closed book at or above this
    probe: dict[str, float]  # the retrieval-probe features it read
    inference_ms: float  # the probe search and the gate


class SelfRouteTrace(TypedDict):
    """The self-route policy's choice: the generator's own, from a one-token routing prompt."""

    choice: str  # straight, reasoning or retrieval (pipeline.configuration.SELF_ROUTES)
    probabilities: dict[str, float]  # of each choice's letter at the first generated token
    raw_output: str
    prompt_tokens: int | None
    prompt_tokens_evaluated: int | None
    output_tokens: int | None
    route_ms: float


class EnergyTrace(TypedDict):
    """What answering the question cost in energy (:mod:`components.energy`)."""

    joules: float
    method: str  # "measured" (RAPL counters) or "estimated" (CPU time x a power figure)
    source: str  # which counters, or which power figure
    cpu_s: float  # this process's CPU seconds, every thread
    wall_s: float


class CacheTrace(TypedDict):
    """A question answered from the query cache (:mod:`components.query_cache`)."""

    hit: str  # "exact" (the same normalised question) or "semantic" (a near-paraphrase)
    similarity: float  # cosine of the two questions' embeddings (1 for an exact hit)
    cached_question: str  # the question the answer was first given to
    age_s: float  # how long ago


class RouterTrace(TypedDict):
    tier: str  # the router's choice
    confidence: float  # its probability
    probabilities: dict[str, float]  # per tier, summing to 1
    inference_ms: float


class ProbeRouterTrace(TypedDict):
    """The probe-router policy's choice (:mod:`components.probe_router`)."""

    tier: str  # the rung it chose: closed-book or the cascade's starting tier
    enough_probability: dict[str, float]  # per rung but the last: P(this rung or a cheaper one is enough)
    threshold: float  # the cheapest rung at or above this is chosen, else the last
    probe: dict[str, float]  # the retrieval-probe features it read
    inference_ms: float  # the probe search and the router


class RewriteTrace(TypedDict):
    original: str  # the follow-up as asked
    standalone: str  # what was retrieved and answered for
    # "rewritten" by the model, "resolved" (a passive "it" after "who made X?" read as X, or a failed rewrite's one
    # "it" read as the one thing a how/when/where/why or yes-or-no question before asked about), "named" (the name
    # given when the last answer asked whom "he" meant), "more" ("Tell me more" after a description), "substituted"
    # (a failed rewrite of "and X?" read as the previous question about X), "summary" ("Summarize it" asked of
    # the documents the last answer read: nodes.condense_question.summary_follow_up), or "joined" to the previous
    # question when the rewrite failed otherwise
    method: str
    history_turns: int


class DescribedTrace(TypedDict):
    thing: str  # what the question asked to be described ("Napoleon")
    title: str  # the document whose first passage is the answer
    passage_id: str  # the answer's first passage
    # "title": the title names the thing; "surname": the thing is one word that ends it; "more": read on ("Tell me
    # more" after a description or an answer cited to the document)
    match: str
    shown: NotRequired[list[str]]  # the document's passages given so far ("Tell me more" reads on after them)


class AgedTrace(TypedDict):
    thing: str  # the person whose age the question asked ("Bill Gates")
    title: str  # the document whose first passage's description gave the years
    passage_id: str  # that passage, the answer's citation
    on: str  # the day the age was told for (ISO date)


class ComparedTrace(TypedDict):
    things: list[str]  # the two things the request asked to compare ("cats", "dogs")
    titles: list[str]  # the documents whose first passages are the answer, in that order
    passage_ids: list[str]  # those passages, the answer's citations
    shown: NotRequired[list[str]]  # the documents' passages given so far ("Tell me more" reads on after them)
    more: NotRequired[bool]  # the answer is their next passages, asked for with "Tell me more"


class CorrectionTrace(TypedDict):
    fired: bool
    rounds: int
    added: int  # passages the corrective retrieval added


class CompressionTrace(TypedDict):
    budget_chars: int | None
    budget_tokens: int | None
    context_tokens: NotRequired[int]  # the evidence in the generator's tokens (token budgets only)
    context_chars: int  # the evidence as formatted for the prompt
    input_chars: int  # the passages before compression, formatted the same way
    kept_passages: int
    truncated: bool  # not even one sentence fitted: the first passage was cut


class Confidence(TypedDict):
    """Every confidence signal of one answer (``pipeline.configuration.CONFIDENCE_SIGNALS``); higher
    is more confident. ``None`` when the generator reports no token probabilities."""

    min_prob: float | None
    first_prob: float | None
    first_margin: float | None
    mean_logprob: float | None
    neg_mean_entropy: float | None


class QuestionLikelihood(TypedDict):
    """The log-probabilities the generator gave the question's tokens, read after the evidence while
    the answer prompt was evaluated: a question the evidence makes unlikely (a swapped name, a
    negation) often has no answer there."""

    mean: float
    min: float
    tokens: int
    values: NotRequired[list[float]]  # each token's, in order (the question's text as " " + question tokenizes)


class Step(TypedDict):
    """One answer of the cascade: the tier's budget it was given, what it cost, what it said."""

    tier: str
    evidence_items: int
    prompt_tokens: int | None  # the whole prompt
    prompt_tokens_evaluated: int | None  # what the model actually evaluated (the rest was cached)
    output_tokens: int | None
    answer: str
    abstained: bool
    confidence: Confidence
    abstain_prob: NotRequired[float | None]  # at the first token, the probability of starting the abstention
    stopped_early: NotRequired[bool]  # generation stopped once the confidence was certain to fall short
    decode_passes: NotRequired[int | None]  # forward passes spent generating (fewer than tokens with prompt lookup)
    answer_probe: NotRequired[float | None]  # the answer probe's P(right), when the context has a probe of this generator
    question_logprob: NotRequired[QuestionLikelihood]  # how expected the question was after the evidence (llama.cpp)
    raw_output: NotRequired[str]  # the model's text, citation markers and all
    generate_ms: float
    decision: NotRequired[str]  # accept, extend; set by grade_answer (and check_answer, when it extends)
    # "check": the answer was confident, but the answerability check would abstain; "rule": a rule says the answer
    # is another's (nodes.check_answer.EXTENDED_RULES); absent: the answer was unsure (grade_answer)
    extended_by: NotRequired[str]
    check_score: NotRequired[float]  # the answerability score that sent it up the ladder
    rule: NotRequired[str]  # extended_by "rule": the rule's ``by`` ("rank", ...)
    rule_reason: NotRequired[str]  # and its reason, as the check gives it ("ranked fourth-largest by ...")
    fitted: NotRequired[dict[str, int]]  # the evidence was cut to the model's context: items dropped, item cut (0 or 1)


class AnswerabilityTrace(TypedDict):
    """The check after the final answer: answer it, or say the knowledge base does not hold it."""

    decision: str  # "answer" or "abstain"
    # "model" (the model itself abstained), "score" (the answerability score decided), "unchecked", or
    # "question" (answered without reading: it names no one its "he" could mean, and the answer asks who,
    # nodes.ask_who; or it is small talk, answered in kind, nodes.small_talk), or "age" (a named person's age
    # no passage states, withheld whatever its score: nodes.check_answer.age_unstated), or "kind" (a number to a
    # question that asks where or who, withheld whatever its score: nodes.check_answer.number_asked_of), or "subject" (an
    # answer to a named person's life that only passages on someone else hold: nodes.check_answer.subject_elsewhere), or
    # "rank" (an answer its passages rank second or lower, asked for the first: nodes.check_answer.ranked_below), or
    # "capital" (a capital the passages call another place's, or not the capital asked, asked the capital of a place:
    # nodes.check_answer.capital_elsewhere), or "population" (a population only other places' passages hold, asked of
    # a place the index has a document on: nodes.check_answer.population_elsewhere), or "year" (an answer held only by
    # passages that name other years than the one a single-hop question names: nodes.check_answer.year_elsewhere), or
    # "opposite" (an answer held only by passages that say the opposite of a word of a single-hop question, "largest"
    # asked "smallest": nodes.check_answer.opposite_elsewhere), or "negation" (an answer to a single-hop question that
    # says "not" or "never", held only by passages that deny nothing: nodes.check_answer.negation_unsaid), or
    # "compared" (a yes or no to "Is A longer than B?" that the passages' superlative contradicts:
    # nodes.check_answer.superlative_elsewhere), or "past" (someone dead
    # or out of office, asked who holds an office now: nodes.check_answer.out_of_office), or "echo" (only words of the
    # prompt's instructions that neither the evidence nor the question has: nodes.check_answer.echoes_instructions)
    by: str
    score: float | None  # the probability that the answer is right; None when unchecked
    threshold: float  # abstain below this score (the knob, carried through a fitted pair: multi-hop, Wikipedia)
    multi_hop: NotRequired[bool | None]  # the check's reading the threshold followed (components.answerability.
    # checked_as_multi_hop: the question-type model's, a weak multi-hop one answered from one passage read single-hop)
    multi_hop_probability: NotRequired[float]  # the question-type model's probability of multi-hop, when it read one
    knob: NotRequired[float]  # the setting it came from (abstain_threshold, else the fitted one): a single-hop question's bar
    fitted_thresholds: NotRequired[list[float]]  # the fitted pair the knob is carried through (multi-hop, or Wikipedia)
    fit_on: NotRequired[str]  # the check's training answers: "contexts" (default), "wikipedia" (evidence all summaries)
    features: dict[str, float]  # what the score was computed from
    features_version: NotRequired[int]  # how they were computed (components.answerability.FEATURES_VERSION)
    withheld_answer: NotRequired[str]  # the answer not given, when the score abstained
    self_check_ms: NotRequired[float]  # the self-check call, when the model uses it
    sufficiency_ms: NotRequired[float]  # the sufficiency scorer's pass, when the model uses it
    reason: NotRequired[str]  # why it was unchecked, or why the question was asked back
    pronoun: NotRequired[str]  # reply "who": the pronoun whose person the question does not name
    reply: NotRequired[str]  # by "question": "who" (ask_who), or "greeting", "thanks", "farewell", "about", "date" (small_talk)


class TracePassage(TypedDict):
    id: str
    title: str
    text: str
    score: float  # retrieval cosine
    rerank_score: float | None
    source: NotRequired[str]  # where it comes from (components.passages.source_of); absent in older records
    holds_answer: NotRequired[bool]  # a closest passage shown that holds an unsupported answer (components.passages.closest)


class NamedDocumentTrace(TypedDict):
    doc_id: str
    title: str
    followed: NotRequired[bool]  # not named by the question: the question before searched it, and it follows on
    near: NotRequired[bool]  # not named, not followed: a passage of it scores at least file_first_score


class PlaceDocumentTrace(TypedDict):
    doc_id: str  # the document titled as the place whose population the question asks: retrieval searched it only
    title: str


class SummarizedTrace(TypedDict):
    thing: str  # what the request asked to have summarized ("the kettle manual")
    documents: list[NamedDocumentTrace]  # the documents summarized (doc_id, title)
    passages_read: int  # how many of their passages the summary read (of a longer one, each section's first ones)
    passages: int  # how many passages they have
    evidence_items: int  # the paragraphs the summary read, an evidence item each


class Trace(TypedDict, total=False):
    """What one answer cost and why: the contract the chat, the API, the CLI and the evaluation read.
    Keys appear as the nodes that write them run (a closed-book answer has no ``passages``)."""

    question: str  # as validated by start_turn
    policy: str
    tier: str
    budget: BudgetData
    router: RouterTrace  # adaptive policy only
    probe_router: ProbeRouterTrace  # probe-router policy only
    rewrite: RewriteTrace  # follow-ups in a conversation only
    described: DescribedTrace  # an answer that is the first passage of the document about the thing asked (describe)
    named_documents: list[NamedDocumentTrace]  # the user's files the question named: retrieval searched only them
    place_document: PlaceDocumentTrace  # with place_first: the place's document retrieval searched only; check reads it
    summarized: SummarizedTrace  # an answer that is a summary of the document the request names (summarize)
    aged: AgedTrace  # an answer that is an age told from the years a person's description gives (tell_age)
    compared: ComparedTrace  # an answer that is the first passages of the two documents a request compares (compare)
    top_score: float  # best retrieval cosine, after any correction
    top_score_initial: float  # best retrieval cosine of the first retrieval
    low_confidence: bool  # top_score < tau
    correction: CorrectionTrace  # only when the corrective retrieval ran
    corrected: bool
    reranker: str  # the reranker's name, when the tier reranks
    compression: CompressionTrace  # when the tier compresses
    k: int
    passages: list[TracePassage]  # everything retrieved, in rank order
    context: str  # the evidence exactly as the prompt holds it
    raw_output: str  # the model's text before citation markers were taken out
    two_things: bool  # the question asks two things, and the prompt said to answer each (absent when it does not)
    # "model" (its [n] markers), "attributed" (items holding its words), "unsupported", "none", "described"
    # (the answer is the cited passage: nodes.describe), "aged" (an age told from it: nodes.tell_age), "compared"
    # (the cited passages: nodes.compare) or "summary"
    citation_source: str
    supported: bool  # some shown evidence item holds the answer (see nodes.generate.SUPPORT_COVERAGE)
    held_by: list[str]  # an unsupported answer: the retrieved passages that hold it, not read (nodes.generate.found_holders)
    abstained: bool
    written_answer: NotRequired[str]  # the answer as the model wrote it, when the answer given is its short form
    prompt_tokens: int | None  # the final answer's prompt
    input_tokens: int | None  # all prompts of this question together (each step's whole prompt)
    prompt_tokens_evaluated: int | None  # what the model evaluated over all steps (the rest was cached)
    output_tokens: int | None  # over all steps
    mean_token_entropy: float | None  # nats, over the final answer's tokens
    confidence: Confidence  # of the final answer
    steps: list[Step]  # every answer the cascade gave, in order
    escalations: int
    final_tier: str
    answerability: AnswerabilityTrace
    gate: GateTrace  # retrieve-or-not policy only
    self_route: SelfRouteTrace  # self-route policy only
    cache: CacheTrace  # answered from the query cache only
    energy: EnergyTrace
    timings_ms: dict[str, float]  # per node, summed when a node runs twice


class Turn(TypedDict):
    """One finished question of a conversation (kept across questions by a checkpointer): what
    the next question's rewriting reads, and what a chat shows again after a reload."""

    question: str
    standalone_question: str
    answer: str
    citations: list[Citation]
    passages_read: NotRequired[int]  # evidence items in the answer's prompt: 0 for a closed-book answer (since session 32)
    # since session 48, so a reload shows an answer as it was given (a turn kept before reads them from its text):
    supported: NotRequired[bool]  # a cited passage holds the answer
    abstained: NotRequired[bool]  # no answer given (the model's or the check's decision)
    answerability: NotRequired[dict[str, Any]]  # the check's decision: its AnswerabilityTrace without the features
    escalations: NotRequired[int]  # times the cascade read more before it answered
    closest: NotRequired[list[TracePassage]]  # the best passages found, where no cited passage holds an answer
    cache: NotRequired[dict[str, Any]]  # the query cache's match, for an answer given before (hit, similarity, cached_question)
    # since session 49, so a reload shows what the answer cost:
    tier: NotRequired[str | None]  # the tier it started at
    final_tier: NotRequired[str | None]  # the tier the cascade stopped at
    tokens: NotRequired[dict[str, int | None]]  # prompt, input, evaluated, output (nodes.base.token_counts)
    # since session 50, written by the service once the run is over (app.service.kept_figures): the time and
    # energy it measured around the graph, and the rest of what the answer's figures showed
    figures: NotRequired[dict[str, Any]]
    # since session 60: the answer is the first passage of the document about the thing asked (nodes.describe)
    described: NotRequired[DescribedTrace]
    # since session 62: the user's files retrieval searched only (named by the question, or followed from the
    # question before), which a follow-up that names none may stay in (nodes.retrieve.files_followed)
    named_documents: NotRequired[list[NamedDocumentTrace]]
    # since session 63: the answer is a summary of the document the request named (nodes.summarize)
    summarized: NotRequired[SummarizedTrace]
    # since session 64: the answer is an age told from the years a description gives (nodes.tell_age)
    aged: NotRequired[AgedTrace]
    # since session 66: the answer is the first passages of the two documents a request compares (nodes.compare)
    compared: NotRequired[ComparedTrace]


class OutputState(TypedDict):
    answer: str
    citations: list[Citation]
    trace: Annotated[Trace, merge_trace]


class State(InputState, total=False):
    standalone_question: str  # the question rewritten without references to earlier turns
    unnamed: str | None  # a first question's pronoun for a person it does not name ("he"), which ask_who asks about
    small_talk: str | None  # greeting, thanks, farewell, about or date: a message small_talk answers in kind
    described: bool  # the answer is the first passage of the document about what the question asked (describe)
    summarized: bool  # summarize answered: a summary of the document the request named, or that no document is called so
    told_age: bool  # tell_age answered: an age told from the years the person's description gives
    compared: bool  # compare answered: the first passages of the two documents the request compares
    turns: Annotated[list[Turn], operator.add]
    settings: Settings
    query_embedding: list[float]
    passages: list[PassageHit]
    corrections: int
    low_confidence: bool
    evidence: list[EvidenceItem]
    steps: list[Step]  # the cascade's answers to this question so far
    overhead: list[dict[str, Any]]  # prompts the question cost besides its answers (self-route's routing)
    energy_mark: dict[str, Any]  # components.energy.EnergyMeter.mark() at the question's start
    cache_scope: str | None  # what a cached answer must have been made under; None: not cached
    cached: bool  # the answer came from the query cache
    escalations: int
    answer: str
    citations: list[Citation]
    trace: Annotated[Trace, merge_trace]
