"""The Gradio chat in a real headless Chromium (Debian's package, driven by Playwright): a question
with streamed text, tier and sources; a follow-up; an upload, then a question about it."""

from __future__ import annotations

import shutil
import time

import httpx
import pytest
from servers import free_port, start_server, wait_healthy

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium not installed (Debian package 'chromium'; `make test` installs it as root)")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def server(index_dir, tmp_path_factory):
    """The real server process on a copy of the test index, with SmolLM2 for speed."""
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
    """A fresh page: a new browser session, so a new conversation."""
    url, _ = server
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(url)
    page.wait_for_selector("#question textarea", timeout=60_000)
    yield page
    page.close()


def ask(page, question: str) -> None:
    box = page.locator("#question textarea")
    box.fill(question)
    box.press("Enter")


def wait_for_text(page, selector: str, needle: str, timeout: float = 120) -> str:
    deadline = time.time() + timeout
    while time.time() < deadline:
        text = page.locator(selector).inner_text()
        if needle in text:
            return text
        time.sleep(0.1)
    raise AssertionError(f"{needle!r} did not appear in {selector}: {page.locator(selector).inner_text()[-1500:]}")


def test_question_streams_and_shows_tier_and_sources(page, server):
    ask(page, "Who directed 2001: A Space Odyssey?")
    # Streaming: the bot message grows over several observations before the cost line appears.
    lengths = []
    deadline = time.time() + 120
    while time.time() < deadline:
        text = page.locator("#chatbot").inner_text()
        if "prompt +" in text:
            break
        lengths.append(len(text))
        time.sleep(0.02)
    assert len(set(lengths)) >= 3, f"no streamed growth observed: {lengths[-10:]}"
    text = wait_for_text(page, "#chatbot", "output tokens")
    assert "tier easy" in text
    assert "score" in text and "[1]" in text  # an expandable cited passage
    page.get_by_text("2001: A Space Odyssey · score", exact=False).first.click()
    wait_for_text(page, "#chatbot", "en.wikipedia.org/wiki/2001")
    _, work = server
    page.screenshot(path=str(work / "answer.png"), full_page=True)


def test_follow_up_is_rewritten(page):
    ask(page, "Who developed the theory of relativity?")
    wait_for_text(page, "#chatbot", "output tokens")
    before = page.locator("#chatbot").inner_text().count("output tokens")
    ask(page, "When was he born?")
    deadline = time.time() + 120
    while page.locator("#chatbot").inner_text().count("output tokens") <= before and time.time() < deadline:
        time.sleep(0.2)
    assert "follow-up read as" in page.locator("#chatbot").inner_text()


def test_upload_then_ask(page, server, tmp_path):
    doc = tmp_path / "zorblax_engine.md"
    doc.write_text("# Zorblax engine\n\nThe Zorblax engine was invented by Tilda Quenby in 1931 in Lisbon.")
    bad = tmp_path / "notes.pdf"
    bad.write_bytes(b"this is not a pdf")
    page.locator("input[type=file]").set_input_files([str(doc), str(bad)])
    page.get_by_role("button", name="Add to knowledge base").click()
    summary = wait_for_text(page, "#upload-summary", "Added")
    assert "Added 1 passages" in summary and "skipped" in summary and "notes.pdf" in summary
    page.get_by_label("Show trace").check()
    ask(page, "Who invented the Zorblax engine?")
    wait_for_text(page, "#chatbot", "output tokens")
    page.get_by_text("Trace", exact=True).last.click()
    wait_for_text(page, "#chatbot", "Zorblax engine: The Zorblax engine was invented by Tilda Quenby in 1931 in Lisbon")


def test_one_login_serves_the_chat_and_its_api(browser, index_dir, tmp_path_factory):
    """With --auth the browser's one HTTP Basic login carries the page, its assets, its event
    stream and the answer; without it the page is refused."""
    work = tmp_path_factory.mktemp("auth-browser")
    proc, url = start_server(index_dir, work, "--auth", "alice:wonder-land")
    try:
        wait_healthy(url, auth=("alice", "wonder-land"))
        assert httpx.get(url, timeout=10).status_code == 401  # a browser without the login gets the challenge
        context = browser.new_context(http_credentials={"username": "alice", "password": "wonder-land"},
                                      viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector("#question textarea", timeout=60_000)
        ask(page, "Who directed 2001: A Space Odyssey?")
        assert "tier easy" in wait_for_text(page, "#chatbot", "output tokens")
        context.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


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


def test_an_unsure_answer_escalates_visibly(browser, index_dir, tmp_path_factory):
    """With the cascade on and nothing confident enough, the chat replaces the first answer with the
    one from more evidence and its cost line says which tiers answered."""
    work = tmp_path_factory.mktemp("cascade-browser")
    proc, url = start_server(index_dir, work, "--policy", "cascade", "--accept-threshold", "1e9")
    try:
        wait_healthy(url)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector("#question textarea", timeout=60_000)
        ask(page, "Who discovered radium?")
        text = wait_for_text(page, "#chatbot", "output tokens")
        assert "tier medium → hard (1 escalation)" in text and "prompt tokens evaluated" in text
        page.screenshot(path=str(work / "escalated.png"), full_page=True)
        context.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
