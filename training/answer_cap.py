"""How many tokens may an answer take? The tiers' ``max_new_tokens``, measured on recorded train answers.

    python -m training.answer_cap [--report docs/answer_cap]

No generator runs. An answer is meant to be a name, a date or a short phrase, and most are a few
tokens; the long ones are full sentences, and each of their tokens is a decoding pass, the dearest
step on a CPU. For each cap of :data:`CAPS` every recorded answer (the cascade's grid and the k = 5
baseline's, SQuAD 2.0 train articles and HotpotQA train) is cut to its first ``cap`` tokens in the
generator's own tokenizer, given in the form the pipeline gives it (:mod:`components.short_answer`)
and scored again; the passes it would have saved are counted. A cap is worth shipping only where it
loses F1 on no dataset and no way of answering (the cascade fit's rule). The answers' confidence
signals are not recomputed: the cascade decides on the first token's probability, which a cap does
not change.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from components.short_answer import short_answer
from eval.metrics import f1_score
from eval.scoring import prediction_text
from training.cascade import REFERENCE_RUNS, read_runs, shown_path

RUNS = (Path(__file__).resolve().parent / "labels" / "cascade_runs_evidence_first_reranked.jsonl", REFERENCE_RUNS)
"""The shipped cascade's train answers at 128 tokens and all five passages, and the k = 5 baseline's."""
CAPS = (8, 10, 12, 16, 20, 24, 32)
REPORT_DIR = Path(__file__).resolve().parent.parent / "docs" / "answer_cap"


def given(question: str, text: str) -> str:
    """The answer as the pipeline gives it: empty for an abstention, else its short form."""
    text = prediction_text(text)
    return short_answer(question, text) if text else ""


def answers(runs: Sequence[Mapping[str, Any]], source: str) -> list[dict[str, Any]]:
    """Every recorded answer of ``runs``: its question, gold answers, text, passes and where it came from."""
    out = []
    for r in runs:
        for step in r["grid"]:
            if step.get("padded"):
                continue
            budget = "all" if step["budget"] is None else step["budget"]
            out.append({"dataset": r["dataset"], "question": r["question"], "gold": r["gold_answers"],
                        "text": step["answer"], "passes": step.get("decode_passes") or step["output_tokens"],
                        "way": f"{source} at {budget}"})
    return out


def measure(rows: Sequence[Mapping[str, Any]], cap: int, tokenize: Callable[[str], list[int]],
            detokenize: Callable[[list[int]], str]) -> dict[tuple[str, str], dict[str, float]]:
    """For each (way of answering, dataset): mean F1 as recorded and cut to ``cap`` tokens, answers
    cut, and decoding passes saved per answer."""
    groups: dict[tuple[str, str], dict[str, float]] = {}
    for row in rows:
        g = groups.setdefault((row["way"], row["dataset"]), {"n": 0, "f1": 0.0, "f1_capped": 0.0, "cut": 0, "saved": 0.0})
        tokens = tokenize(row["text"])
        f1 = f1_score(given(row["question"], row["text"]), row["gold"])
        g["n"] += 1
        g["f1"] += f1
        if len(tokens) > cap:
            g["cut"] += 1
            g["saved"] += max(row["passes"] - cap, 0)
            g["f1_capped"] += f1_score(given(row["question"], detokenize(tokens[:cap])), row["gold"])
        else:
            g["f1_capped"] += f1
    return {key: {"n": g["n"], "f1": 100 * g["f1"] / g["n"], "f1_capped": 100 * g["f1_capped"] / g["n"],
                  "cut": g["cut"], "saved": g["saved"] / g["n"]} for key, g in sorted(groups.items())}


def report(results: Mapping[int, Mapping[tuple[str, str], Mapping[str, float]]], sources: Sequence[Path],
           longest: int | None = None) -> str:
    lines = ["# How many tokens may an answer take? Measured on recorded train answers", "",
             "Written by `python -m training.answer_cap` from " + ", ".join(f"`{shown_path(p)}`" for p in sources)
             + " (no generator runs; no dev question). Each answer cut to its first *cap* tokens, given in short "
             "form and scored again; passes saved per answer. A cap is worth shipping only where it loses F1 on no "
             "dataset and no way of answering.", "",
             "| cap | way of answering | dataset | answers | F1 → capped | cut | passes saved per answer |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    keep = []
    for cap, groups in results.items():
        for (way, dataset), g in groups.items():
            lines.append(f"| {cap} | {way} | {dataset} | {g['n']} | {g['f1']:.2f} → {g['f1_capped']:.2f} | {g['cut']} | "
                         f"{g['saved']:.2f} |")
        if all(g["f1_capped"] >= g["f1"] for g in groups.values()):
            keep.append(cap)
    lines += ["", (f"Caps that lose no F1 anywhere: {', '.join(map(str, keep))}." if keep else
                   "No cap of these loses no F1 anywhere: the tiers keep their `max_new_tokens` (64, 128 for Hard and "
                   "the baseline)." + (f" The longest recorded answer has {longest} tokens." if longest else ""))]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from llama_cpp import Llama

    from components.generator import gguf_path
    from components.storage import atomic_write_text

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--report", type=Path, default=REPORT_DIR)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", help="whose tokenizer counts the tokens")
    args = parser.parse_args(argv)
    vocab = Llama(model_path=str(gguf_path(args.model)), vocab_only=True, verbose=False)

    def tokenize(text: str) -> list[int]:
        return vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    def detokenize(tokens: list[int]) -> str:
        return vocab.detokenize(tokens).decode("utf-8", "ignore").strip()

    rows = [*answers(read_runs(RUNS[0]), "cascade"), *answers(read_runs(RUNS[1]), "baseline")]
    results = {cap: measure(rows, cap, tokenize, detokenize) for cap in CAPS}
    text = report(results, RUNS, max(len(tokenize(r["text"])) for r in rows))
    args.report.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.report / "README.md", text)
    print(text)
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
