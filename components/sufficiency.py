"""The sufficiency scorer: how likely the retrieved passages hold an answer to the question.

A small cross-encoder reads the question and the passages together and gives the probability that
they hold its answer: a "sufficient context" rater, the answerability check's signal that does not
come from the generator. The generator's confidence says how sure the model is of what it wrote;
SQuAD 2.0's unanswerable questions are written against a paragraph that holds a plausible answer,
and the model answers them as confidently as the others. A reader trained to tell the two apart
looks at the question and the evidence, not at the answer.

It is the bundled embedder (MiniLM-L6, :mod:`components.embedder`) with its upper encoder layers
fine-tuned and a linear head over the mean-pooled tokens, trained on the train splits
(``python -m training.sufficiency``). The file holds only what training changed, as safetensors (no
pickle), beside a JSON card with what it was trained on and its figures; the base weights come from
the embedder's package.
"""

from __future__ import annotations

import json
import os
import threading
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping, Sequence

from components.embedder import DEFAULT_EMBEDDER, resolve_embedder
from components.model_files import ModelFileError
from components.storage import model_digest, sha256_file

DEFAULT_SCORER = Path(__file__).resolve().parent / "sufficiency"
"""The scorer trained on the train splits that ships with the package (a folder: ``card.json`` and
``weights.safetensors``)."""

CARD = "card.json"
WEIGHTS = "weights.safetensors"
HEAD = "head"


class SufficiencyModelError(ModelFileError):
    """A sufficiency scorer folder that is missing, unreadable or inconsistent with its base model."""


def pair_text(passages: Sequence[str]) -> str:
    """The evidence side of the pair the scorer reads: the passages in rank order."""
    return " ".join(p.strip() for p in passages if p.strip())


class SufficiencyScorer:
    """``P(the passages hold an answer to the question)`` from a fine-tuned MiniLM cross-encoder.

    Call :meth:`warm_up` to load it (``score`` loads it on first use otherwise). Scoring is
    thread-safe: the model is only read, under ``torch.no_grad``.
    """

    def __init__(self, path: str | os.PathLike = DEFAULT_SCORER, *, device: str = "cpu"):
        self.path = Path(path)
        card_path = self.path / CARD
        try:
            card = json.loads(card_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise SufficiencyModelError(f"sufficiency scorer: no {CARD} in {self.path}") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SufficiencyModelError(f"sufficiency scorer: cannot read {card_path}: {exc}") from exc
        if not isinstance(card, dict):
            raise SufficiencyModelError(f"sufficiency scorer: {card_path} is not a JSON object")
        try:
            self.base = str(card["base"])
            self.max_length = int(card["max_length"])
            self.trained_layers = tuple(int(i) for i in card["trained_layers"])
        except (KeyError, TypeError, ValueError) as exc:
            raise SufficiencyModelError(f"sufficiency scorer: {card_path} lacks a valid {exc}") from exc
        if self.max_length < 16:
            raise SufficiencyModelError(f"sufficiency scorer: max_length must be >= 16, got {self.max_length}")
        if not (self.path / WEIGHTS).is_file():
            raise SufficiencyModelError(f"sufficiency scorer: no {WEIGHTS} in {self.path}")
        self.card: Mapping[str, Any] = card
        self.device = device
        self._model: Any = None
        self._tokenizer: Any = None
        self._head: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return str(self.card.get("name", self.path.name))

    @cached_property
    def fingerprint(self) -> str:
        """A digest of the card and the weights file: a retrained scorer decides answers of its own (see the
        query cache)."""
        return model_digest(dict(self.card), sha256_file(self.path / WEIGHTS).encode("ascii"))

    def warm_up(self) -> None:
        with self._lock:
            if self._model is not None:
                return
            self._model, self._tokenizer, self._head = load_weights(self.base, self.path / WEIGHTS, self.device)
            _ = self.fingerprint  # the weights' digest, taken with them, not on a question's path (the cache's scope)

    def score(self, question: str, passages: Sequence[str]) -> float:
        """The probability that ``passages`` hold an answer to ``question`` (0 for no passages)."""
        return self.score_batch([(question, passages)])[0]

    def score_batch(self, pairs: Sequence[tuple[str, Sequence[str]]], batch_size: int = 32) -> list[float]:
        """:meth:`score` for many (question, passages) pairs."""
        import torch

        self.warm_up()
        out: list[float] = [0.0] * len(pairs)
        todo = [i for i, (_, passages) in enumerate(pairs) if pair_text(passages)]
        for start in range(0, len(todo), batch_size):
            chunk = todo[start:start + batch_size]
            batch = self._tokenizer([pairs[i][0] for i in chunk], [pair_text(pairs[i][1]) for i in chunk],
                                    truncation="only_second", max_length=self.max_length, padding=True,
                                    return_tensors="pt")
            with torch.no_grad():
                probs = torch.sigmoid(logits(self._model, self._head, batch)).tolist()
            for i, p in zip(chunk, probs, strict=True):
                out[i] = float(p)
        return out


def logits(model: Any, head: Any, batch: Mapping[str, Any]) -> Any:
    """The head over the mean of the encoder's last hidden states (padding left out)."""
    hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    return head((hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)).squeeze(-1)


def base_model(base: str = DEFAULT_EMBEDDER, device: str = "cpu") -> tuple[Any, Any, Any]:
    """(encoder, tokenizer, a fresh linear head) for ``base``, the embedder's weights."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    _, load_path = resolve_embedder(base)
    if Path(load_path).exists():
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        tokenizer = AutoTokenizer.from_pretrained(load_path)
        model = AutoModel.from_pretrained(load_path).to(device)
    except Exception as exc:
        raise SufficiencyModelError(f"sufficiency scorer: cannot load its base model {base!r}: {exc}") from exc
    head = torch.nn.Linear(model.config.hidden_size, 1).to(device)
    return model, tokenizer, head


def trained_tensors(model: Any, head: Any, layers: Sequence[int]) -> dict[str, Any]:
    """What training changes, by name: the named encoder layers and the head."""
    prefixes = tuple(f"encoder.layer.{i}." for i in layers)
    tensors = {k: v for k, v in model.state_dict().items() if k.startswith(prefixes)}
    tensors.update({f"{HEAD}.{k}": v for k, v in head.state_dict().items()})
    return tensors


def load_weights(base: str, weights: Path, device: str = "cpu") -> tuple[Any, Any, Any]:
    """The base model with the stored tensors put in place; every stored tensor must fit the base."""
    import torch
    from safetensors.torch import load_file

    model, tokenizer, head = base_model(base, device)
    try:
        stored = load_file(str(weights), device=device)
    except Exception as exc:
        raise SufficiencyModelError(f"sufficiency scorer: cannot read {weights}: {exc}") from exc
    own = model.state_dict()
    head_own = head.state_dict()
    encoder: dict[str, Any] = {}
    head_part: dict[str, Any] = {}
    for key, tensor in stored.items():
        target, name = (head_own, key[len(HEAD) + 1:]) if key.startswith(f"{HEAD}.") else (own, key)
        if name not in target or target[name].shape != tensor.shape:
            raise SufficiencyModelError(f"sufficiency scorer: {weights} holds {key!r}, which does not fit base {base!r}")
        (head_part if target is head_own else encoder)[name] = tensor.to(torch.float32)
    if set(head_part) != set(head_own):
        raise SufficiencyModelError(f"sufficiency scorer: {weights} lacks the head")
    model.load_state_dict(encoder, strict=False)
    head.load_state_dict(head_part)
    model.eval()
    head.eval()
    return model, tokenizer, head
