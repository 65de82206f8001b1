"""Micro-benchmark: the runner's overhead per term (median of many runs), against calling the functions directly."""
from __future__ import annotations

import json
import statistics
import sys
import time

from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.machine import write  # noqa: E402
from lambdarag import Compose, Context, State, Tool  # noqa: E402

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
              "overhead_us_per_term": round((r - d) / N_TERMS * 1e6, 2)}
    write("runner", result)
    return result


if __name__ == "__main__":
    json.dump(main(), sys.stdout, indent=1)
    print()
