"""The skill registry: skill name → factory ``(config) -> Term`` (see `lambdarag.registry`).

A skill is registered once, by ``@skill`` on its factory or typed tool, under
the function's name. `HOMES` finds those names in the modules' source without
importing them, so that a skill's module is imported when a route first builds
it, not at ``import skills``: an offline fact question never loads the graph
store, the LLM-only output schemas or the planner (tests/test_registry.py
checks the table against what the modules register).
"""
from __future__ import annotations

import re
from pathlib import Path

from lambdarag.registry import Registry

_REGISTERED = re.compile(r"^@skill\b.*?^def (\w+)", re.M | re.S)
"""A module-level ``@skill`` and the name of the first module-level def after it (the one it decorates)."""


def homes(package: Path = Path(__file__).parent) -> dict[str, str]:
    """Returns skill name → the module of `package` that registers it, read from the modules' source."""
    return {name: f"{__package__}.{path.stem}" for path in sorted(package.glob("*.py"))
            for name in _REGISTERED.findall(path.read_text(encoding="utf-8"))}


HOMES = homes()

REGISTRY = Registry("skill", homes=HOMES)
skill = REGISTRY.register
build = REGISTRY.build
