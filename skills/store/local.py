"""The in-process index backend: BM25 on a sparse inverted index, dense on faiss, permissions as row masks."""
from __future__ import annotations

import hashlib
import io
import json
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from lambdarag import User
from lambdarag.errors import ConfigError, StoreCorrupt
from lambdarag.state import PUBLIC

from .base import FILTER_FIELDS, IndexBackend, Scored, doc_meta, fingerprint_of
from .corpus import Chunk, Document, searchable_text
from .files import clean_temp, write_replace
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
        self.domain: Optional[str] = None   # the corpus profile the chunks were made with (skills.profile)
        self.wiki: Optional[str] = None     # the wiki generation built with these chunks (skills.store.generations)
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

    @property
    def vectors(self) -> Optional[np.ndarray]:
        """Returns the chunk vectors in chunk order, or None for an index built without them."""
        return self._vectors

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

    def bm25_expanded(self, tokens: Sequence[str], chunk_ids: Sequence[str], extra: Bm25Index) -> np.ndarray:
        return self.lexical.scores_with(tokens, np.array([self._row[c] for c in chunk_ids], dtype=np.int64), extra)

    def dense(self, vector: np.ndarray, k: int, user: Optional[User] = None,
              filters: Optional[Mapping[str, Any]] = None) -> list[Scored]:
        if self._dense is None:
            raise ConfigError("embedding_search: this index was built without vectors (--no-dense); "
                              "rebuild it with dense vectors or use bm25_search")
        rows, scores = self._dense.search(vector, k, self.allowed(user, filters))
        return [(self._chunks[r], float(s)) for r, s in zip(rows, scores)]

    # ---- persistence

    def save(self, directory: Path) -> None:
        """Writes the index to `directory` as a new generation; callers hold the index lock.

        Each file of the generation is written by write-rename under a new
        name, then the manifest naming them (with sizes and SHA-256 digests)
        replaces the old one, then older generations' files go (the previous
        one stays for readers that just read its manifest). A kill at any
        moment leaves the previous manifest and its files intact.
        """
        directory.mkdir(parents=True, exist_ok=True)
        generation = next_generation(directory)
        chunks = "".join(json.dumps(asdict(c), ensure_ascii=False) + "\n" for c in self._chunks).encode("utf-8")
        vocab, counts = self.lexical.dump()
        parts = {"chunks": ("jsonl", chunks), "bm25": ("json", vocab), "counts": ("npz", counts)}
        if self._vectors is not None:
            buf = io.BytesIO()
            np.save(buf, self._vectors.astype(np.float16))
            parts["vectors"] = ("npy", buf.getvalue())
        files = {}
        for part, (suffix, data) in parts.items():
            name = f"{part}.{generation}.{suffix}"
            write_replace(directory / name, data)
            files[part] = {"name": name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        manifest = {"format": FORMAT, "generation": generation, "files": files,
                    "fingerprint": self.fingerprint(), "version": self.version, "model": self.model,
                    "tokenizer": self.tokenizer.config(), "ann_threshold": self.ann_threshold, "domain": self.domain, "wiki": self.wiki,
                    "documents": self._docs, "chunks": len(self._chunks)}
        write_replace(directory / MANIFEST, json.dumps(manifest, ensure_ascii=False).encode("utf-8"))
        sweep(directory)

    @classmethod
    def load(cls, directory: Path) -> "LocalBackend":
        """Returns the backend `save` wrote to `directory`, after checking every file against the manifest.

        A file that is missing, of another size or digest, or a count that
        disagrees raises `StoreCorrupt` naming it (see `check_generation`).
        """
        manifest, data = check_generation(directory)
        backend = cls(Tokenizer.from_config(manifest["tokenizer"]), model=manifest["model"],
                      bm25=Bm25Index.from_dump(data["bm25"], data["counts"]), ann_threshold=manifest["ann_threshold"])
        backend._chunks = [Chunk(**json.loads(line)) for line in data["chunks"].decode("utf-8").splitlines()]
        if backend.model is not None:
            backend._vectors = np.load(io.BytesIO(data["vectors"])).astype(np.float32)
        rows = {"chunks": len(backend._chunks), "bm25 rows": backend.lexical.size,
                "vectors": len(backend._vectors) if backend._vectors is not None else manifest["chunks"]}
        wrong = {k: n for k, n in rows.items() if n != manifest["chunks"]}
        if wrong:
            raise StoreCorrupt(f"{directory}: manifest says {manifest['chunks']} chunks but found "
                               f"{', '.join(f'{n} {k}' for k, n in wrong.items())}")
        backend._docs = manifest["documents"]
        backend.domain = manifest.get("domain")
        backend.wiki = manifest.get("wiki")
        backend.version = manifest["version"]
        backend._reindex()
        return backend


FORMAT = 2
MANIFEST = "manifest.json"
PARTS = {"chunks", "bm25", "counts"}


def has_manifest(directory: Path) -> bool:
    """Returns whether an index was ever saved in `directory` (its manifest exists)."""
    return (directory / MANIFEST).is_file()


def read_manifest(directory: Path) -> dict:
    """Returns the manifest of the index in `directory`; an unreadable or old-format one raises `StoreCorrupt`."""
    path = directory / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise StoreCorrupt(f"{path}: unreadable index manifest ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise StoreCorrupt(f"{path}: not a format-{FORMAT} index manifest (built by an older version)")
    return manifest


def next_generation(directory: Path) -> int:
    """Returns the number of the generation to write next (1 when there is no valid manifest)."""
    try:
        return read_manifest(directory)["generation"] + 1
    except StoreCorrupt:
        return 1


def check_generation(directory: Path) -> tuple[dict, dict[str, bytes]]:
    """Returns the manifest and the bytes of each file it names, each checked for size and SHA-256 digest."""
    manifest = read_manifest(directory)
    files = manifest.get("files") or {}
    need = PARTS | ({"vectors"} if manifest.get("model") else set())
    if need - files.keys():
        raise StoreCorrupt(f"{directory / MANIFEST}: names no {', '.join(sorted(need - files.keys()))} file")
    data = {}
    for part, entry in files.items():
        path = directory / entry["name"]
        try:
            raw = path.read_bytes()
        except OSError as e:
            raise StoreCorrupt(f"{path}: {part} file of generation {manifest['generation']} unreadable ({e})") from None
        if len(raw) != entry["bytes"] or hashlib.sha256(raw).hexdigest() != entry["sha256"]:
            raise StoreCorrupt(f"{path}: {part} file has {len(raw)} bytes / digest other than the manifest's "
                               f"{entry['bytes']} bytes (half-written or changed)")
        data[part] = raw
    return manifest, data


def sweep(directory: Path) -> list[Path]:
    """Returns the files removed from `directory`: temp files, and generation files other than the current one and
    the one before it (a reader that read the previous manifest a moment ago may still be loading those).

    Call it only while holding the index lock (a writer's temp files are not orphans).
    """
    try:
        current = read_manifest(directory)["generation"]
    except StoreCorrupt:
        current = None      # no valid generation: leave its files for the rebuild to replace
    gone = clean_temp(directory)
    for path in directory.glob("*.*.*"):
        part, generation, _ = path.name.split(".", 2)
        if current is not None and part in PARTS | {"vectors"} and generation not in (str(current), str(current - 1)):
            path.unlink(missing_ok=True)
            gone.append(path)
    return gone
