"""LambdaRAG: retrieval pipelines as typed, composable terms over an immutable `State`, and the search built on them.

This package is the calculus; its layers are subpackages: `lambdarag.skills` (atomic terms), `lambdarag.patterns`
(strategies), `lambdarag.domains` (corpus packs), `lambdarag.orchestration` (classify, route, search, feedback).

>>> from lambdarag import Tool, Compose
>>> a = Tool("a", lambda s: {"answer": s.query}, reads=["query"], writes=["answer"])
>>> str(Compose(a))
'λq. a'

The names below load on first use (PEP 562), so a command that needs none of them (``lambdarag --help``,
``lambdarag where``) or only `lambdarag.errors` does not import the calculus and its pydantic models, and
`import lambdarag` does not import every layer (`search` and its kin come from orchestration when first used).
"""
import sys
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Guard": "combinators", "If": "combinators", "Map": "combinators", "Merge": "combinators", "Named": "combinators",
    "Par": "combinators", "Route": "combinators", "appended": "combinators", "CostModel": "cost", "Lam": "lam",
    "Prompt": "lam", "Reply": "lam", "Context": "runtime", "INITIAL_FIELDS": "state", "Message": "state",
    "State": "state", "User": "state", "Scope": "state", "Verdict": "state",
    "Compose": "term", "Identity": "term", "Term": "term", "run": "term", "Tool": "tool", "tool": "tool",
    "Span": "trace", "Trace": "trace", "Count": "declare", "Positive": "declare", "Reads": "declare",
    "search": "lambdarag.orchestration.search_unified", "asearch": "lambdarag.orchestration.search_unified",
    "search_stream": "lambdarag.orchestration.search_unified", "asearch_stream": "lambdarag.orchestration.search_unified",
    "SearchResult": "lambdarag.orchestration.result",
}
__all__ = list(_EXPORTS)
__version__ = "0.7.0"

if TYPE_CHECKING:   # what __getattr__ returns, for type checkers (`mypy --strict` on a user's script)
    from .combinators import (
        Guard as Guard, If as If, Map as Map, Merge as Merge, Named as Named, Par as Par, Route as Route,
        appended as appended,
    )
    from .cost import CostModel as CostModel
    from .declare import Count as Count, Positive as Positive, Reads as Reads
    from .lam import Lam as Lam, Prompt as Prompt, Reply as Reply
    from .orchestration.result import SearchResult as SearchResult
    from .orchestration.search_unified import (
        asearch as asearch, asearch_stream as asearch_stream, search as search, search_stream as search_stream,
    )
    from .runtime import Context as Context
    from .state import (
        INITIAL_FIELDS as INITIAL_FIELDS, Message as Message, Scope as Scope, State as State, User as User,
        Verdict as Verdict,
    )
    from .term import Compose as Compose, Identity as Identity, Term as Term, run as run
    from .tool import Tool as Tool, tool as tool
    from .trace import Span as Span, Trace as Trace


def __getattr__(name: str) -> Any:
    """Returns the exported `name`, importing its module on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'lambdarag' has no attribute {name!r}")
    value = getattr(import_module(module if module.startswith(f"{__name__}.") else f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


class _Package(ModuleType):
    """This package's module: importing the submodule `lambdarag.tool` binds it on the package, which must not hide
    the exported function `tool` of the same name."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _EXPORTS and isinstance(value, ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
