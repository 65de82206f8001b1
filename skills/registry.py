"""The skill registry: skill name → its declared term (see `lambdarag.registry`).

A skill is registered once, by ``@skill`` on its typed tool or its function
of keyword-only parameters, or ``skill(Lam(...))``, in its module. `MODULES`
declares which module holds which skills, so that a skill's module is imported
when a route first builds it, not at ``import skills``: an offline fact
question never loads the graph store, the LLM-only output schemas or the
planner. Registering a skill elsewhere than this table says fails, and
tests/test_registry.py checks the table against what the modules register.
"""
from __future__ import annotations

from lambdarag.registry import Registry

MODULES: dict[str, tuple[str, ...]] = {
    "check": ("citation_check", "claim_check"),
    "classify": ("classify_offline", "classify_llm", "classify"),
    "context": ("assemble_context",),
    "dense": ("embedding_search",),
    "diversify": ("versions_ahead", "one_version", "diversify"),
    "edges": ("edge_search",),
    "facts": ("fact_extract", "fact_support"),
    "faq": ("faq_direct_answer",),
    "fusion": ("rrf_merge", "score_fusion", "merge_results"),
    "gaps": ("sufficient", "missing_topics", "gap_topics"),
    "generate": ("answer_generate",),
    "graph": ("entity_extract", "graph_walk", "relation_lookup", "graph_expand"),
    "learned": ("learned_boost",),
    "lexical": ("bm25_search",),
    "planner": ("query_expand",),
    "rerank": ("rerank",),
    "sides": ("name_sides", "side_search", "named_first"),
    "temporal": ("extract_time_range", "time_filter"),
    "wiki": ("wiki_page_read",),
}
"""Module of this package → the skills it registers."""

HOMES = {name: f"{__package__}.{module}" for module, names in MODULES.items() for name in names}
"""Skill name → the module that registers it."""

REGISTRY = Registry("skill", homes=HOMES)
skill = REGISTRY.register
build = REGISTRY.build
