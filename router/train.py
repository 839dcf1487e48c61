"""Train the tier router on the oracle labels, as the thesis specifies.

    python -m router.train                      # router/labels -> router/weights + docs/router report

Input: the query embedding (384-d, L2-normalised MiniLM, exactly as classify-tier computes it).
Network: Linear(384, 256) -> ReLU -> Dropout(0.3) -> Linear(256, 64) -> ReLU -> Linear(64, 3).
Class-weighted cross-entropy with w_c = N / (C * N_c) over the training part; AdamW (lr 1e-3,
weight decay 1e-4); 60 epochs; batch 64; 85/15 stratified train/validation split; fixed seed.
Training is deterministic (one thread, seeded shuffles), so retraining from the committed labels
reproduces the committed metrics.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from router.labelling import F1_THRESHOLD, LABELS_FILE, TIERS, UNSOLVED_RULES, derive_label, read_labels
from router.model import DEFAULT_WEIGHTS, DROPOUT, HIDDEN, build_network, metadata_path
from router.simulate import FOLDS, simulate

REPORT_DIR = Path(__file__).resolve().parents[1] / "docs" / "router"


@dataclass(frozen=True)
class TrainingConfig:
    epochs: int = 60
    batch_size: int = 64
    lr: float = 1e-3
    weight_decay: float = 1e-4
    validation_share: float = 0.15
    seed: int = 13
    threshold: float = F1_THRESHOLD
    unsolved: str = "fallback"

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.batch_size < 1:
            raise ValueError("epochs and batch_size must be >= 1")
        if not 0.0 < self.validation_share < 1.0:
            raise ValueError(f"validation_share must be in (0, 1), got {self.validation_share}")
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], got {self.threshold}")
        if self.unsolved not in UNSOLVED_RULES:
            raise ValueError(f"unknown unsolved rule {self.unsolved!r}; valid: {', '.join(UNSOLVED_RULES)}")


def stratified_split(labels: Sequence[int], share: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the training and validation parts; each class contributes ``share`` of its items
    (rounded, at least one when it has two or more) to validation."""
    rng = np.random.default_rng(seed)
    labels = np.asarray(labels)
    train, val = [], []
    for c in np.unique(labels):
        idx = np.flatnonzero(labels == c)
        rng.shuffle(idx)
        n_val = int(round(share * len(idx)))
        if len(idx) >= 2:
            n_val = min(max(n_val, 1), len(idx) - 1)
        else:
            n_val = 0
        val.extend(idx[:n_val])
        train.extend(idx[n_val:])
    return np.sort(np.array(train, dtype=int)), np.sort(np.array(val, dtype=int))


def class_weights(labels: Sequence[int], n_classes: int) -> np.ndarray:
    """w_c = N / (C * N_c); a class absent from the training part gets weight 0."""
    counts = np.bincount(np.asarray(labels), minlength=n_classes).astype(np.float64)
    weights = np.zeros(n_classes)
    present = counts > 0
    weights[present] = len(labels) / (n_classes * counts[present])
    return weights


def classification_metrics(y_true: Sequence[int], y_pred: Sequence[int], n_classes: int) -> dict[str, Any]:
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    confusion = np.zeros((n_classes, n_classes), dtype=int)
    for t, p in zip(y_true, y_pred):
        confusion[t, p] += 1
    precision, recall = [], []
    for c in range(n_classes):
        predicted, actual = confusion[:, c].sum(), confusion[c, :].sum()
        precision.append(float(confusion[c, c] / predicted) if predicted else float("nan"))
        recall.append(float(confusion[c, c] / actual) if actual else float("nan"))
    return {
        "accuracy": float((y_true == y_pred).mean()) if len(y_true) else float("nan"),
        "confusion": confusion.tolist(),
        "precision": precision,
        "recall": recall,
    }


def labels_digest(records: Sequence[dict], labels: Sequence[str]) -> str:
    """sha256 over (dataset, id, question, label): changes when the data or the derived labels do."""
    digest = hashlib.sha256()
    for record, label in zip(records, labels):
        digest.update(json.dumps([record["dataset"], record["id"], record["question"], label]).encode())
    return digest.hexdigest()


def fit(x_train: np.ndarray, y_train: np.ndarray, config: TrainingConfig, n_classes: int = len(TIERS),
        x_val: np.ndarray | None = None, y_val: np.ndarray | None = None):
    """Train a fresh network on ``(x_train, y_train)``; returns (network in eval mode, per-epoch history).
    The validation part, when given, is only scored after each epoch."""
    import torch

    torch.manual_seed(config.seed)
    torch.set_num_threads(1)  # the same float sums in the same order every time
    x_tr = torch.from_numpy(np.asarray(x_train)).float()
    y_tr = torch.from_numpy(np.asarray(y_train)).long()
    has_val = x_val is not None and y_val is not None and len(y_val) > 0
    x_v = torch.from_numpy(np.asarray(x_val)).float() if has_val else None
    y_v = torch.from_numpy(np.asarray(y_val)).long() if has_val else None

    net = build_network(x_tr.shape[1], n_classes)
    weights = torch.tensor(class_weights(y_train, n_classes), dtype=torch.float32)
    loss_fn = torch.nn.CrossEntropyLoss(weight=weights)
    optimiser = torch.optim.AdamW(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    shuffles = torch.Generator().manual_seed(config.seed)
    history: list[dict[str, float]] = []
    for epoch in range(1, config.epochs + 1):
        net.train()
        order = torch.randperm(len(x_tr), generator=shuffles)
        total, seen = 0.0, 0
        for start in range(0, len(order), config.batch_size):
            batch = order[start:start + config.batch_size]
            optimiser.zero_grad()
            loss = loss_fn(net(x_tr[batch]), y_tr[batch])
            loss.backward()
            optimiser.step()
            total += loss.item() * len(batch)
            seen += len(batch)
        net.eval()
        val_loss = val_acc = float("nan")
        if has_val:
            with torch.no_grad():
                logits = net(x_v)
                val_loss = float(loss_fn(logits, y_v))
                val_acc = float((logits.argmax(1) == y_v).float().mean())
        history.append({"epoch": epoch, "train_loss": total / seen, "val_loss": val_loss, "val_accuracy": val_acc})
    return net, history


def predict(net, embeddings: np.ndarray) -> np.ndarray:
    """The class index the network gives each embedding."""
    import torch

    with torch.no_grad():
        return net(torch.from_numpy(np.asarray(embeddings)).float()).argmax(1).numpy()


def train(embeddings: np.ndarray, y: np.ndarray, config: TrainingConfig, n_classes: int = len(TIERS)):
    """Split 85/15 (stratified) and train; returns (state_dict, history, train_idx, val_idx)."""
    train_idx, val_idx = stratified_split(y, config.validation_share, config.seed)
    net, history = fit(embeddings[train_idx], y[train_idx], config, n_classes, embeddings[val_idx], y[val_idx])
    state = {k: v.detach().cpu().contiguous() for k, v in net.state_dict().items()}
    return state, history, train_idx, val_idx


def save_router(state: dict, metadata: dict[str, Any], path: Path = DEFAULT_WEIGHTS) -> Path:
    """Write the safetensors weights and their JSON metadata, each atomically."""
    from safetensors.torch import save_file

    from components.storage import atomic_path, atomic_write_text, sha256_file

    with atomic_path(path) as tmp:
        save_file(state, str(tmp), metadata={"labels": ",".join(metadata["labels"]), "embedder": metadata["embedder"]})
    metadata = {**metadata, "weights_sha256": sha256_file(path)}
    atomic_write_text(metadata_path(path), json.dumps(metadata, indent=2) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    from components.embedder import Embedder

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", type=Path, default=LABELS_FILE)
    parser.add_argument("--out", type=Path, default=DEFAULT_WEIGHTS, help="weights file (.safetensors; metadata beside it)")
    parser.add_argument("--report-dir", type=Path, default=REPORT_DIR, help=f"training report folder (default: {REPORT_DIR})")
    parser.add_argument("--no-report", action="store_true", help="write no report (needs no matplotlib)")
    parser.add_argument("--data-dir", default=None, help="benchmark data folder for the report's held-out routing "
                        "(default: $ADAPTIVE_RAG_DATA or ../shared/data)")
    parser.add_argument("--threshold", type=float, default=F1_THRESHOLD, help="F1 at which a tier counts as correct")
    parser.add_argument("--unsolved", choices=UNSOLVED_RULES, default=TrainingConfig.unsolved,
                        help="label of a question no tier answers: its dataset's fallback tier (the issue's rule) "
                             "or the cheapest tier")
    parser.add_argument("--seed", type=int, default=TrainingConfig.seed)
    parser.add_argument("--epochs", type=int, default=TrainingConfig.epochs)
    args = parser.parse_args(argv)
    config = TrainingConfig(epochs=args.epochs, seed=args.seed, threshold=args.threshold, unsolved=args.unsolved)

    records = read_labels(args.labels)
    if len(records) < 10:
        raise SystemExit(f"{args.labels}: {len(records)} labelled questions; label more with `python -m router.labelling`")
    labels = [derive_label(r, config.threshold, config.unsolved) for r in records]
    y = np.array([TIERS.index(label) for label in labels])

    import torch

    torch.set_num_threads(1)  # embeddings too: another thread count sums in another order, and the
    # last-bit differences flip validation predictions of a network trained for 60 epochs
    start = time.perf_counter()
    embedder = Embedder()
    embedder.warm_up()
    embeddings = np.stack([embedder.embed_query(r["question"]) for r in records])  # exactly as classify-tier
    embed_s = time.perf_counter() - start
    state, history, train_idx, val_idx = train(embeddings, y, config)

    net = build_network(embeddings.shape[1], len(TIERS))
    net.load_state_dict(state)
    net.eval()
    predicted = predict(net, embeddings[val_idx])
    majority = Counter(y[train_idx].tolist()).most_common(1)[0][0]
    validation = classification_metrics(y[val_idx], predicted, len(TIERS))
    validation["majority_class"] = TIERS[majority]
    validation["majority_accuracy"] = float((y[val_idx] == majority).mean())
    simulation = simulate(records, embeddings, config)

    datasets = sorted({r["dataset"] for r in records})
    metadata = {
        "labels": list(TIERS),
        "embedder": embedder.name,
        "dimension": int(embeddings.shape[1]),
        "architecture": {"hidden": list(HIDDEN), "dropout": DROPOUT, "activation": "relu"},
        "training": asdict(config),
        "data": {
            "labels_file": args.labels.name,
            "labels_sha256": labels_digest(records, labels),
            "questions": len(records),
            "label_counts": {t: labels.count(t) for t in TIERS},
            "per_dataset": {d: {t: sum(1 for r, l in zip(records, labels) if r["dataset"] == d and l == t) for t in TIERS}
                            for d in datasets},
            "train": int(len(train_idx)),
            "validation": int(len(val_idx)),
        },
        "validation": validation,
        "simulation": simulation,
        "history": history,
        "versions": {"torch": torch.__version__, "numpy": np.__version__},
    }
    save_router(state, metadata, args.out)
    train_s = time.perf_counter() - start - embed_s
    print(f"{len(records)} questions ({len(train_idx)} train / {len(val_idx)} validation); "
          f"embedding {embed_s:.1f} s, training and {FOLDS}-fold simulation {train_s:.1f} s")
    print(f"validation accuracy {validation['accuracy']:.3f} vs majority class ({TIERS[majority]}) "
          f"{validation['majority_accuracy']:.3f}; weights: {args.out}")
    if not args.no_report:
        from router.model import TierRouter
        from router.report import route_dev_sets, write_report

        router = TierRouter.load(args.out, embedder=embedder.name, dimension=embedder.dimension)
        decisions = route_dev_sets(router, embedder, args.data_dir, config.seed)
        print(f"report: {write_report(metadata, records, labels, args.report_dir, decisions)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
