"""The open issues' targets, judged in every benchmark report: met or missed, by how much, and on a
miss the run's own figures that say what limits it.

A benchmark on questions nobody tuned on is how the targets are checked, so the report states the
verdict itself rather than leaving it to a reader with the issue open beside it. The targets are
data (:data:`TARGETS`); each reads the run's summary (:func:`eval.aggregate.aggregate`, with the
answerability figures of :func:`eval.abstention.abstention_figures` and the time model of
:mod:`eval.time_model`).

- #19, the adaptive system against the k = 5 baseline given the same prefix reuse: at least 1.6×
  faster, at least 45% fewer prompt tokens evaluated, at most 0.5 F1 lost, non-generation work at
  most 30 ms at the median.
- #15, every system with the answerability check: on SQuAD 2.0, overall F1 at least 60, answerable
  F1 at least 58, at least half of the unanswerable questions abstained; on HotpotQA, at most one F1
  point lost to false abstentions; everywhere, the check adds at most 5% to the median time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

Summary = Mapping[str, Any]


@dataclass(frozen=True)
class Target:
    issue: int
    what: str
    bound: float
    at_least: bool
    unit: str
    measure: Callable[[Summary, str], float | None]
    """The run's figure for a system, or ``None`` where the run does not measure it."""
    limits: Callable[[Summary, str], str]
    """On a miss: the figures of the run that say what holds the system back."""
    datasets: tuple[str, ...] = ()
    """The datasets the target is set on (empty: every one)."""
    against_baseline: bool = False
    """Judged for the adaptive system against the baseline (else for every system with the check)."""

    @property
    def goal(self) -> str:
        return f"{'≥' if self.at_least else '≤'} {self.bound:g}{self.unit}"

    def margin(self, value: float) -> float:
        """How far past the bound ``value`` is: positive when met."""
        return value - self.bound if self.at_least else self.bound - value


def _system(summary: Summary, name: str) -> Mapping[str, Any]:
    return summary["systems"][name]


def _check(summary: Summary, name: str) -> Mapping[str, Any] | None:
    return (summary.get("abstention") or {}).get(name)


def _timing(summary: Summary, name: str) -> Mapping[str, Any] | None:
    return ((summary.get("time_model") or {}).get("systems") or {}).get(name)


def _speed_limits(summary: Summary, name: str) -> str:
    mine, base = _timing(summary, name), _timing(summary, "baseline")
    if not mine or not base:
        return ""
    return (f"prompt evaluation is {mine['prompt_ms']:.0f} of its {mine['latency_ms']:.0f} ms ({mine['evaluated']:.0f} "
            f"tokens evaluated, the baseline {base['evaluated']:.0f}); decoding takes {mine['decoding_ms']:.0f} ms, as "
            f"the baseline's {base['decoding_ms']:.0f}, whatever the evidence")


def _token_limits(summary: Summary, name: str) -> str:
    mine, base = _system(summary, name), _system(summary, "baseline")
    escalated = sum(c for e, c in mine.get("escalations", {}).items() if int(e) > 0) / max(1, mine.get("n", 1))
    return (f"{mine['passages_in_prompt_mean']:.1f} passages in the prompt on average (the baseline "
            f"{base['passages_in_prompt_mean']:.1f}); {100 * escalated:.0f}% of questions extended")


def _f1_lost(summary: Summary, name: str) -> float:
    return _system(summary, "baseline")["f1"] - _system(summary, name)["f1"]


def _f1_limits(summary: Summary, name: str) -> str:
    mine, base = _check(summary, name), _check(summary, "baseline")
    if not mine or not base:
        return ""
    return (f"before the check its F1 is {mine['f1_unchecked'] - base['f1_unchecked']:+.2f} against the baseline's; the "
            f"check changes its F1 by {mine['f1'] - mine['f1_unchecked']:+.2f} and the baseline's by "
            f"{base['f1'] - base['f1_unchecked']:+.2f}")


def _overall_limits(summary: Summary, name: str) -> str:
    check = _check(summary, name)
    if not check:
        return ""
    best = max(check["knob"], key=lambda k: k["f1"])
    return (f"{check['f1_unchecked']:.1f} before the check; at the knob's thresholds in the table above these answers "
            f"reach at most {best['f1']:.1f} (at {best['threshold']:.2f}, answerable {best['f1_answerable']:.1f}): how "
            f"well the check ranks right answers above the rest (risk–coverage area {check['aurc']:.1f}) is the limit")


def _answerable_limits(summary: Summary, name: str) -> str:
    check = _check(summary, name)
    return "" if not check else (f"{check['f1_answerable_unchecked']:.1f} before the check; "
                                 f"{check['false_abstention']:.1f}% of answerable questions withheld")


def _abstained_limits(summary: Summary, name: str) -> str:
    check = _check(summary, name)
    return "" if not check else (f"{check['unanswerable_abstained_unchecked']:.1f}% abstained by the model itself; the "
                                 f"rest below the threshold {check['threshold']:.3f}")


def _withheld_limits(summary: Summary, name: str) -> str:
    check = _check(summary, name)
    return "" if not check else (f"{check['false_abstention']:.1f}% of the answers withheld; each right one of "
                                 f"{check['n']} questions costs up to {100 / check['n']:.2f} points")


def _checked(key: str) -> Callable[[Summary, str], float | None]:
    def measure(summary: Summary, name: str) -> float | None:
        check = _check(summary, name)
        return None if not check or key not in check else float(check[key])
    return measure


def _hotpot_loss(summary: Summary, name: str) -> float | None:
    check = _check(summary, name)
    return None if not check else check["f1_unchecked"] - check["f1"]


TARGETS: tuple[Target, ...] = (
    Target(19, "speed-up over the baseline", 1.6, True, "×",
           lambda s, n: _system(s, n)["speedup_vs_baseline"], _speed_limits, against_baseline=True),
    Target(19, "fewer prompt tokens evaluated than the baseline", 45.0, True, "%",
           lambda s, n: _system(s, n)["evaluated_token_reduction_vs_baseline"], _token_limits, against_baseline=True),
    Target(19, "F1 lost to the baseline", 0.5, False, " pt", _f1_lost, _f1_limits, against_baseline=True),
    Target(19, "non-generation work p50", 30.0, False, " ms",
           lambda s, n: _system(s, n).get("overhead_p50_ms"), lambda s, n: "", against_baseline=True),
    Target(15, "overall F1 with the check", 60.0, True, "", _checked("f1"), _overall_limits, ("squad",)),
    Target(15, "answerable F1", 58.0, True, "", _checked("f1_answerable"), _answerable_limits, ("squad",)),
    Target(15, "unanswerable questions abstained", 50.0, True, "%", _checked("unanswerable_abstained"),
           _abstained_limits, ("squad",)),
    Target(15, "F1 lost to false abstentions", 1.0, False, " pt", _hotpot_loss, _withheld_limits, ("hotpotqa",)),
    # the check node's own time: the question's likelihood it reads is spent in generate, measured by running the
    # cascade beside cascade-no-likelihood (README: the benchmark made fair, session 37)
    Target(15, "median time added by the check node (not the likelihood it reads in generate)", 5.0, False, "%",
           _checked("median_time_added"), lambda s, n: ""),
)


def verdicts(summary: Summary, dataset: str, headline: str | None) -> list[dict[str, Any]]:
    """Each target that applies to this run, per system it judges: the figure, whether it is met,
    the margin, and (on a miss) what limits it. #19's targets judge ``headline`` against the
    baseline; #15's, the baseline and ``headline`` where the run checked their answers."""
    systems = summary["systems"]
    rows = []
    for target in TARGETS:
        if target.datasets and dataset not in target.datasets:
            continue
        if target.against_baseline:
            judged = [headline] if headline and "baseline" in systems and headline in systems else []
        else:
            judged = [n for n in ("baseline", headline) if n and n in systems]
        for name in judged:
            value = target.measure(summary, name)
            if value is None:
                continue
            margin = target.margin(value)
            met = margin >= -1e-9
            rows.append({"issue": target.issue, "target": target.what, "goal": target.goal, "system": name,
                         "value": value, "unit": target.unit, "met": met, "margin": margin,
                         "limits": "" if met else target.limits(summary, name)})
    return rows


def verdict_text(row: Mapping[str, Any], emphasis: str = "") -> str:
    """A verdict row (:func:`verdicts`) as it is written: "met (+0.41×)", or "missed by 2.26" inside ``emphasis``."""
    if row["met"]:
        return f"met ({row['margin']:+.2f}{row['unit']})"
    return f"{emphasis}missed by {-row['margin']:.2f}{row['unit']}{emphasis}"


def markdown(summary: Summary, dataset: str, headline: str | None) -> list[str]:
    """The report's section, or nothing when no target applies to the run."""
    rows = verdicts(summary, dataset, headline)
    if not rows:
        return []
    lines = ["", "## Against the open issues' targets", "",
             "Judged on this run's questions (eval/targets.py); a miss says by how much and what this run's figures say "
             "limits it.", "", "| issue | target | system | measured | verdict | what limits it |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| #{r['issue']} | {r['target']} {r['goal']} | {r['system']} | {r['value']:.2f}{r['unit']} | "
                     f"{verdict_text(r, '**')} | {r['limits'] or '–'} |")
    return lines
