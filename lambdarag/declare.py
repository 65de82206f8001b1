"""A term's contract read from one Python declaration: reads from a function's parameters, writes from its record.

``def faq_direct_answer(query: str, plan: RetrievalPlan, ctx) -> FaqOutcome`` says
everything a `Tool` needs: it reads `query` and `plan` (with those types), gets
the context, and writes the fields of `FaqOutcome` (a TypedDict, dataclass,
NamedTuple or pydantic model) with their types. A parameter with a default is
an optional read (the default stands in when no earlier term wrote it); a
function handing its reads on together (to helpers that take a state) takes
one parameter of a `Reads` dataclass instead, whose fields are its reads;
keyword-only parameters are the skill's configuration, checked against their annotations when the term is
built (`Count` for a number of things, at least 1). `schema_of` unions the
declared types of every term in a pipeline when it is closed and reports a
writer and a reader (or two writers) that disagree, naming both.
"""
from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from typing import Annotated, Any, Callable, Iterable, Mapping, NamedTuple, Optional, Union

from annotated_types import Ge, Gt

from .errors import CompositionError, TypeClash
from .paths import Path, show_path

CTX = "ctx"
"""The parameter name that receives the run's `Context` instead of a State field."""
MISSING: Any = inspect.Parameter.empty
Count = Annotated[int, Ge(1)]
"""A configuration parameter that counts things (hits, places, pages): an integer of at least 1."""
Positive = Annotated[float, Gt(0)]
"""A configuration parameter that must be above 0 (a smoothing constant, a weight)."""


class Reads:
    """Base of a frozen dataclass of the fields a typed function reads, given to it as one parameter.

    For a step whose helpers take a state-like value (``citable(state)``): the
    fields are its reads, with their types, and a field with a default is an
    optional read::

        @dataclass(frozen=True)
        class Checking(Reads):
            answer: str
            hits: Hits
            wiki_pages: tuple[WikiPage, ...] = ()

        @tool
        def citation_overlap(state: Checking) -> Checked: ...
    """


class Contract(NamedTuple):
    """What a function declares: `params` (field, default or MISSING) in call order, `ctx_at` (the context's
    position, or None), the read and written fields' types, its return record, its keyword-only
    configuration with defaults and types, and the `Reads` class its reads are handed in (or None)."""

    params: tuple[tuple[str, Any], ...]
    ctx_at: Optional[int]
    reads: dict[str, Any]
    writes: dict[str, Any]
    record: Any
    config: dict[str, Any]
    config_types: dict[str, Any]
    grouped: Any = None

    @classmethod
    def of(cls, reads: Mapping[str, Any], writes: Mapping[str, Any]) -> "Contract":
        """Returns the contract of a term declared by field types alone (a `Lam`'s), for a fallback to inherit."""
        return cls((), None, dict(reads), dict(writes), None, {}, {})

    @property
    def required(self) -> list[str]:
        """Returns the reads without a default (checked when a pipeline is closed)."""
        return [f for f, d in self.params if d is MISSING]

    @property
    def optional(self) -> list[str]:
        """Returns the reads with a default (read when written earlier, the default otherwise)."""
        return [f for f, d in self.params if d is not MISSING]


def hints(owner: str, obj: Any) -> dict[str, Any]:
    """Returns the resolved annotations of a function or class, failing with the name that did not resolve."""
    try:
        return typing.get_type_hints(obj)
    except NameError as e:
        raise CompositionError(f"term {owner!r}: an annotation does not resolve ({e}); declare the types it names "
                               f"at module level") from None


def is_record(t: Any) -> bool:
    """Returns whether `t` is a record type whose fields can be a term's writes."""
    return typing.is_typeddict(t) or dataclasses.is_dataclass(t) or (
        isinstance(t, type) and (hasattr(t, "_fields") and issubclass(t, tuple) or hasattr(t, "model_fields")))


def record_fields(owner: str, record: Any) -> dict[str, Any]:
    """Returns field → type of a record annotation: a TypedDict, dataclass, NamedTuple or pydantic model."""
    if typing.is_typeddict(record) or (isinstance(record, type) and issubclass(record, tuple)
                                       and hasattr(record, "_fields")):
        return hints(owner, record)
    if dataclasses.is_dataclass(record):
        return {f.name: f.type for f in dataclasses.fields(record)} | hints(owner, record)
    fields = getattr(record, "model_fields", None)
    if isinstance(fields, Mapping):
        return {name: info.annotation for name, info in fields.items()}
    raise CompositionError(f"term {owner!r}: its return annotation {record!r} is not a record of the fields it writes; "
                           f"return a TypedDict, dataclass, NamedTuple or pydantic model")


def contract_of(fn: Callable[..., Any], name: Optional[str] = None, like: Optional[Contract] = None) -> Contract:
    """Returns the contract `fn`'s signature declares (see the module docstring); cached per code object.

    With `like` (the contract of the term `fn` is the fallback of), what `fn`
    leaves unannotated is inherited: its return record and its reads' types.
    """
    owner = name or fn.__name__
    key = (getattr(fn, "__code__", fn), owner, None if like is None else id(like))  # `like` is a cached contract
    found = _CONTRACTS.get(key)
    if found is None:
        found = _CONTRACTS[key] = _read_contract(fn, owner, like)
    return found


_CONTRACTS: dict[Any, Contract] = {}


def _read_contract(fn: Callable[..., Any], owner: str, like: Optional[Contract]) -> Contract:
    annotations = {**(like.reads if like else {}), **hints(owner, fn)}
    if "return" not in annotations and like is None:
        raise CompositionError(f"term {owner!r}: annotate its return with a record of the fields it writes "
                               f"(e.g. a TypedDict)")
    record = annotations.get("return", like.record if like else None)
    params: list[tuple[str, Any]] = []
    ctx_at = None
    config: dict[str, Any] = {}
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.KEYWORD_ONLY:
            config[p.name] = p.default
        elif p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise CompositionError(f"term {owner!r}: *{p.name} cannot be read from a State; name each field it reads")
        elif p.name == CTX:
            ctx_at = len(params)
        else:
            params.append((p.name, p.default))
    grouped = annotations.get(params[0][0]) if len(params) == 1 else None
    if isinstance(grouped, type) and issubclass(grouped, Reads) and dataclasses.is_dataclass(grouped):
        fields = dataclasses.fields(grouped)
        params = [(f.name, MISSING if f.default is dataclasses.MISSING else f.default) for f in fields]
        annotations = {**annotations, **hints(owner, grouped)}
    else:
        grouped = None
    reads = {f: annotations.get(f, Any) for f, _ in params}
    writes = like.writes if like is not None and "return" not in hints(owner, fn) else record_fields(owner, record)
    extras = typing.get_type_hints(fn, include_extras=True) if config else {}   # ranges: Annotated[int, Ge(1)]
    return Contract(tuple(params), ctx_at, reads, writes, record, config, {k: extras.get(k, Any) for k in config},
                    grouped)


def as_writes(record: Any) -> Callable[[Any], Any]:
    """Returns how a returned record becomes the mapping of its writes (a TypedDict's, a mapping, already is one)."""
    if dataclasses.is_dataclass(record):
        names = [f.name for f in dataclasses.fields(record)]
        return lambda out: {n: getattr(out, n) for n in names}
    if isinstance(record, type) and issubclass(record, tuple):
        return lambda out: out._asdict()
    if isinstance(record, type) and hasattr(record, "model_fields"):
        return lambda out: {n: getattr(out, n) for n in type(out).model_fields}
    return lambda out: out


def accepts(reader: Any, writer: Any) -> bool:
    """Returns whether a value of type `writer` is a valid value of type `reader` (Any and unions widen)."""
    if reader is Any or writer is Any or reader == writer or reader is object:
        return True
    if _is_union(writer):
        return all(accepts(reader, w) for w in typing.get_args(writer))
    if _is_union(reader):
        return any(accepts(r, writer) for r in typing.get_args(reader))
    origin_r, origin_w = typing.get_origin(reader) or reader, typing.get_origin(writer) or writer
    if not (isinstance(origin_r, type) and isinstance(origin_w, type) and issubclass(origin_w, origin_r)):
        return False
    args_r = [a for a in typing.get_args(reader) if a is not Ellipsis]  # a bare reader (tuple) takes any tuple
    args_w = [a for a in typing.get_args(writer) if a is not Ellipsis]
    return not args_r or (len(args_r) == len(args_w) and all(accepts(r, w) for r, w in zip(args_r, args_w)))


def _is_union(t: Any) -> bool:
    return typing.get_origin(t) in (Union, types.UnionType)


def show_type(t: Any) -> str:
    """Returns a type as errors print it (``tuple[Hit, ...]``, ``bool``)."""
    return t.__name__ if isinstance(t, type) and not typing.get_args(t) else str(t).replace("typing.", "")


class Declared(NamedTuple):
    """One term's declared type of a field, and where the term sits."""

    type: Any
    path: Path


def schema_of(atoms: Iterable[tuple[Path, Any]]) -> dict[str, Declared]:
    """Returns field → the widest type some term writes it with (a field no term writes: its first reader's
    type), over `(path, atom)` pairs; raises `TypeClash` when two writers, or a reader and a writer, of a field
    declare types that do not fit, naming both."""
    atoms = list(atoms)
    schema: dict[str, Declared] = {}
    for path, atom in atoms:
        for field, t in atom.write_types().items():
            seen = schema.get(field)
            if seen is None or accepts(t, seen.type):
                schema[field] = Declared(t, path)
            elif not accepts(seen.type, t):
                raise _clash(field, "writes", path, t, "writes", seen)
    read_only: dict[str, Declared] = {}
    for path, atom in atoms:
        for field, t in atom.read_types().items():
            seen = schema.get(field)
            if seen is None:
                read_only.setdefault(field, Declared(t, path))
            elif not accepts(t, seen.type):
                raise _clash(field, "reads", path, t, "writes", seen)
    return {**read_only, **schema}


def _clash(field: str, role: str, path: Path, t: Any, other_role: str, other: Declared) -> TypeClash:
    return TypeClash(
        f"field {field!r}: term {path[-1]!r} {role} it as {show_type(t)} (path: {show_path(path)}), but term "
        f"{other.path[-1]!r} {other_role} it as {show_type(other.type)} (path: {show_path(other.path)}); "
        f"declare one type for {field!r} in both", field=field, terms=(path[-1], other.path[-1]))
