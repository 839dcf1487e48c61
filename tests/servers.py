"""The real server for HTTP-level tests (SmolLM2, a copy of the test index, a private cache and
Gradio folder): as its own process (``adaptive-rag serve``), or the same command line's service and
app in this process (no second start of the libraries: seconds less a server)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(index_dir: Path, work: Path, *extra: str, log: str = "server.log",
                 port: int | None = None, wait: bool = True) -> tuple[subprocess.Popen, str]:
    """Start ``adaptive-rag serve`` in ``work`` (the index is copied there once) and wait until it
    answers HTTP; the caller waits for /health to say "ok" (it may need a login). ``port``: the
    same one again, for a restart a browser must not notice (its storage is per origin).
    ``wait=False`` returns at once, the server's output a text pipe (``proc.stdout``) instead of ``log``."""
    port = port or free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", *serve_argv(index_dir, work, port, extra)],
        cwd=ROOT, stdout=(work / log).open("w") if wait else subprocess.PIPE, stderr=subprocess.STDOUT,
        env={**{k: v for k, v in os.environ.items() if k != "ADAPTIVE_RAG_AUTH"}, **server_env(work)},
        text=not wait)
    url = f"http://127.0.0.1:{port}"
    if not wait:
        return proc, url
    deadline = time.time() + 180
    while time.time() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"server exited: {(work / log).read_text()}")
        try:
            httpx.get(f"{url}/health", timeout=2)
            return proc, url
        except httpx.HTTPError:
            time.sleep(0.5)
    proc.kill()
    pytest.fail("server did not start in 180 s")


def server_env(work: Path) -> dict[str, str]:
    return {"ADAPTIVE_RAG_CACHE": str(work / "cache"), "GRADIO_TEMP_DIR": str(work / "gradio")}


def serve_argv(index_dir: Path, work: Path, port: int, extra: tuple[str, ...]) -> list[str]:
    """``serve``'s command line on a copy of the test index in ``work`` (made once)."""
    if not (work / "index").exists():
        shutil.copytree(index_dir, work / "index")
    return ["serve", "--port", str(port), "--index", str(work / "index"), "--model", "smollm2-135m", "--tier", "easy",
            # each test answers afresh (a repeated question would otherwise be served from the cache)
            *(() if "--query-cache" in extra else ("--query-cache", "off")), *extra]


@contextmanager
def serve_in_process(index_dir: Path, work: Path, *extra: str) -> Iterator[str]:
    """What ``start_server`` starts, in this process: the service ``adaptive-rag serve`` builds for the same
    command line, loaded, behind the same app on a thread; yields its URL once it takes connections. Its
    cache folder is ``work``'s while it serves; its uploads land in this process's Gradio folder (Gradio reads
    GRADIO_TEMP_DIR once, on import), where the service does not look for them: a test that uploads through
    the chat uses ``start_server``."""
    from app.cli import build_parser, serve_service
    from app.security import parse_users
    from app.server import create_app

    port = free_port()
    args = build_parser().parse_args(serve_argv(index_dir, work, port, extra))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ADAPTIVE_RAG_CACHE", server_env(work)["ADAPTIVE_RAG_CACHE"])
        patch.delenv("ADAPTIVE_RAG_AUTH", raising=False)  # as start_server's process: logins only from extra
        service = serve_service(args)
        service.warm_up()
        with serve_app(create_app(service, users=parse_users(args.auth), body_timeout_s=args.body_timeout),
                       port) as url:
            yield url


@contextmanager
def serve_app(app, port: int | None = None) -> Iterator[str]:
    """``app`` served by uvicorn on a thread of this process; yields its URL once it takes connections,
    and stops it after."""
    import uvicorn

    port = port or free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.time() + 60
        while not server.started and time.time() < deadline:
            time.sleep(0.1)
        assert server.started, "the server did not start in 60 s"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def wait_healthy(url: str, auth=None) -> dict:
    deadline = time.time() + 180
    while time.time() < deadline:
        body = httpx.get(f"{url}/health", auth=auth, timeout=5).json()
        if body.get("status") == "ok":
            return body
        time.sleep(0.5)
    pytest.fail("server not healthy")
