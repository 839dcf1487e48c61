"""PNG figures of a benchmark run: retrieval quality, cost, tier distribution, ablation ladder."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

LADDER = ("baseline", "routing", "routing+compression", "adaptive")


def _title(summary: dict[str, Any]) -> str:
    meta = summary.get("meta", {})
    return f"{meta.get('dataset', '')} {meta.get('split', '')} ({summary['questions']} questions)"


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def retrieval_figure(summary: dict[str, Any], out: Path) -> Path | None:
    metrics = ("recall@5", "recall@10", "precision@5", "mrr")
    systems = [n for n, f in summary["systems"].items() if not math.isnan(f.get("recall@5", math.nan))]
    if not systems:
        return None
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(systems)
    for i, name in enumerate(systems):
        values = [summary["systems"][name].get(m, math.nan) for m in metrics]
        ax.bar([x + i * width for x in range(len(metrics))], values, width, label=name)
    ax.set_xticks([x + width * (len(systems) - 1) / 2 for x in range(len(metrics))], [m.upper() for m in metrics])
    ax.set_ylabel("%")
    ax.set_ylim(0, 100)
    ax.set_title(f"Retrieval quality by system: {_title(summary)}")
    ax.legend(fontsize=8)
    return _save(fig, out / "retrieval.png")


def cost_figure(summary: dict[str, Any], out: Path) -> Path:
    names = list(summary["systems"])
    s = summary["systems"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.bar(names, [s[n]["latency_mean_ms"] / 1000 for n in names], color="tab:blue")
    left.errorbar(names, [s[n]["latency_p50_ms"] / 1000 for n in names], fmt="k_", markersize=14, label="p50")
    left.set_ylabel("seconds per question (mean; bar) ")
    left.set_title("Latency")
    left.legend()
    right.bar(names, [s[n]["input_tokens_mean"] for n in names], color="tab:orange")
    right.set_ylabel("prompt tokens per question (mean)")
    right.set_title("Input tokens")
    for ax in (left, right):
        ax.tick_params(axis="x", rotation=30)
    fig.suptitle(f"Cost by system: {_title(summary)}")
    return _save(fig, out / "cost.png")


def tier_figure(summary: dict[str, Any], out: Path) -> Path:
    names = list(summary["systems"])
    tiers = sorted({t for n in names for t in summary["systems"][n]["tiers"]}, key=str)
    fig, ax = plt.subplots(figsize=(8, 4))
    bottom = [0.0] * len(names)
    for tier in tiers:
        values = [100 * summary["systems"][n]["tiers"].get(tier, 0) / max(summary["systems"][n]["n"], 1) for n in names]
        ax.bar(names, values, bottom=bottom, label=str(tier))
        bottom = [b + v for b, v in zip(bottom, values)]
    ax.set_ylabel("% of questions")
    ax.set_title(f"Tier distribution: {_title(summary)}")
    ax.tick_params(axis="x", rotation=30)
    ax.legend(fontsize=8)
    return _save(fig, out / "tiers.png")


def ablation_figure(summary: dict[str, Any], out: Path) -> Path | None:
    names = [n for n in LADDER if n in summary["systems"]]
    if len(names) < 2:
        return None
    s = summary["systems"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.bar(names, [s[n]["f1"] for n in names], color="tab:green")
    left.set_ylabel("F1")
    left.set_title("Answer quality")
    right.bar(names, [s[n]["latency_mean_ms"] / 1000 for n in names], color="tab:blue")
    right.set_ylabel("seconds per question (mean)")
    right.set_title("Latency")
    for ax in (left, right):
        ax.tick_params(axis="x", rotation=20)
    fig.suptitle(f"Ablation ladder: {_title(summary)}")
    return _save(fig, out / "ablation.png")


def plot_run(summary: dict[str, Any], records: list[dict[str, Any]], out: Path) -> list[Path]:
    made = [retrieval_figure(summary, out), cost_figure(summary, out), tier_figure(summary, out), ablation_figure(summary, out)]
    return [p for p in made if p is not None]
