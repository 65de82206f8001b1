"""The machine facts every benchmark result carries, and the one function that writes a result file."""
from __future__ import annotations

import datetime as dt
import json
import os
import platform
from pathlib import Path



def results_dir() -> Path:
    """Returns where results go: $LAMBDARAG_BENCH_RESULTS (tests keep the committed files), else bench/results."""
    return Path(os.environ.get("LAMBDARAG_BENCH_RESULTS") or Path(__file__).resolve().parent / "results")


def cpu_model() -> str:
    """Returns the CPU model name from /proc/cpuinfo (the platform's processor string elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def facts() -> dict:
    """Returns cores, CPU model, UTC date and time, and the 1/5/15-minute load averages at the time of the call."""
    return {"cores": os.cpu_count(), "cpu_model": cpu_model(), "python": platform.python_version(),
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
            "loadavg": [round(x, 2) for x in os.getloadavg()]}


def write(name: str, result: dict, out: Path | None = None) -> Path:
    """Writes `result` with a "machine" entry to bench/results/<name>.json (or `out`) and returns the path."""
    path = Path(out) if out else results_dir() / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**result, "machine": facts()}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return path
