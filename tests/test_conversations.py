"""Conversations that survive a restart: the SQLite store by default for the server; deleting a
conversation deletes its rows. The real server process restarted on its store, asked through the
chat and the HTTP API, is test_browser's test_a_server_restart_keeps_the_conversation."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from app.conversations import open_store
from app.service import RAGService
from pipeline.configuration import ConfigurationError
from servers import free_port


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


@pytest.fixture(scope="module")
def postgres(tmp_path_factory):
    """A throwaway PostgreSQL server (the local binaries, a cluster in a temporary folder, a free
    port), as the ``postgres`` user when the tests run as root (PostgreSQL refuses root)."""
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if not (initdb and pg_ctl):
        pytest.skip("PostgreSQL is not installed (Debian package 'postgresql'): the PostgreSQL store is not tested")
    run_as: list[str] = []
    if os.geteuid() == 0:
        if not shutil.which("runuser"):
            pytest.skip("running as root without runuser: cannot start PostgreSQL as another user")
        run_as = ["runuser", "-u", "postgres", "--"]
    folder = tmp_path_factory.mktemp("postgres")
    data = folder / "data"
    if run_as:
        os.chmod(folder, 0o777)
        for parent in folder.parents:  # pytest's temporary folders are private to root: let postgres through
            if str(parent).startswith(str(tmp_path_factory.getbasetemp().parent)):
                os.chmod(parent, os.stat(parent).st_mode | 0o711)
    port = free_port()
    try:
        subprocess.run([*run_as, initdb, "-D", str(data), "-A", "trust", "-U", "rag"], check=True, capture_output=True)
        subprocess.run([*run_as, pg_ctl, "-D", str(data), "-w", "-l", str(folder / "log"), "-o",
                        f"-p {port} -k {folder} -c listen_addresses=127.0.0.1", "start"], check=True, capture_output=True)
    except (subprocess.CalledProcessError, OSError) as exc:
        pytest.skip(f"could not start a PostgreSQL server here: {getattr(exc, 'stderr', b'')!r:.300}")
    yield f"postgresql://rag@127.0.0.1:{port}/postgres"
    subprocess.run([*run_as, pg_ctl, "-D", str(data), "-m", "immediate", "stop"], capture_output=True)


class TestPostgresConversations:
    def test_survive_a_new_service_and_delete_erases(self, ctx, postgres):
        first = RAGService.from_context(ctx, "smollm2-135m", checkpointer=open_store(postgres))
        first.ask("Who was Isaac Newton?", session_id="p1", tier="easy")
        first.ask("What is the Moon?", session_id="p2", tier="easy")
        restarted = RAGService.from_context(ctx, "smollm2-135m", checkpointer=open_store(postgres))
        assert [t["question"] for t in restarted.history("p1")] == ["Who was Isaac Newton?"]
        restarted.reset_session("p1")
        assert restarted.history("p1") == [] and len(restarted.history("p2")) == 1
        assert first.history("p1") == []  # another process (here: service) sees the deletion

    def test_unreachable_server_is_a_clear_error_without_the_password(self):
        with pytest.raises(ConfigurationError, match="PostgreSQL conversation store cannot be opened") as error:
            open_store(f"postgresql://rag:s3cret@127.0.0.1:{free_port()}/x?connect_timeout=2")
        assert "s3cret" not in str(error.value)
