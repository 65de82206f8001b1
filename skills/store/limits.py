"""How much one question may read: the limits a query type's defaults set and a retrieval plan carries.

Declared once here, for both: `orchestration.plan.TypeDefaults` (what a config sets per query type) and
`skills.store.records.RetrievalPlan` (what a question's patterns read). Light to import: pydantic alone.
"""
from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

Count = Annotated[int, Field(ge=1)]


class Limits(BaseModel):
    """How many hits an answer is written from, how much of them it reads, how far a question is expanded and how
    far the entity graph is walked."""

    final_top_k: Count = 6
    """Hits the answer is written from."""
    max_context_chars: Count = 6000
    """Characters of context the answer step reads, over all hits."""
    max_chunk_chars: Count = 800
    """Characters kept of any one hit in the context."""
    expand_query: bool = True
    """Whether the question is rewritten into variants that are retrieved too."""
    expansion_count: Count = 3
    """How many variants at most."""
    rerank: bool = True
    """Whether the fused hits are reranked (when `retrieval.skills.rerank` is enabled)."""
    max_hops: int = Field(default=2, ge=0)
    """Steps the entity-graph walk takes from the question's entities."""
    max_nodes: Count = 20
    """Entities the graph walk visits at most."""

    def limits(self) -> dict:
        """Returns these limits by field name, to start a plan from (`RetrievalPlan(**kind.limits(), ...)`)."""
        return {name: getattr(self, name) for name in Limits.model_fields}
