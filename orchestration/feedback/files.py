"""The learning stores: JSON documents and JSONL logs that several processes may write at once.

Every write happens under a `filelock` lock next to the file (``<name>.lock``).
A JSON document is replaced whole by write-rename (`skills.store.files.write_replace`:
temp file in the same folder, fsync, ``os.replace``), so a crash mid-write
leaves the previous version. A JSONL line is appended with one ``write`` of
the complete line under the lock (after a newline if a crash left a fragment);
a reader skips and counts lines that are not a JSON record instead of failing.
Files are created 0600 in 0700 folders: the log and stores hold answers, which may quote restricted text.
"""
from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any, Callable, Iterator, Union

from filelock import FileLock

from lambdarag.errors import StoreCorrupt
from skills.store.files import private_dir, write_replace

LOCK_TIMEOUT = 60.0


def now() -> str:
    """Returns the current UTC time as the stores record it (ISO 8601, milliseconds)."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def lock_for(path: Path) -> FileLock:
    """Returns the inter-process lock guarding `path`."""
    return FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT)


class JsonStore:
    """A JSON object on disk, read whole and updated whole under a lock."""

    def __init__(self, path: Union[str, Path]) -> None:
        self.path = Path(path)

    def read(self) -> dict[str, Any]:
        """Returns the stored object ({} when the file does not exist); a damaged file raises `StoreCorrupt`."""
        if not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise StoreCorrupt(f"{self.path}: not valid JSON ({e}); the file was left unchanged") from None
        if not isinstance(data, dict):
            raise StoreCorrupt(f"{self.path}: expected a JSON object, got {type(data).__name__}")
        return data

    def update(self, change: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
        """Returns the new object after `change` mutated the current one in place, written atomically under the lock.

        Temp files of this store that a killed writer left are removed first (only lock holders write them).
        """
        private_dir(self.path.parent)
        with lock_for(self.path):
            for orphan in self.path.parent.glob(f".{self.path.name}.*.tmp"):   # left by a writer killed mid-write
                orphan.unlink(missing_ok=True)
            data = self.read()
            change(data)
            write_replace(self.path, (json.dumps(data, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))
        return data


class JsonlLog:
    """An append-only file of JSON records, one per line; `torn` counts the damaged lines the last read skipped."""

    def __init__(self, path: Union[str, Path]) -> None:
        self.path = Path(path)
        self.torn = 0

    def append(self, record: dict[str, Any]) -> None:
        """Appends `record` as one whole line: one ``O_APPEND`` write under the lock, fsynced.

        When a killed writer left a fragment without its newline, the write
        starts with a newline, so the record is never glued to the fragment.
        """
        line = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        private_dir(self.path.parent)
        with lock_for(self.path):
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.fchmod(fd, 0o600)          # a log an older version created world-readable is narrowed too
                end = os.lseek(fd, 0, os.SEEK_END)
                if end and os.pread(fd, 1, end - 1) != b"\n":
                    line = b"\n" + line
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Yields the complete records in order, skipping and counting (in `torn`) lines that are not one."""
        self.torn = 0
        if not self.path.exists():
            return
        for line in self.path.read_bytes().split(b"\n"):
            if not line.strip():
                continue
            try:
                record = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                record = None
            if isinstance(record, dict):
                yield record
            else:
                self.torn += 1

    def records(self) -> list[dict[str, Any]]:
        return list(self)
