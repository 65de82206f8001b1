"""What crosses a bridge: LambdaRAG's hits as passages another framework wraps in its documents, and another
framework's passages as one ranked list of a LambdaRAG pipeline (`foreign_search`)."""
from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple, Optional, Sequence

from lambdarag import Term, User, tool
from lambdarag.errors import ConfigError
from lambdarag.skills.context import marker
from lambdarag.skills.store.access import Label
from lambdarag.skills.store.records import Candidates, CandidatesOut, Hit, RankedList

from ..result import SearchResult


class Passage(NamedTuple):
    """One retrieved text as the frameworks on both sides hold it: its id, text, score and metadata."""

    id: str
    text: str
    score: float
    metadata: Mapping[str, Any]


def missing_extra(bridge: str, extra: str) -> ImportError:
    """Returns the error of a bridge whose framework is not installed: it names the extra that installs it."""
    return ImportError(f"the {bridge} bridge needs the {extra!r} extra: pip install 'lambdarag[{extra}]'")


def passages(result: SearchResult, cited_only: bool = False) -> list[Passage]:
    """Returns a result's hits in rank order as passages, each saying whether the answer cites it.

    The metadata holds the hit's place (chunk_id, source, title, section, date,
    kind), its citation marker, ``cited``, and the run's query_id and strategy.
    With `cited_only`, only the hits the answer cites.
    """
    ids = {c.chunk_id for c in result.citations if c.chunk_id}
    places = {(c.source, c.section) for c in result.citations}
    out = []
    for h in result.hits:
        cited = h.chunk_id in ids or (h.source, h.section) in places
        if cited or not cited_only:
            out.append(Passage(h.chunk_id, h.text, h.score, {
                "chunk_id": h.chunk_id, "source": h.source, "title": h.title, "section": h.section, "date": h.date,
                "kind": h.kind, "citation": marker(h), "cited": cited, "query_id": result.query_id,
                "strategy": result.strategy}))
    return out


def passage_hit(passage: Passage, retriever: str, rank: int) -> Hit:
    """Returns a foreign passage as a hit of `retriever` at `rank`; its place and access labels come from its
    metadata (``source``, ``title``, ``section``, ``date``, ``department``, ``security_level``), else it is public
    and its source is its id."""
    meta = passage.metadata
    level = meta.get("security_level", 0)
    return Hit(chunk_id=passage.id, text=passage.text, score=passage.score, source=str(meta.get("source") or passage.id),
               title=str(meta.get("title", "")), section=str(meta.get("section", "")),
               date=None if meta.get("date") is None else str(meta["date"]),
               department=meta.get("department"), security_level=int(level) if level is not None else 0,
               ranks={retriever: rank}, scores={retriever: passage.score})


def foreign_search(skill: str, retriever: Any, fetch: Callable[[str], Sequence[Passage]], *, name: str,
                   top_k: Optional[int] = None) -> Term:
    """Returns the term that appends `fetch(query)`'s passages to `candidates` as the ranked list `name`.

    It reads ``query``, ``user`` and ``candidates`` and writes ``candidates``,
    like `bm25_search`, so it is one branch of a `Par` whose lists a fusion
    merges. A passage whose metadata labels it (``department``,
    ``security_level``) reaches only users who may read it. It prints as
    ``skill(retriever=‹Type›, name=…)``; `top_k` keeps the first passages.
    """
    if not name or not isinstance(name, str):
        raise ConfigError(f"{skill}: name must be a non-empty string naming the ranked list, got {name!r}")
    if top_k is not None and (not isinstance(top_k, int) or top_k < 1):
        raise ConfigError(f"{skill}: top_k must be a positive integer or None, got {top_k!r}")

    def ranked(query: str, user: User, candidates: Candidates = ()) -> CandidatesOut:
        hits = [passage_hit(p, name, rank) for rank, p in enumerate(fetch(query), 1)]
        visible = tuple(h for h in hits if Label(department=h.department, security_level=h.security_level)
                        .visible_to(user))[:top_k]
        return {"candidates": candidates + (RankedList(retriever=name, query=query, hits=visible),)}

    params = {"retriever": retriever, "name": name, **({"top_k": top_k} if top_k is not None else {})}
    return tool(ranked, effect="io", name=skill).declared(skill, params, params)
