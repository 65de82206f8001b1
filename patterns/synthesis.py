"""synthesis: λq. fan_out_merge(wiki_deep, graph_retrieval, fusion_search) >> Guard(answer_generate, citation_check)."""
from __future__ import annotations

from typing import Any, Mapping

from lambdarag import Term

from .generic import fan_out_merge, review
from .registry import REGISTRY, pattern, skill


@pattern("synthesis")
def synthesis(settings: Mapping[str, Any]) -> Term:
    """Returns three strategies run concurrently, their evidence fused, and a reviewed, cited answer."""
    branches = [REGISTRY.build(name, settings) for name in ("wiki_deep", "graph_retrieval", "fusion_search")]
    return fan_out_merge(*branches) >> review(skill(settings, "answer_generate"), skill(settings, "citation_check"))
