"""Layer 2: patterns, compositions of skills. `REGISTRY` maps a pattern name to its factory ``(settings) -> Term``."""
from . import (compare_search, fusion_search, graph_retrieval, hybrid_search, keyword_search, relation_search,
               synthesis, temporal_search, wiki_deep)
from .generic import fan_out_merge, map_reduce, pipeline, review
from .registry import REGISTRY, build

__all__ = ["REGISTRY", "build", "pipeline", "fan_out_merge", "map_reduce", "review"]
