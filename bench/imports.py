"""CPU of `lambdarag --help`, `lambdarag where` and a warm `lambdarag ask`: this checkout (A) against another (B, e.g.
main), as whole processes interleaved A B A B in one run; medians, and the median of the pairwise ratios A/B.

Run: python bench/imports.py --base /path/to/main [--runs 9] [--ask-runs 5] → bench/results/imports.json. Each
checkout runs from its own PYTHONPATH with its own bytecode cache (PYTHONPYCACHEPREFIX), one untimed warm-up run
each first; the ask runs on the data home of $LAMBDARAG_HOME (the demo index built there), feedback off. On a
shared machine the CPU seconds and the ratios are the result; wall time includes waiting for a core.
`floor_cpu_s`: what a Python process costs here before any of this project's code runs (`FLOOR`), in the same run.
`ask_phases_cpu_s`: where a warm in-process `ask` of this checkout spends its CPU, phase by phase in one process
(`PHASES`), and what a second question costs in that process once everything is loaded.
`resident`: a warm `ask` of this checkout answered by a resident it started (`serve --socket`), its CPU the client
process's plus the resident's over that question (/proc/PID/stat, every thread; `resident_logged_cpu_s` is what the
resident logged around the request): for `QUESTION` asked again (as `warm_ask`), and for `--new-questions` demo
questions the resident has not seen, each asked once in-process before so the on-disk caches are as warm as for
`warm_ask`, against a fresh in-process `ask` of the same questions.
"""
from __future__ import annotations

import argparse
import json
import os
import re
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
         "python_numpy_pydantic": ONE_THREAD + "import numpy, pydantic.main",
         "python_client": "import argparse, hashlib, json, logging, pathlib, platformdirs, socket"}
"""What any Python answerer pays before its first line of work, on this machine (one BLAS thread, as `ask` runs),
and what the client of a resident answerer imports."""


PHASES = ONE_THREAD + """
import json, sys, time
from lambdarag.orchestration.cli import one_shot_collector
spent, last = {"python": time.process_time()}, time.process_time()
def phase(name):
    global last
    spent[name], last = time.process_time() - last, time.process_time()
with one_shot_collector():
    import numpy; phase("numpy")
    import pydantic.main; phase("pydantic")
    from lambdarag import User
    from lambdarag.orchestration import cli, search_unified, setup
    from lambdarag.orchestration.feedback import worker
    from lambdarag.skills.classify import prepare_classifier; phase("lambdarag_imports")
    config = setup.resolve_config(None); phase("config")
    prepare_classifier(setup.open_index(config, None).resources()["profile"]); phase("index_open")
    search_unified.search(sys.argv[1], user=User(id="cli"), config=config); phase("question")
    search_unified.search(sys.argv[2], user=User(id="cli"), config=config); phase("next_question")
print(json.dumps(spent))
"""
"""One warm `ask`'s work in the order `ask` does it, timed per phase (CPU seconds), then a second question."""
DEMO_QUESTIONS = [json.loads(line)["query"] for line in
                  (ROOT / "tests" / "data" / "demo_questions.jsonl").read_text("utf-8").splitlines()]


def environment(checkout: Path, cache: str) -> dict[str, str]:
    """Returns the environment a `lambdarag` process of `checkout` runs in here."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "OPENBLAS_NUM_THREADS")}
    env.update(PYTHONPATH=str(checkout), PYTHONPYCACHEPREFIX=cache, LAMBDARAG_FEEDBACK="off")
    return env


def run(checkout: Path, cache: str, args: list[str], module: tuple[str, ...] = ("-m", "lambdarag.orchestration.cli")
        ) -> tuple[float, float]:
    """Returns the CPU (user + system) and wall seconds of one `lambdarag` process (or `python *module *args`) run
    from `checkout`."""
    env = environment(checkout, cache)
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
    medians = {k: {name: median(t[k] for t in times[name]) for name in sides} for k in (0, 1)}
    ratio = [a[0] / b[0] for a, b in zip(times["branch"], times["main"])]
    return {"runs": runs, "cpu_s": medians[0], "wall_s": medians[1], "ratio_cpu": median(ratio),
            "loadavg_1min": round(os.getloadavg()[0], 2)}


def process_cpu(pid: int) -> float:
    """Returns the CPU seconds (user + system, every thread, ended ones too) process `pid` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ask_phases(cache: str, runs: int, next_question: str) -> dict:
    """Returns the median CPU seconds of each of `PHASES` over `runs` processes of this checkout."""
    env = environment(ROOT, cache)
    runs_spent = [json.loads(subprocess.run([sys.executable, "-c", PHASES, QUESTION, next_question], cwd=ROOT,
                                            env=env, capture_output=True, text=True, check=True).stdout)
                  for _ in range(runs)]
    return {name: median(r[name] for r in runs_spent) for name in runs_spent[0]}


def resident_asks(cache: str, questions: list[str]) -> dict:
    """Returns the client's, the resident's and their summed CPU seconds per question, asking each of `questions`
    of a resident of this checkout started here (its first question, untimed, is `QUESTION`)."""
    log = tempfile.NamedTemporaryFile("w+", suffix=".log")
    resident = subprocess.Popen([sys.executable, "-m", "lambdarag.orchestration.cli", "serve", "--socket"], cwd=ROOT,
                                env=environment(ROOT, cache), stdout=subprocess.DEVNULL, stderr=log)
    sock = Path(os.environ["LAMBDARAG_HOME"]).absolute() / "ask.sock"
    try:
        while not sock.exists():
            if resident.poll() is not None:
                raise SystemExit(f"serve --socket failed: {Path(log.name).read_text()}")
            time.sleep(0.2)
        run(ROOT, cache, ["ask", QUESTION])
        client, served = [], []
        for question in questions:
            before = process_cpu(resident.pid)
            client.append(run(ROOT, cache, ["ask", question])[0])
            served.append(process_cpu(resident.pid) - before)
    finally:
        resident.terminate()
        resident.wait(timeout=60)
    logged = [float(m) for m in re.findall(r"answered in [\d.]+s, ([\d.]+) CPU-s", Path(log.name).read_text())][1:]
    assert len(logged) == len(questions), "a question was not answered by the resident"
    return {"runs": len(questions), "cpu_s": median(a + b for a, b in zip(client, served)),
            "client_cpu_s": median(client), "resident_cpu_s": median(served),
            "resident_logged_cpu_s": median(logged), "loadavg_1min": round(os.getloadavg()[0], 2)}


def median(values) -> float:
    """Returns the median of `values`, rounded to the millisecond."""
    return round(statistics.median(values), 3)


def resident(cache: str, runs: int, new: int) -> dict:
    """Returns `resident_asks` for `QUESTION` asked `runs` times, and for `new` other demo questions together with
    a fresh in-process `ask`'s CPU for them (each asked once in-process first, untimed)."""
    others = [q for q in DEMO_QUESTIONS if q != QUESTION][:new]
    for question in others:
        run(ROOT, cache, ["ask", question])
    in_process = [run(ROOT, cache, ["ask", question])[0] for question in others]
    return {"same_question": resident_asks(cache, [QUESTION] * runs),
            "new_questions": {**resident_asks(cache, others), "in_process_cpu_s": median(in_process)}}


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--base", type=Path, required=True, help="the checkout to compare with (e.g. main's worktree)")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--ask-runs", type=int, default=5)
    ap.add_argument("--new-questions", type=int, default=8, help="demo questions the resident is asked once each")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        result = {name: compare(args.base.resolve(), command, args.ask_runs if name == "warm_ask" else args.runs,
                                (a, b)) for name, command in COMMANDS.items()}
        floor = {name: [run(ROOT, a, [code], ("-c",))[0] for _ in range(args.runs)] for name, code in FLOOR.items()}
        result["resident"] = resident(a, args.ask_runs, args.new_questions)
        result["ask_phases_cpu_s"] = ask_phases(a, args.ask_runs, DEMO_QUESTIONS[0])
    result["floor_cpu_s"] = {name: median(t) for name, t in floor.items()}
    result["what"] = __doc__.split("\n\n")[0].replace("\n", " ")
    result["how"] = (f"python -m lambdarag.orchestration.cli from each checkout (B: {args.base}), own bytecode cache "
                     f"each, one warm-up run each not counted; ask on $LAMBDARAG_HOME's demo index, feedback off")
    write("imports", result)
    return result


if __name__ == "__main__":
    print(main())
