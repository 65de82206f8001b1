"""Every third-party module the installed packages import is declared in pyproject.toml."""
from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import packages_distributions

import pytest

from tests.conftest import ROOT

tomllib = pytest.importorskip("tomllib")   # Python ≥ 3.11

PACKAGES = ["lambdarag", "skills", "patterns", "domains", "orchestration", "qademo"]


def imported_modules() -> dict[str, str]:
    """Returns top-level module → first file importing it, over the installed packages."""
    found: dict[str, str] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
                for name in names:
                    found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def test_every_runtime_import_is_declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    declared = project["dependencies"] + [d for name, deps in extras.items() if name not in ("test", "docs")
                                          for d in deps]   # every optional engine and bridge is an extra
    names = {re.split(r"[<>=\[ ;]", d)[0].lower().replace("_", "-") for d in declared}
    dists = packages_distributions()
    missing = {}
    for module, where in imported_modules().items():
        if module in sys.stdlib_module_names or module in PACKAGES:
            continue
        owners = {d.lower().replace("_", "-") for d in dists.get(module, [module])}
        if not owners & names:
            missing[module] = where
    assert missing == {}


def test_evaluation_needs_no_ranx_at_run_time():
    assert "ranx" not in imported_modules()
