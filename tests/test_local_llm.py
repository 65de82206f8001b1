"""search() on all five question types against a real local model (scripts/local-llm.sh), when one is given.

Set LAMBDARAG_TEST_LLM_URL (e.g. http://127.0.0.1:8080/v1) and run ``python -m pytest -q -m llm``.
"""
from __future__ import annotations

import os
import time

import pytest

from tests.test_slow_llm import QUESTIONS, slow_config  # one question per type

URL = os.environ.get("LAMBDARAG_TEST_LLM_URL")
pytestmark = [pytest.mark.llm,
              pytest.mark.skipif(not URL, reason="set LAMBDARAG_TEST_LLM_URL to a local model (scripts/local-llm.sh)")]


@pytest.mark.parametrize("kind", list(QUESTIONS))
def test_each_type_answers_within_the_deadline_with_a_real_small_model(kind):
    from lambdarag.orchestration.search_unified import search

    config = slow_config(URL)
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
