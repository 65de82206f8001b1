"""The embedded engine: one SQLite file per feedback folder (``feedback.sqlite3``), in WAL mode.

Writers take the database's write lock when they begin (``BEGIN IMMEDIATE``), so a
read-modify-write never races another process; readers never wait for writers (WAL).
``synchronous=NORMAL``: a committed transaction survives the process being killed;
a power cut may lose the last ones. Each thread keeps one connection (reopened
after a fork): closing the last connection checkpoints the WAL with an fsync,
which a connection per transaction would pay on every write. The file is 0600
in a 0700 folder, as the stores it replaced were (it holds answers, which may
quote restricted text).
"""
from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, Callable, TypeVar

from lambdarag.errors import StoreUnavailable
from skills.store.files import private_dir

T = TypeVar("T")
FILE = "feedback.sqlite3"
BUSY_SECONDS = 60.0


class SqliteEngine:
    """SQLite in one file (see the module docstring)."""

    name = "sqlite"
    serial = "INTEGER PRIMARY KEY AUTOINCREMENT"
    blob = "BLOB"
    lock_rows = ""            # BEGIN IMMEDIATE already holds the whole database for the writer
    placeholder = "?"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.local = threading.local()
        self.opened: list[sqlite3.Connection] = []
        self.lock = threading.Lock()
        self.epoch = 0

    def describe(self) -> str:
        return f"sqlite:{self.path}"

    def connection(self) -> sqlite3.Connection:
        conn = getattr(self.local, "conn", None)
        if conn is None or self.local.pid != os.getpid() or self.local.epoch != self.epoch:
            try:
                conn = sqlite3.connect(self.path, timeout=BUSY_SECONDS, isolation_level=None,
                                       check_same_thread=False)
                conn.execute("PRAGMA synchronous=NORMAL")
            except sqlite3.Error as e:
                raise StoreUnavailable(f"feedback store {self.path}: {e}") from None
            with self.lock:
                self.opened.append(conn)
            self.local.conn, self.local.pid, self.local.epoch = conn, os.getpid(), self.epoch
        return conn

    def transact(self, fn: Callable[[Any], T], write: bool) -> T:
        conn = self.connection()
        conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            out = fn(conn.cursor())
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return out

    def setup(self, fn: Callable[[Any], T]) -> T:
        """Returns `fn(cursor)` run once the file exists (0600, WAL mode), in a write transaction."""
        if not self.path.exists():
            self.forget()
        private_dir(self.path.parent)
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        os.chmod(self.path, 0o600)
        self.connection().execute("PRAGMA journal_mode=WAL")
        return self.transact(fn, write=True)

    def forget(self) -> None:
        """Closes every connection of this process to the file: it was deleted, and SQLite would take a new file
        that reuses its inode number for the deleted one still open (their locks and shared memory mixed)."""
        with self.lock:
            busy = [c for c in self.opened if c.in_transaction]     # another thread's: it fails on its own
            for conn in self.opened:
                if conn not in busy:
                    conn.close()
            self.opened, self.epoch = busy, self.epoch + 1

    def exists(self) -> bool:
        return self.path.exists()
