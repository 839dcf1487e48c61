"""Oracle tier labels: what the pipeline actually gets right at each tier.

    python -m training.labelling                 # the issue's 1,100 training questions, resumable
    python -m training.labelling --per-dataset 5 --out /tmp/labels.jsonl   # a quick look

Every training question runs through the compiled graph at the thesis' Easy, Medium and Hard
(cheapest first, budgets in characters, evidence before the question), each with an empty
llama.cpp prompt cache. A tier is correct when its answer has Exact
Match, or token F1 >= 0.6, against the gold; the label is the cheapest correct tier. When no tier
is correct, multi-hop questions (HotpotQA) get Hard and single-hop ones Medium (the "fallback"
rule; the "cheapest" rule gives them Easy instead, since no tier's spending buys an answer).

One JSON line per question is appended as soon as its three tiers are done, holding every tier's
answer, EM, F1, tokens and latency, so :func:`derive_label` can re-derive the labels with another
threshold without running a model again. Rerunning the command skips the questions already in the
file; datasets are interleaved, so a partial file is a balanced sample.

Training questions (``../shared/data``): 300 from SQuAD 2.0 ``train.json`` against its own pooled
corpus, all 200 of HotpotQA ``ircot_train.jsonl`` against its pooled corpus, 300 each from NQ-open
and TriviaQA ``train.jsonl`` against the Wikipedia summaries (the chat's default knowledge base, without
its uploads).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections import Counter
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from pipeline.configuration import THESIS_TIERS, PipelineConfig

TIERS = tuple(THESIS_TIERS)
"""Label order: the tiers cheapest first. Index ``i`` is class ``i`` of the router."""

THESIS_SETUP = {"tiers": THESIS_TIERS, "prompt_layout": "evidence_first"}
"""The thesis' tiers (character budgets) and prompt, which the labels and the router were made with."""

F1_THRESHOLD = 0.6
MULTI_HOP = frozenset({"hotpotqa"})
UNSOLVED_RULES = ("fallback", "cheapest")
"""What an unsolved question (no tier correct) is labelled: its dataset's fallback tier, or the cheapest tier."""
LABELS_FILE = Path(__file__).resolve().parent / "labels" / "oracle_labels.jsonl"


@dataclass(frozen=True)
class TrainingSet:
    dataset: str
    split: str
    size: int


TRAINING_SETS = (
    TrainingSet("squad", "train", 300),
    TrainingSet("hotpotqa", "train", 200),
    TrainingSet("nq", "train", 300),
    TrainingSet("triviaqa", "train", 300),
)

_KEPT = ("answer", "prediction", "em", "f1", "input_tokens", "output_tokens", "latency_ms", "corrected",
         "passages_in_prompt", "recall@10", "mrr")


def tier_correct(result: Mapping[str, Any], threshold: float = F1_THRESHOLD) -> bool:
    return result["em"] >= 1.0 or result["f1"] >= threshold


def fallback_tier(dataset: str) -> str:
    return "hard" if dataset in MULTI_HOP else "medium"


def derive_label(record: Mapping[str, Any], threshold: float = F1_THRESHOLD, unsolved: str = "fallback") -> str:
    """The cheapest correct tier of a labelled question; when none is correct, its dataset's fallback
    tier (``unsolved="fallback"``, the issue's rule) or the cheapest tier (``unsolved="cheapest"``)."""
    if unsolved not in UNSOLVED_RULES:
        raise ValueError(f"unknown unsolved rule {unsolved!r}; valid: {', '.join(UNSOLVED_RULES)}")
    for tier in TIERS:
        if tier_correct(record["tiers"][tier], threshold):
            return tier
    return fallback_tier(record["dataset"]) if unsolved == "fallback" else TIERS[0]


LABEL_RULES = ("cost-aware", "thesis")
"""How a question's configuration label is derived from its answers at every configuration:
``cost-aware`` (the cheapest within epsilon F1 of the best, hence the cheapest when none is right)
or ``thesis`` (the cheapest correct one, else the dataset's fallback: the thesis' setup)."""
COST_AWARE_EPSILON = 0.05
"""F1 (0..1) within which a cheaper configuration's answer counts as good as the best one's."""


def configuration_label(f1s: Sequence[float], ems: Sequence[float], rule: str = "cost-aware", *,
                        epsilon: float = COST_AWARE_EPSILON, threshold: float = F1_THRESHOLD,
                        fallback: int = -1) -> int:
    """The index of a question's label among configurations given cheapest first, from each
    configuration's F1 and EM. ``cost-aware``: the cheapest whose F1 is within ``epsilon`` of the
    best (when none is right every F1 is 0, so the cheapest). ``thesis``: the cheapest correct one
    (EM, or F1 >= ``threshold``), else index ``fallback``."""
    if rule not in LABEL_RULES:
        raise ValueError(f"unknown label rule {rule!r}; valid: {', '.join(LABEL_RULES)}")
    if not f1s or len(f1s) != len(ems):
        raise ValueError(f"need one F1 and one EM per configuration, got {len(f1s)} and {len(ems)}")
    if rule == "cost-aware":
        best = max(f1s)
        return next(i for i, f1 in enumerate(f1s) if f1 >= best - epsilon)
    correct = [i for i, (f1, em) in enumerate(zip(f1s, ems, strict=True)) if em >= 1.0 or f1 >= threshold]
    return correct[0] if correct else range(len(f1s))[fallback]


def sets_text(runs: Sequence[Mapping[str, Any]]) -> str:
    """Which training sets recorded runs come from, with their counts: "squad train (40), …"."""
    counts: dict[str, int] = {}
    for r in runs:
        counts[r["dataset"]] = counts.get(r["dataset"], 0) + 1
    return ", ".join(f"{d} train ({n})" for d, n in counts.items())


def interleave(groups: Iterable[list]) -> list:
    """Round-robin over the groups, so any prefix mixes every dataset."""
    return [item for row in zip_longest(*groups) for item in row if item is not None]


def read_labels(path: Path) -> list[dict[str, Any]]:
    from eval.runner import read_records

    return read_records(Path(path))


def label_question(ctx, example) -> dict[str, Any]:
    """Run one question at every tier; the per-tier figures and the derived label."""
    from eval.runner import run_one
    from eval.systems import System

    tiers = {}
    for tier in TIERS:
        system = System(tier, f"fixed {tier} tier", PipelineConfig(policy="fixed", tier=tier, **THESIS_SETUP))
        record = run_one(ctx, system, example)
        tiers[tier] = {key: record.get(key) for key in _KEPT}
        tiers[tier]["top_score"] = max((p["score"] for p in record["passages"]), default=None)
    record = {
        "id": example.id,
        "dataset": example.dataset,
        "question": example.question,
        "gold_answers": list(example.answers),
        "tiers": tiers,
    }
    record["label"] = derive_label(record)
    return record


def training_questions(sets: Iterable[TrainingSet], seed: int, root: str | None = None) -> list:
    from eval.runner import sample
    from eval.datasets import load

    return interleave(sample(load(s.dataset, s.split, root), s.size, seed) for s in sets)


def record_answers(args, sets: Iterable[TrainingSet], answer, *, prepare=None, **resource_options: Any) -> int:
    """The ``run`` half of a ``run`` / ``fit`` command: answer each training question of ``sets``
    (capped by ``args.per_dataset``, sampled with ``args.seed``) that ``args.out`` does not hold yet
    with ``answer(ctx, example)``, appending each record as one JSON line as soon as it is done, so
    an interrupted run resumes where it stopped. ``resource_options`` are further
    :class:`pipeline.context.ResourceConfig` fields of the loaded contexts (a model left out while
    recording, say); ``prepare(ctx)`` adjusts each context."""
    from tqdm import tqdm

    from eval.contexts import load_contexts

    sets = [dataclasses.replace(s, size=min(s.size, args.per_dataset)) if args.per_dataset else s for s in sets]
    questions = training_questions(sets, args.seed, args.data_dir)
    done = {(r["dataset"], r["id"]) for r in read_labels(args.out)}
    todo = [e for e in questions if (e.dataset, e.id) not in done]
    print(f"{len(questions)} training questions, {len(questions) - len(todo)} already in {args.out}", file=sys.stderr)
    if not todo:
        return 0
    loaded = load_contexts([(s.dataset, s.split) for s in sets], args.data_dir, args.model, **resource_options)
    contexts = {dataset: prepare(ctx) if prepare else ctx for (dataset, _), ctx in loaded.items()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a", encoding="utf-8") as fh, tqdm(total=len(todo), unit="question", file=sys.stderr,
                                                           mininterval=5.0) as bar:
        for example in todo:
            fh.write(json.dumps(answer(contexts[example.dataset], example), ensure_ascii=False) + "\n")
            fh.flush()
            bar.update(1)
    return 0


def run_fit_parser(description: str, runs_file, run_help: str, fit_help: str):
    """A ``run`` / ``fit`` command's parser: ``run`` answers a training sample (its size, seed,
    model and data), ``fit`` reads what it recorded; both take the runs file (``--out``). Returns
    the parser and the two subcommands' parsers, for the options of their own."""
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(description=description)
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run", help=run_help)
    run_parser.add_argument("--per-dataset", type=int, default=None, help="cap the questions per dataset")
    run_parser.add_argument("--seed", type=int, default=13)
    run_parser.add_argument("--model", default=None, help="generator preset (default: the default model)")
    run_parser.add_argument("--data-dir", default=None, help="benchmark data folder (default: ../shared/data)")
    fit_parser = sub.add_parser("fit", help=fit_help)
    for p in (run_parser, fit_parser):
        p.add_argument("--out", type=Path, default=runs_file, help=f"runs JSONL (default: {runs_file})")
    return parser, run_parser, fit_parser


def _parse_sets(text: str | None, per_dataset: int | None) -> list[TrainingSet]:
    sets = list(TRAINING_SETS)
    if text:
        wanted = [name.strip() for name in text.split(",") if name.strip()]
        known = {s.dataset: s for s in TRAINING_SETS}
        unknown = [name for name in wanted if name not in known]
        if unknown or not wanted:
            raise SystemExit(f"unknown dataset(s) {unknown}; valid: {', '.join(known)}")
        sets = [known[name] for name in wanted]
    if per_dataset is not None:
        if per_dataset < 1:
            raise SystemExit(f"--per-dataset must be >= 1, got {per_dataset}")
        sets = [dataclasses.replace(s, size=min(s.size, per_dataset)) for s in sets]
    return sets


def main(argv: list[str] | None = None) -> int:
    from tqdm import tqdm

    from eval.contexts import load_contexts

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=LABELS_FILE, help=f"labels JSONL (default: {LABELS_FILE})")
    parser.add_argument("--datasets", default=None, help="comma-separated subset of: squad,hotpotqa,nq,triviaqa")
    parser.add_argument("--per-dataset", type=int, default=None, help="cap the questions per dataset (for a quick look)")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--model", default=None, help="generator preset (default: the default model)")
    parser.add_argument("--data-dir", default=None, help="benchmark data folder (default: $ADAPTIVE_RAG_DATA or ../shared/data)")
    args = parser.parse_args(argv)

    sets = _parse_sets(args.datasets, args.per_dataset)
    questions = training_questions(sets, args.seed, args.data_dir)
    done = {(r["dataset"], r["id"]) for r in read_labels(args.out)}
    todo = [e for e in questions if (e.dataset, e.id) not in done]
    print(f"{len(questions)} training questions, {len(questions) - len(todo)} already labelled in {args.out}",
          file=sys.stderr)
    if not todo:
        return 0

    loaded = load_contexts([(s.dataset, s.split) for s in sets], args.data_dir, args.model)
    contexts = {dataset: ctx for (dataset, _), ctx in loaded.items()}

    args.out.parent.mkdir(parents=True, exist_ok=True)
    counts = Counter(r["label"] for r in read_labels(args.out))
    with args.out.open("a", encoding="utf-8") as fh, tqdm(total=len(todo), unit="question", file=sys.stderr,
                                                           mininterval=5.0) as bar:
        for example in todo:
            record = label_question(contexts[example.dataset], example)
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            fh.flush()
            counts[record["label"]] += 1
            bar.set_postfix({t: counts[t] for t in TIERS})
            bar.update(1)
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
