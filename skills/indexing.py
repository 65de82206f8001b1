"""Building an index from a corpus read by its profile (skills.reading): tokenise it as the profile says and write it
(skills.store.index), so that the store never asks the profile; a corpus named by path and pack is lambdarag.domains'."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Union

from lambdarag.errors import ConfigError

from .store.base import IndexBackend
from .store.corpus import Corpus
from .store.index import write_backend, write_index
from .store.local import LocalBackend
from .store.tokenize import Tokenizer

Words = Union[str, Path, Iterable[str], None]


def index_tokenizer(corpus: Corpus, *, stopwords: Words, user_words: Iterable[str]) -> Tokenizer:
    """Returns the BM25 tokenizer of the profile `corpus` was read by; a corpus with no chunks is an error naming its
    first problem."""
    if not corpus.chunks:
        raise ConfigError(f"corpus {corpus.root} has no chunks to index"
                          + (f"; first problem: {corpus.problems[0]}" if corpus.problems else ""))
    if corpus.profile is None:
        raise ConfigError(f"corpus {corpus.root} was read by no profile; read it with skills.reading.read_corpus "
                          "or lambdarag.domains.read_corpus")
    return Tokenizer(stopwords, user_words, **corpus.profile.reading.tokenizer)


def build_index(corpus: Corpus, name: str, *, embedder: Any = None,
                vectors_dir: Union[str, Path, None] = None, progress: bool = True, dense: bool = True,
                stopwords: Words = None, user_words: Iterable[str] = (),
                wiki: Optional[str] = None) -> LocalBackend:
    """Returns the local index `name` over the corpus, built or updated on disk as needed (skills.store.index
    write_index); the index records the corpus's profile: a change of profile rebuilds."""
    tokenizer = index_tokenizer(corpus, stopwords=stopwords, user_words=user_words)
    return write_index(corpus, tokenizer, name, embedder=embedder, vectors_dir=vectors_dir, progress=progress,
                       dense=dense, wiki=wiki)


def build_backend(settings: Optional[Mapping[str, Any]], corpus: Corpus, name: str, *,
                  embedder: Any = None, vectors_dir: Union[str, Path, None] = None, progress: bool = True,
                  dense: bool = True, stopwords: Words = None, user_words: Iterable[str] = (),
                  batch_size: int = 512, wiki: Optional[str] = None) -> IndexBackend:
    """Returns the index `name` over the corpus on the configured backend, built or updated as needed
    (skills.store.index write_backend)."""
    tokenizer = index_tokenizer(corpus, stopwords=stopwords, user_words=user_words)
    return write_backend(settings, corpus, tokenizer, name, embedder=embedder, vectors_dir=vectors_dir,
                         progress=progress, dense=dense, batch_size=batch_size, wiki=wiki)
