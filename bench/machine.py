"""Facts about the machine a benchmark ran on, for its result file."""
from __future__ import annotations

import os
import time
from pathlib import Path


def machine() -> dict:
    """Returns cores, cpu model, UTC date and the 1/5/15-minute load average right now."""
    cpuinfo = Path("/proc/cpuinfo")
    models = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
              if line.startswith("model name")] if cpuinfo.is_file() else []
    return {"cores": os.cpu_count(), "cpu_model": models[0] if models else "unknown",
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "load_average": [round(x, 2) for x in os.getloadavg()]}
