"""The five question types against a slow local model: wall time, LLM calls, fallbacks.

python bench/slow_llm.py [--timeout SECONDS] [--url URL --model NAME]  (timeout default: limits.timeoutSeconds
of agent-config.yml). Without --url a scripted server stands in for a real small model, answering at ~2 tokens/s
(SmolLM2-135M on a loaded 2-core machine) and writes slow-llm-<timeout>s.json; with --url the real endpoint
(e.g. scripts/local-llm.sh) is asked and real-llm-<timeout>s.json is written.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LAMBDARAG_FEEDBACK", "off")   # measure the query, not what it teaches

from bench.machine import write  # noqa: E402
from lambdarag.orchestration.search_unified import search  # noqa: E402
from lambdarag.orchestration.setup import chat  # noqa: E402
from tests.scripted_server import Running, slow  # noqa: E402
from tests.test_slow_llm import QUESTIONS, SLOW_REPLY, slow_config  # noqa: E402

RATE = 2.0


def main(timeout: float | None = None, url: str | None = None, model: str | None = None) -> dict:
    server = None if url else Running()
    if server is not None:
        server.script.default = slow(SLOW_REPLY, tokens_per_second=RATE)
    try:
        config = slow_config(url or server.url, **({"timeoutSeconds": timeout} if timeout else {}))
        if model:
            config = config.model_copy(update={"llm": config.llm.model_copy(update={"model": model})})
        for question in QUESTIONS.values():   # knowledge, models and the LLM client load outside the timings
            search(question)
        chat(config)
        rows = {}
        for kind, question in QUESTIONS.items():
            start = time.perf_counter()
            r = search(question, config=config)
            wall = time.perf_counter() - start
            rows[kind] = {"wall_s": round(wall, 2), "latency_total_s": round(r.latency_ms["total"] / 1000, 2),
                          "llm_calls": r.llm_budget["calls"], "llm_skipped": r.llm_budget["skipped"],
                          "llm_spent_s": r.llm_budget["spent_s"], "answered": bool(r.answer),
                          "degraded": r.degraded, "query_type": r.query_type,
                          "fallbacks": sorted({f["term"] for f in r.fallbacks})}
    finally:
        if server is not None:
            server.stop()
    source = {"model": config.llm.model, "endpoint": "real"} if url else {"tokens_per_second": RATE}
    result = {**source, "timeout_s": config.limits.timeout_seconds,
              "llm_timeout_s": config.llm.timeout, "questions": rows,
              "max_wall_s": max(r["wall_s"] for r in rows.values()),
              "within_timeout": all(r["wall_s"] <= config.limits.timeout_seconds for r in rows.values())}
    write(f"{'real' if url else 'slow'}-llm-{int(config.limits.timeout_seconds)}s", result)
    return result


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--timeout", type=float, default=None, help="limits.timeoutSeconds (default: the config's)")
    p.add_argument("--url", default=None, help="a real OpenAI-compatible endpoint instead of the scripted one")
    p.add_argument("--model", default=None, help="the model name to ask the endpoint for")
    import json

    args = p.parse_args()
    print(json.dumps(main(args.timeout, args.url, args.model), ensure_ascii=False, indent=1))
