"""Where a run's time goes: the machine's cost of a prompt token and of a decoding pass, fitted to
the run's own answers, and what that says about the speed-up the token counts can buy.

Generation is nearly all of a question's time, and it has two parts with different costs: the
prompt tokens the model evaluates (batched, fast per token) and the decoding passes that produce
the answer (one token each, or a few with prompt lookup; memory-bound, slow per pass). How the two
compare is a property of the CPU, not of the pipeline: session 22's machine spent 10.5 ms on a
prompt token and 36.5 ms on a pass, session 24's 6.8 and 84. The adaptive systems save prompt
tokens, not passes, so the same token savings buy a smaller speed-up where passes are dear. The
benchmark report fits both costs to every answer of the run (all systems pooled, one machine, one
sitting), splits each system's mean time with them, and shows the speed-up its evaluated-token
reduction would give at those costs, so a reader on another machine sees which part limits it.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

RATES = ("per_evaluated_token", "per_pass", "per_step")
"""The fitted costs (milliseconds): each evaluated prompt token, each decoding pass, each answer step."""


def nonnegative_rates(rows: Sequence[Sequence[float]], times: Sequence[float]) -> tuple[list[float], float]:
    """Non-negative least squares of ``times`` on the columns of ``rows``: the coefficients and R².

    No cost can be negative; an unconstrained fit trades the columns off against each other on
    noisy timings."""
    from scipy.optimize import nnls

    a = np.asarray(rows, dtype=float)
    y = np.asarray(times, dtype=float)
    coef, _ = nnls(a, y)
    residual = y - a @ coef
    spread = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float((residual ** 2).sum()) / spread if spread > 0 else math.nan
    return [float(c) for c in coef], r2


def _steps(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A record's generation steps that say what they cost (evaluated tokens, passes, time)."""
    return [s for s in record.get("steps") or []
            if all(s.get(k) is not None for k in ("prompt_tokens_evaluated", "decode_passes", "generate_ms"))]


def fit(records: Sequence[Mapping[str, Any]], systems: Sequence[str],
        headline: str | None = None) -> dict[str, Any] | None:
    """The run's time model, or ``None`` when its records do not count decoding passes (runs from
    before they were recorded) or are too few to fit three costs.

    ``rates``: milliseconds per evaluated prompt token, per decoding pass and per answer step, fitted
    to every step of every system in ``systems`` (only questions all of them answered). ``systems``:
    each system's mean latency split into prompt evaluation, decoding, per-step cost and the rest
    (the non-generation work and what the model does not explain). With a baseline and a
    ``headline`` system: the measured speed-up, the one the fitted costs give for the two systems'
    mean counts, and the one the evaluated tokens alone would give were passes and steps free."""
    by_system: dict[str, dict[str, Mapping[str, Any]]] = {name: {} for name in systems}
    for r in records:
        if r["system"] in by_system:
            by_system[r["system"]][r["id"]] = r
    common = set.intersection(*(set(rows) for rows in by_system.values())) if by_system else set()
    chosen = {name: [rows[i] for i in sorted(common)] for name, rows in by_system.items()}
    if any(len(_steps(r)) != len(r.get("steps") or []) or not r.get("steps") for rows in chosen.values() for r in rows):
        return None
    steps = [s for rows in chosen.values() for r in rows for s in _steps(r)]
    if len(steps) < 10:
        return None
    coef, r2 = nonnegative_rates([(s["prompt_tokens_evaluated"], s["decode_passes"], 1.0) for s in steps],
                                 [s["generate_ms"] for s in steps])
    per_token, per_pass, per_step = coef
    out: dict[str, Any] = {"rates_ms": dict(zip(RATES, coef, strict=True)), "r2": r2, "steps": len(steps),
                           "pass_in_tokens": per_pass / per_token if per_token > 0 else math.nan, "systems": {}}
    for name, rows in chosen.items():
        n = len(rows)
        evaluated = sum(s["prompt_tokens_evaluated"] for r in rows for s in _steps(r)) / n
        passes = sum(s["decode_passes"] for r in rows for s in _steps(r)) / n
        answers = sum(len(_steps(r)) for r in rows) / n
        latency = sum(r["latency_ms"] for r in rows) / n
        parts = {"prompt_ms": per_token * evaluated, "decoding_ms": per_pass * passes, "per_step_ms": per_step * answers}
        out["systems"][name] = {"latency_ms": latency, "evaluated": evaluated, "passes": passes, "steps": answers,
                                **parts, "rest_ms": latency - sum(parts.values()),
                                "modelled_ms": sum(parts.values())}
    base, head = out["systems"].get("baseline"), out["systems"].get(headline or "")
    if base and head:
        out["headline"] = {
            "system": headline,
            "measured": base["latency_ms"] / head["latency_ms"],
            "modelled": base["modelled_ms"] / head["modelled_ms"] if head["modelled_ms"] > 0 else math.nan,
            "tokens_only": base["evaluated"] / head["evaluated"] if head["evaluated"] > 0 else math.nan,
        }
    return out


def markdown(model: Mapping[str, Any] | None) -> list[str]:
    """The report's section for :func:`fit`'s result (nothing when there is none)."""
    if not model:
        return []
    rates = model["rates_ms"]
    lines = ["", "## Where the time goes", "",
             f"Generation time of each answer step, fitted by non-negative least squares to the run's "
             f"{model['steps']} steps (every system, this machine, R² = {model['r2']:.2f}): "
             f"**{rates['per_evaluated_token']:.2f} ms per evaluated prompt token**, "
             f"**{rates['per_pass']:.1f} ms per decoding pass** and {rates['per_step']:.0f} ms per step. "
             f"Here one decoding pass costs as much as {model['pass_in_tokens']:.0f} evaluated prompt tokens; "
             "that ratio is the CPU's, and it decides how much time a saved prompt token buys.", "",
             "| system | latency mean (ms) | prompt evaluation | decoding | per step | rest (non-generation, unexplained) "
             "| prompt evaluation share |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, s in model["systems"].items():
        share = 100 * s["prompt_ms"] / s["latency_ms"] if s["latency_ms"] > 0 else math.nan
        lines.append(f"| {name} | {s['latency_ms']:.0f} | {s['prompt_ms']:.0f} ({s['evaluated']:.0f} tokens) | "
                     f"{s['decoding_ms']:.0f} ({s['passes']:.1f} passes) | {s['per_step_ms']:.0f} ({s['steps']:.2f} steps) | "
                     f"{s['rest_ms']:.0f} | {share:.0f}% |")
    head = model.get("headline")
    if head:
        lines += ["", f"Speed-up of {head['system']} over the baseline: measured **{head['measured']:.2f}×**; "
                      f"the fitted costs give {head['modelled']:.2f}× for the two systems' mean counts; the evaluated "
                      f"tokens alone would give {head['tokens_only']:.2f}× were decoding and steps free. The gap between "
                      "the last two is what decoding and the per-step cost, which both systems pay alike, take off the "
                      "speed-up on this machine."]
    return lines
