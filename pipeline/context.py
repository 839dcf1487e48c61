"""The run context: loaded resources plus the pipeline configuration, passed to every node through
LangGraph's context mechanism (``graph.invoke(..., context=ctx)``).

Loading is explicit (:meth:`RAGContext.load`, which warms every model up) and done once per
process; variants for other policies share the same loaded resources (:meth:`RAGContext.with_pipeline`).
A graph invoked without a context uses :func:`default_context`, loaded on first use.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable


from components.answer_probe import DEFAULT_PROBE as DEFAULT_ANSWER_PROBE, AnswerProbe
from components.answerability import (
    DEFAULT_MODEL as DEFAULT_ANSWERABILITY,
    FALLBACK_MODEL,
    WIKIPEDIA_MODEL,
    WIKIPEDIA_SOURCE,
    AnswerabilityModel,
)
from components.embedder import DEFAULT_EMBEDDER, QUERY_RUNTIMES, Embedder, resolve_embedder
from components.energy import EnergyMeter
from components.generator import Generator, load_chat_model
from components.index import PassageIndex
from components.model_files import DEFAULT_PRESET, PRESETS, cache_dir
from components.probe_router import DEFAULT_PROBE_ROUTER, ProbeRouter
from components.question_type import DEFAULT_QUESTION_TYPE, QuestionTypeModel
from components.query_cache import QueryCache
from components.retrieval_gate import DEFAULT_GATE, RetrievalGate
from components.reranker import Reranker, load_reranker
from components.sufficiency import DEFAULT_SCORER, SufficiencyScorer
from pipeline.configuration import ConfigurationError, PipelineConfig
from router.model import DEFAULT_WEIGHTS, TierRouter


def default_index_dir() -> Path:
    """``$ADAPTIVE_RAG_INDEX``, else the Wikipedia index in the cache folder."""
    env = os.environ.get("ADAPTIVE_RAG_INDEX")
    return Path(env).expanduser() if env else cache_dir() / "indexes" / "wikipedia"


@dataclass(frozen=True)
class ResourceConfig:
    """Which models and index to load. Defaults: bundled MiniLM, Qwen2.5-Coder-1.5B, Wikipedia."""

    index_dir: Path = field(default_factory=default_index_dir)
    embedder: str = DEFAULT_EMBEDDER
    embedder_runtime: str = "auto"  # what embeds a question: "auto" (ONNX Runtime where it agrees), "onnxruntime", "torch"
    model: str = field(default_factory=lambda: os.environ.get("ADAPTIVE_RAG_MODEL", DEFAULT_PRESET))
    reranker: str | None = None  # None: the dense retrieval's order; "hybrid"; "learned"; or a cross-encoder's name or path
    router: Path | None = DEFAULT_WEIGHTS  # trained tier router weights; None: no router (fixed/baseline only)
    answerability: Path | None = DEFAULT_ANSWERABILITY  # the answerability model; None: answers are never checked
    sufficiency: Path | None = DEFAULT_SCORER  # the sufficiency scorer, loaded when the answerability model uses it
    answer_probe: Path | None = DEFAULT_ANSWER_PROBE  # the default generator's answer probe; None: none
    answerability_fallback: Path | None = FALLBACK_MODEL  # the check for a generator the probe does not read
    # the check for an answer whose evidence is the bundled Wikipedia summaries alone; None: the answerability one
    answerability_wikipedia: Path | None = WIKIPEDIA_MODEL
    retrieval_gate: Path | None = DEFAULT_GATE  # the retrieve-or-not gate; None: that policy is unavailable
    probe_router: Path | None = DEFAULT_PROBE_ROUTER  # the router that sees the retrieval; None: that policy is unavailable
    question_type: Path | None = DEFAULT_QUESTION_TYPE  # multi-hop or not: where the cascade starts; None: at multi_hop_tier
    query_cache: str | None = None  # a SQLite file (or ":memory:") for the query cache; None: no cache
    n_threads: int = 2
    n_ctx: int = 4096

    def __post_init__(self) -> None:
        if self.n_threads < 1:
            raise ConfigurationError(f"n_threads must be >= 1, got {self.n_threads}")
        if self.n_ctx < 256:
            raise ConfigurationError(f"n_ctx must be >= 256, got {self.n_ctx}")
        if self.embedder_runtime not in QUERY_RUNTIMES:
            raise ConfigurationError(f"unknown embedder runtime {self.embedder_runtime!r}; valid: "
                                     f"{', '.join(QUERY_RUNTIMES)}")
        is_path = Path(self.model).suffix.lower() == ".gguf" or os.sep in self.model or "/" in self.model
        if self.model not in PRESETS and not is_path:
            raise ConfigurationError(
                f"unknown model preset {self.model!r}; valid presets: {', '.join(PRESETS)} "
                "(or a .gguf path, or a Hugging Face name such as org/model)"
            )


def check_for_generator(configured: AnswerabilityModel | None, fallback: AnswerabilityModel | None,
                        probe_reads: bool) -> AnswerabilityModel | None:
    """The check a generator's answers get: the configured one, or, when that one reads the answer
    probe and the probe does not read this generator (``probe_reads``), the check fit without it."""
    if configured is not None and configured.uses_answer_probe and not probe_reads and fallback is not None:
        return fallback
    return configured


@dataclass(frozen=True)
class RAGContext:
    """Everything a node needs besides the state."""

    embedder: Embedder
    index: PassageIndex
    reranker: Reranker
    generator: Generator
    pipeline: PipelineConfig = field(default_factory=PipelineConfig)
    resources: ResourceConfig | None = None
    router: TierRouter | None = None
    answerability: AnswerabilityModel | None = None  # None: check_answer gives every answer unchecked
    retrieval_gate: RetrievalGate | None = None  # None: the retrieve-or-not policy is unavailable
    query_cache: QueryCache | None = None  # None: every question is answered afresh
    probe_router: ProbeRouter | None = None  # None: the probe-router policy is unavailable
    sufficiency: SufficiencyScorer | None = None  # None: an answerability model that needs it leaves answers unchecked
    question_type: QuestionTypeModel | None = None  # None: the cascade starts every question at multi_hop_tier
    answer_probe: AnswerProbe | None = None  # read only with the generator it was fit on (see probe)
    answerability_fallback: AnswerabilityModel | None = None  # the check without the probe (see check)
    answerability_wikipedia: AnswerabilityModel | None = None  # for answers from the Wikipedia summaries (see check_for)
    energy: EnergyMeter = field(default_factory=EnergyMeter)

    @classmethod
    def load(cls, resources: ResourceConfig | None = None, pipeline: PipelineConfig | None = None, *,
             embedder: Embedder | None = None, index: PassageIndex | None = None) -> "RAGContext":
        """Load and warm up every resource. The index and the router are checked first, so a missing
        or mismatched file fails before the generator loads. A caller that already holds the
        embedder or the index (say, one that just built a benchmark index) passes it in instead of
        having it loaded a second time."""
        resources = resources or ResourceConfig()
        if embedder is None:
            embedder = Embedder(resources.embedder, query_runtime=resources.embedder_runtime)
        elif embedder.name != resolve_embedder(resources.embedder)[0]:
            raise ConfigurationError(f"embedder {embedder.name!r} given, the resources name {resources.embedder!r}")
        elif embedder.requested_query_runtime != resources.embedder_runtime:
            raise ConfigurationError(f"embedder given with query runtime {embedder.requested_query_runtime!r}, "
                                     f"the resources name {resources.embedder_runtime!r}")
        if index is None:
            index = PassageIndex.load(resources.index_dir, embedder=embedder.name)
        elif index.embedder != embedder.name:
            raise ConfigurationError(f"index {index.directory} was built with {index.embedder!r}, "
                                     f"the embedder is {embedder.name!r}")
        embedder.warm_up()
        if index.dimension != embedder.dimension:
            raise ConfigurationError(
                f"index at {resources.index_dir} holds {index.dimension}-d vectors, embedder "
                f"{embedder.name!r} gives {embedder.dimension}-d ones"
            )
        router = None
        if resources.router is not None:
            router = TierRouter.load(resources.router, embedder=embedder.name, dimension=embedder.dimension)
            router.check_tiers(list((pipeline or PipelineConfig()).tiers))
        answerability = AnswerabilityModel.load(resources.answerability) if resources.answerability else None
        sufficiency = None
        if answerability is not None and answerability.uses_sufficiency:
            if resources.sufficiency is None:
                raise ConfigurationError(f"the answerability model {resources.answerability} uses the sufficiency "
                                         "scorer, and none is configured")
            sufficiency = SufficiencyScorer(resources.sufficiency)
        # loaded even when the check does not use it: its reading costs a row copy and a dot product, and
        # recorded in the trace it lets another check be replayed on the same answers (eval.rescore)
        answer_probe = AnswerProbe.load(resources.answer_probe) if resources.answer_probe is not None else None
        fallback = None
        if answerability is not None and answerability.uses_answer_probe:
            if resources.answerability_fallback is None and answer_probe is None:
                raise ConfigurationError(f"the answerability model {resources.answerability} uses the answer probe, "
                                         "and neither a probe nor a check without it is configured")
            if resources.answerability_fallback is not None:
                fallback = AnswerabilityModel.load(resources.answerability_fallback)
                if fallback.uses_answer_probe or fallback.uses_sufficiency:
                    raise ConfigurationError(f"the check without the probe, {resources.answerability_fallback}, must not use "
                                             "the answer probe or the sufficiency scorer")
        wikipedia = None
        if answerability is not None and resources.answerability_wikipedia is not None:
            wikipedia = AnswerabilityModel.load(resources.answerability_wikipedia)
            if wikipedia.uses_sufficiency or wikipedia.self_checks:
                raise ConfigurationError(f"the check for the Wikipedia summaries, {resources.answerability_wikipedia}, "
                                         "must not use the sufficiency scorer or a self-check")
        gate = RetrievalGate.load(resources.retrieval_gate) if resources.retrieval_gate else None
        if gate is not None and gate.dimension not in (0, embedder.dimension):
            raise ConfigurationError(f"the retrieve-or-not gate reads {gate.dimension}-d embeddings, "
                                     f"embedder {embedder.name!r} gives {embedder.dimension}-d ones")
        probe_router = ProbeRouter.load(resources.probe_router) if resources.probe_router else None
        if probe_router is not None:
            if probe_router.dimension not in (0, embedder.dimension):
                raise ConfigurationError(f"the probe router reads {probe_router.dimension}-d embeddings, "
                                         f"embedder {embedder.name!r} gives {embedder.dimension}-d ones")
            probe_router.check_tiers(list((pipeline or PipelineConfig()).tiers))
        question_type = QuestionTypeModel.load(resources.question_type) if resources.question_type else None
        if question_type is not None and question_type.dimension not in (0, embedder.dimension):
            raise ConfigurationError(f"the question-type model reads {question_type.dimension}-d embeddings, "
                                     f"embedder {embedder.name!r} gives {embedder.dimension}-d ones")
        query_cache = QueryCache(resources.query_cache) if resources.query_cache else None
        reranker = load_reranker(resources.reranker)
        reranker.warm_up()
        generator = load_chat_model(resources.model, n_threads=resources.n_threads, n_ctx=resources.n_ctx)
        generator.warm_up()
        if sufficiency is not None:
            sufficiency.warm_up()
        return cls(embedder, index, reranker, generator, pipeline or PipelineConfig(), resources, router, answerability,
                   gate, query_cache, probe_router, sufficiency, question_type, answer_probe=answer_probe,
                   answerability_fallback=fallback, answerability_wikipedia=wikipedia)

    @property
    def probe(self) -> AnswerProbe | None:
        """The answer probe, when it reads this context's generator (a probe belongs to the model it
        was fit on; a server may answer a request with another)."""
        return self.answer_probe if self.answer_probe is not None and self.answer_probe.reads(self.generator) else None

    @property
    def check(self) -> AnswerabilityModel | None:
        """The answerability model for this context's generator (:func:`check_for_generator`)."""
        return check_for_generator(self.answerability, self.answerability_fallback, self.probe is not None)

    def check_for(self, sources: Iterable[str | None]) -> tuple[AnswerabilityModel | None, str]:
        """The check an answer gets from the ``sources`` of its evidence (each passage's metadata
        ``source``), and what that check was fit on: ``"wikipedia"`` (answers over the bundled
        Wikipedia summaries) when every piece of evidence is one of them and that check reads this
        generator, else :attr:`check` and ``"contexts"`` (the benchmarks' paragraphs, which a user's
        own documents resemble: the question is asked of the text that should hold its answer)."""
        wikipedia = self.answerability_wikipedia
        if (wikipedia is not None and (self.probe is not None or not wikipedia.uses_answer_probe)
                and self.check is self.answerability and set(sources) == {WIKIPEDIA_SOURCE}):
            return wikipedia, "wikipedia"
        return self.check, "contexts"

    @property
    def model_name(self) -> str | None:
        """The generator as configured (preset, Hugging Face name or path); for a context built
        without resources, the loaded generator's model file, if it has one."""
        if self.resources is not None:
            return self.resources.model
        return getattr(self.generator, "model_path", None)

    def with_pipeline(self, pipeline: PipelineConfig | None = None, **changes: Any) -> "RAGContext":
        """The same loaded resources under another pipeline configuration."""
        base = pipeline or self.pipeline
        return replace(self, pipeline=replace(base, **changes) if changes else base)


_default: RAGContext | None = None
_default_lock = threading.Lock()


def default_context() -> RAGContext:
    """The process-wide context on the default resources, loaded once on first use."""
    global _default
    with _default_lock:
        if _default is None:
            _default = RAGContext.load()
        return _default
