"""Fitting the tier router's network: the training configuration, the stratified split, class
weights, the training loop and the metrics. Shared by :mod:`training.train` (the command) and
:mod:`training.simulate` (cross-validated routing), so neither imports the other.

Training is deterministic on one machine (one thread, seeded shuffles). Across CPUs the float sums
of the embedder and of the training loop may differ in their last bits; see the retraining test
for what is asserted exactly and what within a tolerance.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from training.labelling import F1_THRESHOLD, TIERS, UNSOLVED_RULES
from router.model import build_network


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
    for t, p in zip(y_true, y_pred, strict=True):
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
    for record, label in zip(records, labels, strict=True):
        digest.update(json.dumps([record["dataset"], record["id"], record["question"], label]).encode())
    return digest.hexdigest()


def fit(x_train: np.ndarray, y_train: np.ndarray, config: TrainingConfig, n_classes: int = len(TIERS),
        x_val: np.ndarray | None = None, y_val: np.ndarray | None = None):
    """Train a fresh network on ``(x_train, y_train)``; returns (network in eval mode, per-epoch history).
    The validation part, when given, is only scored after each epoch."""
    import torch

    torch.manual_seed(config.seed)
    torch.set_num_threads(1)  # the same float sums in the same order every time
    torch.use_deterministic_algorithms(True)
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
