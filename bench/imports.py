"""CPU of `lambdarag --help`, `lambdarag where` and a warm `lambdarag ask`: this checkout (A) against another (B, e.g.
main), as whole processes interleaved A B A B in one run; medians, and the median of the pairwise ratios A/B.

Run: python bench/imports.py --base /path/to/main [--runs 9] [--ask-runs 5] → bench/results/imports.json. Each
checkout runs from its own PYTHONPATH with its own bytecode cache (PYTHONPYCACHEPREFIX), one untimed warm-up run
each first; the ask runs on the data home of $LAMBDARAG_HOME (the demo index built there), feedback off. On a
shared machine the CPU seconds and the ratios are the result; wall time includes waiting for a core.
`floor_cpu_s`: what a Python process costs here before any of this project's code runs (`FLOOR`), in the same run.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import write  # noqa: E402

QUESTION = "国际海运条例的最新版本是哪一年的？"
COMMANDS = {"help": ["--help"], "where": ["where"], "warm_ask": ["ask", QUESTION]}


ONE_THREAD = "import os; os.environ['OPENBLAS_NUM_THREADS'] = '1'; "
FLOOR = {"python": "pass", "python_numpy": ONE_THREAD + "import numpy",
         "python_numpy_pydantic": ONE_THREAD + "import numpy, pydantic.main"}
"""What any Python answerer pays before its first line of work, on this machine (one BLAS thread, as `ask` runs)."""


def run(checkout: Path, cache: str, args: list[str], module: tuple[str, ...] = ("-m", "lambdarag.orchestration.cli")
        ) -> tuple[float, float]:
    """Returns the CPU (user + system) and wall seconds of one `lambdarag` process (or `python *module *args`) run
    from `checkout`."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "OPENBLAS_NUM_THREADS")}
    env.update(PYTHONPATH=str(checkout), PYTHONPYCACHEPREFIX=cache, LAMBDARAG_FEEDBACK="off")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, *module, *args], cwd=checkout, env=env, capture_output=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def compare(base: Path, args: list[str], runs: int, caches: tuple[str, str]) -> dict:
    """Returns the medians of `runs` interleaved runs of `args` on this checkout and on `base`, and their ratios."""
    sides = {"branch": ROOT, "main": base}
    for name, cache in zip(sides, caches):
        run(sides[name], cache, args)                       # warm-up: bytecode written, index opened once
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
    for _ in range(runs):
        for name, cache in zip(sides, caches):
            times[name].append(run(sides[name], cache, args))
    median = {k: {name: round(statistics.median(t[k] for t in times[name]), 3) for name in sides}
              for k in (0, 1)}
    ratio = [a[0] / b[0] for a, b in zip(times["branch"], times["main"])]
    return {"runs": runs, "cpu_s": median[0], "wall_s": median[1], "ratio_cpu": round(statistics.median(ratio), 3),
            "loadavg_1min": round(os.getloadavg()[0], 2)}


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--base", type=Path, required=True, help="the checkout to compare with (e.g. main's worktree)")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--ask-runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        result = {name: compare(args.base.resolve(), command, args.ask_runs if name == "warm_ask" else args.runs,
                                (a, b)) for name, command in COMMANDS.items()}
        floor = {name: [run(ROOT, a, [code], ("-c",))[0] for _ in range(args.runs)] for name, code in FLOOR.items()}
    result["floor_cpu_s"] = {name: round(statistics.median(t), 3) for name, t in floor.items()}
    result["what"] = __doc__.split("\n\n")[0].replace("\n", " ")
    result["how"] = (f"python -m lambdarag.orchestration.cli from each checkout (B: {args.base}), own bytecode cache "
                     f"each, one warm-up run each not counted; ask on $LAMBDARAG_HOME's demo index, feedback off")
    write("imports", result)
    return result


if __name__ == "__main__":
    print(main())
