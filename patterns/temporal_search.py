"""temporal_search: λq. Par(extract_time_range >> retrieval >> fusion >> time_filter >> rerank(q, _), hybrid_search, merge=keep_lead)."""
from __future__ import annotations

from typing import Any, Mapping

from lambdarag import Term
from lambdarag.skills.lead import AHEAD

from .hybrid_search import adds_to_hybrid, fusion, retrieve
from .registry import pattern, reranks, skill


@pattern("temporal_search")
def temporal_search(settings: Mapping[str, Any]) -> Term:
    """Returns retrieval restricted to the right version: the newest for 最新/现行, the one in force for a year.

    The filter runs after fusion and before rerank, so rerank only orders
    chunks of the versions that apply. What else it brings comes behind
    hybrid's first five documents (keep_lead's `ahead`).
    """
    return dated(settings, ahead=AHEAD)


def dated(settings: Mapping[str, Any], also: Term | None = None, ahead: int = 0) -> Term:
    """Returns temporal_search with `also` (a pack's own filter of what is in force then) after the time filter and
    hybrid's first `ahead` documents ahead of the documents it brings without stronger evidence."""
    kept = skill(settings, "time_filter")
    body = (skill(settings, "extract_time_range") >> retrieve(settings)
            >> fusion(settings, "temporal_search") >> (kept >> also if also is not None else kept))
    return adds_to_hybrid(body >> skill(settings, "rerank") if reranks(settings) else body, settings, ahead=ahead)
