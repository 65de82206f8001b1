"""The in-process index backend: BM25 on a sparse inverted index, dense on faiss, permissions as row masks."""
from __future__ import annotations

import hashlib
import io
import json
import threading
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from lambdarag import User
from lambdarag.errors import ConfigError, StoreCorrupt
from lambdarag.state import PUBLIC

from . import chunk_store
from .base import FILTER_FIELDS, IndexBackend, Scored, doc_meta, fingerprint_of
from .chunk_store import ChunkStore
from .corpus import Chunk, Document, searchable_text
from .files import clean_temp, write_replace
from .vectors import ANN_THRESHOLD, DenseIndex
from .bm25 import Bm25Index
from .tokenize import Tokenizer


class LocalBackend(IndexBackend):
    """In-process backend: BM25 on a sparse inverted index, dense on faiss, permissions as row masks.

    Built in memory, it holds chunks, documents and float32 vectors; opened from disk (`load`), it maps the
    saved arrays and reads chunks and documents from the chunk store per hit, and reads them whole only
    before a change (`_materialise`).
    """

    def __init__(self, tokenizer: Optional[Tokenizer] = None, *, model: Optional[str] = None,
                 bm25: Optional[Bm25Index] = None, ann_threshold: int = ANN_THRESHOLD) -> None:
        self.tokenizer = tokenizer or Tokenizer()
        self.model = model
        self.lexical = bm25 or Bm25Index()
        self.ann_threshold = ann_threshold
        self.domain: Optional[str] = None   # the corpus profile the chunks were made with (skills.profile)
        self.wiki: Optional[str] = None     # the wiki generation built with these chunks (skills.store.generations)
        self._chunks: Sequence[Chunk] = []        # a ChunkStore once opened
        self._docs: Optional[dict[str, dict]] = {}  # None: in the chunk store, not read yet
        self._vectors: Optional[np.ndarray] = None  # float32; the stored float16, memory-mapped, once opened
        self._store: Optional[ChunkStore] = None
        self._ann_path: Optional[Path] = None
        self._fingerprint: Optional[str] = None     # the manifest's, while the opened index is unchanged
        self._dense: Optional[DenseIndex] = None
        self._lock = threading.Lock()
        self.version = 0
        self._reindex()

    # ---- content

    def _reindex(self) -> None:
        if self._store is None:
            self._row = {c.id: i for i, c in enumerate(self._chunks)}
            labels: dict[tuple, int] = {}
            self._label = np.array([labels.setdefault((c.department, c.security_level), len(labels))
                                    for c in self._chunks], dtype=np.int32)
            self._labels = list(labels)
        self._columns: dict[str, np.ndarray] = {}
        self._expanded: tuple[tuple[str, ...], np.ndarray] = ((), np.zeros(0, dtype=np.int64))
        self._dense = DenseIndex(self._vectors, self.ann_threshold, self._ann_path) \
            if self._vectors is not None else None
        if self.lexical.size:
            self.lexical.scores(())  # derive idf and norms now, not inside concurrent queries

    def add(self, documents: Sequence[Document], chunks: Sequence[Chunk], vectors: Optional[np.ndarray] = None,
            *, progress: bool = False) -> None:
        ids = self.check_add(documents, chunks, vectors)
        self._materialise()
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
        gone = set(doc_ids) & self.documents().keys()
        if not gone:
            return
        self._materialise()
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

    def set_ann_threshold(self, size: int) -> None:
        """Makes dense search approximate above `size` vectors from now on (the next `save` saves its IVF index)."""
        if size != self.ann_threshold:
            self.ann_threshold, self._ann_path = size, None
            self._reindex()

    def _materialise(self) -> None:
        """Reads an opened index's chunks, documents and vectors into memory, before a change."""
        if self._store is None:
            return
        self._docs = dict(self.documents())
        self._chunks = list(self._store)
        if self._vectors is not None:
            self._vectors = np.asarray(self._vectors, dtype=np.float32)
        self._store, self._ann_path, self._fingerprint = None, None, None

    def _take(self, rows: Iterable[int]) -> list[Chunk]:
        """Returns the chunks at these rows (one read of the chunk store for an opened index)."""
        return self._store.take(rows) if self._store is not None else [self._chunks[r] for r in rows]

    def chunk(self, chunk_id: str) -> Chunk:
        return self._chunks[self._row[chunk_id]]

    @property
    def vectors(self) -> Optional[np.ndarray]:
        """Returns the chunk vectors in chunk order (float16 as stored, once opened), or None for an index built
        without them."""
        return self._vectors

    def chunks(self) -> Sequence[Chunk]:
        return self._chunks

    def documents(self) -> Mapping[str, Mapping[str, Any]]:
        if self._docs is None:
            self._docs = self._store.documents()
        return self._docs

    def fingerprint(self) -> str:
        if self._fingerprint is not None:
            return self._fingerprint
        digests = {d: m["digest"] for d, m in self.documents().items()}
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
            column = self._column(name)
            values = list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]
            hit = np.isin(column, np.array(values, dtype=object))
            mask = hit if mask is None else mask & hit
        return mask

    def _column(self, name: str) -> np.ndarray:
        """Returns one filterable field of every chunk in row order, read once per change of the index."""
        column = self._columns.get(name)
        if column is None:
            column = self._columns[name] = self._store.column(name) if self._store is not None \
                else np.array([getattr(c, name) for c in self._chunks], dtype=object)
        return column

    def document_words(self) -> tuple[list[str], Bm25Index]:
        """Sums the lexical index's term counts per source: no chunk is read or tokenised."""
        column = self._column("source")
        code = {s: i for i, s in enumerate(dict.fromkeys(s for s in column if s))}
        groups = np.array([code.get(s, -1) for s in column], dtype=np.int64)
        return list(code), self.lexical.grouped(groups, len(code))

    # ---- search

    def bm25(self, query: Union[str, Sequence[str]], k: int, user: Optional[User] = None,
             filters: Optional[Mapping[str, Any]] = None) -> list[Scored]:
        tokens = self.tokenizer(query) if isinstance(query, str) else list(query)
        rows, scores = self.lexical.top(tokens, k, self.allowed(user, filters))
        return [(c, float(s)) for c, s in zip(self._take(rows), scores)]

    def bm25_expanded(self, tokens: Sequence[str], chunk_ids: Sequence[str], extra: Bm25Index) -> np.ndarray:
        """The rows of the last `chunk_ids` are kept (a learned index asks with the same ids for every question,
        and an opened index finds each row in its chunk store)."""
        ids = tuple(chunk_ids)
        known, rows = self._expanded
        if ids != known:
            rows = np.array([self._row[c] for c in ids], dtype=np.int64)
            self._expanded = ids, rows
        return self.lexical.scores_with(tokens, rows, extra)

    def dense(self, vector: np.ndarray, k: int, user: Optional[User] = None,
              filters: Optional[Mapping[str, Any]] = None) -> list[Scored]:
        if self._dense is None:
            raise ConfigError("embedding_search: this index was built without vectors (--no-dense); "
                              "rebuild it with dense vectors or use bm25_search")
        rows, scores = self._dense.search(vector, k, self.allowed(user, filters))
        return [(c, float(s)) for c, s in zip(self._take(rows), scores)]

    # ---- persistence

    def save(self, directory: Path) -> None:
        """Writes the index to `directory` as a new generation; callers hold the index lock.

        Each file of the generation is written by write-rename under a new
        name, then the manifest naming them (with their sizes and sampled
        digests, `file_check`) replaces the old one, then older generations'
        files go (the previous one stays for readers that just read its
        manifest). A kill at any moment leaves the previous manifest and its
        files intact. What opening needs is saved ready to map: the chunk
        store, BM25's prepared postings, the label of each row, the float16
        vectors and, above `ann_threshold` vectors, the IVF index.
        """
        directory.mkdir(parents=True, exist_ok=True)
        generation = next_generation(directory)
        files: dict[str, dict] = {}

        def written(part: str, suffix: str, data: Optional[bytes] = None) -> Path:
            path = directory / f"{part}.{generation}.{suffix}"
            if data is not None:
                write_replace(path, data)
            files[part] = {"name": path.name, **file_check(path)}
            return path

        def array(part: str, values: np.ndarray) -> None:
            buf = io.BytesIO()
            np.save(buf, np.asarray(values))
            written(part, "npy", buf.getvalue())

        chunk_store.write(directory / f"chunks.{generation}.sqlite", self._chunks, self.documents())
        written("chunks", "sqlite")
        meta, arrays = self.lexical.arrays()
        written("bm25", "json", json.dumps(meta, ensure_ascii=False).encode("utf-8"))
        for name, values in arrays.items():
            array(f"bm25-{name}", values)
        array("labels", self._label)
        if self._vectors is not None:
            array("vectors", np.asarray(self._vectors).astype(np.float16))
            if self._dense is not None and self._dense.approximate:
                self._dense.save_ann(directory / f"ann.{generation}.faiss")
                written("ann", "faiss")
        manifest = {"format": FORMAT, "generation": generation, "files": files,
                    "fingerprint": self.fingerprint(), "version": self.version, "model": self.model,
                    "tokenizer": self.tokenizer.config(), "ann_threshold": self.ann_threshold, "domain": self.domain,
                    "wiki": self.wiki, "labels": [list(label) for label in self._labels],
                    "documents": len(self.documents()), "chunks": len(self._chunks)}
        write_replace(directory / MANIFEST, json.dumps(manifest, ensure_ascii=False).encode("utf-8"))
        sweep(directory)

    @classmethod
    def load(cls, directory: Path) -> "LocalBackend":
        """Returns the backend `save` wrote to `directory`, its arrays memory-mapped and its chunks left on disk.

        Opening costs the same whatever the index's size: each file is checked
        against the manifest by size and sampled digest (`check_files`), and a
        file that is missing or changed, or a count that disagrees, raises
        `StoreCorrupt` naming it. An index an older version wrote (format 2)
        opens whole into memory (`load_legacy`); `open_index` migrates it.
        """
        manifest = read_manifest(directory)
        if manifest["format"] == LEGACY_FORMAT:
            return cls.load_legacy(directory, manifest)
        paths = check_files(directory, manifest)
        meta = json.loads(paths["bm25"].read_text(encoding="utf-8"))
        lexical = Bm25Index.from_arrays(meta, {part[len("bm25-"):]: np.load(path, mmap_mode="r")
                                               for part, path in paths.items() if part.startswith("bm25-")})
        backend = cls(Tokenizer.from_config(manifest["tokenizer"]), model=manifest["model"], bm25=lexical,
                      ann_threshold=manifest["ann_threshold"])
        backend._store = ChunkStore(paths["chunks"], manifest["chunks"])
        backend._chunks, backend._docs, backend._row = backend._store, None, backend._store.rows
        backend._label = np.load(paths["labels"], mmap_mode="r")
        backend._labels = [tuple(label) for label in manifest["labels"]]
        if backend.model is not None:
            backend._vectors = np.load(paths["vectors"], mmap_mode="r")
            backend._ann_path = paths.get("ann")
        rows = {"bm25 rows": backend.lexical.size, "labels": len(backend._label),
                "vectors": len(backend._vectors) if backend._vectors is not None else manifest["chunks"]}
        backend._check_count(directory, manifest, rows)
        backend.domain = manifest.get("domain")
        backend.wiki = manifest.get("wiki")
        backend.version = manifest["version"]
        backend._fingerprint = manifest["fingerprint"]
        backend._reindex()
        return backend

    @classmethod
    def load_legacy(cls, directory: Path, manifest: dict) -> "LocalBackend":
        """Returns a format-2 index read whole into memory, every file checked for size and SHA-256 digest."""
        data = read_legacy(directory, manifest)
        backend = cls(Tokenizer.from_config(manifest["tokenizer"]), model=manifest["model"],
                      bm25=Bm25Index.from_dump(data["bm25"], data["counts"]), ann_threshold=manifest["ann_threshold"])
        backend._chunks = [Chunk(**json.loads(line)) for line in data["chunks"].decode("utf-8").splitlines()]
        if backend.model is not None:
            backend._vectors = np.load(io.BytesIO(data["vectors"])).astype(np.float32)
        rows = {"chunks": len(backend._chunks), "bm25 rows": backend.lexical.size,
                "vectors": len(backend._vectors) if backend._vectors is not None else manifest["chunks"]}
        backend._check_count(directory, manifest, rows)
        backend._docs = manifest["documents"]
        backend.domain = manifest.get("domain")
        backend.wiki = manifest.get("wiki")
        backend.version = manifest["version"]
        backend._reindex()
        return backend

    @staticmethod
    def _check_count(directory: Path, manifest: dict, rows: Mapping[str, int]) -> None:
        wrong = {k: n for k, n in rows.items() if n != manifest["chunks"]}
        if wrong:
            raise StoreCorrupt(f"{directory}: manifest says {manifest['chunks']} chunks but found "
                               f"{', '.join(f'{n} {k}' for k, n in wrong.items())}")


FORMAT = 3
LEGACY_FORMAT = 2
"""The format before the chunk store and saved postings: still opened (whole), and migrated by `open_index`."""
MANIFEST = "manifest.json"
BM25_ARRAYS = ("starts", "rows", "weights", "counts", "doclen", "idf")
PARTS = {"chunks", "bm25", "labels", *(f"bm25-{a}" for a in BM25_ARRAYS)}
"""The files every generation has; a dense one adds vectors (and ann above the ANN threshold)."""
LEGACY_PARTS = {"chunks", "bm25", "counts"}
SAMPLE = 1 << 16
"""Bytes at each end of a file that its sampled digest covers."""


def file_check(path: Path) -> dict:
    """Returns what the manifest records of a written file: its size and a SHA-256 of its first and last
    `SAMPLE` bytes, so opening checks any file in constant time (a truncated, grown or rewritten file fails)."""
    size = path.stat().st_size
    h = hashlib.sha256(str(size).encode())
    with open(path, "rb") as f:
        h.update(f.read(SAMPLE))
        if size > SAMPLE:
            f.seek(max(SAMPLE, size - SAMPLE))
            h.update(f.read(SAMPLE))
    return {"bytes": size, "sample_sha256": h.hexdigest()}


def has_manifest(directory: Path) -> bool:
    """Returns whether an index was ever saved in `directory` (its manifest exists)."""
    return (directory / MANIFEST).is_file()


def read_manifest(directory: Path) -> dict:
    """Returns the manifest of the index in `directory`; an unreadable or unknown-format one raises `StoreCorrupt`."""
    path = directory / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise StoreCorrupt(f"{path}: unreadable index manifest ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") not in (FORMAT, LEGACY_FORMAT):
        raise StoreCorrupt(f"{path}: not a format-{FORMAT} or format-{LEGACY_FORMAT} index manifest "
                           f"(built by another version)")
    return manifest


def next_generation(directory: Path) -> int:
    """Returns the number of the generation to write next (1 when there is no valid manifest)."""
    try:
        return read_manifest(directory)["generation"] + 1
    except StoreCorrupt:
        return 1


def listed_files(directory: Path, manifest: dict, parts: set[str]) -> dict[str, dict]:
    """Returns the manifest's file entries by part, after checking it names every part an index of its kind needs."""
    files = manifest.get("files") or {}
    need = parts | ({"vectors"} if manifest.get("model") else set())
    if need - files.keys():
        raise StoreCorrupt(f"{directory / MANIFEST}: names no {', '.join(sorted(need - files.keys()))} file")
    return files


def unreadable(path: Path, part: str, manifest: dict, error: OSError) -> StoreCorrupt:
    """Returns the error for a file the manifest names that cannot be read."""
    return StoreCorrupt(f"{path}: {part} file of generation {manifest['generation']} unreadable ({error})")


def check_files(directory: Path, manifest: dict) -> dict[str, Path]:
    """Returns the path of each file the manifest names, each checked for size and sampled digest."""
    paths = {}
    for part, entry in listed_files(directory, manifest, PARTS).items():
        path = directory / entry["name"]
        try:
            found = file_check(path)
        except OSError as e:
            raise unreadable(path, part, manifest, e) from None
        if found != {"bytes": entry["bytes"], "sample_sha256": entry["sample_sha256"]}:
            raise StoreCorrupt(f"{path}: {part} file has {found['bytes']} bytes / digest other than the manifest's "
                               f"{entry['bytes']} bytes (half-written or changed)")
        paths[part] = path
    return paths


def read_legacy(directory: Path, manifest: dict) -> dict[str, bytes]:
    """Returns the bytes of each file a format-2 manifest names, each checked for size and SHA-256 digest."""
    data = {}
    for part, entry in listed_files(directory, manifest, LEGACY_PARTS).items():
        path = directory / entry["name"]
        try:
            raw = path.read_bytes()
        except OSError as e:
            raise unreadable(path, part, manifest, e) from None
        if len(raw) != entry["bytes"] or hashlib.sha256(raw).hexdigest() != entry["sha256"]:
            raise StoreCorrupt(f"{path}: {part} file has {len(raw)} bytes / digest other than the manifest's "
                               f"{entry['bytes']} bytes (half-written or changed)")
        data[part] = raw
    return data


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
        if current is not None and part in PARTS | LEGACY_PARTS | {"vectors", "ann"} \
                and generation not in (str(current), str(current - 1)):
            path.unlink(missing_ok=True)
            gone.append(path)
    return gone
