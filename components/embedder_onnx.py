"""The embedder's question path on ONNX Runtime.

Every question is embedded once, as one short text, on the path to its answer. torch runs
MiniLM's matrix products through MKL, which on AMD CPUs takes slow code paths: on a Zen 3 EPYC
(AVX2, 2 cores), right after a generation, a question took 23 ms through torch and 10 ms through
ONNX Runtime's own kernels, the same vector to within 2e-7 (session 45; ``python -m
eval.embed_speed`` measures it on yours).

The sentence-transformer as loaded (transformer, pooling, normalisation) is exported once with
``torch.onnx`` and kept in the cache folder under a hash of its weights and configuration, so a
changed model is exported again and an unchanged one is loaded in a fraction of a second. A loaded
model is checked against torch on a few texts before it is used; a model that does not export, or
whose export does not agree, is not used, and :class:`OnnxUnavailable` says why. Documents
(ingest) stay on torch: their batches are throughput, not a question's wait.
"""

from __future__ import annotations

import hashlib
import io
import warnings
from pathlib import Path
from typing import Any

import numpy as np

EXPORT_VERSION = 1  # part of the cache key: raise it when the exported graph changes shape
OPSET = 17
# Texts the export is checked on: short, a question's length, and one longer than MiniLM's 256-token
# window (truncation happens in the tokenizer, before either runtime).
CHECK_TEXTS = ("Who wrote it?", "Which river flows through the capital of the country with the most lakes?",
               "lake " * 400)
TOLERANCE = 1e-5  # float32 products summed in another order differ by ~1e-7 per component


class OnnxUnavailable(RuntimeError):
    """The ONNX path cannot be used for this embedder; the message says why."""


def _features(client: Any, text: str) -> dict[str, Any]:
    """The tensors the model reads for ``text``, tokenized exactly as ``encode`` tokenizes."""
    import torch

    return {name: value for name, value in client.preprocess([text]).items() if isinstance(value, torch.Tensor)}


def cache_key(client: Any) -> str:
    """A hash of everything the exported graph depends on: weights, modules and their settings,
    the exporter's version."""
    import torch

    digest = hashlib.sha256(f"{EXPORT_VERSION} {OPSET} torch {torch.__version__} {client!r}".encode())
    for name, tensor in client.state_dict().items():
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(tensor.detach().cpu().numpy()).data.cast("B"))
    return digest.hexdigest()[:32]


def _export(client: Any, names: list[str]) -> bytes:
    import torch

    class SentenceEmbedding(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.client = client

        def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
            embedding = self.client(dict(zip(names, tensors, strict=True)))["sentence_embedding"]
            return torch.nn.functional.normalize(embedding, dim=-1)

    sample = _features(client, CHECK_TEXTS[1])
    axes = {name: {0: "batch", 1: "tokens"} for name in names}
    buffer = io.BytesIO()
    try:
        import onnx  # noqa: F401  (the exporter writes its protobuf through it)
    except ImportError as exc:
        raise OnnxUnavailable("the onnx package is not installed (pip install onnx)") from exc
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # the exporter's notes on operators it composes
            torch.onnx.export(SentenceEmbedding().eval(), tuple(sample[n] for n in names),
                              buffer,  # type: ignore[arg-type]  # the TorchScript exporter writes to a file object too
                              input_names=names, output_names=["embedding"],
                              dynamic_axes={**axes, "embedding": {0: "batch"}}, opset_version=OPSET, dynamo=False)
    except Exception as exc:
        raise OnnxUnavailable(f"the model did not export to ONNX ({type(exc).__name__}: {exc})") from exc
    return buffer.getvalue()


def _session(model: bytes | str) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # one short text gains nothing from more, and the generator holds the cores
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


class OnnxQueryEncoder:
    """One text to one unit-length float32 vector, through ONNX Runtime on the calling thread."""

    def __init__(self, client: Any, session: Any, names: list[str]):
        self._client = client
        self._session = session
        self._names = names

    @classmethod
    def load(cls, client: Any, folder: Path) -> "OnnxQueryEncoder":
        """The encoder for a loaded sentence-transformer: from ``folder`` when exported before,
        else exported now and saved there atomically. Raises :class:`OnnxUnavailable`."""
        from components.storage import atomic_path

        try:
            import onnxruntime  # noqa: F401
        except ImportError as exc:
            raise OnnxUnavailable("onnxruntime is not installed (pip install onnxruntime)") from exc
        names = list(_features(client, CHECK_TEXTS[0]))
        path = Path(folder) / f"{cache_key(client)}.onnx"
        session = None
        if path.is_file():
            try:
                session = _session(str(path))
            except Exception:  # a cut or corrupt file: exported again below
                session = None
        if session is None:
            model = _export(client, names)
            try:
                session = _session(model)
            except Exception as exc:
                raise OnnxUnavailable(f"ONNX Runtime could not load the export ({type(exc).__name__}: {exc})") from exc
            try:
                with atomic_path(path) as tmp:
                    tmp.write_bytes(model)
            except OSError:
                pass  # a read-only cache folder: the export is used, and made again next time
        encoder = cls(client, session, names)
        try:
            encoder._check()
        except OnnxUnavailable:
            raise
        except Exception as exc:
            raise OnnxUnavailable(f"ONNX Runtime could not run the export ({type(exc).__name__}: {exc})") from exc
        return encoder

    def encode(self, text: str) -> np.ndarray:
        features = _features(self._client, text)
        inputs = {name: features[name].numpy() for name in self._names}
        return np.asarray(self._session.run(None, inputs)[0][0], dtype=np.float32)

    def _check(self) -> None:
        import torch

        with torch.no_grad():
            expected = self._client.encode(list(CHECK_TEXTS), normalize_embeddings=True, convert_to_numpy=True)
        worst = max(float(np.abs(self.encode(text) - vector).max()) for text, vector in zip(CHECK_TEXTS, expected, strict=True))
        if not worst <= TOLERANCE:
            raise OnnxUnavailable(f"the ONNX model's vectors differ from torch's by up to {worst:.2g}")
