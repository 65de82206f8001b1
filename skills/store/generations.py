"""Generations of a wiki folder: a compile writes a new copy beside the current one and switches to it in one step.

A wiki is many files (entity pages, relations.json, its manifest); rewriting
them in place lets a kill leave pages of one state beside a graph of another.
So ``<wiki>`` is a symbolic link to ``<wiki>.g<N>``: a compile stages
``<wiki>.g<N+1>`` (unchanged files hard-linked from the current generation;
every writer replaces files by write-rename, so a link is never written
through), then `publish` swaps the link atomically. An index's wiki has a
second, stronger commit point: the index manifest names the generation it was
built with (`skills.store.index.commit_wiki`), and a knowledge base opens that
one, so index, graph and pages switch together. A wiki written before
generations (a plain folder) becomes generation 0 on its first compile.
"""
from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path
from typing import Iterable, Optional

from .files import ORPHAN_AGE

GENERATION = re.compile(r"\.g(\d+)$")


def generation_dirs(wiki: Path) -> dict[int, Path]:
    """Returns the generation folders of the wiki at `wiki`, by number."""
    out = {}
    for path in wiki.parent.glob(f"{glob_escape(wiki.name)}.g*") if wiki.parent.is_dir() else ():
        m = GENERATION.search(path.name)
        if m and path.name == f"{wiki.name}.g{m.group(1)}" and path.is_dir() and not path.is_symlink():
            out[int(m.group(1))] = path
    return out


def glob_escape(name: str) -> str:
    """Returns `name` with glob's special characters escaped (a wiki folder may be named anything)."""
    return re.sub(r"([*?\[])", r"[\1]", name)


def current(wiki: Path) -> Optional[Path]:
    """Returns the folder the wiki's files are read from now: the generation the link names, a plain folder
    written before generations, or None when nothing was compiled."""
    if wiki.is_symlink():
        target = wiki.resolve()
        return target if target.is_dir() else None
    return wiki if wiki.is_dir() else None


def stage(wiki: Path, base: Optional[Path]) -> Path:
    """Returns a new, unpublished generation folder holding `base`'s files (hard links; copies across devices)."""
    wiki.parent.mkdir(parents=True, exist_ok=True)
    number = max(generation_dirs(wiki), default=0) + 1
    while True:
        target = wiki.with_name(f"{wiki.name}.g{number}")
        try:
            target.mkdir(mode=0o700)
            break
        except FileExistsError:   # another compile staged this number a moment ago
            number += 1
    if base is not None and base.is_dir():
        shutil.copytree(base, target, copy_function=_link, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".*.tmp", "*.lock"))
    return target


def _link(src: str, dst: str) -> None:
    """Hard-links `src` at `dst` (a copy where links cannot cross)."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def publish(wiki: Path, generation: Path) -> None:
    """Points the link `wiki` at `generation` in one rename; a plain folder there becomes generation 0 first (and is
    the one published when `generation` is that folder: a compile that changed nothing)."""
    if wiki.is_dir() and not wiki.is_symlink():
        legacy = wiki.with_name(f"{wiki.name}.g0")
        generation = legacy if generation.absolute() == wiki.absolute() else generation
        wiki.rename(legacy)
    link = wiki.with_name(f".{wiki.name}.link.tmp")
    link.unlink(missing_ok=True)
    link.symlink_to(generation.name)
    os.replace(link, wiki)


def sweep(wiki: Path, keep: Iterable[Optional[Path]]) -> list[Path]:
    """Removes generation folders other than those in `keep`, the published one and those written to within
    `ORPHAN_AGE` (a compile staging one now); returns those removed. A stage a killed compile abandoned goes."""
    kept = {p.resolve() for p in keep if p is not None}
    now = current(wiki)
    if now is not None:
        kept.add(now.resolve())
    cutoff = time.time() - ORPHAN_AGE
    gone = [p for p in generation_dirs(wiki).values() if p.resolve() not in kept
            and max(d.stat().st_mtime for d in (p, p / "entities") if d.is_dir()) < cutoff]
    for path in gone:
        shutil.rmtree(path, ignore_errors=True)
    return gone
