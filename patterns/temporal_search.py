"""temporal_search: λq. Par(extract_time_range >> retrieval >> fusion >> time_filter >> rerank(q, _), hybrid_search, merge=keep_lead)."""
from __future__ import annotations

from typing import Any, Mapping

from lambdarag import Term

from .hybrid_search import adds_to_hybrid, fusion, retrieve
from .registry import pattern, reranks, skill


@pattern("temporal_search")
def temporal_search(settings: Mapping[str, Any]) -> Term:
    """Returns retrieval restricted to the right version: the newest for 最新/现行, the one in force for a year.

    The filter runs after fusion and before rerank, so rerank only orders
    chunks of the versions that apply.
    """
    return dated(settings)


def dated(settings: Mapping[str, Any], also: Term | None = None) -> Term:
    """Returns temporal_search with `also` (a pack's own filter of what is in force then) after the time filter."""
    kept = skill(settings, "time_filter")
    body = (skill(settings, "extract_time_range") >> retrieve(settings)
            >> fusion(settings, "temporal_search") >> (kept >> also if also is not None else kept))
    return adds_to_hybrid(body >> skill(settings, "rerank") if reranks(settings) else body, settings)
