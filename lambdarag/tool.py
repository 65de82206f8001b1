"""`Tool`: a Python function lifted into a term."""
from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional

from .errors import CompositionError, ProviderError
from .state import ReadView, State
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


class Atom(Term):
    """Base of the atomic terms (`Tool`, `Lam`): declared reads, writes and optional reads, printed by name."""

    __slots__ = ("_reads", "_writes", "optional", "fallback", "_visible", "_view")

    def _declare(self, name: str, reads: Iterable[str], writes: Iterable[str], optional: Iterable[str],
                 fallback: Optional[Term]) -> None:
        self._reads = field_set(name, "reads", reads)
        self._writes = field_set(name, "writes", writes)
        self.optional = field_set(name, "optional", optional)
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

    def _degrade(self, state: State, ctx: "Context", path: Path, reason: str) -> State:
        """Returns the state the fallback computes, recording why it ran."""
        ctx.trace.mark_fallback(path, reason)
        ctx.trace.note(path, path_taken="fallback")
        out = execute(self.fallback, state, ctx, path)
        return apply_writes(self, state, {f: getattr(out, f) for f in self._writes}, path)

    def writes(self) -> frozenset[str]:
        return self._writes

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
    recorded in the trace — the same contract as `Lam`. Example::

        upper = Tool("upper", lambda s: {"query": s.query.upper()}, reads=["query"], writes=["query"])
    """

    __slots__ = ("name", "fn", "effect", "cost", "_with_ctx")

    def __init__(
        self,
        name: str,
        fn: ToolFn,
        *,
        reads: Iterable[str] = (),
        writes: Iterable[str] = (),
        optional: Iterable[str] = (),
        effect: str = "pure",
        cost: Optional[float] = None,
        fallback: Optional[Term] = None,
    ) -> None:
        if not name or not isinstance(name, str):
            raise CompositionError(f"Tool name must be a non-empty string, got {name!r}")
        if not callable(fn):
            raise CompositionError(f"Tool {name!r}: fn must be callable, got {type(fn).__name__}")
        if effect not in EFFECTS:
            raise CompositionError(f"Tool {name!r}: effect must be one of {', '.join(EFFECTS)}, got {effect!r}")
        self.name = name
        self.fn = fn
        self._declare(name, reads, writes, optional, fallback)
        self.effect = effect
        self.cost = cost
        self._with_ctx = wants_context(fn)

    def _effect_signature(self) -> str:
        """Returns the stronger of its own and its fallback's effects: a cheap effect never hides a costly fallback."""
        return strongest(self.effects())

    def _call_cost(self, model: "CostModel") -> float:
        return self.cost if self.cost is not None else model.call_cost(self.name, self.effect)

    def _cost(self, model: "CostModel") -> float:
        call = self._call_cost(model)
        return call if self.fallback is None else ATTEMPTS * call + self.fallback._cost(model)

    def _eval(self, state: State, ctx: "Context", path: Path) -> State:
        view = self._view(state)
        cost = self._call_cost(ctx.cost_model)
        failures: list[str] = []
        while True:
            if cost:
                ctx.trace.add_cost(path, cost)  # charged per attempt that ran
            try:
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
