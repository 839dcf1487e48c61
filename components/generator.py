"""The generator: a small local language model exposed as a LangChain chat model.

* GGUF presets and ``.gguf`` paths run on llama.cpp through :class:`LlamaCppChatModel`, which
  formats prompts with the chat template stored in the GGUF, streams tokens (so LangGraph's
  ``stream_mode="messages"`` sees them), reports exact prompt/output token counts in
  ``usage_metadata``, the prompt tokens it actually evaluated, and for every generated token its
  probability, its margin over the runner-up and the predictive entropy in ``response_metadata``,
  with the first step's most probable tokens (``first_top``; computed in a logits processor, at no
  measurable cost). ``invoke(..., pin_prefix=False)`` keeps a one-off prompt's instructions from
  being pinned (a self-check's "instructions" are a whole answer prompt), and ``invoke(...,
  pin_prefix="Evidence:\n[1] ")`` pins the last message's fixed opening with them; ``invoke(...,
  stop_when=rule)`` stops generating as soon as ``rule(probs, margins, pieces)`` is true (see
  :data:`StopRule`), and the metadata says so (``stopped_early``).
* Any other name or folder loads with transformers through ``langchain-huggingface``.

llama.cpp contexts are not thread-safe: one lock serialises generation per model instance.

Prefix reuse. Prompt evaluation is nearly all of the latency on a CPU, so the model never
evaluates a token twice when it can avoid it. llama.cpp keeps the key/value cache of the last
prompt and reuses the longest prefix the next prompt shares with it. On top of that:

* the instruction prefix of every prompt that has a system message (everything before the last
  message's content, and the opening every such message starts with when the caller names it) is
  evaluated once per process and kept as a snapshot (*pinned*);
* the state after each answer is kept as a snapshot too, a few of them, most recent first;

and before each prompt the snapshot sharing the longest prefix with it is restored when it beats
the live cache. So a condense prompt between two answers, or another session's question between
an answer and its extension, costs the prefix nothing. Snapshots hold only the key/value cells in
use (about 28 KB a token for the 1.5B model), never logits.

Prompt-lookup decoding (``lookup_tokens``, off by default). Each generated token costs a forward
pass, and answers here are mostly words copied from the evidence. So after each chosen token the
generator can look for the last few tokens in the question's part of the prompt and, where they
occur, draft the tokens that follow them there; one forward pass then evaluates the chosen token
with the draft and gives the model's own choice at every position. Drafted tokens the model agrees
with are taken (greedy decoding: the same tokens it would have chosen one pass at a time), the rest
are dropped from the cache. The answer, its token probabilities and the cache it leaves are those
of token-by-token decoding, up to the float rounding of a different batch shape. It pays where a
pass costs about the same for one token as for a few (a pass bound by reading the weights); on two
CPU cores a pass over k tokens costs nearly k passes (``python -m eval.decode_speed``), so it is
slower there and off.

Prompt log-probabilities. ``invoke(..., score_suffix=text)``, where ``text`` ends the last message,
also returns in ``response_metadata["suffix_logprobs"]`` the log-probability of each of its tokens
given everything before it: the prompt is evaluated in one pass with the logits of those positions
kept besides the last one's (what the cache already holds before the text is reused; a cache keeps no
logits, so the text is evaluated even when cached), and the answer is sampled from the last; the
answer is unchanged, and so is what the prompt costs but for a vocabulary's projection per scored
token. The answerability check reads the question's tokens after the evidence this way: a question
the evidence makes unlikely (a swapped name, a negation) often has no answer there.

Hidden states. ``invoke(..., hidden_layers=[16])`` (or the model's ``hidden_layers``) also returns, in the reply's
``response_metadata["hidden_states"]``, the output of those transformer layers at the answer's first
token (the row llama.cpp computes when it decodes that token), read by a :class:`LayerTap` the
context calls back. The answer probe (:mod:`components.answer_probe`) scores it. Without the option
the tap wants nothing and the decode runs as before.

Weight buffers. llama.cpp may hold the weights in *extra* buffer types that suit the CPU better
(Intel AMX tiles, repacked layouts). A llama.cpp built on a CPU with AMX uses AMX buffers, and
they crash the process (a segmentation fault on the first decode) in some virtual machines: seen
on a Sapphire Rapids guest under Firecracker. So ``extra_buffers`` is off by default wherever the
library was built with AMX, and on elsewhere; set it to choose.

Prompts are tokenized so that only the chat template's own markers can become control tokens:
message contents (the user's question, document text) are tokenized as plain text, so a
``<|im_end|>`` typed in a question or found in a document stays text and cannot end a turn.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Collection, Iterator, Mapping, NamedTuple, Sequence, cast

import numpy as np
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_huggingface import ChatHuggingFace
from pydantic import Field, PrivateAttr

from components.layer_tap import LayerTap
from components.model_files import PRESETS, ModelFileError, gguf_path
from components.storage import file_fingerprint, model_digest

_MODEL_PARAMS_LOCK = threading.Lock()
_ROLES = {"system": "system", "human": "user", "ai": "assistant"}
_PLACEHOLDER = re.compile("\x00(\\d+)\x00")


def built_with_amx(system_info: str | None = None) -> bool:
    """Whether llama.cpp was built with Intel AMX kernels (its system information says so)."""
    if system_info is None:
        import llama_cpp

        system_info = llama_cpp.llama_print_system_info().decode("utf-8", errors="replace")
    return re.search(r"\bAMX\w*\s*=\s*1\b", system_info) is not None


@contextmanager
def _default_params(model: Mapping[str, Any], context: Mapping[str, Any]) -> Iterator[None]:
    """Load models with these ``llama_model_params`` and ``llama_context_params`` fields:
    llama-cpp-python's ``Llama`` starts from ``llama_model_default_params()`` and
    ``llama_context_default_params()`` and exposes only some of their fields, so the defaults are
    wrapped while a model loads (under a lock: the wrapper is process-wide)."""
    from llama_cpp import llama_cpp as lib

    def wrapped(default: Callable[[], Any], fields: Mapping[str, Any]) -> Callable[[], Any]:
        def params() -> Any:
            value = default()
            for name, field in fields.items():
                setattr(value, name, field)
            return value

        return params

    with _MODEL_PARAMS_LOCK:
        defaults = lib.llama_model_default_params, lib.llama_context_default_params
        lib.llama_model_default_params = wrapped(defaults[0], model)
        lib.llama_context_default_params = wrapped(defaults[1], context)
        try:
            yield
        finally:
            lib.llama_model_default_params, lib.llama_context_default_params = defaults


class PromptTooLongError(ValueError):
    """The prompt (question, evidence and instructions) does not fit the model's context window."""


def token_entropy(logits: np.ndarray) -> float:
    """Shannon entropy (nats) of the softmax of one step's logits."""
    return token_stats(logits)[2]


def _softmax(logits: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """The shifted logits, their softmax, and the softmax's normaliser (for the entropy)."""
    z = logits.astype(np.float64) - np.max(logits)
    p = np.exp(z)
    total = float(p.sum())
    return z, p / total, total


def token_stats(logits: np.ndarray) -> tuple[float, float, float]:
    """The softmax of one step's logits summarised: the top probability, its margin over the
    runner-up, and the Shannon entropy in nats.

    Runs once per generated token, between two forward passes of the model, so it stays off BLAS:
    ``np.dot`` over the ~150,000-word vocabulary wakes OpenBLAS's threads, which keep spinning after
    the call and take the cores from llama.cpp's next pass (measured: a one-token pass of the 1.5B
    model on two cores took 60-130 ms after it, 33 ms after the elementwise product and sum)."""
    z, p, total = _softmax(logits)
    top2 = np.partition(p, -2)[-2:] if p.size > 1 else np.array([0.0, p[0]])
    return float(top2[1]), float(top2[1] - top2[0]), float(np.log(total) - (p * z).sum())


FIRST_TOP = 8
"""How many of the first generated step's most probable tokens the metadata lists (``first_top``)."""

SCORED_CHUNK = 64
"""At most this many positions' logits are kept per pass when a prompt's tokens are scored
(``score_suffix``): llama.cpp's output buffer holds a row of the vocabulary for each (~0.6 MB for
Qwen2.5's 151,936) and keeps the largest it was asked for, so a long question is scored in passes."""


def top_tokens(logits: np.ndarray, n: int) -> list[tuple[int, float]]:
    """The ``n`` most probable token ids of one step's logits with their probabilities, best first."""
    _, p, _ = _softmax(logits)
    n = min(n, p.size)
    best = np.argpartition(p, -n)[-n:]
    return [(int(i), float(p[i])) for i in best[np.argsort(-p[best])]]


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens two token sequences share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class PromptLookup:
    """The draft for prompt-lookup decoding: the tokens that followed the latest occurrence of the
    generated text's last ``3``, ``2`` or ``1`` tokens (the longest that occurs) in the prompt after
    ``start`` (the question and its evidence, not the instructions), at most ``max_tokens`` of them.
    Called by llama-cpp-python with every token so far (prompt and answer)."""

    def __init__(self, max_tokens: int, max_ngram: int = 3, *, start: int = 0, end: int = 0) -> None:
        if max_tokens < 1 or max_ngram < 1:
            raise ValueError(f"max_tokens and max_ngram must be >= 1, got {max_tokens} and {max_ngram}")
        self.max_tokens = max_tokens
        self.max_ngram = max_ngram
        self.start = start  # where the question's part of the prompt begins
        self.end = end  # where the prompt ends: drafts come from the prompt only

    def __call__(self, input_ids: np.ndarray, /, **_: Any) -> np.ndarray:
        tokens = np.asarray(input_ids)
        if self.end <= self.start or tokens.size <= self.end:
            return np.array([], dtype=np.intc)
        source = tokens[self.start: self.end]
        for n in range(min(self.max_ngram, tokens.size - self.end), 0, -1):
            if source.size <= n:
                continue
            windows = np.lib.stride_tricks.sliding_window_view(source[:-1], n)
            found = np.nonzero(np.all(windows == tokens[-n:], axis=1))[0]
            if found.size:
                after = int(found[-1]) + n
                return source[after: after + self.max_tokens].astype(np.intc)
        return np.array([], dtype=np.intc)


StopRule = Callable[[Sequence[float], Sequence[float], Sequence[str]], bool]
"""Asked after each generated token is chosen, before it is evaluated: the probabilities and
margins of the tokens chosen so far (the newest included) and the text pieces of those already
evaluated (all but the newest); true stops the answer there, so a token that is not needed costs
no forward pass. The cascade uses it to stop an answer it will extend anyway."""


class PromptLayout(NamedTuple):
    """A chat-formatted prompt's tokens, the template's stop strings, the length of its instruction
    prefix, and where the last message's content ends (the template's closing follows)."""

    tokens: list[int]
    stop: list[str]
    prefix: int
    content_end: int


class KVSnapshot(NamedTuple):
    """The key/value cache of an evaluated token sequence, as llama.cpp serialises it."""

    tokens: tuple[int, ...]
    data: bytes


class LlamaCppChatModel(BaseChatModel):
    """Chat model over a GGUF file with llama-cpp-python. Greedy by default (temperature 0)."""

    model_path: str = Field(min_length=1)
    n_ctx: int = Field(default=4096, ge=256)
    n_threads: int = Field(default=2, ge=1)
    n_batch: int = Field(default=512, ge=1)
    temperature: float = Field(default=0.0, ge=0.0)
    max_tokens: int = Field(default=128, ge=1)
    seed: int = 0
    prefix_reuse: bool = True
    """Keep and restore key/value snapshots (see the module's notes); off: every prompt is
    evaluated from its first token."""
    recent_snapshots: int = Field(default=4, ge=0)
    """How many post-answer snapshots to keep, besides the pinned instruction prefixes."""
    extra_buffers: bool | None = None
    """llama.cpp's extra weight buffer types (AMX, repacked layouts; see the module's notes).
    None: on unless llama.cpp was built with AMX."""
    lookup_tokens: int = Field(default=0, ge=0)
    """Prompt-lookup decoding (see the module's notes): at most this many tokens copied from the
    prompt are verified with each generated token in one forward pass; 0: one token per pass. A
    call may set its own (``invoke(..., lookup_tokens=n)``)."""
    hidden_layers: tuple[int, ...] = ()
    """Transformer layers whose output at the answer's first token every reply returns (see the
    module's notes); a call may name its own (``invoke(..., hidden_layers=[16])``)."""

    _llama: Any = PrivateAttr(default=None)
    _formatter: Any = PrivateAttr(default=None)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)
    _pinned: Any = PrivateAttr(default_factory=dict)
    _recent: Any = PrivateAttr(default_factory=OrderedDict)
    _tap: Any = PrivateAttr(default=None)
    _fingerprint: Any = PrivateAttr(default=None)

    @property
    def _llm_type(self) -> str:
        return "llama-cpp"

    @property
    def fingerprint(self) -> str:
        """The weights loaded (:func:`file_fingerprint` of the GGUF file when :meth:`warm_up` read it):
        another file put at the same path answers differently, so a cached answer names these."""
        return self._fingerprint or file_fingerprint(Path(self.model_path))

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_path": self.model_path, "n_ctx": self.n_ctx, "temperature": self.temperature}

    def warm_up(self) -> None:
        """Load the GGUF file and its chat template (once; later calls do nothing)."""
        if self._llama is not None:
            return
        from llama_cpp import Llama, llama_model_n_embd
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        class CountingLlama(Llama):
            """Counts the tokens it evaluates, so the trace reports what prefix reuse saved, and the
            forward passes; while ``verifying`` (an answer is being generated with a draft) it asks
            for the logits of every position, so that each drafted token can be checked."""

            tokens_evaluated = 0
            passes = 0
            verifying = False
            read_layers: Sequence[int] = ()  # read these layers' outputs at the next decode (the first answer token)
            layer_values: dict[int, np.ndarray] = {}

            def eval(self, tokens: Sequence[int]) -> None:
                self.tokens_evaluated += len(tokens)
                self.passes += 1
                if self.verifying and self.read_layers:
                    layers, self.read_layers = self.read_layers, ()
                    with tap.reading(layers) as values:
                        self._eval(tokens)
                    self.layer_values = dict(values)
                    return
                self._eval(tokens)

            def eval_scoring(self, tokens: Sequence[int], scored: range) -> np.ndarray:
                """Evaluate ``tokens`` after the cache, as :meth:`eval` does, also keeping the logits
                that predict ``tokens[i]`` for each ``i`` in ``scored`` (``i >= 1``): returns those
                tokens' log-probabilities given all before them. The whole run is one pass where it
                fits a batch (a pass over a few tokens costs several times a token of a long one),
                and its last position's logits stay live, as :meth:`eval` leaves them, for sampling."""
                import llama_cpp

                if scored and not 1 <= scored.start <= scored.stop <= len(tokens):
                    raise ValueError(f"cannot score tokens {scored} of {len(tokens)}")
                self.tokens_evaluated += len(tokens)
                self.passes += 1
                wanted = range(scored.start - 1, scored.stop - 1)  # the positions whose logits predict them
                out = np.zeros(len(scored))
                self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
                start = 0
                while start < len(tokens):
                    # one pass: at most a batch, and at most SCORED_CHUNK rows of the vocabulary kept
                    stop = min(len(tokens), start + self.n_batch)
                    if len(range(max(start, wanted.start), min(stop, wanted.stop))) > SCORED_CHUNK:
                        stop = max(start, wanted.start) + SCORED_CHUNK
                    self._batch.set_batch(batch=list(tokens[start:stop]), n_past=self.n_tokens, logits_all=False)
                    kept = [p for p in range(start, stop) if p in wanted or p == stop - 1]
                    for p in kept:
                        self._batch.batch.logits[p - start] = True
                    self._ctx.decode(self._batch)
                    rows = np.ctypeslib.as_array(llama_cpp.llama_get_logits(self._ctx.ctx),
                                                 shape=(len(kept), self.n_vocab()))
                    mine = [(row, p) for row, p in enumerate(kept) if p in wanted]
                    if mine:
                        # a copy (the last row stays live for sampling), normalised in place: a
                        # vocabulary row per question token is most of what scoring costs in Python
                        logits = rows[[row for row, _ in mine]]
                        chosen = logits[np.arange(len(mine)), [tokens[p + 1] for _, p in mine]]
                        peak = logits.max(axis=1, keepdims=True)
                        np.exp(np.subtract(logits, peak, out=logits), out=logits)
                        out[[p - wanted.start for _, p in mine]] = chosen - (peak[:, 0] + np.log(logits.sum(axis=1)))
                    self.input_ids[self.n_tokens: self.n_tokens + stop - start] = tokens[start:stop]
                    self.n_tokens += stop - start
                    start = stop
                self._requires_eval = False
                return out

            def _eval(self, tokens: Sequence[int]) -> None:
                if not self.verifying or len(tokens) == 1:
                    super().eval(tokens)
                    return
                # Llama.eval with every position's logits; a draft is shorter than one batch
                self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
                self._batch.set_batch(batch=tokens, n_past=self.n_tokens, logits_all=True)
                self._ctx.decode(self._batch)
                self.input_ids[self.n_tokens: self.n_tokens + len(tokens)] = tokens
                self.n_tokens += len(tokens)
                self._requires_eval = False

        if not Path(self.model_path).is_file():
            raise FileNotFoundError(f"GGUF model file not found: {self.model_path}")
        fingerprint = file_fingerprint(Path(self.model_path))
        extra_buffers = not built_with_amx() if self.extra_buffers is None else self.extra_buffers
        tap = LayerTap()
        with _default_params({"use_extra_bufts": extra_buffers}, {"cb_eval": tap.callback}):
            llama = CountingLlama(
                model_path=self.model_path,
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                n_batch=self.n_batch,
                seed=self.seed,
                verbose=False,
            )
        tap.width = llama_model_n_embd(llama._model.model)
        self._tap = tap  # the context calls it back: it lives as long as the model
        template = llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise ValueError(f"{self.model_path} has no chat template in its metadata: it cannot chat")

        def token_text(token_id: int) -> str:
            return llama._model.token_get_text(token_id) if token_id != -1 else ""

        self._formatter = Jinja2ChatFormatter(
            template=template,
            eos_token=token_text(llama.token_eos()),
            bos_token=token_text(llama.token_bos()),
            stop_token_ids=[llama.token_eos()],
        )
        self._llama = llama
        self._fingerprint = fingerprint

    def reset_cache(self, *, pinned: bool = False, keep: Collection[tuple[int, ...]] | None = None) -> None:
        """Forget the live cache and the post-answer snapshots, so the next prompt starts from the
        warm instruction prefixes only (benchmarks do this before every query, so no system finds
        another's leftovers); ``pinned=True`` forgets those too (a cold start), and ``keep`` forgets
        those not among these (:meth:`pinned_prefixes` taken earlier: the prefixes pinned since go)."""
        with self._lock:
            if self._llama is not None:
                self._llama.reset()
            self._recent.clear()
            if pinned:
                self._pinned.clear()
            elif keep is not None:
                for key in [k for k in self._pinned if k not in keep]:
                    del self._pinned[key]

    def pinned_prefixes(self) -> frozenset[tuple[int, ...]]:
        """The instruction prefixes pinned now (each as its tokens)."""
        with self._lock:
            return frozenset(self._pinned)

    def _snapshot(self) -> KVSnapshot:
        import ctypes

        import llama_cpp

        ctx = self._llama._ctx.ctx
        size = llama_cpp.llama_state_get_size(ctx)
        buffer = (ctypes.c_uint8 * int(size))()
        written = int(llama_cpp.llama_state_get_data(ctx, buffer, size))
        tokens = tuple(int(t) for t in self._llama.input_ids[: self._llama.n_tokens])
        return KVSnapshot(tokens, bytes(memoryview(buffer)[:written]))

    def _restore(self, snapshot: KVSnapshot) -> None:
        import ctypes

        import llama_cpp

        llama = self._llama
        buffer = (ctypes.c_uint8 * len(snapshot.data)).from_buffer_copy(snapshot.data)
        if llama_cpp.llama_state_set_data(llama._ctx.ctx, buffer, len(snapshot.data)) != len(snapshot.data):
            raise RuntimeError("llama.cpp refused a key/value snapshot it wrote itself")
        llama.input_ids[: len(snapshot.tokens)] = snapshot.tokens
        llama.n_tokens = len(snapshot.tokens)
        llama._requires_eval = True  # sample only after a fresh decode: the snapshot has no logits

    def _prepare_cache(self, prompt: list[int], pin: int) -> None:
        """Make the live cache share as long a prefix with ``prompt`` as any snapshot allows,
        pinning the prompt's first ``pin`` tokens (its instructions) the first time they are seen."""
        llama = self._llama
        live = common_prefix(llama.input_ids[: llama.n_tokens].tolist(), prompt)
        key = tuple(prompt[:pin])
        if pin and key not in self._pinned:
            if live < pin:
                llama.reset()
                llama.eval(prompt[:pin])
            else:
                llama.n_tokens = pin
                llama._ctx.kv_cache_seq_rm(-1, pin, -1)
            self._pinned[key] = self._snapshot()
            live = pin
        best, best_len = None, live
        for snapshot in [*self._pinned.values(), *self._recent.values()]:
            shared = common_prefix(snapshot.tokens, prompt)
            if shared > best_len:
                best, best_len = snapshot, shared
        if best is not None:
            self._restore(best)

    def _score_span(self, prompt: list[int], begin: int, end: int) -> list[float]:
        """Evaluate the prompt, keeping the logits that predict ``prompt[begin:end]``: those tokens'
        log-probabilities given everything before them. What the cache already holds before ``begin``
        is reused; the rest is evaluated in one pass with the logits of the positions before
        ``prompt[begin:end]`` and of the last one kept (a cache keeps no logits, so those tokens are
        evaluated even when cached), and the completion samples the answer's first token from the
        last."""
        llama = self._llama
        if not 0 < begin <= end < len(prompt):
            raise ValueError(f"cannot score prompt tokens [{begin}, {end}) of {len(prompt)}")
        keep = min(common_prefix(llama.input_ids[: llama.n_tokens].tolist(), prompt), begin - 1)
        llama.n_tokens = keep
        return [float(x) for x in llama.eval_scoring(prompt[keep:], range(begin - keep, end - keep))]

    def _remember(self) -> None:
        if not self.recent_snapshots:
            return
        snapshot = self._snapshot()
        self._recent.pop(snapshot.tokens, None)
        self._recent[snapshot.tokens] = snapshot
        while len(self._recent) > self.recent_snapshots:
            self._recent.popitem(last=False)

    def count_tokens(self, text: str) -> int:
        self.warm_up()
        return len(self._text_tokens(text))

    def prompt_room(self, messages: Sequence[BaseMessage]) -> int:
        """Tokens of the context window left after ``messages`` as the chat template formats them
        (negative when the prompt alone does not fit)."""
        self.warm_up()
        return self.n_ctx - len(self._prompt_tokens(messages)[0])

    @property
    def n_layers(self) -> int:
        """The model's transformer layers (loads it): ``invoke(..., hidden_layers=[...])`` reads
        layers 0 to ``n_layers - 1``."""
        from llama_cpp import llama_model_n_layer

        self.warm_up()
        return int(llama_model_n_layer(self._llama._model.model))

    @property
    def hidden_size(self) -> int:
        """The width of a layer's output (loads the model)."""
        self.warm_up()
        return int(self._tap.width)

    def _text_tokens(self, text: str, *, add_bos: bool = False) -> list[int]:
        """Tokens of text that came from a user or a document: control-token strings stay text."""
        return self._llama.tokenize(text.encode("utf-8", errors="replace"), add_bos=add_bos, special=False)

    def _prompt_tokens(self, messages: Sequence[BaseMessage], opening: str = "") -> tuple[list[int], list[str], int]:
        layout = self._layout(messages, opening)
        return layout.tokens, layout.stop, layout.prefix

    def _suffix_span(self, messages: Sequence[BaseMessage], layout: PromptLayout, suffix: str) -> tuple[int, int]:
        """Where the tokens of ``suffix`` lie in the prompt: it must end the last message's content.
        They are the content's tokens past those it shares with the content less the suffix (a
        space before the suffix goes with its first word, as the tokenizer cuts it)."""
        text = messages[-1].text
        if not suffix or not text.endswith(suffix):
            raise ValueError(f"score_suffix must end the last message; it ends {text[-60:]!r}")
        content = self._text_tokens(text)
        shared = common_prefix(content, self._text_tokens(text[: len(text) - len(suffix)]))
        return layout.content_end - (len(content) - shared), layout.content_end

    def _layout(self, messages: Sequence[BaseMessage], opening: str = "") -> PromptLayout:
        """The chat-formatted prompt's tokens, the template's stop strings, and the length of the
        instruction prefix: the tokens before the last message's content when there is a system
        message (0 otherwise), and the tokens that content shares with ``opening`` less its trailing
        whitespace (the text every such message starts with: "Evidence:\n[1] " pins "Evidence:\n[1]").
        The space belongs to what follows: it goes with the next word, or stands alone before a digit,
        and the pinned prefix must not depend on which (each would pin an instruction snapshot of its own).

        The template is rendered around placeholders, then each piece is tokenized on its own: the
        template's text with control tokens parsed (``<|im_start|>`` and the like), each message's
        content as plain text.
        """
        chat = [{"role": _ROLES.get(m.type, "user"), "content": f"\x00{i}\x00"} for i, m in enumerate(messages)]
        formatted = self._formatter(messages=chat)
        tokens: list[int] = []
        prefix = content_end = 0
        add_bos = not formatted.added_special
        # split() gives the template's text at even positions and a message's number at odd ones
        for position, piece in enumerate(_PLACEHOLDER.split(formatted.prompt)):
            first = add_bos and not tokens
            if position % 2:
                index = int(piece)
                content = self._text_tokens(messages[index].text, add_bos=first)
                if index == len(messages) - 1 and index > 0 and messages[0].type == "system":
                    prefix = len(tokens)
                    if opening and messages[index].text.startswith(opening):
                        prefix += common_prefix(self._text_tokens(opening.rstrip()), content)
                tokens += content
                content_end = len(tokens)
            elif piece:
                tokens += self._llama.tokenize(piece.encode("utf-8"), add_bos=first, special=True)
        stop = formatted.stop if isinstance(formatted.stop, list) else [formatted.stop] if formatted.stop else []
        return PromptLayout(tokens, stop, prefix, content_end)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        from llama_cpp import LogitsProcessorList, StoppingCriteriaList

        self.warm_up()
        max_tokens = int(kwargs.get("max_tokens", self.max_tokens))
        pin_prefix: bool | str = kwargs.get("pin_prefix", True)
        lookup = int(kwargs.get("lookup_tokens", self.lookup_tokens))
        if lookup < 0:
            raise ValueError(f"lookup_tokens must be >= 0, got {lookup}")
        stop_when: StopRule | None = kwargs.get("stop_when")
        score_suffix: str | None = kwargs.get("score_suffix")
        hidden_layers = tuple(int(layer) for layer in kwargs.get("hidden_layers", self.hidden_layers))
        if any(not 0 <= layer < self.n_layers for layer in hidden_layers):
            raise ValueError(f"hidden_layers must be in [0, {self.n_layers}), got {list(hidden_layers)}")
        stopped = False  # stop_when held: the answer was cut there
        pieces_so_far: list[str] = []  # the text of each generated token evaluated so far, for stop_when
        probs: list[float] = []
        margins: list[float] = []
        entropies: list[float] = []
        evaluated: list[int] = []
        passes: list[int] = []  # forward passes before the first generated token
        first_top: list[tuple[int, float]] = []

        def record_stats(_input_ids: Any, scores: np.ndarray) -> np.ndarray:
            if not evaluated:  # called once the prompt is evaluated, before the first token
                evaluated.append(self._llama.tokens_evaluated)
                passes.append(self._llama.passes)
                self._llama.verifying = True
                first_top.extend(top_tokens(scores, FIRST_TOP))
            p, margin, entropy = token_stats(scores)
            probs.append(p)
            margins.append(margin)
            entropies.append(entropy)
            return scores

        def stop_early(input_ids: Any, _logits: Any) -> bool:
            nonlocal stopped
            if stop_when is None or not probs:
                return False
            if stopped:  # llama-cpp-python asks once more after the last token: the answer is over
                return True
            for token in input_ids[len(prompt) + len(pieces_so_far):].tolist():  # only the newly evaluated ones
                pieces_so_far.append(self._llama.detokenize([token]).decode("utf-8", errors="replace"))
            stopped = stop_when(probs, margins, pieces_so_far)
            return stopped

        with self._lock:
            layout = self._layout(messages, pin_prefix if isinstance(pin_prefix, str) else "")
            prompt, template_stop, prefix = layout.tokens, layout.stop, layout.prefix
            budget = self.n_ctx - len(prompt)
            if budget < 1:
                raise PromptTooLongError(
                    f"the question and its evidence are {len(prompt):,} tokens, more than the model's context of "
                    f"{self.n_ctx:,} tokens holds; ask a shorter question"
                )
            self._llama.tokens_evaluated = 0
            self._llama.verifying = False
            self._llama.read_layers, self._llama.layer_values = hidden_layers, {}
            self._llama.draft_model = (PromptLookup(min(lookup, self.n_batch - 1), start=prefix, end=len(prompt))
                                       if lookup else None)
            if self.prefix_reuse:
                self._prepare_cache(prompt, prefix if pin_prefix else 0)
            else:
                self._llama.reset()
            suffix_logprobs = (self._score_span(prompt, *self._suffix_span(messages, layout, score_suffix))
                               if score_suffix is not None else None)
            stream = self._llama.create_completion(
                prompt=prompt,
                max_tokens=min(max_tokens, budget),
                temperature=self.temperature,
                stop=list(stop or []) + template_stop,
                stream=True,
                seed=self.seed,
                logits_processor=LogitsProcessorList([record_stats]),
                stopping_criteria=StoppingCriteriaList([stop_early]) if stop_when is not None else None,
            )
            text_parts: list[str] = []
            finish_reason = None
            for part in stream:
                choice = part["choices"][0]
                finish_reason = choice.get("finish_reason") or finish_reason
                piece = choice.get("text") or ""
                if piece:
                    text_parts.append(piece)
                    chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
                    if run_manager:
                        run_manager.on_llm_new_token(piece, chunk=chunk)
                    yield chunk
            self._llama.verifying = False
            self._llama.read_layers = ()  # an answer that ended at its first token decoded nothing more
            hidden = {layer: tuple(values.tolist()) for layer, values in self._llama.layer_values.items()}
            # drafted tokens evaluated past the answer's end leave the cache: it holds what one-at-a-time
            # decoding leaves, the prompt and every chosen token but the last
            kept = len(prompt) + max(len(probs) - 1, 0)
            if self._llama.n_tokens > kept:
                self._llama.n_tokens = kept
                self._llama._ctx.kv_cache_seq_rm(-1, kept, -1)
            decode_passes = self._llama.passes - passes[0] if passes else 0
            output_tokens = self.count_tokens("".join(text_parts)) if text_parts else 0
            # the generated tokens the model evaluated (all but the last one sampled), as text pieces
            generated = self._llama.input_ids[len(prompt): self._llama.n_tokens].tolist()
            pieces = [self._llama.detokenize([t]).decode("utf-8", errors="replace") for t in generated]
            top = [(self._llama.detokenize([t]).decode("utf-8", errors="replace"), p) for t, p in first_top]
            if self.prefix_reuse:
                self._remember()
        yield ChatGenerationChunk(
            message=AIMessageChunk(
                content="",
                usage_metadata={
                    "input_tokens": len(prompt),
                    "output_tokens": output_tokens,
                    "total_tokens": len(prompt) + output_tokens,
                },
                response_metadata={
                    "finish_reason": finish_reason,
                    "prompt_tokens_evaluated": evaluated[0] if evaluated else self._llama.tokens_evaluated,
                    "token_probs": probs,
                    "token_pieces": pieces,
                    "token_margins": margins,
                    "token_entropies": entropies,
                    "first_top": top,
                    "stopped_early": stopped,
                    "decode_passes": decode_passes,
                    **({"hidden_states": hidden} if hidden_layers else {}),
                    **({"suffix_logprobs": suffix_logprobs} if suffix_logprobs is not None else {}),
                    "model_name": Path(self.model_path).name,
                },
                chunk_position="last",
            )
        )

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        merged: ChatGenerationChunk | None = None
        for chunk in self._stream(messages, stop=stop, run_manager=run_manager, **kwargs):
            merged = chunk if merged is None else merged + chunk
        assert merged is not None
        message = cast(AIMessageChunk, merged.message)
        return ChatResult(
            generations=[
                ChatGeneration(
                    message=AIMessage(
                        content=message.content,
                        usage_metadata=message.usage_metadata,
                        response_metadata=message.response_metadata,
                    )
                )
            ]
        )


class HuggingFaceChatModel(ChatHuggingFace):
    """A transformers model through ``langchain-huggingface``: loaded when constructed, so
    :meth:`warm_up` has nothing left to do."""

    _fingerprint: Any = PrivateAttr(default=None)

    def warm_up(self) -> None:
        return None

    @property
    def fingerprint(self) -> str:
        """The weights loaded: a local folder's files (:func:`file_fingerprint`), or a Hugging Face
        name with the revision the files came from."""
        if self._fingerprint is None:
            model = self.llm.pipeline.model
            folder = Path(model.name_or_path)
            self._fingerprint = (file_fingerprint(folder) if folder.is_dir()
                                 else model_digest([model.name_or_path, getattr(model.config, "_commit_hash", None)]))
        return cast(str, self._fingerprint)

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    def reset_cache(self, *, pinned: bool = False, keep: Collection[tuple[int, ...]] | None = None) -> None:
        """transformers keeps no prompt cache between calls: nothing to forget."""
        return None

    def pinned_prefixes(self) -> frozenset[tuple[int, ...]]:
        return frozenset()


Generator = LlamaCppChatModel | HuggingFaceChatModel
"""The generators this project runs: LangChain chat models that keep the component contract."""


def load_chat_model(model: str, *, n_threads: int = 2, n_ctx: int = 4096, seed: int = 0) -> Generator:
    """A chat model for a preset name, a ``.gguf`` path, or a Hugging Face name/folder."""
    if not model or not model.strip():
        raise ValueError(f"model must be a preset ({', '.join(PRESETS)}), a .gguf path or a Hugging Face name")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    if model in PRESETS:
        return LlamaCppChatModel(model_path=str(gguf_path(model)), n_threads=n_threads, n_ctx=n_ctx, seed=seed)
    path = Path(model).expanduser()
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise FileNotFoundError(f"GGUF model file not found: {path}")
        return LlamaCppChatModel(model_path=str(path.resolve()), n_threads=n_threads, n_ctx=n_ctx, seed=seed)
    if path.is_file():
        raise ModelFileError(f"{path} is not a .gguf file: give a preset ({', '.join(PRESETS)}), a .gguf file, "
                             "a folder holding a transformers model or a Hugging Face name")
    if path.is_dir() and not (path / "config.json").is_file():
        raise ModelFileError(f"{path} holds no transformers model (no config.json); for a GGUF model give its .gguf file")
    if not path.exists() and (path.is_absolute() or model.startswith((".", "~"))):
        raise ModelFileError(f"no model at {path}")
    return _load_transformers_chat_model(model, n_threads=n_threads)


def _load_transformers_chat_model(model: str, *, n_threads: int) -> HuggingFaceChatModel:
    """transformers through ``langchain-huggingface``, for users with a Hugging Face model at hand."""
    import torch
    from langchain_huggingface import HuggingFacePipeline

    torch.set_num_threads(n_threads)
    try:
        llm = HuggingFacePipeline.from_model_id(
            model_id=model,
            task="text-generation",
            pipeline_kwargs={"max_new_tokens": 128, "do_sample": False, "return_full_text": False},
        )
    except Exception as exc:  # offline, not in the cache, no such repository, a model transformers cannot read
        why = next(iter(str(exc).splitlines()), "no message")
        raise ModelFileError(f"could not load {model!r} as a Hugging Face model ({type(exc).__name__}: {why}); "
                             f"this machine may be offline: the presets ({', '.join(PRESETS)}) and .gguf files "
                             "load without a network") from exc
    return HuggingFaceChatModel(llm=llm)


def context_room(chat_model: BaseChatModel, messages: Sequence[BaseMessage]) -> int | None:
    """Tokens of the model's context window that ``messages`` leave for the answer (negative: the
    prompt alone does not fit); None for a model that reports no window (transformers)."""
    if isinstance(chat_model, LlamaCppChatModel):
        return chat_model.prompt_room(messages)
    return None


def max_tokens_kwargs(chat_model: BaseChatModel, max_new_tokens: int, stop_when: StopRule | None = None,
                      stop_at: Sequence[str] = (), lookup_tokens: int | None = None,
                      opening: str = "", score_suffix: str | None = None) -> dict[str, Any]:
    """The call keywords that cap the answer length for this kind of chat model, stop it early by
    ``stop_when`` or where its text reaches one of ``stop_at``, decode it with prompt lookup
    (``lookup_tokens``; None: the model's own setting) and pin the last message's fixed ``opening``
    with the instructions, and report the log-probabilities of ``score_suffix``'s tokens (the end of
    the last message), where the model supports that (llama.cpp; others always finish the answer one
    token at a time, keep no cache and report no prompt probabilities)."""
    if isinstance(chat_model, LlamaCppChatModel):
        return {"max_tokens": max_new_tokens, **({"stop_when": stop_when} if stop_when is not None else {}),
                **({"stop": list(stop_at)} if stop_at else {}),
                **({"lookup_tokens": lookup_tokens} if lookup_tokens is not None else {}),
                **({"pin_prefix": opening} if opening else {}),
                **({"score_suffix": score_suffix} if score_suffix else {})}
    return {"pipeline_kwargs": {"max_new_tokens": max_new_tokens}}
