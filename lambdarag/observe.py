"""Observing a run: the observer current in this context (a stream's `Sink`) hears what the runner and the terms
report — watched steps, a `Guard`'s checked attempts, fallbacks — and decides what, if anything, to stream.

A leaf module: the runtime, the trace and the combinators report here without knowing what a stream event is,
and `lambdarag.stream`, above them, turns reports into events.
"""
from __future__ import annotations

import contextvars
from contextvars import ContextVar
from typing import Any, Optional

OBSERVER: ContextVar[Optional[Any]] = ContextVar("lambdarag_observer", default=None)
"""The observer of the runs in this context, or None. It has ``watch`` (the names of the terms whose start and
end it hears), ``cancelled`` (a `threading.Event`), ``check_cancelled(where)``, ``step(term, phase, state)`` (phase ``start``, ``end`` or
``failed``),
``checked(guard, passed, details, final)`` and ``fell_back(term, path, reason)``."""
BRANCH: ContextVar[bool] = ContextVar("lambdarag_branch", default=False)
"""True inside a Par/Map branch: the observer hears fallbacks from there, but no steps and no checked attempts."""


def observer() -> Optional[Any]:
    """Returns the observer when this code runs on an observed main path (not in a Par/Map branch), else None."""
    watcher = OBSERVER.get()
    return None if watcher is None or BRANCH.get() else watcher


def branch_context() -> contextvars.Context:
    """Returns a copy of the current contextvars for a Par/Map branch: the same observer, marked a branch."""
    ctx = contextvars.copy_context()
    ctx.run(BRANCH.set, True)
    return ctx
