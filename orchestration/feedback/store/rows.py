"""The rows each part of the feedback loop writes, one function per kind of write, shared by the parts themselves
(`orchestration.feedback.cache`, `routing`, `lexicon`, `rules`, `votes`, `confirmations`, `journal`) and by the
one-time import of the old files (`jsonfiles`), so both write a row the same way.

Tallies are single-statement upserts; items go through `Tx.put_item`. Writers that touch several rows of one table
take them in one order (sorted), so two transactions never deadlock on them.
"""
from __future__ import annotations

import json
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from .base import FeedbackStore, Tx

VECTOR_BATCH = 500           # question vectors read per statement
CLOCK = "cache_clock"
"""The counter that orders cache rows by recency (exactly, where times tie)."""

RULE = "rule"

VOTE = "vote"

CONFIRMATION = "confirmation"

WRITEBACK = "writeback"

CHANGES = f"pos:{WRITEBACK}"
"""The counter numbering write-backs and their reverts in the order they commit: a change takes the next number as
the first statement of its transaction, so its row lock makes the changes of every server sharing the store go one
at a time (`orchestration.feedback.replica`)."""


def put_count(tx: Tx, key: str, n: int, recency: Optional[int] = None) -> int:
    """Returns the answer count of `key` after adding `n` to it (and making it the most recently counted, or
    placing it at `recency`)."""
    return int(tx.one("INSERT INTO cache_counts (ns, key, count, touched) VALUES (?, ?, ?, ?) ON CONFLICT (ns, key) "
                      "DO UPDATE SET count = cache_counts.count + excluded.count, touched = excluded.touched "
                      "RETURNING count", tx.ns, key, n, tx.bump(CLOCK) if recency is None else recency)[0])


def put_entry(tx: Tx, key: str, entry: Mapping[str, Any], recency: Optional[int] = None) -> None:
    """Stores a cache entry as the most recently used (or at `recency`)."""
    tx.run("INSERT INTO cache_entries (ns, key, version, used, recency, hits, query, scope, result) "
           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (ns, key) DO UPDATE SET version = excluded.version, "
           "used = excluded.used, recency = excluded.recency, hits = excluded.hits, query = excluded.query, "
           "scope = excluded.scope, result = excluded.result", tx.ns, key, entry["version"], entry["used"],
           tx.bump(CLOCK) if recency is None else recency, int(entry.get("hits", 0)), entry["query"], entry["scope"],
           json.dumps(entry["result"], ensure_ascii=False, default=str))


def add_runs(tx: Tx, query_type: str, strategy: str, total: int, success: int, latency: float, cost: float) -> None:
    """Adds runs of `strategy` for `query_type` to the statistics (one upsert)."""
    tx.run("INSERT INTO routing (ns, query_type, strategy, total, success, latency_ms, cost) "
           "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (ns, query_type, strategy) DO UPDATE SET "
           "total = routing.total + excluded.total, success = routing.success + excluded.success, "
           "latency_ms = routing.latency_ms + excluded.latency_ms, cost = routing.cost + excluded.cost",
           tx.ns, query_type, strategy, total, success, float(latency), float(cost))


def add_evidence(tx: Tx, term: str, alt: str, n: int) -> None:
    """Adds `n` to the evidence that `alt` is a synonym of `term` (one upsert)."""
    tx.run("INSERT INTO synonyms (ns, term, alt, count) VALUES (?, ?, ?, ?) ON CONFLICT (ns, term, alt) "
           "DO UPDATE SET count = synonyms.count + excluded.count", tx.ns, term, alt, n)


def put_rule(tx: Tx, rule: dict[str, Any], first: bool) -> None:
    """Stores `rule` (replacing one of the same id: its pattern, or its scope and pattern for one learned in a
    scope) before every rule (`first`) or after them."""
    pos = tx.bump("pos:rule")
    tx.put_item(RULE, rule.get("id", rule["pattern"]), rule, "live", pos=-pos if first else pos)


def add_observation(tx: Tx, word: str, query_type: str, n: int) -> None:
    tx.run("INSERT INTO observations (ns, word, query_type, count) VALUES (?, ?, ?, ?) ON CONFLICT "
           "(ns, word, query_type) DO UPDATE SET count = observations.count + excluded.count", tx.ns, word,
           query_type, n)


def add_attempt(tx: Tx, source: str, moment: float) -> None:
    tx.run("INSERT INTO attempts (ns, source, time) VALUES (?, ?, ?)", tx.ns, source, float(moment))


def put_confirmation(tx: Tx, item: Mapping[str, Any]) -> None:
    """Stores a confirmation item and counts the change (an explicit one, unless its origin is ``answer``)."""
    put_confirmations(tx, [item])


def put_confirmations(tx: Tx, items: Sequence[Mapping[str, Any]]) -> None:
    """Stores confirmation items in order and counts the changes, each counter updated once."""
    tx.put_items(CONFIRMATION, [(i["id"], dict(i), "reverted" if i["reverted"] else "live") for i in items])
    tx.bump("changes", len(items))
    explicit = sum(1 for i in items if i["origin"] != "answer")
    if explicit:
        tx.bump("generation", explicit)


def put_writeback(tx: Tx, item: dict[str, Any], number: int) -> None:
    """Stores write-back `item` (live, or reverted when it says so) as change `number` of the `CHANGES` counter."""
    tx.put_item(WRITEBACK, item["id"], {**item, "change": number}, "reverted" if item["reverted"] else "live",
                pos=number)


def writebacks_after(tx: Tx, number: int) -> tuple[int, list[tuple[str, int, str]]]:
    """Returns the `CHANGES` counter and the write-back rows (id, change number, body as stored) changed after
    change `number`, in the order they changed; a body is returned unparsed, so a damaged row harms only itself."""
    last = tx.counter(CHANGES)
    rows = tx.all("SELECT id, pos, body FROM items WHERE ns = ? AND kind = ? AND pos > ? ORDER BY pos", tx.ns,
                  WRITEBACK, number)
    return last, [(str(i), int(pos), str(body)) for i, pos, body in rows]


def stored_vectors(store: FeedbackStore, keys: Sequence[str]) -> dict[str, np.ndarray]:
    """Returns the stored question vectors of `keys` (digest → float32 vector); absent keys are left out."""
    def read(tx: Tx) -> dict[str, np.ndarray]:
        out = {}
        for i in range(0, len(keys), VECTOR_BATCH):
            batch = keys[i:i + VECTOR_BATCH]
            marks = ", ".join("?" * len(batch))
            for key, data in tx.all(f"SELECT key, data FROM vectors WHERE ns = ? AND key IN ({marks})", tx.ns, *batch):
                out[key] = np.frombuffer(bytes(data), dtype=np.float32).copy()
        return out
    return store.read(read)


def put_vector(tx: Tx, key: str, vector: np.ndarray, replace: bool = False) -> None:
    """Stores a float32 array (a question's vector, the query adapter's square map) in the vectors table under
    `key`: a question's vector is written once and kept, a `replace`d one (the adapter a refit learned) overwrites."""
    tx.run("INSERT INTO vectors (ns, key, data) VALUES (?, ?, ?) ON CONFLICT (ns, key) DO "
           + ("UPDATE SET data = excluded.data" if replace else "NOTHING"), tx.ns, key,
           np.asarray(vector, dtype=np.float32).tobytes())


def stored_matrix(tx: Tx, key: str) -> Optional[np.ndarray]:
    """Returns the square matrix stored under `key`, or None when the row is absent or its bytes are not a finite
    square float32 matrix."""
    row = tx.one("SELECT data FROM vectors WHERE ns = ? AND key = ?", tx.ns, key)
    data = bytes(row[0]) if row else b""
    side = int(round(np.sqrt(len(data) // 4)))
    if not side or len(data) != 4 * side * side:
        return None
    matrix = np.frombuffer(data, dtype=np.float32).reshape(side, side).copy()
    return matrix if np.isfinite(matrix).all() else None


def cache_entries(tx: Tx) -> dict[str, dict[str, Any]]:
    """Returns the cached entries by key, least recently used first."""
    rows = tx.all("SELECT key, version, used, hits, query, scope, result FROM cache_entries WHERE ns = ? "
                  "ORDER BY recency", tx.ns)
    return {k: {"query": q, "scope": s, "version": v, "used": u, "hits": int(h), "result": json.loads(r)}
            for k, v, u, h, q, s, r in rows}


def cache_counts(tx: Tx) -> dict[str, int]:
    """Returns how often each cache key was answered, least recently counted first."""
    return {k: int(n) for k, n in tx.all("SELECT key, count FROM cache_counts WHERE ns = ? ORDER BY touched", tx.ns)}


def routing_table(tx: Tx) -> dict[str, dict[str, dict[str, float]]]:
    """Returns query type → strategy → {total, success, latency_ms, cost}."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for query_type, strategy, total, success, latency, cost in tx.all(
            "SELECT query_type, strategy, total, success, latency_ms, cost FROM routing WHERE ns = ? "
            "ORDER BY query_type, strategy", tx.ns):
        out.setdefault(query_type, {})[strategy] = {"total": int(total), "success": int(success),
                                                    "latency_ms": float(latency), "cost": float(cost)}
    return out


def synonym_terms(tx: Tx) -> dict[str, dict[str, int]]:
    """Returns term → {synonym: evidence count}."""
    out: dict[str, dict[str, int]] = {}
    for term, alt, n in tx.all("SELECT term, alt, count FROM synonyms WHERE ns = ? ORDER BY term, alt", tx.ns):
        out.setdefault(term, {})[alt] = int(n)
    return out
