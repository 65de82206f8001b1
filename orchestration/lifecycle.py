"""The query lifecycle as one term: rewrite, cache, intent, classify, learned route, plan, FAQ, route, result and
feedback.

``str(unified_term(...).term)`` prints every step `search()` runs::

    If(has_history, rewrite_plan >> query_expand >> standalone_rewrite, identity, on=has_history)
    >> If(query_cache, identity,
          If(detect_intent, retrieval_plan >> direct_reply,
             classify >> learned_route >> retrieval_plan >> If(faq_direct_answer, identity, Route(identity, {…})),
             on=direct), on=cache_hit)
    >> search_result >> record_feedback

A follow-up is rewritten as a standalone question first (`query_expand`'s
``rewrite`` variant), a cache hit skips the rest, a direct-reply intent
(greeting, out of scope, human service) retrieves nothing, a stored FAQ answer
skips the route. The `Route` records which route it took in the trace (its
``route`` note); `search_result` builds the question's one `SearchResult` from
the final state and the trace (`orchestration.result`), and `record_feedback`
writes it through the run's ``feedback`` resource (`Learning`). Without that
resource the cache misses and nothing is learned; without the ``asked``
resource (`result.Asked`) no result is built. So one term serves every
question of a config.
"""
from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence, TypedDict

from lambdarag import Context, Identity, If, Message, Named, Route, State, Term, User, Verdict, tool
from lambdarag.errors import LambdaRAGError
from lambdarag.runtime import FINISH, SKIP
from lambdarag.term import frozen
from lambdarag.skills import build as build_skill
from lambdarag.skills.classify import Classification
from lambdarag.skills.planner import QueryPlan
from lambdarag.skills.profile import in_domain as question_in_domain, profile_of
from lambdarag.skills.store.records import Citation, Hit, RankedList, Relation, RetrievalPlan, Variant, WikiPage

from .config import QUERY_TYPES, AgentConfig
from .llm_budget import fit_context
from .plan import DIRECT_INTENTS, build_retrieval_plan, detect_intent
from .result import Asked, SearchResult, final_check_failure, llm_failures, search_result, skipped_late
from .router import Pack, RouteChoice, candidates, choose, route_table

REWRITE_PLAN = RetrievalPlan(expand_query=False, expansion_count=4)
LATE = {"citation_check": SKIP, "claim_check": SKIP, "search_result": FINISH, "record_feedback": FINISH}
"""What a question past its deadline does with the steps after its answer is written (`limits.lateAnswer`): the
checks are skipped, so the answer comes back unchecked and degraded rather than not at all, and the result is still
built and recorded (never cached); a deadline passed before the answer still raises `DeadlineExceeded`."""
"""The plan `query_expand` runs under to rewrite a follow-up: its rewrite variant only, no other wordings."""


def in_domain(ctx: Context) -> Callable[[str], bool]:
    """Returns the corpus profile's test of whether a question is about the indexed documents."""
    profile, index = profile_of(ctx), ctx.resources.get("index")
    return lambda query: question_in_domain(profile, query, index)


class HasHistory(TypedDict):
    has_history: bool


@tool(cost=0.0)
def has_history(history: tuple[Message, ...]) -> HasHistory:
    """Writes whether the question follows earlier turns (only a follow-up is rewritten)."""
    return {"has_history": bool(history)}


class FrozenPlan(TypedDict):
    plan: RetrievalPlan


@tool(cost=0.0)
def rewrite_plan() -> FrozenPlan:
    """Writes the plan under which `query_expand` rewrites a follow-up (`REWRITE_PLAN`); `retrieval_plan` replaces
    it once the question is classified."""
    return {"plan": REWRITE_PLAN}


class Rewritten(TypedDict):
    query: str
    original_query: str
    variants: tuple[Variant, ...]
    query_plan: Optional[QueryPlan]


@tool(effect="io", cost=0.0)
def standalone_rewrite(query: str, original_query: str, history: tuple[Message, ...], ctx: Context,
                       variants: tuple[Variant, ...] = (), query_plan: Optional[QueryPlan] = None) -> Rewritten:
    """Writes the `rewrite` variant `query_expand` made of a follow-up as the query (rerank and the answer read
    `original_query`, so it holds the rewrite too), and drops the variants: the route plans its own.

    A follow-up left as typed is searched as typed, and this step's fallback in the trace says so.
    """
    text = next((v.text for v in variants if v.kind == "rewrite"), None)
    if text is None and detect_intent(query, history, in_domain(ctx)) == "follow_up":
        why = f" ({query_plan.reason})" if query_plan is not None and query_plan.reason else ""
        ctx.trace.mark_current(f"follow-up {query!r} could not be rewritten from the history{why}; "
                               f"searched the original query")
    text = text or query
    return {"query": text, "original_query": text if text != query else original_query, "variants": (),
            "query_plan": None}


def follow_up_rewrite() -> Term:
    """Returns the lifecycle's first step: a follow-up rewritten as a standalone question by `query_expand` (the
    LLM's rewrite with one configured, else the rule-based completion), a first question left as it is."""
    return If(has_history, rewrite_plan >> build_skill("query_expand", {}) >> standalone_rewrite, Identity,
              on="has_history")


class Intent(TypedDict):
    intent: str
    direct: bool


@tool(effect="io", cost=0.0, name="detect_intent")
def intent(query: str, history: tuple[Message, ...], ctx: Context) -> Intent:
    """Writes the question's intent, and whether it is one answered without retrieval (decided by rules; the
    corpus profile says whether an off-topic cue is about the documents)."""
    found = detect_intent(query, history, in_domain(ctx))
    return {"intent": found, "direct": found in DIRECT_INTENTS}



def plan_term(config: AgentConfig) -> Term:
    """Returns the term that freezes this query's retrieval plan from its type and intent."""
    @tool(name="retrieval_plan")
    def plan(query: str, history: tuple[Message, ...], intent: str, ctx: Context,
             query_type: Optional[str] = None) -> FrozenPlan:
        return {"plan": fit_context(build_retrieval_plan(query, intent, config.orchestration.plan, query_type=query_type,
                                                         history=history, cues=profile_of(ctx).classifier),
                                    config.llm)}
    return plan


class Replied(TypedDict):
    answer: str
    answer_path: str
    answer_reason: str
    verdict: Verdict


@tool(name="direct_reply")
def direct_reply(plan: RetrievalPlan, query: str, ctx: Context) -> Replied:
    """Answers a greeting, an out-of-scope question or a request for a person with the plan's reply (the configured
    one, else the corpus profile's in the question's language); retrieves nothing."""
    answer = plan.direct_reply or profile_of(ctx).wording.direct_replies(query).get(plan.intent, "")
    return {"answer": answer, "answer_path": "direct_reply", "answer_reason": plan.reason,
            "verdict": Verdict(passed=True, details=("direct reply: nothing retrieved or generated to check",))}



def faq_first(term: Term) -> Term:
    """Returns ``If(faq_direct_answer, Identity, term)``: a stored FAQ answer when one fits, else `term`."""
    return If(build_skill("faq_direct_answer", {}), Identity, term, on="faq_hit")


def pick_label(query_type: str, option: tuple[str, ...]) -> str:
    return f"{query_type}/{'+'.join(option)}"


def routes_of(config: AgentConfig, pack: Pack = "") -> dict[str, RouteChoice]:
    """Returns every route the lifecycle may take, by the label `learned_route` writes: each query type and
    ``default`` (their configured strategies), and with adaptive routing ``type/strategies`` for each other
    candidate the routing statistics may pick (`router.candidates`); for an index of domain `pack`."""
    table = dict(route_table(config, pack=pack))
    if config.orchestration.routing.adaptive:
        for query_type in QUERY_TYPES:
            for option in candidates(config, query_type)[1:]:
                table[pick_label(query_type, option)] = choose(config, query_type, option, "adaptive", pack)
    return table


@dataclass(frozen=True)
class Learning:
    """The ``feedback`` resource of a run: the knowledge base's feedback loop, which the cache, the learned route
    picks and `record_feedback` reach, and the fingerprint of the lifecycle answering (`Lifecycle.fingerprint`),
    which cache keys carry. A run without it learns nothing and caches nothing."""

    loop: Any
    pipeline: str = ""


def learning(ctx: Context) -> Optional[Learning]:
    return ctx.resources.get("feedback")


class Labelled(TypedDict):
    route: str
    route_reason: str


def learned_route_term(config: AgentConfig, table: Mapping[str, RouteChoice]) -> Term:
    """Returns the step that labels the route: the query type's, or the one the routing statistics pick for it."""
    @tool(cost=0.0)
    def learned_route(query: str, ctx: Context, query_type: Optional[str] = None) -> Labelled:
        query_type = query_type if query_type in table else "default"
        learn = learning(ctx)
        picks = learn.loop.routing.picks(config, query) if learn is not None else {}
        if query_type not in picks:
            return {"route": query_type, "route_reason": table[query_type].reason}
        option, reason = picks[query_type]
        chosen = query_type if option == candidates(config, query_type)[0] else pick_label(query_type, option)
        return {"route": chosen, "route_reason": reason}
    return learned_route


def strategy_route(table: Mapping[str, RouteChoice]) -> Route:
    """Returns the Route over every route of `table`, each under its strategy's name, on the `route` label."""
    routes = {k: Named(c.strategy, c.term) for k, c in table.items() if k != "default"}
    return Route(Identity, routes, default=Named(table["default"].strategy, table["default"].term), label="route")


class Looked(TypedDict):
    cache_hit: bool
    cached_result: dict


@tool(effect="io", cost=0.0)
def query_cache(query: str, user: User, ctx: Context) -> Looked:
    """Writes the answer cached for this query and the user's permission scope, if any."""
    learn = learning(ctx)
    hit = learn.loop.cache.get(query, user, learn.loop.version(learn.pipeline)) if learn is not None else None
    return {"cache_hit": False} if hit is None else {"cache_hit": True, "cached_result": hit}



class Built(TypedDict):
    result: SearchResult


def result_term(routes: Mapping[str, RouteChoice], shown: Mapping[str, Term]) -> Term:
    """Returns the step that builds the question's one `SearchResult` from the state it is given (the last the
    answer changes) and the trace so far (`result.search_result`): once per question, under the run's ``asked``
    resource (`result.Asked`; without it no result is built)."""
    @tool(cost=0.0, name="search_result")
    def build(ctx: Context, original_query: str = "", answer: str = "", citations: tuple[Citation, ...] = (),
                           hits: tuple[Hit, ...] = (), relations: tuple[Relation, ...] = (),
                           query_type: Optional[str] = None, plan: Optional[RetrievalPlan] = None,
                           verdict: Optional[Verdict] = None, classification: Optional[Classification] = None,
                           route: Optional[str] = None, answer_path: str = "route", answer_reason: str = "",
                           cache_hit: bool = False, cached_result: Optional[dict] = None) -> Built:
        asked: Optional[Asked] = ctx.resources.get("asked")
        if asked is None:
            return {}
        return {"result": search_result(
            ctx, asked=asked, routes=routes, shown=shown, direct=direct_reply, original_query=original_query,
            answer=answer, citations=citations, hits=hits, relations=relations, query_type=query_type, plan=plan,
            verdict=verdict, classification=classification, route=route, answer_path=answer_path,
            answer_reason=answer_reason, cached_result=cached_result if cache_hit else None)}
    return build


class Recorded(TypedDict):
    query_id: str


@tool(effect="io", cost=0.0)
def record_feedback(query: str, original_query: str, history: tuple[Message, ...], user: User, plan: RetrievalPlan,
                    ctx: Context, result: Optional[SearchResult] = None, query_type: Optional[str] = None,
                    classification: Optional[Classification] = None, variants: tuple[Variant, ...] = (),
                    candidates: tuple[RankedList, ...] = (), hits: tuple[Hit, ...] = (),
                    relations: tuple[Relation, ...] = (), wiki_pages: tuple[WikiPage, ...] = (),
                    missing: tuple[str, ...] = (), context: str = "", answer: str = "",
                    citations: tuple[Citation, ...] = (), verdict: Optional[Verdict] = None,
                    route_reason: Optional[str] = None) -> Recorded:
    """Records the run's result in the ``feedback`` resource's loop and writes its query id; a cached answer is
    logged without its state (it teaches nothing again). The loop is given a state of the fields read here (it
    keeps states and runs checks on them), set as the terms of this run wrote them."""
    learn = learning(ctx)
    if learn is None or result is None:
        return {}
    state = None if result.from_cache else State(
        query=query, original_query=original_query, history=history, user=user, plan=plan, query_type=query_type,
        variants=variants, candidates=candidates, hits=hits, relations=relations, wiki_pages=wiki_pages,
        missing=missing, context=context, answer=answer, citations=citations, verdict=verdict,
    ).updated({"classification": classification} if classification is not None else {})
    dumped = result.model_dump()
    final = not (llm_failures(ctx) or final_check_failure(verdict, ctx.trace) or skipped_late(ctx.trace))
    learned = learn.loop.record({**dumped, "trace": {} if state is None else dumped["trace"],
                                 "route_reason": route_reason}, state, None if state is None else ctx.llm,
                                user, final=final, embedder=ctx.embedder, pipeline=learn.pipeline)
    return {"query_id": learned["query_id"]}


def classifier(config: AgentConfig, rules: Sequence[dict], exemplars: Sequence[dict]) -> Term:
    """Returns the configured classifier, learned `rules` first and corrected `exemplars` added."""
    c = config.orchestration.classifier
    name = ("classify" if c.llm_fallback else "classify_offline") if c.fast_classify else "classify_llm"
    return build_skill(name, {"default": c.default, "rules": list(rules), "exemplars": list(exemplars)})


@dataclass(frozen=True)
class Lifecycle:
    """The lifecycle term, the routes its `Route` chooses among (by label), each as the result shows it (behind
    the FAQ step with `faq`), and the fingerprint of what answers."""

    term: Term
    routes: Mapping[str, RouteChoice]
    shown: Mapping[str, Term]
    """Each route's term as it runs (behind the FAQ step with `faq`), by label."""
    faq: bool
    fingerprint: str = ""
    """A digest of what answers: the printed lifecycle term (every route's term, the classifier's learned rules)
    and the config it was built from (providers, models, parameters), so the query cache misses after a change."""


def fingerprint(term: Term, config: AgentConfig) -> str:
    """Returns the digest of a lifecycle term and its config (secrets are named by the config, never held)."""
    printed = json.dumps([str(term), config.model_dump(mode="json")], sort_keys=True, ensure_ascii=False,
                         default=str)
    return hashlib.sha256(printed.encode("utf-8")).hexdigest()[:16]


_LIFECYCLES: "OrderedDict[tuple, tuple[AgentConfig, Lifecycle]]" = OrderedDict()
_LIFECYCLES_LOCK = threading.Lock()


def unified_term(config: AgentConfig, *, faq: bool = False, rules: Sequence[dict] = (),
                 exemplars: Sequence[dict] = (), pack: Pack = "") -> Lifecycle:
    """Returns the lifecycle term (module docstring): the route behind the FAQ step with `faq`, learned classifier
    `rules` and corrected `exemplars` in the classifier, the routes those of the index's domain `pack`.

    Terms are immutable, so a lifecycle is kept per config object, FAQ flag and learned rules (a few, LRU): a
    greeting answers in well under a millisecond, less than building one would take.
    """
    key = (id(config), faq, frozen(list(rules)), frozen(list(exemplars)), pack)
    with _LIFECYCLES_LOCK:
        cached = _LIFECYCLES.get(key)
        if cached is not None and cached[0] is config:
            _LIFECYCLES.move_to_end(key)
            return cached[1]
    table = routes_of(config, pack)
    shown = {label: faq_first(c.term) if faq else c.term for label, c in table.items()}
    route = strategy_route(table)
    answered = classifier(config, rules, exemplars) >> learned_route_term(config, table) >> plan_term(config) \
        >> (faq_first(route) if faq else route)
    body = If(intent, plan_term(config) >> direct_reply, answered, on="direct")
    term = follow_up_rewrite() >> If(query_cache, Identity, body, on="cache_hit") >> result_term(table, shown) \
        >> record_feedback
    lifecycle = Lifecycle(term, table, shown, faq, fingerprint(term, config))
    with _LIFECYCLES_LOCK:
        _LIFECYCLES[key] = (config, lifecycle)  # holding the config keeps its id from being reused
        while len(_LIFECYCLES) > 32:
            _LIFECYCLES.popitem(last=False)
    return lifecycle


def ran(fingerprint: str) -> Lifecycle:
    """Returns the lifecycle kept under `fingerprint`: the very one a search ran, as its trace's root span names it
    (``lifecycle`` note)."""
    with _LIFECYCLES_LOCK:
        found = next((kept for _, kept in reversed(_LIFECYCLES.values()) if kept.fingerprint == fingerprint), None)
    if found is None:
        raise LambdaRAGError(f"lifecycle {fingerprint!r} is no longer kept in this process (a few are, LRU)")
    return found
