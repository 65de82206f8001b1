"""The layout rules of DESIGN §1: stores apart from terms, one name per concept, imports only downwards."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx

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


FOLDERS = {link.resolve().name: f"lambdarag.{link.name}" for link in sorted((ROOT / "lambdarag").iterdir())
           if link.is_symlink() and (link / "__init__.py").is_file()}
"""Top-level folder → the package it is in the one `lambdarag` namespace (lambdarag/ links to each layer's folder)."""
PACKAGES = ("lambdarag", *FOLDERS)


def module_name(path: Path) -> str:
    """Returns the import name of a module file (a package's __init__ gives the package's name)."""
    top, *parts = path.relative_to(ROOT).with_suffix("").parts
    parts = parts[:-1] if parts and parts[-1] == "__init__" else parts
    return ".".join([FOLDERS.get(top, top), *parts])


def imports(path: Path, *, include_type_checking: bool = True) -> set[str]:
    """Returns the absolute module names `path` imports (relative imports resolved against its package),
    function-local imports included; without `include_type_checking`, imports under ``if TYPE_CHECKING:`` are left out."""
    name = module_name(path)
    package = name if path.stem == "__init__" else name.rpartition(".")[0]
    out = set()
    for node in walk(ast.parse(path.read_text(encoding="utf-8")), include_type_checking):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            name = f"{base}.{node.module}" if node.level and node.module else (base if node.level else node.module)
            out |= {name} | ({f"{name}.{a.name}" for a in node.names} if node.level else set())
    return out


def walk(node: ast.AST, include_type_checking: bool):
    """Yields `node` and its descendants, skipping the bodies of ``if TYPE_CHECKING:`` unless `include_type_checking`."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not include_type_checking and isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
            for rest in child.orelse:
                yield from walk(rest, include_type_checking)
            continue
        yield from walk(child, include_type_checking)


def module_graph() -> nx.DiGraph:
    """Returns the project's modules and the imports between them that run (a package stands for its __init__)."""
    files = {module_name(path): path for folder in PACKAGES for path in modules(ROOT / folder)}
    graph = nx.DiGraph()
    for name, path in files.items():
        graph.add_node(name)
        for target in imports(path, include_type_checking=False):
            while target and target not in files:   # `from pkg.mod import name` imports pkg.mod
                target = target.rpartition(".")[0]
            if target and target != name:
                graph.add_edge(name, target)
    return graph


def test_no_import_cycle_in_any_package():
    """Function-local imports count: hiding a back-edge in a function does not untie a circle. Imports under
    ``if TYPE_CHECKING:`` do not: they never run, and only name a type for a checker."""
    cycles = [sorted(c) for c in nx.strongly_connected_components(module_graph()) if len(c) > 1]
    assert cycles == []



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
    # reading a corpus by its profile and building an index from it is skills.indexing's, above the store
    upward = {p.name: sorted(m for m in imports(p) if m.startswith("lambdarag.skills.") and not m.startswith("lambdarag.skills.store"))
              for p in modules(ROOT / "skills" / "store")}
    assert not {k: v for k, v in upward.items() if v}


def test_no_file_names_differ_only_by_a_plural():
    stems = {}
    for folder in PACKAGES:
        for path in modules(ROOT / folder):
            stems.setdefault(path.parent, set()).add(path.stem)
    twins = [(str(d.relative_to(ROOT)), s) for d, names in stems.items() for s in names
             if s + "s" in names or s + "es" in names]
    assert not twins


def test_orchestration_does_not_import_the_demo_app_it_serves():
    upward = {p.name for p in modules(ROOT / "orchestration") if any(m.startswith("lambdarag.qademo") for m in imports(p))}
    assert not upward
    from lambdarag.orchestration.cli import DEMO_APP, app_factory

    assert callable(app_factory(DEMO_APP))


def test_every_module_reaches_the_layers_through_the_one_namespace():
    """The wheel installs only `lambdarag`: a bare `import skills` would find a user's own package of that name."""
    bare = {p.relative_to(ROOT).as_posix(): sorted(m for m in imports(p) if m.split(".")[0] in FOLDERS)
            for folder in (*PACKAGES, "tests", "bench", "examples") for p in modules(ROOT / folder)}
    assert not {k: v for k, v in bare.items() if v}


def test_the_domain_packs_sit_between_orchestration_and_patterns():
    """The packs are in the graph the cycle test checks; orchestration imports them, and nothing below them does."""
    graph = module_graph()
    assert {"lambdarag.domains", "lambdarag.domains.generic", "lambdarag.domains.prc_statutes"} <= set(graph)
    assert graph.has_edge("lambdarag.orchestration.router", "lambdarag.domains")
    upward = sorted((a, b) for a, b in graph.edges
                    if b.startswith("lambdarag.domains") and not a.startswith(("lambdarag.domains", "lambdarag.orchestration")))
    assert upward == []


PACK_PATH = re.compile(r"^lambdarag\.domains(\.\w+)*(:\w+)?$")
"""A pack's module (or ``module:Factory``) written as a string: what an import by name would load."""


def own_module(call: ast.Call) -> bool:
    """Whether an import call loads a module of the calling package itself (a lazy package's
    ``import_module(f"{__name__}.{name}")``), which cannot name a pack."""
    first = call.args[0] if call.args else None
    return isinstance(first, ast.JoinedStr) and bool(first.values) and ast.unparse(first.values[0]) in (
        "{__name__}", "{__package__}")


def test_skills_and_patterns_never_load_a_pack():
    """A pack is found by name in lambdarag.domains only (issue 39): no module of skills/ or patterns/ imports
    lambdarag.domains (under TYPE_CHECKING too) or importlib (its metadata aside), calls `__import__` or
    `import_module` (but on its own package's modules, as a lazy package does), or holds a pack's module path as
    a string; skills and patterns receive the profile object."""
    loads = {}
    for folder in ("skills", "patterns"):
        for path in modules(ROOT / folder):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
                     and getattr(n.func, "id", getattr(n.func, "attr", "")) in ("__import__", "import_module")]
            foreign = [n for n in calls if not own_module(n)]
            found = [m for m in imports(path) if m.startswith("lambdarag.domains")
                     or (m.split(".")[0] == "importlib" and not m.startswith("importlib.metadata")
                         and (foreign or not calls))]
            found += [f"line {n.lineno}: {ast.unparse(n)[:60]}" for n in foreign]
            found += [f"line {n.lineno}: {ast.unparse(n)[:60]}" for n in ast.walk(tree)
                      if isinstance(n, ast.Constant) and isinstance(n.value, str) and PACK_PATH.match(n.value)]
            if found:
                loads[path.relative_to(ROOT).as_posix()] = sorted(found)
    assert loads == {}
