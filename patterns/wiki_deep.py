"""wiki_deep: λq. wiki_page_read >> If(sufficient, identity, gap_fill) — compiled knowledge first, search for what it lacks."""
from __future__ import annotations

from typing import Any, Mapping

from lambdarag import Identity, If, Map, Term

from .hybrid_search import fuse, retrieve
from .registry import enabled, params, pattern, skill


@pattern("wiki_deep")
def wiki_deep(settings: Mapping[str, Any]) -> Term:
    """Returns wiki pages as evidence when they cover the question, else pages plus a search for the missing topics.

    The answer stage cites wiki pages and hits alike. With the wiki off it is
    fusion retrieval on the question.
    """
    search = Map(retrieve(settings), over="variants", bind="query", pick="text", width=2) >> fuse(settings, "wiki_deep")
    gap_fill = skill(settings, "gap_topics") >> search
    if not enabled(settings, "wiki"):
        return gap_fill
    fill = gap_fill if params(settings, "wiki_deep").get("gap_fill", True) else Identity
    return skill(settings, "wiki_page_read") >> If(skill(settings, "sufficient"), Identity, fill, on="sufficient")
