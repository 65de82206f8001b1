"""The chunks next to the best hits: where a top hit's section goes on in the chunk before or after it.

A section longer than a chunk is cut into several (``Filesystem permissions``, ``…~2``, its table rows); the
sentence that answers often sits in the piece retrieval did not rank. `neighbours` reads the index's chunks by
document and position and returns the adjacent pieces of the same section of the first `BEST` hits, then the
pieces of their sections farther away that share the most of the question's words (`SECTION`), so the
answer may quote them (issue 40); for an overview, the `openings` of the best hits' documents too, where each
document says what it is about. A neighbour shares its hit's document, so it carries the same access labels.
"""
from __future__ import annotations

import re
import threading
import weakref
from typing import Any, Sequence

from .store.bm25 import Bm25Index
from .store.corpus import Chunk, to_hits
from .store.records import Hit
from .store.tokenize import default_tokenizer

BEST = 3
"""How many of the best context hits lend their neighbours."""
LIMIT = 3
"""At most this many adjacent chunks in one context (each one is shown to a model too)."""
SECTION = 3
"""At most this many more chunks of the best hits' sections, best by the question's words (BM25 over them)."""
OPENINGS = 6
"""At most this many documents' openings in an overview's context (as many as its points, `evidence.diverse`)."""
OPENING_PIECES = 2
"""At most this many chunks of one document's opening (a long one is cut into pieces at sentence ends)."""

_POSITIONS: "weakref.WeakKeyDictionary[Any, tuple[int, dict[str, int], dict[tuple[str, str], list[int]]]]" = \
    weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _layout(index: Any) -> tuple[int, dict[str, int], dict[tuple[str, str], list[int]]]:
    """Returns (index version, chunk id → position, (document, section) → positions), built once per version."""
    version = getattr(index, "version", 0)
    with _LOCK:
        known = _POSITIONS.get(index)
        if known is None or known[0] != version:
            where: dict[str, int] = {}
            sections: dict[tuple[str, str], list[int]] = {}
            for i, c in enumerate(index.chunks()):    # one pass: a large index reads its chunks from disk
                where[c.id] = i
                sections.setdefault((c.doc_id, section_of(c)), []).append(i)
            known = (version, where, sections)
            _POSITIONS[index] = known
    return known


def positions(index: Any) -> dict[str, int]:
    """Returns chunk id → position in the index's chunk order, built once per index version."""
    return _layout(index)[1]


_ROW = re.compile(r"\s(?:row \d+|第\d+行)$")


def section_of(chunk: Chunk) -> str:
    """Returns the section a chunk belongs to: its label without a table row's number (``X row 3`` sits in ``X``);
    a statute's article is a section of its own, whatever chapter holds it."""
    return _ROW.sub("", chunk.section)


def neighbours(hits: Sequence[Hit], index: Any, query: str = "", overview: bool = False) -> tuple[Hit, ...]:
    """Returns the chunks just before and after each of the first `BEST` hits in the same document and section,
    none already a hit, at most `LIMIT`, then (with a `query`) the `section_rest` of those hits, and for an
    `overview` the `openings` of the hits' documents, each with the first hit's score; () without an index that
    lists its chunks."""
    if index is None or not hasattr(index, "chunks") or not hits:
        return ()
    where = positions(index)
    chunks = index.chunks()
    taken = {h.chunk_id for h in hits}
    found: list[tuple[Chunk, float]] = []
    for hit in hits[:BEST]:
        at = where.get(hit.chunk_id)
        if at is None:
            continue
        own = chunks[at]
        for step in (-1, 1):
            near = at + step
            if 0 <= near < len(chunks) and chunks[near].id not in taken and chunks[near].doc_id == own.doc_id \
                    and section_of(chunks[near]) == section_of(own):
                taken.add(chunks[near].id)
                found.append((chunks[near], hit.score))
    found = found[:LIMIT]
    taken = {h.chunk_id for h in hits} | {c.id for c, _ in found}
    found += [(c, hits[0].score) for c in section_rest(hits[:BEST], index, query, taken)]
    if overview:
        taken |= {c.id for c, _ in found}
        found += [(c, hits[0].score) for c in openings(hits, index, taken)]
    return to_hits(found, "neighbour")


def section_rest(hits: Sequence[Hit], index: Any, query: str, taken: set[str]) -> list[Chunk]:
    """Returns the chunks of the sections `hits` sit in (each in its document) not `taken` that share the
    question's words, best by BM25 over those sections first, at most `SECTION`: the answering row of a long
    table or the paragraph after it, however far from the piece retrieval ranked."""
    if not query:
        return []
    _, where, sections = _layout(index)
    chunks = index.chunks()
    places = dict.fromkeys((chunks[at].doc_id, section_of(chunks[at]))
                           for at in (where.get(h.chunk_id) for h in hits) if at is not None)
    rest = [chunks[i] for place in places for i in sections.get(place, ()) if chunks[i].id not in taken]
    if not rest:
        return []
    tokenize = getattr(index, "tokenizer", None) or default_tokenizer()
    scores = Bm25Index.of([tokenize(c.text) or ["\0"] for c in rest]).scores(tokenize(query))
    best = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: -scores[i])[:SECTION]
    return [rest[i] for i in best]


def openings(hits: Sequence[Hit], index: Any, taken: set[str]) -> list[Chunk]:
    """Returns the opening of each of the first `OPENINGS` documents of `hits` (the first `OPENING_PIECES` chunks of
    its text before the first heading) not `taken`: an overview's point on a document is what the document says
    it is about, which it says first, and retrieval ranks the piece matching the question's words instead."""
    _, where, sections = _layout(index)
    chunks = index.chunks()
    documents = dict.fromkeys(chunks[at].doc_id for at in (where.get(h.chunk_id) for h in hits) if at is not None)
    return [chunks[i] for doc in list(documents)[:OPENINGS] for i in sections.get((doc, ""), [])[:OPENING_PIECES]
            if chunks[i].id not in taken]
