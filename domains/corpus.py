"""A corpus named by path and pack: read it under the pack its ``domain`` names (``auto``: the one that claims its
documents), then index it or compile its wiki with that profile (skills.reading, skills.indexing, skills.wiki)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Union

from lambdarag.skills import indexing, wiki
from lambdarag.skills.reading import read_corpus as read_by_profile
from lambdarag.skills.store.corpus import DEFAULT_EXCLUDE, Corpus

from . import choose_profile, profile_named

Source = Union[str, Path, Corpus]


def read_corpus(root: Union[str, Path], *, progress: bool = False, cap: int = 800,
                exclude: Iterable[str] = DEFAULT_EXCLUDE, domain: str = "auto") -> Corpus:
    """Returns the corpus under `root` read and chunked by the profile `domain` names; ``auto`` reads the files
    plainly first and takes the first shipped profile that claims them (skills.reading.read_corpus)."""
    if domain == "auto":
        return read_by_profile(root, profile_named("generic"), progress=progress, cap=cap, exclude=exclude,
                               choose=choose_profile)
    corpus = read_by_profile(root, profile_named(domain), progress=progress, cap=cap, exclude=exclude)
    corpus.domain = domain   # the spec the index records, a plugin's ``module:Factory`` too
    return corpus


def corpus_of(source: Source, *, domain: str, progress: bool) -> Corpus:
    """Returns `source` if it is a corpus already read, else the corpus read from its path under `domain`."""
    return source if isinstance(source, Corpus) else read_corpus(source, progress=progress, domain=domain)


def build_index(source: Source, name: str, *, domain: str = "auto", progress: bool = True, **options: Any) -> Any:
    """Returns the local index `name` over the corpus at `source` (skills.indexing.build_index)."""
    return indexing.build_index(corpus_of(source, domain=domain, progress=progress), name, progress=progress,
                                **options)


def build_backend(settings: Any, source: Source, name: str, *, domain: str = "auto", progress: bool = True,
                  **options: Any) -> Any:
    """Returns the index `name` over the corpus at `source` on the configured backend (skills.indexing)."""
    return indexing.build_backend(settings, corpus_of(source, domain=domain, progress=progress), name,
                                  progress=progress, **options)


def compile_wiki(source: Source, wiki_dir: Union[str, Path], *, domain: str = "auto", progress: bool = True,
                 **options: Any) -> Any:
    """Returns the report of bringing ``wiki_dir`` up to date with the corpus at `source` (skills.wiki)."""
    return wiki.compile_wiki(corpus_of(source, domain=domain, progress=progress), wiki_dir, progress=progress,
                             **options)
