"""The feedback worker: LLM work on an answered query, run after its result is returned.

A support check of the answer and the write-back's fact extraction can take
as long as the query itself with a slow model; a query never waits for them or
fails because of them. Each job gets its own context (LLM, resources, time
limit) and trace, and leaves one record in the feedback store's ``background`` log:
what it returned or why it failed, with its trace.
"""
from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Mapping, Optional

from lambdarag import Context

from .store import Log, now

_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lambdarag-feedback")
"""One worker: jobs write the graph and wiki, so they run one at a time, in the order queries finished."""
_PENDING: set[Future] = set()
_LOCK = threading.Lock()


def submit(job: Callable[[Context], Any], *, name: str, query_id: str, llm: Any, resources: Mapping[str, Any],
           seconds: float, log: Log) -> Future:
    """Returns the future of `job(ctx)` run in the background under a fresh context limited to `seconds`."""
    def run() -> None:
        ctx = Context(llm=llm, resources=dict(resources)).with_timeout(seconds)
        record: dict[str, Any] = {"query_id": query_id, "job": name, "queued": queued, "started": now()}
        try:
            with ctx.trace.span(name=name, kind="feedback", effect="llm", path=(name,)):
                record["result"] = job(ctx)
        except Exception as e:  # a background failure is logged; it never reaches the finished query
            record["error"] = f"{type(e).__name__}: {e}"
        record["trace"] = ctx.trace.to_dict()
        log.append(record)

    queued = now()
    future = _POOL.submit(run)
    with _LOCK:
        _PENDING.add(future)
    future.add_done_callback(lambda f: _forget(f))
    return future


def _forget(future: Future) -> None:
    with _LOCK:
        _PENDING.discard(future)


def drain(timeout: Optional[float] = None) -> bool:
    """Returns whether every queued job finished within `timeout` seconds (waits for them; None: no limit)."""
    with _LOCK:
        pending = set(_PENDING)
    return not wait(pending, timeout=timeout).not_done
