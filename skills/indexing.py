"""Building an index from a corpus: read and chunk it by its profile (skills.reading), tokenise it as the profile
says, and write it (skills.store.index), so that the store never asks the profile."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Union

from lambdarag.errors import ConfigError

from .profile import profile_named
from .reading import read_corpus
from .store.base import IndexBackend
from .store.corpus import Corpus
from .store.index import write_backend, write_index
from .store.local import LocalBackend
from .store.tokenize import Tokenizer

Words = Union[str, Path, Iterable[str], None]


def read_for_index(corpus_root: Union[str, Path, Corpus], *, progress: bool, domain: str, stopwords: Words,
                   user_words: Iterable[str]) -> tuple[Corpus, Tokenizer]:
    """Returns the corpus (read by the profile `domain` names; ``auto``: the one its documents fit) and the BM25
    tokenizer of its profile; a corpus with no chunks is an error naming its first problem."""
    corpus = corpus_root if isinstance(corpus_root, Corpus) else read_corpus(corpus_root, progress=progress,
                                                                             domain=domain)
    if not corpus.chunks:
        raise ConfigError(f"corpus {corpus.root} has no chunks to index"
                          + (f"; first problem: {corpus.problems[0]}" if corpus.problems else ""))
    return corpus, Tokenizer(stopwords, user_words, **profile_named(corpus.domain).reading.tokenizer)


def build_index(corpus_root: Union[str, Path, Corpus], name: str, *, embedder: Any = None,
                vectors_dir: Union[str, Path, None] = None, progress: bool = True, dense: bool = True,
                stopwords: Words = None, user_words: Iterable[str] = (), domain: str = "auto",
                wiki: Optional[str] = None) -> LocalBackend:
    """Returns the local index `name` over the corpus, built or updated on disk as needed (skills.store.index
    write_index); `domain` names the corpus profile, which the index records: a change of profile rebuilds."""
    corpus, tokenizer = read_for_index(corpus_root, progress=progress, domain=domain, stopwords=stopwords,
                                       user_words=user_words)
    return write_index(corpus, tokenizer, name, embedder=embedder, vectors_dir=vectors_dir, progress=progress,
                       dense=dense, wiki=wiki)


def build_backend(settings: Optional[Mapping[str, Any]], corpus_root: Union[str, Path, Corpus], name: str, *,
                  embedder: Any = None, vectors_dir: Union[str, Path, None] = None, progress: bool = True,
                  dense: bool = True, stopwords: Words = None, user_words: Iterable[str] = (),
                  batch_size: int = 512, domain: str = "auto", wiki: Optional[str] = None) -> IndexBackend:
    """Returns the index `name` over the corpus on the configured backend, built or updated as needed
    (skills.store.index write_backend)."""
    corpus, tokenizer = read_for_index(corpus_root, progress=progress, domain=domain, stopwords=stopwords,
                                       user_words=user_words)
    return write_backend(settings, corpus, tokenizer, name, embedder=embedder, vectors_dir=vectors_dir,
                         progress=progress, dense=dense, batch_size=batch_size, wiki=wiki)
