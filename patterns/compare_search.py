"""compare_search: λq. Par(name_sides >> hybrid retrieval >> fusion >> side_search >> one_version, hybrid_search, merge=keep_lead) — every named side in the evidence."""
from __future__ import annotations

from typing import Any, Mapping

from lambdarag import Term
from lambdarag.skills.lead import AHEAD

from .hybrid_search import adds_to_hybrid, hybrid_retrieval
from .registry import params, pattern, skill


@pattern("compare_search")
def compare_search(settings: Mapping[str, Any]) -> Term:
    """Returns retrieval for a comparison: the question's own ranking, with each named side's best chunks first.

    Each thing the question names is resolved to its document and searched
    alone for the compared aspect, so no side can be crowded out by the
    other, nor by a second version of one document. What else it brings
    comes behind hybrid's first five documents (keep_lead's `ahead`).
    """
    return compared(settings, ahead=AHEAD)


def compared(settings: Mapping[str, Any], sides: str = "name_sides", ahead: int = 0) -> Term:
    """Returns compare_search with `sides` the skill naming the question's sides (a pack's own: statute_sides) and
    hybrid's first `ahead` documents ahead of the documents it brings without stronger evidence (skills.lead)."""
    p = params(settings, "compare_search")
    body = (skill(settings, sides, loose=True) >> hybrid_retrieval(settings, "compare_search")
            >> skill(settings, "side_search", per_side=p.get("per_side", 1)) >> skill(settings, "one_version"))
    return adds_to_hybrid(body, settings, ahead=ahead)
