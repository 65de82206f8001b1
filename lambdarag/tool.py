"""`Tool`: a Python function lifted into a term; `tool` declares one from a typed function (`lambdarag.declare`)."""
from __future__ import annotations

import functools
import inspect
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, Union

from .declare import MISSING, Contract, as_writes, contract_of, is_record, record_fields
from .errors import CompositionError, ConfigError, ProviderError
from .state import Checks, ReadView, State, validator_of
from .runtime import apply_writes, execute
from .paths import Path
from .term import EFFECTS, Term, read_mark, strongest

if TYPE_CHECKING:
    from .cost import CostModel
    from .runtime import Context

ToolFn = Callable[..., Mapping[str, Any]]
ATTEMPTS = 2  # a provider call and one retry, for Tool and Lam alike


def wants_context(fn: Callable[..., Any]) -> bool:
    """Returns whether `fn` takes a second, required (context) argument; ``def f(s, top=3)`` does not."""
    params = [
        p for p in inspect.signature(fn).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return len(params) >= 2 and params[1].default is inspect.Parameter.empty


def atom_form(name: str, reads: frozenset[str]) -> str:
    """Returns how an atom prints: ``name(q, _)`` when it also reads the original query."""
    mark = read_mark(reads)
    return f"{name}({', '.join(mark)})" if mark else name


def field_set(term: str, what: str, fields: Iterable[str]) -> frozenset[str]:
    """Returns `fields` as a frozenset, rejecting a bare string (a common slip)."""
    if isinstance(fields, str):
        raise CompositionError(f"term {term!r}: {what} must be a list of field names, not the string {fields!r}")
    return frozenset(fields)


Fields = Union[Iterable[str], Mapping[str, Any]]
"""Fields as a term declares them: names, or names mapped to their types."""


class Atom(Term):
    """Base of the atomic terms (`Tool`, `Lam`): declared reads, writes and optional reads, printed by name.

    Reads and writes are field names, or names mapped to their types; typed ones
    take part in the pipeline's schema (`lambdarag.declare.schema_of`) and a
    typed write is validated against its own declaration, whatever was imported.
    """

    __slots__ = ("_reads", "_writes", "optional", "fallback", "_visible", "_view", "_read_types", "_write_types")

    def _declare(self, name: str, reads: Fields, writes: Fields, optional: Fields,
                 fallback: Optional[Term]) -> None:
        writes = record_fields(name, writes) if is_record(writes) else writes
        self._reads = field_set(name, "reads", reads)
        self._writes = field_set(name, "writes", writes)
        self.optional = field_set(name, "optional", optional)
        self._read_types = {**typed(optional), **typed(reads)}
        self._write_types = typed(writes)
        self._checks = Checks(self._write_types)
        self._visible = self._reads | self.optional
        self._view = ReadView.of(name, self._visible)
        self.fallback = fallback
        if fallback is None:
            return
        kind = type(self).__name__
        if not isinstance(fallback, Term):
            raise CompositionError(f"{kind} {name!r}: fallback must be a Term, got {type(fallback).__name__}")
        if fallback.writes() != self._writes:
            raise CompositionError(
                f"{kind} {name!r}: fallback {fallback.lambda_form()!r} writes {sorted(fallback.writes())} "
                f"but the {kind} writes {sorted(self._writes)}; both paths must write the same fields")
        extra = set(fallback.free_reads()) - self._reads - self.optional
        if extra:
            raise CompositionError(f"{kind} {name!r}: fallback reads {sorted(extra)}, which the {kind} does not declare")

    def _degrade(self, state: State, ctx: "Context", path: Path, reason: str, *, mode: bool = False) -> State:
        """Returns the state the fallback computes, recording why it ran: as a fallback (something failed), or with
        `mode` as the path the configuration chose (``path_taken="offline"``, e.g. no LLM configured), which is
        no failure."""
        if mode:
            ctx.trace.note(path, path_taken="offline", mode=reason)
        else:
            ctx.trace.mark_fallback(path, reason)
            ctx.trace.note(path, path_taken="fallback")
        out = execute(self.fallback, state, ctx, path)
        # what it wrote: a field its state holds now but did not hold before, or holds another value of (by
        # identity: an interned value such as () or "" written over the same default is still a write)
        given = state.given()
        wrote = {f: getattr(out, f) for f in self._writes & out.given()
                 if f not in given or getattr(out, f) is not getattr(state, f, MISSING)}
        return apply_writes(self, state, wrote, path)  # what it left alone is not written (a record's optional key)

    def writes(self) -> frozenset[str]:
        return self._writes

    def write_types(self) -> Mapping[str, Any]:
        """Returns the declared types of its writes (fields declared by name alone are absent)."""
        return self._write_types

    def read_types(self) -> Mapping[str, Any]:
        """Returns the declared types of its reads, optional ones included."""
        return self._read_types

    def atoms(self, path: Path = ()) -> Any:
        here = (*path, self.name)
        yield here, self
        if self.fallback is not None:
            yield from self.fallback.atoms((*here, "fallback"))

    def effects(self) -> frozenset[str]:
        return frozenset({self.effect}) | (self.fallback.effects() if self.fallback is not None else frozenset())

    def sees(self) -> frozenset[str]:
        return self._visible | (self.fallback.sees() if self.fallback is not None else frozenset())

    def free_reads(self) -> dict[str, Path]:
        return {field: (self.name,) for field in sorted(self._reads)}

    def _form(self, expand: bool) -> str:
        return atom_form(self.name, self._reads)


class Tool(Atom):
    """Returns a term that runs ``fn(state)`` or ``fn(state, ctx)``.

    `fn` returns a mapping of the fields it writes; the runner builds the next
    state from it. `optional` fields are read when an earlier term wrote them
    and their defaults otherwise; they are not checked when the term is closed.
    With a `fallback`, a provider failure (timeout, HTTP error, bad reply of an
    embedding or rerank endpoint) is retried once and then the fallback runs,
    recorded in the trace — the same contract as `Lam`. A `fallback` given as a
    plain function inherits this tool's contract and effect, named by the
    function. This is the low-level form; `tool` declares one from a typed
    function. Example::

        upper = Tool("upper", lambda s: {"query": s.query.upper()}, reads=["query"], writes=["query"])
    """

    __slots__ = ("name", "fn", "effect", "cost", "_with_ctx", "contract", "_call")

    def __init__(
        self,
        name: str,
        fn: ToolFn,
        *,
        reads: Fields = (),
        writes: Fields = (),
        optional: Fields = (),
        effect: str = "pure",
        cost: Optional[float] = None,
        fallback: Union[Term, Callable[..., Any], None] = None,
        contract: Optional[Contract] = None,
    ) -> None:
        if not name or not isinstance(name, str):
            raise CompositionError(f"Tool name must be a non-empty string, got {name!r}")
        if not callable(fn):
            raise CompositionError(f"Tool {name!r}: fn must be callable, got {type(fn).__name__}")
        if effect not in EFFECTS:
            raise CompositionError(f"Tool {name!r}: effect must be one of {', '.join(EFFECTS)}, got {effect!r}")
        self.name = name
        self.fn = fn
        self.effect = effect
        self.cost = cost
        self.contract = contract
        if fallback is not None and not isinstance(fallback, Term) and callable(fallback):
            fallback = Tool(fallback.__name__, fallback, reads=reads, writes=writes, optional=optional, effect=effect,
                            contract=contract and contract_of(fallback, like=contract))
        self._declare(name, reads, writes, optional, fallback)
        self._with_ctx = contract is None and wants_context(fn)
        self._call = None if contract is None else typed_call(fn, contract)

    def configured(self, **params: Any) -> "Tool":
        """Returns this tool with its keyword-only configuration set to `params` (its fallback's too)."""
        fallback = self.fallback.configured(**params) if isinstance(self.fallback, Tool) and \
            self.fallback.contract is not None else self.fallback
        own = {k: parameter(self.name, k, self.contract.config_types.get(k, Any), v) for k, v in params.items()
               if self.contract is not None and k in self.contract.config}
        fn = functools.partial(self.fn, **own) if own else self.fn
        return Tool(self.name, fn, reads=self._read_types_or_names("reads"), writes=self._write_types or self._writes,
                    optional=self._read_types_or_names("optional"), effect=self.effect, cost=self.cost,
                    fallback=fallback, contract=self.contract)

    def _read_types_or_names(self, which: str) -> Fields:
        fields = self._reads if which == "reads" else self.optional
        return {f: self._read_types[f] for f in fields} if self._read_types else fields

    @property
    def parameters(self) -> frozenset[str]:
        """Returns the configuration keys its function takes (its keyword-only parameters)."""
        return frozenset(self.contract.config) if self.contract is not None else frozenset()

    def _effect_signature(self) -> str:
        """Returns the stronger of its own and its fallback's effects: a cheap effect never hides a costly fallback."""
        return strongest(self.effects())

    def _call_cost(self, model: "CostModel") -> float:
        return self.cost if self.cost is not None else model.call_cost(self.name, self.effect)

    def _cost(self, model: "CostModel") -> float:
        call = self._call_cost(model)
        return call if self.fallback is None else ATTEMPTS * call + self.fallback._cost(model)

    def _eval(self, state: State, ctx: "Context", path: Path) -> State:
        view = self._view(state) if self._call is None else None
        cost = self._call_cost(ctx.cost_model)
        failures: list[str] = []
        while True:
            if cost:
                ctx.trace.add_cost(path, cost)  # charged per attempt that ran
            try:
                if self._call is not None:
                    out = self._call(state, ctx)
                else:
                    out = self.fn(view, ctx) if self._with_ctx else self.fn(view)
            except ProviderError as e:
                if self.fallback is None:
                    raise
                failures.append(f"attempt {len(failures) + 1}: {e}")
                if len(failures) == ATTEMPTS:
                    return self._degrade(state, ctx, path, "; ".join(failures))
                continue
            return apply_writes(self, state, out, path)

    def _key(self) -> tuple[Any, ...]:
        return (self.name, self.fn, self._reads, self._writes, self.optional, self.effect, self.cost, self.fallback)

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, reads={sorted(self._reads)}, writes={sorted(self._writes)}, effect={self.effect!r})"


def typed(fields: Fields) -> dict[str, Any]:
    """Returns the declared types of `fields` (none when given as names alone)."""
    return dict(fields) if isinstance(fields, Mapping) else {}


def typed_call(fn: Callable[..., Any], contract: Contract) -> Callable[[State, Any], Mapping[str, Any]]:
    """Returns ``call(state, ctx)``: `fn` applied to the fields its parameters name (a default for an absent
    optional one), gathered in its `Reads` class if it takes one, and the context where it asks for it, its
    record returned as the mapping of its writes."""
    params = contract.params
    ctx_at = contract.ctx_at
    to_writes = as_writes(contract.record)
    grouped = contract.grouped
    names = [f for f, _ in params]

    def call(state: State, ctx: Any) -> Mapping[str, Any]:
        args = [getattr(state, f) if d is MISSING else getattr(state, f, d) for f, d in params]
        if grouped is not None:
            args = [grouped(**dict(zip(names, args)))]
        if ctx_at is not None:
            args.insert(ctx_at, ctx)
        return to_writes(fn(*args))

    return call


def tool(fn: Optional[Callable[..., Any]] = None, *, effect: str = "pure", cost: Optional[float] = None,
         fallback: Union[Term, Callable[..., Any], None] = None, name: Optional[str] = None) -> Any:
    """Returns the `Tool` a typed function declares: its name, reads (parameters), writes (return record).

    ``ctx`` is the context; a parameter with a default is an optional read;
    keyword-only parameters are configuration (`Tool.configured`). A plain
    function as `fallback` inherits the whole contract. Use as ``@tool`` or
    ``@tool(effect="io", fallback=...)``::

        class Shouted(TypedDict):
            answer: str

        @tool
        def shout(query: str) -> Shouted:
            return {"answer": query.upper()}
    """
    def make(f: Callable[..., Any]) -> Tool:
        contract = contract_of(f, name)
        return Tool(name or f.__name__, f, reads={k: contract.reads[k] for k in contract.required},
                    optional={k: contract.reads[k] for k in contract.optional}, writes=contract.writes,
                    effect=effect, cost=cost, fallback=fallback, contract=contract)

    return make if fn is None else make(fn)


def parameter(term: str, key: str, annotation: Any, value: Any) -> Any:
    """Returns a configuration value checked and converted by its parameter's annotation (``"12"`` → 12 for an
    int, a range such as ``Annotated[int, Ge(1)]`` enforced), so a bad one fails when the term is built, naming the
    term, the parameter in YAML spelling and what it accepts."""
    if annotation is Any:
        return value
    from pydantic import ValidationError
    from pydantic.alias_generators import to_camel

    try:
        return validator_of(annotation)(value)
    except ValidationError as e:
        raise ConfigError(f"term {term!r}: parameter {to_camel(key)}={value!r}: "
                          f"{e.errors()[0]['msg'].removeprefix('Value error, ')}") from None
