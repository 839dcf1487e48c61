"""Where conversations are kept: a LangGraph checkpointer chosen by one setting.

    sqlite (default for ``adaptive-rag serve``)  a SQLite file in the cache folder
    PATH.sqlite / PATH.db                       a SQLite file there
    postgresql://USER:PASSWORD@HOST/DB          a PostgreSQL database, for several server processes
                                                (``pip install -e ".[postgres]"``)
    memory                                      in process memory (forgotten on restart)

Conversations survive a server restart in SQLite and PostgreSQL. The state is plain JSON data and the serializer
never falls back to pickle. Deleting a conversation (``DELETE /session/{id}``, clearing the chat)
deletes its rows from the store.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from components.model_files import cache_dir
from pipeline.configuration import ConfigurationError

DEFAULT_STORE = "sqlite"
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
POSTGRES_POOL_SIZE = 8


def default_sqlite_path() -> Path:
    return cache_dir() / "conversations.sqlite"


def open_store(spec: str | None = DEFAULT_STORE) -> BaseCheckpointSaver:
    """The checkpointer a ``--conversations`` value names (see the module's docstring)."""
    spec = (spec or DEFAULT_STORE).strip()
    if spec == "memory":
        return InMemorySaver(serde=JsonPlusSerializer(pickle_fallback=False))
    if spec.startswith(POSTGRES_SCHEMES):
        return _postgres(spec)
    if spec == "sqlite":
        path = default_sqlite_path()
    elif Path(spec).suffix.lower() in SQLITE_SUFFIXES:
        path = Path(spec).expanduser()
    else:
        raise ConfigurationError(f"unknown conversation store {spec!r}; valid: sqlite (a file in the cache folder), "
                                 f"a path ending in {', '.join(SQLITE_SUFFIXES)}, a postgresql:// connection string, "
                                 "or memory")
    from langgraph.checkpoint.sqlite import SqliteSaver

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, check_same_thread=False)  # the saver serialises access with its own lock
        conn.execute("PRAGMA journal_mode=WAL")  # a crash mid-write leaves the store readable
        saver = SqliteSaver(conn, serde=JsonPlusSerializer(pickle_fallback=False))
        saver.setup()
    except (OSError, sqlite3.Error) as exc:
        raise ConfigurationError(f"conversation store {path} cannot be opened: {exc}") from exc
    return saver


def _postgres(conninfo: str) -> BaseCheckpointSaver:
    """A PostgreSQL checkpointer over a small connection pool (the saver's own tables are created
    on first use). The error never repeats the connection string: it may hold a password."""
    try:
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg import OperationalError
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool, PoolTimeout
    except ImportError as exc:
        raise ConfigurationError('a PostgreSQL conversation store needs: pip install -e ".[postgres]"') from exc
    pool = ConnectionPool(conninfo, min_size=1, max_size=POSTGRES_POOL_SIZE, open=False,
                          kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row})
    try:
        pool.open(wait=True, timeout=10)
        saver = PostgresSaver(pool, serde=JsonPlusSerializer(pickle_fallback=False))  # type: ignore[arg-type]
        saver.setup()
    except (OperationalError, PoolTimeout) as exc:
        pool.close()
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigurationError(f"PostgreSQL conversation store cannot be opened: {reason}") from exc
    return saver
