"""The facts about the machine every bench result records: cores, CPU model, date and load average."""
from __future__ import annotations

import os
import platform
import time
from pathlib import Path


def cpu_model() -> str:
    """Returns the CPU model name from /proc/cpuinfo (the platform's processor string elsewhere)."""
    info = Path("/proc/cpuinfo")
    if info.is_file():
        for line in info.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def machine_facts() -> dict:
    """Returns cores, CPU model, UTC date and the 1/5/15-minute load averages, measured now."""
    return {"cores": os.cpu_count(), "cpu_model": cpu_model(),
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "loadavg": [round(x, 2) for x in os.getloadavg()], "python": platform.python_version()}
