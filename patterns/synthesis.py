"""synthesis: λq. Par(extract_time_range >> fan_out_merge(wiki_deep, graph_retrieval, fusion_search) >> document_search >> topic_search >> time_filter >> diversify, hybrid_search, merge=keep_lead) >> Guard(answer_generate, citation_check)."""
from __future__ import annotations

from typing import Any, Mapping

from lambdarag import Term

from .generic import fan_out_merge, review
from .hybrid_search import adds_to_hybrid
from .registry import REGISTRY, pattern, skill


@pattern("synthesis")
def synthesis(settings: Mapping[str, Any]) -> Term:
    """Returns three strategies run concurrently, their evidence led by whole documents, one version each, spread over documents.

    The documents the corpus profile finds matching the question as a whole
    go first, alternating with those whose titles name the question's topics;
    every document answers in its current version unless the question names a
    time (then in the version in force then); hits are ordered so that the
    first ones come from different documents, better priors ahead (for
    statutes: the kinds the question asks for, else laws leading the
    regulations and interpretations that match no better).
    """
    branches = [REGISTRY.build(name, settings) for name in ("wiki_deep", "graph_retrieval", "fusion_search")]
    spread = (skill(settings, "document_search") >> skill(settings, "topic_search")
              >> skill(settings, "time_filter", undated="latest") >> skill(settings, "diversify", priors_first=True))
    evidence = adds_to_hybrid(skill(settings, "extract_time_range") >> fan_out_merge(*branches) >> spread, settings)
    return evidence >> review(skill(settings, "answer_generate"), skill(settings, "citation_check"))
