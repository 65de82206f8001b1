"""Passage vectors remembered across processes: one SQLite file per model fingerprint in the data home's cache.

The offline answer scores up to `evidence.DENSE_POOL` sentences of the
retrieved chunks with the embedder; embedding them is most of a warm CLI
question's CPU (about 2 CPU-s for 32 sentences on one core), and the same
sentences come back whenever a question retrieves the same chunks. A vector
depends only on the model and the text, so it is kept under (fingerprint, text
digest) and looked up per text: opening the file reads nothing but its header,
whatever its size. A cache that cannot be written (a read-only home) only
stops remembering; it never fails the question.
"""
from __future__ import annotations

import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .home import cache_dir
from .vectors import model_fingerprint, text_key

_SCHEMA = "CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)"


class PassageVectors:
    """Returns remembered passage vectors of one model (float32, as embedded) and stores new ones, by text."""

    def __init__(self, path: Path, dim: int) -> None:
        self.path, self.dim = Path(path), dim
        self._lock = threading.Lock()
        self._db: Optional[sqlite3.Connection] = None

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            db = sqlite3.connect(self.path, timeout=5, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(_SCHEMA)
            self._db = db
        return self._db

    def get(self, texts: Sequence[str]) -> list[Optional[np.ndarray]]:
        """Returns each text's remembered vector, or None where there is none (or the file cannot be read)."""
        keys = [text_key(t) for t in texts]
        try:
            with self._lock:
                db = self._connect()
                marks = ",".join("?" * len(keys))
                found = dict(db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", keys).fetchall())
        except sqlite3.Error:
            return [None] * len(texts)
        return [np.frombuffer(found[k], dtype=np.float32) if len(found.get(k) or b"") == 4 * self.dim else None
                for k in keys]

    def put(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Remembers one vector per text; a write that fails (read-only or busy file) is skipped."""
        rows = [(text_key(t), np.asarray(v, dtype=np.float32).tobytes()) for t, v in zip(texts, vectors)]
        try:
            with self._lock:
                self._connect().executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)
        except sqlite3.Error:
            pass


BATCH = 1
"""Sentences embedded per call: one, so that the time left is checked before each (under 8 CPU hogs a batch of
four could spend what was left of a 15 s deadline); a call per sentence costs about the CPU of a shared batch."""


def embedded_passages(texts: Sequence[str], embedder: Any,
                      may_spend: Callable[[], Optional[float]] = lambda: None) -> Optional[np.ndarray]:
    """Returns `embedder`'s passage vector of each text: remembered ones read, the others embedded and remembered.

    The missing texts are embedded `BATCH` at a time while what `may_spend()` (seconds the caller may still spend,
    read before each batch; None: no limit) exceeds the last batch's time: the deadline is a safety net, so that the
    vectors used (and the answer) do not hang on the machine's load or on what earlier questions left in the cache.
    Returns None when it runs out (what was embedded is kept, so the next question has less to do).
    """
    texts = list(texts)
    store = passage_vectors(embedder)
    rows = store.get(texts) if store is not None else [None] * len(texts)
    missing = list(dict.fromkeys(t for t, row in zip(texts, rows) if row is None))
    fresh: dict[str, np.ndarray] = {}
    took = 0.0
    for start in range(0, len(missing), BATCH):
        left = may_spend()
        if left is not None and left <= took:
            return None
        began = time.monotonic()
        batch = missing[start:start + BATCH]
        vectors = np.asarray(embedder.embed(batch, kind="passage"), dtype=np.float32)
        took = time.monotonic() - began
        if store is not None:
            store.put(batch, vectors)
        fresh.update(zip(batch, vectors))
    rows = [fresh[t] if row is None else row for t, row in zip(texts, rows)]
    return np.array(rows, dtype=np.float32).reshape(len(texts), -1)


def passage_vectors(embedder: Any) -> Optional[PassageVectors]:
    """Returns the process's store of `embedder`'s passage vectors (one per model fingerprint and cache folder), or
    None when the embedder does not say its dimension or the cache folder cannot be made."""
    dim = int(getattr(embedder, "dim", 0) or 0)
    if not dim:
        return None
    try:
        folder = cache_dir("passage-vectors")
    except OSError:
        return None
    path = folder / (re.sub(r"[^\w.@-]+", "_", model_fingerprint(embedder)) + ".sqlite3")
    with _STORES_LOCK:
        if path not in _STORES:
            _STORES[path] = PassageVectors(path, dim)
        return _STORES[path]


_STORES: dict[Path, PassageVectors] = {}
_STORES_LOCK = threading.Lock()
