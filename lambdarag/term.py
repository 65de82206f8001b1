"""The term contract, written once.

A *term* is one step of a retrieval pipeline, like a term of the lambda
calculus applied to a query's `State`:

* **reads / writes.** A term declares the `State` fields it reads and the
  fields it writes, with their types. A typed function declares both once
  (`lambdarag.tool`: reads are its parameters, writes its returned record's
  fields, see `lambdarag.declare`); `Tool` and `Lam` also take them as names
  or ``{field: type}``; combinators derive them.
* **schema.** Closing a pipeline unions its terms' declared types into its
  State schema (`Term.schema`): a write is validated against its writer's
  type, and two declarations of one field that do not fit raise `TypeClash`
  naming both terms and their paths, before any term runs.
* **free reads.** A composite's free reads are the fields some inner term
  reads before any earlier inner term writes them. Terms are open: a fragment
  such as ``rerank >> answer_generate`` has the free read ``hits``. A pipeline
  is *closed* when it is registered or run: then every free read must be
  available at the start, otherwise `CompositionError` names the term, the
  field, its path and what was available, before any term runs.
* **run.** ``term.run(query_or_state, ctx)`` returns a new `State`; the input
  is never mutated. One runner (`lambdarag.runtime`) executes every term and
  records a trace span for each execution.
* **effects.** Atoms are ``pure`` (no I/O), ``io`` (indexes, files, HTTP other
  than LLMs) or ``llm``. ``effect_signature()`` composes them: sequence
  ``a · b``, parallel ``(a ∥ b)``, choice ``(a | b)``.
* **cost.** ``cost_bound(model)`` is a static worst-case cost of one run's
  per-call prices; LLM token prices are charged in the trace as they occur and
  are not part of the bound (a prompt's rendered length is unknown beforehand).
* **printing.** ``str(term)`` is the lambda form; a term a registry built
  prints as ``name(param=value)`` and equals any term built by the same name
  and config, so `lambdarag.syntax.parse` reads a printed form back; a part
  built from a Python function prints inside ``‹…›`` and cannot be read back.
* **errors.** Wiring mistakes raise `CompositionError` at construction or when
  closed; failures while running raise `TermError` subclasses naming the term.

Operator table: ``a >> b`` is ``Compose(a, b)``: the state ``a`` returns is
passed on to ``b``. `Compose` and `Identity` live here, beside the operator that
builds them, and so does `run`, which closes a term and hands it to the runtime:
the runtime below knows terms only by their methods, so no import runs upwards.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Iterator, Mapping, NamedTuple, Optional, Union

from .declare import Declared, schema_of
from .errors import BudgetExceeded, CompositionError
from .paths import Path, prefixed, show_path
from .runtime import SCHEMA, Context, execute
from .state import INITIAL_FIELDS, Checks, State, given_fields

if TYPE_CHECKING:
    from .cost import CostModel

EFFECTS = ("pure", "io", "llm")
"""The atom effects, weakest first: an LLM call is I/O, I/O is more than pure computation."""


def strongest(effects: Iterable[str]) -> str:
    """Returns the join of `effects` in the order of `EFFECTS` (``pure`` for none)."""
    return max(effects, key=EFFECTS.index, default="pure")

COMPUTED = frozenset({"_closed_over", "_signature", "_schema"})
"""A term's slots computed from the others on first use (`Term.replaced` leaves them to be computed again)."""


class Term:
    """Base of every term; subclasses are small immutable values (see module docstring)."""

    __slots__ = ("_closed_over", "_signature", "_origin", "_checks", "_schema")
    name: str
    kind: ClassVar[str] = "term"
    """The span kind of the class: ``tool``, ``lam``, ``compose``, ``par``, … (its name in lower case)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.kind = cls.__name__.lower()

    # -- dataflow -------------------------------------------------------
    def reads(self) -> frozenset[str]:
        """Returns the fields this term reads before writing them (its free reads)."""
        return frozenset(self.free_reads())

    def writes(self) -> frozenset[str]:
        """Returns every field this term may write."""
        raise NotImplementedError

    def free_reads(self) -> dict[str, Path]:
        """Returns each free read mapped to the path of the first term that reads it."""
        raise NotImplementedError

    def children(self) -> tuple["Term", ...]:
        """Returns the direct sub-terms."""
        return ()

    def labelled(self) -> tuple[tuple[str, "Term"], ...]:
        """Returns the direct sub-terms, each with the path segment that names its place (as errors print it)."""
        return tuple((f"{type(self).__name__}[{i}]", c) for i, c in enumerate(self.children()))

    def atoms(self, path: Path = ()) -> Iterator[tuple[Path, "Term"]]:
        """Returns every atom inside (fallbacks included), each with its path."""
        for label, child in self.labelled():
            yield from child.atoms((*path, label))

    def write_types(self) -> Mapping[str, Any]:
        """Returns the declared types of the fields it writes (an atom's own; a composite has none of its own)."""
        return {}

    def read_types(self) -> Mapping[str, Any]:
        """Returns the declared types of the fields it reads (an atom's own; a composite has none of its own)."""
        return {}

    def schema(self) -> dict[str, Declared]:
        """Returns field → the type its terms declare, and the term that declares it: the union of every term's
        outputs (then reads no term writes). Raises `TypeClash` naming both terms when two declarations disagree."""
        try:
            return self._schema
        except AttributeError:
            self._schema = found = schema_of(self.atoms())
            return found

    def checks(self) -> "Checks":
        """Returns the validators of its writes by field: the declared types inside it, else the State's."""
        try:
            return self._checks
        except AttributeError:
            self._checks = Checks({f: d.type for f, d in self.schema().items()})
            return self._checks

    def effects(self) -> frozenset[str]:
        """Returns every atom effect one run may have, fallbacks included."""
        return frozenset().union(*(c.effects() for c in self.children()))

    def sees(self) -> frozenset[str]:
        """Returns every field some atom inside may read at run time (declared or ``optional=``)."""
        return frozenset().union(*(c.sees() for c in self.children()))

    def close(self, available: Iterable[str] = INITIAL_FIELDS) -> "Term":
        """Returns self after checking that every free read is in `available` and no branch needs a sibling's write."""
        have = frozenset(available)
        if getattr(self, "_closed_over", None) == have:  # terms are immutable: a run re-closes over the same fields
            return self
        self.check_branches(have)
        self.schema()
        for field, path in self.free_reads().items():
            if field not in have:
                raise CompositionError(
                    f"term {path[-1]!r} reads field {field!r}, which no earlier term writes "
                    f"(path: {show_path(path)}); available at the start: {', '.join(sorted(have))}. "
                    f"Put a term that writes {field!r} before it, or pass it in the initial state."
                )
        self._closed_over = have
        return self

    def check_branches(self, available: frozenset[str]) -> None:
        """Rejects a concurrent or alternative branch that reads a field only a sibling writes.

        `available` is what the state holds when this term starts; combinators
        pass each sub-term what it holds at its own start.
        """
        for child in self.children():
            child.check_branches(available)

    # -- declaration ----------------------------------------------------
    def declared(self, name: str, params: Mapping[str, Any], config: Mapping[str, Any]) -> "Term":
        """Returns self marked as the registry's `name` built from `config`, of which `params` were given explicitly.

        A declared term prints as ``name(param=value, …)`` and equals any term
        declared with the same name and config, so the printed form can be read
        back (`lambdarag.syntax`). Terms are immutable: this is a copy, and `self` keeps its own name and hash.
        """
        return self.replaced(_origin=Origin(name, dict(params), frozen(config)))

    def replaced(self, **slots: Any) -> "Term":
        """Returns a copy of this term with `slots` set, and nothing computed from the old ones kept (its
        signature, schema, checks and closure are computed again)."""
        copy = object.__new__(type(self))  # not copy.copy: `Compose.__new__` without terms returns `Identity`
        for cls in type(self).__mro__:
            for slot in getattr(cls, "__slots__", ()):
                if hasattr(self, slot) and slot not in COMPUTED:
                    object.__setattr__(copy, slot, slots.get(slot, getattr(self, slot)))
        if hasattr(self, "__dict__"):   # a subclass declaring no slots
            copy.__dict__.update(self.__dict__)
        for slot, value in slots.items():
            object.__setattr__(copy, slot, value)
        return copy

    def origin(self) -> "Origin | None":
        """Returns how a registry built this term (None for a term built in Python)."""
        return getattr(self, "_origin", None)

    # -- printing -------------------------------------------------------
    def form(self, expand: bool = False) -> str:
        """Returns the body of the lambda form, without the leading ``λq.``; `expand` prints named patterns' bodies.

        A term a registry built prints as its declaration, ``name(q, _, param=value)``.
        """
        origin = self.origin()
        return self._form(expand) if origin is None else origin.form(self.reads())

    def _form(self, expand: bool) -> str:
        raise NotImplementedError

    def lambda_form(self) -> str:
        """Returns the short lambda form (named patterns by name), as error messages show a term."""
        return self.form()

    def effect_signature(self) -> str:
        """Returns the effect algebra of one run, e.g. ``llm · io · (io ∥ io) · llm``.

        Computed once: terms are immutable, and every span records it.
        """
        try:
            return self._signature
        except AttributeError:
            self._signature = signature = self._effect_signature()
            return signature

    def _effect_signature(self) -> str:
        raise NotImplementedError

    def cost_bound(self, model: "CostModel | None" = None) -> float:
        """Returns the worst-case cost of one run under `model` (default prices if None)."""
        from .cost import DEFAULT_COSTS

        return self._cost(model or DEFAULT_COSTS)

    def _cost(self, model: "CostModel") -> float:
        raise NotImplementedError

    def __str__(self) -> str:
        return f"λq. {self.form(expand=True)}"

    # -- running --------------------------------------------------------
    def _eval(self, state: State, ctx: "Context", path: Path) -> State:
        """Computes the next state; called only by the runtime, which traces it."""
        raise NotImplementedError

    def run(self, query: Union[str, State], ctx: "Context | None" = None) -> State:
        """Returns the state after running this term on a query or a state."""
        return run(self, query, ctx)

    async def arun(self, query: Union[str, State], ctx: "Context | None" = None) -> State:
        """Async `run`: the same runner, off the event loop in a worker thread."""
        import asyncio

        return await asyncio.to_thread(self.run, query, ctx)

    def __rshift__(self, other: "Term") -> "Term":
        return Compose(self, other)

    # -- structural equality -------------------------------------------
    def _key(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def _identity(self) -> tuple[Any, ...]:
        origin = self.origin()
        return self._key() if origin is None else ("declared", origin.name, origin.config)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._identity() == other._identity()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._identity()))


def frozen(value: Any) -> Any:
    """Returns a hashable copy of a JSON-like value (mappings as sorted item tuples, sequences as tuples)."""
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(frozen(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return tuple(sorted(map(repr, value)))
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def show_value(value: Any) -> str:
    """Returns a parameter value as the lambda form prints it: JSON, with identifier-like strings bare.

    A value JSON cannot write (a Python object) prints inside ``‹…›``, which marks
    a form that cannot be read back.
    """
    if isinstance(value, str):
        return value if value.isidentifier() and value not in ("true", "false", "null") else json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{show_value(str(k))}: {show_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(show_value(v) for v in value) + "]"
    if value is None or isinstance(value, (bool, int, float)):
        return json.dumps(value)
    return f"‹{type(value).__name__}›"


def read_mark(reads: Iterable[str]) -> list[str]:
    """Returns ``["q", "_"]`` when a term reads the original query besides other fields (printed ``name(q, _)``)."""
    fields = frozenset(reads)
    return ["q", "_"] if "original_query" in fields and len(fields) > 1 else []


class Origin(NamedTuple):
    """How a registry built a term: its name, the parameters given explicitly (printed), the whole config (compared)."""

    name: str
    params: dict[str, Any]
    config: Any

    def form(self, reads: Iterable[str]) -> str:
        """Returns ``name``, or ``name(q, _, key=value, …)`` with the read mark and the explicit parameters."""
        from pydantic.alias_generators import to_camel

        args = read_mark(reads) + [f"{to_camel(k)}={show_value(v)}" for k, v in self.params.items()]
        return f"{self.name}({', '.join(args)})" if args else self.name


def need_term(owner: str, what: str, value: Any) -> "Term":
    """Returns `value` if it is a term, else fails naming the combinator and the argument."""
    if not isinstance(value, Term):
        raise CompositionError(
            f"{owner}: {what} must be a Term (wrap functions with Tool(name, fn, ...)), got {type(value).__name__}"
        )
    return value


class IdentityTerm(Term):
    """The term that returns its input state unchanged."""

    __slots__ = ()
    name = "identity"

    def writes(self) -> frozenset[str]:
        return frozenset()

    def free_reads(self) -> dict[str, Path]:
        return {}

    def _form(self, expand: bool) -> str:
        return "identity"

    def _effect_signature(self) -> str:
        return "pure"

    def _cost(self, model: "CostModel") -> float:
        return 0.0

    def _eval(self, state: State, ctx: "Context", path: Path) -> State:
        return state

    def _key(self) -> tuple[Any, ...]:
        return ()

    def __repr__(self) -> str:
        return "Identity"


Identity = IdentityTerm()


class Compose(Term):
    """Returns a term that runs its terms in sequence, each on the state the previous returned.

    ``Compose(a, b, c)`` is ``λq. c(b(a(q)))``, written ``a >> b >> c``. Nested
    compositions flatten (not a registry's skill that is a sequence), `Identity` drops out, ``Compose()`` is `Identity` and
    ``Compose(t)`` is ``t``.
    """

    __slots__ = ("terms", "name", "_labels")

    def __new__(cls, *terms: Term) -> Term:  # type: ignore[misc]
        flat: list[Term] = []
        for i, t in enumerate(terms):
            need_term("Compose", f"argument {i}", t)
            if isinstance(t, Compose) and t.origin() is None:  # a skill built as a sequence stays one step
                flat.extend(t.terms)
            elif t is not Identity:
                flat.append(t)
        if not flat:
            return Identity
        if len(flat) == 1:
            return flat[0]
        self = super().__new__(cls)
        self.terms = tuple(flat)
        self.name = "compose"
        self._labels = tuple(f"Compose[{i}]" for i in range(len(flat)))  # path segments, built once
        return self

    def __init__(self, *terms: Term) -> None:
        """Construction happens in `__new__` so that it can return `Identity` or a lone term."""

    def children(self) -> tuple[Term, ...]:
        return self.terms

    def writes(self) -> frozenset[str]:
        return frozenset().union(*(t.writes() for t in self.terms))

    def free_reads(self) -> dict[str, Path]:
        written: set[str] = set()
        out: dict[str, Path] = {}
        for i, t in enumerate(self.terms):
            for field, path in prefixed(t.free_reads(), f"Compose[{i}]").items():
                if field not in written:
                    out.setdefault(field, path)
            written |= t.writes()
        return out

    def check_branches(self, available: frozenset[str]) -> None:
        for t in self.terms:
            t.check_branches(available)
            available = available | t.writes()

    def _form(self, expand: bool) -> str:
        return " >> ".join(t.form(expand) for t in self.terms)

    def _effect_signature(self) -> str:
        return " · ".join(t.effect_signature() for t in self.terms)

    def _cost(self, model: "CostModel") -> float:
        return sum(t._cost(model) for t in self.terms)

    def _eval(self, state: State, ctx: "Context", path: Path) -> State:
        for t, label in zip(self.terms, self._labels):
            state = execute(t, state, ctx, (*path, label))
        return state

    def _key(self) -> tuple[Any, ...]:
        return self.terms

    def __repr__(self) -> str:
        return f"Compose({', '.join(map(repr, self.terms))})"


def run(term: Term, query: Union[str, State], ctx: Optional[Context] = None) -> State:
    """Returns the state after running `term` closed over what the initial state provides."""
    if not isinstance(term, Term):
        raise CompositionError(f"run: expected a Term, got {type(term).__name__}")
    ctx = ctx or Context()
    state = State.of(query) if isinstance(query, str) else query
    if not isinstance(state, State):
        raise CompositionError(f"run: expected a query string or a State, got {type(query).__name__}")
    term.close(INITIAL_FIELDS | state.given())
    try:
        state = given_fields(state, term.schema())
    except ValueError as e:
        raise CompositionError(f"run {term.lambda_form()}: {e}") from None
    if ctx.budget is not None:
        bound = term.cost_bound(ctx.cost_model)
        if bound > ctx.budget:
            if ctx.budget_fallback is None:
                raise BudgetExceeded(f"cost bound {bound:.4f} of {term.lambda_form()} exceeds the budget "
                                     f"{ctx.budget:.4f} and no fallback is configured")
            fallback = ctx.budget_fallback
            fallback.close(INITIAL_FIELDS | state.given())
            out = under_schema(fallback, state, ctx)
            ctx.trace.mark_fallback((fallback.name,), f"budget: cost bound {bound:.4f} > {ctx.budget:.4f}; "
                                                       f"ran {fallback.lambda_form()} instead")
            return out
    return under_schema(term, state, ctx)


def under_schema(term: Term, state: State, ctx: Context) -> State:
    """Returns `execute(term, …)` with the closed pipeline's schema current, so a term declaring a write by name
    alone is validated against the type another term of the pipeline declares for that field."""
    token = SCHEMA.set(term.schema())
    try:
        return execute(term, state, ctx)
    finally:
        SCHEMA.reset(token)
