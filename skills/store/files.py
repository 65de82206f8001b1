"""Crash-safe file writes: a whole new file by write-rename, never a half-written one in place.

`write_replace` writes a temp file in the same directory, fsyncs it, renames
it over the target with `os.replace` and fsyncs the directory, so a reader
sees the old file or the new one. Temp files are named ``.<name>.*.tmp``;
`clean_temp` removes those a killed writer left behind.
"""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path


def write_atomic(path: Path, data: bytes) -> None:
    """Writes `data` to `path` atomically, keeping the previous file as ``<name>.bak``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        write_replace(path.with_name(path.name + ".bak"), path.read_bytes())
    write_replace(path, data)


def write_replace(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dirfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dirfd)
    finally:
        os.close(dirfd)


def write_text(path: Path, text: str) -> None:
    """Writes `text` (UTF-8) to `path` by write-rename, creating the directory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_replace(path, text.encode("utf-8"))


ORPHAN_AGE = 60.0
"""Seconds after which a temp file has no live writer: `write_replace` renames its file within a second."""


def clean_temp(directory: Path, older_than: float = 0.0) -> list[Path]:
    """Returns the temp files (``.<name>.*.tmp``) removed from `directory`: hold the directory's lock, or pass
    `older_than` (e.g. `ORPHAN_AGE`) where writers take no common lock, so only a killed writer's files go."""
    cutoff = time.time() - older_than
    gone = [p for p in directory.glob(".*.tmp") if p.is_file() and not p.is_symlink()
            and (not older_than or p.stat().st_mtime < cutoff)]
    for path in gone:
        path.unlink(missing_ok=True)
    return gone
