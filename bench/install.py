"""Wall-clock time of `pip install -e .` into a fresh virtual environment, with and without ranx in the core.

Run: nice python bench/install.py → bench/results/install.json. "core" is the install a user gets
today; "core + ranx" adds the evaluation library that was a core dependency before the `test` extra
took it, so the difference is what moving it saved. pip's cache is bypassed (--no-cache-dir), so
each install downloads and builds what it needs, as on a first install. Run it alone: other
work on the machine shows in the times (the load average is recorded).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import write  # noqa: E402

VARIANTS = {"core": [], "core + ranx (before the eval split)": ["ranx>=0.3.19,<0.4"]}


def install(extra: list[str]) -> dict:
    """Returns the wall time of one editable install into a new venv and how many packages it holds after."""
    with tempfile.TemporaryDirectory(prefix="lambdarag-install-") as tmp:
        venv.create(tmp, with_pip=True)
        python = str(Path(tmp) / "bin" / "python")
        start = time.perf_counter()
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-cache-dir", "-e", str(ROOT), *extra],
                       check=True)
        seconds = time.perf_counter() - start
        listed = subprocess.run([python, "-m", "pip", "list", "--format", "json"], check=True,
                                capture_output=True, text=True).stdout
        return {"seconds": round(seconds, 1), "packages": len(json.loads(listed))}


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--variant", choices=sorted(VARIANTS), action="append",
                    help="measure only these (default: all)")
    args = ap.parse_args()
    result = {"command": "pip install --no-cache-dir -e . (fresh venv)",
              "variants": {name: install(VARIANTS[name]) for name in args.variant or VARIANTS}}
    write("install", result)
    return result


if __name__ == "__main__":
    print(json.dumps(main(), ensure_ascii=False, indent=1))
