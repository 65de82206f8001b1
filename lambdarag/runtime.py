"""The one runner: closes a term, checks the budget, executes it with tracing, concurrency and deadlines."""
from __future__ import annotations

import threading
from contextvars import ContextVar
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence, TypeVar

from pydantic import ValidationError

from .cost import DEFAULT_COSTS, CostModel
from .errors import (BranchError, DeadlineExceeded, LambdaRAGError, ProviderTimeout,
                     TermError)
from .state import VALIDATORS, State, undeclared, validator_of
from .paths import Path, show_path
from .observe import BRANCH, OBSERVER, branch_context
from .trace import Trace

if TYPE_CHECKING:
    from .term import Term

T = TypeVar("T")
RESERVE_SHARE = 0.25
"""The share of a deadline no provider call may use: what the fallbacks and the rest of the pipeline need."""
SKIP, FINISH = "skip", "finish"
"""What a run past its deadline does with a term `Context.late` names: skips it (a check of what is written) or
still runs it (the bookkeeping that returns what is written); any other term raises `DeadlineExceeded`."""
LATE_SKIPPED = "deadline passed before this check: skipped, what it checks is returned unchecked"


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
    cost_model: CostModel = DEFAULT_COSTS
    trace: Trace = field(default_factory=Trace)
    reserve: float = 0.0
    down: dict[str, str] = field(default_factory=dict)
    """Providers that timed out in this run, with why: later calls skip them and take their fallbacks."""
    llm_budget: Any = None
    """The query's `lambdarag.budget.LLMBudget` (None: LLM calls are bounded by the deadline alone)."""
    late: Mapping[str, str] = field(default_factory=dict)
    """Term name → `SKIP` or `FINISH`: what a run past its deadline does with it instead of raising (empty: every
    term raises `DeadlineExceeded`, so nothing unchecked is ever returned)."""

    def with_timeout(self, seconds: float, reserve: Optional[float] = None) -> "Context":
        """Returns a copy of this context with a deadline `seconds` from now.

        `reserve` seconds of it are kept from provider calls for the fallbacks
        and the terms after them (default: a quarter of `seconds`).
        """
        return replace(self, deadline=time.monotonic() + seconds,
                       reserve=seconds * RESERVE_SHARE if reserve is None else reserve)

    def skips_late(self, term: Term) -> bool:
        """Returns whether the deadline has passed and `term` is a check this run skips past it."""
        return self.late.get(term.name) == SKIP and self.deadline is not None and time.monotonic() > self.deadline

    def remaining(self) -> Optional[float]:
        """Returns seconds left before the deadline (None when there is none)."""
        return None if self.deadline is None else self.deadline - time.monotonic()

    def call_timeout(self, provider: str, configured: float) -> float:
        """Returns how long one call to `provider` may wait: its timeout, capped at the time left minus the reserve.

        Raises `ProviderTimeout` (a provider failure, so the caller degrades)
        when the provider timed out earlier in this run or no time is left.
        """
        if provider in self.down:
            raise ProviderTimeout(f"{provider} skipped: {self.down[provider]}")
        left = self.remaining()
        if left is None:
            return configured
        wait = min(configured, left - self.reserve)
        if wait <= 0:
            raise ProviderTimeout(f"{provider} skipped: {left:.1f}s left, {self.reserve:.1f}s kept for fallbacks")
        return wait

    def call_provider(self, provider: str, method: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Returns ``method(*args, **kwargs)`` of a provider client, capped by the deadline when it is an HTTP one.

        A client with a ``timeout`` attribute (an HTTP endpoint) is also passed
        ``timeout=`` `call_timeout`, and a timeout marks `provider` down for the
        rest of the run, so later calls skip it and their terms take their
        fallbacks at once; an in-process client is called as it is.
        """
        configured = getattr(getattr(method, "__self__", None), "timeout", None)
        if configured is None:
            return method(*args, **kwargs)
        wait = self.call_timeout(provider, configured)
        try:
            return method(*args, timeout=wait, **kwargs)
        except ProviderTimeout as e:
            self.down.setdefault(provider, f"it timed out: {e}")
            raise

    def resource(self, name: str) -> Any:
        """Returns the named resource, or fails naming the ones that exist."""
        try:
            return self.resources[name]
        except KeyError:
            have = ", ".join(sorted(self.resources)) or "none"
            raise LambdaRAGError(f"resource {name!r} is not in the context; available: {have}") from None


SCHEMA: ContextVar[Mapping[str, Any]] = ContextVar("lambdarag_schema", default={})
"""The schema (field → `Declared`) of the pipeline `run` is running: the types a write declared by name takes."""


def apply_writes(term: Term, state: State, updates: Mapping[str, Any], path: Path) -> State:
    """Returns the next state from a term's writes, rejecting undeclared or ill-typed fields."""
    if type(updates) is not dict and not isinstance(updates, Mapping):  # the common case skips the ABC check
        raise TermError(
            f"term {term.name!r} returned {type(updates).__name__}; it must return a mapping of the fields it "
            f"writes ({', '.join(sorted(term.writes()))})", term=term.name, path=show_path(path))
    allowed = term.writes()
    checks = term.checks()
    clean: dict[str, Any] = {}
    for key, value in updates.items():
        if key not in allowed:
            raise TermError(
                f"term {term.name!r} wrote field {key!r}, which it does not declare; declared writes: "
                f"{', '.join(sorted(allowed)) or 'none'}", term=term.name, path=show_path(path))
        check = checks[key]
        if check is None:  # declared by name here: typed by another term of the pipeline, else by the State
            declared = SCHEMA.get().get(key)
            check = validator_of(declared.type) if declared is not None else VALIDATORS[key]
        if check is None:
            raise TermError(f"term {term.name!r} wrote field {key!r}: {undeclared(key)}", term=term.name,
                            path=show_path(path))
        try:
            clean[key] = check(value)
        except ValidationError as e:
            first = e.errors()[0]
            raise TermError(
                f"term {term.name!r} wrote an invalid value to field {key!r}: {first['msg']} "
                f"at {'.'.join(map(str, first['loc'])) or key}", term=term.name, path=show_path(path)) from None
    return state.updated(clean)


def execute(term: Term, state: State, ctx: Context, path: Path = ()) -> State:
    """Returns the state after one term, recording its span; every execution goes through here.

    `path` is where the term sits (its parent's path plus a position label); the
    term's own name is appended to it. The span's parent is the span current in
    this context (see `lambdarag.trace`). This runs once per term of every run,
    so it looks the sink up once and prints paths only when it raises.
    """
    path = (*path, term.name)
    sink = OBSERVER.get()
    if sink is not None and sink.cancelled.is_set():
        sink.check_cancelled(f"term {term.name!r} (path: {show_path(path)})")
    if ctx.deadline is not None and time.monotonic() > ctx.deadline:
        late = ctx.late.get(term.name)
        if late == SKIP:
            return skipped_late(term, state, ctx, path)
        if late != FINISH:
            raise DeadlineExceeded(f"deadline passed before term {term.name!r} (path: {show_path(path)})",
                                   term=term.name, path=show_path(path))
    span, token = ctx.trace.open(name=term.name, kind=term.kind, effect=term.effect_signature(), path=path)
    watched = sink is not None and term.name in sink.watch and not BRANCH.get()
    try:
        if watched:
            sink.step(term, "start", state)
        out = term._eval(state, ctx, path)
        if watched:
            sink.step(term, "end", out)
        return out
    except LambdaRAGError as e:
        span.error = span.error or str(e)
        if watched:
            sink.step(term, "failed", state)
        raise
    except Exception as e:
        span.error = f"{type(e).__name__}: {e}"
        if watched:
            sink.step(term, "failed", state)
        raise TermError(f"term {term.name!r} failed (path: {span.path}): {type(e).__name__}: {e}",
                        term=term.name, path=span.path, internal=True) from e
    finally:
        ctx.trace.close(span, token)


def skipped_late(term: Term, state: State, ctx: Context, path: Path) -> State:
    """Returns `state` as it is, with a span for the check the deadline skipped and the fallback saying so."""
    span, token = ctx.trace.open(name=term.name, kind=term.kind, effect=term.effect_signature(), path=path)
    try:
        ctx.trace.mark_fallback(path, LATE_SKIPPED)
    finally:
        ctx.trace.close(span, token)
    return state


POOL_THREADS = 64
_POOL = ThreadPoolExecutor(max_workers=POOL_THREADS, thread_name_prefix="lambdarag")
"""One process-wide pool: threads are reused, so engines that keep per-thread state (OpenMP teams in the
embedder, faiss) are not rebuilt for every `Par`. Nothing ever waits for a pool job that has not started
(see `FanOut`), so fan-outs nest to any depth and any number of queries share the pool without deadlock."""


class FanOut:
    """The jobs of one fan-out, claimed one at a time by the calling thread and up to `width - 1` helpers.

    A helper is a pool job that claims jobs until none is left; one that starts
    late finds none and returns. The caller claims jobs too and then waits only
    for jobs a helper has claimed, which are running, never for queued pool
    work: a full pool slows a fan-out down (the caller runs its jobs itself)
    but cannot deadlock it. Each job runs in a copy of the caller's
    `contextvars` context, so its spans get the caller's span as parent; it
    is marked a branch, so an answer term inside it does not stream tokens.
    """

    def __init__(self, jobs: Sequence[tuple[Term, State, Path]], ctx: Context) -> None:
        self.jobs, self.ctx = jobs, ctx
        self.results: list[Any] = [None] * len(jobs)
        self.errors: dict[int, BaseException] = {}
        self.claimed = 0
        self.running: set[int] = set()
        self.overran: set[int] = set()
        self.cond = threading.Condition()
        self.vars = branch_context()

    def _claim(self) -> Optional[int]:
        with self.cond:
            if self.errors or self.overran or self.claimed >= len(self.jobs):
                return None
            self.claimed += 1
            self.running.add(self.claimed - 1)
            return self.claimed - 1

    def work(self) -> None:
        """Runs unclaimed jobs until none is left or one has failed."""
        while (i := self._claim()) is not None:
            term, state, path = self.jobs[i]
            try:
                self.results[i] = self.vars.copy().run(execute, term, state, self.ctx, path)
            except Exception as e:  # reported by the caller, naming the branch
                with self.cond:
                    self.errors[i] = e
            finally:
                with self.cond:
                    self.running.discard(i)
                    if self.ctx.deadline is not None and time.monotonic() > self.ctx.deadline:
                        self.overran.add(i)
                    self.cond.notify_all()

    def wait(self) -> bool:
        """Returns whether every claimed job ended (or one failed) before the deadline."""
        with self.cond:
            return self.cond.wait_for(lambda: self.errors or not self.running, timeout=self.ctx.remaining())


def concurrently(
    jobs: Sequence[tuple[Term, State, Path]], ctx: Context, *, owner: str, width: Optional[int] = None
) -> list[State]:
    """Returns the states of jobs run in parallel threads, in job order, at most `width` at a time.

    The calling thread runs jobs itself (the first one always: one thread
    hand-off fewer per Par), helpers from the pool run the rest (`FanOut`).
    A deadline that passes while the caller runs a job is reported when it
    returns (no thread can be interrupted); jobs running elsewhere are waited
    for no longer than the deadline. The first failing branch is reported by
    its index and term.
    """
    fan = FanOut(jobs, ctx)
    for _ in range(min(width or len(jobs), len(jobs)) - 1):
        _POOL.submit(fan.work)
    fan.work()
    if not fan.wait() or (fan.overran and not fan.errors):
        late = sorted(fan.running | fan.overran)
        which = ", ".join(f"{i} ({jobs[i][0].lambda_form()})" for i in late)
        raise DeadlineExceeded(f"{owner}: deadline passed while branch{'es' if len(late) > 1 else ''} {which} "
                               f"{'were' if len(late) > 1 else 'was'} running", term=owner)
    if fan.errors:
        i = min(fan.errors)
        err, term = fan.errors[i], jobs[i][0]
        if isinstance(err, DeadlineExceeded):
            raise err
        raise BranchError(f"{owner}: branch {i} ({term.lambda_form()}) failed: {err}",
                          term=term.name, path=show_path(jobs[i][2]),
                          internal=not isinstance(err, LambdaRAGError) or getattr(err, "internal", False)) from err
    return fan.results
