"""The cascade's ladders the graph, API and browser tests climb."""

from dataclasses import replace

from pipeline.configuration import DEFAULT_TIERS


def every_tier():
    """The default tiers, every one on the cascade's ladder (as the fitted default has them): a single-hop question
    starts at Easy."""
    return {name: replace(budget, cascade=True) for name, budget in DEFAULT_TIERS.items()}
