"""The feedback loop and its learning stores (see `orchestration.feedback.loop`)."""
from .loop import (FeedbackLoop, SynonymLearner, disabled_by_env, feedback_dir, learn_qrels, normalise,  # noqa: F401
                   open_feedback, qrels_pairs, render_into, routing_scores, scope_of, synonym_learner, variant_pairs,
                   verdict_of)
