"""Layer 1: atomic skills, each a `Term`. `REGISTRY` maps a skill name to its factory ``(config) -> Term``."""
from .registry import REGISTRY, build, skill

# Importing a skill module registers its skills.
from . import dense, diversify, fusion, learned, lexical, rerank, sides, statutes, temporal  # noqa: F401,E402  retrieval
from . import edges, graph, wiki  # noqa: F401,E402  entity graph and wiki
from . import faq  # noqa: F401,E402  FAQ direct answers
from . import check, classify, context, facts, gaps, generate, planner  # noqa: F401,E402  LLM skills

__all__ = ["REGISTRY", "build", "skill"]
