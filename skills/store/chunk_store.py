"""A saved index's chunks and documents in one SQLite file, read per hit instead of parsed whole at open.

One row per chunk, keyed by its position in the index (the row BM25 and the vectors use) and by its id, with the
chunk as JSON and the filterable fields (`base.FILTER_FIELDS`) as columns; one row per document with its
metadata. The file is written once per index generation (`write`) and opened read-only and immutable, so
opening costs the same for ten chunks or a million and readers in many threads share one connection.
"""
from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

from .base import FILTER_FIELDS
from .corpus import Chunk
from .files import replacing


def write(path: Path, chunks: Iterable[Chunk], documents: Mapping[str, Mapping[str, Any]]) -> None:
    """Writes the chunks (in index order) and documents to a new SQLite file at `path`, by write-rename."""
    with replacing(path) as tmp:
        db = sqlite3.connect(tmp)
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        columns = ", ".join(f"{f} TEXT" for f in FILTER_FIELDS if f != "doc_id")
        db.execute(f"CREATE TABLE chunk (row INTEGER PRIMARY KEY, id TEXT NOT NULL, doc_id TEXT NOT NULL, "
                   f"{columns}, json TEXT NOT NULL)")
        db.execute("CREATE TABLE document (id TEXT PRIMARY KEY, json TEXT NOT NULL)")
        fields = [f for f in FILTER_FIELDS if f != "doc_id"]
        db.executemany(f"INSERT INTO chunk VALUES (?, ?, ?, {', '.join('?' * len(fields))}, ?)",
                       ((i, c.id, c.doc_id, *(getattr(c, f) for f in fields),
                         json.dumps(asdict(c), ensure_ascii=False)) for i, c in enumerate(chunks)))
        db.execute("CREATE UNIQUE INDEX chunk_id ON chunk (id)")
        db.executemany("INSERT INTO document VALUES (?, ?)",
                       ((d, json.dumps(m, ensure_ascii=False)) for d, m in documents.items()))
        db.commit()
        db.close()


ITER_BATCH = 4096
"""Chunks read per query while iterating a whole store."""


class ChunkStore(Sequence):
    """The chunks of a saved index as a read-only sequence in index order, read from SQLite per access."""

    def __init__(self, path: Path, size: int) -> None:
        self.path = Path(path)
        self._size = size
        self._db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro&immutable=1", uri=True,
                                   check_same_thread=False)
        self._lock = threading.Lock()
        self.rows = ChunkRows(self)

    def _query(self, sql: str, args: Sequence = ()) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, row):
        if isinstance(row, slice):
            return self.take(range(*row.indices(self._size)))
        row = int(row)
        if row < 0:
            row += self._size
        found = self._query("SELECT json FROM chunk WHERE row = ?", (row,))
        if not found:
            raise IndexError(f"chunk row {row} out of range (index of {self._size} chunks)")
        return Chunk(**json.loads(found[0][0]))

    def take(self, rows: Iterable[int]) -> list[Chunk]:
        """Returns the chunks at these rows, in that order, in one query."""
        rows = [int(r) for r in rows]
        found: dict[int, Chunk] = {}
        for start in range(0, len(rows), 500):
            part = rows[start:start + 500]
            found.update((r, Chunk(**json.loads(text))) for r, text in self._query(
                f"SELECT row, json FROM chunk WHERE row IN ({', '.join('?' * len(part))})", part))
        return [found[r] for r in rows]

    def __iter__(self) -> Iterator[Chunk]:
        for start in range(0, self._size, ITER_BATCH):       # a batch at a time: a million chunks never in memory
            for (text,) in self._query("SELECT json FROM chunk WHERE row >= ? AND row < ? ORDER BY row",
                                       (start, start + ITER_BATCH)):
                yield Chunk(**json.loads(text))

    def column(self, field: str) -> np.ndarray:
        """Returns one filterable field of every chunk, in index order (what a metadata filter compares)."""
        if field not in FILTER_FIELDS:
            raise KeyError(field)
        return np.array([v for (v,) in self._query(f"SELECT {field} FROM chunk ORDER BY row")], dtype=object)

    def documents(self) -> dict[str, dict]:
        """Returns doc id → metadata of every document."""
        return {d: json.loads(m) for d, m in self._query("SELECT id, json FROM document")}


class ChunkRows(Mapping):
    """Chunk id → row of a `ChunkStore`, looked up in its id index."""

    def __init__(self, store: ChunkStore) -> None:
        self._store = store

    def __getitem__(self, chunk_id: str) -> int:
        found = self._store._query("SELECT row FROM chunk WHERE id = ?", (chunk_id,))
        if not found:
            raise KeyError(chunk_id)
        return found[0][0]

    def __len__(self) -> int:
        return len(self._store)

    def __iter__(self) -> Iterator[str]:
        return iter([i for (i,) in self._store._query("SELECT id FROM chunk ORDER BY row")])
