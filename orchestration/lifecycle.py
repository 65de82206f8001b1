"""The query lifecycle as one term: rewrite, cache, intent, classify, learned route, plan, FAQ, route and feedback.

``str(unified_term(...))`` prints every step `search()` runs::

    standalone_rewrite >> If(query_cache, identity,
        If(detect_intent, retrieval_plan >> direct_reply,
           classify >> learned_route >> retrieval_plan >> If(faq_direct_answer, identity, Route(identity, {…})),
           on=direct)) >> record_feedback

A cache hit skips the rest, a direct-reply intent (greeting, out of scope,
human service) retrieves nothing, a stored FAQ answer skips the route. The
`Route` records which route it took in the trace (its ``route`` note), and the
result reads the strategy from there (`orchestration.result`). The cache, the
learned route picks and the feedback step reach the knowledge base's feedback
loop as the run's ``feedback`` resource (`Learning`); without it they pass, so
one term serves every question of a config.
"""
from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

from lambdarag import Context, Identity, If, Message, Named, Route, State, Term, Tool, Verdict
from lambdarag.term import frozen
from lambdarag.skills import build as build_skill
from lambdarag.skills.profile import in_domain as question_in_domain, profile_of
from lambdarag.skills.store.records import RetrievalPlan

from .config import QUERY_TYPES, AgentConfig
from .llm_budget import fit_context
from .plan import DIRECT_INTENTS, build_retrieval_plan, detect_intent
from .router import Pack, RouteChoice, candidates, choose, route_table

FEEDBACK_READS = ("query", "original_query", "history", "user", "plan")
FEEDBACK_OPTIONAL = ("query_type", "classification", "variants", "candidates", "hits", "relations", "wiki_pages",
                     "missing", "context", "answer", "citations", "verdict", "answer_path", "answer_reason", "route",
                     "route_reason", "cache_hit", "cached_result")
"""What the feedback step reads of a finished run: what the result shows and the loop learns from (the optional
ones are written on some paths only)."""


def in_domain(ctx: Context) -> Callable[[str], bool]:
    """Returns the corpus profile's test of whether a question is about the indexed documents."""
    profile, index = profile_of(ctx), ctx.resources.get("index")
    return lambda query: question_in_domain(profile, query, index)


def standalone(text: str, turns: Sequence[Message], ctx: Context) -> tuple[str, list[dict[str, str]]]:
    """Returns `text` rewritten as a standalone question from the conversation, and fallback records.

    The rewrite is the `rewrite` variant of `query_expand` (the LLM's with one
    configured, else the rule-based completion of follow-ups). A follow-up that
    gets no rewrite is searched as typed, and the fallback says so.
    """
    if not turns:
        return text, []
    state = State(query=text, original_query=text, history=tuple(turns),
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


def rewrite(state: State, ctx: Context) -> dict:
    """Returns the standalone rewrite of a follow-up as the query (rerank and the answer read `original_query`,
    so it holds the rewrite too); a follow-up left as typed is this step's fallback in the trace."""
    text, unrewritten = standalone(state.query, state.history, ctx)
    for f in unrewritten:
        ctx.trace.mark_current(f["reason"])
    return {"query": text, "original_query": text} if text != state.query else {}


STANDALONE_REWRITE = Tool("standalone_rewrite", rewrite, reads=["query", "history"],
                          writes=["query", "original_query"], effect="llm", cost=0.0)
"""Rewrites a follow-up as a standalone question; its query_expand run is charged in its own span."""


def intent(state: State, ctx: Context) -> dict:
    """Returns the question's intent, and whether it is one answered without retrieval."""
    found = detect_intent(state.query, state.history, in_domain(ctx))
    return {"intent": found, "direct": found in DIRECT_INTENTS}


DETECT_INTENT = Tool("detect_intent", intent, reads=["query", "history"], writes={"intent": str, "direct": bool}, effect="io",
                     cost=0.0)
"""Decides the intent by rules (the corpus profile says whether an off-topic cue is about the documents)."""


def plan_term(config: AgentConfig) -> Tool:
    """Returns the term that freezes this query's retrieval plan from its type and intent."""
    def plan(state: State) -> dict:
        return {"plan": fit_context(build_retrieval_plan(state.query, state.intent, config.orchestration.plan,
                                                         query_type=state.query_type, history=state.history),
                                    config.llm)}
    return Tool("retrieval_plan", plan, reads=["query", "history", "intent"], optional=["query_type"],
                writes=["plan"])


def reply(state: State, ctx: Context) -> dict:
    """Returns the plan's direct reply: the configured one, else the corpus profile's in the question's language."""
    answer = state.plan.direct_reply or profile_of(ctx).wording.direct_replies(state.query).get(state.plan.intent, "")
    return {"answer": answer, "answer_path": "direct_reply", "answer_reason": state.plan.reason,
            "verdict": Verdict(passed=True, details=("direct reply: nothing retrieved or generated to check",))}


DIRECT_REPLY = Tool("direct_reply", reply, reads=["plan", "query"],
                    writes={"answer": str, "answer_path": str, "answer_reason": str, "verdict": Verdict})
"""Answers a greeting, an out-of-scope question or a request for a person with the plan's reply; retrieves nothing."""


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
    """What the lifecycle's learning steps reach as the ``feedback`` resource of a run: the knowledge base's
    feedback loop, and how this run's answer is recorded in it (`record(state, ctx)` returns the fields the
    feedback step writes). A run without the resource learns nothing and caches nothing."""

    loop: Any
    record: Callable[[State, Context], dict]
    pipeline: str = ""
    """The fingerprint of the lifecycle answering (`Lifecycle.fingerprint`), which cache keys carry."""


def learning(ctx: Context) -> Optional[Learning]:
    return ctx.resources.get("feedback")


def learned_route_term(config: AgentConfig, table: Mapping[str, RouteChoice]) -> Tool:
    """Returns the step that labels the route: the query type's, or the one the routing statistics pick for it."""
    def label(state: State, ctx: Context) -> dict:
        query_type = state.query_type if state.query_type in table else "default"
        learn = learning(ctx)
        picks = learn.loop.routing.picks(config, state.query) if learn is not None else {}
        if query_type not in picks:
            return {"route": query_type, "route_reason": table[query_type].reason}
        option, reason = picks[query_type]
        chosen = query_type if option == candidates(config, query_type)[0] else pick_label(query_type, option)
        return {"route": chosen, "route_reason": reason}
    return Tool("learned_route", label, reads=["query", "query_type"], writes={"route": str, "route_reason": str}, cost=0.0)


def strategy_route(table: Mapping[str, RouteChoice]) -> Route:
    """Returns the Route over every route of `table`, each under its strategy's name, on the `route` label."""
    routes = {k: Named(c.strategy, c.term) for k, c in table.items() if k != "default"}
    return Route(Identity, routes, default=Named(table["default"].strategy, table["default"].term), label="route")


def lookup(state: State, ctx: Context) -> dict:
    """Returns the answer cached for this query and the user's permission scope, if any."""
    learn = learning(ctx)
    hit = learn.loop.cache.get(state.query, state.user, learn.loop.version(learn.pipeline)) \
        if learn is not None else None
    return {"cache_hit": False} if hit is None else {"cache_hit": True, "cached_result": hit}


QUERY_CACHE = Tool("query_cache", lookup, reads=["query", "user"], writes={"cache_hit": bool, "cached_result": dict},
                   effect="io", cost=0.0)


def record(view: Any, ctx: Context) -> dict:
    """Records the finished run in the feedback loop (`Learning.record`) and returns its query id; the loop is
    given a state of the fields this step reads (it keeps states and runs checks on them); their values were
    validated by the terms of this run that wrote them, so they are set as written, not given anew."""
    learn = learning(ctx)
    if learn is None:
        return {}
    fields = {f: getattr(view, f) for f in FEEDBACK_READS + FEEDBACK_OPTIONAL if hasattr(view, f)}
    own = {k: v for k, v in fields.items() if k in State.__pydantic_fields__}
    return learn.record(State(**own).updated({k: v for k, v in fields.items() if k not in own}), ctx)


RECORD_FEEDBACK = Tool("record_feedback", record, reads=FEEDBACK_READS, optional=FEEDBACK_OPTIONAL,
                       writes={"query_id": str}, effect="io", cost=0.0)


def classifier(config: AgentConfig, rules: Sequence[dict], exemplars: Sequence[dict]) -> Term:
    """Returns the configured classifier, learned `rules` first and corrected `exemplars` added."""
    c = config.orchestration.classifier
    name = ("classify" if c.llm_fallback else "classify_offline") if c.fast_classify else "classify_llm"
    return build_skill(name, {"default": c.default, "rules": list(rules), "exemplars": list(exemplars)})


@dataclass(frozen=True)
class Lifecycle:
    """The lifecycle term, the routes its `Route` chooses among (by label) and whether they sit behind the FAQ
    step."""

    term: Term
    routes: Mapping[str, RouteChoice]
    faq: bool
    fingerprint: str = ""
    """A digest of what answers: the printed lifecycle term (every route's term, the classifier's learned rules)
    and the config it was built from (providers, models, parameters), so the query cache misses after a change."""

    def tail(self, label: str) -> Term:
        """Returns the term the route of `label` runs as (behind the FAQ step with `faq`)."""
        term = self.routes[label].term
        return faq_first(term) if self.faq else term


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
    route = strategy_route(table)
    answered = classifier(config, rules, exemplars) >> learned_route_term(config, table) >> plan_term(config) \
        >> (faq_first(route) if faq else route)
    body = If(DETECT_INTENT, plan_term(config) >> DIRECT_REPLY, answered, on="direct")
    term = STANDALONE_REWRITE >> If(QUERY_CACHE, Identity, body, on="cache_hit") >> RECORD_FEEDBACK
    lifecycle = Lifecycle(term, table, faq, fingerprint(term, config))
    with _LIFECYCLES_LOCK:
        _LIFECYCLES[key] = (config, lifecycle)  # holding the config keeps its id from being reused
        while len(_LIFECYCLES) > 32:
            _LIFECYCLES.popitem(last=False)
    return lifecycle
