"""The query cache: answers of hot queries, keyed by normalised query, permission scope and knowledge version.

``query_cache.json``: a key is the normalised query, the asker's permission scope
(departments + security level, never the user id) and the knowledge version, so a
write-back, a re-index or a new rule makes old entries unreachable, and a user
never gets an answer cached for a different scope. An answer is cached once its key
has been answered ``cacheAfter`` times; at most ``cacheSize`` entries, least
recently used dropped first.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import OrderedDict
from pathlib import Path
from typing import Any, Mapping, Optional

from lambdarag import User

from .files import JsonStore, now


def normalise(query: str) -> str:
    """Returns the cache form of a query: NFKC, lower case, single spaces, no trailing punctuation."""
    text = unicodedata.normalize("NFKC", query).lower()
    return re.sub(r"\s+", " ", text).strip().rstrip("?？。.!！ ")


def scope_of(user: Optional[User]) -> str:
    """Returns the permission scope of a user: what they may read decides which answers they may share."""
    user = user or User()
    if user.all_access:
        return "*"
    return f"{','.join(sorted(user.departments))}|{user.security_level}"


class QueryCache:
    """Cached answers of one knowledge base (see the module docstring)."""

    def __init__(self, path: Path, size: int, after: int) -> None:
        self.store, self.size, self.after = JsonStore(path), size, after

    def key(self, query: str, user: Optional[User], version: str) -> str:
        raw = "\0".join((normalise(query), scope_of(user), version))
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]

    def get(self, query: str, user: Optional[User], version: str) -> Optional[dict[str, Any]]:
        """Returns the cached result for this query, scope and version, or None (a hit refreshes its recency)."""
        key = self.key(query, user, version)
        entry = self.store.read().get("entries", {}).get(key)
        if entry is None:
            return None

        def touch(data: dict) -> None:
            if key in data.get("entries", {}):
                data["entries"][key]["used"] = now()
                data["entries"][key]["hits"] = data["entries"][key].get("hits", 0) + 1
        self.store.update(touch)
        return entry["result"]

    def remember(self, query: str, user: Optional[User], result: Mapping[str, Any],
                 version: str) -> bool:
        """Counts one answer of this key and caches `result` once the count reaches cacheAfter; returns whether cached."""
        key = self.key(query, user, version)
        size, after = self.size, self.after
        stored = {"value": False}

        def change(data: dict) -> None:
            counts = OrderedDict(data.get("counts", {}))
            counts[key] = counts.pop(key, 0) + 1
            while len(counts) > 10 * size:
                counts.popitem(last=False)
            entries = {k: e for k, e in data.get("entries", {}).items() if e.get("version") == version}
            if counts[key] >= after:
                entries[key] = {"query": normalise(query), "scope": scope_of(user), "version": version,
                                "used": now(), "hits": 0, "result": dict(result)}
                stored["value"] = True
            order = sorted(entries, key=lambda k: entries[k]["used"])
            for k in order[:max(0, len(entries) - size)]:
                del entries[k]
            data["counts"], data["entries"] = dict(counts), entries
        self.store.update(change)
        return stored["value"]

    def __len__(self) -> int:
        return len(self.store.read().get("entries", {}))
