"""fusion_search: λq. query_expand >> Map(hybrid retrieval, over=variants) >> rrf_merge >> rerank(q, _)."""
from __future__ import annotations

from typing import Any, Mapping

from lambdarag import Map, Term

from .hybrid_search import fuse, retrieve
from .registry import params, pattern, skill


@pattern("fusion_search")
def fusion_search(settings: Mapping[str, Any]) -> Term:
    """Returns multi-query retrieval: every planned variant is searched, all lists fused, reranked on the original.

    A failed planner leaves only the original query (marked in the trace), so
    this degrades to hybrid_search.
    """
    p = params(settings, "fusion_search")
    expand = skill(settings, "query_expand")
    per_variant = Map(retrieve(settings), over="variants", bind="query", pick="text",
                      width=2, limit=int(p.get("expansion_count", 3)) + 1)
    body = per_variant >> fuse(settings, "fusion_search")
    return expand >> body if p.get("query_expansion", True) else body
