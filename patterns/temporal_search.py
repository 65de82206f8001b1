"""temporal_search: λq. extract_time_range >> retrieval >> time_filter >> rerank(q, _)."""
from __future__ import annotations

from typing import Any, Mapping

from lambdarag import Term

from .hybrid_search import retrieve
from .registry import enabled, params, pattern, skill


@pattern("temporal_search")
def temporal_search(settings: Mapping[str, Any]) -> Term:
    """Returns retrieval restricted to the right version: the newest for 最新/现行, the one in force for a year.

    The filter runs after fusion and before rerank, so rerank only orders
    chunks of the versions that apply.
    """
    p = params(settings, "temporal_search")
    body = (skill(settings, "extract_time_range") >> retrieve(settings)
            >> skill(settings, "rrf_merge", k=p.get("rrf_k", 60)) >> skill(settings, "time_filter"))
    return body >> skill(settings, "rerank") if enabled(settings, "rerank") else body
