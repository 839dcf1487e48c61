"""The query cache on a realistic stream of questions: hit rate, time saved, false hits.

    python -m eval.cache_stream fit                    # the similarity threshold, from SQuAD 2.0 train
    python -m eval.cache_stream run --split dev        # the stream through the graph, with the cache on

A stream is built from a seeded sample of SQuAD 2.0 questions (one split), each an *intent*:

* the **original** question;
* **repeats**: the same question as people retype it (other case, punctuation, spacing);
* **paraphrases**: the same question in other words, written by the generator itself ("rewrite
  this question in other words"), so no paraphrase data set is needed offline;
* **near-misses**: other questions about the same paragraph (another intent, often a near-identical
  wording with another answer): the cache must *not* serve these.

``fit`` embeds train-split paraphrases and near-misses and picks the lowest cosine at which no
near-miss on train would be served (and at most ``--max-false-hits`` of them), reported beside the
share of paraphrases it catches. It then measures the cache's word check
(:func:`components.query_cache.asks_the_same`) on those paraphrases and on *minimal edits*: every pair
of train questions about the same paragraph that share at least half their content words and no
gold answer, SQuAD 2.0's own near-misses (its unanswerable questions were written as small edits of
answerable ones). ``run`` sends a stream through the compiled graph with the cache
on (the shipped ``cascade`` policy, each question from the same warm state), in stream order
(every repeat and paraphrase comes after its original), and reports: hits by kind, the false-hit
rate (a hit whose cached question is another intent), F1 of the answers served from the cache
against their own question's gold answers, and the time saved (what the original took, less the
hit's own time). Nothing is tuned on the dev stream.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from eval.contexts import positive, reports_errors

PARAPHRASE_SYSTEM = ("You rewrite questions in other words. Keep the meaning exactly; change the wording and the word "
                     "order. Reply with the rewritten question only.")
REPORT_DIR = Path(__file__).resolve().parent.parent / "docs" / "cache"


def retype(question: str, rng: random.Random) -> str:
    """The question as someone retyping it might: other case, no final question mark, extra spaces."""
    variants = [question.lower(), question.upper(), question.rstrip("?").strip(), "  " + question.replace(" ", "  ")]
    return rng.choice(variants)


def paraphrase(generator, question: str) -> str:
    from langchain_core.messages import HumanMessage, SystemMessage

    reply = generator.invoke([SystemMessage(PARAPHRASE_SYSTEM), HumanMessage(question)], max_tokens=48)
    text = reply.text.strip().splitlines()[0].strip() if reply.text.strip() else question
    return text.strip('"').strip()


def build_stream(examples: list, generator, n_intents: int, seed: int) -> list[dict[str, Any]]:
    """Originals, then their repeats, paraphrases and near-misses, in a seeded order in which every
    follow-up comes after its original."""
    rng = random.Random(seed)
    by_paragraph: dict[str, list] = defaultdict(list)
    for e in examples:
        by_paragraph[e.meta.get("context", e.id)].append(e)
    pool = [e for e in examples if len(by_paragraph[e.meta.get("context", e.id)]) > 1]
    rng.shuffle(pool)
    originals, used = [], set()
    for e in pool:
        if len(originals) == n_intents:
            break
        if e.meta.get("context") in used:
            continue
        used.add(e.meta.get("context"))
        originals.append(e)
    stream: list[dict[str, Any]] = []
    for i, e in enumerate(originals):
        item = {"intent": e.id, "kind": "original", "question": e.question, "gold": list(e.answers)}
        stream.append(item)
        follow = []
        if i % 3 == 0:
            follow.append({**item, "kind": "repeat", "question": retype(e.question, rng)})
        if i % 3 != 2:
            follow.append({**item, "kind": "paraphrase", "question": paraphrase(generator, e.question)})
        sibling = next(s for s in by_paragraph[e.meta["context"]] if s.id != e.id)
        if i % 2 == 0:
            follow.append({"intent": sibling.id, "kind": "near-miss", "question": sibling.question,
                           "gold": list(sibling.answers)})
        for f in follow:  # somewhere later in the stream
            stream.insert(rng.randint(len(stream), len(stream) + 2 * len(follow)), f)
    return stream


def minimal_edits(examples: list, min_overlap: float = 0.5) -> list[tuple[str, str]]:
    """Pairs of questions about the same paragraph whose content words overlap by at least
    ``min_overlap`` (Jaccard) and whose gold answers share none: near-identical wordings, other answers."""
    from itertools import combinations

    from components.reranker import content_words

    by_paragraph: dict[str, list] = defaultdict(list)
    for e in examples:
        by_paragraph[e.meta.get("context", e.id)].append(e)
    pairs = []
    for questions in by_paragraph.values():
        for a, b in combinations(questions, 2):
            wa, wb = set(content_words(a.question)), set(content_words(b.question))
            if (wa and wb and len(wa & wb) / len(wa | wb) >= min_overlap
                    and not {x.casefold() for x in a.answers} & {x.casefold() for x in b.answers}
                    and a.question.strip().casefold() != b.question.strip().casefold()):
                pairs.append((a.question, b.question))
    return pairs


def fit(args: argparse.Namespace) -> int:
    from components.embedder import Embedder
    from components.generator import load_chat_model
    from components.model_files import DEFAULT_PRESET
    from components.query_cache import asks_the_same
    from eval.datasets import load
    from eval.runner import sample

    examples = sample(load("squad", "train", args.data_dir), None, args.seed)
    generator = load_chat_model(args.model or DEFAULT_PRESET)
    generator.warm_up()
    stream = build_stream(examples, generator, args.intents, args.seed)
    embedder = Embedder()
    embedder.warm_up()
    originals = {s["intent"]: s for s in stream if s["kind"] == "original"}
    vec = {s["question"]: embedder.embed_query(s["question"]) for s in stream}
    positives, negatives = [], []
    for s in stream:
        if s["kind"] == "paraphrase":
            positives.append(float(vec[s["question"]] @ vec[originals[s["intent"]]["question"]]))
        elif s["kind"] == "near-miss":  # its closest original of another intent
            negatives.append(max(float(vec[s["question"]] @ vec[o["question"]]) for o in originals.values()))
    allowed = int(args.max_false_hits)
    threshold = sorted(negatives)[-(allowed + 1)] + 1e-4 if len(negatives) > allowed else 0.5
    caught = float(np.mean([p >= threshold for p in positives])) if positives else 0.0
    paraphrases = [(originals[s["intent"]]["question"], s["question"]) for s in stream if s["kind"] == "paraphrase"]
    edits = minimal_edits(examples)
    for pair in edits:
        for q in pair:
            if q not in vec:
                vec[q] = embedder.embed_query(q)

    def served(pairs: list[tuple[str, str]], checked: bool) -> int:
        return sum(float(vec[a] @ vec[b]) >= threshold and (not checked or asks_the_same(a, b)) for a, b in pairs)

    result = {"threshold": round(threshold, 4), "paraphrases": len(positives), "near_misses": len(negatives),
              "paraphrases_caught": caught, "paraphrases_caught_checked": served(paraphrases, True) / max(len(paraphrases), 1),
              "minimal_edits": len(edits), "minimal_edits_served": served(edits, False),
              "minimal_edits_served_checked": served(edits, True),
              "near_miss_cosines": sorted(round(n, 4) for n in negatives),
              "paraphrase_cosines": sorted(round(p, 4) for p in positives), "split": "squad train", "seed": args.seed}
    REPORT_DIR.mkdir(parents=True, exist_ok=True)
    (REPORT_DIR / "fit.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if not k.endswith("cosines")}))
    return 0


def run(args: argparse.Namespace) -> int:
    from components.query_cache import QueryCache
    from eval.contexts import load_run_context
    from eval.datasets import load
    from eval.metrics import f1_score
    from eval.runner import sample
    from eval.scoring import prediction_text
    from graph import graph

    args.dataset = "squad"
    ctx = load_run_context(args)
    examples = sample(load("squad", args.split, args.data_dir), None, args.seed)
    stream = build_stream(examples, ctx.generator, args.intents, args.seed)
    cached = replace(ctx, query_cache=QueryCache(similarity=args.similarity))  # the shipped pipeline, cache on
    rows, first_ms = [], {}
    for item in stream:
        ctx.generator.reset_cache()
        start = time.perf_counter()
        out = graph.invoke({"question": item["question"]}, context=cached)
        ms = (time.perf_counter() - start) * 1000
        hit = out["trace"].get("cache")
        row = {**item, "answer": out["answer"], "latency_ms": ms, "hit": hit["hit"] if hit else None,
               "cached_question": hit["cached_question"] if hit else None,
               "f1": f1_score(prediction_text(out["answer"]), item["gold"]) if item["gold"] else
               float(prediction_text(out["answer"]) == "")}
        if hit:
            source = next(r for r in rows if r["question"] == hit["cached_question"] or
                          r["question"].strip() == hit["cached_question"])
            row["false_hit"] = source["intent"] != item["intent"]
            row["saved_ms"] = first_ms.get(source["intent"], ms) - ms
            row["source_f1"] = source["f1"]  # the served answer, scored against the question it was made for
        else:
            first_ms.setdefault(item["intent"], ms)
        rows.append(row)
    out_dir = REPORT_DIR / f"squad-{args.split}"
    out_dir.mkdir(parents=True, exist_ok=True)
    with (out_dir / "stream.jsonl").open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    summary = summarise(rows, args.similarity)
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0


def summarise(rows: list[dict[str, Any]], similarity: float) -> dict[str, Any]:
    kinds = sorted({r["kind"] for r in rows})
    hits = [r for r in rows if r["hit"]]
    total_ms = sum(r["latency_ms"] for r in rows)
    saved = sum(r.get("saved_ms", 0.0) for r in hits)
    return {
        "similarity": similarity,
        "questions": len(rows),
        "by_kind": {k: {"questions": sum(r["kind"] == k for r in rows),
                        "hits": sum(bool(r["hit"]) for r in rows if r["kind"] == k)} for k in kinds},
        "hit_rate": len(hits) / len(rows) if rows else 0.0,
        "false_hits": sum(bool(r.get("false_hit")) for r in hits),
        "false_hit_rate": sum(bool(r.get("false_hit")) for r in hits) / len(hits) if hits else 0.0,
        "f1_served_from_cache": 100 * float(np.mean([r["f1"] for r in hits])) if hits else None,
        "f1_of_the_answers_when_first_given": 100 * float(np.mean([r["source_f1"] for r in hits])) if hits else None,
        "stream_seconds": total_ms / 1000,
        "seconds_saved": saved / 1000,
        "share_of_time_saved": saved / (total_ms + saved) if total_ms + saved else 0.0,
        "hit_latency_ms_median": float(np.median([r["latency_ms"] for r in hits])) if hits else None,
    }


@reports_errors
def main(argv: list[str] | None = None) -> int:
    from components.query_cache import DEFAULT_SIMILARITY

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    fit_parser = sub.add_parser("fit", help="the similarity threshold from a SQuAD 2.0 train stream")
    fit_parser.add_argument("--max-false-hits", type=int, default=0, help="near-misses the threshold may serve")
    run_parser = sub.add_parser("run", help="a stream through the graph with the cache on")
    run_parser.add_argument("--split", default="dev")
    run_parser.add_argument("--similarity", type=float, default=DEFAULT_SIMILARITY)
    for p in (fit_parser, run_parser):
        p.add_argument("--intents", type=positive, default=40, help="original questions in the stream")
        p.add_argument("--seed", type=int, default=13)
        p.add_argument("--model", default=None)
        p.add_argument("--data-dir", default=None)
    args = parser.parse_args(argv)
    return fit(args) if args.command == "fit" else run(args)


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
