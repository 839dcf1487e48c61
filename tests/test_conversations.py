"""Conversations that survive a restart: the SQLite store by default for the server; deleting a
conversation deletes its rows."""

from __future__ import annotations

import sqlite3

import httpx
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from app.conversations import open_store
from app.service import RAGService
from pipeline.configuration import ConfigurationError
from servers import start_server, wait_healthy


def rows_for(path, thread_id: str) -> int:
    with sqlite3.connect(path) as conn:
        return sum(conn.execute(f"SELECT count(*) FROM {table} WHERE thread_id = ?", (thread_id,)).fetchone()[0]
                   for table in ("checkpoints", "writes"))


class TestOpenStore:
    def test_kinds(self, tmp_path, monkeypatch):
        monkeypatch.setenv("ADAPTIVE_RAG_CACHE", str(tmp_path / "cache"))
        assert isinstance(open_store("memory"), InMemorySaver)
        open_store("sqlite")
        assert (tmp_path / "cache" / "conversations.sqlite").is_file()
        open_store(str(tmp_path / "elsewhere" / "chats.db"))
        assert (tmp_path / "elsewhere" / "chats.db").is_file()

    @pytest.mark.parametrize("spec", ["redis://x", "chats.txt", "postgres"])
    def test_unknown(self, spec):
        with pytest.raises(ConfigurationError, match="valid: sqlite"):
            open_store(spec)

    def test_unopenable(self, tmp_path):
        (tmp_path / "file").write_text("x")
        with pytest.raises(ConfigurationError, match="cannot be opened"):
            open_store(str(tmp_path / "file" / "chats.sqlite"))


class TestSqliteConversations:
    def test_survive_a_new_service_and_delete_erases(self, ctx, tmp_path):
        path = tmp_path / "chats.sqlite"
        first = RAGService.from_context(ctx, "smollm2-135m", checkpointer=open_store(str(path)))
        first.ask("Who was Isaac Newton?", session_id="s1", tier="easy")
        first.ask("What is the Moon?", session_id="s2", tier="easy")
        restarted = RAGService.from_context(ctx, "smollm2-135m", checkpointer=open_store(str(path)))
        assert [t["question"] for t in restarted.history("s1")] == ["Who was Isaac Newton?"]
        assert rows_for(path, "s1") > 0
        restarted.reset_session("s1")
        assert restarted.history("s1") == [] and rows_for(path, "s1") == 0
        assert len(restarted.history("s2")) == 1


def test_a_server_restart_keeps_the_conversation(index_dir, tmp_path_factory):
    """The real server, stopped and started again on the same store, still has the session, and a
    follow-up after the restart uses it."""
    work = tmp_path_factory.mktemp("restart")
    store = str(work / "chats.sqlite")
    proc, url = start_server(index_dir, work, "--conversations", store)
    try:
        wait_healthy(url)
        asked = httpx.post(f"{url}/ask", timeout=120,
                           json={"question": "Who was Isaac Newton?", "session_id": "kept", "tier": "easy"})
        assert asked.status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    proc, url = start_server(index_dir, work, "--conversations", store, log="server2.log")
    try:
        wait_healthy(url)
        turns = httpx.get(f"{url}/session/kept", timeout=30).json()["turns"]
        assert [t["question"] for t in turns] == ["Who was Isaac Newton?"]
        follow = httpx.post(f"{url}/ask", timeout=120,
                            json={"question": "When was he born?", "session_id": "kept", "tier": "easy"}).json()
        assert follow["rewritten_question"]  # the follow-up used the history from before the restart
    finally:
        proc.terminate()
        proc.wait(timeout=30)
