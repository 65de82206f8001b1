"""The feedback store: the learned state of a knowledge base as rows of one database, changed in short transactions.

Data access is plain DB-API (PEP 249): stdlib `sqlite3` for the embedded
default, `psycopg` 3 for PostgreSQL. Not SQLAlchemy Core: the store is a dozen
tables and a few dozen statements that both engines take in the same SQL
(``INSERT … ON CONFLICT … DO UPDATE``, ``RETURNING``); what differs is a placeholder,
two type names and row locking, which an `Engine` holds in four attributes.
SQLAlchemy would add a dependency, a pool and a second query language to the
default install for no statement that needs them.

Every row carries ``ns``, the namespace of one feedback folder (`namespace`), so
one PostgreSQL database serves many knowledge bases. Tables:

- ``logs``: append-only records (query log, gaps, background jobs, refused facts),
  one row each, keyed by query id for lookups; nothing rewrites them;
- ``items``: documents with an id changed one at a time (confirmations, votes,
  write-back journal entries, classification rules), with a state
  (live/reverted, pending/applied) and an order (``pos``);
- ``counters``, ``routing``, ``synonyms``, ``observations``: tallies incremented in place;
- ``cache_entries``, ``cache_counts``: the query cache, bounded by its size;
- ``vectors``: one row (a float32 blob) per confirmed question's embedding;
- ``attempts``: vote attempts per source, for the rate limit;
- ``documents``: small whole documents (the fitted params, the import record).
"""
from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any, Callable, Iterator, Optional, Protocol, TypeVar

T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS logs (seq {serial}, ns TEXT NOT NULL, log TEXT NOT NULL, key TEXT,
    time TEXT NOT NULL, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS logs_key ON logs (ns, log, key);
CREATE INDEX IF NOT EXISTS logs_order ON logs (ns, log, seq);
CREATE TABLE IF NOT EXISTS items (ns TEXT NOT NULL, kind TEXT NOT NULL, id TEXT NOT NULL, pos BIGINT NOT NULL,
    state TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (ns, kind, id));
CREATE INDEX IF NOT EXISTS items_state ON items (ns, kind, state, pos);
CREATE INDEX IF NOT EXISTS items_order ON items (ns, kind, pos);
CREATE TABLE IF NOT EXISTS counters (ns TEXT NOT NULL, name TEXT NOT NULL, value BIGINT NOT NULL,
    PRIMARY KEY (ns, name));
CREATE TABLE IF NOT EXISTS routing (ns TEXT NOT NULL, query_type TEXT NOT NULL, strategy TEXT NOT NULL,
    total BIGINT NOT NULL, success BIGINT NOT NULL, latency_ms DOUBLE PRECISION NOT NULL,
    cost DOUBLE PRECISION NOT NULL, PRIMARY KEY (ns, query_type, strategy));
CREATE TABLE IF NOT EXISTS synonyms (ns TEXT NOT NULL, term TEXT NOT NULL, alt TEXT NOT NULL,
    count BIGINT NOT NULL, PRIMARY KEY (ns, term, alt));
CREATE TABLE IF NOT EXISTS observations (ns TEXT NOT NULL, word TEXT NOT NULL, query_type TEXT NOT NULL,
    count BIGINT NOT NULL, PRIMARY KEY (ns, word, query_type));
CREATE TABLE IF NOT EXISTS cache_entries (ns TEXT NOT NULL, key TEXT NOT NULL, version TEXT NOT NULL,
    used TEXT NOT NULL, recency BIGINT NOT NULL, hits BIGINT NOT NULL, query TEXT NOT NULL, scope TEXT NOT NULL,
    result TEXT NOT NULL, PRIMARY KEY (ns, key));
CREATE INDEX IF NOT EXISTS cache_used ON cache_entries (ns, recency);
CREATE TABLE IF NOT EXISTS cache_counts (ns TEXT NOT NULL, key TEXT NOT NULL, count BIGINT NOT NULL,
    touched BIGINT NOT NULL, PRIMARY KEY (ns, key));
CREATE INDEX IF NOT EXISTS cache_touched ON cache_counts (ns, touched);
CREATE TABLE IF NOT EXISTS vectors (ns TEXT NOT NULL, key TEXT NOT NULL, data {blob} NOT NULL,
    PRIMARY KEY (ns, key));
CREATE TABLE IF NOT EXISTS attempts (ns TEXT NOT NULL, source TEXT NOT NULL, time DOUBLE PRECISION NOT NULL);
CREATE INDEX IF NOT EXISTS attempts_source ON attempts (ns, source, time);
CREATE TABLE IF NOT EXISTS documents (ns TEXT NOT NULL, name TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (ns, name));
"""


def now() -> str:
    """Returns the current UTC time as the stores record it (ISO 8601, milliseconds)."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def json_object(text: str) -> Optional[dict[str, Any]]:
    """Returns the JSON object `text` holds, or None when it holds something else or is not JSON."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


class Engine(Protocol):
    """One database engine: how to run a function in a transaction, and the few words of SQL that differ."""

    name: str
    serial: str          # the type of an auto-incrementing primary key column
    blob: str            # the type of a bytes column
    lock_rows: str       # appended to a SELECT of rows the transaction will change (PostgreSQL: FOR UPDATE)
    placeholder: str     # the DB-API paramstyle's parameter marker
    catalog: str         # a SELECT of the names of the tables and indexes that exist
    pool: Any            # its connections (`pool.Pool`), which count connects and transactions
    setups: int          # how often this process ran `setup` (the schema, the one-time import)

    def transact(self, fn: Callable[[Any], T], write: bool) -> T: ...

    def setup(self, fn: Callable[[Any], T]) -> T: ...

    def describe(self) -> str: ...

    def exists(self) -> bool: ...   # whether the database is still there (an SQLite file can be deleted)


class Tx:
    """One transaction on the store of one namespace: SQL written with ``?`` markers, and the shared row kinds."""

    def __init__(self, cursor: Any, engine: Engine, ns: str) -> None:
        self.cursor, self.engine, self.ns = cursor, engine, ns

    def run(self, sql: str, *params: Any) -> Any:
        if self.engine.placeholder != "?":
            sql = sql.replace("?", self.engine.placeholder)
        self.cursor.execute(sql, params)
        return self.cursor

    def one(self, sql: str, *params: Any) -> Optional[tuple]:
        return self.run(sql, *params).fetchone()

    def all(self, sql: str, *params: Any) -> list[tuple]:
        return self.run(sql, *params).fetchall()

    # -- counters ------------------------------------------------------------------------------------------
    def bump(self, name: str, by: int = 1) -> int:
        """Returns counter `name` after adding `by` to it (created at 0)."""
        return int(self.one("INSERT INTO counters (ns, name, value) VALUES (?, ?, ?) ON CONFLICT (ns, name) "
                            "DO UPDATE SET value = counters.value + excluded.value RETURNING value",
                            self.ns, name, by)[0])

    def counter(self, name: str) -> int:
        row = self.one("SELECT value FROM counters WHERE ns = ? AND name = ?", self.ns, name)
        return int(row[0]) if row else 0

    # -- logs ----------------------------------------------------------------------------------------------
    def append(self, log: str, record: dict[str, Any]) -> None:
        """Appends `record` to `log` as one row, keyed by its query id."""
        key = record.get("query_id")
        self.run("INSERT INTO logs (ns, log, key, time, record) VALUES (?, ?, ?, ?, ?)", self.ns, log,
                 None if key is None else str(key), str(record.get("time") or now()), dumps(record))

    # -- items ---------------------------------------------------------------------------------------------
    def put_item(self, kind: str, item_id: str, body: dict[str, Any], state: str, pos: Optional[int] = None) -> None:
        """Writes item `item_id` of `kind` whole; a new item goes last unless `pos` places it."""
        if pos is None:
            row = self.one("SELECT pos FROM items WHERE ns = ? AND kind = ? AND id = ?", self.ns, kind, item_id)
            pos = row[0] if row else self.bump(f"pos:{kind}")
        self.run("INSERT INTO items (ns, kind, id, pos, state, body) VALUES (?, ?, ?, ?, ?, ?) "
                 "ON CONFLICT (ns, kind, id) DO UPDATE SET pos = excluded.pos, state = excluded.state, "
                 "body = excluded.body", self.ns, kind, item_id, pos, state, dumps(body))

    def put_items(self, kind: str, items: list[tuple[str, dict[str, Any], str]]) -> None:
        """Writes new items (id, body, state) of `kind` after the others, in order; one counter update for all,
        since PostgreSQL slows down on a row updated thousands of times in one transaction (an import)."""
        first = self.bump(f"pos:{kind}", len(items)) - len(items)
        for n, (item_id, body, state) in enumerate(items, 1):
            self.put_item(kind, item_id, body, state, pos=first + n)

    def item(self, kind: str, item_id: str, lock: bool = False) -> Optional[dict[str, Any]]:
        """Returns item `item_id` of `kind` (None if there is none); `lock` holds its row until the end."""
        row = self.one("SELECT body FROM items WHERE ns = ? AND kind = ? AND id = ?" +
                       (self.engine.lock_rows if lock else ""), self.ns, kind, item_id)
        return json.loads(row[0]) if row else None

    def items(self, kind: str, state: Optional[str] = None) -> dict[str, dict[str, Any]]:
        """Returns the items of `kind` (of one `state` if given) by id, in their order; a damaged row (its body not
        a JSON object, e.g. written by hand into a shared database) is left out rather than failing every reader."""
        if state is None:
            rows = self.all("SELECT id, body FROM items WHERE ns = ? AND kind = ? ORDER BY pos, id", self.ns, kind)
        else:
            rows = self.all("SELECT id, body FROM items WHERE ns = ? AND kind = ? AND state = ? ORDER BY pos, id",
                            self.ns, kind, state)
        return {i: body for i, body in ((i, json_object(b)) for i, b in rows) if body is not None}

    # -- documents -----------------------------------------------------------------------------------------
    def document(self, name: str) -> dict[str, Any]:
        row = self.one("SELECT body FROM documents WHERE ns = ? AND name = ?", self.ns, name)
        return json.loads(row[0]) if row else {}

    def put_document(self, name: str, body: dict[str, Any]) -> None:
        self.run("INSERT INTO documents (ns, name, body) VALUES (?, ?, ?) ON CONFLICT (ns, name) "
                 "DO UPDATE SET body = excluded.body", self.ns, name, dumps(body))


class Log:
    """One append-only log of the store (query log, gaps, background jobs, refused facts)."""

    def __init__(self, store: "FeedbackStore", name: str) -> None:
        self.store, self.name = store, name

    def append(self, record: dict[str, Any]) -> None:
        self.store.write(lambda tx: tx.append(self.name, record))

    def find(self, key: str) -> Optional[dict[str, Any]]:
        """Returns the first record logged with query id `key`, or None."""
        row = self.store.read(lambda tx: tx.one("SELECT record FROM logs WHERE ns = ? AND log = ? AND key = ? "
                                                "ORDER BY seq LIMIT 1", tx.ns, self.name, key))
        return json.loads(row[0]) if row else None

    def records(self) -> list[dict[str, Any]]:
        rows = self.store.read(lambda tx: tx.all("SELECT record FROM logs WHERE ns = ? AND log = ? ORDER BY seq",
                                                 tx.ns, self.name))
        return [json.loads(r[0]) for r in rows]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.records())

    def __len__(self) -> int:
        return int(self.store.read(lambda tx: tx.one("SELECT COUNT(*) FROM logs WHERE ns = ? AND log = ?",
                                                     tx.ns, self.name))[0])


LOGS = ("query_log", "gaps", "background", "rejected")


class FeedbackStore:
    """The learned state of one feedback folder (`namespace` `ns`) in one database (`engine`)."""

    def __init__(self, engine: Engine, ns: str) -> None:
        self.engine, self.ns = engine, ns

    def write(self, fn: Callable[[Tx], T]) -> T:
        """Returns `fn(tx)` run in one write transaction (retried whole if the engine must retry it)."""
        return self.engine.transact(lambda cursor: fn(Tx(cursor, self.engine, self.ns)), write=True)

    def read(self, fn: Callable[[Tx], T]) -> T:
        """Returns `fn(tx)` run in one read transaction (a consistent snapshot on PostgreSQL)."""
        return self.engine.transact(lambda cursor: fn(Tx(cursor, self.engine, self.ns)), write=False)

    def log(self, name: str) -> Log:
        return Log(self, name)

    def __repr__(self) -> str:
        return f"FeedbackStore({self.engine.describe()}, ns={self.ns!r})"


def create_schema(tx: Tx) -> None:
    """Creates the store's tables and indexes that do not exist yet and touches none that do: on PostgreSQL even
    `CREATE INDEX IF NOT EXISTS` locks its table, so it would wait behind, or deadlock with, other servers' writes."""
    present = {row[0] for row in tx.run(tx.engine.catalog).fetchall()}
    for statement in SCHEMA.format(serial=tx.engine.serial, blob=tx.engine.blob).split(";"):
        name = re.search(r"IF NOT EXISTS (\w+)", statement)
        if name and name.group(1) not in present:
            tx.run(statement)
