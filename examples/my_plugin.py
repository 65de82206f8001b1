# examples/my_plugin.py
"""A plugin: one skill and one pattern, registered when agent-config.yml lists this module under `plugins:`."""
from collections import Counter
from typing import TypedDict

from lambdarag import tool
from lambdarag.patterns.hybrid_search import retrieve
from lambdarag.patterns.registry import pattern, skill as configured
from lambdarag.skills import skill
from lambdarag.skills.store.records import Hit


class Kept(TypedDict):
    """What per_source writes: the hits it keeps."""

    hits: tuple[Hit, ...]


@skill
@tool
def per_source(hits: tuple[Hit, ...], *, limit: int = 2) -> Kept:
    """Keeps at most `limit` hits of each source file, best first: reads `hits`, writes `hits`, takes `limit`."""
    kept, counts = [], Counter()
    for h in hits:
        counts[h.source] += 1
        if counts[h.source] <= limit:
            kept.append(h)
    return {"hits": tuple(kept)}


@pattern("side_by_side")
def side_by_side(settings):
    """Returns retrieval for comparisons: each statute the question names searched alone, three hits per file."""
    return (configured(settings, "name_sides", loose=True) >> retrieve(settings)
            >> configured(settings, "score_fusion") >> configured(settings, "side_search", per_side=2)
            >> configured(settings, "per_source", limit=3))
