"""Routing: query type → pattern term (a list of patterns fans out and merges), with the answer stage and budget."""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Union

from lambdarag import CostModel, Term
import lambdarag.domains  # noqa: F401  (registers the packs' terms and route variants)
from lambdarag.errors import CompositionError, ConfigError
from lambdarag.patterns import build as build_pattern
from lambdarag.patterns import fan_out_merge, review
from lambdarag.patterns.registry import VARIANTS
from lambdarag.skills import build as build_skill

from .config import QUERY_TYPES, AgentConfig, settings_of

Pack = Union[str, tuple[str, ...]]
"""The domain pack(s) routes are built for, most specific first (skills.profile.packs_of); none: registered patterns."""


def cost_model(config: AgentConfig) -> CostModel:
    return CostModel(per_effect=config.cost.per_effect, per_term=config.cost.per_term,
                     per_1k_tokens=config.cost.per1k_tokens)


def answer_stage() -> Term:
    """Returns answer generation reviewed by citation_check on every route; its one retry repairs what the check rejected."""
    return review(build_skill("answer_generate", {}), build_skill("citation_check", {}), retry=1)


def with_answer(term: Term) -> Term:
    """Returns the retrieval term followed by the answer stage (unless the pattern answers itself), then
    claim_check: whatever answered, a sentence its citations do not support is removed and reported."""
    answered = term if "answer" in term.writes() else term >> answer_stage()
    return answered >> build_skill("claim_check", {})


@dataclass(frozen=True)
class RouteChoice:
    """The term for one query type, the strategy name it prints as, and why it was chosen."""

    query_type: str
    strategy: str
    term: Term
    reason: str
    fallback: Optional[str] = None


def strategy_term(names: tuple[str, ...], settings: Mapping[str, Any]) -> Term:
    """Returns one pattern, or several fanned out concurrently and merged by RRF."""
    built = [build_pattern(n, settings) for n in names]
    return built[0] if len(built) == 1 else fan_out_merge(*built)


def choose(config: AgentConfig, query_type: str, strategies: Optional[tuple[str, ...]] = None,
           reason: str = "configured", pack: Pack = "") -> RouteChoice:
    """Returns the route for `query_type`: the configured (or given) strategies, downgraded when over budget; each
    pattern is the variant of the index's domain `pack` where it registered one (patterns.registry.pack_pattern)."""
    names = strategies or config.orchestration.routing.targets(query_type)
    settings = {**settings_of(config), "pack": pack}
    term = with_answer(strategy_term(names, settings))
    strategy = "+".join(names)
    bound = term.cost_bound(cost_model(config))
    budget = config.cost.budget_per_query
    if bound > budget:
        cheap = with_answer(build_pattern(config.cost.fallback, settings))
        return RouteChoice(query_type, config.cost.fallback, cheap, reason,
                           fallback=f"budget: {strategy} costs up to {bound:.4f} > budgetPerQuery {budget:.4f}; "
                                    f"ran {config.cost.fallback} instead")
    return RouteChoice(query_type, strategy, term, reason)


def candidates(config: AgentConfig, query_type: str) -> tuple[tuple[str, ...], ...]:
    """Returns the strategies adaptive routing picks among: the configured one first, then each fanned-out pattern alone."""
    names = config.orchestration.routing.targets(query_type)
    return (names,) + (tuple((n,) for n in names) if len(names) > 1 else ())


_TABLES: "OrderedDict[tuple, tuple[AgentConfig, dict[str, RouteChoice]]]" = OrderedDict()
_TABLES_LOCK = threading.Lock()


def route_table(config: AgentConfig, picks: Optional[Mapping[str, tuple[tuple[str, ...], str]]] = None,
                pack: Pack = "") -> dict[str, RouteChoice]:
    """Returns the route of every query type, plus `default`, for an index of domain `pack` (none: the registered
    patterns); `picks` maps a type to (strategies, reason) to use instead.

    Tables are immutable terms, so they are kept per config object and picks (a few, LRU): building one
    takes about 2 ms, a quarter of a whole keyword_search question.
    """
    picks = dict(picks or {})
    key = (id(config), tuple(sorted(picks.items())), pack)
    with _TABLES_LOCK:
        cached = _TABLES.get(key)
        if cached is not None and cached[0] is config:
            _TABLES.move_to_end(key)
            return cached[1]
    table = {t: choose(config, t, *picks[t], pack=pack) if t in picks else choose(config, t, pack=pack)
             for t in QUERY_TYPES}
    table["default"] = choose(config, "default", (config.orchestration.routing.default,), pack=pack)
    with _TABLES_LOCK:
        _TABLES[key] = (config, table)  # holding the config keeps its id from being reused
        while len(_TABLES) > 32:
            _TABLES.popitem(last=False)
    return table


@dataclass(frozen=True)
class RouteReport:
    """One route as `lambdarag check` prints it: its strategy, λ-form, effects, cost bound and any downgrade."""

    query_type: str
    strategy: str
    form: str
    effects: str
    cost: float
    over_budget: Optional[str]


def route_reports(config: AgentConfig, source: str) -> list[RouteReport]:
    """Returns every route of `config` (each query type and `default`), each closed over the initial fields, so a
    free read fails here, naming the config file `source` and the route, and not at its first question; so is
    every route as each domain pack varies it."""
    model = cost_model(config)
    reports = []
    for query_type, choice in route_table(config).items():
        try:
            choice.term.close()
        except CompositionError as e:
            raise ConfigError(f"{source}: orchestration.routing.{query_type} ({choice.strategy}): {e}") from None
        reports.append(RouteReport(query_type, choice.strategy, choice.term.form(expand=True),
                                   choice.term.effect_signature(), choice.term.cost_bound(model), choice.fallback))
    for pack in sorted({pack for pack, _ in VARIANTS}):   # a pack's route variants must close too
        for query_type, choice in route_table(config, pack=pack).items():
            try:
                choice.term.close()
            except CompositionError as e:
                raise ConfigError(f"{source}: orchestration.routing.{query_type} ({choice.strategy}, as domain "
                                  f"pack {pack} varies it): {e}") from None
    return reports
