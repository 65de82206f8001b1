"""A new user's first minutes: the wheel installed cold into a fresh venv, then the first and second `ask`.

Run: nice python bench/install.py → bench/results/install.json. It builds the wheel (`pip wheel --no-deps .`),
creates a venv without the system site-packages and installs the wheel with its dependencies, bypassing
pip's cache (--no-cache-dir: every package downloaded and unpacked as on a first install). Then, with HOME
pointed at an empty folder and from an empty working folder, it times `lambdarag ask` twice: the first
builds the demo index and the classifier's exemplar vectors in the data home, the second starts warm.
Run it alone: other work on the machine shows in the times (the load average is recorded).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import write  # noqa: E402

QUESTION = "船长有什么权力？"


def timed(command: list[str], **kwargs) -> float:
    """Returns the wall seconds of one command, which must succeed."""
    start = time.perf_counter()
    subprocess.run(command, check=True, **kwargs)
    return round(time.perf_counter() - start, 1)


def size_mb(folder: Path) -> float:
    return round(sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2 ** 20, 1)


def main() -> dict:
    with tempfile.TemporaryDirectory(prefix="lambdarag-install-") as tmp:
        base = Path(tmp)
        for name in ("home", "empty"):
            (base / name).mkdir()
        build_s = timed([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(base / "dist"), str(ROOT)])
        (wheel,) = (base / "dist").glob("lambdarag-*.whl")
        venv.create(base / "venv", with_pip=True)
        python = str(base / "venv" / "bin" / "python")
        install_s = timed([python, "-m", "pip", "install", "-q", "--no-cache-dir", "--disable-pip-version-check",
                           str(wheel)])
        listed = subprocess.run([python, "-m", "pip", "list", "--format", "json"], check=True, capture_output=True,
                                text=True).stdout
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LAMBDARAG_", "XDG_", "PYTHON"))}
        env.update(HOME=str(base / "home"), PATH=f"{base / 'venv' / 'bin'}{os.pathsep}{os.environ['PATH']}")
        ask = [str(base / "venv" / "bin" / "lambdarag"), "ask", QUESTION]
        first_s = timed(ask, cwd=base / "empty", env=env, capture_output=True)
        second_s = timed(ask, cwd=base / "empty", env=env, capture_output=True)
        result = {"command": "pip install --no-cache-dir lambdarag-*.whl (fresh venv); lambdarag ask twice, HOME empty",
                  "wheel_build_s": build_s, "install_s": install_s, "packages": len(json.loads(listed)),
                  "venv_mb": size_mb(base / "venv"), "first_ask_s": first_s, "second_ask_s": second_s,
                  "data_home_mb": size_mb(base / "home")}
    write("install", result)
    return result


if __name__ == "__main__":
    print(json.dumps(main(), ensure_ascii=False, indent=1))
