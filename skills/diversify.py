"""Evidence that spans documents: per-document caps, one version per family, the first documents' chunks ahead.

`diversify` orders hits so that the first ones come from different
documents (a pack's own term may rank each round by its prior:
domains/prc_statutes). `versions_ahead` keeps a single ranking's order but
puts the chunks of its first documents, one version each, ahead (the fact
route's last step; a pack may order those documents by its prior);
`one_version` keeps one version of each family in front.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

from lambdarag import tool
from .store.records import Hit, Hits, HitsOut, TimeRange

from .registry import skill
from .temporal import LATEST, in_force, time_range_of

AHEAD_WINDOW = 12
"""Documents whose chunks go ahead, among which a better prior goes first: for statutes, 8 left a law ranked 9th behind seven regulations
(dev2 of bench/data/routing); 12 changed no dev answer (bench/results/routing.json)."""


def per_document(hits: Sequence[Hit], cap: int = 1, rank: Optional[Callable[[Hit], int]] = None,
                 stand_back: Optional[int] = None) -> tuple[Hit, ...]:
    """Returns `hits` reordered so that each document's first `cap` chunks come before any document's next ones.

    Versions of one document share its title and count as one document. With
    a `rank` (hit → prior rank), each round lists documents of a better
    prior first (a survey of a field is answered by its laws first, then their regulations),
    or, with `stand_back`, ranks a document at place i of its round as though it stood at i + stand_back · rank,
    ahead of the one there (a prior that weighs, not sorts).
    """
    rounds: list[list[Hit]] = []
    seen: dict[str, int] = {}
    for h in hits:
        key = h.title or h.source
        n = seen.get(key, 0)
        seen[key] = n + 1
        while len(rounds) <= n // cap:
            rounds.append([])
        rounds[n // cap].append(h)
    if rank is None:
        return rescored([h for r in rounds for h in r])
    if stand_back is None:
        return rescored([h for r in rounds for h in sorted(r, key=rank)])
    return rescored([r[i] for r in rounds for i in sorted(range(len(r)), key=lambda i: i + stand_back * rank(r[i]))])


def best_versions(hits: Sequence[Hit], window: Optional[TimeRange] = None) -> tuple[list[Hit], list[Hit]]:
    """Returns (the hits of each document's version in force, the hits of its other versions), each in rank order.

    Of the ranked versions of a document, the one in force in `window` (the
    newest when it is None) stays, and its first chunk takes the place of the
    document's best-ranked chunk: two versions share most units word for
    word, their chunks tie, and a tie goes to whichever row came first (often
    the older file). Hits without a date keep the best-ranked version.
    """
    dates: dict[str, dict[str, str]] = {}
    first: dict[str, int] = {}
    for i, h in enumerate(hits):
        key = h.title or h.source
        first.setdefault(key, i)
        if h.date:
            dates.setdefault(key, {}).setdefault(h.date, h.source)
    chosen = {key: by_date[max(in_force(list(by_date), window or LATEST))] for key, by_date in dates.items()}
    kept: list[tuple[int, int, Hit]] = []
    other_versions: list[Hit] = []
    for i, h in enumerate(hits):
        key = h.title or h.source
        source = chosen.setdefault(key, h.source)
        if source != h.source:
            other_versions.append(h)
        elif key in first:
            kept.append((first.pop(key), -1, h))  # the chosen version's first chunk stands where the document ranked
        else:
            kept.append((i, i, h))
    return [h for *_, h in sorted(kept, key=lambda k: k[:2])], other_versions


def rescored(hits: Sequence[Hit]) -> tuple[Hit, ...]:
    """Returns `hits` scored by their final rank (the first scores highest)."""
    return tuple(h.model_copy(update={"score": float(len(hits) - i)}) for i, h in enumerate(hits))


def ordered_by_priors(hits: Sequence[Hit], window: int, time_range: Optional[TimeRange] = None,
                      order: Callable[[list[Hit]], list[Hit]] = list) -> tuple[Hit, ...]:
    """Returns `hits` with the hits of their first `window` documents ahead, put in the `order` of a pack's prior.

    For statutes a question is answered by a law before the regulations and
    judicial interpretations below it, unless it asks for those
    (domains/prc_statutes/kinds). Versions of one document take one place: only
    the version in force in `time_range` (the newest when None) stays, where
    the document first ranked; the others' chunks follow all hits (see best_versions).
    """
    kept, other_versions = best_versions(hits, time_range)
    ahead = set(list(dict.fromkeys(h.source for h in kept))[:window])
    return rescored(order([h for h in kept if h.source in ahead]) +
                    [h for h in kept if h.source not in ahead] + other_versions)


def question_window(query: str, time_range: Optional[TimeRange]) -> Optional[TimeRange]:
    """Returns the time the question names: the `time_range` an earlier step extracted, else read from the query."""
    return time_range or time_range_of(query)


@skill
@tool
def versions_ahead(hits: Hits, query: str, time_range: Optional[TimeRange] = None, *,
                   window: int = AHEAD_WINDOW) -> HitsOut:
    """Puts the chunks of the first `window` documents of `hits`, each in one version (ordered_by_priors), ahead."""
    return {"hits": ordered_by_priors(hits, window, question_window(query, time_range))}


@skill
@tool
def one_version(hits: Hits, query: str, time_range: Optional[TimeRange] = None) -> HitsOut:
    """Keeps `hits` in order but moves every document's other versions after all of them.

    Two versions of one document share most units, so both tend to rank and
    take two of the first places; the version in force (the newest unless the
    question is dated) takes the document's place.
    """
    kept, other_versions = best_versions(hits, question_window(query, time_range))
    return {"hits": rescored(kept + other_versions)}


@skill
@tool
def diversify(hits: Hits, *, cap: int = 1) -> HitsOut:
    """Orders `hits` so the first ones span documents (per_document: each document's first `cap` chunks first)."""
    return {"hits": per_document(hits, cap)}
