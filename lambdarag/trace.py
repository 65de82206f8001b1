"""The trace: one span per term execution, safe to write from concurrent branches.

The span being run is carried in a `contextvars` variable, so a span opened
anywhere below it (in a pool thread too, when the fan-out copies the context)
gets it as its parent: every span but the root has one.
"""
from __future__ import annotations

import itertools
import json
import time
from contextlib import contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from .observe import OBSERVER
from .paths import Path, show_path

ATOMS = ("tool", "lam")
CURRENT_SPAN: ContextVar[Optional[tuple["Trace", "Span"]]] = ContextVar("lambdarag_span", default=None)
"""The trace and the span being run in this thread or task."""


@dataclass(slots=True)
class Span:
    """One term execution: what ran, where in the pipeline, how long, what it cost, what went wrong."""

    id: int
    parent: Optional[int]
    name: str
    kind: str
    effect: str
    at: Path
    """Where the term sits: names and position labels from the root; `path` prints it (only when read)."""
    start_ms: float
    duration_ms: float = 0.0
    cost: float = 0.0
    tokens: int = 0
    fallback: Optional[str] = None
    error: Optional[str] = None
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> str:
        """Returns where the term sits as errors and the serialised trace print it: ``compose › Compose[0] › t``."""
        return show_path(self.at)

    def to_dict(self) -> dict[str, Any]:
        """Returns the span as JSON-able fields, with `path` printed in place of `at` (built field by field:
        `dataclasses.asdict` deep-copies, and cost more than the greeting it traces; notes hold only text and
        numbers)."""
        return {"id": self.id, "parent": self.parent, "name": self.name, "kind": self.kind, "effect": self.effect,
                "start_ms": self.start_ms, "duration_ms": self.duration_ms, "cost": self.cost, "tokens": self.tokens,
                "fallback": self.fallback, "error": self.error, "notes": dict(self.notes),
                "path": show_path(self.at)}


class Trace:
    """Returns spans recorded while running a term; JSON-serialisable via `to_dict`."""

    def __init__(self) -> None:
        self._spans: list[Span] = []
        self._by_path: dict[Path, Span] = {}
        self._ids = itertools.count()  # next() and list.append are atomic: concurrent branches need no lock
        self._t0 = time.perf_counter()
        self.started_ns = time.time_ns()
        """Wall-clock time of `start_ms` 0, for exporters that need absolute timestamps."""
        self._running: set[int] = set()

    @property
    def spans(self) -> list[Span]:
        return list(self._spans)

    def open(self, *, name: str, kind: str, effect: str, path: Path) -> tuple[Span, Token]:
        """Returns a span started now, child of the current span, made current; pass both to `close`.

        `path` is the tuple of names and position labels down to the term (its
        own name last), as the runtime passes it to terms.
        """
        current = CURRENT_SPAN.get()
        parent = current[1].id if current is not None and current[0] is self else None
        span = Span(next(self._ids), parent, name, kind, effect, path, (time.perf_counter() - self._t0) * 1000)
        self._spans.append(span)
        self._by_path[path] = span
        self._running.add(span.id)
        return span, CURRENT_SPAN.set((self, span))

    def close(self, span: Span, token: Token) -> None:
        """Ends `span` and makes its parent current again."""
        CURRENT_SPAN.reset(token)
        span.duration_ms = (time.perf_counter() - self._t0) * 1000 - span.start_ms
        self._running.discard(span.id)

    def _elapsed(self, span: Span) -> float:
        """Returns a span's duration; for one still running, its duration so far."""
        return (time.perf_counter() - self._t0) * 1000 - span.start_ms if span.id in self._running else span.duration_ms

    @contextmanager
    def span(self, *, name: str, kind: str, effect: str, path: Path) -> Iterator[Span]:
        """Returns a span that is current for the body of the ``with`` (`open` and `close` around it)."""
        span, token = self.open(name=name, kind=kind, effect=effect, path=path)
        try:
            yield span
        finally:
            self.close(span, token)

    def note(self, path: Path, **notes: Any) -> None:
        """Attaches notes (branch taken, verdict, truncation, …) to the span at `path`."""
        span = self._by_path.get(path)
        if span is not None:
            span.notes.update(notes)

    def add_cost(self, path: Path, cost: float, tokens: int = 0) -> None:
        if not cost and not tokens:
            return
        span = self._by_path.get(path)
        if span is not None:
            span.cost += cost
            span.tokens += tokens

    def mark_current(self, reason: str) -> None:
        """Records on the span being run that it degraded and why (for a term's own fallback path)."""
        current = CURRENT_SPAN.get()
        if current is not None and current[0] is self:
            self._record_fallback(current[1], reason)

    def mark_fallback(self, path: Path, reason: str) -> None:
        span = self._by_path.get(path)
        if span is not None:
            self._record_fallback(span, reason)

    @staticmethod
    def _record_fallback(span: Span, reason: str) -> None:
        """Records the fallback on its span and tells the run's observer, if one listens."""
        span.fallback = reason
        watcher = OBSERVER.get()
        if watcher is not None:
            watcher.fell_back(span.name, span.path, reason)

    def latency_breakdown(self) -> dict[str, float]:
        """Returns milliseconds per step (tools and LLM terms), summed by name, in order of first run."""
        out: dict[str, float] = {}
        for s in self._spans:
            if s.kind in ATOMS:
                out[s.name] = round(out.get(s.name, 0.0) + s.duration_ms, 3)
        return out

    def total_ms(self) -> float:
        """Returns the wall time of the root (first) span; 0 before any span ran."""
        return round(self._elapsed(self._spans[0]), 3) if self._spans else 0.0

    def total_cost(self) -> float:
        return round(sum(s.cost for s in self._spans), 6)

    def total_tokens(self) -> int:
        return sum(s.tokens for s in self._spans)

    def fallbacks(self) -> list[dict[str, str]]:
        """Returns every fallback taken, as ``{"term", "reason"}`` records."""
        return [{"term": s.name, "path": s.path, "reason": s.fallback} for s in self._spans if s.fallback]

    def errors(self) -> list[dict[str, str]]:
        return [{"term": s.name, "path": s.path, "error": s.error} for s in self._spans if s.error]

    def to_dict(self) -> dict[str, Any]:
        return {
            "spans": [{**s.to_dict(), "duration_ms": self._elapsed(s)} for s in self._spans],
            "latency_ms": self.latency_breakdown(),
            "total_ms": self.total_ms(),
            "cost": self.total_cost(),
            "tokens": self.total_tokens(),
            "fallbacks": self.fallbacks(),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, default=str)
