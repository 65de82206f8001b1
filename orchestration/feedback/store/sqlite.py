"""The embedded engine: one SQLite file per feedback folder (``feedback.sqlite3``), in WAL mode.

Writers take the database's write lock when they begin (``BEGIN IMMEDIATE``), so a
read-modify-write never races another process; readers never wait for writers (WAL).
``synchronous=NORMAL``: a committed transaction survives the process being killed;
a power cut may lose the last ones. Connections come from a `pool.Pool` shared by
every thread and stay open between transactions: closing the last connection
checkpoints the WAL with an fsync, which a connection per transaction would pay on
every write. The file is 0600
in a 0700 folder, as the stores it replaced were (it holds answers, which may
quote restricted text).
"""
from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any, Callable, TypeVar

from lambdarag.errors import StoreUnavailable
from lambdarag.skills.store.files import private_dir

from .pool import Pool

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
    catalog = "SELECT name FROM sqlite_master"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.pool = Pool(self.connect)
        self.setups = 0

    def describe(self) -> str:
        return f"sqlite:{self.path}"

    def connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(self.path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as e:
            raise StoreUnavailable(f"feedback store {self.path}: {e}") from None
        return conn

    def transact(self, fn: Callable[[Any], T], write: bool) -> T:
        outer = self.pool.held(write)
        if outer is not None:
            return fn(outer.cursor())
        conn = self.pool.take()
        try:
            with self.pool.holding(conn, write):
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    out = fn(conn.cursor())
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
                return out
        finally:
            self.pool.give(conn, not conn.in_transaction)

    def setup(self, fn: Callable[[Any], T]) -> T:
        """Returns `fn(cursor)` run once the file exists (0600, WAL mode), in a write transaction."""
        self.setups += 1
        if not self.path.exists():
            self.forget()
        private_dir(self.path.parent)
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        os.chmod(self.path, 0o600)
        conn = self.pool.take()
        try:
            self.wal(conn)
        finally:
            self.pool.give(conn, True)
        return self.transact(fn, write=True)

    def wal(self, conn: sqlite3.Connection) -> None:
        """Switches a new file to WAL. The switch needs the file to itself and SQLite answers "locked" at once,
        without waiting, while another process writes to it in rollback mode (two processes opening a new
        store together), so it is tried again until `BUSY_SECONDS` have passed."""
        deadline = time.monotonic() + BUSY_SECONDS
        while True:
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) or time.monotonic() > deadline:
                    raise StoreUnavailable(f"feedback store {self.path}: journal_mode=WAL: {e}") from None
                time.sleep(0.01)

    def forget(self) -> None:
        """Closes every connection of this process to the file (one lent to another thread's transaction when
        it is given back): it was deleted, and SQLite would take a new file that reuses its inode number for
        the deleted one still open (their locks and shared memory mixed)."""
        self.pool.retire()

    def exists(self) -> bool:
        return self.path.exists()
