"""The layout rules of DESIGN §1: stores apart from terms, one name per concept, imports only downwards."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import ROOT

STORE_CLASS = re.compile(r"(Store|Backend|Index|Graph|Cache|Log)$")


def modules(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def defines(path: Path) -> tuple[set[str], set[str]]:
    """Returns the store classes and the skills (`@skill` functions) a module defines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    stores = {n.name for n in tree.body if isinstance(n, ast.ClassDef) and STORE_CLASS.search(n.name)}
    skills = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)
              and any(isinstance(d, ast.Call) and getattr(d.func, "id", "") == "skill" for d in n.decorator_list)}
    return stores, skills


def imports(path: Path) -> set[str]:
    """Returns the absolute module names `path` imports (relative imports resolved against its package)."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            name = f"{base}.{node.module}" if node.level and node.module else (base if node.level else node.module)
            out |= {name} | ({f"{name}.{a.name}" for a in node.names} if node.level else set())
    return out


def test_no_skills_module_both_defines_a_store_and_a_term():
    mixed = {}
    for path in modules(ROOT / "skills"):
        stores, skills = defines(path)
        if stores and skills:
            mixed[path.relative_to(ROOT).as_posix()] = (sorted(stores), sorted(skills))
    assert not mixed


def test_stores_live_in_skills_store_and_import_nothing_else_from_skills():
    outside = {p.relative_to(ROOT).as_posix(): sorted(defines(p)[0]) for p in modules(ROOT / "skills")
               if defines(p)[0] and "store" not in p.parts}
    assert not outside
    # the one exception: how a corpus is read, chunked and tokenised is the corpus profile's (skills.profile), which
    # the store asks when it reads a corpus or builds an index
    upward = {p.name: sorted(m for m in imports(p) if m.startswith("skills.") and not m.startswith("skills.store")
                             and not m.startswith("skills.profile"))
              for p in modules(ROOT / "skills" / "store")}
    assert not {k: v for k, v in upward.items() if v}


def test_no_file_names_differ_only_by_a_plural():
    stems = {}
    for folder in ("lambdarag", "skills", "patterns", "orchestration", "qademo"):
        for path in modules(ROOT / folder):
            stems.setdefault(path.parent, set()).add(path.stem)
    twins = [(str(d.relative_to(ROOT)), s) for d, names in stems.items() for s in names
             if s + "s" in names or s + "es" in names]
    assert not twins


def test_orchestration_does_not_import_the_demo_app_it_serves():
    upward = {p.name for p in modules(ROOT / "orchestration") if any(m.startswith("qademo") for m in imports(p))}
    assert not upward
    from orchestration.cli import DEMO_APP, app_factory

    assert callable(app_factory(DEMO_APP))
