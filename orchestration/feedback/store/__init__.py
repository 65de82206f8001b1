"""Opening the feedback store of a feedback folder: which engine (SQLite or PostgreSQL), which namespace, and the
one-time import of the JSON files older versions kept there (`jsonfiles`).

The engine is, first, the ``orchestration.feedback.store`` section the folder's
loop was opened with (`open_store` remembers it per folder, so code that holds only
the folder, e.g. `orchestration.learning`, opens the same store); else
PostgreSQL at ``$LAMBDARAG_STORE_DSN`` when that is set; else SQLite in
``<folder>/feedback.sqlite3``.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Optional, Union

from lambdarag.skills.store.home import data_home

from .base import LOGS, FeedbackStore, Log, Tx, create_schema, now  # noqa: F401
from .postgres import PostgresEngine
from .sqlite import FILE, SqliteEngine

DSN_ENV = "LAMBDARAG_STORE_DSN"
_LOCK = threading.Lock()
_SPECS: dict[str, tuple[str, Optional[str]]] = {}
_ENGINES: dict[tuple[str, str], object] = {}
_READY: set[tuple[str, str, str]] = set()
OPEN_SQLITE = 64
"""SQLite files whose connections a process keeps open at most (the least recently opened are let go)."""


def namespace(directory: Path) -> str:
    """Returns the namespace of a feedback folder: its path under the data home (the same on every machine that
    shares one PostgreSQL, e.g. ``laws/feedback``), else its absolute path."""
    directory = Path(directory).absolute()
    try:
        return directory.relative_to(data_home().absolute()).as_posix()
    except ValueError:
        return directory.as_posix()


def engine_of(directory: Path, spec: Optional[object] = None) -> tuple[str, Optional[str]]:
    """Returns (kind, dsn) for a folder: its `StoreConfig` `spec`, else the one remembered, else the environment's."""
    key = str(Path(directory).absolute())
    if spec is not None:
        _SPECS[key] = (spec.kind, spec.dsn)
    if key in _SPECS:
        return _SPECS[key]
    dsn = os.environ.get(DSN_ENV, "").strip()
    return ("postgres", dsn) if dsn else ("sqlite", None)


def open_store(directory: Union[str, Path], spec: Optional[object] = None) -> FeedbackStore:
    """Returns the store of feedback folder `directory` (engine: see the module docstring), its schema created
    and the folder's old JSON files imported on the first open."""
    directory = Path(directory).absolute()
    kind, dsn = engine_of(directory, spec)
    where = dsn if kind == "postgres" else str(directory / FILE)
    ns = namespace(directory)
    with _LOCK:
        engine = _ENGINES.get((kind, where))
        if engine is None:
            engine = PostgresEngine(dsn) if kind == "postgres" else SqliteEngine(directory / FILE)
            _ENGINES[kind, where] = engine
            files = [key for key in _ENGINES if key[0] == "sqlite"]
            for key in files[:max(0, len(files) - OPEN_SQLITE)]:
                del _ENGINES[key]
                _READY.difference_update({r for r in _READY if r[:2] == key})
        store = FeedbackStore(engine, ns)
        if (kind, where, ns) not in _READY or not engine.exists():
            engine.setup(lambda cursor: prepare(Tx(cursor, engine, ns), directory))
            _READY.add((kind, where, ns))
    return store


def prepare(tx: Tx, directory: Path) -> None:
    """Creates the schema, then imports the folder's old files unless this namespace has been opened before."""
    create_schema(tx)
    if tx.document("imported"):
        return
    from .jsonfiles import import_folder

    tx.put_document("imported", {"time": now(), **import_folder(tx, directory)})
