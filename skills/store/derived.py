"""Tables derived from an index or a graph (statute titles, repeals, FAQ questions, typed edges), kept per object.

A skill derives such a table from every chunk or edge once, not per query; it
is rebuilt when the object's change stamp moves (an index's `version`, a
graph's edge count), and dropped with the object.
"""
from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, Generic, Hashable, TypeVar

T = TypeVar("T")


def index_version(index: Any) -> Hashable:
    """Returns the stamp of an index: its change counter, which every `add` and `remove` moves."""
    return index.version


class PerObject(Generic[T]):
    """Returns `build(owner)`, remembered per live `owner` until `stamp(owner)` changes."""

    def __init__(self, build: Callable[[Any], T], stamp: Callable[[Any], Hashable] = index_version) -> None:
        self._build, self._stamp = build, stamp
        self._cache: "weakref.WeakKeyDictionary[Any, tuple[Hashable, T]]" = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def __call__(self, owner: Any) -> T:
        stamp = self._stamp(owner)
        with self._lock:
            cached = self._cache.get(owner)
            if cached is not None and cached[0] == stamp:
                return cached[1]
        value = self._build(owner)   # outside the lock: two first callers may both build; the tables are equal
        with self._lock:
            self._cache[owner] = (stamp, value)
        return value
