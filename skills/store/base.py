"""The index backend interface: what retrieval skills ask of an index, whatever engine holds it.

Contract (`IndexBackend`): a backend holds chunks with their metadata and
answers `bm25(query, k, user, filters)` and `dense(vector, k, user, filters)`
with ``[(Chunk, score), …]`` best first. Permission filtering happens here,
inside the search, for every call: a chunk whose labels `user` lacks is never
returned (no user means the public user). `filters` maps a chunk field
(family, kind, doc_id, source, date, title, department, section) to one allowed
value or a list of them. `add`/`remove` change the index incrementally;
`fingerprint()` names its content, tokenizer and model; `version` counts changes.
"""
from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from lambdarag.errors import ConfigError

from .bm25 import Bm25Index
from .corpus import Chunk, Document, searchable_text

if TYPE_CHECKING:
    from lambdarag import User
from .tokenize import Tokenizer

Scored = tuple[Chunk, float]
FILTER_FIELDS = ("family", "kind", "doc_id", "source", "date", "title", "department", "section")


def fingerprint_of(doc_digests: Mapping[str, str], tokenizer: str, model: Optional[str], params: Mapping) -> str:
    """Returns the fingerprint of an index over documents with these digests, tokenizer, model and BM25 params."""
    h = hashlib.sha1()
    for doc_id in sorted(doc_digests):
        h.update(f"{doc_id}\0{doc_digests[doc_id]}\n".encode())
    h.update(f"tok={tokenizer} model={model or '-'} bm25={json.dumps(dict(params), sort_keys=True)}".encode())
    return h.hexdigest()[:20]


class IndexBackend(ABC):
    """The retrieval engine behind the skills (see the module docstring for the contract)."""

    tokenizer: Tokenizer
    model: Optional[str] = None
    version: int = 0

    def check_add(self, documents: Sequence[Document], chunks: Sequence[Chunk],
                  vectors: Optional[np.ndarray]) -> set[str]:
        """Returns the ids of the documents being added, after checking chunks and vectors belong to them."""
        ids = {d.id for d in documents}
        stray = {c.doc_id for c in chunks} - ids
        if stray:
            raise ConfigError(f"{type(self).__name__}.add: chunks of documents not being added: "
                              f"{', '.join(sorted(stray)[:3])}")
        if self.model is not None and (vectors is None or len(vectors) != len(chunks)):
            raise ConfigError(f"{type(self).__name__}.add: this index is dense ({self.model}); give one vector per "
                              f"chunk ({len(chunks)}), got {0 if vectors is None else len(vectors)}")
        return ids

    @abstractmethod
    def add(self, documents: Sequence[Document], chunks: Sequence[Chunk],
            vectors: Optional[np.ndarray] = None) -> None:
        """Adds (or replaces, by doc id) documents with their chunks and, for dense backends, chunk vectors."""

    @abstractmethod
    def remove(self, doc_ids: Iterable[str]) -> None:
        """Removes documents and all their chunks."""

    @abstractmethod
    def bm25(self, query: Union[str, Sequence[str]], k: int, user: Optional[User] = None,
             filters: Optional[Mapping[str, Any]] = None) -> list[Scored]:
        """Returns the k best chunks by BM25 for a query string (tokenised here) or its tokens."""

    @abstractmethod
    def dense(self, vector: np.ndarray, k: int, user: Optional[User] = None,
              filters: Optional[Mapping[str, Any]] = None) -> list[Scored]:
        """Returns the k nearest chunks to a normalised query vector."""

    @abstractmethod
    def chunk(self, chunk_id: str) -> Chunk:
        """Returns the chunk with this id (KeyError when absent)."""

    @abstractmethod
    def chunks(self) -> Sequence[Chunk]:
        """Returns every chunk, in index order."""

    @abstractmethod
    def documents(self) -> Mapping[str, Mapping[str, Any]]:
        """Returns doc id → metadata (title, date, family, source, digest) of every indexed document."""

    @abstractmethod
    def fingerprint(self) -> str:
        """Returns a digest of the indexed content, the tokenizer and the embedding model."""

    @property
    @abstractmethod
    def has_dense(self) -> bool:
        """Whether `dense` can answer (vectors were indexed)."""

    def bm25_expanded(self, tokens: Sequence[str], chunk_ids: Sequence[str], extra: Bm25Index
                      ) -> Optional[np.ndarray]:
        """Returns the BM25 scores of `chunk_ids` for `tokens` were row i of `extra`'s terms part of chunk i's text,
        or None when this engine cannot score a changed text (`Bm25Index.scores_with`)."""
        return None

    def document_words(self) -> tuple[list[str], Bm25Index]:
        """Returns the sources of the indexed documents and BM25 with one row per source over its chunks' searchable
        text, to rank whole documents: this engine keeps no term counts, so every chunk is tokenised (once per
        index, `survey.mentions`); one that keeps them sums them instead (`LocalBackend`)."""
        texts: dict[str, list[str]] = {}
        for chunk in self.chunks():
            if chunk.source:
                texts.setdefault(chunk.source, []).append(searchable_text(chunk))
        return list(texts), Bm25Index.of([self.tokenizer(" ".join(t)) for t in texts.values()])


def doc_meta(doc: Document) -> dict:
    """Returns what an index stores per document: labels, family, kind and the content digest."""
    return {"source": doc.source, "title": doc.title, "date": doc.date, "family": doc.family, "kind": doc.kind,
            "department": doc.department, "security_level": doc.security_level,
            "digest": str(doc.meta.get("digest", ""))}
