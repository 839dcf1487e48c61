"""Benchmark loaders for the files in ``../shared/data`` (see its README).

Every loader yields :class:`Example`: id, question, gold answers (empty for SQuAD 2.0
unanswerables), gold evidence and the source dataset. Gold evidence is expressed in what a
retrieved passage can be matched on:

* ``titles``: HotpotQA supporting paragraphs (a retrieved sentence hits by its title);
* ``passage_ids``: SQuAD sentences of the gold paragraph that contain a gold answer span, as the
  ids the benchmark corpus gives them (``squad/<title>/<paragraph>#p0s<j>``);
* ``sentences``: the official HotpotQA supporting sentences (text), for the 100 official items.
"""

from __future__ import annotations

import ast
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from components.passages import split_sentences

DATASETS = ("squad", "hotpotqa", "hotpotqa-official", "nq", "triviaqa")


class DatasetError(RuntimeError):
    pass


@dataclass(frozen=True)
class Example:
    id: str
    question: str
    answers: tuple[str, ...]
    dataset: str
    evidence: dict[str, tuple[str, ...]] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)

    @property
    def answerable(self) -> bool:
        return bool(self.answers)


def data_dir(path: str | os.PathLike | None = None) -> Path:
    """``path``, else ``$ADAPTIVE_RAG_DATA``, else ``../shared/data`` beside the project."""
    candidate = Path(path or os.environ.get("ADAPTIVE_RAG_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
    if not candidate.is_dir():
        raise DatasetError(
            f"benchmark data folder not found: {candidate}; pass --data-dir or set ADAPTIVE_RAG_DATA"
        )
    return candidate


def _require(path: Path) -> Path:
    if not path.is_file():
        raise DatasetError(f"dataset file not found: {path}")
    return path


def _literal(value):
    return ast.literal_eval(value) if isinstance(value, str) else value


def squad(path: Path) -> Iterator[Example]:
    """SQuAD 2.0 JSON. Gold evidence: the paragraph sentences containing a gold answer."""
    data = json.loads(_require(Path(path)).read_text(encoding="utf-8"))
    for article in data["data"]:
        for p_idx, para in enumerate(article["paragraphs"]):
            sentences = split_sentences(para["context"])
            doc_id = f"squad/{article['title']}/{p_idx}"
            for qa in para["qas"]:
                answers = tuple(dict.fromkeys(a["text"] for a in qa.get("answers", []) if a["text"].strip()))
                if qa.get("is_impossible"):
                    answers = ()
                gold = tuple(f"{doc_id}#p0s{j}" for j, s in enumerate(sentences) if any(a in s for a in answers))
                yield Example(
                    id=qa["id"], question=qa["question"], answers=answers, dataset="squad",
                    evidence={"passage_ids": gold, "titles": (article["title"].replace("_", " "),)},
                    meta={"context": para["context"], "title": article["title"].replace("_", " ")},
                )


def hotpotqa_ircot(path: Path) -> Iterator[Example]:
    """HotpotQA in IRCoT JSONL. Gold evidence: the titles of the supporting paragraphs."""
    with _require(Path(path)).open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            item = json.loads(line)
            answers = tuple(a for obj in _literal(item["answers_objects"]) for a in obj.get("spans", []))
            contexts = _literal(item["contexts"])
            supporting = tuple(c["title"] for c in contexts if c.get("is_supporting"))
            yield Example(
                id=item["question_id"], question=item["question_text"], answers=answers, dataset="hotpotqa",
                evidence={"titles": supporting},
                meta={"gold_context": [(c["title"], c["paragraph_text"]) for c in contexts if c.get("is_supporting")]},
            )


def hotpotqa_official(path: Path) -> Iterator[Example]:
    """HotpotQA official distractor JSON. Gold evidence: supporting titles and sentences."""
    for item in json.loads(_require(Path(path)).read_text(encoding="utf-8")):
        paragraphs = {title: sentences for title, sentences in item["context"]}
        sentences = tuple(
            paragraphs[title][sid].strip() for title, sid in item["supporting_facts"]
            if title in paragraphs and sid < len(paragraphs[title])
        )
        titles = tuple(dict.fromkeys(title for title, _ in item["supporting_facts"]))
        yield Example(
            id=item["_id"], question=item["question"], answers=(item["answer"],), dataset="hotpotqa",
            evidence={"titles": titles, "sentences": sentences},
            meta={"type": item.get("type"), "level": item.get("level"),
                  "gold_context": [(t, " ".join(paragraphs[t])) for t in titles if t in paragraphs]},
        )


def open_qa(path: Path, dataset: str) -> Iterator[Example]:
    """NQ-open / TriviaQA JSONL: a question and answer aliases, no context."""
    with _require(Path(path)).open(encoding="utf-8") as fh:
        for number, line in enumerate(fh):
            if line.strip():
                item = json.loads(line)
                yield Example(id=f"{dataset}-{number}", question=item["question"],
                              answers=tuple(item["answer"]), dataset=dataset)


SPLIT_FILES: dict[tuple[str, str], str] = {
    ("squad", "train"): "squad_v2/train.json",
    ("squad", "dev"): "squad_v2/dev.json",
    ("hotpotqa", "train"): "hotpotqa/ircot_train.jsonl",
    ("hotpotqa", "dev"): "hotpotqa/ircot_dev.jsonl",
    ("hotpotqa-official", "dev"): "hotpotqa/distractor_dev_official100.json",
    ("nq", "train"): "nq_open/train.jsonl",
    ("nq", "dev"): "nq_open/dev.jsonl",
    ("triviaqa", "train"): "triviaqa/train.jsonl",
}
"""Each dataset split's file, relative to the data folder."""

_LOADERS = {
    "squad": squad,
    "hotpotqa": hotpotqa_ircot,
    "hotpotqa-official": hotpotqa_official,
    "nq": lambda path: open_qa(path, "nq"),
    "triviaqa": lambda path: open_qa(path, "triviaqa"),
}


def split_file(dataset: str, split: str, root: str | os.PathLike | None = None) -> Path:
    """The file of a dataset split, or a :class:`DatasetError` listing the valid splits."""
    if (dataset, split) not in SPLIT_FILES:
        valid = ", ".join(f"{d}/{s}" for d, s in SPLIT_FILES)
        raise DatasetError(f"unknown dataset split {dataset}/{split}; valid: {valid}")
    return data_dir(root) / SPLIT_FILES[(dataset, split)]


def load(dataset: str, split: str, root: str | os.PathLike | None = None) -> Iterator[Example]:
    """Examples of a dataset split: ``squad`` train/dev, ``hotpotqa`` train/dev (IRCoT),
    ``hotpotqa-official`` dev, ``nq`` train/dev, ``triviaqa`` train."""
    return _LOADERS[dataset](split_file(dataset, split, root))
