"""search() against a local endpoint that answers at ~2 tokens/s (the scripted server playing a small model)."""
from __future__ import annotations

import copy
import json
import time

import pytest
import yaml

from lambdarag.orchestration.config import DEFAULT_CONFIG, parse_config
from lambdarag.orchestration.search_unified import search
from lambdarag.orchestration.setup import chat
from tests.scripted_server import slow
from tests.test_degradation import QUESTIONS

BASE = yaml.safe_load(DEFAULT_CONFIG.read_text(encoding="utf-8"))
SLOW_REPLY = json.dumps({"type": "fact", "confidence": 0.9, "answer": "根据资料" * 20}, ensure_ascii=False)
"""What the slow model would say if it had time: ~100 tokens, 50 s at 2 tokens/s."""


def slow_config(url: str, **limits) -> object:
    data = copy.deepcopy(BASE)
    data["llm"] = {"baseUrl": url, "model": "smollm2-135m-instruct"}
    data["limits"] = limits
    return parse_config(yaml.safe_dump(data, allow_unicode=True))


def ask_all(llm_server, config) -> dict[str, tuple[float, object]]:
    llm_server.script.default = slow(SLOW_REPLY, tokens_per_second=2.0)
    for question in QUESTIONS.values():   # the index, wiki and models load once, outside the timings
        search(question)
    chat(config)                          # so does the (shared) LLM client
    out = {}
    for kind, question in QUESTIONS.items():
        start = time.perf_counter()
        result = search(question, config=config)
        out[kind] = (time.perf_counter() - start, result)
    return out


def check(results: dict[str, tuple[float, object]], timeout: float) -> None:
    for kind, (wall, r) in results.items():
        assert r.answer and r.query_type == kind, kind
        # the deadline bounds the query once its knowledge base is open (README "Deadline"); setup is outside it
        under_deadline = wall - r.latency_ms["setup"] / 1000
        assert under_deadline <= timeout, f"{kind}: {under_deadline:.1f}s > limits.timeoutSeconds {timeout}"
        assert abs(r.latency_ms["total"] / 1000 - wall) <= 0.1 * wall, (kind, r.latency_ms["total"], wall)
        lam_fallbacks = [f for f in r.fallbacks if f["term"] in {s["term"] for s in r.llm_budget["steps"]}]
        assert lam_fallbacks and r.llm_budget["calls"] <= r.llm_budget["max_calls"], kind
        answer = next(f["reason"] for f in r.fallbacks if f["term"] == "answer_generate")
        assert "timed out" in answer or "LLM budget" in answer, answer


def test_every_type_answers_within_a_short_deadline_with_a_2_tokens_per_second_model(llm_server):
    check(ask_all(llm_server, slow_config(llm_server.url, timeoutSeconds=5)), 5)


@pytest.mark.slow
def test_every_type_answers_within_the_default_deadline_with_a_2_tokens_per_second_model(llm_server):
    config = slow_config(llm_server.url)
    check(ask_all(llm_server, config), config.limits.timeout_seconds)
