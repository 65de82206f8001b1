"""Layer 1: atomic skills, each a `Term`. `REGISTRY` maps a skill name to its factory ``(config) -> Term``."""
from .registry import REGISTRY, build, skill

# Importing a skill module registers its skills.

__all__ = ["REGISTRY", "build", "skill"]
