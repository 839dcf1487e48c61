"""How many dense candidates the cascade's reranker should choose its five passages from, measured on
the train splits without the generator.

For each answerable training question: the dense top ``max(CANDIDATES)`` from the benchmark index,
then for each candidate count the hybrid reranker's best five of that many (5: it only reorders the
dense five). Reported per dataset: how often the first passage is relevant (what the cascade's
cheapest tier mostly holds), the first two, and relevance among all five. Relevant means: holds a
gold answer string (SQuAD 2.0) or belongs to a gold supporting title (HotpotQA; among five, the
share of the question's gold titles found).

``weights`` fits the hybrid reranker's three weights the same way: a grid, chosen on one half of the
training questions and reported on the other (SQuAD 2.0 halves split by article, so no article is in
both). ``--knowledge-base wikipedia`` fits them for the Wikipedia summaries, the chat's default
knowledge base, on NQ-open and TriviaQA train (natural questions, written without the passage in
view; relevant: holds a gold answer string) instead of SQuAD 2.0 and HotpotQA's pooled contexts.

``learned`` fits the learned reranker (:class:`components.reranker.LearnedReranker`): a logistic
regression over :data:`components.reranker.RANK_FEATURES`, each of a question's ten dense candidates a
row, labelled by its relevance. It is fit on the questions the other fits were fit on (the answerable
SQuAD 2.0 train questions that ``training/labels`` names; with ``--fit-on squad hotpotqa`` HotpotQA
train's too, as session 76 fit it), so that a benchmark run drawn ``--unseen-by training/labels
docs/results`` never holds one; reported fit on one half and scored on the other, and, fit on all, on
the answerable SQuAD 2.0 train questions of the committed runs (``docs/results``), which no fit saw.
``--against WEIGHTS`` scores another fit's weights on those questions beside it, question by question.

    python -m training.rerank [candidates|weights|learned] [--knowledge-base benchmark|wikipedia] [--report docs/rerank]
    python -m training.rerank learned [--fit-on squad [hotpotqa]] [--against WEIGHTS] [--model-out PATH]
"""

from __future__ import annotations

import argparse
import itertools
import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from components.logistic import fit_logistic
from components.passages import Passage
from components.reranker import DEFAULT_RANKER, RANK_FEATURES, HybridReranker, RankerModel, Reranker, rank_features
from eval.metrics import normalize_answer
from pipeline.configuration import RERANK_CANDIDATES

CANDIDATES = (5, 10, 20)
SETS = (("squad", 600), ("hotpotqa", 300))  # sampled, then the answerable ones kept (SQuAD 2.0: about half)
SEED = 7
WEIGHT_SETS = {"benchmark": (("squad", 2000), ("hotpotqa", 800)),
               # every question kept (no context tells which are answerable); most have no answer in the summaries
               "wikipedia": (("nq", 1500), ("triviaqa", 1500))}
SHIPPED = (HybridReranker.w_dense, HybridReranker.w_bm25, HybridReranker.w_title)
GRID = tuple(itertools.product((0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0), (0.0, 0.1, 0.2, 0.3, 0.4), (0.0, 0.05, 0.1, 0.2)))
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


@dataclass(frozen=True)
class Scored:
    """One training question's candidates as the weights fit sees them."""

    dataset: str
    held_out: bool
    features: np.ndarray  # (candidates, 3): HybridReranker.features; the learned fit's: rank_features
    relevant: np.ndarray  # (candidates,) bool
    titles: tuple[str, ...]  # the candidates' titles
    gold_titles: frozenset[str]  # HotpotQA's supporting titles; empty elsewhere


def held_out(example) -> bool:
    """Which half a question falls in: by its article's title for SQuAD 2.0 (its questions share
    passages), else by its id; a hash, so the split is the same on every machine."""
    key = example.meta.get("title", example.id) if example.dataset == "squad" else example.id
    return bool(zlib.crc32(key.encode("utf-8")) & 1)


def scored(examples, index, embedder, candidates: int = RERANK_CANDIDATES,
           features: Callable = HybridReranker().features) -> list[Scored]:
    """Each example's candidates with their ``features`` (the hybrid's three, whose weights are what the weights fit
    varies, or :func:`components.reranker.rank_features`) and relevance."""
    rows = []
    for e in examples:
        hits = index.search(embedder.embed_query(e.question), candidates)
        passages = [h.passage for h in hits]
        rel = relevance(e)
        gold = frozenset(e.evidence.get("titles", ())) if e.dataset == "hotpotqa" else frozenset()
        rows.append(Scored(e.dataset, held_out(e), features(e.question, passages, [h.score for h in hits]),
                           np.array([rel(p) for p in passages], dtype=bool), tuple(p.title for p in passages), gold))
    return rows


def kept(row: Scored, score: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The positions of the five candidates of ``row`` that ``score`` keeps, best first, ties in dense order."""
    return np.argsort(-score(row.features), kind="stable")[:5]


def ranked(rows: Sequence[Scored], score: Callable[[np.ndarray], np.ndarray]) -> list[float]:
    """[first relevant, one of the first two, among the five] in % for ``score`` (a row's features to its candidates'
    scores) keeping five, ties in dense order: :func:`rates` for any score."""
    total = np.zeros(3)
    for row in rows:
        order = kept(row, score)
        flags = row.relevant[order]
        among = (len({row.titles[i] for i in order} & row.gold_titles) / len(row.gold_titles) if row.gold_titles
                 else float(flags.any()))
        total += np.array([flags[0], flags[:2].any(), among], dtype=np.float64)
    return (100 * total / max(len(rows), 1)).round(1).tolist()


def rates(rows: Sequence[Scored], weights: tuple[float, float, float]) -> list[float]:
    """[first relevant, one of the first two, among the five] in % for the reranker with ``weights``
    keeping five (ties keep dense order, as :func:`kept_five`)."""
    return ranked(rows, HybridReranker(*weights).weigh)


def objective(by_dataset: dict[str, list[float]]) -> float:
    """What the fit maximises: the mean of each dataset's first-relevant and first-two rates (what the
    cascade's one- and two-passage first looks read)."""
    return float(np.mean([r[i] for r in by_dataset.values() for i in (0, 1)]))


def fit_weights(rows: Sequence[Scored], grid=GRID, shipped=SHIPPED) -> dict:
    """Every grid triple scored on the fit half; the best chosen (ties: nearest the shipped triple, the
    weights normalised to sum 1), and it and the shipped triple scored on the held-out half."""
    datasets = sorted({r.dataset for r in rows})

    def by_dataset(weights, held: bool) -> dict[str, list[float]]:
        return {d: rates([r for r in rows if r.dataset == d and r.held_out == held], weights) for d in datasets}

    def distance(weights) -> float:
        a, b = np.asarray(weights) / sum(weights), np.asarray(shipped) / sum(shipped)
        return float(np.abs(a - b).sum())

    fitted = [(w, by_dataset(w, False)) for w in grid]
    ranked = sorted(fitted, key=lambda item: (-round(objective(item[1]), 6), distance(item[0])))
    chosen = ranked[0][0]
    return {
        "questions": {d: {"fit": sum(1 for r in rows if r.dataset == d and not r.held_out),
                          "held_out": sum(1 for r in rows if r.dataset == d and r.held_out)} for d in datasets},
        "shipped": {"weights": list(shipped), "fit": by_dataset(shipped, False), "held_out": by_dataset(shipped, True)},
        "chosen": {"weights": list(chosen), "fit": ranked[0][1], "held_out": by_dataset(chosen, True)},
        "best_on_fit": [{"weights": list(w), "objective": round(objective(r), 2), **r} for w, r in ranked[:10]],
    }


def weights_report(fit: dict, knowledge_base: str = "benchmark") -> str:
    if knowledge_base == "benchmark":
        title, command, questions = ("The hybrid reranker's weights", "weights",
                                     "the answerable training questions")
        relevance_text, corpus, halves = "Relevance as in README.md.", "", " (SQuAD 2.0 halves split by article)"
    else:
        title, command = (f"The hybrid reranker's weights for the {knowledge_base.capitalize()} knowledge base",
                          f"weights --knowledge-base {knowledge_base}")
        questions = "the training questions"
        relevance_text = ("Relevant: holds a gold answer string. Most questions have none among their candidates "
                          "(the summaries hold few of their answers), which lowers every rate alike; the order can "
                          "only matter where one does, and the last table counts those questions alone.")
        corpus = f" Retrieval from the {knowledge_base.capitalize()} index (the chat's default knowledge base)."
        halves = " (by a hash of the question's id)"
    lines = [f"# {title}", "",
             f"Written by `python -m training.rerank {command}` from the train splits only (no generator involved)."
             f"{corpus} A grid of {len(GRID)} weight triples (dense, BM25, title), the reranker keeping five of "
             f"{RERANK_CANDIDATES} dense candidates; chosen on one half of {questions} by the mean of the "
             "first-relevant and one-of-the-first-two rates of both datasets, reported on the other half"
             f"{halves}. A triple with no BM25 and no title weight keeps the dense order. {relevance_text}", ""]
    for d, n in fit["questions"].items():
        lines.append(f"- {d} train: {n['fit']} questions to fit, {n['held_out']} held out")
    lines += ["", "| weights | half | dataset | first relevant % | one of first two % | among the five % |",
              "| --- | --- | --- | --- | --- | --- |"]
    for name in ("shipped", "chosen"):
        for half in ("fit", "held_out"):
            label = f"{name} {tuple(fit[name]['weights'])} | {half.replace('_', ' ')}"
            lines += [f"| {label} | {d} | {a:.1f} | {b:.1f} | {c:.1f} |" for d, (a, b, c) in fit[name][half].items()]
    lines += ["", "Objective (mean of the four first / first-two rates): "
              f"shipped {objective(fit['shipped']['fit']):.2f} fit, {objective(fit['shipped']['held_out']):.2f} held out; "
              f"chosen {objective(fit['chosen']['fit']):.2f} fit, {objective(fit['chosen']['held_out']):.2f} held out.", "",
              "The ten best on the fit half:", "", "| weights | objective |", "| --- | --- |"]
    lines += [f"| {tuple(b['weights'])} | {b['objective']:.2f} |" for b in fit["best_on_fit"]]
    if "where_relevant" in fit:
        lines += ["", "Both halves, only the questions with a relevant passage among their candidates, and how "
                  "often each order puts one first where the other does not:", "",
                  "| weights | dataset | questions | first relevant % | one of first two % | among the five % "
                  "| first relevant, the other not |", "| --- | --- | --- | --- | --- | --- | --- |"]
        for name in ("shipped", "chosen"):
            for d, row in fit["where_relevant"][name].items():
                a, b, c = row["rates"]
                lines.append(f"| {name} {tuple(fit[name]['weights'])} | {d} | {row['questions']} | {a:.1f} | {b:.1f} "
                             f"| {c:.1f} | {row['first_only']} |")
    return "\n".join(lines) + "\n"


def where_relevant(rows: Sequence[Scored], fit: dict) -> dict:
    """The shipped and chosen weights on the questions with a relevant candidate (both halves): their
    rates, and how many questions each puts a relevant passage first on where the other does not."""
    firsts = {}
    for name in ("shipped", "chosen"):
        reranker = HybridReranker(*fit[name]["weights"])
        firsts[name] = [bool(r.relevant[np.argsort(-reranker.weigh(r.features), kind="stable")[0]]) for r in rows]
    out: dict = {"shipped": {}, "chosen": {}}
    for d in sorted({r.dataset for r in rows}):
        keep = [i for i, r in enumerate(rows) if r.dataset == d and r.relevant.any()]
        for name, other in (("shipped", "chosen"), ("chosen", "shipped")):
            out[name][d] = {"questions": len(keep), "rates": rates([rows[i] for i in keep], tuple(fit[name]["weights"])),
                            "first_only": sum(firsts[name][i] and not firsts[other][i] for i in keep)}
    return out


LEARNED_DATASETS = ("squad", "hotpotqa")
DATASET_NAMES = {"squad": "SQuAD 2.0", "hotpotqa": "HotpotQA"}
LEARNED_FIT_ON = ("squad",)
"""The train questions the shipped learned reranker is fit on: SQuAD 2.0's alone, the one corpus it ranked for in
sessions 76 to 81 (``eval.corpora.RERANKERS``: both corpora have the hybrid since session 82). Session 76 also fit
it on HotpotQA's 200; without them it puts a relevant passage first for about one point more of the committed runs'
questions (docs/rerank/learned.md)."""
LEARNED_L2 = 1.0
"""The learned reranker's L2 penalty on its standardised coefficients (chosen before its held-out figures were read)."""
FIT_QUESTIONS = Path(__file__).resolve().parent / "labels"
"""The questions the learned reranker is fit on: those the other fits were (their records name them)."""
COMMITTED_RUNS = Path(__file__).resolve().parent.parent / "docs" / "results"
"""The committed runs, whose SQuAD 2.0 train questions score the learned reranker fit on all of its own."""


def fit_ranker(rows: Sequence[Scored], metadata: dict | None = None) -> RankerModel:
    """The learned reranker fit on every candidate of ``rows`` (their :func:`components.reranker.rank_features`)."""
    features = np.vstack([r.features for r in rows])
    labels = np.concatenate([r.relevant for r in rows]).astype(int)
    return fit_logistic(features.tolist(), labels.tolist(), list(RANK_FEATURES), l2=LEARNED_L2,
                        metadata=metadata, model=RankerModel)


def hybrid_score(features: np.ndarray) -> np.ndarray:
    """The shipped hybrid's score from :func:`components.reranker.rank_features` (its first three columns)."""
    return HybridReranker().weigh(features[:, :3])


def learned_fit(rows: Sequence[Scored], held: Sequence[Scored], against: RankerModel | None = None) -> tuple[RankerModel, dict]:
    """The reranker fit on all of ``rows`` and what it and the hybrid give: on each half of ``rows`` when fit on
    the other, and on ``held`` (questions no fit saw) when fit on all; ``against``, another fit's weights, on
    ``held`` too (:func:`paired_first`)."""
    datasets = sorted({r.dataset for r in rows})
    halves: dict = {}
    for half in (False, True):
        model = fit_ranker([r for r in rows if r.held_out != half])
        for d in datasets:
            scored_half = [r for r in rows if r.dataset == d and r.held_out == half]
            halves[f"{d}, half {int(half)}"] = {"questions": len(scored_half), "hybrid": ranked(scored_half, hybrid_score),
                                                "learned": ranked(scored_half, model.logits)}
    counts = {d: sum(1 for r in rows if r.dataset == d) for d in datasets}
    model = fit_ranker(rows, {"fit_on": [f"{d} train" for d in datasets], "questions": counts,
                              "candidates": RERANK_CANDIDATES, "l2": LEARNED_L2,
                              "label": "the candidate holds a gold answer (SQuAD 2.0) or a gold supporting title (HotpotQA)"})
    figures = {"halves": halves,
               "committed_runs": {"questions": len(held), "hybrid": ranked(held, hybrid_score),
                                  "learned": ranked(held, model.logits)}}
    if against is not None:
        figures["committed_runs"]["against"] = {"fit_on": against.metadata.get("fit_on"),
                                                "figures": ranked(held, against.logits),
                                                **paired_first(held, model.logits, against.logits)}
    return model, figures


ARTICLE_FOLDS = 5
"""The folds of SQuAD 2.0's train articles that :func:`article_rankers` fits a reranker without."""


def article_folds(titles: Sequence[str], folds: int = ARTICLE_FOLDS) -> dict[str, int]:
    """Each article title's fold: the titles in the order of a hash of each, dealt round the folds, so that the
    folds are as even as the articles allow and the same on every machine."""
    if folds < 2:
        raise ValueError(f"cross-fitting needs at least 2 folds, got {folds}")
    order = sorted(set(titles), key=lambda t: (zlib.crc32(t.encode("utf-8")), t))
    if len(order) < folds:
        raise ValueError(f"{len(order)} articles cannot fill {folds} folds")
    return {title: n % folds for n, title in enumerate(order)}


def article_rankers(examples, index, embedder, folds: int = ARTICLE_FOLDS) -> dict[str, RankerModel]:
    """The learned reranker cross-fitted by article: for each SQuAD 2.0 train article, the reranker fit as the
    shipped one is (:func:`fit_ranker`, the answerable train questions ``training/labels`` names) on the questions
    of the other folds' articles only. The answers the check is fit on are then read from evidence that a reranker
    which never saw their article chose, as a new article's are."""
    from eval.runner import seen_questions

    fit_ids = seen_questions([FIT_QUESTIONS])
    chosen = [e for e in examples if e.dataset == "squad" and e.answerable and e.id in fit_ids]
    if not chosen:
        raise ValueError("no answerable SQuAD 2.0 train question that training/labels names")
    fold_of = article_folds([e.meta["title"] for e in examples if e.dataset == "squad"], folds)
    rows = scored(chosen, index, embedder, features=rank_features)
    row_folds = [fold_of[e.meta["title"]] for e in chosen]
    models = [fit_ranker([r for r, f in zip(rows, row_folds, strict=True) if f != fold],
                         {"fit_on": ["squad train"], "cross_fit": f"articles outside fold {fold} of {folds}",
                          "candidates": RERANK_CANDIDATES, "l2": LEARNED_L2})
              for fold in range(folds)]
    return {title: models[fold] for title, fold in fold_of.items()}


def first_relevant(row: Scored, score: Callable[[np.ndarray], np.ndarray]) -> bool:
    """Whether ``score`` puts a relevant candidate of ``row`` first (ties in dense order, as :func:`ranked`)."""
    return bool(row.relevant[kept(row, score)[0]])


def paired_first(rows: Sequence[Scored], score: Callable[[np.ndarray], np.ndarray],
                 other: Callable[[np.ndarray], np.ndarray]) -> dict:
    """``score`` against ``other`` question by question on ``rows``: the gain in first relevant (percentage points),
    its standard error (paired over the questions), and the questions each one alone gets right."""
    gains = np.array([first_relevant(r, score) - first_relevant(r, other) for r in rows], dtype=float)
    se = float(gains.std(ddof=1) / np.sqrt(len(gains))) if len(gains) > 1 else float("nan")
    return {"first_relevant_gain": 100 * float(gains.mean()) if len(gains) else float("nan"), "standard_error": 100 * se,
            "wins": int((gains > 0).sum()), "losses": int((gains < 0).sum())}


def learned_report(model: RankerModel, figures: dict) -> str:
    fitted = " and ".join(f"{DATASET_NAMES.get(d, d)} ({n})" for d, n in model.metadata["questions"].items())
    lines = ["# The learned reranker", "",
             "Written by `python -m training.rerank learned` from the train splits only (no generator involved). A "
             f"logistic regression (L2 {LEARNED_L2}) over the features of each of a question's {RERANK_CANDIDATES} dense "
             f"candidates (`components.reranker.RANK_FEATURES`), fit on the answerable {fitted} train questions that "
             "`training/labels` names. Relevance as in README.md; the five kept are each order's best five of the ten.", "",
             "Fit on one half, scored on the other (SQuAD 2.0 halves split by article):", "",
             "| questions | n | reranker | first relevant % | one of first two % | among the five % |",
             "| --- | --- | --- | --- | --- | --- |"]
    for name, row in figures["halves"].items():
        lines += [f"| {name} | {row['questions']} | {which} | " + " | ".join(f"{x:.1f}" for x in row[which]) + " |"
                  for which in ("hybrid", "learned")]
    held = figures["committed_runs"]
    lines += ["", f"Fit on all, scored on the {held['questions']} answerable SQuAD 2.0 train questions of the committed "
              "runs (`docs/results`), which no fit saw:", "",
              "| reranker | first relevant % | one of first two % | among the five % |", "| --- | --- | --- | --- |"]
    lines += [f"| {which} | " + " | ".join(f"{x:.1f}" for x in held[which]) + " |" for which in ("hybrid", "learned")]
    if "against" in held:
        other = held["against"]
        fit_on = f", on {' and '.join(other['fit_on'])}" if other["fit_on"] else ""  # a file without its metadata: unsaid
        lines += [f"| another fit{fit_on} (`--against`) | "
                  + " | ".join(f"{x:.1f}" for x in other["figures"]) + " |", "",
                  f"This fit against the other, question by question: first relevant {other['first_relevant_gain']:+.2f} "
                  f"points (standard error {other['standard_error']:.2f}, paired), {other['wins']} questions only this "
                  f"fit puts a relevant passage first, {other['losses']} only the other."]
    lines += ["", "The weights (on standardised features):", "", "| feature | weight |", "| --- | --- |"]
    lines += [f"| {name} | {coef:+.3f} |" for name, coef in zip(model.features, model.coef, strict=True)]
    return "\n".join(lines) + "\n"


def report(results: dict[str, tuple[int, dict[str, list[float]]]]) -> str:
    lines = ["# How many candidates the cascade reranks", "",
             "Written by `python -m training.rerank` from the train splits only (no generator involved). For each "
             "answerable training question, the five passages kept: by dense rank, or the hybrid reranker's "
             "(dense + BM25 + title overlap, the shipped weights; weights.md fits them) best five of N dense candidates. "
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
    parser.add_argument("what", nargs="?", choices=("candidates", "weights", "learned"), default="candidates",
                        help="measure candidate counts (README.md), fit the hybrid's weights (weights.md, weights.json), "
                             "or fit the learned reranker (learned.md; its weights: components/reranker_learned.json)")
    parser.add_argument("--model-out", type=Path, default=DEFAULT_RANKER, help="learned: where its weights go")
    parser.add_argument("--fit-on", nargs="+", choices=LEARNED_DATASETS, default=list(LEARNED_FIT_ON),
                        help="learned: the train questions it is fit on (default: squad, the corpus it ranks for; "
                             "'squad hotpotqa' is session 76's fit)")
    parser.add_argument("--against", type=Path, default=None,
                        help="learned: another fit's weights, scored beside it on the committed runs' questions")
    parser.add_argument("--data-dir", default=None, help="benchmark data folder (default: ../shared/data)")
    parser.add_argument("--knowledge-base", choices=tuple(WEIGHT_SETS), default="benchmark",
                        help="weights: fit on SQuAD 2.0 and HotpotQA's pooled contexts (benchmark), or on NQ-open and "
                             "TriviaQA against the Wikipedia summaries (wikipedia)")
    parser.add_argument("--report", type=Path, default=REPORT_DIR, help="the folder the report goes in")
    args = parser.parse_args(argv)
    embedder = Embedder()
    embedder.warm_up()
    args.report.mkdir(parents=True, exist_ok=True)
    if args.what == "learned":
        return fit_learned(args, embedder)
    sets = SETS if args.what == "candidates" else WEIGHT_SETS[args.knowledge_base]
    results, rows = {}, []
    for dataset, size in sets:
        index = benchmark_index(dataset, "train", embedder, args.data_dir)
        index.warm_up()
        examples = [e for e in sample(load(dataset, "train", args.data_dir), size, SEED) if e.answerable]
        if args.what == "candidates":
            results[dataset] = (len(examples), measure(examples, index, embedder, HybridReranker()))
        else:
            rows += scored(examples, index, embedder)
    if args.what == "candidates":
        text = report(results)
        atomic_write_text(args.report / "README.md", text)
    else:
        fit = fit_weights(rows)
        stem = "weights" if args.knowledge_base == "benchmark" else f"weights-{args.knowledge_base}"
        if args.knowledge_base != "benchmark":
            fit["where_relevant"] = where_relevant(rows, fit)
        text = weights_report(fit, args.knowledge_base)
        atomic_write_text(args.report / f"{stem}.json", json.dumps(fit, indent=1) + "\n")
        atomic_write_text(args.report / f"{stem}.md", text)
    print(text)
    return 0


def fit_learned(args, embedder) -> int:
    from components.storage import atomic_write_text
    from eval.corpora import benchmark_index
    from eval.datasets import load
    from eval.runner import seen_questions

    fit_ids, run_ids = seen_questions([FIT_QUESTIONS]), seen_questions([COMMITTED_RUNS])
    against = RankerModel.load(args.against) if args.against else None  # before the minutes of scoring: a bad path fails now
    rows, held = [], []
    for dataset in sorted({"squad", *args.fit_on}, key=LEARNED_DATASETS.index):
        index = benchmark_index(dataset, "train", embedder, args.data_dir)
        examples = [e for e in load(dataset, "train", args.data_dir) if e.answerable]
        if dataset in args.fit_on:
            rows += scored([e for e in examples if e.id in fit_ids], index, embedder, features=rank_features)
        if dataset == "squad":
            held = scored([e for e in examples if e.id in run_ids and e.id not in fit_ids], index, embedder,
                          features=rank_features)
    model, figures = learned_fit(rows, held, against)
    model.save(args.model_out)
    text = learned_report(model, figures)
    atomic_write_text(args.report / "learned.md", text)
    atomic_write_text(args.report / "learned.json", json.dumps(figures, indent=1) + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
