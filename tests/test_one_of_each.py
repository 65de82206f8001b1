"""One of each concept (issue 39): hybrid retrieval is built in one function, nDCG computed in one module, and stream
events have one base class; each test reads the package's source and names the twin it finds by file and line."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, Optional

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ("lambdarag", "skills", "patterns", "orchestration", "domains")
"""The import package's folders (lambdarag/'s sub-packages are links to the top-level ones, read once there)."""
LEXICAL, DENSE = "bm25_search", "embedding_search"
"""The two retrieval skills hybrid retrieval runs side by side, by the names the registry knows them by."""
FUSERS = ("Par", "zscore", "rrf", "score_fusion", "rrf_merge")
"""What puts two rankings together (besides any call named for fusing: fuse, fusion)."""


def sources(extra: Optional[Path] = None) -> Iterator[tuple[str, ast.Module]]:
    """Yields (path from the root, parsed module) of every Python file of the package, plus `extra`."""
    for top in PACKAGE:
        folder = ROOT / top
        paths = folder.glob("*.py") if top == "lambdarag" else folder.rglob("*.py")
        for path in sorted(paths):
            yield str(path.relative_to(ROOT)), ast.parse(path.read_text(encoding="utf-8"))
    if extra is not None:
        yield extra.name, ast.parse(extra.read_text(encoding="utf-8"))


def scopes(tree: ast.Module) -> Iterator[tuple[ast.AST, list[ast.AST]]]:
    """Yields each function of a module with the nodes that are its own (not those of a function nested in it)."""
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            own, todo = [], list(ast.iter_child_nodes(fn))
            while todo:
                node = todo.pop()
                own.append(node)
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                    todo.extend(ast.iter_child_nodes(node))
            yield fn, own


def retriever_of(node: ast.AST) -> Optional[str]:
    """Returns which retriever a node reaches for: a retrieval skill by name (a string or an imported name), or an
    index's own `bm25(…)` / `dense(…)` search; None for anything else."""
    if isinstance(node, ast.Constant) and node.value in (LEXICAL, DENSE):
        return node.value
    if isinstance(node, ast.Name) and node.id in (LEXICAL, DENSE):
        return node.id
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("bm25", "dense"):
        return LEXICAL if node.func.attr == "bm25" else DENSE
    return None


def fuses(node: ast.AST) -> bool:
    """Whether a node names a way of putting rankings together (`FUSERS`, or a call named for fusing)."""
    name = getattr(node, "id", getattr(node, "attr", getattr(node, "value", None)))
    return isinstance(name, str) and (name in FUSERS or (isinstance(node, (ast.Name, ast.Attribute)) and "fus" in name))


def hybrid_constructions(extra: Optional[Path] = None) -> list[str]:
    """Returns file:line function of every function that reaches for both retrievers and fuses: where BM25 and
    dense retrieval are put together (a module-level table of skill names, or a function taking one retriever or
    the other, is not)."""
    return [f"{path}:{fn.lineno} {fn.name}" for path, tree in sources(extra) for fn, own in scopes(tree)
            if {retriever_of(n) for n in own} >= {LEXICAL, DENSE} and any(fuses(n) for n in own)]


def discounted_gains(extra: Optional[Path] = None) -> list[str]:
    """Returns file:line of every base-2 logarithm, the rank discount of DCG (a function merely named for nDCG that
    calls orchestration.metrics computes none)."""
    found = []
    for path, tree in sources(extra):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "attr", getattr(node.func, "id", ""))
                base_two = name == "log" and len(node.args) == 2 and getattr(node.args[1], "value", None) == 2
                if name == "log2" or base_two:
                    found.append(f"{path}:{node.lineno}")
    return found


def declares_kind(cls: ast.ClassDef) -> bool:
    """Whether a class declares ``kind: ClassVar[…]``, the name an event goes by on the wire."""
    return any(isinstance(s, ast.AnnAssign) and getattr(s.target, "id", "") == "kind"
               and "ClassVar" in ast.unparse(s.annotation) for s in cls.body)


def event_roots(extra: Optional[Path] = None) -> list[str]:
    """Returns file:line class of every root of an event family: a class declaring its `kind` as a class variable
    that is named Event, is a dataclass or has a wire form (`as_json`), with no base of that sort (the span kinds of
    `Term` are none of these; an event declared ``class Token(Event, kind="token")`` has its base)."""
    classes = [(path, node) for path, tree in sources(extra) for node in ast.walk(tree)
               if isinstance(node, ast.ClassDef) and declares_kind(node)
               and (node.name == "Event" or any("dataclass" in ast.unparse(d) for d in node.decorator_list)
                    or any(isinstance(f, ast.FunctionDef) and f.name == "as_json" for f in node.body))]
    events = {cls.name for _, cls in classes}
    return [f"{path}:{cls.lineno} {cls.name}" for path, cls in classes
            if not any(getattr(b, "id", getattr(b, "attr", "")) in events for b in cls.bases)]


def where(found: list[str]) -> list[str]:
    """Returns file and name of each place found, without its line (which other changes move)."""
    return [f"{line.partition(':')[0]} {line.partition(' ')[2]}".strip() for line in found]


def test_hybrid_retrieval_is_built_in_one_place_only():
    assert where(hybrid_constructions()) == ["patterns/hybrid_search.py retrieve"]   # hybrid_retrieval's retrievers


def test_ndcg_is_computed_in_one_module_only():
    assert {line.partition(":")[0] for line in discounted_gains()} == {"orchestration/metrics.py"}


def test_stream_events_have_one_base_class():
    assert where(event_roots()) == ["lambdarag/stream.py Event"]


TWINS = '''
from dataclasses import dataclass
from typing import ClassVar
import numpy as np

def my_retrieval(index, query, vector):
    return fuse([index.bm25(query, 10), index.dense(vector, 10)])

def my_pattern(settings):
    return Par(skill(settings, "bm25_search"), skill(settings, "embedding_search")) >> rrf_merge

def my_ndcg(gains):
    return (gains / np.log2(np.arange(2, len(gains) + 2))).sum()

@dataclass(frozen=True)
class Milestone:
    kind: ClassVar[str] = ""

def by_hand(backend, query, vector):
    lists = [RankedList(retriever="bm25", hits=to_hits(backend.bm25(query, 50), "bm25"))]
    if backend.has_dense:
        lists.append(RankedList(retriever="dense", hits=to_hits(backend.dense(vector, 50), "dense")))
    return zscore(lists, top=50)

def one_or_the_other(backend, query, vector):
    return backend.dense(vector, 10) if vector is not None else backend.bm25(query, 10)

class Notice:
    kind: ClassVar[str] = ""

    def as_json(self):
        return {"kind": self.kind}
'''


def test_each_guard_names_a_twin_added_anywhere_in_the_package(tmp_path):
    twin = tmp_path / "twin.py"
    twin.write_text(TWINS, encoding="utf-8")
    assert hybrid_constructions(twin)[-3:] == ["twin.py:6 my_retrieval", "twin.py:9 my_pattern", "twin.py:19 by_hand"]
    assert discounted_gains(twin)[-1] == "twin.py:13"
    assert event_roots(twin)[-2:] == ["twin.py:16 Milestone", "twin.py:28 Notice"]
