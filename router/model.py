"""The tier router: the thesis' MLP over the query embedding, and the loader the graph uses.

Network (training, in torch): Linear(384, 256) -> ReLU -> Dropout(0.3) -> Linear(256, 64) -> ReLU
-> Linear(64, 3). Weights are stored with safetensors beside a small JSON metadata file (embedder,
dimension, label order, metrics, the labels' hash, the weights' sha256). Inference runs the same
network in NumPy (dropout is the identity at inference), which costs microseconds and keeps torch
out of the request path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
DEFAULT_WEIGHTS = WEIGHTS_DIR / "tier_router.safetensors"
HIDDEN = (256, 64)
DROPOUT = 0.3
# safetensors keys, as torch names the Linear layers of ``build_network``'s Sequential
LAYER_KEYS = ("layers.0", "layers.3", "layers.5")


class RouterError(RuntimeError):
    """Missing, corrupt or mismatched router weights. The message names the file and the fix."""


def metadata_path(weights: Path) -> Path:
    return Path(weights).with_suffix(".json")


def build_network(input_dim: int = 384, n_classes: int = 3, hidden: Sequence[int] = HIDDEN, dropout: float = DROPOUT):
    """The thesis' MLP as a torch module (used for training)."""
    from torch import nn

    class TierRouterNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = nn.Sequential(
                nn.Linear(input_dim, hidden[0]), nn.ReLU(), nn.Dropout(dropout),
                nn.Linear(hidden[0], hidden[1]), nn.ReLU(),
                nn.Linear(hidden[1], n_classes),
            )

        def forward(self, x):
            return self.layers(x)

    return TierRouterNet()


@dataclass(frozen=True)
class RouterDecision:
    tier: str
    probabilities: dict[str, float]

    @property
    def confidence(self) -> float:
        return self.probabilities[self.tier]

    def as_dict(self) -> dict[str, Any]:
        return {"tier": self.tier, "confidence": self.confidence, "probabilities": self.probabilities}


@dataclass(frozen=True)
class TierRouter:
    """A trained router: ``decide(embedding)`` gives the tier and the class probabilities."""

    labels: tuple[str, ...]
    embedder: str
    dimension: int
    weights: tuple[tuple[np.ndarray, np.ndarray], ...] = field(repr=False)
    metadata: Mapping[str, Any] = field(default_factory=dict, repr=False)
    path: Path | None = None

    @classmethod
    def load(cls, path: str | Path = DEFAULT_WEIGHTS, *, embedder: str | None = None,
             dimension: int | None = None) -> "TierRouter":
        """Load weights and metadata; refuse a router trained for another embedder or dimension."""
        from safetensors import SafetensorError
        from safetensors.numpy import load_file

        from components.storage import sha256_file

        path = Path(path).expanduser()
        meta_file = metadata_path(path)
        retrain = "train one with `python -m training.train`"
        for required in (path, meta_file):
            if not required.is_file():
                raise RouterError(f"router file not found: {required}; {retrain} or pass another --router")
        try:
            meta = json.loads(meta_file.read_text(encoding="utf-8"))
            labels = tuple(meta["labels"])
            trained_for, trained_dim = meta["embedder"], int(meta["dimension"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise RouterError(f"router metadata {meta_file} is unreadable ({exc}); {retrain}") from exc
        if meta.get("weights_sha256") and sha256_file(path) != meta["weights_sha256"]:
            raise RouterError(f"router weights {path} do not match their metadata (sha256 differs); {retrain}")
        if embedder is not None and embedder != trained_for:
            raise RouterError(f"router {path} was trained on {trained_for!r} embeddings, the pipeline uses "
                              f"{embedder!r}; {retrain} for this embedder")
        if dimension is not None and dimension != trained_dim:
            raise RouterError(f"router {path} expects {trained_dim}-d embeddings, the embedder gives "
                              f"{dimension}-d ones; {retrain} for this embedder")
        try:
            tensors = load_file(str(path))
            layers = tuple((tensors[f"{k}.weight"].astype(np.float32), tensors[f"{k}.bias"].astype(np.float32))
                           for k in LAYER_KEYS)
        except (OSError, SafetensorError, KeyError) as exc:
            raise RouterError(f"router weights {path} are unreadable ({exc}); {retrain}") from exc
        shapes_ok = (layers[0][0].shape[1] == trained_dim and layers[-1][0].shape[0] == len(labels)
                     and all(w.shape[0] == b.shape[0] for w, b in layers)
                     and all(layers[i][0].shape[0] == layers[i + 1][0].shape[1] for i in range(len(layers) - 1)))
        if not shapes_ok:
            raise RouterError(f"router weights {path} have shapes {[w.shape for w, _ in layers]}, which do not fit "
                              f"{trained_dim}-d input and labels {list(labels)}; {retrain}")
        return cls(labels, trained_for, trained_dim, layers, meta, path)

    @cached_property
    def fingerprint(self) -> str:
        """A digest of the trained router (labels, embedder, metadata, every weight): a refit one routes
        answers of its own, so an answer it routed is not served under another (the query cache)."""
        from components.storage import model_digest

        about = {"labels": list(self.labels), "embedder": self.embedder, "dimension": self.dimension,
                 "metadata": dict(self.metadata)}
        return model_digest(about, *(np.ascontiguousarray(a, dtype=np.float32).tobytes()
                                     for layer in self.weights for a in layer))

    def check_tiers(self, tiers: Sequence[str]) -> None:
        missing = [label for label in self.labels if label not in tiers]
        if missing:
            raise RouterError(f"router {self.path} routes to tier(s) {missing} that the configuration lacks "
                              f"(configured: {', '.join(tiers)})")

    def probabilities(self, embedding: Sequence[float] | np.ndarray) -> np.ndarray:
        """Class probabilities for one embedding (shape ``(dimension,)``) or a batch ``(n, dimension)``."""
        x = np.asarray(embedding, dtype=np.float32)
        if x.shape[-1] != self.dimension:
            raise RouterError(f"router expects {self.dimension}-d embeddings, got shape {x.shape}")
        for i, (w, b) in enumerate(self.weights):
            x = x @ w.T + b
            if i < len(self.weights) - 1:
                x = np.maximum(x, 0.0)
        x = x - x.max(axis=-1, keepdims=True)
        e = np.exp(x)
        return e / e.sum(axis=-1, keepdims=True)

    def decide(self, embedding: Sequence[float] | np.ndarray) -> RouterDecision:
        p = self.probabilities(embedding)
        return RouterDecision(self.labels[int(np.argmax(p))], {label: float(v) for label, v in zip(self.labels, p, strict=True)})
