"""The layer tap (components.layer_tap), the answer probe (components.answer_probe), the nodes that
read it, and its fitting (training.answer_probe)."""

import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from components.answer_probe import DEFAULT_PROBE, AnswerProbe, AnswerProbeError, fit_probe, hidden_features
from components.answerability import ANSWER_PROBE, FEATURES, QUESTION_LIKELIHOOD, AnswerabilityModel
from components.layer_tap import LayerTap
from nodes.check_answer import check_answer
from nodes.generate import probe_score

QUESTION = [HumanMessage("Name the capital of France in one word.")]


def probe_of(generator, layer=1, coef=None, **metadata):
    width = generator.hidden_size
    return AnswerProbe(hidden_features(width), (0.0,) * width, (1.0,) * width, tuple(coef or (0.0,) * width), 0.0,
                       {"model": Path(generator.model_path).name, "layer": layer, **metadata})


class TestLayerTap:
    def test_a_width_below_one_is_refused(self):
        with pytest.raises(ValueError, match="width"):
            LayerTap(width=0)

    def test_reading_needs_the_width(self):
        with pytest.raises(RuntimeError, match="width"), LayerTap().reading([1]):
            pass

    def test_the_generator_returns_the_layers_asked_for(self, tiny_generator):
        n, width = tiny_generator.n_layers, tiny_generator.hidden_size
        plain = tiny_generator.invoke(QUESTION, max_tokens=4)
        read = tiny_generator.invoke(QUESTION, max_tokens=4, hidden_layers=[0, n - 1])
        assert "hidden_states" not in plain.response_metadata
        hidden = read.response_metadata["hidden_states"]
        assert set(hidden) == {0, n - 1}
        assert all(len(values) == width and np.isfinite(values).all() for values in hidden.values())
        assert not np.allclose(hidden[0], hidden[n - 1])  # two layers, two different rows
        assert read.text == plain.text  # reading changes nothing the model computes

    def test_the_same_answer_reads_the_same_state(self, tiny_generator):
        first, second = (tiny_generator.invoke(QUESTION, max_tokens=2, hidden_layers=[2]).response_metadata["hidden_states"][2]
                         for _ in range(2))
        # the same prompt and cache: the same computation up to float rounding of a restored cache
        np.testing.assert_allclose(first, second, rtol=1e-3, atol=1e-3)

    def test_the_models_own_layers_are_read_on_every_call(self, tiny_generator):
        try:
            tiny_generator.hidden_layers = (3,)
            assert set(tiny_generator.invoke(QUESTION, max_tokens=2).response_metadata["hidden_states"]) == {3}
            assert set(tiny_generator.invoke(QUESTION, max_tokens=2, hidden_layers=[1]).response_metadata["hidden_states"]) == {1}
        finally:
            tiny_generator.hidden_layers = ()

    @pytest.mark.parametrize("layer", [-1, 10_000])
    def test_a_layer_out_of_range_is_refused(self, tiny_generator, layer):
        with pytest.raises(ValueError, match="hidden_layers"):
            tiny_generator.invoke(QUESTION, max_tokens=2, hidden_layers=[layer])


class TestAnswerProbe:
    def test_scores_are_probabilities_that_follow_the_coefficients(self, tiny_generator):
        width = tiny_generator.hidden_size
        probe = probe_of(tiny_generator, coef=(1.0,) + (0.0,) * (width - 1))
        low, high = np.zeros(width), np.zeros(width)
        low[0], high[0] = -2.0, 2.0
        assert 0.0 < probe.score_hidden(low) < 0.5 < probe.score_hidden(high) < 1.0
        assert probe.score_hidden(np.full(width, 1e6)) == pytest.approx(1.0)  # no overflow

    def test_a_state_of_another_width_is_refused(self, tiny_generator):
        with pytest.raises(AnswerProbeError, match="hidden values"):
            probe_of(tiny_generator).score_hidden([0.0, 1.0])

    @pytest.mark.parametrize("metadata, message", [({"model": ""}, "names the model"), ({"layer": -1}, "names the layer"),
                                                   ({"layer": True}, "names the layer"), ({"layer": "16"}, "names the layer")])
    def test_inconsistent_probes_are_refused(self, tiny_generator, metadata, message):
        with pytest.raises(AnswerProbeError, match=message):
            probe_of(tiny_generator, **metadata)

    def test_features_are_the_hidden_values_in_order(self):
        with pytest.raises(AnswerProbeError, match="h0, h1"):
            AnswerProbe(("h1", "h0"), (0.0, 0.0), (1.0, 1.0), (0.0, 0.0), 0.0, {"model": "m.gguf", "layer": 1})

    def test_a_probe_reads_only_its_own_model(self, tiny_generator):
        assert probe_of(tiny_generator).reads(tiny_generator)
        assert not replace(probe_of(tiny_generator), metadata={"model": "other.gguf", "layer": 1}).reads(tiny_generator)
        assert not probe_of(tiny_generator).reads(object())

    def test_save_and_load_round_trip(self, tiny_generator, tmp_path):
        probe = probe_of(tiny_generator, layer=5, coef=tuple(np.linspace(-1, 1, tiny_generator.hidden_size).tolist()))
        probe.save(tmp_path / "probe.json")
        assert AnswerProbe.load(tmp_path / "probe.json") == probe

    def test_fit_probe_learns_a_direction(self):
        rng = np.random.default_rng(0)
        x = rng.normal(size=(200, 8))
        y = (x[:, 3] > 0).astype(int)
        probe = fit_probe(x, y, hidden_features(8), l2=1.0, metadata={"model": "m.gguf", "layer": 2})
        assert int(np.argmax(np.abs(probe.coef))) == 3 and probe.coef[3] > 0

    def test_the_shipped_probe_reads_the_default_model_and_was_fit_on_train_only(self):
        from components.model_files import DEFAULT_PRESET, PRESETS

        probe = AnswerProbe.load(DEFAULT_PROBE)
        assert probe.metadata["fit_on"] and all(s.endswith(" train") for s in probe.metadata["fit_on"])
        assert probe.model == PRESETS[DEFAULT_PRESET].filename


class TestContext:
    def test_another_generator_is_checked_without_the_probe(self, embedder, index, index_dir):
        from components.answerability import DEFAULT_MODEL, FALLBACK_MODEL
        from pipeline.context import RAGContext, ResourceConfig

        # the shipped check reads the probe of the default model; with SmolLM2 the check fit without it applies
        resources = ResourceConfig(index_dir=index_dir, model="smollm2-135m", n_ctx=1024)
        ctx = RAGContext.load(resources, embedder=embedder, index=index)
        assert AnswerabilityModel.load(DEFAULT_MODEL).uses_answer_probe and ctx.answerability.uses_answer_probe
        assert ctx.answer_probe is not None and ctx.probe is None
        assert ctx.check == AnswerabilityModel.load(FALLBACK_MODEL) and not ctx.check.uses_answer_probe
        with_probe = replace(ctx, answer_probe=probe_of(ctx.generator))  # a probe of this generator: the full check
        assert with_probe.probe is not None and with_probe.check is ctx.answerability

    def test_a_check_that_uses_the_probe_needs_a_probe_or_a_fallback(self, embedder, index, index_dir, tmp_path):
        from pipeline.configuration import ConfigurationError
        from pipeline.context import RAGContext, ResourceConfig

        path = tmp_path / "check.json"
        TestNodes.check_model().save(path)
        with pytest.raises(ConfigurationError, match="uses the answer probe"):
            RAGContext.load(ResourceConfig(index_dir=index_dir, model="smollm2-135m", answerability=path, answer_probe=None,
                                           answerability_fallback=None), embedder=embedder, index=index)
        with pytest.raises(ConfigurationError, match="must not use"):
            RAGContext.load(ResourceConfig(index_dir=index_dir, model="smollm2-135m", answerability=path,
                                           answerability_fallback=path), embedder=embedder, index=index)


class TestNodes:
    """generate records the probe's score; check_answer reads it."""

    STEP = {"tier": "medium", "answer": "Paris", "raw_output": "Paris [1]", "abstained": False, "abstain_prob": 0.05,
            "confidence": {"min_prob": 0.5, "first_prob": 0.6, "first_margin": 0.2, "mean_logprob": -0.4,
                           "neg_mean_entropy": -1.0}}

    def state(self, **step):
        text = "Paris is the capital of France."
        return {"question": "What is the capital of France?", "answer": "Paris", "steps": [{**self.STEP, **step}],
                "citations": [{"n": 1, "passage_id": "p1", "title": "Paris", "text": text, "score": 0.7, "metadata": {}}],
                "evidence": [{"n": 1, "passage_id": "p1", "title": "Paris", "text": text}],
                "passages": [{"id": "p1", "score": 0.7, "text": text}],
                "settings": {"abstain_threshold": 0.5, "layout": "question_first"}, "escalations": 0}

    @staticmethod
    def check_model(weight=4.0):
        return AnswerabilityModel((ANSWER_PROBE,), (0.5,), (0.25,), (weight,), 0.0, {"threshold": 0.5})

    def test_probe_score_reads_the_probes_layer(self, tiny_generator):
        width = tiny_generator.hidden_size
        probe = probe_of(tiny_generator, layer=4, coef=(1.0,) + (0.0,) * (width - 1))
        assert probe_score(probe, {"hidden_states": {4: [3.0] + [0.0] * (width - 1)}}) > 0.9
        assert probe_score(probe, {"hidden_states": {5: [3.0] * width}}) is None
        assert probe_score(probe, {}) is None

    @pytest.mark.parametrize("reading, decision", [(0.9, "answer"), (0.1, "abstain")])
    def test_the_check_decides_on_the_probes_reading(self, ctx, tiny_generator, reading, decision):
        runtime = Runtime(context=replace(ctx, answerability=self.check_model(), answer_probe=probe_of(tiny_generator)))
        check = check_answer(self.state(answer_probe=reading), runtime)["trace"]["answerability"]
        assert check["features"][ANSWER_PROBE] == reading and check["decision"] == decision and check["by"] == "score"

    def test_without_the_probe_the_fallback_checks(self, ctx):
        fallback = AnswerabilityModel(("support",), (0.5,), (0.25,), (2.0,), 0.0, {"threshold": 0.5})
        runtime = Runtime(context=replace(ctx, answerability=self.check_model(), answerability_fallback=fallback,
                                          answer_probe=None))
        check = check_answer(self.state(answer_probe=None), runtime)["trace"]["answerability"]
        assert check["by"] == "score" and ANSWER_PROBE not in check["features"]
        assert check["score"] == pytest.approx(fallback.score(check["features"]))

    @pytest.mark.parametrize("probe, reading, reason", [(False, 0.9, "needs the answer probe"),
                                                        (True, None, "no reading")])
    def test_without_a_probe_or_a_reading_the_answer_is_unchecked(self, ctx, tiny_generator, probe, reading, reason):
        runtime = Runtime(context=replace(ctx, answerability=self.check_model(), answerability_fallback=None,
                                          answer_probe=probe_of(tiny_generator) if probe else None))
        check = check_answer(self.state(answer_probe=reading), runtime)["trace"]["answerability"]
        assert check["by"] == "unchecked" and reason in check["reason"] and check["decision"] == "answer"

    def test_generate_records_the_probes_score_of_an_answer_from_evidence(self, ctx, tiny_generator):
        from graph import graph

        probe = probe_of(tiny_generator, layer=2, coef=(0.01,) * tiny_generator.hidden_size)
        question = {"question": "What is the capital of France?"}
        out = graph.invoke(question, context=replace(ctx, answer_probe=probe))
        step = out["trace"]["steps"][-1]
        assert out["trace"]["context"] and not step["abstained"]  # the small index holds Paris: an answer from evidence
        assert 0.0 < step["answer_probe"] < 1.0
        assert out["trace"]["answerability"]["features"][ANSWER_PROBE] == step["answer_probe"]  # recorded for replays
        assert "answer_probe" not in graph.invoke(question, context=ctx)["trace"]["steps"][-1]  # no probe, no reading


class TestFitting:
    def test_the_recording_model_leaves_the_probe_to_its_cross_fitted_scores(self):
        from training.answerability import FREE, recording_model

        assert ANSWER_PROBE not in recording_model().features and ANSWER_PROBE not in FREE
        assert set(recording_model().features) == set(FEATURES) - {ANSWER_PROBE, *QUESTION_LIKELIHOOD}

    def test_a_recording_without_model_calls_offers_no_candidate_that_needs_one(self):
        """``record`` keeps the states of each answer's first token, so the check makes no call of its own (a
        self-check's reply would be the last with states); the fit then offers only what was recorded."""
        from components.answerability import SELF_CHECKS, SUFFICIENCY
        from training.answerability import candidate_extras, recording_model

        lean = recording_model(model_calls=False)
        assert set(lean.features) == set(FEATURES) - {ANSWER_PROBE, *QUESTION_LIKELIHOOD, *SELF_CHECKS, SUFFICIENCY}
        assert not lean.self_checks and not lean.uses_sufficiency
        runs = [{**r, "answerability": {**r["answerability"], "features": {f: 0.5 for f in lean.features}}}
                for r in self.runs()]
        assert candidate_extras(runs) == [()]
        one = [{**r, "answerability": {**r["answerability"], "features": {
            **r["answerability"]["features"], SELF_CHECKS[0]: 0.5}}} for r in runs]
        assert candidate_extras(one) == [(), (SELF_CHECKS[0],)]
        every = [{**r, "answerability": {**r["answerability"], "features": {
            **r["answerability"]["features"], **{c: 0.5 for c in SELF_CHECKS}}}} for r in runs]
        assert candidate_extras(every) == [(), *((c,) for c in SELF_CHECKS), SELF_CHECKS]

    def test_a_recording_whose_two_files_disagree_is_refused_and_a_finished_one_left_alone(self, tmp_path):
        from training.answer_probe import SAVE_EVERY, _save, main

        runs, out, hidden = tmp_path / "runs.jsonl", tmp_path / "out.jsonl", tmp_path / "states.npz"
        runs.write_text("".join(json.dumps(r) + "\n" for r in self.runs()[:2]))
        out.write_text("".join(json.dumps(r) + "\n" for r in self.runs()[:2]))
        _save(hidden, {"ids": np.array(["q0", "q1"]), "layers": np.array([20]), "states": np.zeros((2, 1, 3)),
                       "same": np.ones(2, dtype=bool), "model": np.array("m.gguf")})
        arguments = ["record", "--runs", str(runs), "--out", str(out), "--hidden", str(hidden), "--layers", "20"]
        assert main(arguments) == 0  # every question recorded: nothing loads, nothing changes
        out.write_text("".join(json.dumps(r) + "\n" for r in self.runs()[1:3]))
        with pytest.raises(SystemExit, match="not one recording"):
            main(arguments)
        out.write_text("".join(json.dumps(r) + "\n" for r in self.runs()[:3]))  # records the states do not hold
        with pytest.raises(SystemExit, match="not one recording"):
            main(arguments)
        out.unlink()  # states of a recording whose records are not these (a states file of run's, say) stay untouched
        many = [f"q{i}" for i in range(SAVE_EVERY + 1)]
        runs.write_text("".join(json.dumps({"dataset": "squad", "id": i}) + "\n" for i in many))
        _save(hidden, {"ids": np.array(many), "layers": np.array([20]), "states": np.zeros((len(many), 1, 3)),
                       "same": np.ones(len(many), dtype=bool), "model": np.array("m.gguf")})
        with pytest.raises(SystemExit, match="not one recording"):
            main(arguments)
        assert len(np.load(hidden)["ids"]) == len(many)
        with pytest.raises(SystemExit):  # a file for the states is named, never run's by default
            main(arguments[:-4])
        with pytest.raises(SystemExit, match=r"holds layers \[20\], not \[16\]"):
            main([*arguments[:-1], "16"])

    def runs(self):
        features = {"support": 0.5}
        return [{"id": f"q{i}", "dataset": "squad", "answerable": True, "f1": 1.0,
                 "answerability": {"by": "score", "features": dict(features)}} for i in range(4)]

    def test_probe_scores_join_by_id_and_an_answer_without_one_stays_unscored(self):
        from training.answerability import candidate_extras, having, with_probe_scores

        runs = self.runs()
        joined = with_probe_scores(runs, {"q0": 0.2, "q2": 0.7})
        assert [r["answerability"]["features"].get(ANSWER_PROBE) for r in joined] == [0.2, None, 0.7, None]
        assert all(ANSWER_PROBE not in r["answerability"]["features"] for r in runs)  # the records are not changed
        assert (ANSWER_PROBE,) in candidate_extras(joined) and (ANSWER_PROBE,) not in candidate_extras(runs)
        assert [r["id"] for r in having(joined, ("support", ANSWER_PROBE))] == ["q0", "q2"]
        with pytest.raises(SystemExit, match="other runs"):
            with_probe_scores(runs, {"elsewhere": 0.5})

    def test_the_recorder_keeps_the_latest_reply_with_hidden_states(self):
        from training.answer_probe import HiddenRecorder

        def result(metadata):
            return SimpleNamespace(generations=[[SimpleNamespace(message=SimpleNamespace(response_metadata=metadata))]])

        recorder = HiddenRecorder()
        recorder.on_llm_end(result({"hidden_states": {16: [1.0]}}))
        recorder.on_llm_end(result({}))  # a later call that read nothing
        assert recorder.latest == {16: [1.0]}

    def test_an_answer_s_states_are_its_own_reply_s_or_nans(self, monkeypatch):
        import eval.runner
        from training.answer_probe import HiddenRecorder, answered

        recorder = HiddenRecorder()
        recorder.latest = {16: [9.0, 9.0]}  # the previous answer's: never read as this one's
        replies = iter([{16: [1.0, 2.0], 20: [3.0, 4.0]}, None])

        def run_one(ctx, system, example):
            recorder.latest = next(replies) or recorder.latest
            return {"id": example}

        monkeypatch.setattr(eval.runner, "run_one", run_one)
        assert answered(recorder, None, None, "q1", [16, 20], 2) == ({"id": "q1"}, [[1.0, 2.0], [3.0, 4.0]])
        record, states = answered(recorder, None, None, "q2", [16], 2)
        assert record == {"id": "q2"} and np.isnan(states).all() and np.shape(states) == (1, 2)

    def hidden(self, runs, same=True):
        return {"ids": np.array([r["id"] for r in runs]), "layers": np.array([8, 16]), "model": np.array("m.gguf"),
                "same": np.array([same] * len(runs)), "states": np.zeros((len(runs), 2, 3), dtype=np.float32)}

    def test_states_of_answers_that_came_out_differently_are_left_out_or_refused(self):
        from training.answer_probe import probe_rows

        runs = self.runs()
        scored, states, changed = probe_rows(runs, self.hidden(runs))
        assert len(scored) == 4 and states.shape == (4, 2, 3) and changed == 0
        with pytest.raises(SystemExit, match="differently"):
            probe_rows(runs, self.hidden(runs, same=False))
        runs = [{**runs[0], "id": f"r{i}"} for i in range(20)]
        one_changed = {**self.hidden(runs), "same": np.array([i != 7 for i in range(20)])}
        scored, states, changed = probe_rows(runs, one_changed)  # a few: left out
        assert changed == 1 and "r7" not in [r["id"] for r in scored] and len(states) == 19
        with pytest.raises(SystemExit, match="no hidden states"):
            probe_rows(runs, self.hidden(runs[:2]))

    def test_fit_picks_the_layer_that_separates_and_writes_cross_fitted_scores(self, tmp_path):
        from training.answer_probe import fit, main

        rng = np.random.default_rng(1)
        runs = [{"id": f"q{i}", "dataset": "squad" if i % 2 else "hotpotqa", "question": "Which?", "answerable": True,
                 "gold_answers": ["Paris"], "answer": "Paris" if i % 3 == 0 else "Lyon", "f1": float(i % 3 == 0),
                 "answerability": {"by": "score", "features": {"support": 0.5}}} for i in range(60)]
        states = rng.normal(size=(60, 2, 4)).astype(np.float32)
        states[:, 1, 2] += 3.0 * np.array([r["f1"] for r in runs])  # layer 16 knows which answers are right
        hidden = {**self.hidden(runs), "states": states}
        result = fit(runs, hidden, [1.0, 10.0])
        assert result["layer"] == 16 and result["grid"][(16, result["l2"])]["auroc"] > 0.9 > result["grid"][(8, 1.0)]["auroc"]
        assert result["probe"].layer == 16 and result["probe"].model == "m.gguf" and result["probe"].width == 4
        np.savez(tmp_path / "hidden.npz", **hidden)
        (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs), encoding="utf-8")
        out = {name: tmp_path / name for name in ("probe.json", "scores.jsonl", "report")}
        assert main(["fit", "--runs", str(tmp_path / "runs.jsonl"), "--hidden", str(tmp_path / "hidden.npz"),
                     "--penalties", "1", "10", "--probe-out", str(out["probe.json"]), "--cross-fit", str(out["scores.jsonl"]),
                     "--report", str(out["report"]), "--extra", "none"]) == 0
        scores = [json.loads(line) for line in out["scores.jsonl"].read_text(encoding="utf-8").splitlines()]
        assert [s["id"] for s in scores] == [r["id"] for r in runs] and all(0 <= s["answer_probe"] <= 1 for s in scores)
        assert AnswerProbe.load(out["probe.json"]).layer == 16 and "layer 16" in (out["report"] / "README.md").read_text()

    def test_layers_read_together_tell_what_each_tells_half_of(self, tmp_path, capsys):
        from training.answer_probe import layer_sets, main

        rng = np.random.default_rng(3)
        runs = self.alternating(200)
        right = np.array([r["f1"] for r in runs])
        states = rng.normal(size=(200, 2, 4)).astype(np.float32)
        half = rng.random(200) < 0.5  # each layer shows the answer's rightness for a different half of them
        states[:, 0, 1] += 3.0 * right * half
        states[:, 1, 2] += 3.0 * right * ~half
        hidden = {**self.hidden(runs), "states": states}
        scored, grid = layer_sets(runs, hidden, [[8], [16], [8, 16]], [1.0])
        assert len(scored) == 200 and len(grid[((8, 16), 1.0)]["scores"]) == 200
        assert grid[((8, 16), 1.0)]["auroc"] > max(grid[((8,), 1.0)]["auroc"], grid[((16,), 1.0)]["auroc"])
        with pytest.raises(SystemExit, match="not \\[20\\]"):
            layer_sets(runs, hidden, [[16, 20]], [1.0])
        np.savez(tmp_path / "hidden.npz", **hidden)
        (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs), encoding="utf-8")
        assert main(["layers", "--runs", str(tmp_path / "runs.jsonl"), "--hidden", str(tmp_path / "hidden.npz"),
                     "--sets", "8", "8,16", "--penalties", "1", "--extra", "none",
                     "--cross-fit-out", str(tmp_path / "scores.jsonl")]) == 0
        assert "the best, layers 8,16" in capsys.readouterr().out
        scores = [json.loads(line) for line in (tmp_path / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
        assert [s["id"] for s in scores] == [r["id"] for r in runs] and [s["fold"] for s in scores[:6]] == [0, 1, 2, 3, 4, 0]

    def test_an_answerable_probe_learns_squads_labels_out_of_fold(self):
        from training.answer_probe import answerable_scores
        from training.cascade import auroc

        rng = np.random.default_rng(5)
        runs = [{"id": f"q{i}", "dataset": "hotpotqa" if i % 4 == 3 else "squad", "answerable": i % 4 == 3 or i % 2 == 0}
                for i in range(200)]
        answerable = np.array([r["answerable"] for r in runs], dtype=float)
        states = rng.normal(size=(200, 4))
        states[:, 1] += 3.0 * answerable  # the state knows which questions are answerable
        scores = answerable_scores(runs, states, 1.0)
        squad = [i for i, r in enumerate(runs) if r["dataset"] == "squad"]
        assert auroc([scores[i] for i in squad], [runs[i]["answerable"] for i in squad]) > 0.9
        hotpot = [i for i, r in enumerate(runs) if r["dataset"] == "hotpotqa"]
        assert np.mean([scores[i] for i in hotpot]) > 0.8  # answerable, and scored by a probe that never saw them
        flipped = [{**r, "answerable": not r["answerable"]} if i == squad[0] else r for i, r in enumerate(runs)]
        again = answerable_scores(flipped, states, 1.0)  # an answer's own label never teaches the probe that scores it
        assert again[squad[0]] == scores[squad[0]] and not np.array_equal(again, scores)
        with pytest.raises(SystemExit, match="no SQuAD answers"):
            answerable_scores([runs[i] for i in hotpot], states[hotpot], 1.0)

    @staticmethod
    def alternating(n):
        """``n`` scored SQuAD answers, every other one right."""
        return [{"id": f"q{i}", "dataset": "squad", "question": "Which?", "answerable": True, "gold_answers": ["Paris"],
                 "answer": "Paris" if i % 2 else "Lyon", "f1": float(i % 2),
                 "answerability": {"by": "score", "features": {"support": 0.5}}} for i in range(n)]

    def extra(self, n, right, layers=(8, 16), model="m.gguf", answered=None, states=None):
        return {"datasets": np.array(["squad"] * n), "ids": np.array([f"x{i}" for i in range(n)]), "layers": np.array(layers),
                "states": np.zeros((n, len(layers), 4), dtype=np.float32) if states is None else states,
                "right": np.array(right), "answered": np.array([True] * n if answered is None else answered),
                "model": np.array(model)}

    def test_extra_answers_teach_every_fold_and_get_no_score_of_their_own(self):
        from training.answer_probe import fit

        rng = np.random.default_rng(2)
        runs = self.alternating(20)
        signal = np.array([r["f1"] for r in runs])
        states = rng.normal(size=(20, 2, 4)).astype(np.float32)
        states[:, 1, 2] += 0.8 * signal  # too faint to learn from 16 answers
        extra_right = rng.random(400) < 0.5
        extra_states = rng.normal(size=(400, 2, 4)).astype(np.float32)
        extra_states[:, 1, 2] += 0.8 * extra_right  # the same direction, in many more answers
        alone = fit(runs, {**self.hidden(runs), "states": states}, [1.0])
        helped = fit(runs, {**self.hidden(runs), "states": states}, [1.0], self.extra(400, extra_right, states=extra_states))
        assert len(helped["cross_fit"]) == 20 and helped["extra"] == 400 and helped["extra_right"] == int(extra_right.sum())
        assert helped["probe"].metadata["extra_answers"] == 400 and helped["probe"].metadata["answers"] == 420
        assert helped["grid"][(16, 1.0)]["auroc"] > alone["grid"][(16, 1.0)]["auroc"]

    def test_extra_answers_without_a_reading_or_of_another_model_are_left_out_or_refused(self):
        from training.answer_probe import extra_rows, fit

        states = np.zeros((3, 2, 4), dtype=np.float32)
        states[2, 0, 0] = np.nan  # no reading
        kept, labels = extra_rows(self.extra(3, [True, False, True], answered=[True, False, True], states=states), [8, 16])
        assert kept.shape == (1, 2, 4) and labels == [1]  # the model's own abstention and the unread answer are out
        with pytest.raises(SystemExit, match="layers"):
            extra_rows(self.extra(3, [True] * 3, layers=(8, 20)), [8, 16])
        runs = self.runs()
        with pytest.raises(SystemExit, match="other.gguf"):
            fit(runs, self.hidden(runs), [1.0], self.extra(3, [True] * 3, model="other.gguf"))

    def test_a_learning_curve_takes_the_first_extra_questions(self):
        from training.answer_probe import extra_rows, first_extra

        states = np.arange(5 * 2 * 4, dtype=np.float32).reshape(5, 2, 4)
        extra = self.extra(5, [True, False, True, True, False], states=states)
        first = first_extra(extra, 3)
        assert first["ids"].tolist() == ["x0", "x1", "x2"] and first["right"].tolist() == [True, False, True]
        assert first["layers"].tolist() == [8, 16] and str(first["model"]) == "m.gguf"  # the file's own, untouched
        kept, labels = extra_rows(first, [8, 16])
        assert np.array_equal(kept, states[:3]) and labels == [1, 0, 1]
        assert len(first_extra(extra, 0)["ids"]) == 0 and len(first_extra(extra, 99)["ids"]) == 5
        with pytest.raises(SystemExit, match="extra-limit"):
            first_extra(extra, -1)

    @pytest.mark.parametrize("sets", [["squad"], ["squad=0"], ["imdb=3"], ["nq=x"]])
    def test_extra_sets_are_name_equals_count(self, sets):
        from training.answer_probe import parse_sets

        with pytest.raises(SystemExit, match="name=count"):
            parse_sets(sets)
        assert parse_sets(["squad=600", "nq=300"]) == [("squad", 600), ("nq", 300)]

    def test_a_missing_states_file_says_how_to_make_it(self, tmp_path):
        from training.answer_probe import read_hidden

        with pytest.raises(SystemExit, match="training.answer_probe run"):
            read_hidden(tmp_path / "absent.npz")

    def test_a_check_that_reads_the_probe_is_fit_with_one_that_does_not(self):
        from components.answerability import SELF_CHECKS
        from training.answerability import FREE, fit

        rng = np.random.default_rng(3)
        runs = []
        for i in range(120):
            right = i % 3 == 0
            answerable = right or i % 2 == 0
            features = {f: float(rng.normal()) for f in (*FREE, *SELF_CHECKS)}  # self-checks: too slow to be chosen
            features[ANSWER_PROBE] = float(np.clip(0.8 * right + 0.2 * rng.random(), 0, 1))  # the probe knows
            runs.append({"id": f"q{i}", "dataset": "squad" if i % 4 else "hotpotqa", "answerable": answerable,
                         "f1": 1.0 if right else 0.0, "latency_ms": 1000.0,
                         "answerability": {"by": "score", "features": features, "self_check_ms": 600.0}})
        result = fit(runs, max_hotpot_loss=1.0, l2=1.0, max_time_added=5.0)
        assert result["pick"] == "free+answer_probe" and result["model"].uses_answer_probe
        assert result["fallback_pick"] == "free" and not result["fallback"].uses_answer_probe
        assert fit(runs, 1.0, 1.0, 5.0, require=ANSWER_PROBE)["fallback"] is None  # an option file needs none
