"""keyword_search: λq. bm25_search >> rrf_merge — fast exact matching, no model calls."""
from __future__ import annotations

from typing import Any, Mapping

from lambdarag import Term

from .hybrid_search import retrieve
from .registry import enabled, params, pattern, skill


@pattern("keyword_search")
def keyword_search(settings: Mapping[str, Any]) -> Term:
    """Returns BM25 retrieval ranked into `hits` (rrf over one list keeps BM25's order and provenance).

    With BM25 switched off it degrades to whatever retrieval is enabled.
    """
    search = skill(settings, "bm25_search") if enabled(settings, "bm25") else retrieve(settings)
    return search >> skill(settings, "rrf_merge", k=params(settings, "keyword_search").get("rrf_k", 60))
