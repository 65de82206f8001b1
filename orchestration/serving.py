"""A served app's readiness and load limit: warm before answering, and 503 with Retry-After instead of a timeout.

`lambdarag serve` listens at once and warms up in the background (`warm`): it
opens the knowledge base (index, graph, wiki), loads the tokenizer and the
embedding model, opens the feedback store and the learned index, and answers
`WARM_QUERIES` once with feedback off, which builds everything else a query
builds lazily (classifier vectors, reranker, profile). Until then `Gate` answers
``GET /ready`` with 503 and every API request but ``/api/info`` with 503 and
``Retry-After``, so no request pays for a cold start inside its deadline; then
``/ready`` is 200; from then on it replays, every ``server.followSeconds``, what other servers sharing its feedback
store wrote back or reverted (`follow`), so an idle server's graph and wiki keep up too (a question catches up
first anyway: `setup.set_up`). Past ``server.maxInFlight`` requests in flight, an API request
is answered 503 with ``Retry-After`` at once rather than queued until it times out;
past ``server.maxPerSource`` requests in flight from one client address, that
address is answered 429 with ``Retry-After``, so one caller sending expensive
questions cannot take every slot and starve the others.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any, Optional

from starlette.types import ASGIApp, Receive, Scope, Send

WARM_QUERIES = ("预热", "甲与乙有何异同？", "甲和乙是什么关系？")
"""Asked once before serving, of several shapes so several routes run; the answers are thrown away (only what
answering builds is kept)."""
UNGATED = ("/api/info",)
"""API routes answered while warming up: the page's form reads them and they touch no index."""


class Gate:
    """An ASGI wrapper answering ``/ready`` and holding API requests back while warming or overloaded."""

    def __init__(self, app: ASGIApp, max_in_flight: int, retry_after: int, max_per_source: Optional[int] = None
                 ) -> None:
        self.app, self.max_in_flight, self.retry_after = app, max_in_flight, retry_after
        self.max_per_source = max_per_source or max_in_flight
        self.warm = threading.Event()
        self.failure: Optional[str] = None
        self.in_flight = 0
        self.by_source: dict[str, int] = {}

    def ready(self, failure: Optional[str] = None) -> None:
        """Marks warm-up done (`failure`: why it failed; the server then stays unready and says why)."""
        self.failure = failure
        if failure is None:
            self.warm.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path == "/ready":
            if self.warm.is_set():
                return await answer(send, 200, {"status": "ready", "pid": os.getpid()})
            return await answer(send, 503, {"status": "failed" if self.failure else "warming",
                                            "error": self.failure}, self.retry_after)
        if not path.startswith("/api/") or path in UNGATED:
            return await self.app(scope, receive, send)
        if not self.warm.is_set():
            why = f"warm-up failed: {self.failure}" if self.failure else "warming up: models and indexes are loading"
            return await answer(send, 503, {"error": f"the server is {why}; retry later"}, self.retry_after)
        if self.in_flight >= self.max_in_flight:
            return await answer(send, 503, {"error": f"the server is answering {self.max_in_flight} requests, its "
                                                     f"limit (server.maxInFlight); retry later"}, self.retry_after)
        source = (scope.get("client") or ("-",))[0]
        if self.by_source.get(source, 0) >= self.max_per_source:
            return await answer(send, 429, {"error": f"this client has {self.max_per_source} requests in flight, "
                                                     f"its limit (server.maxPerSource); retry later"},
                                self.retry_after)
        self.in_flight += 1            # one event loop: no other coroutine runs between the check and this
        self.by_source[source] = self.by_source.get(source, 0) + 1
        held = True

        def release() -> None:
            nonlocal held
            if held:
                held = False
                self.in_flight -= 1
                self.by_source[source] -= 1
                if not self.by_source[source]:
                    del self.by_source[source]

        async def sending(message: Any) -> None:
            # a client may ask again the moment it holds its answer: free its slot before the last byte goes out, or
            # a client that never has more than the limit in flight is refused for its own previous request
            if message.get("type") == "http.response.body" and not message.get("more_body", False):
                release()
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            release()


async def answer(send: Send, status: int, body: dict[str, Any], retry_after: Optional[int] = None) -> None:
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
               (b"cache-control", b"no-store")]
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def warm(config: Any, index: Optional[str]) -> None:
    """Builds what answering a question on `index` needs, once, before the server accepts questions."""
    from lambdarag.orchestration.feedback import open_feedback
    from lambdarag.orchestration.knowledge import open_knowledge, warm_up
    from lambdarag.orchestration.learning import open_learned
    from lambdarag.orchestration.search_unified import search
    from lambdarag.orchestration.setup import providers

    embedder = providers(config)["embedder"]
    kb = open_knowledge(config, index, embedder=embedder, progress=True)
    warm_up(kb.index, embedder)
    loop = open_feedback(config, kb)
    if loop is not None:
        open_learned(loop.dir, kb.index, embedder, config.orchestration.feedback.query_adapter,
                     config.orchestration.feedback.agreement_boost)
        loop.lexicon.synonyms()
    quiet = config.model_copy(update={"orchestration": config.orchestration.model_copy(update={
        "feedback": config.orchestration.feedback.model_copy(update={"enabled": False})})})
    for query in WARM_QUERIES:
        search(query, index=kb.name, config=quiet)


def warm_in_background(gate: Gate, config: Any, index: Optional[str]) -> threading.Thread:
    """Returns the started thread that warms up and then opens `gate` (or reports why warming failed)."""
    def run() -> None:
        try:
            warm(config, index)
        except Exception as e:  # the server stays up and unready, and says why on /ready and on stderr
            print(f"warm-up failed: {type(e).__name__}: {e}", file=sys.stderr)
            gate.ready(f"{type(e).__name__}: {e}")
            return
        print("ready: models, indexes and the learned state are loaded", file=sys.stderr)
        gate.ready()
        follow(config, index, config.server.follow_seconds)

    thread = threading.Thread(target=run, name="lambdarag-warm-up", daemon=True)
    thread.start()
    return thread


def follow(config: Any, index: Optional[str], every: float) -> None:
    """Replays, every `every` seconds until the process ends, what the servers sharing the feedback store of `index`
    wrote back or reverted (opening the feedback loop replays it); a failure is reported once, and retried."""
    from lambdarag.orchestration.feedback import open_feedback
    from lambdarag.orchestration.knowledge import open_knowledge

    failed = False
    while True:
        time.sleep(every)
        try:
            open_feedback(config, open_knowledge(config, index))
            failed = False
        except Exception as e:  # the store may be away for a while; questions report their own failures
            if not failed:
                print(f"replaying the feedback store failed: {type(e).__name__}: {e}", file=sys.stderr)
            failed = True
