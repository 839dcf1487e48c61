"""What one generated token costs, through the product's generator and as a bare forward pass.

    python -m eval.decode_speed [--model qwen2.5-coder-1.5b] [--tokens 31] [--repeats 5]

Prints the median time of an answer of 1 and of ``--tokens`` tokens on a cached prompt (so their
difference over ``tokens - 1`` is the cost of a generated token through
``LlamaCppChatModel.invoke``, statistics and all), the bare one-token pass of llama.cpp, the same
pass right after a BLAS call over the vocabulary (``np.dot``, what the per-token statistics used
to do: OpenBLAS's threads keep spinning after it and take the cores from llama.cpp), and passes
over several tokens at once (what verifying a prompt-lookup draft costs; 128 tokens is a
question with its evidence), and an answer with and without reading a layer's hidden state at its
first token (what the answer probe needs) and an answer prompt evaluated with and without scoring
its question's tokens (what the check's question-likelihood features need); each pair alternates, so
drifts in the machine's speed hit both alike. Speeds vary between
machines and runs: read the figures side by side, from one run.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable

import numpy as np


def _median_ms(run: Callable[[], object], repeats: int, before: Callable[[], object] = lambda: None) -> float:
    times = []
    for _ in range(repeats):
        before()
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def _alternating_ms(runs: list[Callable[[], object]], repeats: int) -> list[float]:
    """The median time of each run, the runs taking turns ``repeats`` times."""
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(repeats):
        for run, took in zip(runs, times, strict=True):
            start = time.perf_counter()
            run()
            took.append((time.perf_counter() - start) * 1000.0)
    return [statistics.median(took) for took in times]


def main(argv: list[str] | None = None) -> int:
    from langchain_core.messages import HumanMessage, SystemMessage

    from components.generator import load_chat_model

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--tokens", type=int, default=31)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--hidden-layer", type=int, default=16, help="the layer an answer reads (default 16, the probe's)")
    args = parser.parse_args(argv)
    if args.tokens < 2 or args.repeats < 1:
        parser.error("--tokens must be >= 2 and --repeats >= 1")

    model = load_chat_model(args.model, n_ctx=2048)
    model.warm_up()
    messages = [SystemMessage("You write long answers."), HumanMessage("Tell a long story about a cat. " * 5)]
    model.invoke(messages, max_tokens=1)  # the prompt is cached from here on

    one = _median_ms(lambda: model.invoke(messages, max_tokens=1), args.repeats)
    many = _median_ms(lambda: model.invoke(messages, max_tokens=args.tokens), args.repeats)
    print(f"answer of 1 token: {one:.0f} ms; of {args.tokens} tokens: {many:.0f} ms; "
          f"per generated token: {(many - one) / (args.tokens - 1):.1f} ms")
    plain, read = _alternating_ms([lambda: model.invoke(messages, max_tokens=4),
                                   lambda: model.invoke(messages, max_tokens=4, hidden_layers=[args.hidden_layer])],
                                  4 * args.repeats)
    print(f"answer of 4 tokens: {plain:.1f} ms; reading layer {args.hidden_layer} at its first token: {read:.1f} ms "
          f"({read - plain:+.1f} ms)")

    # an answer prompt evaluated from the pinned instructions, with and without the question's tokens scored
    from prompts import answer_messages, answer_opening

    question = "In which year did the plague reach Europe with Genoese traders?"
    evidence = [{"n": n, "title": "Black Death", "text": text} for n, text in enumerate((
        "The Black Death was a bubonic plague pandemic that struck Afro-Eurasia from 1346 to 1353.",
        "The plague reached Europe in 1347, carried by Genoese traders fleeing the siege of Caffa in Crimea.",
        "It killed an estimated 25 to 50 million people in Europe, a third or more of its population.",
        "Outbreaks recurred in Europe until the nineteenth century."), 1)]
    answer = answer_messages(question, evidence)

    def answer_from_the_instructions(**extra: object) -> None:
        model.reset_cache()
        model.invoke(answer, max_tokens=4, pin_prefix=answer_opening(), **extra)

    answer_from_the_instructions()  # pins the instructions
    plain, scored = _alternating_ms([answer_from_the_instructions,
                                     lambda: answer_from_the_instructions(score_suffix=question)], 4 * args.repeats)
    print(f"answer of 4 tokens from {model._layout(answer).content_end - model._layout(answer, answer_opening()).prefix} "
          f"new prompt tokens: {plain:.1f} ms; scoring the question's {len(model._text_tokens(' ' + question))} tokens: "
          f"{scored:.1f} ms ({scored - plain:+.1f} ms, {100 * (scored - plain) / plain:+.1f}%)")

    llama = model._llama  # the bare passes below need llama.cpp itself
    llama.reset()
    llama.eval(llama.tokenize(b"The plague reached Europe with Genoese traders in 1347. " * 3))
    base = llama.n_tokens
    vocab = np.random.default_rng(0).random(llama.n_vocab())

    def rewind() -> None:
        llama.n_tokens = base
        llama._ctx.kv_cache_seq_rm(-1, base, -1)

    def one_pass(tokens: list[int]) -> Callable[[], None]:
        return lambda: llama.eval(tokens)

    token = llama.tokenize(b" the", add_bos=False)[0]
    bare = _median_ms(one_pass([token]), args.repeats, rewind)
    after_dot = _median_ms(one_pass([token]), args.repeats, lambda: (rewind(), np.dot(vocab, vocab)))
    after_sum = _median_ms(one_pass([token]), args.repeats, lambda: (rewind(), float((vocab * vocab).sum())))
    print(f"one-token pass: {bare:.1f} ms bare; {after_dot:.1f} ms right after np.dot over the vocabulary; "
          f"{after_sum:.1f} ms right after the elementwise product and sum")
    for k in (2, 4, 8, 128):
        ms = _median_ms(one_pass([token] * k), args.repeats, rewind)
        print(f"pass over {k} tokens: {ms:.1f} ms ({ms / k:.1f} ms a token)")
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
