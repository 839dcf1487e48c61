"""The systems compared side by side: all are configurations of the same compiled graph.

* ``baseline``: the thesis' fixed k = 5 pipeline (no rerank, compression or correction).
* ``adaptive``: the full pipeline (routing, rerank, compression, correction) with the trained tier
  router choosing each question's tier; ``--adaptive-tier`` replaces the router by one fixed tier.
* The ablation ladder, routed the same way: ``routing`` (the chosen tier's k and token budget
  only), ``routing+compression``, then ``adaptive`` (full).
* Reference rows: ``no-retrieval`` (closed book) and ``oracle`` (the gold context, uncompressed).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pipeline.configuration import BASELINE, DEFAULT_TIERS, Budget, ConfigurationError, PipelineConfig

CLOSED_BOOK = Budget("closed-book", k=0, context_chars=None, max_new_tokens=64, rerank=False, correct=False)


@dataclass(frozen=True)
class System:
    name: str
    description: str
    pipeline: PipelineConfig
    oracle: bool = False  # the gold context is handed to the generator as the question's documents


def _ladder(**changes) -> dict[str, Budget]:
    return {name: replace(budget, **changes) for name, budget in DEFAULT_TIERS.items()}


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
            System("adaptive", f"routing, rerank, compression, correction ({how})", PipelineConfig(**routed)),
            System("routing", f"the tier's k and token budget only ({how})",
                   PipelineConfig(**routed, tiers=_ladder(rerank=False, correct=False, context_chars=None))),
            System("routing+compression", f"routing and compression ({how})",
                   PipelineConfig(**routed, tiers=_ladder(rerank=False, correct=False))),
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
