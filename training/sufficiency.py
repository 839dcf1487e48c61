"""Training the sufficiency scorer (:mod:`components.sufficiency`) on the train splits.

    python -m training.sufficiency [--epochs 2] [--out components/sufficiency] [--report docs/sufficiency]

Each SQuAD 2.0 train-article question is paired with the five passages the shipped cascade keeps
for it (the hybrid reranker's best five of the dense top ten, from the train benchmark index). Its
label is 1 when the question is answerable and a gold answer string is among the five passages, 0
otherwise (unanswerable, or the retrieval missed it). The questions whose recorded answers fit the
answerability check (``training/labels/answerability_runs_reranked.jsonl``: all its SQuAD and
HotpotQA train questions) are held out, so the check is fit on scores the scorer gives to questions
it never saw, and they give the report's figures. HotpotQA train's 200 questions all fit the check,
so the scorer learns from SQuAD only; the check weighs it on both datasets.

``--cross-fit N`` trains no shipped scorer. It splits the 20 train articles into ``N`` folds and
trains one scorer per fold on the other folds' questions (the check's included), then scores each of
the check's SQuAD questions with the scorer that never saw its article (HotpotQA questions in turn,
by position), into ``training/labels/sufficiency_cross_fit.jsonl``. The check is fit on those scores:
questions held out one by one still share passages with the questions the shipped scorer learnt
from, so their scores separate better on train than on unseen articles.

The bundled MiniLM-L6 with its embeddings and first ``6 - len(--layers)`` encoder layers frozen,
the rest and a linear head trained with AdamW (linear warm-up over the first tenth, then linear
decay), batches of 16, seeded. Nothing here looks at a dev question.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from components.sufficiency import CARD, DEFAULT_SCORER, WEIGHTS, base_model, logits, pair_text, trained_tensors
from eval.metrics import normalize_answer

CHECK_RUNS = Path(__file__).resolve().parent / "labels" / "answerability_runs_reranked.jsonl"
CROSS_FIT = Path(__file__).resolve().parent / "labels" / "sufficiency_cross_fit.jsonl"
"""The check's training questions, each scored by a scorer that never saw its article (``--cross-fit``)."""
REPORT_DIR = Path(__file__).resolve().parent.parent / "docs" / "sufficiency"
LAYERS = (2, 3, 4, 5)
SEED = 11


def holds_answer(answers: Sequence[str], passages: Sequence[str]) -> bool:
    """Whether a gold answer string (normalised) is in one of the passages."""
    golds = [g for g in (normalize_answer(a) for a in answers) if g]
    return any(g in normalize_answer(p) for p in passages for g in golds)


@functools.cache
def _embedder():
    from components.embedder import Embedder

    embedder = Embedder()
    embedder.warm_up()
    return embedder


@functools.cache
def _index(dataset: str, split: str, root: str | None):
    from eval.corpora import benchmark_index

    index = benchmark_index(dataset, split, _embedder(), root)
    index.warm_up()
    return index


def kept_passages(examples, dataset: str, split: str, root: str | None = None) -> list[list[str]]:
    """The five passage texts the shipped cascade keeps for each example (the reranker's best five of
    the dense top :data:`pipeline.configuration.RERANK_CANDIDATES`). The embedder and each benchmark
    index load once per process."""
    from components.reranker import HybridReranker
    from pipeline.configuration import RERANK_CANDIDATES
    from training.rerank import kept_five

    embedder, index, reranker = _embedder(), _index(dataset, split, root), HybridReranker()
    return [[p.text for p in kept_five(e.question, index.search(embedder.embed_query(e.question), RERANK_CANDIDATES),
                                       RERANK_CANDIDATES, reranker)] for e in examples]


def recorded_passages(records: Sequence[Any], root: str | None = None) -> list[list[str]]:
    """:func:`kept_passages` for recorded train questions (each with ``id`` and ``dataset``), in
    their order: each dataset's examples loaded once, its questions retrieved together."""
    from eval.datasets import load

    out: dict[int, list[str]] = {}
    for dataset in sorted({r["dataset"] for r in records}):
        positions = [i for i, r in enumerate(records) if r["dataset"] == dataset]
        examples = {e.id: e for e in load(dataset, "train", root)}
        found = kept_passages([examples[records[i]["id"]] for i in positions], dataset, "train", root)
        out.update(zip(positions, found, strict=True))
    return [out[i] for i in range(len(records))]


def train(rows: Sequence[dict[str, Any]], *, epochs: float, layers: Sequence[int], max_length: int,
          lr: float = 5e-5, batch_size: int = 16, seed: int = SEED, log=print) -> tuple[Any, Any, Any]:
    """Fine-tune the upper ``layers`` and a head on ``rows`` ({question, passages, label})."""
    import torch

    torch.manual_seed(seed)
    rng = random.Random(seed)
    model, tokenizer, head = base_model()
    for name, param in model.named_parameters():
        param.requires_grad = any(name.startswith(f"encoder.layer.{i}.") for i in layers)
    params = [p for p in model.parameters() if p.requires_grad] + list(head.parameters())
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    steps = max(1, int(len(rows) * epochs / batch_size))
    warm = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (steps - s) / steps))
    model.train()
    order: list[int] = []
    start = time.perf_counter()
    for step in range(steps):
        if len(order) < batch_size:
            order = rng.sample(range(len(rows)), len(rows))
        chunk = [rows[order.pop()] for _ in range(batch_size)]
        batch = tokenizer([r["question"] for r in chunk], [pair_text(r["passages"]) for r in chunk],
                          truncation="only_second", max_length=max_length, padding=True, return_tensors="pt")
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            logits(model, head, batch), torch.tensor([float(r["label"]) for r in chunk]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        if step % 50 == 0 or step == steps - 1:
            log(f"step {step + 1}/{steps}  loss {loss.item():.3f}  {time.perf_counter() - start:.0f} s")
    model.eval()
    head.eval()
    return model, tokenizer, head


def save(model: Any, head: Any, out: Path, card: dict[str, Any]) -> None:
    """The trained tensors (float16 safetensors) and the card, each written atomically."""
    import torch
    from safetensors.torch import save_file

    from components.storage import atomic_path, atomic_write_text

    trained = trained_tensors(model, head, card["trained_layers"])
    tensors = {k: v.detach().to(torch.float16).contiguous() for k, v in trained.items()}
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / WEIGHTS) as tmp:
        save_file(tensors, str(tmp))
    atomic_write_text(out / CARD, json.dumps(card, indent=2) + "\n")


def held_out_figures(records: Sequence[dict[str, Any]], scores: Sequence[float]) -> dict[str, Any]:
    """The scorer on the check's questions (never trained on): AUROCs and mean scores per dataset."""
    from training.cascade import auroc

    s = np.asarray(scores, dtype=float)
    squad = np.array([r["dataset"] == "squad" for r in records])
    answerable = np.array([bool(r["answerable"]) for r in records])
    label = np.array([bool(r["label"]) for r in records])
    right = np.array([bool(r["answerable"]) and r["f1"] >= 0.5 for r in records])
    out: dict[str, Any] = {
        "squad_questions": int(squad.sum()), "hotpotqa_questions": int((~squad).sum()),
        "auroc_label_squad": auroc(s[squad], label[squad]),
        "auroc_answerable_squad": auroc(s[squad], answerable[squad]),
        "auroc_answer_right_squad": auroc(s[squad], right[squad]),
        "auroc_answer_right_hotpotqa": auroc(s[~squad], right[~squad]),
        "mean_score": {"squad answerable": float(s[squad & answerable].mean()),
                       "squad unanswerable": float(s[squad & ~answerable].mean()),
                       "hotpotqa": float(s[~squad].mean())},
    }
    return out


def report(card: dict[str, Any]) -> str:
    fig = card["held_out"]
    lines = [
        "# The sufficiency scorer", "",
        "Written by `python -m training.sufficiency` from the train splits only. A cross-encoder (the bundled "
        f"MiniLM-L6, encoder layers {', '.join(map(str, card['trained_layers']))} and a head fine-tuned) reads a question "
        "with the "
        "five passages the shipped cascade keeps for it and gives the probability that they hold its answer. "
        "Trained on "
        f"{card['trained_on']['questions']} SQuAD 2.0 train-article questions ({100 * card['trained_on']['positive_share']:.1f}% "
        f"positive: answerable, with a gold answer among the five passages), {card['epochs']} epochs, "
        f"{card['training_s'] / 60:.0f} min on this machine's 2 cores.", "",
        f"## Held out: the answerability check's {fig['squad_questions']} SQuAD and {fig['hotpotqa_questions']} "
        "HotpotQA train questions", "",
        "The check is fit on these questions' recorded answers, so the scorer never trained on them.", "",
        "| AUROC | |", "| --- | --- |",
        f"| SQuAD: answerable with the answer among the passages, against the rest | {fig['auroc_label_squad']:.3f} |",
        f"| SQuAD: answerable against unanswerable | {fig['auroc_answerable_squad']:.3f} |",
        f"| SQuAD: the cascade's answer right (F1 >= 0.5) against the rest | {fig['auroc_answer_right_squad']:.3f} |",
        f"| HotpotQA: the cascade's answer right against wrong | {fig['auroc_answer_right_hotpotqa']:.3f} |", "",
        "| mean score | |", "| --- | --- |",
        *(f"| {k} | {v:.3f} |" for k, v in fig["mean_score"].items()), "",
        f"Scoring one question takes {card['score_ms']:.1f} ms (median over the held-out questions, one at a time).", "",
    ]
    return "\n".join(lines)


def article_folds(titles: Sequence[str], folds: int) -> dict[str, int]:
    """Each article's fold: the sorted titles dealt round-robin, so every fold has articles."""
    return {title: i % folds for i, title in enumerate(sorted(set(titles)))}


def cross_fit(check: Sequence[dict[str, Any]], args: argparse.Namespace, layers: Sequence[int]) -> int:
    """One scorer per article fold, trained on the other folds; each check question scored out of fold."""
    import tempfile

    from components.storage import atomic_write_text
    from components.sufficiency import SufficiencyScorer
    from eval.datasets import load

    squad = list(load("squad", "train", args.data_dir))
    fold_of = article_folds([e.meta["title"] for e in squad], args.cross_fit)
    passages = dict(zip((e.id for e in squad), kept_passages(squad, "squad", "train", args.data_dir), strict=True))
    examples = {e.id: e for e in squad}
    check_passages = dict(zip((r["id"] for r in check), recorded_passages(check, args.data_dir), strict=True))
    question_fold = {r["id"]: fold_of[examples[r["id"]].meta["title"]] if r["dataset"] == "squad" else i % args.cross_fit
                     for i, r in enumerate(check)}
    lines = []
    for fold in range(args.cross_fit):
        train_on = [e for e in squad if fold_of[e.meta["title"]] != fold]
        rows = [{"question": e.question, "passages": passages[e.id],
                 "label": e.answerable and holds_answer(e.answers, passages[e.id])} for e in train_on]
        print(f"fold {fold}: {len(rows)} training questions from {sum(f != fold for f in fold_of.values())} articles",
              flush=True)
        model, _, head = train(rows, epochs=args.epochs, layers=layers, max_length=args.max_length)
        with tempfile.TemporaryDirectory() as tmp:
            save(model, head, Path(tmp), {"name": f"sufficiency-fold-{fold}", "base": "all-MiniLM-L6-v2",
                                          "max_length": args.max_length, "trained_layers": list(layers)})
            scorer = SufficiencyScorer(tmp)
            scorer.warm_up()
            mine = [r for r in check if question_fold[r["id"]] == fold]
            scores = scorer.score_batch([(r["question"], check_passages[r["id"]]) for r in mine])
            lines += [json.dumps({"id": r["id"], "dataset": r["dataset"], "fold": fold, "sufficiency": score})
                      for r, score in zip(mine, scores, strict=True)]
    atomic_write_text(args.scores, "\n".join(lines) + "\n")
    print(f"{len(lines)} check questions scored out of fold into {args.scores}")
    return 0


def main(argv: list[str] | None = None) -> int:
    from components.storage import atomic_write_text
    from components.sufficiency import SufficiencyScorer
    from eval.datasets import load
    from eval.runner import read_records

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--layers", default=",".join(map(str, LAYERS)), help="encoder layers to train (default: %(default)s)")
    parser.add_argument("--limit", type=int, default=None, help="train on this many questions at most (a quick run)")
    parser.add_argument("--check-runs", type=Path, default=CHECK_RUNS, help="the check's training answers (held out)")
    parser.add_argument("--data-dir", default=None, help="benchmark data folder (default: ../shared/data)")
    parser.add_argument("--cross-fit", type=int, default=0, metavar="N",
                        help="instead of the shipped scorer, N article-fold scorers that score the check's questions "
                             "out of fold, into --scores")
    parser.add_argument("--scores", type=Path, default=CROSS_FIT, help="where --cross-fit writes (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=DEFAULT_SCORER)
    parser.add_argument("--report", type=Path, default=REPORT_DIR)
    args = parser.parse_args(argv)
    layers = tuple(sorted({int(x) for x in args.layers.split(",")}))
    if not layers or min(layers) < 0 or max(layers) > 5:
        parser.error("--layers: encoder layers of MiniLM-L6 are 0..5")
    if args.cross_fit == 1 or args.cross_fit < 0:
        parser.error("--cross-fit: at least 2 folds")

    check = read_records(args.check_runs)
    if args.cross_fit:
        return cross_fit(check, args, layers)
    held = {r["id"] for r in check}
    squad = [e for e in load("squad", "train", args.data_dir) if e.id not in held]
    if args.limit:
        squad = random.Random(SEED).sample(squad, min(args.limit, len(squad)))
    rows = [{"question": e.question, "passages": p, "label": e.answerable and holds_answer(e.answers, p)}
            for e, p in zip(squad, kept_passages(squad, "squad", "train", args.data_dir), strict=True)]
    print(f"{len(rows)} training questions, {np.mean([r['label'] for r in rows]):.1%} positive", flush=True)
    start = time.perf_counter()
    model, _, head = train(rows, epochs=args.epochs, layers=layers, max_length=args.max_length)
    training_s = time.perf_counter() - start
    card: dict[str, Any] = {
        "name": "sufficiency-minilm-l6", "base": "all-MiniLM-L6-v2", "max_length": args.max_length,
        "trained_layers": list(layers), "epochs": args.epochs, "seed": SEED,
        "trained_on": {"dataset": "squad train articles", "questions": len(rows),
                       "positive_share": float(np.mean([r["label"] for r in rows])),
                       "held_out": str(args.check_runs.name)},
        "fitted": datetime.now(timezone.utc).isoformat(timespec="seconds"), "training_s": training_s,
    }
    save(model, head, args.out, card)

    scorer = SufficiencyScorer(args.out)
    scorer.warm_up()
    records, pairs = [], []
    for r, p in zip(check, recorded_passages(check, args.data_dir), strict=True):
        records.append({**r, "label": bool(r["answerable"]) and holds_answer(r["gold_answers"], p)})
        pairs.append((r["question"], p))
    times, scores = [], []
    for question, p in pairs:
        t = time.perf_counter()
        scores.append(scorer.score(question, p))
        times.append((time.perf_counter() - t) * 1000.0)
    card.update(held_out=held_out_figures(records, scores), score_ms=float(np.median(times)))
    atomic_write_text(args.out / CARD, json.dumps(card, indent=2) + "\n")
    args.report.mkdir(parents=True, exist_ok=True)
    text = report(card)
    atomic_write_text(args.report / "README.md", text)
    print(text)
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
