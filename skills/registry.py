"""The skill registry: skill name → factory ``(config) -> Term`` (see `lambdarag.registry`).

`HOMES` says which module registers each skill, so that a skill's module is
imported when a route first builds it, not at ``import skills``: an offline
fact question never loads the graph store, the LLM-only output schemas or the
planner (tests/test_registry.py checks the table against what the modules register).
"""
from __future__ import annotations

from lambdarag.registry import Registry

_MODULES = {
    "dense": ("embedding_search",),
    "lexical": ("bm25_search",),
    "fusion": ("rrf_merge", "score_fusion", "merge_results"),
    "learned": ("learned_boost",),
    "rerank": ("rerank",),
    "sides": ("name_sides", "side_search", "named_first"),
    "diversify": ("priors_ahead", "one_version", "diversify", "topic_search", "document_search"),
    "temporal": ("extract_time_range", "time_filter"),
    "edges": ("edge_search",),
    "graph": ("entity_extract", "graph_walk", "relation_lookup", "graph_expand"),
    "wiki": ("wiki_page_read",),
    "faq": ("faq_direct_answer",),
    "context": ("assemble_context",),
    "classify": ("classify_offline", "classify_llm", "classify"),
    "generate": ("answer_generate",),
    "check": ("citation_check", "claim_check"),
    "facts": ("fact_extract", "fact_support"),
    "gaps": ("sufficient", "missing_topics", "gap_topics"),
    "planner": ("query_expand",),
}
HOMES = {name: f"skills.{module}" for module, names in _MODULES.items() for name in names}

REGISTRY = Registry("skill", homes=HOMES)
skill = REGISTRY.register
build = REGISTRY.build
