"""Fitting the cascade from recorded runs (training.cascade): no model runs, synthetic records."""

import math

import pytest

from pipeline.configuration import RERANK_CANDIDATES
import argparse

from training.cascade import GRID, auroc, fit, fit_command, grid_pipeline, parse_grid, simulate


def step(budget, prompt, evaluated, f1, prob, output=4, ms=1000.0, abstained=False):
    signals = {"min_prob": prob, "first_prob": prob, "first_margin": prob, "mean_logprob": math.log(max(prob, 1e-12)),
               "neg_mean_entropy": -1.0 / max(prob, 1e-3)}
    return {"budget": budget, "prompt_tokens": prompt, "prompt_tokens_evaluated": evaluated, "output_tokens": output,
            "generate_ms": ms, "f1": f1, "em": float(f1 == 1.0), "abstained": abstained, "confidence": signals,
            "answer": "x"}


def run(f1s, probs, dataset="squad"):
    """A question answered at every grid budget: prompts grow by the budget's difference, and each
    extension evaluates what it adds plus five template tokens."""
    pinned, head = 100, 20
    steps, previous = [], None
    for budget, f1, prob in zip(GRID, f1s, probs, strict=True):
        prompt = pinned + head + (256 if budget is None else budget)  # None: all five passages
        evaluated = prompt - pinned if previous is None else prompt - previous + 5
        steps.append(step(budget, prompt, evaluated, f1, prob, ms=10.0 * evaluated + 100.0))
        previous = prompt
    baseline = {"answer": "x", "f1": max(f1s), "em": 0.0, "input_tokens": 330, "prompt_tokens_evaluated": 230,
                "output_tokens": 4, "latency_ms": 2400.0, "generate_ms": 2400.0}
    return {"id": str(id(steps)), "dataset": dataset, "grid": steps,
            "baseline": {"question_first": baseline, "question_both": baseline, "evidence_first": baseline}}


EASY = run([1.0, 1.0, 1.0, 1.0], [0.9, 0.9, 0.9, 0.9])  # right and sure from the first budget
HARD = run([0.0, 0.0, 1.0, 1.0], [0.1, 0.2, 0.8, 0.9])  # needs the third budget; unsure before


class TestAuroc:
    def test_perfect_random_and_ties(self):
        assert auroc([0.9, 0.8, 0.2, 0.1], [True, True, False, False]) == 1.0
        assert auroc([0.1, 0.2, 0.8, 0.9], [True, True, False, False]) == 0.0
        assert auroc([0.5, 0.5], [True, False]) == 0.5
        assert math.isnan(auroc([0.5, 0.6], [True, True]))


class TestSimulate:
    MODEL = (10.0, 0.0, 100.0)

    def test_a_sure_answer_stops_at_the_first_budget(self):
        figures = simulate([EASY], (GRID[0], GRID[2]), "min_prob", 0.5, self.MODEL)
        assert figures["f1"] == 100.0 and figures["escalated"] == 0.0
        assert figures["evaluated"] == EASY["grid"][0]["prompt_tokens_evaluated"]

    def test_an_unsure_answer_extends_and_pays_only_the_added_tokens(self):
        figures = simulate([HARD], (GRID[0], GRID[2]), "min_prob", 0.5, self.MODEL)
        first, third = HARD["grid"][0], HARD["grid"][2]
        assert figures["f1"] == 100.0 and figures["escalated"] == 100.0
        assert figures["evaluated"] == first["prompt_tokens_evaluated"] + (third["prompt_tokens"] - first["prompt_tokens"]) + 5
        assert figures["input_tokens"] == first["prompt_tokens"] + third["prompt_tokens"]

    def test_the_last_budget_is_always_accepted(self):
        figures = simulate([HARD], (GRID[0], GRID[1]), "min_prob", 0.99, self.MODEL)
        assert figures["f1"] == 0.0 and figures["escalated"] == 100.0

    def test_stopping_early_charges_a_decided_answer_one_token(self):
        unsure = run([0.0, 1.0, 1.0, 1.0], [0.1, 0.9, 0.9, 0.9])
        for step_ in unsure["grid"]:
            step_["output_tokens"] = 10
        model = (0.0, 1.0, 0.0)  # time is the tokens generated
        finished = simulate([unsure], (GRID[0], GRID[1]), "first_prob", 0.5, model)
        stopped = simulate([unsure], (GRID[0], GRID[1]), "first_prob", 0.5, model, stop_early=True)
        assert finished["ms"] == 20.0 and stopped["ms"] == 11.0  # the extended answer costs its first token only
        assert stopped["f1"] == finished["f1"] == 100.0  # the same decisions

    def test_stopping_early_is_charged_in_full_when_the_first_token_did_not_decide(self):
        late = run([0.0, 1.0, 1.0, 1.0], [0.9, 0.9, 0.9, 0.9])
        late["grid"][0]["confidence"]["min_prob"] = 0.1  # a later token fell short: not known when
        model = (0.0, 1.0, 0.0)
        assert simulate([late], (GRID[0], GRID[1]), "min_prob", 0.5, model, stop_early=True)["ms"] == 8.0
        # a signal read from the whole answer never stops early
        assert simulate([late], (GRID[0], GRID[1]), "mean_logprob", 0.0, model, stop_early=True)["ms"] == 8.0

    def test_an_abstention_always_extends(self):
        abstaining = run([0.0, 1.0, 1.0, 1.0], [0.99, 0.9, 0.9, 0.9])
        abstaining["grid"][0]["abstained"] = True
        assert simulate([abstaining], (GRID[0], GRID[1]), "min_prob", 0.5, self.MODEL)["f1"] == 100.0


class TestFit:
    def test_chooses_the_cheapest_cascade_that_keeps_the_f1(self):
        result = fit([EASY, HARD] * 5, max_f1_loss=0.5)
        chosen = result["chosen"]
        assert result["feasible"] and chosen["f1"] == pytest.approx(100.0)
        assert chosen["ladder"][0] == GRID[0]  # the sure questions stop at the cheapest budget
        assert chosen["evaluated"] < result["baseline"]["evaluated"]

    def test_offers_early_stopping_only_for_early_signals(self):
        result = fit([EASY, HARD] * 3)
        assert {c["signal"] for c in result["candidates"] if c["stop_early"]} == {"min_prob", "first_prob", "first_margin"}

    def test_cross_validation_chooses_the_family_and_the_threshold_is_fit_on_every_run(self):
        result = fit([EASY, HARD] * 5, folds=5)
        cv, chosen = result["cross_validation"], result["chosen"]
        assert result["selected_by"] == "cross-validation" and cv["folds"] == 5
        kept = [f for f in cv["families"] if f["f1"] >= cv["reference_f1"] - result["max_f1_loss"]]
        fastest = min(kept, key=lambda f: (f["ms"], -f["f1"]))
        assert (fastest["ladder"], fastest["signal"], fastest["stop_early"]) == (
            chosen["ladder"], chosen["signal"], chosen["stop_early"])
        assert fastest["ms"] < cv["reference_ms"] and chosen["f1"] == pytest.approx(100.0)
        assert fit([EASY, HARD] * 5)["selected_by"] == "in sample"

    def test_a_gain_on_one_dataset_does_not_pay_for_a_loss_on_another(self):
        """Right at the first budget on SQuAD (where all five passages answer wrong), wrong there on
        HotpotQA and a little less sure: pooled, accepting every first answer keeps the F1 (50
        against 50) and is the cheapest; per dataset it loses HotpotQA's, so the chosen cascade
        escalates the HotpotQA questions."""
        squad = run([1.0, 1.0, 1.0, 0.0], [0.9, 0.9, 0.9, 0.9], dataset="squad")
        hotpot = run([0.0, 0.0, 0.0, 1.0], [0.8, 0.8, 0.8, 0.9], dataset="hotpotqa")
        result = fit([squad, hotpot] * 3)
        assert result["baseline"]["f1_by_dataset"] == {"hotpotqa": 100.0, "squad": 0.0}
        accepting_first = simulate([squad, hotpot], (GRID[0], None), "min_prob", 0.8, (1.0, 0.0, 0.0))
        assert accepting_first["f1"] == result["baseline"]["f1"]  # pooled, it would pass
        assert result["chosen"]["f1_by_dataset"] == {"hotpotqa": 100.0, "squad": 100.0}
        assert result["chosen"]["escalated"] == 50.0

    def test_the_reference_may_be_other_runs_of_the_same_questions(self):
        wrong = run([0.0, 0.0, 0.0, 0.0], [0.9, 0.9, 0.9, 0.9])
        runs = [EASY, HARD]
        reference = {("squad", r["id"]): {**wrong, "id": r["id"]} for r in runs}
        result = fit(runs * 3, reference=reference)
        assert result["reference"] == "given" and result["baseline"]["f1"] == 0.0
        assert fit(runs * 3)["reference"] == "last budget" and fit(runs * 3)["baseline"]["f1"] == 100.0

    def test_fits_on_the_budgets_every_question_has(self):
        short = run([1.0, 1.0, 1.0, 1.0], [0.9, 0.9, 0.9, 0.9])
        short["grid"] = short["grid"][1:]  # not answered at the first budget
        result = fit([EASY, HARD, short] * 3)
        assert result["budgets"] == list(GRID[1:])
        assert all(c["ladder"][0] != GRID[0] for c in result["candidates"])

    def test_reports_every_signal_for_every_budget(self):
        result = fit([EASY, HARD] * 3)
        assert set(result["auroc"]) >= {"min_prob", "first_margin", "neg_mean_entropy"}
        assert all(set(per_budget) == set(GRID) for per_budget in result["auroc"].values())


def test_grid_pipeline_never_accepts_before_the_last_budget():
    pipeline = grid_pipeline()
    assert pipeline.policy == "cascade" and pipeline.max_escalations == len(GRID) - 1
    assert [b.context_tokens for b in [pipeline.budget(pipeline.start_tier()), *pipeline.ladder(pipeline.start_tier())]] \
        == list(GRID)


def test_a_grid_is_rising_budgets_then_all():
    assert parse_grid("64, 96,128,ALL") == (64, 96, 128, None)
    pipeline = grid_pipeline(parse_grid("64,96,all"))
    assert [b.context_tokens for b in [pipeline.budget(pipeline.start_tier()), *pipeline.ladder(pipeline.start_tier())]] \
        == [64, 96, None]
    for bad in ("all,64", "96,64,all", "64,64,all", "64", "64,96", "0,all", "x,all", "64,all,all"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_grid(bad)


def test_grid_pipeline_finishes_every_answer_in_the_way_asked():
    """A never-accepting cascade would stop every answer but the last at its first token: the grid
    records every budget's whole answer."""
    from training.policies import lazy_never
    from training.probe_router import grid_pipeline as tiers_grid

    pipeline = grid_pipeline()
    assert (pipeline.prompt_layout, pipeline.citation_markers, pipeline.stop_early) == ("evidence_first", False, False)
    pipeline = grid_pipeline(layout="question_both", citation_markers=True)
    assert (pipeline.prompt_layout, pipeline.citation_markers) == ("question_both", True)
    # the grid's evidence is the shipped tiers': the same candidates reranked to the same five
    assert {(t.rerank, t.candidates) for t in pipeline.tiers.values()} == {(True, RERANK_CANDIDATES)}
    assert not tiers_grid().stop_early and not lazy_never().pipeline.stop_early


def test_the_fit_reads_one_layout_at_a_time(tmp_path):
    """Answers in two prompt layouts read different confidences: fitting them together is refused."""
    import argparse
    import json

    first, both = tmp_path / "first.jsonl", tmp_path / "both.jsonl"
    first.write_text(json.dumps(EASY) + "\n")  # recorded before the layout was kept: question first
    both.write_text(json.dumps({**HARD, "layout": "question_both"}) + "\n")
    args = argparse.Namespace(out=first, runs=[both], max_f1_loss=0.25, folds=0, report=tmp_path / "report",
                              reference=None)
    with pytest.raises(SystemExit, match="different ways .question_both, with citation markers, five passages in dense "
                                         "order; question_first, with"):
        fit_command(args)
    both.write_text(json.dumps({**HARD, "rerank_candidates": 10}) + "\n")  # other evidence, other answers
    with pytest.raises(SystemExit, match="the best five of 10 reranked; question_first, with citation markers, five"):
        fit_command(args)
    assert fit([{**EASY, "layout": "question_both"}, {**HARD, "layout": "question_both"}] * 3)["layout"] == "question_both"


def test_a_reference_must_answer_every_question_the_fit_reads(tmp_path):
    import argparse
    import json

    runs, reference = tmp_path / "runs.jsonl", tmp_path / "reference.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in (EASY, HARD)))
    reference.write_text(json.dumps(EASY) + "\n")
    args = argparse.Namespace(out=runs, runs=[], max_f1_loss=0.25, folds=0, report=tmp_path / "report",
                              reference=reference)
    with pytest.raises(SystemExit, match="lacks 1 of the 2 questions"):
        fit_command(args)
    reference.write_text("".join(json.dumps(r) + "\n" for r in (EASY, HARD)))
    assert fit_command(args) == 0
    assert "the last budget of" in (tmp_path / "report" / "README.md").read_text()


def test_a_reference_run_is_the_dense_baseline_at_all(ctx):
    """``run --reference-only`` keeps the k = 5 baseline's answer (dense order, the layout asked) as a
    run whose grid is that one answer at 'all', which ``fit --reference`` reads as its last budget."""
    from eval.datasets import Example
    from training.cascade import answer_reference, answered_as, common_budgets

    example = Example("q1", "Who discovered radium?", ("Marie Curie",), "test", evidence={"titles": ("Marie Curie",)})
    run = answer_reference(ctx, example, layout="evidence_first")
    assert answered_as(run) == ("evidence_first", False, None, "score")
    assert common_budgets([run]) == [None] and len(run["grid"]) == 1
    step = run["grid"][0]
    assert step["evidence_items"] == 5 and step["tier"] == "baseline"
    assert 0.0 <= step["f1"] <= 1.0 and step["prompt_tokens_evaluated"] <= step["prompt_tokens"]
