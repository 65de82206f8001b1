"""The feedback loop (`loop`) and its parts, one job each: `cache`, `lexicon`, `rules`, `routing`, `journal`,
`replica` (every server's write-backs replayed onto this one's wiki), `confirmations`, `votes`, `asking` (who may
teach by asking), `retention` (what is kept), all kept in one database
(`store`: SQLite by default, PostgreSQL when shared).

The names below load on first use (PEP 562): a question with learning off, or `lambdarag where`, imports
`orchestration.folders` and not the loop.
"""
from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "normalise": "cache", "scope_of": "cache", "render_into": "replica", "SynonymLearner": "lexicon",
    "variant_pairs": "lexicon", "FeedbackLoop": "loop", "open_feedback": "loop", "verdict_of": "loop",
    "disabled_by_env": "..folders", "feedback_dir": "..folders", "routing_scores": "routing",
}
__all__ = list(_EXPORTS)

if TYPE_CHECKING:
    from .cache import normalise as normalise, scope_of as scope_of
    from ..folders import disabled_by_env as disabled_by_env, feedback_dir as feedback_dir
    from .lexicon import SynonymLearner as SynonymLearner, variant_pairs as variant_pairs
    from .loop import FeedbackLoop as FeedbackLoop, open_feedback as open_feedback, verdict_of as verdict_of
    from .replica import render_into as render_into
    from .routing import routing_scores as routing_scores


def __getattr__(name: str) -> Any:
    """Returns the exported `name`, importing its module on first use."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = _EXPORTS[name]
    return getattr(import_module(module, __name__) if module.startswith(".") else
                   import_module(f"{__name__}.{module}"), name)
