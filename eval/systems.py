"""The systems compared side by side: all are configurations of the same compiled graph.

* ``baseline``: the thesis' fixed k = 5 pipeline (no rerank, compression or correction).
* ``adaptive``: the full pipeline (routing, rerank, compression, correction). Until the trained
  router exists (issue 4) it runs one fixed tier, ``--adaptive-tier``; reports say so.
* The ablation ladder at the same tier: ``routing`` (the tier's k and token budget only),
  ``routing+compression``, then ``adaptive`` (full).
* Reference rows: ``no-retrieval`` (closed book) and ``oracle`` (the gold context, uncompressed).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from graph.configuration import BASELINE, DEFAULT_TIERS, Budget, ConfigurationError, PipelineConfig

CLOSED_BOOK = Budget("closed-book", k=0, context_chars=None, max_new_tokens=64, rerank=False, correct=False)


@dataclass(frozen=True)
class System:
    name: str
    description: str
    pipeline: PipelineConfig
    oracle: bool = False  # the gold context is handed to the generator as the question's documents


def _ladder(**changes) -> dict[str, Budget]:
    return {name: replace(budget, **changes) for name, budget in DEFAULT_TIERS.items()}


def all_systems(adaptive_tier: str = "medium") -> dict[str, System]:
    if adaptive_tier not in DEFAULT_TIERS:
        raise ConfigurationError(f"unknown tier {adaptive_tier!r}; valid tiers: {', '.join(DEFAULT_TIERS)}")
    fixed = f"fixed {adaptive_tier} tier: the trained router does not exist yet"
    return {
        s.name: s
        for s in (
            System("baseline", "fixed k = 5, no rerank, compression or correction", PipelineConfig(policy="baseline")),
            System("adaptive", f"routing, rerank, compression, correction ({fixed})", PipelineConfig(tier=adaptive_tier)),
            System("routing", f"the tier's k and token budget only ({fixed})",
                   PipelineConfig(tier=adaptive_tier, tiers=_ladder(rerank=False, correct=False, context_chars=None))),
            System("routing+compression", f"routing and compression ({fixed})",
                   PipelineConfig(tier=adaptive_tier, tiers=_ladder(rerank=False, correct=False))),
            System("no-retrieval", "closed book: the generator alone",
                   PipelineConfig(tier=CLOSED_BOOK.name, tiers={CLOSED_BOOK.name: CLOSED_BOOK})),
            System("oracle", "the gold context handed to the generator, uncompressed",
                   PipelineConfig(policy="baseline", baseline=replace(BASELINE, name="oracle")), oracle=True),
        )
    }


def select(names: str | list[str], adaptive_tier: str = "medium") -> list[System]:
    available = all_systems(adaptive_tier)
    wanted = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
    unknown = [n for n in wanted if n not in available]
    if unknown or not wanted:
        raise ConfigurationError(f"unknown system(s) {unknown}; valid systems: {', '.join(available)}")
    return [available[n] for n in wanted]
