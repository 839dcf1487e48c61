"""Replay an answerability check on recorded answers, without running the pipeline again.

Every benchmark record keeps the answer the check saw (``prediction_unchecked``) and the check's
features, so another check (a refit model, another threshold) gives its figures on the same
answers exactly: the check changes nothing upstream of it. A model that uses the sufficiency scorer
on runs recorded before it existed gets that feature computed from the record's question and
passages (their texts looked up by id in the run's benchmark index, named by its ``summary.json``).

    python -m eval.rescore docs/results/squad-dev-s18-short/records.jsonl [--model components/answerability.json]

Open-domain answers (NQ-open, TriviaQA) are also scored against the knowledge base
(:func:`eval.abstention.knowledge_base_figures`), under ``knowledge_base``.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from components.answerability import (
    DEFAULT_MODEL,
    SUFFICIENCY,
    AnswerabilityModel,
    checked_as_multi_hop,
    current_features,
)
from components.short_answer import as_written
from eval.aggregate import aggregate
from eval.metrics import exact_match, f1_score
from nodes.check_answer import as_read, rule_of
from pipeline.state import EvidenceItem
from prompts import ABSTENTION


def written_answer(record: Mapping[str, Any]) -> str:
    """The answer as the model wrote it, which the check's features are of (a withheld one included)."""
    steps = record.get("steps") or []
    return str((steps[-1]["answer"] if steps else None) or record.get("written_answer") or record.get("prediction_unchecked")
               or record["answer"])


def recorded_evidence(record: Mapping[str, Any]) -> list[EvidenceItem]:
    """The evidence items of the answer's prompt, read back from the record's ``context`` ("[2] Title: text"
    a line); the passage ids are not recorded there."""
    items: list[EvidenceItem] = []
    for line in str(record.get("context") or "").splitlines():
        if found := re.match(r"\[(\d+)\] (.*)$", line):
            title, _, text = found[2].partition(": ")
            items.append({"n": int(found[1]), "passage_id": "", "title": title, "text": text})
    return items


def given_answer(record: Mapping[str, Any]) -> str:
    """The answer the check gives when it gives the recorded one (``prediction_unchecked``), written as the recorded
    evidence writes it (:func:`components.short_answer.as_written`: its numbers, and what stands between its words), as
    ``check_answer`` gives it since session 84 (the same text for records made since)."""
    return as_written(record["prediction_unchecked"], as_read(recorded_evidence(record)))


def replayed_multi_hop(record: Mapping[str, Any], probabilities: Mapping[str, float] | None = None) -> bool | None:
    """How the check reads a recorded question (:func:`components.answerability.checked_as_multi_hop`): the recorded
    reading, read again with the question-type model's probability, the record's own (recorded since session 86) or
    else ``probabilities[question]`` (:func:`question_type_probabilities`); the recorded reading where neither has
    it."""
    check = record.get("answerability") or {}
    probability = check.get("multi_hop_probability")
    if probability is None and probabilities is not None:
        probability = probabilities.get(record["question"])
    return checked_as_multi_hop(check.get("multi_hop"), probability, check.get("features"))


def question_type_probabilities(questions: Sequence[str]) -> dict[str, float]:
    """The shipped question-type model's probability of multi-hop for each question, read as the graph reads it (from
    the query embedding): for records made before the check kept it."""
    from components.embedder import Embedder
    from components.question_type import QuestionTypeModel

    model, embedder = QuestionTypeModel.load(), Embedder()
    embedder.warm_up()
    return {q: model.multi_hop_probability(q, embedder.embed_query(q).tolist()) for q in dict.fromkeys(questions)}


def ruled(record: Mapping[str, Any], probabilities: Mapping[str, float] | None = None) -> tuple[str, str] | None:
    """The rule that withholds a recorded answer whatever its score, and its reason, as the check applies them
    (:func:`nodes.check_answer.rule_of`) to the answer as written and as given, with the recorded evidence; ``None``
    where none does. The record keeps no citations, settings or index, so an age no passage states, someone out
    of office and a population held by another place's passages are not replayed (no benchmark question asks an
    age, no benchmark index holds the descriptions that say who is out of office, and the one dev question that asks
    a population, "What is the population of the Netherlands?", is unanswerable), and a passage that holds the
    answer is read without the passages before it, so the replay withholds at least the answers the check would by
    ``subject``. The question's multi-hop reading is the check's (:func:`replayed_multi_hop`, with ``probabilities``)."""
    return rule_of(record["question"], written_answer(record), record["prediction_unchecked"], recorded_evidence(record),
                   multi_hop=replayed_multi_hop(record, probabilities))


def rescored(records: Sequence[Mapping[str, Any]], model: AnswerabilityModel, threshold: float | None = None,
             probabilities: Mapping[str, float] | None = None) -> list[dict[str, Any]]:
    """The records as ``model`` (at ``threshold``, the knob, else its own) would have checked them;
    a question the check reads as multi-hop (:func:`replayed_multi_hop`, from the recorded reading and the
    question-type model's probability, the record's or ``probabilities``') is held to the threshold the knob gives
    such a question (:meth:`AnswerabilityModel.threshold_for`; records from before session 30 say nothing, so
    the knob holds for all). Answers the model itself abstained on, the check could not score, or a rule
    decided (an age no passage states), keep their decision; an answer the score gives, a rule may withhold, as the
    check's rules do at any knob but 0 (:func:`ruled`), and one given is written as its evidence writes it
    (:func:`given_answer`). Features recorded by an older version are brought up to date first
    (:func:`components.answerability.current_features`)."""
    out = []
    for r in records:
        check = r.get("answerability")
        if not check or check["by"] != "score":
            out.append(dict(r))
            continue
        multi_hop = replayed_multi_hop(r, probabilities)
        threshold_here = model.threshold_for(threshold, multi_hop)
        features = current_features(check["features"], written_answer(r), ABSTENTION, check.get("features_version"),
                                    r["question"])
        if any(f not in features for f in model.features):  # unscored, as the check leaves it: answered
            prediction = given_answer(r)
            out.append({**r, "prediction": prediction, "em": exact_match(prediction, r["gold_answers"]),
                        "f1": f1_score(prediction, r["gold_answers"]),
                        "answerability": {**check, "score": None, "by": "unchecked", "threshold": threshold_here,
                                          "decision": "answer", "reason": "a feature the model uses was not recorded"}})
            continue
        score = model.score(features)
        rule = ruled(r, probabilities) if score >= threshold_here > 0 else None
        prediction = "" if score < threshold_here or rule else given_answer(r)
        out.append({**r, "prediction": prediction, "em": exact_match(prediction, r["gold_answers"]),
                    "f1": f1_score(prediction, r["gold_answers"]),
                    "answerability": {**check, "score": score, "threshold": threshold_here, "multi_hop": multi_hop,
                                      "decision": "abstain" if prediction == "" else "answer",
                                      **({"by": rule[0], "reason": rule[1]} if rule else {})}})
    return out


def with_sufficiency(records: Sequence[Mapping[str, Any]], score: Callable[[str, list[str]], float],
                     text: Callable[[str, str], str]) -> list[dict[str, Any]]:
    """The records, each scored check given the :data:`SUFFICIENCY` feature where it lacks it:
    ``score(question, passage texts)``, the texts from ``text(dataset, passage id)``."""
    out = []
    for r in records:
        check = r.get("answerability")
        if not check or check["by"] != "score" or SUFFICIENCY in check["features"]:
            out.append(dict(r))
            continue
        value = score(r["question"], [text(r["dataset"], p["id"]) for p in r.get("passages") or []])
        out.append({**r, "answerability": {**check, "features": {**check["features"], SUFFICIENCY: value}}})
    return out


def run_indexes(run_dir: Path, data_dir: str | None = None) -> Callable[[str], Any]:
    """Each dataset's benchmark index for the run in ``run_dir`` (its split from ``summary.json``),
    loaded on first use: a run that needs none reads nothing."""
    from components.embedder import Embedder
    from eval.corpora import benchmark_index

    embedder = Embedder()  # loads on the first index, once
    indexes: dict[str, Any] = {}

    def index_of(dataset: str) -> Any:
        if dataset not in indexes:
            split = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))["meta"]["split"]
            indexes[dataset] = benchmark_index(dataset, split, embedder, data_dir)
        return indexes[dataset]

    return index_of


def index_texts(run_dir: Path, data_dir: str | None = None) -> Callable[[str, str], str]:
    """Passage texts by (dataset, id) from the benchmark index of the run in ``run_dir``, loaded on first use."""
    index_of = run_indexes(run_dir, data_dir)
    return lambda dataset, passage_id: index_of(dataset).passage(passage_id).text


FIGURES = (("f1", "overall F1"), ("em", "overall EM"), ("f1_answerable", "answerable F1"),
           ("unanswerable_abstained", "unanswerable abstained %"), ("false_abstention", "false abstentions %"),
           ("answered", "answered %"), ("aurc", "risk–coverage area (mean risk %)"))


def main(argv: list[str] | None = None) -> int:
    from eval.corpora import with_holds
    from eval.runner import read_records

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", type=Path, help="a benchmark run's records.jsonl")
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="answerability model (default: the shipped one)")
    parser.add_argument("--threshold", type=float, default=None, help="abstain below this (default: the model's)")
    parser.add_argument("--sufficiency", type=Path, default=None,
                        help="the sufficiency scorer, when the model uses it (default: the shipped one)")
    parser.add_argument("--data-dir", default=None, help="benchmark data folder (default: ../shared/data)")
    args = parser.parse_args(argv)
    records = read_records(args.records)
    model = AnswerabilityModel.load(args.model)
    if model.uses_sufficiency:
        from components.sufficiency import DEFAULT_SCORER, SufficiencyScorer

        scorer = SufficiencyScorer(args.sufficiency or DEFAULT_SCORER)
        records = with_sufficiency(records, scorer.score, index_texts(args.records.parent, args.data_dir))
    records = with_holds(records, run_indexes(args.records.parent, args.data_dir))  # open-domain answers
    unread = [r["question"] for r in records  # multi-hop readings recorded without their probability
              if (r.get("answerability") or {}).get("multi_hop") and "multi_hop_probability" not in r["answerability"]]
    probabilities = question_type_probabilities(unread) if unread else None
    systems = list(dict.fromkeys(r["system"] for r in records))
    summary = aggregate(rescored(records, model, args.threshold, probabilities), systems)
    table = {name: {key: round(summary["abstention"][name][key], 1) for key, _ in FIGURES
                    if key in summary["abstention"][name]} for name in summary.get("abstention", {})}
    out: dict[str, Any] = {"model": str(args.model), "threshold": args.threshold, "systems": table}
    if "knowledge_base" in summary:  # open-domain answers: scored against what the knowledge base holds too
        out["knowledge_base"] = {name: {key: round(value, 1) for key, value in figures.items()}
                                 for name, figures in summary["knowledge_base"].items()}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    from pipeline.arguments import run_command

    raise SystemExit(run_command(main))
