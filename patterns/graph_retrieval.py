"""graph_retrieval: λq. entity_extract >> graph_walk >> graph_expand >> Map(retrieval, over=variants) >> rrf_merge >> rerank(q, _)."""
from __future__ import annotations

from typing import Any, Mapping

from lambdarag import Map, Term

from .hybrid_search import fuse, hybrid_retrieval, retrieve
from .registry import enabled, pattern, skill


@pattern("graph_retrieval")
def graph_retrieval(settings: Mapping[str, Any]) -> Term:
    """Returns retrieval widened by the entity graph: the question and its graph-expanded variants are searched.

    With the graph switched off it is hybrid retrieval on the question alone.
    """
    if not enabled(settings, "graph"):
        return hybrid_retrieval(settings, "graph_retrieval")
    search = Map(retrieve(settings), over="variants", bind="query", pick="text", width=2)
    return (skill(settings, "entity_extract") >> skill(settings, "graph_walk")
            >> skill(settings, "graph_expand") >> search >> fuse(settings, "graph_retrieval"))
