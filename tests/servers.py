"""Starting the real server process for HTTP-level tests (SmolLM2, a copy of the test index, a
private cache and Gradio folder)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
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
    if not (work / "index").exists():
        shutil.copytree(index_dir, work / "index")
    port = port or free_port()
    env = {**os.environ, "ADAPTIVE_RAG_CACHE": str(work / "cache"), "GRADIO_TEMP_DIR": str(work / "gradio")}
    env.pop("ADAPTIVE_RAG_AUTH", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port), "--index", str(work / "index"),
         "--model", "smollm2-135m", "--tier", "easy",
         # each test answers afresh (a repeated question would otherwise be served from the cache)
         *(() if "--query-cache" in extra else ("--query-cache", "off")), *extra],
        cwd=ROOT, stdout=(work / log).open("w") if wait else subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
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


def wait_healthy(url: str, auth=None) -> dict:
    deadline = time.time() + 180
    while time.time() < deadline:
        body = httpx.get(f"{url}/health", auth=auth, timeout=5).json()
        if body.get("status") == "ok":
            return body
        time.sleep(0.5)
    pytest.fail("server not healthy")
