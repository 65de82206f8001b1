"""The check `resolve_config` runs before a first question, that every route of a config closes, remembered per
config and per version of the code that built its routes, so a warm process does not rebuild every route again.

A pass is kept in the cache folder (``checked-routes/<config digest>.json``) with the size and modification time
of every module file that was loaded when it passed (the standard library aside); a changed file, a changed config
or another Python misses, and the routes are checked afresh. A failed check is never kept.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import sysconfig
from pathlib import Path
from typing import Optional

from lambdarag.skills.store.files import write_text
from lambdarag.skills.store.home import cache_dir

from .config import AgentConfig
from .router import route_reports

Downgrades = list[tuple[str, str]]
"""(route, why it was downgraded) for each route over the cost budget, as `router.RouteReport.over_budget` says."""


def checked_routes(config: AgentConfig, source: str) -> Downgrades:
    """Returns the downgrades of `config`'s routes over budget, once every route is known to close: remembered
    from an earlier pass of this config on this code, else checked now (`router.route_reports`, whose
    ConfigError names `source`) and remembered."""
    stamp = cache_dir("checked-routes") / f"{config_digest(config)}.json"
    remembered = remembered_pass(stamp)
    if remembered is not None:
        return remembered
    downgrades = [(r.query_type, r.over_budget) for r in route_reports(config, source) if r.over_budget]
    try:
        write_text(stamp, json.dumps({"downgrades": downgrades, "code": code_files()}))
    except OSError:   # a read-only cache folder: checked again next time
        pass
    return downgrades


def config_digest(config: AgentConfig) -> str:
    """Returns the digest of a config as parsed (environment overrides included) and the Python running it."""
    return hashlib.sha256(f"{sys.version}\n{config.model_dump_json()}".encode("utf-8")).hexdigest()[:24]


def code_files() -> dict[str, tuple[int, int]]:
    """Returns (modification time in ns, size) by file of every loaded module outside the standard library."""
    stdlib = sysconfig.get_paths()["stdlib"]
    out = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and not path.startswith(stdlib) and path not in out:
            try:
                info = os.stat(path)
            except OSError:
                continue
            out[path] = (info.st_mtime_ns, info.st_size)
    return out


def remembered_pass(stamp: Path) -> Optional[Downgrades]:
    """Returns the downgrades a pass kept in `stamp`, or None when there is none or a module file has changed."""
    try:
        kept = json.loads(stamp.read_text(encoding="utf-8"))
        for path, (mtime, size) in kept["code"].items():
            info = os.stat(path)
            if (info.st_mtime_ns, info.st_size) != (mtime, size):
                return None
        return [(route, why) for route, why in kept["downgrades"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
