"""RAGAS over the compiled graph: run systems on a dataset sample, then score them with RAGAS.

    python -m eval.ragas_suite --dataset hotpotqa --split dev --limit 20 --systems baseline,adaptive
    python -m eval.ragas_suite ... --judge-url http://localhost:8000/v1 --judge-model my-model   # a stronger judge

Metrics (``ragas`` 0.4): faithfulness, answer (response) relevancy and context precision with
reference, judged by an LLM; and two that RAGAS computes without one, non-LLM context precision
and non-LLM context recall (string similarity of the retrieved passages to the gold evidence).
The judge is the local default generator unless an OpenAI-compatible endpoint is given (its key
from ``$OPENAI_API_KEY``). A judge whose output does not parse gives a missing value, counted per
metric in the summary, never a crashed run.

Two resumable phases write one run folder: ``records.jsonl`` (the graph's answers and the
passages it put in the prompt, exactly as the benchmark writes them) and ``ragas.jsonl`` (one
line of scores per question and system), then ``summary.json``, ``report.md`` and ``ragas.png``.
Only answerable questions are sampled: the reference-based metrics need a gold answer.

RAGAS runs in this command's process only: ``RAGAS_DO_NOT_TRACK`` is set before it is imported
and its asyncio patching (nest_asyncio) is switched off, so nothing leaks into the app.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Iterable

from eval.contexts import reports_errors
from eval.datasets import Example

LLM_METRICS = ("faithfulness", "answer_relevancy", "llm_context_precision_with_reference")
NON_LLM_METRICS = ("non_llm_context_precision_with_reference", "non_llm_context_recall")
METRICS = LLM_METRICS + NON_LLM_METRICS
SCORES = "ragas.jsonl"


def _import_ragas():
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            import ragas  # noqa: F401
            from ragas import metrics
    except ImportError as exc:
        raise SystemExit(f"the RAGAS suite needs the eval extra: pip install -e '.[eval]' ({exc})") from exc
    return metrics


def contexts_of(record: dict[str, Any]) -> list[str]:
    """The evidence the generator saw, one passage per item, without the ``[n]`` markers."""
    lines = [line for line in record.get("context", "").split("\n") if line.strip()]
    return [line.split("] ", 1)[1] if line.startswith("[") and "] " in line else line for line in lines]


def reference_contexts(example: Example) -> list[str]:
    """The gold evidence as sentences, the corpus' granularity (so a retrieved sentence can match
    one): SQuAD's answer sentences; HotpotQA's supporting sentences (official items) or the
    sentences of its supporting paragraphs."""
    from components.passages import split_sentences

    if example.evidence.get("sentences"):
        return list(example.evidence["sentences"])
    if example.meta.get("gold_context"):
        return [s for _, text in example.meta["gold_context"] for s in split_sentences(text)]
    if example.meta.get("context"):
        return [s for s in split_sentences(example.meta["context"]) if any(a in s for a in example.answers)]
    return []


def sample_row(example: Example, record: dict[str, Any]) -> dict[str, Any]:
    return {
        "user_input": example.question,
        "response": record["answer"],
        "retrieved_contexts": contexts_of(record),
        "reference": example.answers[0] if example.answers else "",
        "reference_contexts": reference_contexts(example),
    }


def build_metrics(judge, embeddings) -> dict[str, Any]:
    """RAGAS metric objects by name; the LLM ones use ``judge``, relevancy also ``embeddings``."""
    m = _import_ragas()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return {
            "faithfulness": m.Faithfulness(llm=judge),
            "answer_relevancy": m.ResponseRelevancy(llm=judge, embeddings=embeddings),
            "llm_context_precision_with_reference": m.LLMContextPrecisionWithReference(llm=judge),
            "non_llm_context_precision_with_reference": m.NonLLMContextPrecisionWithReference(),
            "non_llm_context_recall": m.NonLLMContextRecall(),
        }


def _clean(value: Any) -> float | None:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(value) else value


def score_row(row: dict[str, Any], metrics: dict[str, Any]) -> dict[str, Any]:
    """Every metric on one sample; a failing or unparsable judge gives ``None`` for that metric."""
    from ragas import EvaluationDataset, evaluate

    scores: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for name, metric in metrics.items():
        if not row["retrieved_contexts"] or (name in NON_LLM_METRICS and not row["reference_contexts"]):
            scores[name] = None
            errors[name] = "no contexts to score"
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = evaluate(EvaluationDataset.from_list([row]), metrics=[metric], show_progress=False,
                                  raise_exceptions=False, allow_nest_asyncio=False)
            scores[name] = _clean(result.to_pandas()[metric.name].iloc[0])
        except Exception as exc:  # a judge that breaks a metric costs that value, not the run
            scores[name] = None
            errors[name] = f"{type(exc).__name__}: {exc}"[:300]
        if scores[name] is None and name not in errors:
            errors[name] = "judge output did not parse"
    return {"scores": scores, "errors": errors}


def summarise(rows: Iterable[dict[str, Any]], systems: list[str]) -> dict[str, Any]:
    rows = list(rows)
    summary: dict[str, Any] = {"systems": {}}
    for name in systems:
        mine = [r for r in rows if r["system"] == name]
        figures: dict[str, Any] = {"n": len(mine)}
        for metric in METRICS:
            values = [r["scores"].get(metric) for r in mine]
            present = [v for v in values if v is not None]
            figures[metric] = 100 * sum(present) / len(present) if present else math.nan
            figures[f"{metric}_missing"] = len(values) - len(present)
        summary["systems"][name] = figures
    return summary


def markdown_report(summary: dict[str, Any], meta: dict[str, Any]) -> str:
    names = list(summary["systems"])
    lines = [f"# RAGAS: {meta['dataset']} {meta['split']}, {meta['questions']} answerable questions", "",
             f"Command: `{meta['command']}`  ",
             f"Generator `{meta['model']}`; judge `{meta['judge']}`; ragas {meta['ragas']}; wall time "
             f"{meta['wall_s'] / 60:.1f} min.", "",
             "Scores in % (mean over the questions the judge scored; missing = unparsable or failed judge output).", "",
             "| metric | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
    for metric in METRICS:
        cells = []
        for n in names:
            f = summary["systems"][n]
            value = "–" if math.isnan(f[metric]) else f"{f[metric]:.1f}"
            cells.append(f"{value} ({f[metric + '_missing']} missing)" if f[metric + "_missing"] else value)
        kind = "LLM judge" if metric in LLM_METRICS else "no LLM"
        lines.append(f"| {metric} ({kind}) | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(summary: dict[str, Any], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(summary["systems"])
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / max(len(names), 1)
    for i, name in enumerate(names):
        values = [0.0 if math.isnan(summary["systems"][name][m]) else summary["systems"][name][m] for m in METRICS]
        ax.bar([x + i * width for x in range(len(METRICS))], values, width, label=name)
    ax.set_xticks([x + width * (len(names) - 1) / 2 for x in range(len(METRICS))],
                  [m.replace("_with_reference", "").replace("_", " ") for m in METRICS], rotation=15, fontsize=8)
    ax.set_ylim(0, 100)
    ax.set_ylabel("%")
    ax.set_title("RAGAS metrics by system")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = out / "ragas.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def load_judge(ctx, url: str | None, model: str | None, max_tokens: int = 768):
    """The judge as a LangChain chat model: an OpenAI-compatible endpoint, or the loaded generator
    with room for RAGAS' structured answers (same weights, no second copy in memory)."""
    if url:
        from langchain_openai import ChatOpenAI

        if not model:
            raise SystemExit("--judge-url needs --judge-model")
        return ChatOpenAI(base_url=url, model=model, api_key=os.environ.get("OPENAI_API_KEY", "not-needed"),
                          temperature=0), f"{model} at {url}"
    generator = ctx.generator
    if hasattr(generator, "max_tokens"):
        generator = generator.model_copy(update={"max_tokens": max_tokens})
    return generator, f"{ctx.model_name or 'generator'} (local generator)"


@reports_errors
def main(argv: list[str] | None = None) -> int:
    from tqdm import tqdm

    from components.storage import atomic_write_text
    from eval.contexts import add_run_arguments, load_run_context
    from eval.runner import answer_all, read_records, sample
    from eval.datasets import load
    from eval.systems import select

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_arguments(parser, limit=20, limit_help="answerable questions (a seeded sample)")
    parser.add_argument("--judge-url", default=None, help="OpenAI-compatible base URL of a judge model")
    parser.add_argument("--judge-model", default=None, help="the judge's model name at --judge-url")
    parser.add_argument("--judge-max-tokens", type=int, default=768, help="the local judge's output limit")
    parser.add_argument("--out", type=Path, default=None, help="run folder (default: runs/ragas-<dataset>-<split>-s<seed>)")
    args = parser.parse_args(argv)
    if args.limit < 1:
        parser.error("--limit must be >= 1")

    systems = select(args.systems, args.adaptive_tier)
    _import_ragas()  # fail on a missing extra before any model loads
    examples = sample([e for e in load(args.dataset, args.split, args.data_dir) if e.answerable], args.limit, args.seed)
    out = args.out or Path("runs") / f"ragas-{args.dataset}-{args.split}-s{args.seed}"
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    ctx = load_run_context(args)
    records_path, scores_path = out / "records.jsonl", out / SCORES
    answer_all(ctx, systems, examples, records_path)

    judge, judge_name = load_judge(ctx, args.judge_url, args.judge_model, args.judge_max_tokens)
    from ragas.embeddings import LangchainEmbeddingsWrapper
    from ragas.llms import LangchainLLMWrapper

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        metrics = build_metrics(LangchainLLMWrapper(judge), LangchainEmbeddingsWrapper(ctx.embedder.langchain))
    by_id = {e.id: e for e in examples}
    records = {(r["system"], r["id"]): r for r in read_records(records_path) if r["id"] in by_id}
    scored = {(r["system"], r["id"]) for r in read_records(scores_path)}
    pending = [key for key in records if key not in scored]
    with scores_path.open("a", encoding="utf-8") as fh:
        for system, qid in tqdm(pending, desc="judging", unit="answer", file=sys.stderr, mininterval=2.0):
            row = sample_row(by_id[qid], records[(system, qid)])
            fh.write(json.dumps({"system": system, "id": qid, **score_row(row, metrics)}, ensure_ascii=False) + "\n")
            fh.flush()

    import ragas

    rows = [r for r in read_records(scores_path) if r["id"] in by_id]
    summary = summarise(rows, [s.name for s in systems])
    summary["meta"] = meta = {
        "dataset": args.dataset, "split": args.split, "questions": len(examples), "seed": args.seed,
        "model": ctx.model_name, "judge": judge_name, "ragas": ragas.__version__,
        "command": "python -m eval.ragas_suite " + " ".join(sys.argv[1:] if argv is None else argv),
        "wall_s": time.perf_counter() - start,
    }
    atomic_write_text(out / "summary.json", json.dumps(summary, indent=2, default=str) + "\n")
    atomic_write_text(out / "report.md", markdown_report(summary, meta))
    plot(summary, out)
    print((out / "report.md").read_text())
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
