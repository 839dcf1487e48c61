"""Knowing when not to answer, measured: the abstention table and the risk–coverage curve.

A record holds the answer as given (after the answerability check) and, beside it, the answer
the check saw (``prediction_unchecked``, ``f1_unchecked``) with the check's score; so one run
gives the figures with and without the check. An answer is *right* when its question is
answerable and its token F1 reaches :data:`CORRECT_F1`; the curve sorts the answers by the check's
score and gives, for each share answered (coverage), the share of right ones among them.
"""

from __future__ import annotations

import statistics
from typing import Any, Mapping, Sequence

from components.answerability import carried
from nodes.check_answer import RULED

CORRECT_F1 = 0.5


def is_right(record: Mapping[str, Any], f1_key: str = "f1") -> bool:
    return bool(record["answerable"]) and record[f1_key] >= CORRECT_F1


def abstention_f1(record: Mapping[str, Any], abstain: bool) -> float:
    """SQuAD 2.0's scoring of one question: an abstention scores 1 on an unanswerable question and
    0 on an answerable one; an answer scores its F1 (0 on an unanswerable question)."""
    if abstain:
        return 0.0 if record["answerable"] else 1.0
    return float(record["f1"])


def knowledge_base_f1(holds: bool, f1: float, abstained: bool) -> float:
    """One question's score against a knowledge base that may not hold its answer (NQ-open or
    TriviaQA asked of the Wikipedia summaries): where it holds a gold answer string, the answer's F1
    (an abstention 0); where it holds none it cannot state the answer, so an abstention scores 1 and
    any answer 0, even one that overlaps a gold answer."""
    if abstained:
        return 0.0 if holds else 1.0
    return f1 if holds else 0.0


def knowledge_base_scores(holds: Sequence[bool], f1: Sequence[float], withheld: Sequence[bool]) -> dict[str, float]:
    """Answers scored against the knowledge base (:func:`knowledge_base_f1`), one entry a question:
    F1 (%), the answers given, the right ones among them (F1 >= :data:`CORRECT_F1` where it holds a
    gold answer) and their share (%), and the share of the questions it holds no answer to that
    were abstained (%)."""
    def pct(values: Sequence[float]) -> float:
        return 100 * sum(values) / len(values) if values else float("nan")

    rows = list(zip(holds, f1, withheld, strict=True))
    right = [h and f >= CORRECT_F1 for h, f, w in rows if not w]
    return {"f1": pct([knowledge_base_f1(h, f, w) for h, f, w in rows]),
            "given": len(right), "right_given": sum(right), "right_share": pct(right),
            "unheld_abstained": pct([w for h, _, w in rows if not h])}


def knowledge_base_figures(rows: Sequence[Mapping[str, Any]]) -> dict[str, float] | None:
    """One system's answers scored against the knowledge base (:func:`knowledge_base_scores`), with
    the check and as given before it, or ``None`` when the records do not say whether it holds each
    answer (``kb_holds_answer``, set by the benchmark for the open-domain sets)."""
    if not rows or any("kb_holds_answer" not in r for r in rows):
        return None
    holds = [r["kb_holds_answer"] for r in rows]
    before = knowledge_base_scores(holds, [r.get("f1_unchecked", r["f1"]) for r in rows],
                                   [r.get("prediction_unchecked", r["prediction"]) == "" for r in rows])
    return {"held": 100 * sum(holds) / len(holds), "f1_unchecked": before["f1"],
            **knowledge_base_scores(holds, [r["f1"] for r in rows], [_abstained(r) for r in rows])}


def risk_coverage(pairs: Sequence[tuple[float, bool]]) -> list[tuple[float, float]]:
    """(coverage %, right among those answered %) as the threshold rises: ``pairs`` are (score,
    right) of the answers, the most likely first answered. Ties in score are answered together."""
    ordered = sorted(pairs, key=lambda p: -p[0])
    curve, right = [], 0
    for n, (score, ok) in enumerate(ordered, 1):
        right += ok
        if n == len(ordered) or ordered[n][0] != score:
            curve.append((100 * n / len(ordered), 100 * right / n))
    return curve


def area_under(curve: Sequence[tuple[float, float]]) -> float:
    """Mean risk (100 − accuracy, %) over the curve's coverage, by the trapezoid rule from its first point."""
    if len(curve) < 2:
        return 100 - curve[0][1] if curve else float("nan")
    area = sum((c1 - c0) * ((100 - a0) + (100 - a1)) / 2 for (c0, a0), (c1, a1) in zip(curve, curve[1:], strict=False))
    return area / (curve[-1][0] - curve[0][0])


KNOB = (0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)
"""Thresholds the report shows the figures at, for choosing the knob."""


def at_threshold(rows: Sequence[Mapping[str, Any]], threshold: float) -> dict[str, float]:
    """Overall F1, answerable F1 and the share answered had the check's knob been ``threshold``, from
    the recorded scores and the answers as given before the check (a question read as multi-hop, or an
    answer the Wikipedia check scored, held to what the knob gives it, :func:`components.answerability.carried`,
    where the record says how)."""
    def abstains(r: Mapping[str, Any]) -> bool:
        check = r["answerability"]
        fitted = check.get("fitted_thresholds")
        mine = (carried(threshold, fitted[0], fitted[1])
                if fitted and (check.get("multi_hop") or check.get("fit_on") == "wikipedia") else threshold)
        # an answer a rule withholds is withheld at any bar but 0, which never abstains (nodes.check_answer.RULED)
        return (check["by"] == "model" or (check["by"] in RULED and threshold > 0)
                or (check["score"] is not None and check["score"] < mine))

    scored = [(r, abstains(r)) for r in rows]
    f1 = [abstention_f1({"answerable": r["answerable"], "f1": r["f1_unchecked"]}, a) for r, a in scored]
    answerable = [f for f, (r, _) in zip(f1, scored, strict=True) if r["answerable"]]
    return {"threshold": threshold, "f1": 100 * sum(f1) / len(f1),
            "f1_answerable": 100 * sum(answerable) / len(answerable) if answerable else float("nan"),
            "answered": 100 * sum(not a for _, a in scored) / len(scored)}


def _abstained(record: Mapping[str, Any]) -> bool:
    return record["prediction"] == ""


def abstention_figures(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The check's figures over one system's records, or ``None`` when they hold no check."""
    checked = [r for r in rows if r.get("answerability")]
    if not checked or len(checked) < len(rows):
        return None
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]

    def pct(values: Sequence[float]) -> float:
        return 100 * sum(values) / len(values) if values else float("nan")

    added = [r["timings_ms"].get("check_answer", 0.0) for r in rows]
    latency = [r["latency_ms"] for r in rows]
    figures: dict[str, Any] = {
        "n": len(rows),
        "f1": pct([r["f1"] for r in rows]), "em": pct([r["em"] for r in rows]),
        "f1_unchecked": pct([r["f1_unchecked"] for r in rows]), "em_unchecked": pct([r["em_unchecked"] for r in rows]),
        "answered": pct([not _abstained(r) for r in rows]),
        "f1_answerable": pct([r["f1"] for r in answerable]),
        "f1_answerable_unchecked": pct([r["f1_unchecked"] for r in answerable]),
        "false_abstention": pct([_abstained(r) for r in answerable]),
        "by_model": pct([r["answerability"]["by"] == "model" for r in rows]),
        # the knob's threshold (a single-hop question's) and, where the check held multi-hop ones to another, theirs
        "threshold": next((r["answerability"]["threshold"] for r in rows if not r["answerability"].get("multi_hop")),
                          checked[0]["answerability"]["threshold"]),
        "threshold_multi_hop": next((r["answerability"]["threshold"] for r in rows if r["answerability"].get("multi_hop")),
                                    None),
        "multi_hop": pct([bool(r["answerability"].get("multi_hop")) for r in rows]),
        "check_p50_ms": statistics.median(added),
        "latency_p50_ms": statistics.median(latency),
        "latency_p50_without_check_ms": statistics.median([t - a for t, a in zip(latency, added, strict=True)]),
    }
    figures["median_time_added"] = 100 * (figures["latency_p50_ms"] / figures["latency_p50_without_check_ms"] - 1)
    if unanswerable:
        figures["unanswerable_abstained"] = pct([_abstained(r) for r in unanswerable])
        figures["unanswerable_abstained_unchecked"] = pct([r["prediction_unchecked"] == "" for r in unanswerable])
        figures["never_answer_f1"] = pct([not r["answerable"] for r in rows])
    pairs = [(r["answerability"]["score"] if r["answerability"]["score"] is not None else 1.0, is_right(r, "f1_unchecked"))
             for r in rows]
    curve = risk_coverage(pairs)
    figures["curve"] = curve
    figures["aurc"] = area_under(curve)
    figures["knob"] = [at_threshold(rows, t) for t in KNOB]
    return figures
