"""The shared engine: PostgreSQL through `psycopg` 3, for several processes or machines on one knowledge base.

Connections come from a `pool.Pool` shared by every thread (a dropped link is
discarded and the transaction run again on another). A
transaction runs at READ COMMITTED; rows a read-modify-write changes are locked
with ``SELECT … FOR UPDATE`` and tallies are single-statement upserts, so no
update is lost. A transaction PostgreSQL aborts as a deadlock or serialisation
failure is run again, whole (`RETRIES` times). Creating the schema and the
one-time import hold a transaction-level advisory lock, so two servers starting
at once do not race.
"""
from __future__ import annotations

import zlib
from typing import Any, Callable, TypeVar

from lambdarag.errors import StoreUnavailable

from .pool import Pool

T = TypeVar("T")
RETRIES = 5


def import_psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise StoreUnavailable("feedback.store kind postgres needs psycopg 3: pip install 'lambdarag[postgres]'") \
            from None
    return psycopg


class PostgresEngine:
    """PostgreSQL at `dsn` (see the module docstring)."""

    name = "postgres"
    serial = "BIGSERIAL PRIMARY KEY"
    blob = "BYTEA"
    lock_rows = " FOR UPDATE"
    placeholder = "%s"
    catalog = "SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace"

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.psycopg = import_psycopg()
        self.pool = Pool(self.connect)
        self.setups = 0

    def describe(self) -> str:
        return "postgres"          # never the DSN: it may hold a password

    def connect(self) -> Any:
        try:
            return self.psycopg.connect(self.dsn, autocommit=True)
        except self.psycopg.Error as e:
            raise StoreUnavailable(f"feedback store postgres: cannot connect ({str(e).strip()})") from None

    def transact(self, fn: Callable[[Any], T], write: bool) -> T:
        outer = self.pool.held(write)
        if outer is not None:
            with outer.cursor() as cursor:
                return fn(cursor)
        errors = self.psycopg.errors
        for attempt in range(RETRIES):
            conn = self.pool.take()
            try:
                with self.pool.holding(conn, write), conn.transaction(), conn.cursor() as cursor:
                    return fn(cursor)
            except (errors.DeadlockDetected, errors.SerializationFailure):
                if attempt == RETRIES - 1:
                    raise
            except self.psycopg.OperationalError as e:
                if not conn.closed or attempt == RETRIES - 1:
                    raise StoreUnavailable(f"feedback store postgres: {str(e).strip()}") from None
                self.pool.retire()           # the server went away: the idle links are gone too
            finally:
                idle = self.psycopg.pq.TransactionStatus.IDLE
                self.pool.give(conn, not conn.closed and conn.info.transaction_status == idle)
        raise AssertionError("unreachable")

    def setup(self, fn: Callable[[Any], T]) -> T:
        self.setups += 1

        def locked(cursor: Any) -> T:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", (zlib.crc32(b"lambdarag feedback store"),))
            return fn(cursor)
        return self.transact(locked, write=True)

    def exists(self) -> bool:
        return True
