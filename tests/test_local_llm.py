"""search() on all five question types against a real local model within the deadline: the `real_model`
fixture's (tests/local_model_server.py, or $LAMBDARAG_TEST_LLM_URL). Run with ``python -m pytest -q -m llm``."""
from __future__ import annotations

import time

import pytest

from tests.test_slow_llm import QUESTIONS, slow_config  # one question per type

pytestmark = pytest.mark.llm


@pytest.mark.parametrize("kind", list(QUESTIONS))
def test_each_type_answers_within_the_deadline_with_a_real_small_model(kind, real_model):
    from lambdarag.orchestration.search_unified import search

    config = slow_config(real_model.url)
    search(QUESTIONS[kind])   # knowledge and models load outside the timing
    start = time.perf_counter()
    r = search(QUESTIONS[kind], config=config)
    wall = time.perf_counter() - start
    assert r.answer and r.query_type == kind
    assert wall <= config.limits.timeout_seconds
    assert abs(r.latency_ms["total"] / 1000 - wall) <= 0.1 * wall
    assert r.llm_budget["calls"] <= r.llm_budget["max_calls"]
    print(f"{kind}: {wall:.1f}s, {r.llm_budget['calls']} LLM calls, {r.llm_budget['skipped']} skipped, "
          f"fallbacks: {[f['term'] for f in r.fallbacks]}")
