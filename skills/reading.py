"""Reading a corpus by its profile: read the files as a profile says (or as the one chosen from them), chunk them.

Above both the store's file readers (skills.store.corpus) and the profile seam
(skills.profile), so that neither imports the other's caller.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence, Union

from lambdarag.errors import ConfigError

from .profile import CorpusProfile
from .store.corpus import DEFAULT_EXCLUDE, Corpus, Document, corpus_files, flag_instructions, read_files


def read_corpus(root: Union[str, Path], profile: CorpusProfile, *, progress: bool = False, cap: int = 800,
                exclude: Iterable[str] = DEFAULT_EXCLUDE,
                choose: Optional[Callable[[Sequence[Document]], CorpusProfile]] = None) -> Corpus:
    """Returns the corpus under `root` (a folder of markdown/JSONL files, or one file), chunked by its profile.

    `profile` reads the files; with `choose` (``domain: auto``, lambdarag.domains), the profile it picks from
    what was read takes over, reading them again only when it is another profile.
    Unreadable or malformed inputs are skipped and listed in `Corpus.problems`
    by path and line; files named in `exclude` (folder notes) are not read.
    """
    root = Path(root)
    if not root.exists():
        raise ConfigError(f"read_corpus: corpus path {str(root)!r} does not exist")
    files, links = corpus_files(root, exclude)
    corpus = read_files(root, files, profile, progress)
    chosen = choose(corpus.documents) if choose is not None else profile
    if chosen is not profile:   # a profile that reads files its own way
        corpus = read_files(root, files, chosen, progress)
    corpus.domain, corpus.profile = chosen.name, chosen
    corpus.problems[:0] = links
    for doc in corpus.documents:
        pieces = [flag_instructions(c) for c in chosen.reading.chunk(doc, cap)]
        if not pieces:
            corpus.problems.append((doc.source, 0, "no chunkable text"))
        corpus.chunks.extend(pieces)
    return corpus
