"""Layer 2: patterns, compositions of skills. `REGISTRY` maps a pattern name to its factory ``(settings) -> Term``.

Each shipped pattern lives in the module of its name (`SHIPPED`), imported the first time the pattern is built, so
loading a config that names shipped patterns imports none of them, nor the calculus (`lambdarag where`); the
names below load on first use (PEP 562).
"""
from importlib import import_module
from typing import TYPE_CHECKING, Any

SHIPPED = ("compare_search", "fusion_search", "graph_retrieval", "hybrid_search", "keyword_search",
           "relation_search", "synthesis", "temporal_search", "wiki_deep")
"""The shipped patterns: each registered by the module of this package named after it."""

_EXPORTS = {"REGISTRY": "registry", "build": "registry", "pipeline": "generic", "fan_out_merge": "generic",
            "map_reduce": "generic", "review": "generic"}
__all__ = list(_EXPORTS)

if TYPE_CHECKING:
    from .generic import fan_out_merge as fan_out_merge, map_reduce as map_reduce, pipeline as pipeline
    from .generic import review as review
    from .registry import REGISTRY as REGISTRY, build as build


def __getattr__(name: str) -> Any:
    """Returns the exported `name`, importing its module on first use."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)
