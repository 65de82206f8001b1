"""Layer 1: atomic skills, each a `Term`; `REGISTRY` maps a skill name to its declared term.

A skill is a typed tool, a `Lam`, or a function of keyword-only parameters; its module is imported the first time
the skill is built (see `skills.registry.MODULES`). The names below load on first use (PEP 562), so importing one
skill module (`skills.profile` for the config) does not import the calculus.
"""
from typing import TYPE_CHECKING, Any

__all__ = ["REGISTRY", "build", "skill"]

if TYPE_CHECKING:
    from .registry import REGISTRY as REGISTRY, build as build, skill as skill


def __getattr__(name: str) -> Any:
    """Returns `REGISTRY`, `build` or `skill` from `skills.registry`, importing it on first use."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import registry

    return getattr(registry, name)
