"""relation_search: λq. Par(name_sides >> hybrid retrieval >> fusion >> named_first >> edge_search, hybrid_search, merge=keep_lead) — the typed edges asked about, each with its article."""
from __future__ import annotations

from typing import Any, Mapping

from lambdarag import Term
from lambdarag.skills.lead import AHEAD

from .hybrid_search import adds_to_hybrid, hybrid_retrieval
from .registry import enabled, pattern, skill


@pattern("relation_search")
def relation_search(settings: Mapping[str, Any]) -> Term:
    """Returns retrieval for who-governs-what questions: graph edges of the asked type first, then the question's ranking.

    Chunks of a document the question names come first; with the graph off
    there are no edges, only that ordering. What else it brings comes behind
    hybrid's first five documents (keep_lead's `ahead`).
    """
    return related(settings, ahead=AHEAD)


def related(settings: Mapping[str, Any], sides: str = "name_sides", ahead: int = 0) -> Term:
    """Returns relation_search with `sides` the skill naming the documents of the question (a pack's own:
    statute_sides) and hybrid's first `ahead` documents ahead of the documents it brings without stronger evidence."""
    body = (skill(settings, sides) >> hybrid_retrieval(settings, "relation_search")
            >> skill(settings, "named_first"))
    return adds_to_hybrid(body >> skill(settings, "edge_search") if enabled(settings, "graph") else body, settings,
                          ahead=ahead)
