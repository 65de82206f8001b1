"""A route adds to the plain ranking and never subtracts: the plain hybrid ranking's best hits stay in its first documents.

A route (compare, relation, survey, time) reorders the question's evidence and
adds its own; on documents it was not written for, that can push the pages
plain retrieval ranked first out of the first five. `kept_lead` puts the first
of them back among the route's first `window` documents, in place of the last of
them that holds no stronger evidence, and (``ahead``) keeps plain retrieval's first
documents ahead of every document the route brings without it. Stronger evidence
is what a typed step of the route states and plain retrieval cannot know:

- a document the question names (the route's `sides`; with ``ahead``, by its whole title or file name:
  `titles.names_whole`, since a word of a title is one plain retrieval weighs too);
- the article of a graph edge of the asked relation type (``ranks["graph"]``, skills.edges);
- another version of the lead's own document (same title): the route chose the version the question's time asks for.

A chunk of another document that a side search ranked (``ranks["side"]``: the whole index searched for a named
thing, or the question's own first chunk) is none: plain retrieval weighed the same words.
When every one of the route's first `window` documents has such evidence, the route's order stands.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from .store.records import Hit

EVIDENCE = ("graph",)
"""Provenance keys (`Hit.ranks`) of the typed steps whose placement outweighs the plain ranking's first hit."""
WINDOW = 5
"""Documents among which the plain ranking's best hit is kept: the answer reads the first five."""
AHEAD = 5
"""The plain ranking's first documents that the generic compare, relation and time routes put their documents
without stronger evidence behind: the answer reads the first five."""


def document(hit: Hit) -> str:
    """Returns the document a hit counts for: its title (versions of one document share it), else its source."""
    return hit.title or hit.source


def first_documents(hits: Sequence[Hit], window: int) -> list[str]:
    """Returns the first `window` distinct documents of a ranking, in order."""
    return list(dict.fromkeys(document(h) for h in hits))[:window]


def behind_plain(route: Sequence[Hit], plain: Sequence[Hit], strong: set[str], ahead: int) -> tuple[Hit, ...]:
    """Returns `route` with the chunks of every document that is neither among the first `ahead` documents of
    `plain` nor in `strong` moved behind the last of those documents that `route` holds (a document the route
    left out stays out: a time filter's choice).

    A route may reorder plain retrieval's first documents and put its evidenced ones first; what else it brings
    comes after them.
    """
    firsts = set(first_documents(plain, ahead))
    held = [i for i, h in enumerate(route) if document(h) in firsts]
    if not held:
        return tuple(route)
    cut = held[-1] + 1
    stays = {h.chunk_id for h in route[:cut] if document(h) in firsts or document(h) in strong}
    return (*(h for h in route[:cut] if h.chunk_id in stays), *(h for h in route[:cut] if h.chunk_id not in stays),
            *route[cut:])


def kept_lead(route: Sequence[Hit], plain: Sequence[Hit], named: Iterable[str] = (),
              window: int = WINDOW, ahead: int = 0) -> tuple[Hit, ...]:
    """Returns `route` with the first hit of `plain` among its first `window` documents (module docstring), and
    with `ahead` > 0 the first `ahead` documents of `plain` ahead of the route's unevidenced ones (`behind_plain`).

    `named` holds the sources of the documents the question names. The lead
    takes the place of the last unevidenced document of the window (its chunks
    follow), marked ``ranks["lead"] = 1``; every hit is scored by its final rank.
    """
    if not plain:
        return tuple(route)
    lead = plain[0]
    named = set(named)
    strong = {document(h) for h in route if h.source in named or any(k in h.ranks for k in EVIDENCE)}
    if ahead:
        moved = behind_plain(route, plain, strong, ahead)
        if [h.chunk_id for h in moved] != [h.chunk_id for h in route]:
            route = rescored(moved)
    firsts = first_documents(route, window)
    if document(lead) in firsts:
        return tuple(route)
    weak = [d for d in firsts if d not in strong]
    if len(firsts) == window and not weak:
        return tuple(route)
    rest = [h for h in route if h.chunk_id != lead.chunk_id]
    # a full window: before the last weak document's first chunk; a short one: after the window's documents
    place = (lambda h: document(h) == weak[-1]) if len(firsts) == window else (lambda h: document(h) not in firsts)
    at = next((i for i, h in enumerate(rest) if place(h)), len(rest))
    order = [*rest[:at], lead.model_copy(update={"ranks": {**lead.ranks, "lead": 1}}), *rest[at:]]
    return rescored(order)


def rescored(order: Sequence[Hit]) -> tuple[Hit, ...]:
    """Returns `order` scored by its places (best first), so what sorts hits by score keeps the new order."""
    return tuple(h.model_copy(update={"score": float(len(order) - i)}) for i, h in enumerate(order))
