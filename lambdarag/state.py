"""The immutable working state of one query, and the records it holds.

`State` is what flows through a pipeline: every term reads some fields and
returns new values for others; the runner builds the next `State` and never
mutates the old one. Sequences are tuples so that nothing inside a state can
be changed in place either. Extra, user-defined fields carry new patterns' own
data; each is declared once with its type (`extra_field`), so a typo in a
field name fails instead of passing silently.
"""
from __future__ import annotations

import datetime as dt
from typing import Any, Literal, Mapping, Optional

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

INITIAL_FIELDS: frozenset[str] = frozenset({"query", "original_query", "history", "user", "plan"})
"""Fields every run starts with; a closed pipeline may read only these before writing.

`plan` is initial because every state carries a (default) retrieval plan."""


class Record(BaseModel):
    """Base of the frozen records held in a `State`."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Message(Record):
    """One turn of conversation history, OpenAI-style."""

    role: Literal["user", "assistant", "system"]
    content: str


class User(Record):
    """Who is asking: access labels that retrieval filters documents by.

    A document labelled with a department is visible only to users of that
    department; a document's security level must not exceed the user's.
    """

    id: str = "anonymous"
    departments: tuple[str, ...] = ()
    security_level: int = 0

    def may_read(self, department: Optional[str], security_level: int) -> bool:
        """Returns whether a document with these labels is visible to this user."""
        if security_level > self.security_level:
            return False
        return department is None or department in self.departments

    def scope(self) -> str:
        """Returns a stable key of this user's rights (for caches)."""
        return f"{self.security_level}:{','.join(sorted(self.departments))}"


PUBLIC = User()


class Hit(Record):
    """One retrieved chunk with its score and per-retriever provenance."""

    chunk_id: str
    text: str
    score: float = 0.0
    source: str = ""
    title: str = ""
    section: str = ""
    date: Optional[str] = None
    family: str = ""
    kind: str = "text"
    department: Optional[str] = None
    security_level: int = 0
    ranks: dict[str, int] = Field(default_factory=dict)
    scores: dict[str, float] = Field(default_factory=dict)


class RankedList(Record):
    """The ranked output of one retriever for one query string."""

    retriever: str
    query: str
    hits: tuple[Hit, ...] = ()


class Variant(Record):
    """A query variant produced by the planner; the original query is kind 'original'."""

    text: str
    kind: Literal["original", "rewrite", "multi_query", "hyde", "step_back", "expansion"] = "original"


class TimeRange(Record):
    """The time a question is about: newest version, a point in time, or a span."""

    latest: bool = False
    as_of: Optional[dt.date] = None
    start: Optional[dt.date] = None
    end: Optional[dt.date] = None


class Relation(Record):
    """A typed edge of the entity graph with where it came from."""

    head: str
    relation: str
    tail: str
    source: str = ""
    section: str = ""
    description: str = ""
    origin: str = "rule"
    confidence: float = 1.0


class WikiPage(Record):
    """A compiled wiki page read for a question."""

    entity: str
    path: str
    text: str
    score: float = 0.0


class Citation(Record):
    """A `[来源: source#section]` marker in the answer, resolved to a context chunk."""

    source: str
    section: str = ""
    chunk_id: str = ""
    quote: str = ""


class Verdict(Record):
    """The outcome of a check (e.g. citation_check): overall pass and per-item notes."""

    passed: bool
    details: tuple[str, ...] = ()


class RetrievalPlan(Record):
    """Every per-query tunable the patterns read; built by the orchestrator, frozen.

    `reason` records each adjustment made while building the plan.
    """

    bm25_top_k: int = 20
    dense_top_k: int = 20
    fused_top_k: int = 30
    final_top_k: int = 6
    max_context_chars: int = 6000
    max_chunk_chars: int = 800
    min_score: float = 0.0
    expand_query: bool = True
    expansion_count: int = 3
    rerank: bool = True
    prefer_tables: bool = False
    faq_first: bool = False
    faq_direct_threshold: float = 0.92
    allow_similar_faq: bool = True
    retrieve: bool = True
    direct_reply: str = ""
    intent: str = "knowledge"
    risk: str = ""
    max_hops: int = 2
    max_nodes: int = 20
    faq_top_k: int = 20
    query_type: Optional[str] = None
    short_query: bool = False
    time_range: Optional[TimeRange] = None
    reason: str = "default"


EXTRA_FIELDS: dict[str, TypeAdapter] = {}
"""User-defined State fields, declared with `extra_field`, each with the type its values are validated against."""


def extra_field(name: str, annotation: Any) -> None:
    """Declares a user-defined State field and its type, so terms may read and write it (call at import time).

    Declaring a field twice with the same type is harmless; a built-in field or another type is an error.
    """
    if name in State.__pydantic_fields__:
        raise ValueError(f"extra_field: {name!r} is a built-in State field")
    adapter = EXTRA_FIELDS.get(name)
    if adapter is not None and adapter.core_schema != TypeAdapter(annotation).core_schema:
        raise ValueError(f"extra_field: {name!r} is already declared with another type")
    EXTRA_FIELDS.setdefault(name, TypeAdapter(annotation))


def undeclared(name: str) -> str:
    """Returns why `name` cannot be a State field, for errors naming the term or constructor at fault."""
    known = ", ".join(sorted(EXTRA_FIELDS)) or "none"
    return (f"State has no field {name!r} (declared extra fields: {known}); declare it with "
            f"lambdarag.extra_field({name!r}, <type>) in the module that writes it")


class State(BaseModel):
    """One query's working state; frozen, with user-defined fields declared by `extra_field`."""

    model_config = ConfigDict(frozen=True, extra="allow", arbitrary_types_allowed=True)

    query: str = ""
    original_query: str = ""
    history: tuple[Message, ...] = ()
    user: User = PUBLIC
    plan: RetrievalPlan = RetrievalPlan()
    query_type: Optional[str] = None
    entities: tuple[str, ...] = ()
    variants: tuple[Variant, ...] = ()
    time_range: Optional[TimeRange] = None
    candidates: tuple[RankedList, ...] = ()
    hits: tuple[Hit, ...] = ()
    relations: tuple[Relation, ...] = ()
    wiki_pages: tuple[WikiPage, ...] = ()
    missing: tuple[str, ...] = ()
    sufficient: Optional[bool] = None
    context: str = ""
    answer: str = ""
    citations: tuple[Citation, ...] = ()
    verdict: Optional[Verdict] = None

    @model_validator(mode="after")
    def _declared_extras(self) -> "State":
        """Rejects an undeclared extra field and validates declared ones (construction only, not the runner's path)."""
        for name, value in (self.__pydantic_extra__ or {}).items():
            adapter = EXTRA_FIELDS.get(name)
            if adapter is None:
                raise ValueError(undeclared(name))
            self.__pydantic_extra__[name] = adapter.validate_python(value)
        return self

    @classmethod
    def of(cls, query: str, **fields: Any) -> "State":
        """Returns a fresh state for `query`, with `original_query` set to it."""
        return cls(query=query, original_query=fields.pop("original_query", query), **fields)

    def updated(self, values: Mapping[str, Any]) -> "State":
        """Returns a copy with `values` (already validated) set: `model_copy(update=...)` without its generic copying.

        The runner builds every next state here, so it is kept lean; the extra
        fields' dict is shared, which is safe because states are frozen.
        """
        cls = type(self)
        new = cls.__new__(cls)
        fields = cls.__pydantic_fields__  # `model_fields` is a computed property, slow on this path
        extra = self.__pydantic_extra__
        keys = values.keys()
        if not keys <= fields.keys():
            extra = {**(extra or {}), **{k: v for k, v in values.items() if k not in fields}}
            values = {k: v for k, v in values.items() if k in fields}
        setattr_ = object.__setattr__
        setattr_(new, "__dict__", {**self.__dict__, **values})
        setattr_(new, "__pydantic_extra__", extra)
        setattr_(new, "__pydantic_fields_set__", self.__pydantic_fields_set__ | keys)
        setattr_(new, "__pydantic_private__", self.__pydantic_private__)
        return new

    def given(self) -> frozenset[str]:
        """Returns the fields this state was given explicitly (the run's available fields)."""
        return frozenset(self.model_fields_set) | frozenset(self.__pydantic_extra__ or {})


class ReadView:
    """Returns the fields of a state that a term declares reading; any other field raises `UndeclaredRead`.

    What an atom's function receives instead of the `State`, so that its
    declared reads are the whole truth about what it depends on.
    """

    __slots__ = ("_state", "_visible", "_term")

    def __init__(self, state: "State", visible: frozenset[str], term: str) -> None:
        self._state, self._visible, self._term = state, visible, term

    def __getattr__(self, field: str) -> Any:
        if field in self._visible:
            return getattr(self._state, field)
        from .errors import UndeclaredRead

        raise UndeclaredRead(
            f"term {self._term!r} read field {field!r}, which it does not declare; declared reads: "
            f"{', '.join(sorted(self._visible)) or 'none'}. Add {field!r} to reads= (or optional= if an "
            f"earlier term may not write it).", term=self._term)
