"""The router that sees the retrieval (#19 item 4): the labelling rules, the component, the policy
through the compiled graph on real components, and the fit on recorded answers."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from components.probe_router import CLOSED_BOOK_RUNG, ProbeRouter, ProbeRouterError
from components.retrieval_gate import PROBE_FEATURES, ProbeModel
from graph import graph
from pipeline.configuration import ConfigurationError, PipelineConfig
from training.labelling import configuration_label

RUNGS = (CLOSED_BOOK_RUNG, "easy", "medium", "hard")


def constant(rung: str, bias: float) -> ProbeModel:
    """A rung model that ignores its feature: P(enough) = sigmoid(bias)."""
    return ProbeModel(("top_score",), (0.0,), (1.0,), (0.0,), bias, {"rung": rung})


def router(*biases: float, threshold: float = 0.5) -> ProbeRouter:
    return ProbeRouter(RUNGS, tuple(constant(r, b) for r, b in zip(RUNGS, biases, strict=False)), threshold)


class TestConfigurationLabel:
    @pytest.mark.parametrize("f1s, expected", [
        ([0.0, 0.5, 0.52, 0.9], 3),  # only the costliest is within epsilon of the best
        ([0.0, 0.0, 0.0, 0.0], 0),  # nothing is right: the cheapest
        ([0.3, 0.3, 1.0, 0.97], 2),  # the cheapest within epsilon of the best, not the best itself
        ([1.0, 0.96, 1.0, 1.0], 0),
    ])
    def test_cost_aware(self, f1s, expected):
        assert configuration_label(f1s, [0.0] * 4, "cost-aware", epsilon=0.05) == expected

    def test_epsilon_widens_what_counts_as_good_enough(self):
        assert configuration_label([0.0, 0.8, 0.9, 1.0], [0.0] * 4, epsilon=0.25) == 1

    def test_thesis_rule_is_the_cheapest_correct_else_the_fallback(self):
        assert configuration_label([0.0, 0.65, 1.0, 1.0], [0, 0, 1, 1], "thesis") == 1  # F1 >= 0.6 is correct
        assert configuration_label([0.0, 0.5, 0.5, 0.5], [0, 0, 0, 0], "thesis", fallback=2) == 2
        assert configuration_label([0.0, 0.5, 0.5, 0.5], [0, 0, 0, 0], "thesis") == 3  # default: the last

    def test_bad_input_is_refused(self):
        with pytest.raises(ValueError, match="rule"):
            configuration_label([1.0], [1.0], "vibes")
        with pytest.raises(ValueError, match="one F1 and one EM"):
            configuration_label([1.0, 0.0], [1.0], "cost-aware")


class TestProbeRouter:
    def test_takes_the_cheapest_rung_that_is_enough(self):
        assert router(-5.0, 5.0, 5.0).decide([], {"top_score": 0.5}).rung == "easy"
        assert router(5.0, 5.0, 5.0).decide([], {"top_score": 0.5}).rung == CLOSED_BOOK_RUNG
        route = router(-5.0, -5.0, -5.0).decide([], {"top_score": 0.5})
        assert route.rung == "hard" and set(route.probabilities) == set(RUNGS[:-1])  # none is enough: the last

    def test_the_threshold_moves_the_choice(self):
        r = router(0.0, 2.0, 5.0)  # P(enough) 0.5, 0.88, 0.99
        assert r.decide([], {"top_score": 0}).rung == CLOSED_BOOK_RUNG
        assert r.decide([], {"top_score": 0}, threshold=0.9).rung == "medium"
        assert r.decide([], {"top_score": 0}, threshold=1.0).rung == "hard"

    def test_reads_probe_features_and_the_embedding(self):
        model = ProbeModel(("top_score", "q1"), (0.5, 0.0), (0.1, 1.0), (3.0, 2.0), 0.0)
        r = ProbeRouter((CLOSED_BOOK_RUNG, "hard"), (model,), 0.5)
        assert r.dimension == 2
        assert r.decide([0.0, 1.0], {"top_score": 0.6}).rung == CLOSED_BOOK_RUNG
        assert r.decide([0.0, -1.0], {"top_score": 0.4}).rung == "hard"

    def test_round_trips_as_json(self, tmp_path):
        r = router(-1.0, 0.5, 2.0, threshold=0.7)
        r.save(tmp_path / "router.json")
        data = json.loads((tmp_path / "router.json").read_text())
        assert data["kind"] == "probe router" and data["rungs"] == list(RUNGS)
        assert ProbeRouter.load(tmp_path / "router.json") == r

    @pytest.mark.parametrize("change, message", [
        ({"rungs": ["hard"]}, "at least two rungs"),
        ({"rungs": ["easy", "easy", "medium", "hard"]}, "repeated rung"),
        ({"threshold": 1.5}, "threshold"),
        ({"kind": "tier router"}, "not a probe router"),
        ({"models": []}, "models for"),
    ])
    def test_bad_files_are_refused(self, tmp_path, change, message):
        data = {**router(0.0, 0.0, 0.0).as_dict(), **change}
        (tmp_path / "r.json").write_text(json.dumps(data))
        with pytest.raises(ProbeRouterError, match=message):
            ProbeRouter.load(tmp_path / "r.json")

    def test_unreadable_and_missing_files_say_how_to_fit_one(self, tmp_path):
        (tmp_path / "r.json").write_text("{not json")
        with pytest.raises(ProbeRouterError, match="training.probe_router fit"):
            ProbeRouter.load(tmp_path / "r.json")
        with pytest.raises(ProbeRouterError, match="not found"):
            ProbeRouter.load(tmp_path / "missing.json")
        data = router(0.0, 0.0, 0.0).as_dict()
        data["models"][0]["features"] = ["colour"]
        (tmp_path / "r.json").write_text(json.dumps(data))
        with pytest.raises(ProbeRouterError, match="unknown feature"):
            ProbeRouter.load(tmp_path / "r.json")

    def test_check_tiers(self):
        router(0.0, 0.0, 0.0).check_tiers(["easy", "medium", "hard"])  # closed book needs no tier
        with pytest.raises(ProbeRouterError, match="medium"):
            router(0.0, 0.0, 0.0).check_tiers(["easy", "hard"])

    def test_the_shipped_router_loads_and_fits_the_default_tiers(self):
        shipped = ProbeRouter.load()
        shipped.check_tiers(list(PipelineConfig().tiers))
        assert shipped.rungs[0] == CLOSED_BOOK_RUNG and shipped.metadata["fitted_by"] == "python -m training.probe_router fit"
        assert shipped.dimension in (0, 384)


# ---------------------------------------------------------------- through the compiled graph
QUESTION = "When was the Eiffel Tower built?"


def routed(ctx, r: ProbeRouter | None, **changes):
    return replace(ctx, probe_router=r).with_pipeline(PipelineConfig(policy="probe-router", **changes))


class TestProbeRouterPolicy:
    def test_closed_book_is_final(self, ctx):
        out = graph.invoke({"question": QUESTION}, context=routed(ctx, router(5.0, 5.0, 5.0)))
        trace = out["trace"]
        assert trace["probe_router"]["tier"] == CLOSED_BOOK_RUNG and set(trace["probe_router"]["probe"]) == set(PROBE_FEATURES)
        assert trace["budget"]["k"] == 0 and trace["passages"] == [] and trace["escalations"] == 0

    def test_a_tier_starts_the_cascade_which_escalates_from_there(self, ctx):
        never_accept = routed(ctx, router(-5.0, -5.0, 5.0), accept_threshold=1e9)
        out = graph.invoke({"question": QUESTION}, context=never_accept)
        steps = [s["tier"] for s in out["trace"]["steps"]]
        assert out["trace"]["probe_router"]["tier"] == "medium"
        assert steps[0] == "medium" and steps[-1] == "hard"  # extended in place when unsure
        assert len(out["trace"]["passages"]) == 5

    def test_the_threshold_is_a_per_question_override(self, ctx):
        r = routed(ctx, router(0.0, 0.0, 0.0))  # every rung 50% likely to be enough
        assert graph.invoke({"question": QUESTION}, context=r)["trace"]["probe_router"]["tier"] == CLOSED_BOOK_RUNG
        out = graph.invoke({"question": QUESTION, "overrides": {"router_threshold": 0.9, "max_escalations": 0}}, context=r)
        assert out["trace"]["probe_router"]["tier"] == "hard" and out["trace"]["probe_router"]["threshold"] == 0.9

    def test_without_a_router_the_policy_says_what_is_missing(self, ctx):
        with pytest.raises(ConfigurationError, match="probe router"):
            graph.invoke({"question": QUESTION}, context=routed(ctx, None))

    def test_bad_threshold_is_refused(self):
        with pytest.raises(ConfigurationError, match="router_threshold"):
            PipelineConfig(router_threshold=2.0)
        assert PipelineConfig(policy="probe-router").ladder(CLOSED_BOOK_RUNG) == []


# ---------------------------------------------------------------- the fit, on recorded answers
def recorded(i: int, decisive: bool) -> dict:
    """A made-up training question: a decisive retrieval (a high top score) is answered right from
    the Easy tier up; an indecisive one by no rung. Costs grow with the evidence."""
    rng = np.random.default_rng(i)
    probe = {name: float(rng.uniform(0.0, 0.3)) for name in PROBE_FEATURES}
    probe["top_score"] = float(rng.uniform(0.75, 0.95) if decisive else rng.uniform(0.3, 0.5))
    right = 1.0 if decisive else 0.0

    def step(budget, tokens, f1):
        return {"budget": budget, "prompt_tokens": tokens, "prompt_tokens_evaluated": tokens - 80, "output_tokens": 5,
                "generate_ms": 10.0 * tokens, "abstained": False, "f1": f1, "em": f1,
                "confidence": {"min_prob": 0.9 if f1 else 0.05, "first_prob": 0.95 if f1 else 0.1,
                               "first_margin": 0.9 if f1 else 0.02, "mean_logprob": -0.1 if f1 else -2.0,
                               "neg_mean_entropy": -0.2 if f1 else -3.0}}

    return {"id": str(i), "dataset": "squad", "question": f"q{i}", "answerable": True, "gold_answers": ["a"],
            "probe": probe, "embedding": rng.normal(size=4).round(4).tolist(),
            "closed_book": {"f1": 0.0, "em": 0.0, "prompt_tokens_evaluated": 20, "output_tokens": 5, "generate_ms": 300.0},
            "grid": [step(64, 160, right), step(128, 220, right), step(None, 350, right)], "baseline": {}}


def test_fit_learns_to_skip_what_retrieval_cannot_answer(tmp_path):
    from training.probe_router import label, main, read_runs

    runs = [recorded(i, decisive=i % 2 == 0) for i in range(60)]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    assert [label(r) for r in read_runs(path)[:2]] == [1, 0]  # decisive: Easy; indecisive: closed book (cheapest)
    out = tmp_path / "router.json"
    assert main(["fit", "--out", str(path), "--router", str(out), "--report", str(tmp_path / "report")]) == 0
    fitted = ProbeRouter.load(out)
    assert fitted.metadata["label_counts"] == {CLOSED_BOOK_RUNG: 30, "easy": 30, "medium": 0, "hard": 0}
    decisive, indecisive = recorded(100, True), recorded(101, False)
    assert fitted.decide(decisive["embedding"], decisive["probe"]).rung == "easy"
    assert fitted.decide(indecisive["embedding"], indecisive["probe"]).rung == CLOSED_BOOK_RUNG
    report = (tmp_path / "report" / "README.md").read_text()
    assert "probe router" in report and "k = 5 baseline" in report


class TestRecordedRuns:
    def test_recorded_answers_are_reused_where_the_configuration_did_not_change(self):
        """A question both earlier runs answered needs no model run: ``ctx`` is never touched."""
        from types import SimpleNamespace

        from dataclasses import replace

        from pipeline.configuration import PROBE_ROUTER_TIERS, PipelineConfig
        from training.cascade import answered_as
        from training.probe_router import CASCADE_RUNS, POLICY_RUNS, answer_question, read_runs, reusable_grid, tier_budgets

        cascade = {(r["dataset"], r["id"]): r for r in read_runs(CASCADE_RUNS)}
        policy = {(r["dataset"], r["id"]): r for r in read_runs(POLICY_RUNS)}
        key = next(k for k in cascade if k in policy)
        r = cascade[key]
        example = SimpleNamespace(id=r["id"], dataset=r["dataset"], question=r["question"], answerable=r["answerable"],
                                  answers=r["gold_answers"])
        layout, markers, candidates, _ = answered_as(r)
        assert candidates is None  # recorded before the cascade reranked its candidates
        dense = PipelineConfig(prompt_layout=layout, citation_markers=markers, tiers={
            name: replace(t, rerank=False, candidates=None) for name, t in PROBE_ROUTER_TIERS.items()})
        out = answer_question(None, example, r, policy[key], pipeline=dense)
        assert out["reused"] == {"grid": True, "closed_book": True}
        assert (out["layout"], out["citation_markers"], out["rerank_candidates"]) == (layout, markers, None)
        assert set(tier_budgets(dense).values()) <= {s["budget"] for s in out["grid"]}
        # the shipped tiers rerank ten candidates (and answer without markers): those answers are not these
        assert reusable_grid(r) is None and reusable_grid(r, dense) is r["grid"]
        assert out["closed_book"] == policy[key]["closed_book"] and out["probe"] == policy[key]["probe"]

    def test_the_committed_runs_hold_every_rung(self):
        from training.probe_router import RUNS_FILE, label, read_runs, rung_answers

        runs = read_runs(RUNS_FILE)
        assert runs, f"no runs committed at {RUNS_FILE}"
        assert len({(r["dataset"], r["id"]) for r in runs}) == len(runs)
        for r in runs:
            assert set(r["probe"]) == set(PROBE_FEATURES) and len(r["embedding"]) == 384
            answers = rung_answers(r)
            assert len(answers) == len(RUNGS) and all(0.0 <= a["f1"] <= 1.0 for a in answers)
            assert 0 <= label(r) < len(RUNGS) and 0 <= label(r, "thesis") < len(RUNGS)


def test_the_chat_figures_show_the_probe_routers_choice():
    from app.ui import figures

    trace = {"probe_router": {"tier": "easy", "enough_probability": {CLOSED_BOOK_RUNG: 0.1, "easy": 0.9, "medium": 0.95},
                              "threshold": 0.82, "probe": {}, "inference_ms": 3.0}}
    result = {"tier": "easy", "tokens": {"input": 120, "prompt": 120, "evaluated": 40, "output": 5}, "corrected": False,
              "timing_ms": {"total": 900.0}, "trace": trace}
    shown = figures(result)
    assert "probe router: easy (enough: closed-book 10%, easy 90%, medium 95%; threshold 82%)" in shown
