"""Layer 1: atomic skills, each a `Term`; `REGISTRY` maps a skill name to its declared term.

A skill is a typed tool, a `Lam`, or a function of keyword-only parameters; its module is imported the first time
the skill is built (see `skills.registry.MODULES`)."""
from .registry import REGISTRY, build, skill

__all__ = ["REGISTRY", "build", "skill"]
