"""The feedback loop (`loop`) and its parts, one job each: `cache`, `lexicon`, `rules`, `routing`, `journal`,
`replica` (every server's write-backs replayed onto this one's wiki), `confirmations`, `votes`, `asking` (who may
teach by asking), `retention` (what is kept), all kept in one database
(`store`: SQLite by default, PostgreSQL when shared)."""
from .cache import normalise, scope_of  # noqa: F401
from .replica import render_into  # noqa: F401
from .lexicon import SynonymLearner, variant_pairs  # noqa: F401
from .loop import FeedbackLoop, disabled_by_env, feedback_dir, open_feedback, verdict_of  # noqa: F401
from .routing import routing_scores  # noqa: F401
