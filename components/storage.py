"""Atomic file writes: write to a temporary file in the same folder, fsync, then rename."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; on success it replaces ``target`` in one rename.

    If the body raises (or the process dies), ``target`` is untouched and the temporary file is
    removed (or left as an ignorable ``.tmp`` file).
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp_path, 0o666 & ~umask)  # mkstemp's 0600 would make shared indexes unreadable to others
    try:
        yield tmp_path
        with open(tmp_path, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp_path, target)
    finally:
        tmp_path.unlink(missing_ok=True)


def atomic_write_text(target: Path, text: str) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def model_digest(data: Any, *blobs: bytes) -> str:
    """A short digest of a fitted model: its JSON-able parts (keys sorted) and any raw arrays' bytes. What
    an answer the model decided depends on, so that a cached answer is not served under a refit one."""
    digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode("utf-8"))
    for blob in blobs:
        digest.update(blob)
    return digest.hexdigest()[:16]


def file_fingerprint(path: Path) -> str:
    """A short digest of a file's (or a folder's files') size and modification time: cheap to take
    on a gigabyte of weights, and different for another file put at the same path (the check make
    and rsync rely on). Not a content hash: the same bytes copied anew get another fingerprint."""
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    stats = [(str(p.relative_to(path)) if p != path else "", p.stat()) for p in files]
    return model_digest([[name, stat.st_size, stat.st_mtime_ns] for name, stat in stats])


def sha256_file(path: Path, chunk_size: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()
