"""The RAGAS suite: evidence extraction, aggregation with missing values, and the command end to end
with a judge too small to answer RAGAS' prompts (its unparsable output must become missing values)."""

from __future__ import annotations

import json
import math

import pytest

from eval.datasets import Example
from eval.ragas_suite import METRICS, contexts_of, main, markdown_report, reference_contexts, summarise


class TestEvidence:
    def test_contexts_are_the_prompt_passages_without_markers(self):
        record = {"context": "[1] Paris: It is the capital.\n[2] Seine: A river.\n"}
        assert contexts_of(record) == ["Paris: It is the capital.", "Seine: A river."]
        assert contexts_of({"context": ""}) == []

    def test_squad_reference_is_the_answer_sentence(self):
        example = Example("a", "Where?", ("Paris",), "squad",
                          meta={"title": "Eiffel Tower", "context": "It was built in 1889. It is in Paris."})
        assert reference_contexts(example) == ["It is in Paris."]

    def test_hotpotqa_reference_is_the_supporting_sentences(self):
        paragraphs = Example("h", "q", ("x",), "hotpotqa", meta={"gold_context": [("A", "One. Two."), ("B", "Three.")]})
        assert reference_contexts(paragraphs) == ["One.", "Two.", "Three."]
        official = Example("o", "q", ("x",), "hotpotqa", evidence={"sentences": ("Exactly this.",)})
        assert reference_contexts(official) == ["Exactly this."]


class TestSummary:
    def test_missing_values_are_counted_not_averaged(self):
        rows = [
            {"system": "adaptive", "scores": {"faithfulness": 1.0, "non_llm_context_recall": 0.5}},
            {"system": "adaptive", "scores": {"faithfulness": None, "non_llm_context_recall": 1.0}},
        ]
        figures = summarise(rows, ["adaptive"])["systems"]["adaptive"]
        assert figures["faithfulness"] == 100.0 and figures["faithfulness_missing"] == 1
        assert figures["non_llm_context_recall"] == 75.0 and figures["non_llm_context_recall_missing"] == 0
        assert math.isnan(figures["answer_relevancy"]) and figures["answer_relevancy_missing"] == 2
        meta = {"dataset": "squad", "split": "dev", "questions": 2, "command": "x", "model": "m", "judge": "j",
                "ragas": "0.4.3", "wall_s": 60}
        report = markdown_report({"systems": {"adaptive": figures}}, meta)
        assert "| faithfulness (LLM judge) | 100.0 (1 missing) |" in report
        assert "| answer_relevancy (LLM judge) | – (2 missing) |" in report


def test_bad_limit_is_a_usage_error():
    with pytest.raises(SystemExit):
        main(["--dataset", "squad", "--limit", "0"])


@pytest.mark.slow
def test_ragas_command_end_to_end(tmp_path, tiny_squad, monkeypatch):
    """SmolLM2-135M as the judge: RAGAS runs, every metric is present or counted missing, resumes."""
    monkeypatch.delenv("RAGAS_DO_NOT_TRACK", raising=False)
    out = tmp_path / "run"
    argv = ["--dataset", "squad", "--split", "dev", "--limit", "2", "--systems", "adaptive", "--adaptive-tier", "easy",
            "--model", "smollm2-135m", "--judge-max-tokens", "64", "--data-dir", str(tiny_squad),
            "--out", str(out)]
    assert main(argv) == 0
    import os

    assert os.environ["RAGAS_DO_NOT_TRACK"] == "true"
    rows = [json.loads(line) for line in (out / "ragas.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a1"]  # answerable questions only
    assert set(rows[0]["scores"]) == set(METRICS)
    for name, value in rows[0]["scores"].items():
        assert value is None and name in rows[0]["errors"] or 0.0 <= value <= 1.0
    summary = json.loads((out / "summary.json").read_text())
    figures = summary["systems"]["adaptive"]
    assert all(figures[f"{m}_missing"] + (0 if math.isnan(figures[m]) else 1) >= 1 for m in METRICS)
    assert {"report.md", "ragas.png", "records.jsonl"} <= {p.name for p in out.iterdir()}
    assert main(argv) == 0  # resumes: nothing to answer or judge again
    assert len((out / "ragas.jsonl").read_text().splitlines()) == 1
