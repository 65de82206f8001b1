"""Choosing the index backend from `retrieval.backend` settings: open or build a named index on it.

`settings` is the JSON form of the config section: ``{"kind": "local"}`` (the
in-process index under knowledge/<name>/index) or ``{"kind": "milvus", "uri":
…}``. A relative file URI is taken from the repo root, like `retrieval.corpus`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Union

from lambdarag.errors import ConfigError

from .local import IndexBackend
from .corpus import Corpus, read_corpus, searchable_text
from ..dense import VectorCache, default_embedder, embed_passages, read_vectors_dir
from .index import REPO, build_index, index_dir, knowledge_root, open_index
from .tokenize import Tokenizer

KINDS = ("local", "milvus")


def milvus_uri(settings: Mapping[str, Any]) -> str:
    """Returns the Milvus URI of the settings: http(s) as given, a file path made absolute (default knowledge/milvus.db)."""
    uri = settings.get("uri")
    if not uri:
        return str(knowledge_root() / "milvus.db")
    if "://" in uri:
        return uri
    path = Path(uri).expanduser()
    return str(path if path.is_absolute() else REPO / path)


def _kind(settings: Optional[Mapping[str, Any]]) -> str:
    kind = (settings or {}).get("kind", "local")
    if kind not in KINDS:
        raise ConfigError(f"retrieval.backend.kind {kind!r} is unknown; valid kinds: {', '.join(KINDS)}")
    return kind


def open_backend(settings: Optional[Mapping[str, Any]], name: str) -> IndexBackend:
    """Returns the built index `name` on the configured backend (fails naming the indexes that exist)."""
    if _kind(settings) == "local":
        return open_index(name)
    from .milvus import MilvusBackend

    return MilvusBackend.open(milvus_uri(settings), name)


def backend_exists(settings: Optional[Mapping[str, Any]], name: str) -> bool:
    """Returns whether the index `name` has been built on the configured backend."""
    if _kind(settings) == "local":
        return (index_dir(name) / "manifest.json").is_file()
    from .milvus import client_for, collection_name

    coll = collection_name(name)
    client = client_for(milvus_uri(settings))
    return client.has_collection(coll) and client.has_collection(coll + "_docs")


def build_backend(settings: Optional[Mapping[str, Any]], corpus_root: Union[str, Path, Corpus], name: str, *,
                  embedder: Any = None, vectors_dir: Union[str, Path, None] = None, progress: bool = True,
                  dense: bool = True, stopwords: Union[str, Path, Iterable[str], None] = None,
                  user_words: Iterable[str] = (), batch_size: int = 512) -> IndexBackend:
    """Returns the index `name` over the corpus on the configured backend, built or updated as needed.

    Milvus: only documents whose digest differs from the stored one are
    (re)indexed, in batches with a progress bar; a document is recorded after
    its chunks, so rerunning an interrupted build resumes it, and an unchanged
    corpus is a no-op. A changed tokenizer or model rebuilds the collection.
    """
    if _kind(settings) == "local":
        return build_index(corpus_root, name, embedder=embedder, vectors_dir=vectors_dir, progress=progress,
                           dense=dense, stopwords=stopwords, user_words=user_words)
    from .milvus import MilvusBackend

    corpus = corpus_root if isinstance(corpus_root, Corpus) else read_corpus(corpus_root, progress=progress)
    if not corpus.chunks:
        raise ConfigError(f"corpus {corpus.root} has no chunks to index")
    tokenizer = Tokenizer(stopwords, user_words)
    if dense and embedder is None:
        embedder = default_embedder()
    model = embedder.name if dense else None
    dim = getattr(embedder, "dim", None) if dense else None
    uri = milvus_uri(settings)
    backend = None
    if backend_exists(settings, name):
        old = MilvusBackend.open(uri, name)
        if old.model == model and old.dim == dim and old.tokenizer.fingerprint() == tokenizer.fingerprint():
            backend = old
    if backend is None:
        backend = MilvusBackend.create(uri, name, tokenizer, model=model, dim=dim)
    digests = {d.id: str(d.meta.get("digest", "")) for d in corpus.documents}
    have = {d: m["digest"] for d, m in backend.documents().items()}
    backend.remove([d for d in have if d not in digests])
    changed = [d for d in corpus.documents if have.get(d.id) != digests[d.id]]
    if not changed:
        return backend
    ids = {d.id for d in changed}
    chunks = [c for c in corpus.chunks if c.doc_id in ids]
    vectors = None
    if dense:
        imported = read_vectors_dir(Path(vectors_dir), model, dim) if vectors_dir else None
        cache = VectorCache(index_dir(name) / "vector-cache", model)
        vectors = embed_passages([searchable_text(c) for c in chunks], embedder, cache, ids=[c.id for c in chunks],
                                 imported=imported, progress=progress)
    backend.add(changed, chunks, vectors, progress=progress, batch_size=batch_size)
    return backend
