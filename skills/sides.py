"""The things a question names (its sides), resolved to documents, and retrieval that gives each side a place.

A comparison of two documents answered from one ranking often gets five
chunks of the better-matching one and none of the other. `name_sides` finds
the documents the question names by title (a pack may name its own);
`side_search` searches each on its own, restricted to its document, once per
compared aspect (also the profile's), and interleaves the sides' best chunks
ahead of the question's own ranking; `named_first` moves the named
documents' chunks to the front.
"""
from __future__ import annotations

import re
from typing import Any, Sequence, TypedDict

from lambdarag import Context, User, tool

from .profile import profile_of
from .registry import skill
from .named import defines_in, named_things
from .titles import Side, Sides, document_names
from .store.corpus import to_hits
from .store.records import Hit, Hits, HitsOut


class SidesOut(TypedDict):
    """The write of `name_sides`: the field's one declaration (its readers take the type from here)."""

    sides: Sides


def aspect_query(query: str, sides: Sequence[Side]) -> str:
    """Returns the question without the names of its sides, i.e. the aspect every side is searched for."""
    for side in sides:
        query = query.replace(side.name, " ")
    return query.strip() or query


@skill
@tool(effect="io")
def name_sides(query: str, ctx: Context, *, limit: int = 4, loose: bool = False) -> SidesOut:
    """Writes `sides`: the documents a comparison names by title, file name or heading (skills.titles; `loose`: a
    question that sets named things side by side; other questions name none, so their ranking stays the hybrid one:
    a title word in a question is weak evidence). A pack may name its own (statute_sides)."""
    return {"sides": document_names(ctx.resource("index")).named(query, limit) if loose else ()}


def side_ranking(backend: Any, side: Side, aspect: str, user: Any, k: int) -> tuple[Hit, ...]:
    """Returns one side's chunks for the aspect: BM25 inside its document.

    Lexical only: within one document the aspect's cue words pick the unit,
    and a filtered approximate dense search over the whole index is slow and
    misses rows when the filter keeps a few hundred of them.
    """
    return to_hits(backend.bm25(aspect, k, user=user, filters={"source": side.source}), "bm25")


DEFINING_DEPTH = 8
"""How many times `top_k` BM25 chunks of a side's name alone are read for the one saying what it is: a name is in
many chunks, and the one defining it is often a long overview's, which BM25 on one word ranks low."""


def defining_ranking(backend: Any, name: str, user: Any, k: int) -> tuple[Hit, ...]:
    """Returns the chunks of the whole index where a text says what `name` is (`named.defines_in`: Massif is a heap
    profiler.), among its `k` best BM25 chunks for the name: a side's own sentence, which the question's other
    words (and a page found by its title, "Using Massif") may leave out of the ranking."""
    return tuple(h for h in to_hits(backend.bm25(name, k, user=user), "bm25") if defines_in(h.text, name))


def defined(hits: Sequence[Hit], name: str) -> bool:
    """Returns whether one of `hits` says what `name` is (`named.defines_in`): the side has its own sentence."""
    return any(defines_in(h.text, name) for h in hits)


def mentions(hits: Sequence[Hit], name: str) -> bool:
    """Returns whether any of `hits` mentions `name`, ignoring case."""
    return any(name.lower() in h.text.lower() for h in hits)


def interleave(per_side: Sequence[Sequence[Hit]], rest: Sequence[Hit], take: int) -> tuple[Hit, ...]:
    """Returns the sides' first `take` hits round-robin, then `rest`, each chunk once, scored by final rank."""
    order: list[Hit] = []
    seen: set[str] = set()
    for rank in range(take):
        for hits in per_side:
            if rank < len(hits) and hits[rank].chunk_id not in seen:
                seen.add(hits[rank].chunk_id)
                order.append(hits[rank].model_copy(update={"ranks": {**hits[rank].ranks, "side": rank + 1}}))
    order += [h for h in rest if h.chunk_id not in seen]
    n = len(order)
    return tuple(h.model_copy(update={"score": float(n - i)}) for i, h in enumerate(order))


@skill
@tool(effect="io")
def side_search(query: str, sides: Sides, hits: Hits, user: User, ctx: Context, *, per_side: int = 1,
                top_k: int = 8) -> HitsOut:
    """Puts each named side's best chunk per compared aspect ahead of `hits`.

    Reads `sides` (from `name_sides`); with no side it keeps `hits` as they
    are. One side (where only one of two names resolves) still goes first:
    the other side's words tend to dominate the ranking and push out the one
    document the question names. `per_side` is how many chunks per side
    and aspect go first. With no cue words to compare on (the generic
    profile), each side's chunk that names it best goes too, and, unless the first hit says what it is, its chunk
    of the whole index that does (`defining_ranking`): the place a page says what its thing is, which the
    question's other words may miss;
    and each named thing no document resolves (a field, a command, a term:
    `layouts.named_things`) gets its best chunk of the whole index for it
    and the aspect, so a thing the other one's words outrank keeps a place,
    unless the first chunk of `hits` already mentions it: that thing has its
    place, and a whole-index chunk would push the question's own second
    chunk (often the page naming both) out of the lead.
    """
    backend = ctx.resource("index")
    asked = aspect_query(query, sides)
    profile = profile_of(ctx)
    ranked = [side_ranking(backend, side, f"{asked} {' '.join(cues)}", user, top_k)
              for _, cues in profile.comparison.aspects(query) for side in sides]
    if not any(cues for _, cues in profile.comparison.aspects(query)):   # a plain aspect: also where each is named
        ranked += [side_ranking(backend, side, side.name, user, top_k) for side in sides]
        things = [n for n in named_things(query, hits, profile) if not any(s.name == n for s in sides)]
        ranked += [defining_ranking(backend, name, user, DEFINING_DEPTH * top_k)
                   for name in [s.name for s in sides] + things if not defined(hits[:1], name)]
        rest = re.sub("|".join(map(re.escape, things)), " ", asked) if things else asked
        ranked += [to_hits(backend.bm25(f"{name} {rest}", top_k, user=user), "bm25") for name in things
                   if not mentions(hits[:1], name)]
    if not ranked:
        return {"hits": hits}
    return {"hits": interleave(ranked if profile.comparison.sides_lead else [hits, *ranked], hits, per_side)}


def named_ahead(hits: Sequence[Hit], sides: Sequence[Side]) -> tuple[Hit, ...]:
    """Returns `hits` with the chunks of the named documents first (each group keeps its order), scored by final rank."""
    named = {side.source for side in sides}
    order = [h for h in hits if h.source in named] + [h for h in hits if h.source not in named]
    return tuple(h.model_copy(update={"score": float(len(order) - i)}) for i, h in enumerate(order))


@skill
@tool
def named_first(hits: Hits, sides: Sides) -> HitsOut:
    """Moves the chunks of the documents the question names (`sides`) to the front of `hits`.

    A question about one document is answered from it before any other that happens to match its words.
    """
    return {"hits": named_ahead(hits, sides)}
