"""Routing policies simulated on the oracle labels, with no model run.

The labelling records every tier's answer, EM, F1, input tokens and latency for each training
question, so what any routing policy would have scored and spent on those questions is a lookup:
the policy picks a tier per question, and the question contributes that tier's recorded figures.

The router is scored by stratified k-fold cross-validation: each question is routed by a network
trained (with the training command's settings) on the other folds only. Rows: every fixed tier, the
router trained on each rule for unsolved questions, and the oracle (the cheapest correct tier, else
the cheapest tier), which is the ceiling any router on these labels could reach.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np

from training.fitting import fit, predict
from training.labelling import TIERS, UNSOLVED_RULES, derive_label

FOLDS = 5


def stratified_folds(labels: Sequence[int], folds: int, seed: int) -> np.ndarray:
    """The fold (0 .. folds-1) of every item: each class is shuffled and dealt round-robin, so every
    fold holds about the same share of each class."""
    labels = np.asarray(labels)
    if not 2 <= folds <= len(labels):
        raise ValueError(f"folds must be between 2 and the number of items ({len(labels)}), got {folds}")
    rng = np.random.default_rng(seed)
    assignment = np.empty(len(labels), dtype=int)
    dealt = 0
    for c in np.unique(labels):
        idx = np.flatnonzero(labels == c)
        rng.shuffle(idx)
        assignment[idx] = (dealt + np.arange(len(idx))) % folds  # continue the deal across classes
        dealt += len(idx)
    return assignment


def cross_validated_tiers(embeddings: np.ndarray, y: Sequence[int], config, folds: int = FOLDS) -> list[str]:
    """The tier a network trained without it gives each question."""
    y = np.asarray(y)
    assignment = stratified_folds(y, folds, config.seed)
    predicted = np.empty(len(y), dtype=int)
    for fold in range(folds):
        held_out = assignment == fold
        net, _ = fit(embeddings[~held_out], y[~held_out], config, len(TIERS))
        predicted[held_out] = predict(net, embeddings[held_out])
    return [TIERS[i] for i in predicted]


def outcome(records: Sequence[dict[str, Any]], tiers: Sequence[str]) -> dict[str, Any]:
    """Mean EM and F1 (in points), input tokens and latency (s) when question i is answered at tiers[i]."""
    if len(records) != len(tiers) or not records:
        raise ValueError(f"need one tier per record, got {len(tiers)} tiers for {len(records)} records")
    chosen = [record["tiers"][tier] for record, tier in zip(records, tiers, strict=True)]
    return {
        "n": len(chosen),
        "em": 100 * float(np.mean([r["em"] for r in chosen])),
        "f1": 100 * float(np.mean([r["f1"] for r in chosen])),
        "input_tokens": float(np.mean([r["input_tokens"] or 0 for r in chosen])),
        "latency_s": float(np.mean([r["latency_ms"] for r in chosen])) / 1000,
        "tiers": {t: list(tiers).count(t) for t in TIERS},
    }


def simulate(records: Sequence[dict[str, Any]], embeddings: np.ndarray, config, folds: int = FOLDS) -> dict[str, dict]:
    """Outcome of every policy on the labelled questions, keyed by a row name for the report."""
    rows = {f"fixed {tier}": outcome(records, [tier] * len(records)) for tier in TIERS}
    for rule in UNSOLVED_RULES:
        y = [TIERS.index(derive_label(r, config.threshold, rule)) for r in records]
        rule_config = dataclasses.replace(config, unsolved=rule)
        rows[f"router, {rule} labels"] = outcome(records, cross_validated_tiers(embeddings, y, rule_config, folds))
    rows["oracle"] = outcome(records, [derive_label(r, config.threshold, "cheapest") for r in records])
    return rows
