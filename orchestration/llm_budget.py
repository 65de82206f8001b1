"""What a query may ask of the LLM: its call and time budget, and a context sized in the model's tokens."""
from __future__ import annotations

from typing import Optional

from lambdarag.budget import Limits, LLMBudget
from lambdarag.providers.tokens import chars_within
from lambdarag.skills.store.records import RetrievalPlan

from .config import AgentConfig, LLMConfig
from .plan import tagged

PROMPT_TOKENS = 600
"""Tokens of an answer prompt besides the context: instructions, the question, the JSON schema."""


def llm_budget(config: AgentConfig) -> Optional[LLMBudget]:
    """Returns the budget of one query's LLM calls (None when no LLM is configured)."""
    if config.llm.base_url is None:
        return None
    b, timeout = config.llm.budget, config.limits.timeout_seconds

    def limits(max_calls: Optional[int] = None, share: Optional[float] = None) -> Limits:
        return Limits(max_calls=b.max_calls if max_calls is None else max_calls,
                      seconds=timeout * (b.time_share if share is None else share), shares=dict(b.shares),
                      min_call_seconds=b.min_call_seconds)

    return LLMBudget(limits(), dict(b.priorities),
                     {t: limits(r.max_calls, r.time_share) for t, r in b.routes.items()})


def context_chars(llm: LLMConfig, answer_tokens: int = 1024) -> int:
    """Returns how many characters of Chinese context fit the model's window beside the prompt and the answer."""
    return chars_within(llm.context_tokens - answer_tokens - PROMPT_TOKENS, llm.model, llm.tokens_per_char)


def fit_context(plan: RetrievalPlan, llm: LLMConfig) -> RetrievalPlan:
    """Returns `plan` with its context capped to what the configured model's window holds (unchanged offline)."""
    cap = context_chars(llm)
    if llm.base_url is None or plan.max_context_chars <= cap:
        return plan
    return tagged(plan, "llm_context", max_context_chars=cap, max_chunk_chars=min(plan.max_chunk_chars, cap))
