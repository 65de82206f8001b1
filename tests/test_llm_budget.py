"""The per-query LLM budget: answer first, shares per class, calls capped, and contexts sized in model tokens."""
from __future__ import annotations

import pytest

from lambdarag.skills.store.records import RetrievalPlan
from lambdarag.budget import Limits, LLMBudget
from lambdarag.errors import BudgetSkipped
from lambdarag.providers.tokens import estimate_tokens
from lambdarag.orchestration.config import parse_config
from lambdarag.orchestration.llm_budget import fit_context, llm_budget

CLASSES = {"answer_generate": "answer", "classify_llm": "classification", "query_expand": "expansion",
           "entity_extract": "extraction"}


def budget(max_calls: int = 4, seconds: float = 40.0) -> LLMBudget:
    shares = {"answer": 0.5, "classification": 0.2, "expansion": 0.2, "extraction": 0.1}
    return LLMBudget(Limits(max_calls, seconds, shares), CLASSES)


def test_a_lower_class_waits_at_most_its_share_and_never_eats_the_answers():
    b = budget()
    assert b.admit("classify_llm", None, 30.0) == 8.0        # 20% of 40 s
    assert b.admit("entity_extract", "compare", 30.0) == 4.0
    assert b.admit("answer_generate", "compare", 30.0) == 28.0   # everything the others did not commit
    assert [s["decision"] for s in b.report()["steps"]] == ["called"] * 3


def test_the_last_call_is_kept_for_the_answer_and_a_skip_says_why():
    b = budget(max_calls=2)
    b.admit("classify_llm", None, 5.0)
    with pytest.raises(BudgetSkipped, match="1 of 2 LLM calls spent, 1 kept for the answer"):
        b.admit("query_expand", "fact", 5.0)
    assert b.admit("answer_generate", "fact", 5.0) == 5.0
    report = b.report()
    assert (report["calls"], report["skipped"]) == (2, 1)


def test_a_share_too_small_for_one_call_skips_without_calling():
    b = budget(seconds=10.0)   # extraction: 1 s < minCallSeconds 2
    with pytest.raises(BudgetSkipped, match="class 'extraction'"):
        b.admit("entity_extract", "compare", 30.0)


def test_routes_have_their_own_limits():
    config = parse_config("llm: {baseUrl: 'http://127.0.0.1:9/v1', budget: {maxCalls: 3, routes: {fact: {maxCalls: 1}}}}")
    b = llm_budget(config)
    with pytest.raises(BudgetSkipped, match="0 of 1 LLM calls spent, 1 kept"):
        b.admit("query_expand", "fact", 5.0)
    assert b.report()["max_calls"] == 1
    assert b.admit("query_expand", "compare", 5.0) > 0
    assert b.report()["max_calls"] == 3
    assert llm_budget(parse_config("limits: {timeoutSeconds: 10}")) is None   # offline: no budget


def test_contexts_are_sized_in_the_models_tokens():
    small = parse_config("llm: {baseUrl: 'http://127.0.0.1:9/v1', model: SmolLM2-135M-Instruct, contextTokens: 8192}")
    plan = fit_context(RetrievalPlan(max_context_chars=6000, max_chunk_chars=800, reason="fact"), small.llm)
    assert estimate_tokens("船" * plan.max_context_chars, "smollm2") + 1024 + 600 <= 8192
    assert plan.reason == "fact_llm_context"
    qwen = parse_config("llm: {baseUrl: 'http://127.0.0.1:9/v1', model: qwen2.5-7b, contextTokens: 8192}")
    assert fit_context(RetrievalPlan(max_context_chars=6000), qwen.llm).max_context_chars == 6000
    custom = parse_config("llm: {baseUrl: 'http://x/v1', model: mine, contextTokens: 8192, tokensPerChar: 0.5}")
    assert fit_context(RetrievalPlan(max_context_chars=6000), custom.llm).max_context_chars == 6000
    offline = parse_config("{}")
    assert fit_context(RetrievalPlan(max_context_chars=60000), offline.llm).max_context_chars == 60000
