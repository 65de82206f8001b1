"""Micro-benchmark: the runner's overhead per term (median of many runs), against calling the functions directly.

Writes bench/results/runner.json with the machine's facts; the budget is 10 µs per term.
"""
from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from bench.machine import machine_facts
from lambdarag import Compose, Context, State, Tool

RESULT = Path(__file__).resolve().parent / "results" / "runner.json"

N_TERMS, RUNS = 20, 300


def main() -> dict:
    fns = [lambda s, i=i: {"answer": s.answer + "x"} for i in range(N_TERMS)]
    pipeline = Compose(*(Tool(f"t{i}", fn, reads=["answer"], writes=["answer"]) for i, fn in enumerate(fns)))
    start = State.of("q", answer="")
    direct, runner = [], []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        s = start
        for fn in fns:
            s = s.model_copy(update=fn(s))
        direct.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        pipeline.run(start, Context())
        runner.append(time.perf_counter() - t0)
    d, r = statistics.median(direct), statistics.median(runner)
    result = {"terms": N_TERMS, "runs": RUNS, "direct_us_per_term": round(d / N_TERMS * 1e6, 2),
              "runner_us_per_term": round(r / N_TERMS * 1e6, 2),
              "overhead_us_per_term": round((r - d) / N_TERMS * 1e6, 2), "budget_us_per_term": 10,
              "machine": machine_facts()}
    return result


if __name__ == "__main__":
    out = main()
    RESULT.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(out, ensure_ascii=False, indent=1))
