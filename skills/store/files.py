"""Crash-safe file writes: a whole new file by write-rename, never a half-written one in place.

`write_replace` writes a temp file in the same directory, fsyncs it, renames
it over the target with `os.replace` and fsyncs the directory, so a reader
sees the old file or the new one. Temp files are named ``.<name>.*.tmp``;
`clean_temp` removes those a killed writer left behind.

What these files hold — chunks, answers, learned state, wiki pages — may be
restricted text, so every file written here is 0600 (`mkstemp`'s mode) and its
folder 0700 (`private_dir`).
"""
from __future__ import annotations

import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


def private_dir(directory: Path) -> Path:
    """Returns `directory` after creating it, and any missing parent, for its owner only (0700), or narrowing an
    existing one of ours to that."""
    directory = Path(directory)
    missing = []
    while not directory.exists() and directory != directory.parent:
        missing.append(directory)
        directory = directory.parent
    for d in reversed(missing):
        d.mkdir(mode=0o700, exist_ok=True)
    leaf = missing[0] if missing else directory
    info = leaf.stat()
    if info.st_mode & 0o077 and info.st_uid == os.getuid():
        os.chmod(leaf, info.st_mode & 0o700)
    return leaf


def write_atomic(path: Path, data: bytes) -> None:
    """Writes `data` to `path` atomically, keeping the previous file as ``<name>.bak``."""
    private_dir(path.parent)
    if path.exists():
        write_replace(path.with_name(path.name + ".bak"), path.read_bytes())
    write_replace(path, data)


def write_replace(path: Path, data: bytes) -> None:
    """Replaces `path` by a file holding `data` (0600, in a 0700 folder), by write-rename."""
    with replacing(path) as tmp:
        tmp.write_bytes(data)


@contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """Yields a new temp file (0600) beside `path`; what the block writes there replaces `path` by rename when it
    ends, and is removed if it fails (for writers that need a path, such as SQLite or faiss, not bytes)."""
    private_dir(path.parent)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    dirfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dirfd)
    finally:
        os.close(dirfd)


def write_text(path: Path, text: str) -> None:
    """Writes `text` (UTF-8) to `path` by write-rename, creating the directory."""
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
