"""The in-process index backend: BM25 on a sparse inverted index, dense on faiss, permissions as row masks."""
from __future__ import annotations

import json
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from lambdarag import User
from lambdarag.errors import ConfigError
from lambdarag.state import PUBLIC

from .base import FILTER_FIELDS, IndexBackend, Scored, doc_meta, fingerprint_of
from .corpus import Chunk, Document, searchable_text
from .vectors import ANN_THRESHOLD, DenseIndex
from .bm25 import Bm25Index
from .tokenize import Tokenizer


class LocalBackend(IndexBackend):
    """In-process backend: BM25 on a sparse inverted index, dense on faiss, permissions as row masks."""

    def __init__(self, tokenizer: Optional[Tokenizer] = None, *, model: Optional[str] = None,
                 bm25: Optional[Bm25Index] = None, ann_threshold: int = ANN_THRESHOLD) -> None:
        self.tokenizer = tokenizer or Tokenizer()
        self.model = model
        self.lexical = bm25 or Bm25Index()
        self.ann_threshold = ann_threshold
        self._chunks: list[Chunk] = []
        self._docs: dict[str, dict] = {}
        self._vectors: Optional[np.ndarray] = None
        self._dense: Optional[DenseIndex] = None
        self._lock = threading.Lock()
        self.version = 0
        self._reindex()

    # ---- content

    def _reindex(self) -> None:
        self._row = {c.id: i for i, c in enumerate(self._chunks)}
        labels: dict[tuple, int] = {}
        self._label = np.array([labels.setdefault((c.department, c.security_level), len(labels))
                                for c in self._chunks], dtype=np.int32)
        self._labels = list(labels)
        self._columns: dict[str, np.ndarray] = {}
        self._dense = DenseIndex(self._vectors, self.ann_threshold) if self._vectors is not None else None
        if self.lexical.size:
            self.lexical.scores(())  # derive idf and norms now, not inside concurrent queries

    def add(self, documents: Sequence[Document], chunks: Sequence[Chunk], vectors: Optional[np.ndarray] = None,
            *, progress: bool = False) -> None:
        ids = self.check_add(documents, chunks, vectors)
        if ids & self._docs.keys():
            self.remove(ids & self._docs.keys())
        tokens = self.tokenizer.tokenize_many([searchable_text(c) for c in chunks], progress=progress)
        with self._lock:
            self.lexical.add(tokens)
            if self.model is not None:
                new = np.asarray(vectors, dtype=np.float32)
                self._vectors = new if self._vectors is None or not len(self._vectors) \
                    else np.vstack([self._vectors, new])
            self._chunks.extend(chunks)
            self._docs.update({d.id: doc_meta(d) for d in documents})
            self.version += 1
            self._reindex()

    def remove(self, doc_ids: Iterable[str]) -> None:
        gone = set(doc_ids) & self._docs.keys()
        if not gone:
            return
        with self._lock:
            rows = np.array([i for i, c in enumerate(self._chunks) if c.doc_id not in gone], dtype=np.int64)
            self.lexical.keep(rows)
            if self._vectors is not None:
                self._vectors = self._vectors[rows]
            self._chunks = [self._chunks[i] for i in rows]
            for d in gone:
                del self._docs[d]
            self.version += 1
            self._reindex()

    def chunk(self, chunk_id: str) -> Chunk:
        return self._chunks[self._row[chunk_id]]

    def chunks(self) -> Sequence[Chunk]:
        return self._chunks

    def documents(self) -> Mapping[str, Mapping[str, Any]]:
        return self._docs

    def fingerprint(self) -> str:
        digests = {d: m["digest"] for d, m in self._docs.items()}
        return fingerprint_of(digests, self.tokenizer.fingerprint(), self.model, self.lexical.params())

    @property
    def has_dense(self) -> bool:
        return self._dense is not None

    # ---- masks

    def allowed(self, user: Optional[User], filters: Optional[Mapping[str, Any]] = None) -> Optional[np.ndarray]:
        """Returns the rows `user` may read that pass `filters` (None when every row passes)."""
        user = user or PUBLIC
        ok = np.array([user.may_read(d, lvl) for d, lvl in self._labels], dtype=bool)
        mask = None if ok.all() else ok[self._label]
        for name, value in (filters or {}).items():
            if name not in FILTER_FIELDS:
                raise ConfigError(f"retrieval filter {name!r} is unknown; valid fields: {', '.join(FILTER_FIELDS)}")
            column = self._columns.get(name)
            if column is None:
                column = self._columns[name] = np.array([getattr(c, name) for c in self._chunks], dtype=object)
            values = list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]
            hit = np.isin(column, np.array(values, dtype=object))
            mask = hit if mask is None else mask & hit
        return mask

    # ---- search

    def bm25(self, query: Union[str, Sequence[str]], k: int, user: Optional[User] = None,
             filters: Optional[Mapping[str, Any]] = None) -> list[Scored]:
        tokens = self.tokenizer(query) if isinstance(query, str) else list(query)
        rows, scores = self.lexical.top(tokens, k, self.allowed(user, filters))
        return [(self._chunks[r], float(s)) for r, s in zip(rows, scores)]

    def dense(self, vector: np.ndarray, k: int, user: Optional[User] = None,
              filters: Optional[Mapping[str, Any]] = None) -> list[Scored]:
        if self._dense is None:
            raise ConfigError("embedding_search: this index was built without vectors (--no-dense); "
                              "rebuild it with dense vectors or use bm25_search")
        rows, scores = self._dense.search(vector, k, self.allowed(user, filters))
        return [(self._chunks[r], float(s)) for r, s in zip(rows, scores)]

    # ---- persistence

    def save(self, directory: Path) -> None:
        """Writes the index to `directory` (files are replaced one by one; callers hold the index lock)."""
        directory.mkdir(parents=True, exist_ok=True)
        with open(directory / "chunks.jsonl", "w", encoding="utf-8") as f:
            for c in self._chunks:
                f.write(json.dumps(asdict(c), ensure_ascii=False) + "\n")
        self.lexical.save(directory)
        if self._vectors is not None:
            np.save(directory / "vectors.npy", self._vectors.astype(np.float16))
        manifest = {"fingerprint": self.fingerprint(), "version": self.version, "model": self.model,
                    "tokenizer": self.tokenizer.config(), "ann_threshold": self.ann_threshold,
                    "documents": self._docs, "chunks": len(self._chunks)}
        tmp = directory / "manifest.json.tmp"
        tmp.write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")
        tmp.replace(directory / "manifest.json")

    @classmethod
    def load(cls, directory: Path) -> "LocalBackend":
        """Returns the backend `save` wrote to `directory`."""
        manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
        backend = cls(Tokenizer.from_config(manifest["tokenizer"]), model=manifest["model"],
                      bm25=Bm25Index.load(directory), ann_threshold=manifest["ann_threshold"])
        with open(directory / "chunks.jsonl", encoding="utf-8") as f:
            backend._chunks = [Chunk(**json.loads(line)) for line in f]
        if backend.model is not None:
            backend._vectors = np.load(directory / "vectors.npy").astype(np.float32)
        backend._docs = manifest["documents"]
        backend.version = manifest["version"]
        backend._reindex()
        return backend
