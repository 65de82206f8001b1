"""LambdaRAG's calculus: retrieval pipelines as typed, composable terms over an immutable `State`.

>>> from lambdarag import Tool, Compose
>>> a = Tool("a", lambda s: {"answer": s.query}, reads=["query"], writes=["answer"])
>>> str(Compose(a))
'λq. a'
"""
from .combinators import Guard, If, Map, Merge, Named, Par, Route, appended
from .cost import CostModel
from .lam import Lam, Prompt, Reply
from .runtime import Context
from .state import INITIAL_FIELDS, Message, Scope, State, User, Verdict, extra_field
from .term import Compose, Identity, Term, run
from .tool import Tool, tool
from .trace import Span, Trace

__all__ = [
    "State", "Context", "Tool", "tool", "Lam", "Prompt", "Reply", "Compose", "Par", "If", "Route", "Guard", "Map", "Identity", "Named",
    "Merge", "appended", "extra_field", "Term", "CostModel", "Trace", "Span", "run", "INITIAL_FIELDS",
    "Verdict", "Message", "User", "Scope",
]
__version__ = "0.1.0"
