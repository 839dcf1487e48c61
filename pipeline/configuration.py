"""Pipeline configuration as data: budget tiers, thresholds and routing policy.

Everything the routing functions decide on lives here, with the thesis' defaults.
Nothing in this module loads a model; resources are described in ``pipeline.context``.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

LAYOUTS = ("question_first", "question_both", "evidence_first")
"""Answer prompt layouts (``prompts.LAYOUTS`` holds their templates)."""

DEFAULT_LAYOUT = "evidence_first"
"""The answer prompt's layout: the instructions, the evidence in rank order, then the question. An
extension in place shares everything up to the old evidence with the prompt already evaluated and
evaluates the added evidence and the question again (about 20 tokens more than ``question_first``,
where the question comes before the evidence). On the cascade's 320 train questions it answers
far better at the same cost (docs/cascade/README.md; session 22)."""

ANSWER_FORMS = ("short", "as_written")
"""Valid values of ``PipelineConfig.answer_form``: ``short`` gives the words of an answer written as a
sentence that the question does not already hold (:mod:`components.short_answer`, fit on the train
splits); ``as_written`` gives the model's text unchanged."""

EVIDENCE_ORDERS = ("score", "title_diverse")
"""Valid values of ``PipelineConfig.evidence_order``, the order of the reranked passages (which the
evidence budgets fill in): ``score`` is the reranker's order; ``title_diverse`` moves each document's
best passage ahead of a second passage from a document already in, so a small budget holds more
documents (a two-hop question needs two); within each group the reranker's order stands."""

POLICIES = ("cascade", "adaptive", "fixed", "baseline", "retrieve-or-not", "lazy", "self-route", "probe-router")
"""Valid values of ``PipelineConfig.policy``.

``cascade`` (default): answer at the ladder's first tier, score the answer's confidence, and when it is
low extend the evidence in place to the next tier's budget and answer again (at most
``max_escalations`` times).
``adaptive``: the trained tier router picks the starting tier from the question's embedding; the
cascade escalates from there.
``probe-router``: a router that also sees the retrieval (:mod:`components.probe_router`: the
question's embedding and a top-10 probe search, trained on cost-aware labels) picks closed book
or the cascade's starting tier; the cascade escalates from there.
``fixed``: every question gets ``PipelineConfig.tier``, no escalation.
``baseline``: the thesis' fixed k = 5 pipeline (no rerank, no compression, no correction).
``retrieve-or-not`` (RAGRouter): a logistic regression on the question's embedding and cheap
retrieval-probe features (:mod:`components.retrieval_gate`) decides between answering closed-book
and the k = 5 baseline.
``lazy`` (L-RAG): answer first from a compact summary (the first sentences of the top retrieved
documents, ``PipelineConfig.summary``); when the answer's predictive entropy is above the
calibrated threshold, append the top passages in place and answer again.
``self-route``: the generator chooses, from a short routing prompt, between answering straight
(closed book), reasoning step by step (closed book) and retrieval (the k = 5 baseline).
"""

SELF_ROUTES = ("straight", "reasoning", "retrieval")
"""The choices the ``self-route`` policy offers the generator, in the routing prompt's order."""

CONFIDENCE_SIGNALS = ("min_prob", "first_prob", "first_margin", "mean_logprob", "neg_mean_entropy")
"""How an answer's confidence is read from its tokens (higher is more confident for each):
the lowest probability of an answer token, the first token's probability, the first token's margin
over the runner-up, the mean log-probability, and the negated mean entropy. Citation markers and
the end of the answer are left out; an abstention counts as no confidence."""


EARLY_SIGNALS = ("min_prob", "first_prob", "first_margin")
"""The confidence signals known to fall short before the answer ends (the first token's figures,
and a minimum that can only fall), so ``stop_early`` can stop an answer the cascade will extend."""


FILLS = ("relevance", "rank", "summary")
"""How a token budget is filled (``Budget.fill``)."""


def is_probability(value: object) -> bool:
    """Whether ``value`` is a number (not a bool) in [0, 1]: what a threshold on a probability takes."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 <= value <= 1.0


class ConfigurationError(ValueError):
    """An unknown or out-of-range configuration value. The message lists the valid values."""


def not_a_probability(name: str, value: object) -> ConfigurationError:
    """The error for a threshold ``name`` given ``value``, not a probability: the chat speaks of
    percent, so it says how one is written (7% is 0.07)."""
    return ConfigurationError(f"{name} is a probability in [0, 1], got {value!r} (7% is 0.07)")


@dataclass(frozen=True)
class Budget:
    """How much retrieval and generation one question may spend.

    ``k`` of 0 means no retrieval (closed-book generation).
    ``context_tokens`` is the evidence budget in the generator's tokens, ``context_chars`` the
    thesis' budget in characters (used when ``context_tokens`` is ``None``); both ``None`` means the
    evidence is passed uncompressed.
    ``correct`` says whether a low-confidence retrieval may trigger the corrective step.
    ``fill`` says how a token budget is filled: ``relevance`` (the most question-relevant sentences
    first, skipping any that do not fit) or ``rank`` (whole passages in ranked order, stopping at
    the first that does not fit, at least one: every tier's evidence is then the start of the next
    one's, and a tier without a token budget holds all k passages, as the baseline does) or
    ``summary`` (the first :data:`SUMMARY_SENTENCES` sentences of each retrieved document, in the
    order its passages rank, while they fit the budget: the lazy policy's compact first context).
    ``reasoning`` asks a closed-book answer to think step by step before it answers.
    ``candidates`` (with ``rerank``) retrieves that many passages, reranks them and keeps the best
    ``k``: the reranker then chooses among more than it keeps (``None``: it only reorders the ``k``).
    """

    name: str
    k: int
    context_chars: int | None
    max_new_tokens: int
    rerank: bool
    correct: bool
    context_tokens: int | None = None
    fill: str = "relevance"
    cascade: bool = True  # the cascade policy climbs this tier (else only the router or a fixed policy uses it)
    reasoning: bool = False  # closed book only: think step by step, then answer
    candidates: int | None = None  # passages retrieved for the reranker to choose k from; None: k

    def __post_init__(self) -> None:
        if self.fill not in FILLS:
            raise ConfigurationError(f"budget {self.name!r}: unknown fill {self.fill!r}; valid: {', '.join(FILLS)}")
        if self.k < 0:
            raise ConfigurationError(f"budget {self.name!r}: k must be >= 0, got {self.k}")
        if self.context_chars is not None and self.context_chars < 1:
            raise ConfigurationError(
                f"budget {self.name!r}: context_chars must be >= 1 or None, got {self.context_chars}"
            )
        if self.context_tokens is not None and self.context_tokens < 1:
            raise ConfigurationError(
                f"budget {self.name!r}: context_tokens must be >= 1 or None, got {self.context_tokens}"
            )
        if self.reasoning and self.k:
            raise ConfigurationError(f"budget {self.name!r}: reasoning is for closed-book budgets (k = 0)")
        if self.fill == "summary" and self.context_tokens is None:
            raise ConfigurationError(f"budget {self.name!r}: a summary fill needs context_tokens")
        if self.max_new_tokens < 1:
            raise ConfigurationError(
                f"budget {self.name!r}: max_new_tokens must be >= 1, got {self.max_new_tokens}"
            )
        if self.candidates is not None and (not self.rerank or self.candidates < self.k):
            raise ConfigurationError(
                f"budget {self.name!r}: candidates ({self.candidates}) need rerank and must be >= k ({self.k})"
            )

    @property
    def compress(self) -> bool:
        return self.context_chars is not None or self.context_tokens is not None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "k": self.k,
            "context_tokens": self.context_tokens,
            "fill": self.fill,
            "context_chars": self.context_chars,
            "max_new_tokens": self.max_new_tokens,
            "rerank": self.rerank,
            "correct": self.correct,
            "reasoning": self.reasoning,
            "candidates": self.candidates,
        }


RERANK_CANDIDATES = 10
"""Dense candidates the cascade's reranker chooses its five passages from. On 297 answerable SQuAD 2.0
train questions the passage holding the answer ranks first 67.0% of the time by dense score and
71.4% after reranking ten, and is among the five kept 86.9% → 90.6%; on 200 HotpotQA train
questions a gold title ranks first 79.5% → 85.0%, gold titles among the five 67.5% → 72.8%
(``python -m training.rerank``)."""

THESIS_TIERS: Mapping[str, Budget] = {
    "easy": Budget("easy", k=2, context_chars=600, max_new_tokens=64, rerank=False, correct=True),
    "medium": Budget("medium", k=5, context_chars=1200, max_new_tokens=96, rerank=True, correct=True),
    "hard": Budget("hard", k=10, context_chars=2000, max_new_tokens=128, rerank=True, correct=False),
}
"""The thesis' three tiers, cheapest first, budgeted in characters. Correction is off on Hard by
design. Medium's 1,200 characters rarely bind on five sentence passages."""

DEFAULT_TIERS: Mapping[str, Budget] = {
    "easy": Budget("easy", k=5, context_chars=None, context_tokens=96, fill="rank", max_new_tokens=64, rerank=True,
                   correct=False, candidates=RERANK_CANDIDATES),
    "medium": Budget("medium", k=5, context_chars=None, context_tokens=128, fill="rank", max_new_tokens=64,
                     rerank=True, correct=False, candidates=RERANK_CANDIDATES),
    "hard": Budget("hard", k=5, context_chars=None, context_tokens=None, fill="rank", max_new_tokens=128,
                   rerank=True, correct=False, candidates=RERANK_CANDIDATES),
}
"""The tiers, cheapest first: the top-ranked passages that fit a budget in the generator's tokens (at
least one), then all five. The fitted cascade starts a single-hop question at Easy (96 tokens) and a
multi-hop one at Medium (128), as the question-type model says (``PipelineConfig.multi_hop_tier``),
and climbs to Hard while the answer is unsure. The five are the best of ten dense candidates by
the hybrid reranker (dense + BM25 + title overlap, well under a millisecond), so the few tokens of
Easy more often hold the answer's sentence. Each tier's evidence is the start of the next one's, so
the cascade extends a prompt in place; an answer that climbs to the top has five passages, as the
baseline has, chosen by the reranker instead of by dense rank alone. The budgets are fit on the
train splits (``python -m training.cascade``; docs/cascade/README.md shows the fit)."""


PROBE_ROUTER_TIERS: Mapping[str, Budget] = {**DEFAULT_TIERS, "easy": replace(DEFAULT_TIERS["easy"], context_tokens=64)}
"""The default tiers with Easy at 64 tokens, as the probe router's rungs were recorded and fit
(sessions 14-15; ``python -m training.probe_router``); the ``probe-router`` benchmark system and
that training run on them. Any other configuration of the policy uses its own tiers."""


def cheapest_first(tiers) -> list[str]:
    """Tier names in the default tiers' order (cheapest first), any others after them by name."""
    order = list(DEFAULT_TIERS)
    return sorted(tiers, key=lambda t: (order.index(t) if t in order else len(order), str(t)))


BASELINE = Budget("baseline", k=5, context_chars=None, max_new_tokens=128, rerank=False, correct=False)
"""The fixed k = 5 reference pipeline: top-5 passages straight into the prompt."""

SUMMARY_SENTENCES = 2
"""How many leading sentences of a document the ``summary`` fill takes (L-RAG's compact context)."""

SUMMARY = Budget("summary", k=5, context_chars=None, context_tokens=96, fill="summary", max_new_tokens=64,
                 rerank=False, correct=False, cascade=False)
"""The lazy policy's first context: the first two sentences of the top retrieved documents that fit
96 generator tokens (one or two documents)."""

CLOSED_BOOK = Budget("closed-book", k=0, context_chars=None, max_new_tokens=64, rerank=False, correct=False,
                     cascade=False)
"""No retrieval: the generator answers from what it knows."""

REASONING = Budget("reasoning", k=0, context_chars=None, max_new_tokens=192, rerank=False, correct=False,
                   cascade=False, reasoning=True)
"""No retrieval; the generator reasons step by step before its answer (self-route's second choice)."""


@dataclass(frozen=True)
class PipelineConfig:
    """Routing policy and thresholds. Immutable; derive variants with :meth:`with_overrides`."""

    policy: str = "cascade"
    tier: str = "medium"  # the tier of the ``fixed`` policy
    tiers: Mapping[str, Budget] = field(default_factory=lambda: dict(DEFAULT_TIERS))
    baseline: Budget = BASELINE
    tau: float = 0.52
    k_extra: int = 5
    max_corrections: int = 1
    max_question_chars: int = 2000
    prompt_layout: str = DEFAULT_LAYOUT
    # The cascade, as fitted on the train splits (docs/cascade/README.md, session 22, the evidence-first prompt):
    # from Medium (the best passages that fit 128 tokens; where a question starts is below), accept when the
    # answer's first token has at least this probability, else extend to Hard (all five passages). Session 21's
    # fit for the question-first prompt (neg_mean_entropy >= -2.80) is docs/cascade/question_first/ and the
    # benchmark system cascade-question-first; session 15's (dense order: Easy, Medium, Hard on min_prob >= 0.245)
    # is docs/cascade/dense_s15/.
    # Where the cascade starts (session 25, docs/question_type/README.md): a question the question-type model
    # (components/question_type.json, fit on the train splits) calls multi-hop at this tier, any other at the
    # cheapest tier of the ladder, Easy (a small model answers a single-hop question best from little evidence;
    # a two-hop question needs its second document). None: every question starts at the cheapest tier. Without a
    # question-type model (ResourceConfig.question_type None) every question starts here, as before session 25.
    multi_hop_tier: str | None = "medium"
    # P(multi-hop) at or above which a question starts at multi_hop_tier; None: the threshold fitted with the model.
    multi_hop_threshold: float | None = None
    confidence_signal: str = "first_prob"
    accept_threshold: float = 0.10873175317309082  # accept an answer whose confidence reaches this, else extend
    max_escalations: int = 2
    # Stop generating an answer as soon as its confidence is certain to fall below the threshold (an answer the
    # cascade would extend anyway), for the signals where that is known early (EARLY_SIGNALS); False: every answer
    # is finished, as in releases before it.
    stop_early: bool = True
    # Ask who is meant when a question stands on a person it does not name ("When was he born?") and nothing
    # says who: no earlier turn, no documents given with it (nodes.ask_who; a reply with a name is then read as
    # the question asked of it). False: answer it from whatever retrieval finds, as releases before session 60 did.
    ask_who: bool = True
    # Answer a question that only asks what a thing is ("Who was Napoleon?", "What is photosynthesis?", "Tell me
    # about Marie Curie") with the first passage of the document titled as the thing, where the reranked passages
    # include one of it, as it is written and cited, without a model call (nodes.describe). False: the model
    # answers it in as few words as it answers any question ("Napoleon Bonaparte"), as releases before session 60.
    # So is a request that only asks to compare two things ("Compare cats and dogs"), with the first passage of
    # each one's document (nodes.compare, session 66).
    describe: bool = True
    # Search only the user's file that a question names ("What does the handbook say about holidays?", "my report",
    # "the document": nodes.retrieve.named_documents), so a file is not outranked by the Wikipedia article on the
    # topic it is asked about. False: every question searches the whole index, as releases before session 61 did.
    named_documents: bool = True
    # A follow-up that names no file stays in the files the question before it searched (above) when their best
    # passage scores at least this (cosine with the standalone question): "Who is the manager?" after "What does
    # the handbook say about holidays?" reads the handbook; "When did Napoleon die?" (0.18 there) searches the
    # whole index. Fit in session 62 on 51 written follow-ups (`python -m eval.file_follow_ups fit`: 50 right);
    # None: a follow-up searches the whole index unless it names a file itself, as releases before session 62 did.
    follow_up_file_score: float | None = 0.333
    # A question that names no file and follows none searches only the user's files when one of their passages
    # scores at least this (cosine with the standalone question: nodes.retrieve.near_files): with a travel policy
    # uploaded, "Who leads the finance office?" reads the policy, where Wikipedia's finance outranked it; "When did
    # Napoleon die?" searches the whole index. Fit in session 69 on the same 51 questions asked first, all three
    # files loaded (`python -m eval.file_follow_ups fit-first`); None: the whole index, as releases before session 69.
    file_first_score: float | None = 0.333
    # True: a question that asks the population of a place the index has one document titled as ("How many people
    # live in Germany?": components.requests.population_place, components.titles.titled_document) searches that
    # document's passages only; the whole index's best for it was Stuttgart's "sixth largest city in Germany"
    # (session 69), which the check withholds (nodes.check_answer.population_elsewhere). Off by default: on twenty
    # population questions written before the run it gave one more right answer and two more wrong ones
    # (session 70, README "A population held only by passages of another place").
    place_first: bool = False
    # Answer a request to summarize a document it names ("Summarize the kettle manual", "What is the lease about?")
    # with a summary of that document: its passages in its order, up to summarize_tokens of them, and a prompt
    # that asks for its main points (nodes.summarize). False: such a request is answered as any question, as
    # releases before session 63 did (from the few sentences nearest it, in as few words as possible).
    summarize: bool = True
    # The most tokens of a document a summary reads (of a longer one, each section's first paragraphs, then its
    # second ones...; documents summarized together share them), and at most what the model's context holds
    # beside the prompt and the summary. A summary of a 1,540-token file read to 1,024 took 20 s on two CPU
    # cores with the default model (session 63: 1,155 prompt tokens evaluated, 192 written; 8 s asked again,
    # the prompt reused).
    summarize_tokens: int = 1024
    # A living person's age today beside the birth year a Wikipedia description gives, spelled as a passage is
    # read: "(American singer-songwriter (born 1989, aged 36 or 37 in 2026))" (components.sources.aged_today);
    # and "How old is Bill Gates?" told from the years his article's description gives, with no model call
    # (nodes.tell_age). The 1.5B model does not subtract: "How old is Taylor Swift?" was answered "1989".
    # False: the text as stored, and the question left to the model, as releases before session 64 did.
    living_ages: bool = True
    # A question that asks two things ("Who wrote Hamlet and when was it written?": components.requests.asks_two_things)
    # is told, on the line before it, to answer each, separated by a semicolon; the prompt asks for as few words as
    # possible, and the model answered the first alone ("William Shakespeare"). False: the prompt as before
    # session 67.
    two_things: bool = True
    # Let the model write its [n] citation markers (about three generated tokens per answer, each a forward
    # pass of the model); False: the answer ends where its first marker begins and is cited to the evidence
    # items that hold its words (nodes.generate.cite). The answer's text and confidence are the same either way.
    citation_markers: bool = False
    # The answer shown: "short" cuts an answer written as a sentence that restates the question to its new words
    # ("The Black Death was introduced to Europe by Genoese traders" -> "Genoese traders"; the trace keeps the
    # text as written); "as_written" shows the model's text.
    answer_form: str = "short"
    # The order of the reranked passages, which the cascade's budgets fill in (EVIDENCE_ORDERS): "score", the
    # reranker's, or "title_diverse", each document's best passage first (a two-hop question's second document
    # reaches the first look more often). Passages not reranked (the baseline) keep their dense order.
    evidence_order: str = "score"
    # Show the model four worked examples (prompts/answer_examples.json: invented passages) before the question,
    # as earlier turns of the chat: a short span, an abstention where the evidence is on the topic but does not
    # say, a two-step answer and a yes/no comparison. They are the same for every question, so they belong to the
    # instruction prefix the generator evaluates once per process and cost no prompt evaluation per question.
    answer_examples: bool = False
    # Prompt-lookup decoding: with each generated token, up to this many tokens that followed it in the question
    # and evidence are verified in the same forward pass (components.generator: the same greedy answer in fewer
    # passes of the model, each of which reads all its weights); 0 generates one token per pass, as releases
    # before it did.
    lookup_tokens: int = 0
    # Read the question's likelihood after the evidence (the log-probabilities of its tokens where the layout ends
    # with it: a vocabulary's projection per question token, about 3 ms each here) for the answerability check.
    # False: not read; a check that needs it leaves the answers unchecked. The benchmark system
    # cascade-no-likelihood is the cascade so, which measures what reading it costs.
    question_likelihood: bool = True
    # Abstain when the answerability model (components/answerability.json, fit on the train splits:
    # docs/answerability/README.md) gives the answer a lower probability of being right than this.
    # 0 never abstains (unless the model itself does), 1 always abstains; None: the threshold fitted
    # with the model.
    abstain_threshold: float | None = None
    # When the check would abstain on a cascade's answer and the ladder has a tier left, extend the evidence
    # and answer again (checked again) instead: an abstention only once the evidence is all in. False:
    # abstain on the answer the cascade accepted, as releases before it did.
    extend_before_abstaining: bool = False
    # When a rule withholds a cascade's answer because the passages that hold it say it is another's (another
    # person's birthplace, another rank, another place's capital or population, a former office holder:
    # nodes.check_answer.EXTENDED_RULES) and the ladder has a tier left, extend the evidence and answer again
    # (checked again): the passage on what was asked may not have been read yet. "Which planet is the largest?"
    # read Neptune's "fourth-largest planet" and Saturn's "second largest, after Jupiter" first, and Jupiter's
    # own passage only on the next tier. False: withhold at once, as releases before session 87 did.
    extend_after_rule: bool = True
    # The rank rule withholds an answer a passage titled as it ranks lower ("fourth-largest") unless a passage
    # says the superlative asked unranked. With this, one it narrows to less than is asked does not count: "the
    # largest U.S. state by population" keeps no "California" that "third-largest by area" ranks, for the
    # largest state by area (nodes.check_answer.qualified_by). On forty questions written first: 2 fewer wrong
    # answers, none fewer right (docs/results/narrowed-superlatives-s88). False: any such superlative counts.
    qualified_superlatives: bool = True
    # retrieve-or-not: answer closed-book when the gate (components/retrieval_gate.json, fit on the train
    # splits) gives closed-book answering at least this probability of being right; None: the fitted threshold.
    gate_threshold: float | None = None
    # probe-router: take the cheapest rung whose probability of being enough reaches this (lower: cheaper,
    # fewer right answers); None: the threshold fitted with the router (docs/probe_router/README.md).
    router_threshold: float | None = None
    # lazy: the summary context first; extend to the top passages when the answer's confidence (this signal)
    # is below the threshold, both calibrated on the train splits (docs/policies/README.md: no threshold kept
    # train F1 within a point of the baseline's; this is the best train F1 the summary allows, extending 99%).
    summary: Budget = SUMMARY
    lazy_signal: str = "min_prob"
    lazy_threshold: float = 0.9644878522638844

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ConfigurationError(
                f"unknown policy {self.policy!r}; valid policies: {', '.join(POLICIES)}"
            )
        if self.tier not in self.tiers:
            raise ConfigurationError(
                f"unknown tier {self.tier!r}; valid tiers: {', '.join(self.tiers)}"
            )
        if not -1.0 <= self.tau <= 1.0:
            raise ConfigurationError(f"tau is a cosine threshold in [-1, 1], got {self.tau}")
        if self.k_extra < 1:
            raise ConfigurationError(f"k_extra must be >= 1, got {self.k_extra}")
        if self.max_corrections < 0:
            raise ConfigurationError(f"max_corrections must be >= 0, got {self.max_corrections}")
        if self.max_question_chars < 1:
            raise ConfigurationError(
                f"max_question_chars must be >= 1, got {self.max_question_chars}"
            )
        if self.prompt_layout not in LAYOUTS:
            raise ConfigurationError(
                f"unknown prompt_layout {self.prompt_layout!r}; valid layouts: {', '.join(LAYOUTS)}"
            )
        if self.confidence_signal not in CONFIDENCE_SIGNALS:
            raise ConfigurationError(f"unknown confidence_signal {self.confidence_signal!r}; "
                                     f"valid signals: {', '.join(CONFIDENCE_SIGNALS)}")
        if not math.isfinite(self.accept_threshold):
            raise ConfigurationError(f"accept_threshold must be a finite number, got {self.accept_threshold}")
        if self.max_escalations < 0:
            raise ConfigurationError(f"max_escalations must be >= 0, got {self.max_escalations}")
        if not isinstance(self.stop_early, bool):
            raise ConfigurationError(f"stop_early is true or false, got {self.stop_early!r}")
        if not isinstance(self.ask_who, bool):
            raise ConfigurationError(f"ask_who is true or false, got {self.ask_who!r}")
        if not isinstance(self.describe, bool):
            raise ConfigurationError(f"describe is true or false, got {self.describe!r}")
        if not isinstance(self.named_documents, bool):
            raise ConfigurationError(f"named_documents is true or false, got {self.named_documents!r}")
        for name, off in (("follow_up_file_score", "follow-ups never to stay in a file"),
                          ("file_first_score", "a question that names no file to search the whole index")):
            bar = getattr(self, name)
            if bar is not None and (isinstance(bar, bool) or not isinstance(bar, (int, float)) or not -1.0 <= bar <= 1.0):
                raise ConfigurationError(f"{name} is a cosine in [-1, 1], or null for {off}, got {bar!r}")
        if not isinstance(self.place_first, bool):
            raise ConfigurationError(f"place_first is true or false, got {self.place_first!r}")
        if not isinstance(self.summarize, bool):
            raise ConfigurationError(f"summarize is true or false, got {self.summarize!r}")
        if not isinstance(self.living_ages, bool):
            raise ConfigurationError(f"living_ages is true or false, got {self.living_ages!r}")
        if not isinstance(self.two_things, bool):
            raise ConfigurationError(f"two_things is true or false, got {self.two_things!r}")
        if isinstance(self.summarize_tokens, bool) or not isinstance(self.summarize_tokens, int) or self.summarize_tokens < 64:
            raise ConfigurationError(f"summarize_tokens is a whole number >= 64, got {self.summarize_tokens!r}")
        if not isinstance(self.citation_markers, bool):
            raise ConfigurationError(f"citation_markers is true or false, got {self.citation_markers!r}")
        if isinstance(self.lookup_tokens, bool) or not isinstance(self.lookup_tokens, int) or self.lookup_tokens < 0:
            raise ConfigurationError(f"lookup_tokens is a whole number >= 0, got {self.lookup_tokens!r}")
        if not isinstance(self.answer_examples, bool):
            raise ConfigurationError(f"answer_examples is true or false, got {self.answer_examples!r}")
        if self.policy == "cascade" and self.multi_hop_tier is not None and self.multi_hop_tier not in self.tiers:
            raise ConfigurationError(f"unknown multi_hop_tier {self.multi_hop_tier!r}; valid tiers: {', '.join(self.tiers)} "
                                     "(or None: every question starts at the cheapest tier)")
        if self.multi_hop_threshold is not None and not is_probability(self.multi_hop_threshold):
            raise not_a_probability("multi_hop_threshold", self.multi_hop_threshold)
        if self.evidence_order not in EVIDENCE_ORDERS:
            raise ConfigurationError(f"unknown evidence_order {self.evidence_order!r}; "
                                     f"valid orders: {', '.join(EVIDENCE_ORDERS)}")
        if self.answer_form not in ANSWER_FORMS:
            raise ConfigurationError(f"unknown answer_form {self.answer_form!r}; valid forms: {', '.join(ANSWER_FORMS)}")
        if self.abstain_threshold is not None and not is_probability(self.abstain_threshold):
            raise not_a_probability("abstain_threshold", self.abstain_threshold)
        if self.gate_threshold is not None and not is_probability(self.gate_threshold):
            raise not_a_probability("gate_threshold", self.gate_threshold)
        if self.router_threshold is not None and not is_probability(self.router_threshold):
            raise not_a_probability("router_threshold", self.router_threshold)
        if self.lazy_signal not in CONFIDENCE_SIGNALS:
            raise ConfigurationError(f"unknown lazy_signal {self.lazy_signal!r}; "
                                     f"valid signals: {', '.join(CONFIDENCE_SIGNALS)}")
        if not math.isfinite(self.lazy_threshold):
            raise ConfigurationError(f"lazy_threshold must be a finite number, got {self.lazy_threshold}")
        if self.summary.fill != "summary":
            raise ConfigurationError(f"the lazy policy's summary budget needs fill 'summary', got {self.summary.fill!r}")

    def ladder(self, start: str) -> list[Budget]:
        """The tiers the cascade may escalate to from ``start``: the costlier ones, cheapest first,
        at most ``max_escalations``. Empty for the ``fixed`` and ``baseline`` policies, from a budget
        that is not one of the tiers (closed book) and from a tier without a token budget (there is
        no evidence to extend in place). The ``lazy`` policy's
        ladder from its summary is the costliest tier alone (all the top passages)."""
        if self.policy == "lazy" and start == self.summary.name:
            return [self.tiers[cheapest_first(self.tiers)[-1]]][: self.max_escalations]
        if (self.policy not in ("cascade", "adaptive", "probe-router") or start not in self.tiers
                or self.tiers[start].context_tokens is None):
            return []
        order = cheapest_first(self.tiers)
        costlier = order[order.index(start) + 1:]
        return [self.tiers[t] for t in costlier if self.tiers[t].cascade][: self.max_escalations]

    def start_tier(self) -> str:
        """The cascade's starting tier: the cheapest one it climbs (the cheapest of all when none is marked)."""
        order = cheapest_first(self.tiers)
        return next((t for t in order if self.tiers[t].cascade), order[0])

    def budget(self, tier: str | None = None) -> Budget:
        """The budget this policy assigns; ``tier`` (the router's choice under ``adaptive``) overrides
        the configured fixed tier."""
        if self.policy == "baseline":
            return self.baseline
        name = tier or self.tier
        if name not in self.tiers:
            raise ConfigurationError(f"unknown tier {name!r}; valid tiers: {', '.join(self.tiers)}")
        return self.tiers[name]

    def with_overrides(self, overrides: Mapping[str, Any] | None) -> "PipelineConfig":
        """A copy with per-question overrides applied; unknown keys are rejected. A tier given
        without a policy means that tier: the policy becomes ``fixed``."""
        if not overrides:
            return self
        allowed = {"policy", "tier", "tau", "k_extra", "max_corrections", "accept_threshold", "stop_early",
                   "max_escalations", "abstain_threshold", "gate_threshold", "lazy_threshold", "router_threshold",
                   "multi_hop_threshold", "named_documents", "follow_up_file_score", "file_first_score", "place_first"}
        unknown = set(overrides) - allowed
        if unknown:
            raise ConfigurationError(
                f"unknown override(s) {sorted(unknown)}; valid overrides: {', '.join(sorted(allowed))}"
            )
        changes = dict(overrides)
        if "tier" in changes and "policy" not in changes:
            changes["policy"] = "fixed"
        return replace(self, **changes)


class QuestionError(ValueError):
    """A question the pipeline refuses: not text, empty or invisible, or longer than the maximum;
    or documents given with it that are not ``{title, text}`` strings, hold no text, or too much."""


_INVISIBLE = {"Cc", "Cf", "Zs", "Zl", "Zp"}  # controls, format characters (zero-width), separators


def clean_text(text: str, what: str = "text") -> str:
    """``text`` with control characters (NUL and the like, but not tab or newline) replaced by
    spaces; a :class:`QuestionError` if it is not valid Unicode (a lone surrogate cannot be encoded,
    tokenized or stored)."""
    if any(unicodedata.category(ch) == "Cs" for ch in text):
        raise QuestionError(f"{what} is not valid Unicode text (it holds a lone surrogate)")
    return "".join(" " if unicodedata.category(ch) == "Cc" and ch not in "\t\n" else ch for ch in text)


SERVERS_LIMIT = "the server's max_question_chars sets the maximum"
"""Where a question's limit comes from for a chat or API user, who cannot change it."""


def _too_long(length: int, max_chars: int, limit: str) -> QuestionError:
    """What the asker can do (shorten it) and what sets the limit."""
    return QuestionError(f"question is {length:,} characters long; the maximum is {max_chars:,}: shorten it ({limit})")


def validate_question(question: object, max_chars: int, limit: str = SERVERS_LIMIT) -> str:
    """The question cleaned (:func:`clean_text`) and stripped of surrounding whitespace and
    invisible characters, or a :class:`QuestionError` that says what is wrong; a question over
    ``max_chars`` is told ``limit``: what sets the maximum, as the asker can reach it (the server's
    setting, which a chat user cannot change; ``--max-question-chars`` at the terminal)."""
    if not isinstance(question, str):
        raise QuestionError(f"question must be a string, got {type(question).__name__}")
    if len(question) > 4 * max_chars + 1000:  # refuse huge inputs before looking at each character
        raise _too_long(len(question), max_chars, limit)
    cleaned = clean_text(question, "question")
    start, end = 0, len(cleaned)
    while start < end and unicodedata.category(cleaned[start]) in _INVISIBLE:
        start += 1
    while end > start and unicodedata.category(cleaned[end - 1]) in _INVISIBLE:
        end -= 1
    stripped = cleaned[start:end]
    if not stripped:
        raise QuestionError("question is empty")
    if len(stripped) > max_chars:
        raise _too_long(len(stripped), max_chars, limit)
    return stripped


MAX_DOCUMENT_CHARS = 200_000
"""The most text the documents given with one question may hold together: each of their sentences
is embedded while the question waits (about 1,500 sentences here, some seconds on two cores); more
belongs in an index (``adaptive-rag ingest``)."""


def validate_documents(documents: object) -> list[dict[str, Any]]:
    """Documents given with a question, each ``{"title": str, "text": str}`` and optionally
    ``"whole": bool`` (texts cleaned as :func:`clean_text` cleans them), or a :class:`QuestionError`
    that says which one is wrong."""
    if not isinstance(documents, (list, tuple)):
        raise QuestionError(f"documents must be a list of {{title, text}}, got {type(documents).__name__}")
    valid: list[dict[str, Any]] = []
    for i, doc in enumerate(documents):
        if (not isinstance(doc, dict) or not isinstance(doc.get("text"), str) or not isinstance(doc.get("title", ""), str)
                or not isinstance(doc.get("whole", False), bool)):
            raise QuestionError(f"documents[{i}] must be {{title, text[, whole]}}: strings and a bool, got {doc!r:.80}")
        valid.append({"title": clean_text(doc.get("title", ""), f"documents[{i}].title").strip(),
                      "text": clean_text(doc["text"], f"documents[{i}].text"),
                      **({"whole": doc["whole"]} if "whole" in doc else {})})
    total = sum(len(doc["text"]) for doc in valid)
    if total > MAX_DOCUMENT_CHARS:
        raise QuestionError(f"the documents hold {total:,} characters; the most one question may bring is "
                            f"{MAX_DOCUMENT_CHARS:,} (ingest them into an index instead)")
    if valid and not any(doc["text"].strip() for doc in valid):
        raise QuestionError("the documents hold no text")
    return valid
