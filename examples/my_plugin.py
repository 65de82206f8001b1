# examples/my_plugin.py
"""A plugin: one skill and one pattern, registered when agent-config.yml lists this module under `plugins:`."""
from collections import Counter

from lambdarag import Tool
from patterns.hybrid_search import retrieve
from patterns.registry import pattern, skill as configured
from skills import skill


@skill("per_source")
def per_source(config):
    """Returns a term keeping at most `limit` hits (default 2) of each source file, best first."""
    limit = int(config.get("limit", 2))

    def run(state):
        kept, counts = [], Counter()
        for h in state.hits:
            counts[h.source] += 1
            if counts[h.source] <= limit:
                kept.append(h)
        return {"hits": tuple(kept)}

    return Tool("per_source", run, reads=["hits"], writes=["hits"])


@pattern("side_by_side")
def side_by_side(settings):
    """Returns retrieval for comparisons: each statute the question names searched alone, three hits per file."""
    return (configured(settings, "name_sides", loose=True) >> retrieve(settings)
            >> configured(settings, "score_fusion") >> configured(settings, "side_search", per_side=2)
            >> configured(settings, "per_source", limit=3))
