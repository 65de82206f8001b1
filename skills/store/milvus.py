"""The Milvus index backend: chunk text, metadata, a BM25 (jieba) field and a dense field in one collection.

Same contract as `skills.backend.IndexBackend`; what differs:
- BM25 is Milvus's own: the engine tokenises `search_text` (title + text, as
  `searchable_text`) with its jieba analyzer, set up from our `Tokenizer`
  (exact mode, its stopwords plus punctuation as stop words, its user words as
  dictionary entries). Milvus scores with idf = log(1 + (N − n + 0.5)/(n + 0.5)),
  not Okapi's floored idf, so scores differ from `LocalBackend` while rankings
  mostly agree (bench/MILVUS.md measures how much).
- Permission and metadata filters become one Milvus filter expression,
  evaluated inside the engine search (`filter_expression`).
- Documents live in a companion collection `<collection>_docs`; a document's row
  is written only after all its chunks, so an interrupted `add` is resumed by
  adding again the documents without a row. Chunks are upserted by chunk id:
  re-indexing never duplicates rows.
- `uri`: a file path runs embedded milvus-lite; ``http(s)://`` talks to a Milvus
  server, with the token from $MILVUS_TOKEN (never from YAML).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Optional, Sequence, Union

import numpy as np

from lambdarag import User
from lambdarag.errors import ConfigError
from lambdarag.state import PUBLIC

from .base import FILTER_FIELDS, IndexBackend, Scored, doc_meta, fingerprint_of
from .corpus import Chunk, Document, searchable_text
from .tokenize import Tokenizer

MANIFEST_ID = "\x00manifest"  # the docs-collection row holding tokenizer, model and version
NULLABLE = ("date", "department")
PUNCTUATION = list("，。、；：？！“”‘’（）《》〈〉【】〔〕「」『』—…·,.;:?!\"'()[]{}<>-_/\\|~`@#$%^&*+=")
VARCHAR_MAX = 65535
CHUNK_FIELDS = ["id", "doc_id", "text", "source", "title", "section", "heading", "date", "family", "kind",
                "department", "security_level", "meta"]
K1, B = 1.5, 0.75

_CLIENTS: dict[str, Any] = {}
_CLIENTS_LOCK = threading.Lock()


def client_for(uri: str) -> Any:
    """Returns one shared `MilvusClient` per URI (milvus-lite allows one server per file)."""
    try:
        from pymilvus import MilvusClient
    except ImportError:
        raise ConfigError("retrieval.backend kind 'milvus' needs the milvus extra: "
                          "pip install 'lambdarag[milvus]'") from None
    remote = uri.startswith(("http://", "https://", "tcp://", "grpc://"))
    key = uri if remote else str(Path(uri).resolve())
    with _CLIENTS_LOCK:
        if key not in _CLIENTS:
            if remote:
                _CLIENTS[key] = MilvusClient(uri=uri, token=os.environ.get("MILVUS_TOKEN", ""),
                                             db_name=os.environ.get("MILVUS_DB", "default"))
            else:
                Path(key).parent.mkdir(parents=True, exist_ok=True)
                _CLIENTS[key] = MilvusClient(key)
        return _CLIENTS[key]


def collection_name(index: str) -> str:
    """Returns the Milvus collection of a named index: letters, digits and _ only, unique per name."""
    plain = re.sub(r"[^0-9A-Za-z_]", "_", index)
    if plain == index:
        return f"lambdarag_{plain}"
    return f"lambdarag_{plain}_{hashlib.sha1(index.encode()).hexdigest()[:8]}"


def _literal(value: Any) -> str:
    """Returns a Milvus expression literal (strings double-quoted with JSON escapes)."""
    return json.dumps(value, ensure_ascii=False)


def access_expression(user: Optional[User]) -> str:
    """Returns the filter that admits exactly the chunks `user.may_read` admits."""
    user = user or PUBLIC
    if user.all_access:
        return "security_level >= 0"                 # every chunk: levels are integers ≥ 0 (the access schema)
    departments = sorted(user.departments)
    dept = "department is null" + (f" or department in {_literal(departments)}" if departments else "")
    return f"security_level <= {int(user.security_level)} and ({dept})"


def filter_expression(user: Optional[User], filters: Optional[Mapping[str, Any]] = None) -> str:
    """Returns the Milvus filter for a user's rights and chunk-field filters (a value or a list of them)."""
    parts = [access_expression(user)]
    for name, value in (filters or {}).items():
        if name not in FILTER_FIELDS:
            raise ConfigError(f"retrieval filter {name!r} is unknown; valid fields: {', '.join(FILTER_FIELDS)}")
        values = list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]
        present = [v for v in values if v is not None]
        alternatives = [f"{name} in {_literal(present)}"]
        if len(present) < len(values) and name in NULLABLE:
            alternatives.append(f"{name} is null")
        parts.append("(" + " or ".join(alternatives) + ")")
    return " and ".join(parts)


def analyzer_params(tokenizer: Tokenizer) -> dict:
    """Returns Milvus analyzer settings that tokenise like `tokenizer` as far as Milvus's jieba allows."""
    return {"tokenizer": {"type": "jieba", "mode": "exact", "hmm": tokenizer.hmm,
                          "dict": ["_default_", *tokenizer.user_words]},
            "filter": ["lowercase", {"type": "stop", "stop_words": sorted(tokenizer.stopwords | set(PUNCTUATION))}]}


def _chunk_of(entity: Mapping[str, Any]) -> Chunk:
    return Chunk(**{f: entity.get(f) for f in CHUNK_FIELDS if f != "meta"}, meta=dict(entity.get("meta") or {}))


class MilvusBackend(IndexBackend):
    """Milvus backend: BM25 and dense search, filters and permissions evaluated by the engine.

    Build one with `MilvusBackend.create(uri, name, tokenizer, model=…, dim=…)`,
    open a built one with `MilvusBackend.open(uri, name)`.
    """

    def __init__(self, client: Any, name: str, tokenizer: Tokenizer, model: Optional[str], dim: Optional[int],
                 version: int = 0) -> None:
        self.client = client
        self.name = name
        self.collection = collection_name(name)
        self.docs_collection = self.collection + "_docs"
        self.tokenizer = tokenizer
        self.model = model
        self.dim = dim
        self.version = version
        self._docs: dict[str, dict] = {}
        self._fingerprint: Optional[str] = None
        self.domain: Optional[str] = None   # the corpus profile the chunks were made with (skills.profile)

    # ---- lifecycle

    @classmethod
    def create(cls, uri: str, name: str, tokenizer: Optional[Tokenizer] = None, *, model: Optional[str] = None,
               dim: Optional[int] = None) -> "MilvusBackend":
        """Returns an empty index `name` at `uri`, replacing any collection of that name."""
        if (model is None) != (dim is None):
            raise ConfigError(f"milvus index {name!r}: give both model and dim for a dense index, or neither")
        backend = cls(client_for(uri), name, tokenizer or Tokenizer(), model, dim)
        for coll in (backend.collection, backend.docs_collection):
            if backend.client.has_collection(coll):
                backend.client.drop_collection(coll)
        backend._create_collections()
        backend._write_manifest()
        return backend

    @classmethod
    def open(cls, uri: str, name: str) -> "MilvusBackend":
        """Returns the index `name` at `uri`, or fails naming the indexes that exist there."""
        client = client_for(uri)
        coll = collection_name(name)
        if not (client.has_collection(coll) and client.has_collection(coll + "_docs")):
            have = sorted(c.removeprefix("lambdarag_") for c in client.list_collections()
                          if c.startswith("lambdarag_") and not c.endswith("_docs"))
            raise ConfigError(f"no milvus index named {name!r} at {uri}; indexes there: {', '.join(have) or 'none'} "
                              f"(build one with: lambdarag --config FILE index --corpus PATH --name {name})")
        for c in (coll, coll + "_docs"):
            client.load_collection(c)
        rows = client.get(coll + "_docs", ids=[MANIFEST_ID], output_fields=["meta"])
        if not rows:
            raise ConfigError(f"milvus index {name!r} at {uri} has no manifest row; rebuild it")
        manifest = rows[0]["meta"]
        backend = cls(client, name, Tokenizer.from_config(manifest["tokenizer"]), manifest["model"],
                      manifest["dim"], manifest["version"])
        backend.domain = manifest.get("domain")
        backend._docs = {r["doc_id"]: dict(r["meta"]) for r in backend._scan(backend.docs_collection,
                                                                             ["doc_id", "meta"])
                         if r["doc_id"] != MANIFEST_ID}
        return backend

    def _create_collections(self) -> None:
        from pymilvus import DataType, Function, FunctionType

        c = self.client
        s = c.create_schema(auto_id=False)
        s.add_field("id", DataType.VARCHAR, is_primary=True, max_length=2048)
        s.add_field("doc_id", DataType.VARCHAR, max_length=2048)
        s.add_field("text", DataType.VARCHAR, max_length=VARCHAR_MAX)
        s.add_field("search_text", DataType.VARCHAR, max_length=VARCHAR_MAX, enable_analyzer=True,
                    analyzer_params=analyzer_params(self.tokenizer))
        for f in ("source", "title", "section", "heading", "family", "kind"):
            s.add_field(f, DataType.VARCHAR, max_length=4096)
        s.add_field("date", DataType.VARCHAR, max_length=32, nullable=True)
        s.add_field("department", DataType.VARCHAR, max_length=512, nullable=True)
        s.add_field("security_level", DataType.INT64)
        s.add_field("meta", DataType.JSON)
        s.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        s.add_function(Function(name="bm25", function_type=FunctionType.BM25,
                                input_field_names=["search_text"], output_field_names=["sparse"]))
        ix = c.prepare_index_params()
        ix.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                     params={"bm25_k1": K1, "bm25_b": B})
        if self.dim:
            s.add_field("vector", DataType.FLOAT_VECTOR, dim=int(self.dim))
            ix.add_index("vector", index_type="HNSW", metric_type="IP", params={"M": 16, "efConstruction": 200})
        for f in ("doc_id", "family", "date", "department", "security_level", "kind"):
            ix.add_index(f, index_type="INVERTED")
        c.create_collection(self.collection, schema=s, index_params=ix)
        d = c.create_schema(auto_id=False)
        d.add_field("doc_id", DataType.VARCHAR, is_primary=True, max_length=2048)
        d.add_field("meta", DataType.JSON)
        d.add_field("unused", DataType.FLOAT_VECTOR, dim=2)  # Milvus requires a vector field in every collection
        dx = c.prepare_index_params()
        dx.add_index("unused", index_type="FLAT", metric_type="L2")
        c.create_collection(self.docs_collection, schema=d, index_params=dx)

    def _write_manifest(self) -> None:
        meta = {"tokenizer": self.tokenizer.config(), "model": self.model, "dim": self.dim, "version": self.version,
                "domain": self.domain}
        self.client.upsert(self.docs_collection, [{"doc_id": MANIFEST_ID, "meta": meta, "unused": [0.0, 0.0]}])

    def _scan(self, collection: str, fields: list[str], expr: str = "") -> Iterator[dict]:
        it = self.client.query_iterator(collection, batch_size=1000, filter=expr, output_fields=fields)
        try:
            while batch := it.next():
                yield from batch
        finally:
            it.close()

    # ---- content

    def add(self, documents: Sequence[Document], chunks: Sequence[Chunk], vectors: Optional[np.ndarray] = None,
            *, progress: bool = False, batch_size: int = 512) -> None:
        """Upserts documents and their chunks in batches of whole documents (replacing earlier versions)."""
        self.check_add(documents, chunks, vectors)
        rows_of: dict[str, list[int]] = {d.id: [] for d in documents}
        for i, c in enumerate(chunks):
            rows_of[c.doc_id].append(i)
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=len(chunks), desc=f"milvus {self.name}", unit="chunk")
        batch: list[Document] = []
        for doc in documents:
            batch.append(doc)
            if sum(len(rows_of[d.id]) for d in batch) >= batch_size:
                self._add_batch(batch, chunks, vectors, rows_of, bar)
                batch = []
        if batch:
            self._add_batch(batch, chunks, vectors, rows_of, bar)
        if bar is not None:
            bar.close()
        self._changed()

    def _add_batch(self, docs: list[Document], chunks: Sequence[Chunk], vectors: Optional[np.ndarray],
                   rows_of: Mapping[str, list[int]], bar: Any) -> None:
        ids = [d.id for d in docs]
        self.client.delete(self.collection, filter=f"doc_id in {_literal(ids)}")  # chunks an edit dropped
        rows = []
        for d in docs:
            for i in rows_of[d.id]:
                rows.append(self._row(chunks[i], None if vectors is None else vectors[i]))
        if rows:
            self.client.upsert(self.collection, rows)
        self.client.upsert(self.docs_collection, [{"doc_id": d.id, "meta": doc_meta(d), "unused": [0.0, 0.0]}
                                                  for d in docs])
        self._docs.update({d.id: doc_meta(d) for d in docs})
        if bar is not None:
            bar.update(len(rows))

    def _row(self, chunk: Chunk, vector: Optional[np.ndarray]) -> dict:
        text = searchable_text(chunk)
        if len(text.encode("utf-8")) > VARCHAR_MAX:
            raise ConfigError(f"milvus index add: chunk {chunk.id!r} has {len(text.encode('utf-8'))} bytes of text; "
                              f"Milvus holds at most {VARCHAR_MAX} — split it into smaller chunks")
        row = {"id": chunk.id, "doc_id": chunk.doc_id, "text": chunk.text, "search_text": text,
               "source": chunk.source, "title": chunk.title, "section": chunk.section, "heading": chunk.heading,
               "family": chunk.family, "kind": chunk.kind, "date": chunk.date, "department": chunk.department,
               "security_level": int(chunk.security_level), "meta": chunk.meta}
        if self.dim:
            row["vector"] = np.asarray(vector, dtype=np.float32).tolist()
        return row

    def remove(self, doc_ids: Iterable[str]) -> None:
        gone = sorted(set(doc_ids) & self._docs.keys())
        if not gone:
            return
        for start in range(0, len(gone), 1000):
            part = gone[start:start + 1000]
            self.client.delete(self.collection, filter=f"doc_id in {_literal(part)}")
            self.client.delete(self.docs_collection, ids=part)
        for d in gone:
            del self._docs[d]
        self._changed()

    def _changed(self) -> None:
        self.version += 1
        self._fingerprint = None
        self._write_manifest()
        for coll in (self.collection, self.docs_collection):
            self.client.flush(coll)  # sealed segments get cached indexes; unflushed rows are re-indexed per search

    def chunk(self, chunk_id: str) -> Chunk:
        rows = self.client.get(self.collection, ids=[chunk_id], output_fields=CHUNK_FIELDS)
        if not rows:
            raise KeyError(chunk_id)
        return _chunk_of(rows[0])

    def chunks(self) -> Sequence[Chunk]:
        """Returns every chunk, by document in `documents()` order (reads the whole collection)."""
        order = {d: i for i, d in enumerate(self._docs)}
        found = [_chunk_of(r) for r in self._scan(self.collection, CHUNK_FIELDS)]
        return sorted(found, key=lambda c: (order.get(c.doc_id, len(order)), c.id))

    def documents(self) -> Mapping[str, Mapping[str, Any]]:
        return self._docs

    def params(self) -> dict:
        """Returns what decides BM25 scores here (engine, analyzer, k1, b)."""
        return {"engine": "milvus", "k1": K1, "b": B, "analyzer": analyzer_params(self.tokenizer)["tokenizer"]["mode"]}

    def fingerprint(self) -> str:
        if self._fingerprint is None:
            digests = {d: m["digest"] for d, m in self._docs.items()}
            self._fingerprint = fingerprint_of(digests, self.tokenizer.fingerprint(), self.model, self.params())
        return self._fingerprint

    @property
    def has_dense(self) -> bool:
        return self.dim is not None

    # ---- search

    def _search(self, data: list, field: str, k: int, expr: str, params: dict) -> list[dict]:
        if k <= 0:
            return []
        result = self.client.search(self.collection, data=data, anns_field=field, limit=int(k), filter=expr,
                                    output_fields=CHUNK_FIELDS, search_params=params)
        return list(result[0])

    def bm25(self, query: Union[str, Sequence[str]], k: int, user: Optional[User] = None,
             filters: Optional[Mapping[str, Any]] = None) -> list[Scored]:
        text = query if isinstance(query, str) else " ".join(query)
        if not text.strip():
            return []
        found = self._search([text], "sparse", k, filter_expression(user, filters), {"metric_type": "BM25"})
        # milvus-lite reports BM25 as a negated distance, a Milvus server as a positive score; BM25 is never negative
        scored = [(_chunk_of(h["entity"]), abs(float(h["distance"]))) for h in found]
        return [(c, s) for c, s in scored if s > 0]

    def dense(self, vector: np.ndarray, k: int, user: Optional[User] = None,
              filters: Optional[Mapping[str, Any]] = None) -> list[Scored]:
        if not self.has_dense:
            raise ConfigError("embedding_search: this milvus index was built without vectors (--no-dense); "
                              "rebuild it with dense vectors or use bm25_search")
        found = self._search([np.asarray(vector, dtype=np.float32).tolist()], "vector", k,
                             filter_expression(user, filters), {"metric_type": "IP", "params": {"ef": max(64, int(k))}})
        return [(_chunk_of(h["entity"]), float(h["distance"])) for h in found]

    def hybrid(self, query: str, vector: np.ndarray, k: int, user: Optional[User] = None,
               filters: Optional[Mapping[str, Any]] = None, *, depth: Optional[int] = None,
               rrf_k: int = 60) -> list[Scored]:
        """Returns the k best chunks by RRF of BM25 and dense rankings (each `depth` deep), fused in the engine.

        Pipelines do not call this: `hybrid_search` runs `bm25` and `dense` and
        fuses them itself, on every backend alike. It exists for callers that
        want one round trip (bench/milvus.py compares the two).
        """
        from pymilvus import AnnSearchRequest, RRFRanker

        if not self.has_dense:
            raise ConfigError("milvus hybrid search: this index was built without vectors; use bm25")
        expr = filter_expression(user, filters)
        depth = int(depth or k)
        requests = [AnnSearchRequest(data=[query], anns_field="sparse", param={"metric_type": "BM25"},
                                     limit=depth, expr=expr),
                    AnnSearchRequest(data=[np.asarray(vector, dtype=np.float32).tolist()], anns_field="vector",
                                     param={"metric_type": "IP", "params": {"ef": max(64, depth)}},
                                     limit=depth, expr=expr)]
        result = self.client.hybrid_search(self.collection, requests, RRFRanker(rrf_k), limit=int(k),
                                           output_fields=CHUNK_FIELDS)
        return [(_chunk_of(h["entity"]), float(h["distance"])) for h in result[0]]
