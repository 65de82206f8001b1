"""`search(query)`: classify, plan, route, run and explain one question — the entry point of every surface."""
from __future__ import annotations

import re
import time
from contextlib import aclosing
from dataclasses import replace
from typing import Any, AsyncIterator, Iterator, Optional, Sequence, Union, get_args

from lambdarag import Message, State, Term, Trace, User
from lambdarag.errors import LambdaRAGError, QueryError
from lambdarag.combinators import gate_of
from lambdarag.stream import Sink, Stream
from lambdarag.skills.profile import packs_of
from lambdarag.skills import build as build_skill
from lambdarag.skills.context import claim_units
from lambdarag.skills.faq import has_faq

from .config import AgentConfig
from .events import Announcer, Event, Finished
from .lifecycle import LATE, Learning, Lifecycle, ran, unified_term
from .result import Asked, RunTrace, SearchResult
from .setup import ConfigArg, Setup, resolve_config, set_up

ROLES = get_args(Message.model_fields["role"].annotation)


LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def clean(text: str) -> str:
    """Returns `text` with lone surrogates (which no encoder accepts) replaced by U+FFFD, before any store sees it."""
    return LONE_SURROGATE.sub("\ufffd", text)


def check_query(query: Any, config: AgentConfig) -> str:
    """Returns the stripped, cleaned query, or raises `QueryError` for empty, non-text or oversized input."""
    if not isinstance(query, str):
        raise QueryError(f"query must be text, got {type(query).__name__}")
    text = clean(query).strip()
    if not text:
        raise QueryError("query is empty; ask a question about the indexed documents")
    limit = config.limits.max_query_chars
    if len(text) > limit:
        raise QueryError(f"query is {len(text)} characters long; the limit is {limit} (limits.maxQueryChars)")
    return text


def check_history(history: Any, text: str, config: AgentConfig) -> tuple[Message, ...]:
    """Returns the earlier turns as cleaned messages, or raises `QueryError` naming the bad turn and field.

    `history` is a list of `Message`s or ``{"role", "content"}`` objects (role
    user, assistant or system); the query and the history together stay within
    limits.maxQueryChars + limits.maxHistoryChars.
    """
    if history is None:
        return ()
    if not isinstance(history, (list, tuple)):
        raise QueryError(f"history must be a list of {{role, content}} messages, got {type(history).__name__}")
    turns = []
    for i, m in enumerate(history):
        m = m.model_dump() if isinstance(m, Message) else m
        if not isinstance(m, dict):
            raise QueryError(f"history[{i}] must be a {{role, content}} object, got {type(m).__name__}")
        role, content = m.get("role"), m.get("content")
        unknown = sorted(map(str, set(m) - {"role", "content"}))
        if unknown:
            raise QueryError(f"history[{i}] has unknown field(s) {', '.join(unknown)}; a turn has role and content")
        if role not in ROLES:
            raise QueryError(f"history[{i}].role must be one of {', '.join(ROLES)}, got {role!r}")
        if not isinstance(content, str):
            raise QueryError(f"history[{i}].content must be text, got {type(content).__name__}")
        turns.append(Message(role=role, content=clean(content)))
    total, limit = len(text) + sum(len(t.content) for t in turns), \
        config.limits.max_query_chars + config.limits.max_history_chars
    if total > limit:
        raise QueryError(f"query and history are {total} characters long; the limit is {limit} "
                         f"(limits.maxQueryChars + limits.maxHistoryChars)")
    return tuple(turns)


def search(query: str, *, index: Optional[str] = None, user: Optional[User] = None,
           history: Optional[Sequence[Union[Message, dict]]] = None, config: ConfigArg = None) -> SearchResult:
    """Returns the answer to `query` with citations, strategy, expression, plan, trace, latency and cost.

    `index` names a built index (default: the configured one, built from the
    demo corpus on first use); `user` carries access labels; `history` holds
    earlier turns (OpenAI-style messages, oldest first); `config` is a path or
    an `AgentConfig` (default: agent-config.yml). `latency_ms.total` runs from
    this call to its return (opening the knowledge base included, as "setup");
    the deadline starts once it is open, so building an index on first use
    cannot make the query fail. It is `search_stream` drained: the same run,
    with its events before the result dropped, and no token streaming (so an
    LLM call is one plain request, timed out exactly).
    """
    for event in drained(query, index, user, history, config):
        if isinstance(event, Finished):
            return event.result
    raise unfinished(query)


async def asearch(query: str, *, index: Optional[str] = None, user: Optional[User] = None,
                  history: Optional[Sequence[Union[Message, dict]]] = None, config: ConfigArg = None) -> SearchResult:
    """Async `search`: the same run, awaited. Cancelling the awaiting task stops the run at its next term boundary
    (an LLM request under way is let finish, as `search` sends it whole). Arguments as for `search`."""
    async with aclosing(drained(query, index, user, history, config).__aiter__()) as events:
        async for event in events:
            if isinstance(event, Finished):
                return event.result
    raise unfinished(query)


def drained(query: str, index: Optional[str], user: Optional[User],
            history: Optional[Sequence[Union[Message, dict]]], config: ConfigArg) -> Stream:
    """Returns the stream `search` and `asearch` drain to its result: no token streaming, nothing held back."""
    return streamed(query, index, user, history, config, checked_only=False, tokens=False)


def unfinished(query: str) -> LambdaRAGError:
    """Returns the error of a search whose stream ended without a result (never: the stream always ends with one)."""
    return LambdaRAGError(f"search of {query!r} ended without a result")


def search_stream(query: str, *, index: Optional[str] = None, user: Optional[User] = None,
                  history: Optional[Sequence[Union[Message, dict]]] = None, config: ConfigArg = None,
                  checked_only: bool = False) -> Iterator[Event]:
    """Yields the events of answering `query` as they happen, ending with the `result` that `search` returns.

    Events: ``classified``, ``plan``, ``hits`` (as soon as retrieval ends),
    ``token`` (the answer as it is written), ``verdict``, ``retract``,
    ``fallback``, then ``result``. With `checked_only` the answer's tokens
    are released claim by claim once the citation check accepts each one
    (README "Streaming"). Closing the generator cancels the run and its LLM
    request. Arguments as for `search`.
    """
    return iter(streamed(query, index, user, history, config, checked_only))


async def asearch_stream(query: str, *, index: Optional[str] = None, user: Optional[User] = None,
                         history: Optional[Sequence[Union[Message, dict]]] = None, config: ConfigArg = None,
                         checked_only: bool = False) -> AsyncIterator[Event]:
    """Async `search_stream`: the same events, awaited; cancelling the consumer cancels the run."""
    async for event in streamed(query, index, user, history, config, checked_only):
        yield event


def streamed(query: str, index: Optional[str], user: Optional[User],
             history: Optional[Sequence[Union[Message, dict]]], config: ConfigArg, checked_only: bool,
             tokens: bool = True) -> Stream:
    """Returns the stream of one search: the run in a worker thread, its events in a sink (`tokens`: whether the
    answer's text streams)."""
    # the gate that releases claims when no Guard encloses the answer term; only `checked_only` reads it
    gate = gate_of(build_skill("citation_check", {})) if checked_only else None
    sink = Sink(checked_only=checked_only, units=claim_units, gate=gate, tokens=tokens)
    return Stream(lambda: run_search(query, index, user, history, config, sink), sink)


def run_search(query: str, index: Optional[str], user: Optional[User],
               history: Optional[Sequence[Union[Message, dict]]], config: ConfigArg, sink: Sink) -> None:
    """Answers `query`, emitting its events to `sink` and the result last.

    The trace's root span covers the whole call, setup (config, providers, opening the knowledge base) included
    as its first child, so the trace total is the wall time; the deadline starts after setup.
    """
    started = time.perf_counter()
    trace = Trace()
    with trace.span(name="search", kind="query", effect="", path=("search",)) as root:
        with trace.span(name="setup", kind="setup", effect="", path=("search", "setup")):
            cfg = resolve_config(config)
            text = check_query(query, cfg)
            turns = check_history(history, text, cfg)
            if user is not None and not isinstance(user, User):
                raise QueryError(f"user must be a lambdarag.User, got {type(user).__name__}")
            setup = set_up(cfg, index, trace, text, user)
            limits = setup.config.limits
            late = LATE if limits.late_answer and not sink.checked_only else {}   # checked-only: nothing unchecked
            setup = replace(setup, ctx=replace(setup.ctx.with_timeout(limits.timeout_seconds), late=late))
        setup_ms = (time.perf_counter() - started) * 1000
        lifecycle = lifecycle_of(setup)
        root.notes["lifecycle"] = lifecycle.fingerprint
        announcer = Announcer(sink, lifecycle.shown, lifecycle.routes, setup.fallbacks)
        out = answer(text, turns, user, setup, lifecycle)
    total = round((time.perf_counter() - started) * 1000, 3)
    result: SearchResult = out.result
    announcer.finish(result.model_copy(update={
        "query_id": getattr(out, "query_id", ""), "trace": RunTrace.model_validate(trace.to_dict()),
        "latency_ms": {"setup": round(setup_ms, 3), **trace.latency_breakdown(), "total": total}}))


def lifecycle_term(index: Optional[str] = None, config: ConfigArg = None, user: Optional[User] = None) -> Term:
    """Returns the lifecycle term `search()` runs on `index` for `user` as it stands now (the learned rules they
    may see included)."""
    return lifecycle_of(set_up(resolve_config(config), index, Trace(), user=user)).term


def lifecycle_ran(result: SearchResult) -> Term:
    """Returns the very lifecycle term object that answered `result` (its trace names it by fingerprint), for
    ``ask --explain`` to print."""
    return ran(result.trace.spans[0].notes["lifecycle"]).term


def lifecycle_of(setup: Setup) -> Lifecycle:
    """Returns the lifecycle a question set up so runs: FAQ step if the index holds FAQs, the loop's learned rules
    that the asking user may see (`set_up` read them for that user), the routes those of the index's domain pack."""
    rules, exemplars = setup.corrections
    return unified_term(setup.config, faq=has_faq(setup.kb.index), rules=rules, exemplars=exemplars,
                        pack=packs_of(setup.kb.resources()["profile"]))


def answer(text: str, turns: tuple[Message, ...], user: Optional[User], setup: Setup, lifecycle: Lifecycle) -> State:
    """Returns the final state of the lifecycle term (`orchestration.lifecycle`) on `text` once providers,
    knowledge and context are set up: its ``result`` is the question's `SearchResult`, built once by the term
    from the state and trace, its query id written by `record_feedback`; `run_search` adds the run's closing
    trace and latency."""
    asked = Asked(text, setup.kb.name, setup.fallbacks, setup.modes, time.perf_counter())
    resources = {**setup.ctx.resources, "asked": asked}
    if setup.loop is not None:
        resources["feedback"] = Learning(setup.loop, lifecycle.fingerprint)
    state = State(query=text, original_query=text, history=turns, user=user or User())
    return lifecycle.term.run(state, replace(setup.ctx, resources=resources))


__all__ = ["search", "asearch", "search_stream", "asearch_stream", "lifecycle_term", "lifecycle_ran", "SearchResult"]
