"""Prices of effects, for the static cost bound and the per-run cost in the trace."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class CostModel(BaseModel):
    """Returns the price of a term call: per term name if listed, else per effect; LLM tokens extra."""

    model_config = ConfigDict(frozen=True)

    per_effect: dict[str, float] = Field(default_factory=lambda: {"pure": 0.0, "io": 0.0, "llm": 0.002})
    per_term: dict[str, float] = Field(default_factory=dict)
    per_1k_tokens: float = 0.0

    def call_cost(self, name: str, effect: str) -> float:
        """Returns the fixed price of one call of the named term."""
        return self.per_term.get(name, self.per_effect.get(effect, 0.0))

    def tokens_cost(self, tokens: int) -> float:
        return self.per_1k_tokens * tokens / 1000.0


DEFAULT_COSTS = CostModel()
"""The default prices, one shared instance (a `CostModel` is frozen): a context is made per run."""
