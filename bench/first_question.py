"""The first `ask` after install, in an empty data home, idle and under 8 CPU hogs, with `limits.timeoutSeconds: 15`.

Runs `ask` on a question no classifier rule settles (the learned classifier decides) as a fresh process of the
checkout given (default this one) with a new data home and cache each time: once idle, once with 8 busy-looping
processes. Records exit code, whether a deadline passed, wall and CPU seconds of the process, and its `setup`
and total latency. Writes bench/results/first-question[-TAG].json.

Usage: python bench/first_question.py [--checkout PATH] [--tag TAG]
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.machine import write  # noqa: E402

QUESTION = "海事局有哪些职责？"
HOGS = 8


def first_ask(checkout: Path, hogs: int) -> dict:
    """Returns how the first ask of `checkout` in an empty data home went with `hogs` busy processes beside it."""
    scratch = Path(tempfile.mkdtemp(prefix="first-question-"))
    config = yaml.safe_load((checkout / "agent-config.yml").read_text(encoding="utf-8"))
    config["limits"] = {**config.get("limits", {}), "timeoutSeconds": 15}
    (scratch / "agent-config.yml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    env = {**os.environ, "LAMBDARAG_HOME": str(scratch / "home"), "LAMBDARAG_CACHE": str(scratch / "cache"),
           "PYTHONPATH": str(checkout)}
    env.pop("LAMBDARAG_FEEDBACK", None)
    load_before = round(os.getloadavg()[0], 2)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(hogs)]
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "lambdarag.orchestration.cli", "ask", "--config", "agent-config.yml",
                               QUESTION], cwd=scratch, env=env, capture_output=True, text=True, timeout=900)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)     # the hogs, not reaped yet, are not counted
    finally:
        for hog in busy:
            hog.kill()
            hog.wait()
    latency = re.search(r"latency (\d+)ms: setup (\d+)ms", done.stdout)
    return {"hogs": hogs, "exit": done.returncode, "deadline_passed": "deadline passed" in done.stdout + done.stderr,
            "wall_s": round(wall, 1), "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
            "latency_ms": int(latency.group(1)) if latency else None,
            "setup_ms": int(latency.group(2)) if latency else None, "loadavg_1min_before": load_before,
            "loadavg_1min_after": round(os.getloadavg()[0], 2)}


def main() -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--checkout", type=Path, default=ROOT)
    p.add_argument("--tag", default="")
    args = p.parse_args()
    out = {"what": __doc__.split("\n")[0], "question": QUESTION, "checkout": args.checkout.name,
           "runs": [first_ask(args.checkout.resolve(), hogs) for hogs in (0, HOGS)]}
    write("first-question" + (f"-{args.tag}" if args.tag else ""), out)
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(main(), ensure_ascii=False, indent=1))
