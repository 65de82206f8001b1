"""The five question types against a scripted local model generating ~2 tokens/s: wall time, LLM calls, fallbacks.

python bench/slow_llm.py [--timeout SECONDS]  (default: limits.timeoutSeconds of agent-config.yml). A stand-in
for a real small model (scripts/local-llm.sh): the scripted server answers at the rate of SmolLM2-135M on a
loaded 2-core machine, so every LLM step must fit the budget or fall back in time.
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
from orchestration.search_unified import chat, search  # noqa: E402
from tests.scripted_server import Running, slow  # noqa: E402
from tests.test_slow_llm import QUESTIONS, SLOW_REPLY, slow_config  # noqa: E402

RATE = 2.0


def main(timeout: float | None = None) -> dict:
    server = Running()
    server.script.default = slow(SLOW_REPLY, tokens_per_second=RATE)
    try:
        config = slow_config(server.url, **({"timeoutSeconds": timeout} if timeout else {}))
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
        server.stop()
    result = {"tokens_per_second": RATE, "timeout_s": config.limits.timeout_seconds,
              "llm_timeout_s": config.llm.timeout, "questions": rows,
              "max_wall_s": max(r["wall_s"] for r in rows.values()),
              "within_timeout": all(r["wall_s"] <= config.limits.timeout_seconds for r in rows.values())}
    write(f"slow-llm-{int(config.limits.timeout_seconds)}s", result)
    return result


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--timeout", type=float, default=None, help="limits.timeoutSeconds (default: the config's)")
    import json

    print(json.dumps(main(p.parse_args().timeout), ensure_ascii=False, indent=1))
