"""synthesis: λq. fan_out_merge(wiki_deep, graph_retrieval, fusion_search) >> topic_search >> diversify >> Guard(answer_generate, citation_check)."""
from __future__ import annotations

from typing import Any, Mapping

from lambdarag import Term

from .generic import fan_out_merge, review
from .registry import REGISTRY, pattern, skill


@pattern("synthesis")
def synthesis(settings: Mapping[str, Any]) -> Term:
    """Returns three strategies run concurrently, their evidence fused and spread over documents, and a reviewed answer.

    The statutes whose titles name the question's topics join the evidence,
    and hits are ordered so that the first ones come from different documents.
    """
    branches = [REGISTRY.build(name, settings) for name in ("wiki_deep", "graph_retrieval", "fusion_search")]
    spread = skill(settings, "topic_search") >> skill(settings, "diversify")
    return (fan_out_merge(*branches) >> spread
            >> review(skill(settings, "answer_generate"), skill(settings, "citation_check")))
