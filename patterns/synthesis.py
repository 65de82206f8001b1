"""synthesis: λq. fan_out_merge(wiki_deep, graph_retrieval, fusion_search) >> topic_search >> document_search >> diversify >> Guard(answer_generate, citation_check)."""
from __future__ import annotations

from typing import Any, Mapping

from lambdarag import Term

from .generic import fan_out_merge, review
from .registry import REGISTRY, pattern, skill


@pattern("synthesis")
def synthesis(settings: Mapping[str, Any]) -> Term:
    """Returns three strategies run concurrently, their evidence fused and spread over documents, and a reviewed answer.

    The statutes whose titles name the question's topics and those whose
    articles match it most as a whole join the evidence; hits are ordered so
    that the first ones come from different statutes, statutes before their
    regulations and interpretations.
    """
    branches = [REGISTRY.build(name, settings) for name in ("wiki_deep", "graph_retrieval", "fusion_search")]
    spread = (skill(settings, "topic_search") >> skill(settings, "document_search")
              >> skill(settings, "diversify", statutes_first=True))
    return (fan_out_merge(*branches) >> spread
            >> review(skill(settings, "answer_generate"), skill(settings, "citation_check")))
