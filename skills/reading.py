"""Reading a corpus by its profile: choose the corpus profile (or take the one named), read the files, chunk them.

Above both the store's file readers (skills.store.corpus) and the profile seam
(skills.profile), so that neither imports the other's caller.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Union

from lambdarag.errors import ConfigError

from .profile import choose_profile, profile_named
from .store.corpus import DEFAULT_EXCLUDE, Corpus, corpus_files, flag_instructions, read_files


def read_corpus(root: Union[str, Path], *, progress: bool = False, cap: int = 800,
                exclude: Iterable[str] = DEFAULT_EXCLUDE, domain: str = "auto") -> Corpus:
    """Returns the corpus under `root` (a folder of markdown/JSONL files, or one file), chunked by its profile.

    `domain` names the corpus profile (skills.profile): ``auto`` reads the
    files plainly first and takes the first shipped profile that claims them (reading them again only when that
    profile is not the generic one).
    Unreadable or malformed inputs are skipped and listed in `Corpus.problems`
    by path and line; files named in `exclude` (folder notes) are not read.
    """
    root = Path(root)
    if not root.exists():
        raise ConfigError(f"read_corpus: corpus path {str(root)!r} does not exist")
    files, links = corpus_files(root, exclude)
    plain = None
    if domain == "auto":
        plain = read_files(root, files, profile_named("generic"), progress)
        domain = choose_profile(plain.documents)
    profile = profile_named(domain)
    # The plain read is the generic profile's own: read again only for a profile that reads files its own way.
    corpus = plain if plain is not None and domain == "generic" else read_files(root, files, profile, progress)
    corpus.domain = domain
    corpus.problems[:0] = links
    for doc in corpus.documents:
        pieces = [flag_instructions(c) for c in profile.reading.chunk(doc, cap)]
        if not pieces:
            corpus.problems.append((doc.source, 0, "no chunkable text"))
        corpus.chunks.extend(pieces)
    return corpus
