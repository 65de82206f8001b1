"""keyword_search: λq. bm25_search >> rrf_merge — fast exact matching, no model calls."""
from __future__ import annotations

from typing import Any, Mapping

from lambdarag import Term

from .registry import params, pattern, skill


@pattern("keyword_search")
def keyword_search(settings: Mapping[str, Any]) -> Term:
    """Returns BM25 retrieval ranked into `hits` (rrf over one list keeps BM25's order and provenance)."""
    return skill(settings, "bm25_search") >> skill(settings, "rrf_merge", k=params(settings, "keyword_search").get("rrf_k", 60))
