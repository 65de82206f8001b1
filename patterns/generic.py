"""Generic patterns: pipeline, fan_out_merge, map_reduce, review — compositions of any terms."""
from __future__ import annotations

from typing import Any, Sequence

from pydantic import BaseModel

from lambdarag import Compose, Guard, Map, Merge, Par, State, Term


def pipeline(*terms: Term) -> Term:
    """Returns the terms in sequence (``t1 >> t2 >> …``)."""
    return Compose(*terms)


def _union(values: Sequence[tuple]) -> tuple:
    """Returns the items of several tuples, each once (records compared by value), in first-seen order."""
    seen: dict[Any, Any] = {}
    for value in values:
        for item in value:
            seen.setdefault(item.model_dump_json() if isinstance(item, BaseModel) else item, item)
    return tuple(seen.values())


def fan_out_merge(*terms: Term, k: int = 60) -> Term:
    """Returns the terms run concurrently, their `hits` fused by RRF and every other shared field merged.

    Tuple fields (entities, relations, wiki_pages, candidates, …) are unions in
    branch order; `hits` lists are fused by reciprocal rank; any other shared
    field keeps the first branch's value that differs from the input's.
    """
    return Par(*terms, merge=fused(terms, k=k))


def fused(terms: Sequence[Term], k: int = 60) -> Merge:
    """Returns the merge of `fan_out_merge` over `terms` (declared as ``merge=fan_out_merge(k=60)``)."""
    from lambdarag.skills.store.records import RankedList
    from lambdarag.skills.fusion import rrf

    shared = {f for i, a in enumerate(terms) for b in terms[i + 1:] for f in a.writes() & b.writes()}

    def merge(base: State, results: Sequence[State]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for field in shared:
            values = [getattr(r, field) for r in results]
            if field == "hits":
                out[field] = rrf([RankedList(retriever=t.name, query=base.query, hits=v)
                                  for t, v in zip(terms, values)], k=k)
            elif isinstance(getattr(base, field), tuple):
                out[field] = _union(values)
            else:
                out[field] = next((v for v in values if v != getattr(base, field)), getattr(base, field))
        return out

    return Merge("fan_out_merge", shared, merge, {"k": k})


def keeps_lead(route: Term, plain: Term, window: int = 5, ahead: int = 0) -> Term:
    """Returns `route` and `plain` run concurrently, the route's evidence kept with `plain`'s best hit among its
    first `window` documents, and `plain`'s first `ahead` documents ahead of the route's own, unless the route's
    evidence there is stronger (skills.lead); every other field the two write is the route's."""
    return Par(route, plain, merge=lead_kept(route, plain, window, ahead))


def lead_kept(route: Term, plain: Term, window: int = 5, ahead: int = 0) -> Merge:
    """Returns the merge of `keeps_lead` (declared as ``merge=keep_lead(window=5)`` or
    ``merge=keep_lead(window=5, ahead=5)``)."""
    from lambdarag.skills.lead import kept_lead
    from lambdarag.skills.titles import names_whole

    shared = route.writes() & plain.writes()

    def merge(base: State, results: Sequence[State]) -> dict[str, Any]:
        mine, theirs = results
        out = {f: getattr(mine, f) for f in shared}
        # with `ahead`, what plain retrieval weighs too is no stronger evidence: only a document named whole is
        named = [side.source for side in getattr(mine, "sides", ()) if not ahead or names_whole(side)]
        out["hits"] = kept_lead(mine.hits, theirs.hits, named, window, ahead)
        return out

    return Merge("keep_lead", shared, merge, {"window": window} | ({"ahead": ahead} if ahead else {}))


def map_reduce(split: Term, process: Term, reduce: Term, *, over: str, bind: str = "query",
               pick: str | None = None, width: int = 4, limit: int = 16) -> Term:
    """Returns ``split >> Map(process, over) >> reduce``: split writes a tuple field, each element is processed."""
    return split >> Map(process, over=over, bind=bind, pick=pick, width=width, limit=limit) >> reduce


def review(generate: Term, check: Term, retry: int = 1) -> Term:
    """Returns generate checked by `check`, regenerated until the verdict passes (at most retry + 1 runs)."""
    return Guard(generate, check, retry=retry)
