"""The one runner: closes a term, checks the budget, executes it with tracing, concurrency and deadlines."""
from __future__ import annotations

import threading
import time
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Mapping, Optional, Sequence, Union

from pydantic import TypeAdapter, ValidationError

from .cost import CostModel
from .errors import BranchError, BudgetExceeded, CompositionError, DeadlineExceeded, LambdaRAGError, TermError
from .state import INITIAL_FIELDS, State
from .term import Path, Term, show_path
from .trace import Trace

KINDS = {"Tool": "tool", "Lam": "lam"}


@dataclass
class Context:
    """What a run needs besides the state: providers, resources, deadline, budget and the trace.

    `resources` holds named domain objects (indexes, graphs) that skills look up
    with `resource(name)`; the calculus itself never looks inside them.
    """

    llm: Any = None
    embedder: Any = None
    reranker: Any = None
    config: Mapping[str, Any] = field(default_factory=dict)
    resources: dict[str, Any] = field(default_factory=dict)
    deadline: Optional[float] = None
    budget: Optional[float] = None
    budget_fallback: Optional[Term] = None
    cost_model: CostModel = field(default_factory=CostModel)
    trace: Trace = field(default_factory=Trace)

    def with_timeout(self, seconds: float) -> "Context":
        """Returns self with a deadline `seconds` from now."""
        self.deadline = time.monotonic() + seconds
        return self

    def remaining(self) -> Optional[float]:
        """Returns seconds left before the deadline (None when there is none)."""
        return None if self.deadline is None else self.deadline - time.monotonic()

    def resource(self, name: str) -> Any:
        """Returns the named resource, or fails naming the ones that exist."""
        try:
            return self.resources[name]
        except KeyError:
            have = ", ".join(sorted(self.resources)) or "none"
            raise LambdaRAGError(f"resource {name!r} is not in the context; available: {have}") from None


@lru_cache(maxsize=None)
def _adapter(field_name: str) -> Optional[TypeAdapter]:
    info = State.model_fields.get(field_name)
    return TypeAdapter(info.annotation) if info is not None else None


def apply_writes(term: Term, state: State, updates: Mapping[str, Any], path: Path) -> State:
    """Returns the next state from a term's writes, rejecting undeclared or ill-typed fields."""
    if not isinstance(updates, Mapping):
        raise TermError(
            f"term {term.name!r} returned {type(updates).__name__}; it must return a mapping of the fields it "
            f"writes ({', '.join(sorted(term.writes()))})", term=term.name, path=show_path(path))
    allowed = term.writes()
    clean: dict[str, Any] = {}
    for key, value in updates.items():
        if key not in allowed:
            raise TermError(
                f"term {term.name!r} wrote field {key!r}, which it does not declare; declared writes: "
                f"{', '.join(sorted(allowed)) or 'none'}", term=term.name, path=show_path(path))
        adapter = _adapter(key)
        try:
            clean[key] = adapter.validate_python(value) if adapter else value
        except ValidationError as e:
            first = e.errors()[0]
            raise TermError(
                f"term {term.name!r} wrote an invalid value to field {key!r}: {first['msg']} "
                f"at {'.'.join(map(str, first['loc'])) or key}", term=term.name, path=show_path(path)) from None
    return state.model_copy(update=clean)


def execute(term: Term, state: State, ctx: Context, path: Path = (), parent: Optional[int] = None) -> State:
    """Returns the state after one term, recording its span; every execution goes through here.

    `path` is where the term sits (its parent's path plus a position label); the
    term's own name is appended to it.
    """
    path = (*path, term.name)
    if ctx.deadline is not None and time.monotonic() > ctx.deadline:
        raise DeadlineExceeded(f"deadline passed before term {term.name!r} (path: {show_path(path)})",
                               term=term.name, path=show_path(path))
    span = ctx.trace.open(name=term.name, kind=KINDS.get(type(term).__name__, type(term).__name__.lower()),
                          effect=term.effect_signature(), path=show_path(path), parent=parent)
    try:
        return term._eval(state, ctx, path)
    except LambdaRAGError as e:
        span.error = span.error or str(e)
        raise
    except Exception as e:
        span.error = f"{type(e).__name__}: {e}"
        raise TermError(f"term {term.name!r} failed (path: {show_path(path)}): {type(e).__name__}: {e}",
                        term=term.name, path=show_path(path)) from e
    finally:
        ctx.trace.finish(span)


POOL_THREADS = 64
_POOL = ThreadPoolExecutor(max_workers=POOL_THREADS, thread_name_prefix="lambdarag")
"""One process-wide pool: threads are reused, so engines that keep per-thread state (OpenMP teams in the
embedder, faiss) are not rebuilt for every `Par`; fan-outs nested deeper than 64 waiting branches would
wait on each other until the context's deadline."""


def concurrently(
    jobs: Sequence[tuple[Term, State, Path]], ctx: Context, *, owner: str, width: Optional[int] = None
) -> list[State]:
    """Returns the states of jobs run in parallel threads, in job order, at most `width` at a time.

    The first job runs in the calling thread, the others in the pool; a deadline
    that passes during the first job is reported when it returns (no thread can
    be interrupted), and the others are waited for no longer than the deadline.
    The first failing branch is reported by its index and term.
    """
    parent_span = ctx.trace._span_at(jobs[0][2][:-1]) if jobs else None
    parent = parent_span.id if parent_span else None
    gate = threading.BoundedSemaphore(width or len(jobs))

    def job(term: Term, state: State, path: Path) -> State:
        with gate:
            return execute(term, state, ctx, path, parent)

    # The caller's thread runs the first job itself: one thread hand-off fewer per Par (STARD hybrid p50 32 → 27 ms).
    futures = [_POOL.submit(job, t, s, p) for t, s, p in jobs[1:]]
    first: Future = Future()
    try:
        first.set_result(job(*jobs[0]))
    except Exception as e:  # reported below like any other branch
        first.set_exception(e)
    futures.insert(0, first)
    if ctx.deadline is not None and time.monotonic() > ctx.deadline and first.exception() is None:
        raise DeadlineExceeded(f"{owner}: deadline passed while branch 0 ({jobs[0][0].lambda_form()}) was running",
                               term=owner)
    done, pending = wait(futures, timeout=ctx.remaining(), return_when=FIRST_EXCEPTION)
    for f in pending:
        f.cancel()
    for i, f in enumerate(futures):
        if f in done and f.exception() is not None:
            err = f.exception()
            term = jobs[i][0]
            if isinstance(err, DeadlineExceeded):
                raise err
            raise BranchError(f"{owner}: branch {i} ({term.lambda_form()}) failed: {err}",
                              term=term.name, path=show_path(jobs[i][2])) from err
    if pending:
        late = ", ".join(f"{i} ({jobs[i][0].lambda_form()})" for i, f in enumerate(futures) if f in pending)
        raise DeadlineExceeded(f"{owner}: deadline passed while branches {late} were running", term=owner)
    return [f.result() for f in futures]


def run(term: Term, query: Union[str, State], ctx: Optional[Context] = None) -> State:
    """Returns the state after running `term` closed over what the initial state provides."""
    if not isinstance(term, Term):
        raise CompositionError(f"run: expected a Term, got {type(term).__name__}")
    ctx = ctx or Context()
    state = State.of(query) if isinstance(query, str) else query
    if not isinstance(state, State):
        raise CompositionError(f"run: expected a query string or a State, got {type(query).__name__}")
    term.close(INITIAL_FIELDS | state.given())
    if ctx.budget is not None:
        bound = term.cost_bound(ctx.cost_model)
        if bound > ctx.budget:
            if ctx.budget_fallback is None:
                raise BudgetExceeded(f"cost bound {bound:.4f} of {term.lambda_form()} exceeds the budget "
                                     f"{ctx.budget:.4f} and no fallback is configured")
            fallback = ctx.budget_fallback
            fallback.close(INITIAL_FIELDS | state.given())
            out = execute(fallback, state, ctx)
            ctx.trace.mark_fallback((fallback.name,), f"budget: cost bound {bound:.4f} > {ctx.budget:.4f}; "
                                                       f"ran {fallback.lambda_form()} instead")
            return out
    return execute(term, state, ctx)
