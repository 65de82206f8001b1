"""A throwaway PostgreSQL cluster for the store tests: `initdb` and `pg_ctl` in a folder, on a unix socket only.

Run as root (CI), the cluster is owned by and runs as ``nobody`` (PostgreSQL refuses
to run as root). Used by the `pg_server` fixture when no server is given, and by
``.ci/run``::

    eval "$(python tests/pg_cluster.py start DIR)"     # exports LAMBDARAG_TEST_PG_DSN
    python tests/pg_cluster.py stop DIR
"""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

DSN_ENV = "LAMBDARAG_TEST_PG_DSN"
"""A PostgreSQL server the tests may create databases in (libpq connection string)."""
USER = "lambdarag"


def binaries() -> Optional[Path]:
    """Returns the folder of the newest installed PostgreSQL server binaries, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    on_path = shutil.which("initdb")
    if found:
        return Path(found[-1]).parent
    return Path(on_path).parent if on_path else None


def as_owner(command: list[str]) -> list[str]:
    """Returns `command` run as an unprivileged user when this process is root."""
    if os.geteuid() != 0:
        return command
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *command]


def start(folder: Path, durable: bool = False) -> str:
    """Returns the DSN of a new cluster in `folder` after starting it (socket in `folder`, no TCP); unless
    `durable`, commits are not fsynced (tests need no durability across a power cut, only speed)."""
    bin_dir = binaries()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql)")
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(folder, "nobody", "nogroup")
    folder.chmod(0o700)
    run = dict(check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    subprocess.run(as_owner([str(bin_dir / "initdb"), "-D", str(folder / "data"), "-U", USER, "--auth=trust",
                             "-E", "UTF8", "--locale=C.UTF-8"]), **run)
    options = f"-k {folder} -c listen_addresses='' -c max_connections=200" + ("" if durable else " -c fsync=off")
    subprocess.run(as_owner([str(bin_dir / "pg_ctl"), "-D", str(folder / "data"), "-o", options,
                             "-l", str(folder / "server.log"), "-w", "start"]), **run)
    return f"host={folder} dbname=postgres user={USER}"


def stop(folder: Path) -> None:
    """Stops the cluster in `folder` and removes it."""
    bin_dir = binaries()
    if bin_dir is not None and (folder / "data").exists():
        subprocess.run(as_owner([str(bin_dir / "pg_ctl"), "-D", str(folder / "data"), "-m", "immediate", "-w",
                                 "stop"]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    action, where = sys.argv[1], Path(sys.argv[2])
    if action == "start":
        print(f"export {DSN_ENV}='{start(where)}'")
    else:
        stop(where)
