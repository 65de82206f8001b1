"""The chunks next to the best hits: where a top hit's section goes on in the chunk before or after it.

A section longer than a chunk is cut into several (``Filesystem permissions``, ``…~2``, its table rows); the
sentence that answers often sits in the piece retrieval did not rank. `neighbours` reads the index's chunks by
document and position and returns the adjacent pieces of the same section of the first `BEST` hits, so the
answer may quote them (issue 40). A neighbour shares its hit's document, so it carries the same access labels.
"""
from __future__ import annotations

import re
import threading
import weakref
from typing import Any, Sequence

from .store.corpus import Chunk, to_hits
from .store.records import Hit

BEST = 3
"""How many of the best context hits lend their neighbours."""
LIMIT = 3
"""At most this many neighbours in one context (each one is shown to a model too)."""

_POSITIONS: "weakref.WeakKeyDictionary[Any, tuple[int, dict[str, int]]]" = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def positions(index: Any) -> dict[str, int]:
    """Returns chunk id → position in the index's chunk order, built once per index version."""
    version = getattr(index, "version", 0)
    with _LOCK:
        known = _POSITIONS.get(index)
        if known is None or known[0] != version:
            known = (version, {c.id: i for i, c in enumerate(index.chunks())})
            _POSITIONS[index] = known
    return known[1]


_ROW = re.compile(r"\s(?:row \d+|第\d+行)$")


def section_of(chunk: Chunk) -> str:
    """Returns the section a chunk belongs to: its label without a table row's number (``X row 3`` sits in ``X``);
    a statute's article is a section of its own, whatever chapter holds it."""
    return _ROW.sub("", chunk.section)


def neighbours(hits: Sequence[Hit], index: Any) -> tuple[Hit, ...]:
    """Returns the chunks just before and after each of the first `BEST` hits in the same document and section,
    none already a hit, at most `LIMIT`, each with its hit's score; () without an index that lists its chunks."""
    if index is None or not hasattr(index, "chunks") or not hits:
        return ()
    where = positions(index)
    chunks = index.chunks()
    taken = {h.chunk_id for h in hits}
    found: list[tuple[Chunk, float]] = []
    for hit in hits[:BEST]:
        at = where.get(hit.chunk_id)
        if at is None:
            continue
        own = chunks[at]
        for step in (-1, 1):
            near = at + step
            if 0 <= near < len(chunks) and chunks[near].id not in taken and chunks[near].doc_id == own.doc_id \
                    and section_of(chunks[near]) == section_of(own):
                taken.add(chunks[near].id)
                found.append((chunks[near], hit.score))
    return to_hits(found[:LIMIT], "neighbour")
