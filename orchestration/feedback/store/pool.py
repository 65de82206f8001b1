"""The connections of one database engine, lent to one transaction at a time by any thread of the process.

`search()` runs each question in a thread of its own (`lambdarag.stream.Stream`),
so a connection per thread meant a new connection for every question (a
PostgreSQL backend started and authenticated each time) and, for SQLite, one more
file handle that was never closed. The pool keeps up to `IDLE` connections between
transactions; a transaction that finds none idle opens one, and one given back
beyond `IDLE` is closed, so the pool never holds more connections than
transactions ran at once. A forked child starts with an empty pool (a connection
is never shared across processes). A transaction begun on a thread that already
holds one joins it (`held`): a read inside a read or a write, or a write inside a
write, runs on the outer transaction's connection instead of waiting for a second
one — on SQLite a second connection's write would wait on the first's lock.
"""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional

IDLE = 8
"""Connections a pool keeps open between transactions."""


class Pool:
    """DB-API connections made by `connect`. `connects` counts those this process opened and
    `transactions` the times one was lent (a joined transaction is not lent), so tests can assert what a run
    costs the database."""

    def __init__(self, connect: Callable[[], Any], idle: int = IDLE) -> None:
        self.connect, self.most = connect, idle
        self.lock = threading.Lock()
        self.idle: list[Any] = []
        self.generation, self.born = 0, {}
        self.pid = os.getpid()
        self.local = threading.local()
        self.connects = self.transactions = 0

    def take(self) -> Any:
        """Returns an idle connection, else a new one."""
        with self.lock:
            if self.pid != os.getpid():
                self.idle, self.born, self.pid = [], {}, os.getpid()
            self.transactions += 1
            if self.idle:
                conn = self.idle.pop()
                self.born[id(conn)] = self.generation
                return conn
        conn = self.connect()                  # outside the lock: a slow connect does not hold up the others
        with self.lock:
            self.connects += 1
            self.born[id(conn)] = self.generation
        return conn

    def give(self, conn: Any, reusable: bool) -> None:
        """Takes `conn` back: kept idle if `reusable`, there is room and it was opened since the last `retire`,
        else closed."""
        with self.lock:
            current = self.born.pop(id(conn), None) == self.generation and self.pid == os.getpid()
            if reusable and current and len(self.idle) < self.most:
                self.idle.append(conn)
                return
        conn.close()

    def retire(self) -> None:
        """Closes the idle connections; those lent out now are closed when given back."""
        with self.lock:
            idle, self.idle = self.idle, []
            self.generation += 1
        for conn in idle:
            conn.close()

    def held(self, write: bool) -> Optional[Any]:
        """Returns the connection of the transaction this thread is running (None if it runs none); a write may
        not join a read."""
        outer = getattr(self.local, "outer", None)
        if outer is None:
            return None
        conn, writing = outer
        if write and not writing:
            raise RuntimeError("feedback store: a write inside a read transaction; begin the outer one as a write")
        return conn

    @contextmanager
    def holding(self, conn: Any, write: bool) -> Iterator[None]:
        """Marks `conn` as this thread's transaction while the block runs (what `held` returns)."""
        self.local.outer = (conn, write)
        try:
            yield
        finally:
            self.local.outer = None
