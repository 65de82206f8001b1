"""The immutable working state of one query, and the generic records it holds (message, user, verdict).

`State` is what flows through a pipeline: every term reads some fields and
returns new values for others; the runner builds the next `State` and never
mutates the old one. Sequences are tuples so that nothing inside a state can
be changed in place either. Every field's type is declared in one of two
places, never in a process-wide table: the built-in fields here, and the
fields a term reads or writes by the term (a typed tool's parameters and
returned record). Extra, user-defined fields carry new patterns' own data; a
pipeline's run validates the ones a state is given against its terms'
declarations (`given_fields`), so a typo in a field name fails instead of
passing silently. The domain's records (hits, citations, the retrieval plan, …)
live in `skills.store.records`; the calculus types those `DOMAIN_FIELDS`
generically and the terms of a pipeline type them, so no behaviour depends on
which module was imported first.
"""
from __future__ import annotations

import functools
import hashlib
import json
from operator import attrgetter
from typing import Any, Callable, Literal, Mapping, Optional, TypeVar

from pydantic import BaseModel, ConfigDict, TypeAdapter, model_validator

INITIAL_FIELDS: frozenset[str] = frozenset({"query", "original_query", "history", "user", "plan"})
"""Fields every run starts with; a closed pipeline may read only these before writing.

`plan` is initial because a run starts from the default plan its terms' declared type gives (`given_fields`)."""

DEFAULTED: frozenset[str] = frozenset({"plan"})
"""Initial fields typed by the terms that read them, whose default is their declared record's defaults."""

DOMAIN_FIELDS: frozenset[str] = frozenset({"plan", "variants", "time_range", "candidates", "hits", "relations",
                                           "wiki_pages", "citations"})
"""Built-in fields whose records belong to the domain: the calculus types them generically (it imports no domain
record) and a pipeline's terms declare their types, which validate them when a run is given them."""


R = TypeVar("R", bound="Record")


class Record(BaseModel):
    """Base of the frozen records held in a `State`. A record type's validator is built when it is first used,
    so a process pays only for the records its routes produce (an offline fact question builds no graph records)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    @classmethod
    def trusted(cls: type[R], values: dict[str, Any]) -> R:
        """Returns a record of `values` (every field, each already of its type) without validating them.

        For records built by the hundred per query from typed sources (a search's
        hits from the index's chunks): validation costs several times the build.
        """
        if values.keys() != cls.__pydantic_fields__.keys():
            given, fields = set(values), set(cls.__pydantic_fields__)
            raise TypeError(f"{cls.__name__}.trusted: missing {sorted(fields - given)}, unknown {sorted(given - fields)}")
        return assembled(cls, values, set(values), None, None)

    def updated(self: R, values: Mapping[str, Any]) -> R:
        """Returns a copy with `values` (already of the fields' types) set: `model_copy(update=...)` without its
        generic copying, for records re-scored by the hundred per query (fused and re-ranked hits)."""
        return assembled(type(self), {**self.__dict__, **values}, self.__pydantic_fields_set__ | values.keys(),
                         None, None)


def assembled(cls: type, values: dict, fields_set: set, extra: Optional[dict], private: Optional[dict]) -> Any:
    """Returns an instance of the pydantic model `cls` with these attributes set as they are (no validation)."""
    new = cls.__new__(cls)
    setattr_ = object.__setattr__
    setattr_(new, "__dict__", values)
    setattr_(new, "__pydantic_extra__", extra)
    setattr_(new, "__pydantic_fields_set__", fields_set)
    setattr_(new, "__pydantic_private__", private)
    return new


class Message(Record):
    """One turn of conversation history, OpenAI-style."""

    role: Literal["user", "assistant", "system"]
    content: str


class User(Record):
    """Who is asking: access labels that retrieval filters documents by.

    A document labelled with a department is visible only to users of that
    department; a document's security level must not exceed the user's.
    `all_access` marks the operator's principal (`User.operator()`), which reads
    everything; no other user does, and a missing user is `PUBLIC`, never that.
    """

    id: str = "anonymous"
    departments: tuple[str, ...] = ()
    security_level: int = 0
    all_access: bool = False

    @classmethod
    def operator(cls, id: str = "operator") -> "User":
        """Returns the all-access principal of an operator (the CLI's compile, feedback and maintenance work)."""
        return cls(id=id, all_access=True)

    def may_read(self, department: Optional[str], security_level: int) -> bool:
        """Returns whether a document with these labels is visible to this user."""
        if self.all_access:
            return True
        if security_level > self.security_level:
            return False
        return department is None or department in self.departments

    def scope(self) -> "Scope":
        """Returns what this user may read, as a value (what caches, votes and learned rules are keyed by)."""
        return Scope(departments=tuple(sorted(set(self.departments))), security_level=self.security_level,
                     all_access=self.all_access)


class Scope(Record):
    """What a user may read, as a value: a set of departments and a security level, or everything (an operator).

    Whatever is keyed by who asked (the query cache, votes, learned rules) is keyed by `key`, an injective
    encoding: the departments sorted and JSON-escaped, then hashed, so a department named ``甲,乙`` and the two
    departments ``甲`` and ``乙`` are different scopes, as are any two different sets (no separator to forge).
    """

    departments: tuple[str, ...] = ()
    security_level: int = 0
    all_access: bool = False

    @property
    def key(self) -> str:
        """Returns the scope's key: ``*`` for an operator, else ``s1:`` and a digest of the canonical form."""
        if self.all_access:
            return "*"
        canonical = json.dumps([sorted(set(self.departments)), int(self.security_level)], ensure_ascii=True,
                               separators=(",", ":"))
        return "s1:" + hashlib.sha256(canonical.encode("ascii")).hexdigest()[:40]

    def within(self, user: Optional["User"]) -> bool:
        """Returns whether `user` may read everything this scope may (so may see what was learned in it)."""
        reader = user or User()
        if reader.all_access:
            return True
        return not self.all_access and self.security_level <= reader.security_level \
            and set(self.departments) <= set(reader.departments)


PUBLIC = User()
"""Who a missing user is: no department, level 0."""
ALL_ACCESS = User.operator()
"""The operator's principal: reads every document (pass it explicitly; nothing defaults to it)."""


class Verdict(Record):
    """The outcome of a check (e.g. citation_check): overall pass and per-item notes."""

    passed: bool
    details: tuple[str, ...] = ()
    rejected: tuple[str, ...] = ()
    """The items the check rejected, verbatim (e.g. an answer's claims), so a retry can repair exactly those."""


def undeclared(name: str) -> str:
    """Returns why `name` cannot be a State field, for errors naming the term or constructor at fault."""
    return (f"State has no field {name!r} and no term declares its type; declare the term with a typed "
            f"return (lambdarag.tool) or writes={{{name!r}: <type>}}")


UNCHECKED = "unchecked"
"""The private key of the extra fields a state was given that no declaration has validated yet (a run or a
term's write does): only such a state carries private state, so every other one copies as fast as before."""


def given_fields(state: "State", schema: Mapping[str, Any]) -> "State":
    """Returns `state` as a run starts from it, under `schema` (field → declared type), the types a pipeline's
    terms declare: the extra fields it was given unchecked and the `DOMAIN_FIELDS` it was given are validated
    against them (an extra field no term declares is refused: a typo), and an initial field it lacks whose
    declared type is a record takes that record's defaults (the default plan). Fields an earlier run wrote were
    validated by their writers and pass as they are."""
    values = {}
    given = state.__pydantic_fields_set__
    for name in DEFAULTED - given:
        declared = schema.get(name)
        if declared is not None and isinstance(declared.type, type) and issubclass(declared.type, Record) \
                and getattr(state, name) is None:
            values[name] = declared.type()
    for name in DOMAIN_FIELDS & given:
        declared = schema.get(name)
        if declared is not None:
            values[name] = validator_of(declared.type)(getattr(state, name))
    private = state.__pydantic_private__
    unchecked = private[UNCHECKED] if private is not None else ()
    if not unchecked:
        return state.updated(values) if values else state
    for name in unchecked:
        declared = schema.get(name)
        value = state.__pydantic_extra__[name]
        if declared is not None:
            values[name] = validator_of(declared.type)(value)
        else:
            known = ", ".join(sorted(f for f in schema if f not in State.__pydantic_fields__)) or "none"
            raise ValueError(f"the initial state has field {name!r}, which no term of the pipeline reads or writes "
                             f"with a declared type (its own fields: {known})")
    return state.updated(values) if values else state


class Validators(dict):
    """Returns, by field name, the function validating a value of that built-in State field; None for another.

    Each is the type's core validator, looked up once and called directly: the
    runner validates every write, and `TypeAdapter.validate_python` costs
    several times more.
    """

    def __missing__(self, name: str) -> Optional[Callable[[Any], Any]]:
        info = State.__pydantic_fields__.get(name)
        check = self[name] = TypeAdapter(info.annotation).validator.validate_python if info is not None else None
        return check


VALIDATORS = Validators()


@functools.lru_cache(maxsize=None)
def validator_of(annotation: Any) -> Callable[[Any], Any]:
    """Returns the core validator of a declared type, built once per type (on first write, not at import)."""
    return TypeAdapter(annotation).validator.validate_python


class Checks(dict):
    """Returns, by field, the validator of a term's write by its own declared type; None for a write it declares
    by name alone (the runner then takes the pipeline's type, else the State's, `VALIDATORS`)."""

    def __init__(self, types: Mapping[str, Any]) -> None:
        super().__init__()
        self.types = types

    def __missing__(self, field: str) -> Optional[Callable[[Any], Any]]:
        t = self.types.get(field)
        check = self[field] = None if t is None else validator_of(t)
        return check


class State(BaseModel):
    """One query's working state; frozen, with user-defined fields typed by the terms that read and write them."""

    model_config = ConfigDict(frozen=True, extra="allow", arbitrary_types_allowed=True)

    query: str = ""
    original_query: str = ""
    history: tuple[Message, ...] = ()
    user: User = PUBLIC
    plan: Any = None
    query_type: Optional[str] = None
    entities: tuple[str, ...] = ()
    variants: tuple[Any, ...] = ()
    time_range: Any = None
    candidates: tuple[Any, ...] = ()
    hits: tuple[Any, ...] = ()
    relations: tuple[Any, ...] = ()
    wiki_pages: tuple[Any, ...] = ()
    missing: tuple[str, ...] = ()
    sufficient: Optional[bool] = None
    context: str = ""
    answer: str = ""
    citations: tuple[Any, ...] = ()
    verdict: Optional[Verdict] = None

    @model_validator(mode="after")
    def _unchecked_fields(self) -> "State":
        """Marks the extra fields it was given as unchecked (construction only, not the runner's path): they are
        typed by the terms of the pipeline that reads them, and a run validates them (`given_fields`)."""
        if self.__pydantic_extra__:  # kept where pydantic keeps private state; None (no copying cost) otherwise
            object.__setattr__(self, "__pydantic_private__", {UNCHECKED: frozenset(self.__pydantic_extra__)})
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
        fields = type(self).__pydantic_fields__  # `model_fields` is a computed property, slow on this path
        extra = self.__pydantic_extra__
        keys = values.keys()
        if not keys <= fields.keys():
            extra = {**(extra or {}), **{k: v for k, v in values.items() if k not in fields}}
            values = {k: v for k, v in values.items() if k in fields}
        private = self.__pydantic_private__
        if private is not None and private[UNCHECKED] & keys:  # a validated write checks a given field
            private = {**private, UNCHECKED: private[UNCHECKED] - keys}
        return assembled(type(self), {**self.__dict__, **values}, self.__pydantic_fields_set__ | keys, extra, private)

    def given(self) -> frozenset[str]:
        """Returns the fields this state was given explicitly (the run's available fields)."""
        return frozenset(self.model_fields_set) | frozenset(self.__pydantic_extra__ or {})


class ReadView:
    """Returns the fields of a state that a term declares reading; any other field raises `UndeclaredRead`.

    What an atom's function receives instead of the `State`, so that its
    declared reads are the whole truth about what it depends on. Each atom has
    its own view class (`of`), whose visible fields are properties reading the
    state in C (`operator.attrgetter`): a declared read costs a lookup, not a
    Python call.
    """

    __slots__ = ("_state",)
    _visible: frozenset[str] = frozenset()
    _term: str = ""

    def __init__(self, state: "State") -> None:
        self._state = state

    @classmethod
    def of(cls, term: str, visible: frozenset[str]) -> type["ReadView"]:
        """Returns the view class of the atom `term`, which may read the `visible` fields."""
        body: dict[str, Any] = {f: property(attrgetter(f"_state.{f}")) for f in visible}
        return type(f"ReadView[{term}]", (cls,), {"__slots__": (), "_visible": visible, "_term": term, **body})

    def __getattr__(self, field: str) -> Any:
        if field in self._visible:  # a visible extra field the state lacks: the state's own AttributeError
            return getattr(self._state, field)
        from .errors import UndeclaredRead

        raise UndeclaredRead(
            f"term {self._term!r} read field {field!r}, which it does not declare; declared reads: "
            f"{', '.join(sorted(self._visible)) or 'none'}. Add {field!r} to reads= (or optional= if an "
            f"earlier term may not write it).", term=self._term)
