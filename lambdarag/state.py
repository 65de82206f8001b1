"""The immutable working state of one query, and the generic records it holds (message, user, verdict).

`State` is what flows through a pipeline: every term reads some fields and
returns new values for others; the runner builds the next `State` and never
mutates the old one. Sequences are tuples so that nothing inside a state can
be changed in place either. Extra, user-defined fields carry new patterns' own
data; their types are declared by the terms that write them (a typed tool's
returned record), and a pipeline's run validates the ones a state is given
against those (`given_fields`), so a typo in a field name fails instead of
passing silently and no field depends on which module was imported first.
The domain's records (hits, citations, the retrieval plan, …) live in
`skills.store.records`, which declares the generic types of the
`DOMAIN_FIELDS` here for terms declared by name alone (`extra_field`).
"""
from __future__ import annotations

import functools
import hashlib
import json
from operator import attrgetter
from typing import Any, Callable, Literal, Mapping, Optional, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

INITIAL_FIELDS: frozenset[str] = frozenset({"query", "original_query", "history", "user", "plan"})
"""Fields every run starts with; a closed pipeline may read only these before writing.

`plan` is initial because every state carries a (default) plan, once a domain layer declares its type."""

DOMAIN_FIELDS: frozenset[str] = frozenset({"plan", "variants", "time_range", "candidates", "hits", "relations",
                                           "wiki_pages", "citations"})
"""Built-in fields whose records belong to the domain: the calculus types them generically, and the domain
layer (skills.store.records) declares their types with `extra_field`, so the calculus imports no domain record."""


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


EXTRA_FIELDS: dict[str, TypeAdapter] = {}
"""Declared State field types: user-defined fields and the `DOMAIN_FIELDS`, validated against them."""
DEFAULTS: dict[str, Any] = {}
"""Declared defaults of `DOMAIN_FIELDS` (e.g. the default plan)."""


def extra_field(name: str, annotation: Any, *, default: Any = None) -> None:
    """Declares the type of a user-defined State field, or of a `DOMAIN_FIELDS` one (call at import time).

    Declaring a field twice with the same type is harmless; another built-in
    field or another type is an error. `default` is the value of a domain
    field a state was not given (user-defined fields have none: absent is absent).
    """
    if name in State.__pydantic_fields__ and name not in DOMAIN_FIELDS:
        raise ValueError(f"extra_field: {name!r} is a built-in State field")
    adapter = EXTRA_FIELDS.get(name)
    if adapter is not None and adapter.core_schema != TypeAdapter(annotation).core_schema:
        raise ValueError(f"extra_field: {name!r} is already declared with another type")
    EXTRA_FIELDS.setdefault(name, TypeAdapter(annotation))
    VALIDATORS.pop(name, None)
    if default is not None and name in DOMAIN_FIELDS:
        DEFAULTS.setdefault(name, default)


def undeclared(name: str) -> str:
    """Returns why `name` cannot be a State field, for errors naming the term or constructor at fault."""
    return (f"State has no field {name!r} and no term declares its type; declare the term with a typed "
            f"return (lambdarag.tool) or writes={{{name!r}: <type>}}")


UNCHECKED = "unchecked"
"""The private key of the extra fields a state was given that no declaration has validated yet (a run or a
term's write does): only such a state carries private state, so every other one copies as fast as before."""


def given_fields(state: "State", schema: Mapping[str, Any]) -> "State":
    """Returns `state` with the extra fields it was given unchecked validated against `schema` (field → declared
    type), the types a pipeline's terms declare; such a field no term declares is refused (a typo). Fields an
    earlier run wrote were validated by their writers and pass as they are."""
    private = state.__pydantic_private__
    unchecked = private[UNCHECKED] if private is not None else ()
    if not unchecked:
        return state
    values = {}
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
    """Returns, by field name, the function validating a value of that (declared or built-in) field; None if undeclared.

    Each is the type's core validator, looked up once and called directly: the
    runner validates every write, and `TypeAdapter.validate_python` costs
    several times more. `extra_field` drops a field's entry when it declares it.
    """

    def __missing__(self, name: str) -> Optional[Callable[[Any], Any]]:
        info = State.__pydantic_fields__.get(name)
        adapter = EXTRA_FIELDS.get(name) or (TypeAdapter(info.annotation) if info is not None else None)
        if adapter is None:
            return None  # not kept: the field may be declared later
        check = self[name] = adapter.validator.validate_python
        return check


VALIDATORS = Validators()


@functools.lru_cache(maxsize=None)
def validator_of(annotation: Any) -> Callable[[Any], Any]:
    """Returns the core validator of a declared type, built once per type (on first write, not at import)."""
    return TypeAdapter(annotation).validator.validate_python


class Checks(dict):
    """Returns, by field, the validator of a term's write: its declared type's, else the State's (`VALIDATORS`)."""

    def __init__(self, types: Mapping[str, Any]) -> None:
        super().__init__()
        self.types = types

    def __missing__(self, field: str) -> Optional[Callable[[Any], Any]]:
        t = self.types.get(field)
        check = VALIDATORS[field] if t is None else validator_of(t)
        if check is not None:  # an undeclared field may be declared later
            self[field] = check
        return check


class State(BaseModel):
    """One query's working state; frozen, with user-defined fields declared by `extra_field`."""

    model_config = ConfigDict(frozen=True, extra="allow", arbitrary_types_allowed=True)

    query: str = ""
    original_query: str = ""
    history: tuple[Message, ...] = ()
    user: User = PUBLIC
    plan: Any = Field(default_factory=lambda: DEFAULTS.get("plan"))
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
    def _declared_fields(self) -> "State":
        """Validates the extra fields `extra_field` declared (construction only, not the runner's path); the
        others are typed by the terms of the pipeline that reads them, and stay unchecked until a run validates
        them (`given_fields`)."""
        unchecked = []
        for name, value in (self.__pydantic_extra__ or {}).items():
            adapter = EXTRA_FIELDS.get(name)
            if adapter is None:
                unchecked.append(name)
            else:
                self.__pydantic_extra__[name] = adapter.validate_python(value)
        if unchecked:  # kept where pydantic keeps private state; None (no copying cost) for every other state
            object.__setattr__(self, "__pydantic_private__", {UNCHECKED: frozenset(unchecked)})
        for name in DOMAIN_FIELDS & self.__pydantic_fields_set__:
            adapter = EXTRA_FIELDS.get(name)
            if adapter is not None:
                self.__dict__[name] = adapter.validate_python(self.__dict__[name])
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
