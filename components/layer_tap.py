"""Reading a transformer layer's output from llama.cpp while it decodes.

llama.cpp names each layer's output tensor ``l_out-<layer>`` and, when a context is created with an
evaluation callback (``cb_eval``), asks the callback before computing each tensor whether it wants to
see it, then shows it the computed tensors it asked for. :class:`LayerTap` is such a callback: it
asks for nothing until :meth:`LayerTap.reading` opens a window, and inside the window it copies the
last row (the newest token's hidden state) of the layers it was asked for.

The answer probe (:mod:`components.answer_probe`) reads a middle layer at the first answer token:
what the model has made of the question and evidence as it starts to answer. Only the decode inside
the window pays anything (one copy of a row per layer read); the callback's question for every other
tensor is answered at once.
"""

from __future__ import annotations

import ctypes
import os
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

import numpy as np

LAYER_OUTPUT = "l_out-{}"
"""llama.cpp's name for a layer's output (the residual stream after the layer)."""


def _ggml_base() -> ctypes.CDLL:
    import llama_cpp

    lib = ctypes.CDLL(os.path.join(os.path.dirname(llama_cpp.__file__), "lib", "libggml-base.so"))
    lib.ggml_get_name.restype = ctypes.c_char_p
    lib.ggml_get_name.argtypes = [ctypes.c_void_p]
    lib.ggml_nelements.restype = ctypes.c_int64
    lib.ggml_nelements.argtypes = [ctypes.c_void_p]
    lib.ggml_nbytes.restype = ctypes.c_size_t
    lib.ggml_nbytes.argtypes = [ctypes.c_void_p]
    lib.ggml_backend_tensor_get.restype = None
    lib.ggml_backend_tensor_get.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t]
    return lib


class LayerTap:
    """An evaluation callback for a llama.cpp context that copies chosen layers' newest row.

    ``width`` is the model's hidden size (``llama_model_n_embd``). Pass :attr:`callback` as the
    context's ``cb_eval`` (it must outlive the context: keep the tap). Not thread-safe by itself: the
    generator reads under its own lock.
    """

    def __init__(self, width: int | None = None) -> None:
        import llama_cpp.llama_cpp as lib

        if width is not None and width < 1:
            raise ValueError(f"width must be >= 1, got {width}")
        self.width = width
        """The model's hidden size; the context calls the tap back before the model is known to it, so
        the generator sets it once the model has loaded."""
        self._ggml = _ggml_base()
        self._wanted: dict[bytes, int] = {}
        self.values: dict[int, np.ndarray] = {}
        self.callback = lib.ggml_backend_sched_eval_callback(self._observe)

    def _observe(self, tensor: int, ask: bool, _user_data: Any) -> bool:
        layer = self._wanted.get(self._ggml.ggml_get_name(tensor)) if self._wanted else None
        if ask:  # does the tap want to see this tensor once it is computed?
            return layer is not None
        if layer is not None:
            elements = int(self._ggml.ggml_nelements(tensor))
            if self.width and elements % self.width == 0 and int(self._ggml.ggml_nbytes(tensor)) == 4 * elements:  # float32 rows
                row = np.empty(self.width, dtype=np.float32)
                self._ggml.ggml_backend_tensor_get(tensor, row.ctypes.data, 4 * (elements - self.width), 4 * self.width)
                self.values[layer] = row
        return True  # shown a tensor: carry on computing

    @contextmanager
    def reading(self, layers: Sequence[int]) -> Iterator[dict[int, np.ndarray]]:
        """Within the block, each decode's ``layers`` outputs (their newest row) land in the yielded
        dict, the latest decode's overwriting earlier ones."""
        if self.width is None:
            raise RuntimeError("the tap's width (the model's hidden size) is not set")
        self.values = {}
        self._wanted = {LAYER_OUTPUT.format(layer).encode(): int(layer) for layer in layers}
        try:
            yield self.values
        finally:
            self._wanted = {}
