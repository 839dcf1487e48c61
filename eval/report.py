"""The benchmark's Markdown report, laid out like the thesis' tables."""

from __future__ import annotations

import math
from typing import Any

from eval import targets, time_model
from eval.systems import System

_ROWS = [
    ("Exact Match", "em", "{:.1f}"), ("F1", "f1", "{:.1f}"),
    ("F1 (answerable)", "f1_answerable", "{:.1f}"),
    ("F1 had answers been given as written", "f1_as_written", "{:.1f}"),
    ("Answers given in short form (%)", "short_form_rate", "{:.1f}"),
    ("EM (unanswerable: abstained)", "em_unanswerable", "{:.1f}"),
    ("Recall@5", "recall@5", "{:.1f}"), ("Recall@10", "recall@10", "{:.1f}"),
    ("Precision@5", "precision@5", "{:.1f}"), ("MRR", "mrr", "{:.1f}"),
    ("Supporting-sentence recall", "supporting_sentence_recall", "{:.1f}"),
    ("Latency mean (s)", "latency_mean_ms", "{:.2f}", 1e-3), ("Latency p50 (s)", "latency_p50_ms", "{:.2f}", 1e-3),
    ("Latency p95 (s)", "latency_p95_ms", "{:.2f}", 1e-3),
    ("Input tokens", "input_tokens_mean", "{:.0f}"),
    ("Prompt tokens evaluated", "prompt_tokens_evaluated_mean", "{:.0f}"), ("Output tokens", "output_tokens_mean", "{:.1f}"),
    ("Decoding passes", "decode_passes_mean", "{:.1f}"),
    ("Non-generation work p50 (ms)", "overhead_p50_ms", "{:.1f}"),
    ("Passages in prompt", "passages_in_prompt_mean", "{:.1f}"), ("Correction fired (%)", "correction_rate", "{:.1f}"),
    ("Retrievals per question", "retrievals_mean", "{:.2f}"), ("Energy per question (J)", "energy_mean_j", "{:.1f}"),
]


def _cell(figures: dict, key: str, fmt: str, scale: float = 1.0) -> str:
    value = figures.get(key)
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else fmt.format(value * scale)


def _by_tier_table(table: dict[str, dict[str, float]] | None, system: str, title: str, column: str,
                   tokens: tuple[str, str]) -> list[str]:
    """``system``'s questions grouped by tier (:func:`eval.aggregate.by_routed_tier`), beside the baseline."""
    if not table:
        return []
    key, label = tokens
    lines = ["", f"## {title}", "", "Each group's questions, beside the baseline on the same questions.", "",
             f"| {column} | questions | F1 {system} / baseline | latency (s) {system} / baseline "
             f"| {label} {system} / baseline |", "| --- | --- | --- | --- | --- |"]
    for tier, r in table.items():
        lines.append(f"| {tier} | {r['n']} | {r[f'f1_{system}']:.1f} / {r['f1_baseline']:.1f} | "
                     f"{r[f'latency_ms_{system}'] / 1000:.2f} / {r['latency_ms_baseline'] / 1000:.2f} | "
                     f"{r[f'{key}_{system}']:.0f} / {r[f'{key}_baseline']:.0f} |")
    return lines


HEADLINES = ("cascade", "adaptive")
"""The systems the report's first table sets against the baseline, the first one run."""


def headline_system(names) -> str | None:
    """The system the report compares with the baseline first: the first of :data:`HEADLINES` run."""
    return next((n for n in HEADLINES if n in names), None)


def markdown_report(summary: dict[str, Any], meta: dict[str, Any], systems: dict[str, System]) -> str:
    s = summary["systems"]
    lines = [f"# {meta['dataset']} {meta['split']}: {summary['questions']} questions, {meta['model']}", ""]
    lines.append(f"Command: `{meta['command']}`  ")
    answering = f"answering {meta['answering_s'] / 60:.1f} min (all systems, every invocation); " if "answering_s" in meta else ""
    lines.append(f"Seed {meta['seed']}; {answering}wall time of the last invocation {meta['wall_s'] / 60:.1f} min; "
                 f"peak RSS {meta['peak_rss_mb']:.0f} MB (over every invocation); index: {meta['index_passages']:,} passages.")
    if meta.get("router"):
        lines.append(f"Tier router: weights sha256 `{str(meta['router']['weights_sha256'])[:16]}…`, trained on "
                     f"{meta['router']['labelled_questions']} labelled questions.")
    if "answer_coverage" in meta:
        lines.append(f"Questions with a gold answer string anywhere in the corpus: {meta['answer_coverage']:.1f}% "
                     "(an upper bound on what retrieval can find).")
    lines.append("")
    headline = headline_system(s)
    if "baseline" in s and headline:
        b, a = s["baseline"], s[headline]
        lines += [f"| metric | baseline (k = 5) | {headline} | Δ |", "| --- | --- | --- | --- |"]
        for label, key, fmt, *scale in _ROWS:
            if key in b or key in a:
                k = scale[0] if scale else 1.0
                bv, av = b.get(key), a.get(key)
                delta = "–" if bv is None or av is None or math.isnan(bv) or math.isnan(av) else f"{(av - bv) * k:+.2f}"
                lines.append(f"| {label} | {_cell(b, key, fmt, k)} | {_cell(a, key, fmt, k)} | {delta} |")
        lines.append(f"| **Speed-up factor** | 1.00× | {a['speedup_vs_baseline']:.2f}× | |")
        lines.append(f"| **Input-token reduction** | – | {a['input_token_reduction_vs_baseline']:.1f}% | |")
        lines.append(f"| **Evaluated-token reduction** | – | {a['evaluated_token_reduction_vs_baseline']:.1f}% | |")
        lines.append("")
        lines.append(f"{headline.capitalize()}: {systems[headline].description}. Both systems start every question "
                     "from the same warm instruction prefix.")
        lines.append("")
    names = list(s)
    lines += ["## All systems", "", "| metric | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
    for label, key, fmt, *scale in _ROWS:
        if any(key in s[n] for n in names):
            k = scale[0] if scale else 1.0
            lines.append(f"| {label} | " + " | ".join(_cell(s[n], key, fmt, k) for n in names) + " |")
    if "baseline" in s:
        lines.append("| Speed-up vs baseline | " + " | ".join(f"{s[n]['speedup_vs_baseline']:.2f}×" for n in names) + " |")
        reductions = " | ".join(f"{s[n]['input_token_reduction_vs_baseline']:.1f}%" for n in names)
        lines.append(f"| Input-token reduction | {reductions} |")
        evaluated = " | ".join(f"{s[n]['evaluated_token_reduction_vs_baseline']:.1f}%" for n in names)
        lines.append(f"| Evaluated-token reduction | {evaluated} |")
    if "baseline-cold" in s:
        lines.append("| Speed-up vs previous release (baseline-cold) | "
                     + " | ".join(f"{s[n]['speedup_vs_baseline_cold']:.2f}×" for n in names) + " |")
    lines.append("| Tiers | " + " | ".join(", ".join(f"{t}: {c}" for t, c in s[n]["tiers"].items()) for n in names) + " |")
    lines.append("| Final tiers | " + " | ".join(", ".join(f"{t}: {c}" for t, c in s[n]["final_tiers"].items())
                                                for n in names) + " |")
    lines.append("| Escalations | " + " | ".join(", ".join(f"{t}: {c}" for t, c in sorted(s[n]["escalations"].items()))
                                                for n in names) + " |")
    for key, label in (("check_extension_rate", "Extended by the check"), ("rule_extension_rate", "Extended after a rule")):
        if any(s[n].get(key) for n in names):
            lines.append(f"| {label} | " + " | ".join(f"{s[n].get(key, 0.0):.1f}%" for n in names) + " |")
    if len(summary.get("cascade_by_start_tier") or {}) > 1:  # the question-type model started some lower
        lines += _by_tier_table(summary["cascade_by_start_tier"], "cascade", "Cascade by the tier it started at",
                                "first tier", ("evaluated", "prompt tokens evaluated"))
    lines += _by_tier_table(summary.get("cascade_by_final_tier"), "cascade", "Cascade by the tier it stopped at",
                            "final tier", ("evaluated", "prompt tokens evaluated"))
    lines += _by_tier_table(summary.get("adaptive_by_tier"), "adaptive", "Adaptive by routed tier", "tier",
                            ("input_tokens", "input tokens"))
    lines += time_model.markdown(summary.get("time_model"))
    lines += _policy_table(summary, systems)
    lines += _abstention_table(summary.get("abstention"))
    lines += _knowledge_base_table(summary.get("knowledge_base"))
    lines += targets.markdown(summary, meta["dataset"], headline)
    lines += ["", "Systems:"] + [f"- **{n}**: {systems[n].description}" for n in names]
    return "\n".join(lines) + "\n"


def _policy_table(summary: dict[str, Any], systems: dict[str, System]) -> list[str]:
    """Every routing policy side by side, with which ones are on the Pareto front (F1 against
    latency, and against energy)."""
    from eval.systems import POLICY_SYSTEMS

    s = summary["systems"]
    names = [n for n in s if n in POLICY_SYSTEMS]
    if len(names) < 3:
        return []
    front = summary.get("pareto", {})
    methods = sorted({m for n in names for m in s[n].get("energy_methods", [])})
    lines = ["", "## The routing policies side by side", "",
             "Every policy is a configuration of the same compiled graph; the questions were interleaved and each "
             f"started from the same warm state. Energy is {' and '.join(methods) or 'not recorded'} "
             "(components/energy.py). ◆ marks the Pareto front: no other policy is both cheaper and better on F1 "
             "(the oracle, handed the gold context, is a reference and never on it).", "",
             "| policy | EM | F1 | latency mean / p95 (s) | prompt tokens evaluated | retrievals / question | "
             "energy / question (J) | front: latency | front: energy |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for n in names:
        f = s[n]
        lines.append(f"| {n} | {_cell(f, 'em', '{:.1f}')} | {_cell(f, 'f1', '{:.1f}')} | "
                     f"{_cell(f, 'latency_mean_ms', '{:.2f}', 1e-3)} / {_cell(f, 'latency_p95_ms', '{:.2f}', 1e-3)} | "
                     f"{_cell(f, 'prompt_tokens_evaluated_mean', '{:.0f}')} | {_cell(f, 'retrievals_mean', '{:.2f}')} | "
                     f"{_cell(f, 'energy_mean_j', '{:.1f}')} | {'◆' if n in front.get('latency_mean_ms', []) else ''} | "
                     f"{'◆' if n in front.get('energy_mean_j', []) else ''} |")
    lines += ["", "![policies: F1 against latency and energy](pareto.png)"]
    return lines


def _knowledge_base_table(table: dict[str, dict[str, Any]] | None) -> list[str]:
    """The answers scored against the knowledge base, which may not hold them (the open-domain sets)."""
    if not table:
        return []
    names = list(table)
    held = table[names[0]]["held"]
    lines = ["", "## Against the knowledge base", "",
             f"The knowledge base holds a gold answer string for {held:.1f}% of these questions. Where it holds none it "
             "cannot state the answer: saying so scores 1 and any answer 0; where it holds one, the answer scores its F1 "
             "and an abstention 0 (a string found in an unrelated passage makes this generous to answering). Both F1 "
             "columns come from the same answers, the second as given before the check.", "",
             "| metric | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names),
             "| F1 against the knowledge base (with the check / without) | "
             + " | ".join(f"{table[n]['f1']:.1f} / {table[n]['f1_unchecked']:.1f}" for n in names) + " |"]
    for label, key, fmt in (("Answers given", "given", "d"), ("Right answers given", "right_given", "d"),
                            ("Right among the answers given %", "right_share", ".1f"),
                            ("Questions it holds no answer to, abstained %", "unheld_abstained", ".1f")):
        lines.append(f"| {label} | " + " | ".join(format(table[n][key], fmt) for n in names) + " |")
    return lines


def _abstention_table(table: dict[str, dict[str, Any]] | None) -> list[str]:
    """With and without the answerability check, from the same answers."""
    if not table:
        return []
    names = list(table)
    squad = any("unanswerable_abstained" in table[n] for n in names)
    rows = [("Overall F1 (with the check / without)", "f1", "f1_unchecked"),
            ("Overall EM", "em", "em_unchecked"),
            ("Answerable F1", "f1_answerable", "f1_answerable_unchecked")]
    if squad:
        rows.append(("Unanswerable abstained %", "unanswerable_abstained", "unanswerable_abstained_unchecked"))
    lines = ["", "## Knowing when not to answer", "",
             "Each answer is checked by the answerability model (fit on the train splits) and withheld below the "
             "threshold. Both columns come from the same answers: the second scores them as given before the check.",
             "", "| metric | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
    for label, key, unchecked in rows:
        lines.append(f"| {label} | " + " | ".join(f"{table[n][key]:.1f} / {table[n][unchecked]:.1f}" for n in names) + " |")
    for label, key, fmt in (("False abstentions on answerable %", "false_abstention", ".1f"),
                            ("Answered %", "answered", ".1f"),
                            ("Abstained by the model itself %", "by_model", ".1f"),
                            ("Risk–coverage area (mean risk %, lower is better)", "aurc", ".1f"),
                            ("Check time p50 (ms)", "check_p50_ms", ".1f"),
                            ("Median time added by the check node %", "median_time_added", ".1f")):
        lines.append(f"| {label} | " + " | ".join(format(table[n][key], fmt) for n in names) + " |")
    if any(table[n].get("threshold_multi_hop") is not None for n in names):  # a threshold per question type
        lines.append("| Threshold (single-hop / multi-hop questions) | " + " | ".join(
            f"{table[n]['threshold']:.3f} / " + ("–" if table[n].get("threshold_multi_hop") is None
                                                else f"{table[n]['threshold_multi_hop']:.3f}") for n in names) + " |")
        lines.append("| Read as multi-hop % | " + " | ".join(f"{table[n].get('multi_hop', 0.0):.1f}" for n in names) + " |")
    else:
        lines.append("| Threshold | " + " | ".join(f"{table[n]['threshold']:.3f}" for n in names) + " |")
    if squad:
        lines.append("| Never answering: overall F1 | " + " | ".join(f"{table[n]['never_answer_f1']:.1f}" for n in names)
                     + " |")
    for n in names:
        lines += ["", f"{n} at other thresholds (the same answers, rescored):", "",
                  "| threshold | overall F1 | answerable F1 | answered % |", "| --- | --- | --- | --- |"]
        lines += [f"| {k['threshold']:.2f} | {k['f1']:.1f} | {k['f1_answerable']:.1f} | {k['answered']:.1f} |"
                  for k in table[n]["knob"]]
    lines += ["", "![risk–coverage](risk_coverage.png)"]
    return lines
