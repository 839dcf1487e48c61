"""The systems compared side by side: all are configurations of the same compiled graph.

* ``baseline``: the thesis' fixed k = 5 pipeline (no rerank, compression or correction), with
  the default evidence-first prompt and the warm instruction prefix every system gets.
* ``baseline-cold``: the previous release's baseline: evidence-first prompt, every token of every
  prompt evaluated (no prefix reuse).
* ``baseline-question-first`` (session 21's baseline), ``baseline-question-both``,
  ``baseline-evidence-first`` (the default layout, named): the baseline in each prompt layout
  (warm, like the baseline), to compare the layouts' answers on the same questions.
* ``baseline-markers``: the baseline as the previous release ran it, the model writing its [n]
  citation markers (each costs about three generated tokens); every other system's answers end
  where their first marker would begin and are cited to the evidence that holds them.
* ``baseline-reranked``: the baseline's five passages chosen as the cascade chooses them, the
  reranker's best five of ten dense candidates: what reranking alone is worth.
* ``cascade-hybrid``, ``cascade-retrieval-order`` and ``cascade-learned``: the cascade with the hybrid
  reranker, the dense retrieval's order or the learned reranker in place of the reranker fit for the knowledge base
  (``eval.corpora.benchmark_reranker``). On the Wikipedia summaries ``cascade-hybrid`` is the chat's
  cascade before session 44; on SQuAD 2.0 ``cascade-learned`` is the cascade of sessions 76 to 81, and
  ``cascade-hybrid`` the cascade itself again; on HotpotQA ``cascade-retrieval-order`` shows what its hybrid is worth.
* ``cascade``: a single-hop question starts at Easy, a multi-hop one at Medium (the question-type
  model's reading); low confidence extends the evidence in place. ``cascade-extend``: the cascade
  with ``extend_before_abstaining``: an answer the check would withhold goes up the ladder first.
  ``cascade-one-check``: the cascade with the default check for every answer, none checked by the one fit
  for the Wikipedia summaries (on those, the chat's check before session 55).
  ``cascade-medium``: session 24's cascade, every question from Medium. ``cascade-no-likelihood``: the
  cascade without reading the question's likelihood after the evidence, its answers left unchecked
  (the shipped check needs it): beside ``cascade``, what reading it costs, answer for answer.
* ``cascade-question-first``: session 21's cascade: the question before the evidence, with the
  threshold fit on answers in that layout.
* ``cascade-dense``: the previous release's cascade (session 15's fit): five passages in dense
  order, Easy → Medium → Hard on ``min_prob`` >= 0.245.
* ``adaptive``: the full pipeline with the trained tier router choosing the starting tier and the
  cascade escalating from there; ``--adaptive-tier`` replaces the router by one fixed tier.
* ``probe-router``: a router that also reads a top-10 retrieval probe, trained on cost-aware
  labels, picks closed book or the cascade's starting tier; the cascade escalates from there.
* ``adaptive-thesis``: the thesis' router pipeline as the previous release ran it (character
  budgets, evidence-first prompt, no cascade), for comparison.
* The thesis' ablation ladder, routed the same way on the thesis' tiers: ``routing`` (the chosen
  tier's k and token budget only), ``routing+compression``, then ``adaptive-thesis`` (full).
* The published routing ideas, each a policy of the same graph: ``retrieve-or-not`` (a gate on
  the question and a retrieval probe picks closed book or the baseline, RAGRouter), ``lazy``
  (a two-sentence summary of the top documents first, the top passages appended when the
  answer's entropy is high, L-RAG) and ``self-route`` (the generator picks straight,
  step-by-step or retrieval itself).
* Reference rows: ``no-retrieval`` (closed book) and ``oracle`` (the gold context, uncompressed).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pipeline.configuration import (BASELINE, CLOSED_BOOK, DEFAULT_TIERS, PROBE_ROUTER_TIERS, RERANK_CANDIDATES, THESIS_TIERS,
                                    Budget, ConfigurationError, PipelineConfig)

POLICY_SYSTEMS = ("baseline", "cascade", "adaptive", "probe-router", "retrieve-or-not", "lazy", "self-route",
                  "no-retrieval", "oracle")
"""The rows of the policy comparison (#17): every published routing idea and the reference rows."""


@dataclass(frozen=True)
class System:
    name: str
    description: str
    pipeline: PipelineConfig
    oracle: bool = False  # the gold context is handed to the generator as the question's documents
    cold: bool = False  # start every query with an empty prompt cache, not the warm instruction prefix
    reranker: str | None = None  # another reranker than the one fit for the knowledge base (load_reranker's names)
    one_check: bool = False  # every answer checked by the default check, none by the one fit for the Wikipedia summaries


def _ladder(**changes) -> dict[str, Budget]:
    """The thesis' tiers (which the router was trained on) with ``changes``, for the ablation rows."""
    return {name: replace(budget, **changes) for name, budget in THESIS_TIERS.items()}


def all_systems(adaptive_tier: str | None = None) -> dict[str, System]:
    """Every system; ``adaptive_tier`` runs the adaptive rows at one fixed tier instead of the router."""
    if adaptive_tier is not None and adaptive_tier not in DEFAULT_TIERS:
        raise ConfigurationError(f"unknown tier {adaptive_tier!r}; valid tiers: {', '.join(DEFAULT_TIERS)}")
    if adaptive_tier is None:
        routed, how = {"policy": "adaptive"}, "trained router"
    else:
        routed, how = {"policy": "fixed", "tier": adaptive_tier}, f"fixed {adaptive_tier} tier instead of the router"
    return {
        s.name: s
        for s in (
            System("baseline", "fixed k = 5, no rerank, compression or correction", PipelineConfig(policy="baseline")),
            System("baseline-cold", "the previous release's baseline: evidence-first prompt, no prefix reuse",
                   PipelineConfig(policy="baseline", prompt_layout="evidence_first"), cold=True),
            System("baseline-evidence-first", "the baseline with the evidence-first prompt (question last)",
                   PipelineConfig(policy="baseline", prompt_layout="evidence_first")),
            System("baseline-question-first", "session 21's baseline: the question before the evidence",
                   PipelineConfig(policy="baseline", prompt_layout="question_first")),
            System("baseline-question-both", "the baseline with the question both before and after the evidence",
                   PipelineConfig(policy="baseline", prompt_layout="question_both")),
            System("baseline-markers", "the baseline with the model writing its citation markers (the previous release)",
                   PipelineConfig(policy="baseline", citation_markers=True)),
            System("baseline-examples", "the baseline with four worked examples before the question",
                   PipelineConfig(policy="baseline", answer_examples=True)),
            System("baseline-reranked", "fixed k = 5, the reranker's best five of ten dense candidates",
                   PipelineConfig(policy="baseline", baseline=replace(BASELINE, rerank=True, candidates=RERANK_CANDIDATES))),
            System("cascade",
                   "the fitted cascade: a single-hop question (the question-type model's reading) starts at Easy, 96 "
                   "tokens of the best five of ten candidates, a multi-hop one at Medium, 128; extended in place while "
                   "the answer is unsure",
                   PipelineConfig(policy="cascade")),
            System("cascade-hybrid", "the cascade with the hybrid reranker (dense + BM25 + title), fit on SQuAD 2.0 "
                   "and HotpotQA's corpora: on the Wikipedia summaries, the chat's default before session 44; on SQuAD "
                   "2.0, the cascade before session 76",
                   PipelineConfig(policy="cascade"), reranker="hybrid"),
            System("cascade-retrieval-order", "the cascade keeping the dense retrieval's order (no BM25 or title "
                   "weight): on SQuAD 2.0 and HotpotQA, what their hybrid reranker is worth",
                   PipelineConfig(policy="cascade"), reranker="retrieval-order"),
            System("cascade-learned", "the cascade with the learned reranker (a logistic regression over cheap "
                   "features of each candidate, fit on SQuAD 2.0 train: python -m training.rerank learned)",
                   PipelineConfig(policy="cascade"), reranker="learned"),
            System("cascade-one-check", "the cascade with one answerability check for every answer: on the Wikipedia "
                   "summaries, the chat's check before session 55 (fit on SQuAD 2.0 and HotpotQA paragraphs)",
                   PipelineConfig(policy="cascade"), one_check=True),
            System("cascade-extend", "the cascade, extending the evidence where the check would withhold an answer it "
                   "accepted (abstaining only at the top of the ladder)",
                   PipelineConfig(policy="cascade", extend_before_abstaining=True)),
            System("cascade-no-rule-extension", "the cascade before session 87: an answer a rule says is another's "
                   "(another rank, capital, place or person) withheld at once, not read on from",
                   PipelineConfig(policy="cascade", extend_after_rule=False)),
            System("cascade-unqualified", "the cascade before session 88's second reading of superlatives: any "
                   "superlative asked that a passage says unranked keeps the answer, however narrowed (\"the largest "
                   "U.S. state by population\" keeps \"California\" for the largest state by area)",
                   PipelineConfig(policy="cascade", qualified_superlatives=False)),
            System("cascade-no-likelihood", "the cascade without reading the question's likelihood: its answers "
                   "unchecked (the check needs it), to measure what reading it costs",
                   PipelineConfig(policy="cascade", question_likelihood=False)),
            System("cascade-medium", "session 24's cascade: every question at Medium (128 tokens), extended in place to "
                   "Hard while the answer is unsure", PipelineConfig(policy="cascade", multi_hop_threshold=0.0)),
            System("cascade-question-first", "session 21's cascade: the question before the evidence, Medium then Hard "
                   "on its own threshold",
                   PipelineConfig(policy="cascade", prompt_layout="question_first", confidence_signal="neg_mean_entropy",
                                  accept_threshold=-2.7956566537498713, multi_hop_threshold=0.0)),
            System("cascade-examples", "the cascade with four worked examples before the question",
                   PipelineConfig(policy="cascade", answer_examples=True)),
            System("cascade-dense", "the previous release's cascade: dense order, Easy → Medium → Hard on min_prob",
                   PipelineConfig(policy="cascade", confidence_signal="min_prob", accept_threshold=0.24534893143102707,
                                  multi_hop_tier=None, tiers={name: replace(t, rerank=False, candidates=None, cascade=True)
                                                              for name, t in PROBE_ROUTER_TIERS.items()})),
            System("adaptive", f"routing, rerank, compression, correction, cascade ({how})", PipelineConfig(**routed)),
            System("probe-router", "a router on the question and a top-10 probe: closed book or the cascade's "
                   "first tier (cost-aware labels)", PipelineConfig(policy="probe-router", tiers=PROBE_ROUTER_TIERS)),
            System("adaptive-thesis", f"the thesis' tiers and prompt, no cascade ({how})",
                   PipelineConfig(**routed, tiers=THESIS_TIERS, prompt_layout="evidence_first", max_escalations=0)),
            System("routing", f"the thesis tier's k and token budget only ({how})",
                   PipelineConfig(**routed, tiers=_ladder(rerank=False, correct=False, context_chars=None),
                                  prompt_layout="evidence_first", max_escalations=0)),
            System("routing+compression", f"the thesis' routing and compression ({how})",
                   PipelineConfig(**routed, tiers=_ladder(rerank=False, correct=False), prompt_layout="evidence_first",
                                  max_escalations=0)),
            System("retrieve-or-not", "a gate on the question and a top-10 probe: closed book or k = 5 (RAGRouter)",
                   PipelineConfig(policy="retrieve-or-not")),
            System("lazy", "a summary of the top documents first; the top passages appended when unsure (L-RAG)",
                   PipelineConfig(policy="lazy")),
            System("self-route", "the generator chooses straight, step-by-step or retrieval",
                   PipelineConfig(policy="self-route")),
            System("no-retrieval", "closed book: the generator alone",
                   PipelineConfig(policy="fixed", tier=CLOSED_BOOK.name, tiers={CLOSED_BOOK.name: CLOSED_BOOK})),
            System("oracle", "the gold context handed to the generator, uncompressed",
                   PipelineConfig(policy="baseline", baseline=replace(BASELINE, name="oracle")), oracle=True),
        )
    }


def select(names: str | list[str], adaptive_tier: str | None = None) -> list[System]:
    available = all_systems(adaptive_tier)
    wanted = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
    unknown = [n for n in wanted if n not in available]
    if unknown or not wanted:
        raise ConfigurationError(f"unknown system(s) {unknown}; valid systems: {', '.join(available)}")
    return [available[n] for n in wanted]
