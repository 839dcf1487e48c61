"""PNG figures of a benchmark run: retrieval quality, cost, tier distribution, ablation ladder."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from pipeline.configuration import cheapest_first  # noqa: E402

LADDER = ("baseline", "routing", "routing+compression", "adaptive-thesis", "adaptive", "cascade")


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
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _save(fig, out / "retrieval.png")


def _two_panels(names: list[str], panels: list[tuple[list[float], str, str, str]], title: str):
    """Side-by-side bar charts over the same systems: (values, y label, panel title, colour) each."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, (values, ylabel, panel_title, colour) in zip(axes, panels, strict=True):
        ax.bar(names, values, color=colour)
        ax.set_ylabel(ylabel)
        ax.set_title(panel_title)
        ax.tick_params(axis="x", rotation=25)
    fig.suptitle(title)
    return fig, axes


def cost_figure(summary: dict[str, Any], out: Path) -> Path:
    names = list(summary["systems"])
    s = summary["systems"]
    evaluated = [s[n].get("prompt_tokens_evaluated_mean") for n in names]
    has_evaluated = all(v is not None and v == v for v in evaluated)  # runs before prefix reuse have none
    fig, (left, right) = _two_panels(names, [
        ([s[n]["latency_mean_ms"] / 1000 for n in names], "seconds per question (mean)", "Latency", "tab:blue"),
        (evaluated if has_evaluated else [s[n]["input_tokens_mean"] for n in names],
         "prompt tokens per question (mean)", "Prompt tokens evaluated" if has_evaluated else "Input tokens", "tab:orange"),
    ], f"Cost by system: {_title(summary)}")
    left.plot(names, [s[n]["latency_p50_ms"] / 1000 for n in names], "k_", markersize=14, label="p50")
    left.legend()
    if has_evaluated:
        right.plot(names, [s[n]["input_tokens_mean"] for n in names], "k_", markersize=14, label="input (all prompts)")
        right.legend()
    return _save(fig, out / "cost.png")


def _stacked_tiers(ax, labels: list[str], rows: list[dict[str, Any]], annotate: bool = False) -> None:
    """One stacked bar per row (a system's summary: ``tiers`` counts over ``n``), in % of questions."""
    bottom = [0.0] * len(rows)
    for tier in cheapest_first({t for row in rows for t in row["tiers"]}):
        values = [100 * row["tiers"].get(tier, 0) / max(row["n"], 1) for row in rows]
        bars = ax.bar(labels, values, bottom=bottom, label=str(tier))
        if annotate:
            ax.bar_label(bars, labels=[f"{v:.0f}%" if v >= 4 else "" for v in values], label_type="center", fontsize=8)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    ax.set_ylabel("% of questions")


def tier_figure(summary: dict[str, Any], out: Path) -> Path:
    """The tier each system answered at (where a cascade stopped, when it escalates)."""
    names = list(summary["systems"])
    fig, ax = plt.subplots(figsize=(8, 4))
    rows = [{**summary["systems"][n], "tiers": summary["systems"][n].get("final_tiers") or summary["systems"][n]["tiers"]}
            for n in names]
    _stacked_tiers(ax, names, rows)
    ax.set_title(f"Final tier: {_title(summary)}")
    ax.tick_params(axis="x", rotation=30)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _save(fig, out / "tiers.png")


def ablation_figure(summary: dict[str, Any], out: Path) -> Path | None:
    names = [n for n in LADDER if n in summary["systems"]]
    if len(names) < 2:
        return None
    s = summary["systems"]
    fig, _ = _two_panels(names, [
        ([s[n]["f1"] for n in names], "F1", "Answer quality", "tab:green"),
        ([s[n]["latency_mean_ms"] / 1000 for n in names], "seconds per question (mean)", "Latency", "tab:blue"),
    ], f"Ablation ladder: {_title(summary)}")
    return _save(fig, out / "ablation.png")


def risk_coverage_figure(summary: dict[str, Any], out: Path) -> Path | None:
    """Right answers among those given against the share given, one line per checked system, the
    threshold's operating point marked."""
    table = summary.get("abstention")
    if not table:
        return None
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, figures in table.items():
        xs, ys = zip(*figures["curve"], strict=True)
        line, = ax.plot(xs, ys, label=f"{name} (risk area {figures['aurc']:.1f})")
        answered = [r for r in figures["curve"] if r[0] <= figures["answered"] + 1e-9]
        if answered:
            ax.plot(*answered[-1], "o", color=line.get_color())
    ax.set_xlabel("questions answered (%)")
    ax.set_ylabel("right among those answered (%)")
    ax.set_title(f"Risk–coverage: {_title(summary)}")
    ax.grid(alpha=0.3)
    ax.legend()
    return _save(fig, out / "risk_coverage.png")


def _label_points(ax, points: dict[str, tuple[float, float]]) -> None:
    """Name each point just above and to the right of it; a label that would overlap one already
    placed moves up a line at a time (with a thin leader line back to its point)."""
    ax.figure.canvas.draw()  # settle the axis limits, so data map to display pixels
    boxes: list[tuple[float, float, float, float]] = []
    for name, (x, y) in sorted(points.items(), key=lambda item: item[1]):
        if math.isnan(x):
            continue
        px, py = ax.transData.transform((x, y))
        width, height = 6.2 * len(name) + 6, 12.0
        lift = 0
        while any(px + 5 < bx1 and bx0 < px + 5 + width and py + 4 + lift < by1 and by0 < py + 4 + lift + height
                  for bx0, by0, bx1, by1 in boxes) and lift < 200:
            lift += 12
        boxes.append((px + 5, py + 4 + lift, px + 5 + width, py + 4 + lift + height))
        ax.annotate(name, (x, y), textcoords="offset pixels", xytext=(5, 4 + lift), fontsize=8,
                    arrowprops={"arrowstyle": "-", "color": "0.6", "lw": 0.5} if lift else None)


def pareto_figure(summary: dict[str, Any], out: Path) -> Path | None:
    """F1 against mean latency and against mean energy per question, one point per system, the
    Pareto front (:func:`eval.aggregate.pareto_front`) joined by a line."""
    s = summary["systems"]
    front = summary.get("pareto", {})
    panels = [("latency_mean_ms", 1e-3, "mean latency per question (s)"),
              ("energy_mean_j", 1.0, "mean energy per question (J)")]
    panels = [p for p in panels if any(not math.isnan(f.get(p[0], math.nan)) for f in s.values())]
    if len(s) < 3 or not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.5), squeeze=False)
    for ax, (key, scale, label) in zip(axes[0], panels, strict=True):
        points = {name: (f.get(key, math.nan) * scale, f["f1"]) for name, f in s.items()}
        for name, (x, y) in points.items():
            on = name in front.get(key, [])
            ax.scatter([x], [y], marker="D" if on else "o", s=60 if on else 30,
                       color="tab:red" if on else "tab:gray", zorder=3)
        _label_points(ax, points)
        line = sorted((s[n][key] * scale, s[n]["f1"]) for n in front.get(key, []))
        if len(line) > 1:
            ax.plot(*zip(*line, strict=True), color="tab:red", alpha=0.5, zorder=2)
        ax.set_xlabel(label)
        ax.set_ylabel("F1")
        ax.grid(alpha=0.3)
    fig.suptitle(f"Policies: F1 against cost (◆ Pareto front), {_title(summary)}")
    return _save(fig, out / "pareto.png")


def plot_run(summary: dict[str, Any], records: list[dict[str, Any]], out: Path) -> list[Path]:
    made = [retrieval_figure(summary, out), cost_figure(summary, out), tier_figure(summary, out), ablation_figure(summary, out),
            risk_coverage_figure(summary, out), pareto_figure(summary, out)]
    return [p for p in made if p is not None]


def datasets_figure(summaries: list[dict[str, Any]], out: Path) -> Path:
    """Latency and input tokens by system and dataset, one group of bars per dataset run."""
    systems = list(dict.fromkeys(n for s in summaries for n in s["systems"]))
    labels = [_title(s) for s in summaries]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    width = 0.8 / max(len(systems), 1)
    panels = (("latency_mean_ms", 1e-3, "seconds per question (mean)", "Latency"),
              ("input_tokens_mean", 1.0, "prompt tokens per question (mean)", "Input tokens"))
    for ax, (key, scale, ylabel, title) in zip(axes, panels, strict=True):
        for i, name in enumerate(systems):
            values = [s["systems"][name][key] * scale if name in s["systems"] else 0.0 for s in summaries]
            ax.bar([x + i * width for x in range(len(summaries))], values, width, label=name)
        ax.set_xticks([x + width * (len(systems) - 1) / 2 for x in range(len(summaries))], labels, fontsize=8)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
    axes[1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle("Cost by system and dataset (each dataset one run, systems side by side)")
    return _save(fig, out / "cost_by_dataset.png")


def tiers_by_dataset_figure(summaries: list[dict[str, Any]], out: Path, system: str = "adaptive") -> Path | None:
    """Where ``system`` routed each dataset's questions: one stacked bar per dataset run (None when no
    run has that system)."""
    runs = [s for s in summaries if system in s["systems"]]
    if not runs:
        return None
    fig, ax = plt.subplots(figsize=(2.2 * len(runs) + 3, 4))
    _stacked_tiers(ax, [_title(s) for s in runs], [s["systems"][system] for s in runs], annotate=True)
    ax.set_ylim(0, 100)
    ax.tick_params(axis="x", labelsize=8)
    ax.set_title(f"Tiers the {system} system chose, by dataset")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _save(fig, out / "tiers_by_dataset.png")


def main(argv: list[str] | None = None) -> int:
    """Draw the cross-dataset figures from benchmark run folders."""
    import argparse
    import json

    parser = argparse.ArgumentParser(description="latency and input tokens by system and dataset, and the adaptive "
                                                 "system's tiers by dataset, from run folders")
    parser.add_argument("runs", nargs="+", type=Path, help="benchmark run folders (each with summary.json)")
    parser.add_argument("--out", type=Path, required=True, help="folder for cost_by_dataset.png and tiers_by_dataset.png")
    args = parser.parse_args(argv)
    missing = [str(r) for r in args.runs if not (r / "summary.json").is_file()]
    if missing:
        parser.error(f"no summary.json in: {', '.join(missing)}")
    summaries = [json.loads((r / "summary.json").read_text(encoding="utf-8")) for r in args.runs]
    args.out.mkdir(parents=True, exist_ok=True)
    print(datasets_figure(summaries, args.out))
    tiers = tiers_by_dataset_figure(summaries, args.out)
    if tiers is not None:
        print(tiers)
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
