"""A route adds to the plain ranking and never subtracts: the plain hybrid ranking's best hit stays in its first documents.

A route (compare, relation, survey, time) reorders the question's evidence and
adds its own; on documents it was not written for, that can push the one page
plain retrieval ranked first out of the first five. `kept_lead` puts that hit
back among the route's first `window` documents, in place of the last of them
that holds no stronger evidence. Stronger evidence is what a typed step of the
route states and plain retrieval cannot know:

- a document the question names (the route's `sides`, or a chunk a side search ranked: ``ranks["side"]``);
- the article of a graph edge of the asked relation type (``ranks["graph"]``, skills.edges);
- another version of the lead's own document (same title): the route chose the version the question's time asks for.

When every one of the route's first `window` documents has such evidence, the route's order stands.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from .store.records import Hit

EVIDENCE = ("side", "graph")
"""Provenance keys (`Hit.ranks`) of the typed steps whose placement outweighs the plain ranking's first hit."""
WINDOW = 5
"""Documents among which the plain ranking's best hit is kept: the answer reads the first five."""


def document(hit: Hit) -> str:
    """Returns the document a hit counts for: its title (versions of one document share it), else its source."""
    return hit.title or hit.source


def first_documents(hits: Sequence[Hit], window: int) -> list[str]:
    """Returns the first `window` distinct documents of a ranking, in order."""
    return list(dict.fromkeys(document(h) for h in hits))[:window]


def kept_lead(route: Sequence[Hit], plain: Sequence[Hit], named: Iterable[str] = (),
              window: int = WINDOW) -> tuple[Hit, ...]:
    """Returns `route` with the first hit of `plain` among its first `window` documents (module docstring).

    `named` holds the sources of the documents the question names. The lead
    takes the place of the last unevidenced document of the window (its chunks
    follow), marked ``ranks["lead"] = 1``; every hit is scored by its final rank.
    """
    if not plain:
        return tuple(route)
    lead = plain[0]
    ahead = first_documents(route, window)
    if document(lead) in ahead:
        return tuple(route)
    named = set(named)
    strong = {document(h) for h in route if h.source in named or any(k in h.ranks for k in EVIDENCE)}
    weak = [d for d in ahead if d not in strong]
    if len(ahead) == window and not weak:
        return tuple(route)
    rest = [h for h in route if h.chunk_id != lead.chunk_id]
    # a full window: before the last weak document's first chunk; a short one: after the window's documents
    place = (lambda h: document(h) == weak[-1]) if len(ahead) == window else (lambda h: document(h) not in ahead)
    at = next((i for i, h in enumerate(rest) if place(h)), len(rest))
    order = [*rest[:at], lead.model_copy(update={"ranks": {**lead.ranks, "lead": 1}}), *rest[at:]]
    return tuple(h.model_copy(update={"score": float(len(order) - i)}) for i, h in enumerate(order))
