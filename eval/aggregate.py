"""Aggregating answer records: per-system figures over the questions every system answered, ratios
to the baseline, and the adaptive system's questions split by the tier it routed them to."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Any, Iterable

from eval.abstention import abstention_figures, knowledge_base_figures
from eval.metrics import f1_score
from eval.runner import RETRIEVAL_METRICS
from pipeline.configuration import cheapest_first

ANSWER_METRICS = ("em", "f1")
REFERENCE_ROWS = ("oracle",)
"""Rows no user can deploy (the gold context is handed over): shown, never on the Pareto front."""


def _mean(values: Iterable[float | None]) -> float:
    clean = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(clean) / len(clean) if clean else math.nan


def _passes(record: dict[str, Any]) -> int | None:
    """The forward passes a question's answers took to generate, or None when a step did not say."""
    passes = [step.get("decode_passes") for step in record.get("steps") or []]
    return None if not passes or any(p is None for p in passes) else sum(passes)


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    low, high = math.floor(pos), math.ceil(pos)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def aggregate(records: list[dict[str, Any]], systems: list[str]) -> dict[str, Any]:
    """Per-system figures over the questions every system has answered, and ratios to baseline."""
    by_system: dict[str, dict[str, dict]] = defaultdict(dict)
    for r in records:
        by_system[r["system"]][r["id"]] = r
    common = set.intersection(*(set(by_system[s]) for s in systems)) if systems else set()
    summary: dict[str, Any] = {"questions": len(common), "systems": {}}
    for name in systems:
        rows = [by_system[name][i] for i in sorted(common)]
        latencies = [r["latency_ms"] for r in rows]
        figures = {
            "n": len(rows),
            **{m: 100 * _mean(r[m] for r in rows) for m in ANSWER_METRICS},
            **{m: 100 * _mean(r.get(m) for r in rows) for m in RETRIEVAL_METRICS},
            "latency_mean_ms": _mean(latencies),
            "latency_p50_ms": _percentile(latencies, 0.5),
            "latency_p95_ms": _percentile(latencies, 0.95),
            "input_tokens_mean": _mean(r["input_tokens"] for r in rows),
            "prompt_tokens_evaluated_mean": _mean(r.get("prompt_tokens_evaluated") for r in rows),
            "overhead_p50_ms": _percentile([sum(ms for node, ms in r.get("timings_ms", {}).items() if node != "generate")
                                            for r in rows], 0.5),
            "output_tokens_mean": _mean(r["output_tokens"] for r in rows),
            # forward passes spent generating, over every answer of the question (prompt lookup verifies several
            # tokens in one); None for records from before they were counted
            "decode_passes_mean": _mean(_passes(r) for r in rows),
            "passages_in_prompt_mean": _mean(r["passages_in_prompt"] for r in rows),
            "correction_rate": 100 * _mean(float(r["corrected"]) for r in rows),
            "tiers": dict(Counter(r["tier"] for r in rows)),
            "final_tiers": dict(Counter(r.get("final_tier") or r["tier"] for r in rows)),
            "escalations": dict(Counter(str(r.get("escalations", 0)) for r in rows)),
            # questions the answerability check sent up the ladder at least once (extend_before_abstaining)
            "check_extension_rate": 100 * _mean(float(any(s.get("extended_by") == "check" for s in r.get("steps") or []))
                                                for r in rows),
            # questions sent up the ladder because a rule said the answer was another's (extend_after_rule)
            "rule_extension_rate": 100 * _mean(float(any(s.get("extended_by") == "rule" for s in r.get("steps") or []))
                                               for r in rows),
            "retrievals_mean": _mean(r.get("retrievals") for r in rows),
            "energy_mean_j": _mean(r.get("energy_j") for r in rows),
            "energy_methods": sorted({r["energy_method"] for r in rows if r.get("energy_method")}),
            # answers given as the short form of the model's sentence, and the F1 had they been given as written
            "short_form_rate": 100 * _mean(float(bool(r.get("written_answer"))) for r in rows),
            "f1_as_written": 100 * _mean(f1_score(r["written_answer"], r["gold_answers"]) if r.get("written_answer")
                                         else r["f1"] for r in rows),
        }
        answerable = [r for r in rows if r["answerable"]]
        if len(answerable) < len(rows):  # SQuAD 2.0: report both halves
            unanswerable = [r for r in rows if not r["answerable"]]
            figures.update({
                "f1_answerable": 100 * _mean(r["f1"] for r in answerable),
                "em_unanswerable": 100 * _mean(r["em"] for r in unanswerable),
            })
        if any("supporting_sentence_recall" in r for r in rows):
            figures["supporting_sentence_recall"] = 100 * _mean(r.get("supporting_sentence_recall") for r in rows)
        summary["systems"][name] = figures
        checked = abstention_figures(rows)
        if checked is not None:
            summary.setdefault("abstention", {})[name] = checked
        against_kb = knowledge_base_figures(rows)
        if against_kb is not None:
            summary.setdefault("knowledge_base", {})[name] = against_kb
    base = summary["systems"].get("baseline")
    if base:
        for figures in summary["systems"].values():
            figures["speedup_vs_baseline"] = base["latency_mean_ms"] / figures["latency_mean_ms"]
            figures["input_token_reduction_vs_baseline"] = 100 * (1 - figures["input_tokens_mean"] / base["input_tokens_mean"])
            figures["evaluated_token_reduction_vs_baseline"] = 100 * (
                1 - figures["prompt_tokens_evaluated_mean"] / base["prompt_tokens_evaluated_mean"])
            figures["f1_delta_vs_baseline"] = figures["f1"] - base["f1"]
            figures["em_delta_vs_baseline"] = figures["em"] - base["em"]
    deployable = {n: f for n, f in summary["systems"].items() if n not in REFERENCE_ROWS}
    for cost in ("latency_mean_ms", "energy_mean_j"):
        summary.setdefault("pareto", {})[cost] = pareto_front(deployable, cost)
    cold = summary["systems"].get("baseline-cold")
    if cold:
        for figures in summary["systems"].values():
            figures["speedup_vs_baseline_cold"] = cold["latency_mean_ms"] / figures["latency_mean_ms"]
    return summary


def pareto_front(systems: dict[str, dict[str, Any]], cost: str, quality: str = "f1") -> list[str]:
    """The systems no other system beats on both counts: at most the cost and at least the quality,
    and strictly better on one. Systems without the figure are left out."""
    known = {n: f for n, f in systems.items()
             if not math.isnan(f.get(cost, math.nan)) and not math.isnan(f.get(quality, math.nan))}

    def beaten(name: str) -> bool:
        a = known[name]
        return any(b[cost] <= a[cost] and b[quality] >= a[quality] and (b[cost] < a[cost] or b[quality] > a[quality])
                   for other, b in known.items() if other != name)

    return [n for n in known if not beaten(n)]


def by_routed_tier(records: list[dict[str, Any]], system: str = "adaptive",
                   reference: str = "baseline", key: str = "tier") -> dict[str, dict[str, float]]:
    """Where routing helps: ``system``'s questions grouped by the tier it ran them at (``key``:
    ``tier``, the first, or ``final_tier``, where the cascade stopped), each group's F1, latency,
    input and evaluated tokens beside ``reference``'s on the same questions."""
    mine = {r["id"]: r for r in records if r["system"] == system}
    theirs = {r["id"]: r for r in records if r["system"] == reference}
    groups: dict[str, list[str]] = defaultdict(list)
    for qid in sorted(set(mine) & set(theirs)):
        groups[mine[qid].get(key) or mine[qid]["tier"]].append(qid)
    table = {}
    for tier in cheapest_first(groups):
        ids = groups[tier]
        row: dict[str, float] = {"n": len(ids)}
        for side, rows in ((system, mine), (reference, theirs)):
            row[f"f1_{side}"] = 100 * _mean(rows[i]["f1"] for i in ids)
            row[f"latency_ms_{side}"] = _mean(rows[i]["latency_ms"] for i in ids)
            row[f"input_tokens_{side}"] = _mean(rows[i]["input_tokens"] for i in ids)
            row[f"evaluated_{side}"] = _mean(rows[i].get("prompt_tokens_evaluated") for i in ids)
        table[tier] = row
    return table
