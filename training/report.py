"""The router's training report: Markdown summary and figures like the thesis' Figures 5.1-5.3.

label distribution overall and per dataset, training loss and validation accuracy per epoch, the
validation confusion matrix, per-class precision and recall, validation accuracy against the
majority-class baseline.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from components.storage import atomic_write_text  # noqa: E402
from training.labelling import TIERS, tier_correct  # noqa: E402


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def tier_shares_figure(groups: dict[str, dict[str, int]], title: str, path: Path) -> Path:
    """Stacked bars: the share of each tier per group, with the group's size on top."""
    fig, ax = plt.subplots(figsize=(8, 4))
    names = list(groups)
    bottom = [0.0] * len(names)
    for tier in TIERS:
        shares = [100 * groups[n].get(tier, 0) / max(sum(groups[n].values()), 1) for n in names]
        ax.bar(names, shares, bottom=bottom, label=tier)
        bottom = [b + s for b, s in zip(bottom, shares, strict=True)]
    for i, n in enumerate(names):
        ax.text(i, 101, f"n={sum(groups[n].values())}", ha="center", fontsize=8)
    ax.set_ylim(0, 108)
    ax.set_ylabel("% of questions")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _save(fig, path)


def label_figure(meta: dict[str, Any], out: Path) -> Path:
    groups = {"all": meta["data"]["label_counts"], **meta["data"]["per_dataset"]}
    return tier_shares_figure(groups, "Oracle tier labels, overall and per dataset", out / "labels.png")


def training_figure(meta: dict[str, Any], out: Path) -> Path:
    history = meta["history"]
    epochs = [h["epoch"] for h in history]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.plot(epochs, [h["train_loss"] for h in history], label="training")
    left.plot(epochs, [h["val_loss"] for h in history], label="validation")
    left.set_xlabel("epoch")
    left.set_ylabel("class-weighted cross-entropy")
    left.set_title("Loss")
    left.legend()
    right.plot(epochs, [h["val_accuracy"] for h in history], color="tab:green", label="router")
    right.axhline(meta["validation"]["majority_accuracy"], color="grey", linestyle="--",
                  label=f"majority class ({meta['validation']['majority_class']})")
    right.set_xlabel("epoch")
    right.set_ylabel("validation accuracy")
    right.set_ylim(0, 1.05)
    right.set_title("Validation accuracy")
    right.legend(loc="lower right")
    return _save(fig, out / "training.png")


def confusion_figure(meta: dict[str, Any], out: Path) -> Path:
    confusion = meta["validation"]["confusion"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.imshow(confusion, cmap="Blues")
    top = max(max(row) for row in confusion) or 1
    for i, row in enumerate(confusion):
        for j, value in enumerate(row):
            left.text(j, i, str(value), ha="center", va="center", color="white" if value > top / 2 else "black")
    left.set_xticks(range(len(TIERS)), TIERS)
    left.set_yticks(range(len(TIERS)), TIERS)
    left.set_xlabel("predicted tier")
    left.set_ylabel("oracle tier")
    left.set_title("Validation confusion matrix")
    width = 0.38
    x = range(len(TIERS))
    right.bar([i - width / 2 for i in x], [_zero_nan(v) for v in meta["validation"]["precision"]], width, label="precision")
    right.bar([i + width / 2 for i in x], [_zero_nan(v) for v in meta["validation"]["recall"]], width, label="recall")
    right.set_xticks(list(x), TIERS)
    right.set_ylim(0, 1)
    right.set_title("Per-class precision and recall (validation)")
    right.legend()
    return _save(fig, out / "confusion.png")


DEV_SETS = (("squad", "dev", 500), ("hotpotqa", "dev", 200), ("nq", "dev", 500))
"""Held-out questions the report routes, to show where the router sends each dataset."""


def route_dev_sets(router, embedder, data_dir: str | None = None, seed: int = 13) -> dict[str, dict[str, int]]:
    """Tier counts of the router's decisions on seeded dev samples; a dataset without data is skipped."""
    from eval.runner import sample
    from eval.datasets import DatasetError, load

    decisions: dict[str, dict[str, int]] = {}
    for dataset, split, size in DEV_SETS:
        try:
            questions = [e.question for e in sample(load(dataset, split, data_dir), size, seed)]
        except DatasetError:
            continue
        tiers = [router.decide(embedder.embed_query(q)).tier for q in questions]
        decisions[f"{dataset} {split}"] = {t: tiers.count(t) for t in TIERS}
    return decisions


def routing_figure(decisions: dict[str, dict[str, int]], out: Path) -> Path:
    return tier_shares_figure(decisions, "Router decisions on held-out dev questions", out / "routing.png")


def _zero_nan(value: float) -> float:
    return 0.0 if math.isnan(value) else value


def _pct(value: float) -> str:
    return "–" if math.isnan(value) else f"{100 * value:.1f}%"


_UNSOLVED_TEXT = {
    "fallback": "Hard for HotpotQA and Medium for single-hop questions (the issue's rule)",
    "cheapest": "the cheapest tier (Easy)",
}


def simulation_lines(rows: dict[str, dict[str, Any]], questions: int) -> list[str]:
    """The simulated policies as a Markdown table (see :mod:`training.simulate`)."""
    from training.simulate import FOLDS

    lines = ["", "## Routing policies simulated on the labelled questions", "",
             f"What each policy would have scored and spent on the {questions} labelled questions, looked up in "
             "the per-tier answers the labelling recorded (no model is rerun). Router rows are "
             f"{FOLDS}-fold cross-validated: each question is routed by a network trained without it. The oracle "
             "takes the cheapest correct tier, else Easy: the ceiling of any router on these labels.", "",
             "| policy | EM | F1 | input tokens | latency (s) | " + " | ".join(TIERS) + " |",
             "| --- |" + " --- |" * (4 + len(TIERS))]
    for name, row in rows.items():
        lines.append(f"| {name} | {row['em']:.1f} | {row['f1']:.1f} | {row['input_tokens']:.0f} | "
                     f"{row['latency_s']:.2f} | " + " | ".join(str(row["tiers"].get(t, 0)) for t in TIERS) + " |")
    return lines


def markdown(meta: dict[str, Any], records: Sequence[dict], labels: Sequence[str],
             decisions: dict[str, dict[str, int]] | None = None) -> str:
    data, val, cfg = meta["data"], meta["validation"], meta["training"]
    last = meta["history"][-1]
    lines = [
        "# Tier router: training report", "",
        f"{data['questions']} oracle-labelled questions ({data['train']} training / {data['validation']} validation, "
        f"stratified, seed {cfg['seed']}); a tier is correct at EM = 1 or F1 ≥ {cfg['threshold']}; label = the "
        f"cheapest correct tier, else {_UNSOLVED_TEXT[cfg.get('unsolved', 'fallback')]}.",
        f"Embedder `{meta['embedder']}` ({meta['dimension']}-d); network {meta['dimension']} → "
        f"{' → '.join(str(h) for h in meta['architecture']['hidden'])} → {len(meta['labels'])}, ReLU, dropout "
        f"{meta['architecture']['dropout']}; class-weighted cross-entropy, AdamW (lr {cfg['lr']}, weight decay "
        f"{cfg['weight_decay']}), {cfg['epochs']} epochs, batch {cfg['batch_size']}.",
        f"Labels digest `{data['labels_sha256'][:16]}…`; reproduce with `python -m training.train`.", "",
        "## Validation", "",
        "| | accuracy |", "| --- | --- |",
        f"| router | **{_pct(val['accuracy'])}** |",
        f"| majority class ({val['majority_class']}) | {_pct(val['majority_accuracy'])} |",
        "| thesis (reported) | about 72% |", "",
        f"Final epoch: training loss {last['train_loss']:.3f}, validation loss {last['val_loss']:.3f}.", "",
        "| tier | precision | recall | validation items |", "| --- | --- | --- | --- |",
    ]
    for i, tier in enumerate(meta["labels"]):
        lines.append(f"| {tier} | {_pct(val['precision'][i])} | {_pct(val['recall'][i])} | {sum(val['confusion'][i])} |")
    lines += ["", "Confusion matrix (rows: oracle tier, columns: predicted):", "",
              "| | " + " | ".join(meta["labels"]) + " |", "| --- |" + " --- |" * len(meta["labels"])]
    for tier, row in zip(meta["labels"], val["confusion"], strict=True):
        lines.append(f"| {tier} | " + " | ".join(str(v) for v in row) + " |")
    lines += ["", "## Labels", "", "| dataset | " + " | ".join(TIERS) + " | questions | no tier correct |",
              "| --- |" + " --- |" * (len(TIERS) + 2)]
    for name, counts in [*data["per_dataset"].items(), ("all", data["label_counts"])]:
        rows = [r for r in records if name == "all" or r["dataset"] == name]
        unsolved = sum(1 for r in rows if not any(tier_correct(r["tiers"][t], cfg["threshold"]) for t in TIERS))
        lines.append(f"| {name} | " + " | ".join(str(counts.get(t, 0)) for t in TIERS)
                     + f" | {len(rows)} | {unsolved} ({100 * unsolved / max(len(rows), 1):.0f}%) |")
    lines += ["", "Per-tier answer quality on the labelled questions (mean F1 / mean input tokens / mean latency):", "",
              "| tier | F1 | input tokens | latency (s) |", "| --- | --- | --- | --- |"]
    for tier in TIERS:
        results = [r["tiers"][tier] for r in records]
        f1 = 100 * sum(x["f1"] for x in results) / len(results)
        tokens = sum(x["input_tokens"] or 0 for x in results) / len(results)
        latency = sum(x["latency_ms"] for x in results) / len(results) / 1000
        lines.append(f"| {tier} | {f1:.1f} | {tokens:.0f} | {latency:.2f} |")
    if meta.get("simulation"):
        lines += simulation_lines(meta["simulation"], data["questions"])
    if decisions:
        lines += ["", "## Where the router sends held-out questions", "",
                  "Seeded samples of the dev sets (no overlap with the training questions):", "",
                  "| dev set | " + " | ".join(TIERS) + " | questions |", "| --- |" + " --- |" * (len(TIERS) + 1)]
        for name, counts in decisions.items():
            total = max(sum(counts.values()), 1)
            lines.append(f"| {name} | " + " | ".join(f"{100 * counts.get(t, 0) / total:.0f}%" for t in TIERS)
                         + f" | {sum(counts.values())} |")
    lines += ["", "![labels](labels.png)", "", "![training](training.png)", "", "![confusion](confusion.png)", ""]
    if decisions:
        lines += ["![routing](routing.png)", ""]
    return "\n".join(lines)


def write_report(meta: dict[str, Any], records: Sequence[dict], labels: Sequence[str], out: Path,
                 decisions: dict[str, dict[str, int]] | None = None) -> Path:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    label_figure(meta, out)
    training_figure(meta, out)
    confusion_figure(meta, out)
    if decisions:
        routing_figure(decisions, out)
    path = out / "README.md"
    atomic_write_text(path, markdown(meta, records, labels, decisions))
    return path
