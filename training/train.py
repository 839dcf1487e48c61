"""Train the tier router on the oracle labels, as the thesis specifies.

    python -m training.train                      # training/labels -> router/weights + docs/router report

Input: the query embedding (384-d, L2-normalised MiniLM, exactly as classify-tier computes it).
Network: Linear(384, 256) -> ReLU -> Dropout(0.3) -> Linear(256, 64) -> ReLU -> Linear(64, 3).
Class-weighted cross-entropy with w_c = N / (C * N_c) over the training part; AdamW (lr 1e-3,
weight decay 1e-4); 60 epochs; batch 64; 85/15 stratified train/validation split; fixed seed.
Training is deterministic (one thread, seeded shuffles), so retraining from the committed labels
reproduces the committed metrics.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from training.fitting import (TrainingConfig, class_weights, classification_metrics, fit, labels_digest,
                            predict, stratified_split, train)
from training.labelling import F1_THRESHOLD, LABELS_FILE, TIERS, UNSOLVED_RULES, derive_label, read_labels
from router.model import DEFAULT_WEIGHTS, DROPOUT, HIDDEN, build_network, metadata_path
from training.simulate import FOLDS, simulate

__all__ = ["TrainingConfig", "class_weights", "classification_metrics", "fit", "labels_digest", "predict",
           "stratified_split", "train", "save_router", "main"]

REPORT_DIR = Path(__file__).resolve().parents[1] / "docs" / "router"


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
        raise SystemExit(f"{args.labels}: {len(records)} labelled questions; label more with `python -m training.labelling`")
    labels = [derive_label(r, config.threshold, config.unsolved) for r in records]
    y = np.array([TIERS.index(label) for label in labels])

    import torch

    torch.set_num_threads(1)  # embeddings too: another thread count sums in another order, and the
    # last-bit differences flip validation predictions of a network trained for 60 epochs
    start = time.perf_counter()
    # torch's question vectors, which the committed router was fit on: ONNX Runtime's (what
    # classify-tier reads since session 45) differ by ~1e-7, enough to end two validation questions
    # elsewhere after 60 epochs, and too little to move the trained router's (the same tier for all
    # 1,100 labelled questions, probabilities within 4.1e-6)
    embedder = Embedder(query_runtime="torch")
    embedder.warm_up()
    embeddings = np.stack([embedder.embed_query(r["question"]) for r in records])
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
            "per_dataset": {d: {t: sum(1 for r, label in zip(records, labels, strict=True)
                                       if r["dataset"] == d and label == t) for t in TIERS}
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
        from training.report import route_dev_sets, write_report

        router = TierRouter.load(args.out, embedder=embedder.name, dimension=embedder.dimension)
        decisions = route_dev_sets(router, embedder, args.data_dir, config.seed)
        print(f"report: {write_report(metadata, records, labels, args.report_dir, decisions)}")
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
