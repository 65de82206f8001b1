"""Layer 1: atomic skills, each a `Term`. `REGISTRY` maps a skill name to its factory ``(config) -> Term``;
a skill's module is imported the first time the skill is built (see `skills.registry.HOMES`)."""
from .registry import REGISTRY, build, skill

__all__ = ["REGISTRY", "build", "skill"]
