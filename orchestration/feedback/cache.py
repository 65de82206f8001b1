"""The query cache: answers of hot queries, keyed by normalised query, permission scope and knowledge version.

Rows of the feedback store (``cache_entries``, ``cache_counts``): a key is the
normalised query, the key of the asker's permission scope (`lambdarag.Scope`: departments + security level,
never the user id, encoded so no two scopes share a key) and the version (knowledge, learned state and the
pipeline that answers), so a
write-back, a re-index or a new rule makes old entries unreachable, and a user
never gets an answer cached for a different scope. An answer is cached once its key
has been answered ``cacheAfter`` times; at most ``cacheSize`` entries, least
recently used dropped first.
"""
from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from typing import Any, Mapping, Optional

from lambdarag import User
from lambdarag.state import PUBLIC

from .store import FeedbackStore, Tx, now
from .store.rows import CLOCK, cache_counts, cache_entries, put_count, put_entry


def normalise(query: str) -> str:
    """Returns the cache form of a query: NFKC, lower case, single spaces, no trailing punctuation."""
    text = unicodedata.normalize("NFKC", query).lower()
    return re.sub(r"\s+", " ", text).strip().rstrip("?？。.!！ ")


def scope_of(user: Optional[User]) -> str:
    """Returns the key of a user's permission scope (`lambdarag.Scope.key`, injective): what they may read decides
    which answers they may share."""
    return (user or PUBLIC).scope().key


class QueryCache:
    """Cached answers of one knowledge base (see the module docstring)."""

    def __init__(self, store: FeedbackStore, size: int, after: int) -> None:
        self.store, self.size, self.after = store, size, after

    def key(self, query: str, user: Optional[User], version: str) -> str:
        raw = "\0".join((normalise(query), scope_of(user), version))
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]

    def get(self, query: str, user: Optional[User], version: str) -> Optional[dict[str, Any]]:
        """Returns the cached result for this query, scope and version, or None (a hit refreshes its recency)."""
        key = self.key(query, user, version)

        def hit(tx: Tx) -> Optional[dict[str, Any]]:
            row = tx.one("UPDATE cache_entries SET used = ?, recency = ?, hits = hits + 1 WHERE ns = ? AND key = ? "
                         "RETURNING result", now(), tx.bump(CLOCK), tx.ns, key)
            return json.loads(row[0]) if row else None
        if not self.store.read(lambda tx: tx.one("SELECT 1 FROM cache_entries WHERE ns = ? AND key = ?", tx.ns, key)):
            return None            # a miss, the common case, takes no write lock
        return self.store.write(hit)

    def remember(self, query: str, user: Optional[User], result: Mapping[str, Any],
                 version: str) -> bool:
        """Counts one answer of this key and caches `result` once the count reaches cacheAfter; returns whether cached.

        Entries of other versions are dropped; at most ``size`` entries (least recently used go) and ``10 × size``
        counts (least recently counted go) are kept.
        """
        key = self.key(query, user, version)

        def change(tx: Tx) -> bool:
            count = put_count(tx, key, 1)
            trim(tx, "cache_counts", "touched", 10 * self.size)
            tx.run("DELETE FROM cache_entries WHERE ns = ? AND version <> ?", tx.ns, version)
            stored = count >= self.after
            if stored:
                put_entry(tx, key, {"query": normalise(query), "scope": scope_of(user), "version": version,
                                    "used": now(), "hits": 0, "result": dict(result)})
            trim(tx, "cache_entries", "recency", self.size)
            return stored
        return self.store.write(change)

    def entries(self) -> dict[str, dict[str, Any]]:
        """Returns the cached entries by key, least recently used first."""
        return self.store.read(cache_entries)

    def counts(self) -> dict[str, int]:
        """Returns how often each key was answered, least recently counted first."""
        return self.store.read(cache_counts)

    def __len__(self) -> int:
        return int(self.store.read(lambda tx: tx.one("SELECT COUNT(*) FROM cache_entries WHERE ns = ?", tx.ns))[0])


def trim(tx: Tx, table: str, order: str, keep: int) -> None:
    """Deletes the rows of `table` (a cache table) beyond the `keep` most recent by `order`."""
    extra = int(tx.one(f"SELECT COUNT(*) FROM {table} WHERE ns = ?", tx.ns)[0]) - keep
    if extra > 0:
        old = [k for k, in tx.all(f"SELECT key FROM {table} WHERE ns = ? ORDER BY {order} LIMIT ?", tx.ns, extra)]
        for k in old:
            tx.run(f"DELETE FROM {table} WHERE ns = ? AND key = ?", tx.ns, k)
