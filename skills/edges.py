"""`edge_search`: the typed graph edges a relation question asks about, with the passage stating each as evidence.

A question's cue (the corpus profile's `relation_cues`) picks the relation
types; among the graph's edges of those types the ones whose ends and stated
text cover most of the question's words win. Their passages go first into
`hits` and the edges first into `relations`, so the answer can state the
edge and cite its source.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Optional, Sequence, TypedDict

from lambdarag import Context, User, tool
from .store.access import principal
from .store.derived import PerObject
from .store.records import Hit, Hits, Relation

from .profile import profile_of
from .registry import skill
from .sentences import keywords
from .sides import interleave
from .store.corpus import to_hits


def asked_relations(query: str, cues: Sequence[tuple[re.Pattern[str], tuple[str, ...]]]) -> tuple[str, ...]:
    """Returns the relation types the question's cues (the corpus profile's) ask about, in order of the cues found."""
    return tuple(dict.fromkeys(r for pattern, rels in cues if pattern.search(query) for r in rels))


class EdgeTable:
    """The graph's relations grouped by type, for matching questions against."""

    def __init__(self, records: Iterable[Any]) -> None:
        self.by_type: dict[str, list[Any]] = {}
        for rec in records:
            self.by_type.setdefault(rec.relation, []).append(rec)

    def best(self, query: str, types: Sequence[str], user: Any = None, limit: int = 2, threshold: float = 0.75,
             asking: frozenset[str] = frozenset(), source_rank: Callable[[str], int] = lambda source: 0
             ) -> list[tuple[float, Any]]:
        """Returns up to `limit` (score, edge) of the asked types covering at least `threshold` of the topic words.

        The topic words are the question's keywords holding none of the
        `asking` words (those name the relation, not what it is about). Edges
        naming an entity of the question win over the others; among equals an
        edge from a document of a better prior `source_rank` wins.
        """
        words = [w for w in keywords(query) if not any(a in w for a in asking)] or list(keywords(query))
        total = sum(len(w) for w in words) or 1
        scored = []
        for rank, kind in enumerate(types):
            for rec in self.by_type.get(kind, ()):
                text = f"{rec.head}{rec.tail}{rec.description}"
                score = sum(len(w) for w in words if w in text) / total
                if rec.head in query or rec.tail in query:
                    score += 0.2
                if score >= threshold and rec.visible_to(user):
                    scored.append((score - 0.01 * rank, rec))
        named = [p for p in scored if p[1].head in query or p[1].tail in query]
        scored = named or scored  # an edge of the entity the question names beats any other
        scored.sort(key=lambda p: p[1].source, reverse=True)  # newest version first among equals (…(2023-07-20).md)
        scored.sort(key=lambda p: (-p[0], source_rank(p[1].source), len(p[1].description)))
        out, seen = [], set()
        for score, rec in scored:
            key = (rec.head, rec.relation, rec.tail)
            if key not in seen:
                seen.add(key)
                out.append((score, rec))
            if len(out) == limit:
                break
        return out


edge_table: PerObject[EdgeTable] = PerObject(lambda graph: EdgeTable(graph.records()),
                                              stamp=lambda graph: graph.g.number_of_edges())
"""Returns the edge table of a graph, rebuilt when its number of edges changes."""


def article_hit(backend: Any, rec: Any, query: str, user: Any) -> Optional[Hit]:
    """Returns the chunk of the article that states an edge, else the best chunk of its document for the question."""
    try:
        chunk = backend.chunk(f"{rec.source}#{rec.section}")
        if principal(user).may_read(chunk.department, chunk.security_level):
            return to_hits([(chunk, 1.0)], "graph")[0]
    except KeyError:
        pass
    found = to_hits(backend.bm25(query, 1, user=user, filters={"source": rec.source}), "graph")
    return found[0] if found else None


class EdgesOut(TypedDict):
    """The writes of `edge_search`."""

    hits: Hits
    relations: tuple[Relation, ...]


@skill
@tool(effect="io")
def edge_search(query: str, hits: Hits, user: User, ctx: Context, relations: tuple[Relation, ...] = (), *,
                limit: int = 2, context: int = 10) -> EdgesOut:
    """Puts the edges that answer a relation question first in `relations`, their articles in `hits`.

    The edges' articles alternate with the question's ranking at the top of
    `hits` (config `limit`: edges, default 2); up to `context` (default 10)
    other relations of the entities the question names follow the edges.

    Without a graph, or when no cue names a relation type, `hits` and `relations` stay as they are.
    """
    graph, profile = ctx.resources.get("graph"), profile_of(ctx)
    types = asked_relations(query, profile.graph.relation_cues)
    if graph is None or not types:
        return {"hits": hits, "relations": relations}
    found = edge_table(graph).best(query, types, user, limit, asking=profile.graph.asking_words,
                                   source_rank=profile.graph.source_rank)
    backend = ctx.resource("index")
    evidence = [h for h in (article_hit(backend, rec, query, user) for _, rec in found) if h]
    edges = tuple(rec.to_relation() for _, rec in found)
    # then the other facts about what the question names, so the answer and the page can show its neighbourhood
    named = [rec.to_relation() for name in graph.find_entities(query, user=user)[:3]
             for rec in graph.neighbors(name, direction="both", user=user)][:context]
    rest = tuple(dict.fromkeys(r for r in (*relations, *named) if r not in edges))
    # alternate with the question's own ranking: an edge's article is strong evidence, not a certainty
    return {"hits": interleave([evidence, hits], hits, len(evidence)), "relations": edges + rest}

