"""synthesis: λq. Par(extract_time_range >> fan_out_merge(wiki_deep, graph_retrieval, fusion_search) >> time_filter >> diversify, hybrid_search, merge=keep_lead) >> Guard(answer_generate, citation_check)."""
from __future__ import annotations

from typing import Any, Mapping

from lambdarag import Term

from .generic import fan_out_merge, review
from .hybrid_search import adds_to_hybrid
from .registry import pattern, registered, skill


@pattern("synthesis")
def synthesis(settings: Mapping[str, Any]) -> Term:
    """Returns three strategies run concurrently, their evidence one version each, spread over documents.

    Every document answers in its current version unless the question names a
    time (then in the version in force then); hits are ordered so that the
    first ones come from different documents. A domain pack's variant
    (`surveyed`) puts the documents it finds about the question as a whole
    first, and may spread them by its prior.
    """
    return surveyed(settings)


def surveyed(settings: Mapping[str, Any], lead: Term | None = None, spread: Term | None = None,
             window: int = 5) -> Term:
    """Returns the synthesis route with `lead` (a pack's terms putting whole documents ahead of the merged
    evidence) before the time filter, `spread` (default: diversify) after it, and hybrid's best hit kept among
    its first `window` documents (keep_lead)."""
    branches = [registered(name, settings) for name in ("wiki_deep", "graph_retrieval", "fusion_search")]
    tail = skill(settings, "time_filter", undated="latest") >> (spread or skill(settings, "diversify"))
    evidence = adds_to_hybrid(skill(settings, "extract_time_range") >> fan_out_merge(*branches)
                              >> (lead >> tail if lead is not None else tail), settings, window)
    return evidence >> review(skill(settings, "answer_generate"), skill(settings, "citation_check"))
