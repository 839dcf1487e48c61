"""How many dense candidates the cascade's reranker should choose its five passages from, measured on
the train splits without the generator.

For each answerable training question: the dense top ``max(CANDIDATES)`` from the benchmark index,
then for each candidate count the hybrid reranker's best five of that many (5: it only reorders the
dense five). Reported per dataset: how often the first passage is relevant (what the cascade's
cheapest tier mostly holds), the first two, and relevance among all five. Relevant means: holds a
gold answer string (SQuAD 2.0) or belongs to a gold supporting title (HotpotQA; among five, the
share of the question's gold titles found).

    python -m training.rerank [--size 300] [--report docs/rerank]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from components.passages import Passage
from components.reranker import HybridReranker, Reranker
from eval.metrics import normalize_answer

CANDIDATES = (5, 10, 20)
SETS = (("squad", 600), ("hotpotqa", 300))  # sampled, then the answerable ones kept (SQuAD 2.0: about half)
SEED = 7
REPORT_DIR = Path(__file__).resolve().parent.parent / "docs" / "rerank"


def relevance(example) -> Callable[[Passage], bool]:
    """Whether a passage is relevant to ``example``: has a gold supporting title (HotpotQA) or holds a
    gold answer (the others; a SQuAD question's title is its article's, shared by every passage of it)."""
    titles = set(example.evidence.get("titles", ())) if example.dataset == "hotpotqa" else set()
    if titles:
        return lambda p: p.title in titles
    golds = [g for g in (normalize_answer(a) for a in example.answers) if g]
    return lambda p: any(g in normalize_answer(p.text) for g in golds)


def kept_five(question: str, hits: Sequence, candidates: int | None, reranker: Reranker) -> list[Passage]:
    """The five passages a pipeline keeps: dense order (``None``), or the reranker's best five of the
    first ``candidates`` hits (stable: ties keep dense order)."""
    if candidates is None:
        return [h.passage for h in hits[:5]]
    pool = hits[:candidates]
    scores = reranker.score(question, [h.passage for h in pool], [h.score for h in pool])
    return [pool[i].passage for i in np.argsort(-np.asarray(scores), kind="stable")[:5]]


def measure(examples, index, embedder, reranker: Reranker, candidates: Sequence[int] = CANDIDATES) -> dict[str, list[float]]:
    """Per ordering (``dense``, then ``best 5 of N``): [first relevant, first two, relevance among five], in %."""
    orders: list[tuple[str, int | None]] = [("dense", None), *((f"best 5 of {n}", n) for n in candidates)]
    sums = {name: np.zeros(3) for name, _ in orders}
    for e in examples:
        hits = index.search(embedder.embed_query(e.question), max(candidates))
        rel = relevance(e)
        gold_titles = set(e.evidence.get("titles", ())) if e.dataset == "hotpotqa" else set()
        for name, n in orders:
            five = kept_five(e.question, hits, n, reranker)
            flags = [rel(p) for p in five]
            among = len({p.title for p in five} & gold_titles) / len(gold_titles) if gold_titles else float(any(flags))
            sums[name] += (flags[0], any(flags[:2]), among)
    return {name: (100 * total / max(len(examples), 1)).round(1).tolist() for name, total in sums.items()}


def report(results: dict[str, tuple[int, dict[str, list[float]]]]) -> str:
    lines = ["# How many candidates the cascade reranks", "",
             "Written by `python -m training.rerank` from the train splits only (no generator involved). For each "
             "answerable training question, the five passages kept: by dense rank, or the hybrid reranker's "
             "(dense + BM25 + title overlap, default weights, not tuned) best five of N dense candidates. "
             "Relevant: holds a gold answer string (SQuAD 2.0) or has a gold supporting title (HotpotQA; "
             "'among the five' is then the share of the question's gold titles found).", ""]
    for dataset, (n, rows) in results.items():
        lines += [f"## {dataset} train, {n} answerable questions", "",
                  "| five passages | first relevant % | one of first two % | among the five % |", "| --- | --- | --- | --- |"]
        lines += [f"| {name} | {a:.1f} | {b:.1f} | {c:.1f} |" for name, (a, b, c) in rows.items()]
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from components.embedder import Embedder
    from components.storage import atomic_write_text
    from eval.corpora import benchmark_index
    from eval.datasets import load
    from eval.runner import sample

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=None, help="benchmark data folder (default: ../shared/data)")
    parser.add_argument("--report", type=Path, default=REPORT_DIR, help="where README.md goes")
    args = parser.parse_args(argv)
    embedder = Embedder()
    embedder.warm_up()
    reranker = HybridReranker()
    results = {}
    for dataset, size in SETS:
        index = benchmark_index(dataset, "train", embedder, args.data_dir)
        index.warm_up()
        examples = [e for e in sample(load(dataset, "train", args.data_dir), size, SEED) if e.answerable]
        results[dataset] = (len(examples), measure(examples, index, embedder, reranker))
    text = report(results)
    args.report.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.report / "README.md", text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
