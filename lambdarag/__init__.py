"""LambdaRAG: retrieval pipelines as typed, composable terms over an immutable `State`, and the search built on them.

This package is the calculus; its layers are subpackages: `lambdarag.skills` (atomic terms), `lambdarag.patterns`
(strategies), `lambdarag.domains` (corpus packs), `lambdarag.orchestration` (classify, route, search, feedback).
`search`, `asearch`, `search_stream`, `asearch_stream` and `SearchResult` are imported from orchestration on first use.

>>> from lambdarag import Tool, Compose
>>> a = Tool("a", lambda s: {"answer": s.query}, reads=["query"], writes=["answer"])
>>> str(Compose(a))
'λq. a'
"""
from typing import TYPE_CHECKING, Any

from .combinators import Guard, If, Map, Merge, Named, Par, Route, appended
from .cost import CostModel
from .declare import Count, Positive
from .lam import Lam, Prompt, Reply
from .runtime import Context
from .state import INITIAL_FIELDS, Message, Scope, State, User, Verdict, extra_field
from .term import Compose, Identity, Term, run
from .tool import Tool, tool
from .trace import Span, Trace

if TYPE_CHECKING:   # the search API, for type checkers; at run time __getattr__ loads it on first use
    from .orchestration.result import SearchResult
    from .orchestration.search_unified import asearch, asearch_stream, search, search_stream

SEARCH = {"search": "search_unified", "asearch": "search_unified", "search_stream": "search_unified",
          "asearch_stream": "search_unified", "SearchResult": "result"}
"""The search API, by the orchestration module that defines it: loaded lazily, since orchestration imports the
calculus and `import lambdarag` must not import every layer."""

__all__ = [
    "State", "Context", "Tool", "tool", "Lam", "Prompt", "Reply", "Compose", "Par", "If", "Route", "Guard", "Map", "Identity", "Named",
    "Merge", "appended", "extra_field", "Term", "CostModel", "Trace", "Span", "run", "INITIAL_FIELDS",
    "Verdict", "Message", "User", "Scope", "Count", "Positive", *SEARCH,
]
__version__ = "0.7.0"


def __getattr__(name: str) -> Any:
    if name in SEARCH:
        from importlib import import_module
        return getattr(import_module(f"lambdarag.orchestration.{SEARCH[name]}"), name)
    raise AttributeError(f"module 'lambdarag' has no attribute {name!r}")
