"""The pattern registry: pattern name → factory ``(settings) -> Term`` (see `lambdarag.registry`).

`settings` is a plain mapping with the keys ``skills`` (component sections:
bm25, embedding, rerank, graph, wiki — each with ``enabled``) and ``patterns``
(per-pattern parameters), both snake_case, so that patterns never import the
orchestration layer's schema, and optionally ``pack``: the domain pack of the
index the routes answer on (skills.profile), whose own variant of a pattern
(`pack_pattern`) is built in its place.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from pydantic.alias_generators import to_camel, to_snake

from lambdarag import Merge, Named, Term
from lambdarag.errors import ConfigError, did_you_mean
from lambdarag.registry import Registry
from lambdarag.syntax import parse
from lambdarag.skills import REGISTRY as SKILLS
from lambdarag.skills import build as build_skill

from . import SHIPPED

REGISTRY = Registry("pattern", {name: f"{__package__}.{name}" for name in SHIPPED}, declares=False)
"""Pattern name → factory; a pattern is declared by its `Named` wrapper."""
VARIANTS: dict[tuple[str, str], Any] = {}
"""(pack, pattern) → the factory of that pack's variant of the pattern (`pack_pattern`)."""

# Which component section of the config a skill reads; skills not listed read none.
COMPONENT = {
    "bm25_search": "bm25", "embedding_search": "embedding", "rerank": "rerank",
    "entity_extract": "graph", "graph_walk": "graph", "graph_expand": "graph", "relation_lookup": "graph",
    "wiki_page_read": "wiki",
}


def pattern(name: str):
    """Returns a decorator registering a pattern factory; the built body is closed and named."""

    def register(factory):
        def named(settings: Mapping[str, Any]) -> Term:
            return Named(name, factory(settings))

        named.__doc__, named.__module__ = factory.__doc__, factory.__module__   # its home: the factory's module
        REGISTRY.register(name)(named)
        return factory

    return register


def pack_pattern(pack: str, name: str):
    """Returns a decorator registering a domain pack's variant of pattern `name`: routes built for an index of that
    pack (``settings["pack"]``) run it in place of the registered pattern, under the same name, so a pack's own
    terms print in its routes and no other corpus's routes hold them."""
    if name not in REGISTRY:
        raise ConfigError(f"pack {pack!r}: no pattern {name!r} to vary; {did_you_mean(name, REGISTRY)}"
                          f"valid patterns: {', '.join(sorted(REGISTRY))}")

    def register(factory):
        if (pack, name) in VARIANTS:
            raise ConfigError(f"pack {pack!r} registers its variant of pattern {name!r} twice")
        VARIANTS[pack, name] = factory
        return factory

    return register


def registered(name: str, settings: Mapping[str, Any]) -> Term:
    """Returns the registered pattern `name`, or the variant the routes' pack registered: ``settings["pack"]`` is a
    pack name or names, most specific first (a user's pack derived from the generic one runs the generic variants)."""
    packs = settings.get("pack") or ()
    for pack in (packs,) if isinstance(packs, str) else packs:
        if (pack, name) in VARIANTS:
            return Named(name, VARIANTS[pack, name](settings))
    return REGISTRY.build(name, settings)


def enabled(settings: Mapping[str, Any], component: str) -> bool:
    """Returns whether a component (bm25, embedding, rerank, graph, wiki) is switched on."""
    return bool(settings.get("skills", {}).get(component, {}).get("enabled", True))


def reranks(settings: Mapping[str, Any]) -> bool:
    """Returns whether patterns rerank: when switched on, or when a rerank endpoint is configured (backend http).

    The local overlap reranker is off by default because it lowered recall on
    every question type (bench/results/strategies-dev.json); an endpoint is used whenever one is configured.
    """
    section = settings.get("skills", {}).get("rerank", {})
    return enabled(settings, "rerank") or section.get("backend") == "http"


def params(settings: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """Returns the parameters of the named pattern."""
    return settings.get("patterns", {}).get(name, {})


def skill(settings: Mapping[str, Any], name: str, **extra: Any) -> Term:
    """Returns the named skill built with its component's config section plus `extra`."""
    section = dict(settings.get("skills", {}).get(COMPONENT.get(name, ""), {}))
    return build_skill(name, {**section, **extra}, params=extra)


def build(name: str, settings: Mapping[str, Any]) -> Term:
    """Returns the named pattern built from `settings`: declared there by ``expr:`` (``settings["declared"]``), else
    the pack's variant, else registered (`registered`)."""
    if name in settings.get("declared", {}):
        return Names(settings).term(name, {})
    return registered(name, settings)


MERGES = ("appended", "fan_out_merge", "keep_lead")


class Names:
    """Resolves the names of a declared expression (`lambdarag.syntax.Resolver`): patterns (declared in
    `settings` or registered), then skills built as patterns build them, then the merges."""

    def __init__(self, settings: Mapping[str, Any], within: tuple[str, ...] = ()) -> None:
        self.settings = settings
        self.within = within  # the declared patterns being built, to refuse a cycle

    def term(self, name: str, given: Mapping[str, Any]) -> Term:
        declared = self.settings.get("declared", {})
        if name in declared or name in REGISTRY:
            if given:
                raise ConfigError(f"pattern {name!r} takes no parameters in an expression; set them under "
                                  f"patterns.{name} of the config")
            if name in self.within:
                raise ConfigError(f"pattern {name!r} is declared in terms of itself ({' → '.join(self.within)} → {name})")
            if name in declared:
                return Named(name, parse(declared[name], Names(self.settings, (*self.within, name))))
            return registered(name, self.settings)
        if name in SKILLS:
            params = {to_snake(k): v for k, v in given.items()}
            valid = SKILLS.parameters(name)
            unknown = [k for k, snake in zip(given, params) if snake not in valid]
            if unknown:
                have = ", ".join(sorted(to_camel(k) for k in valid)) or "none"
                raise ConfigError(f"skill {name!r} has no parameter {unknown[0]!r}; "
                                  f"{did_you_mean(unknown[0], [to_camel(k) for k in valid])}its parameters: {have}")
            return skill(self.settings, name, **params)
        raise ConfigError(f"unknown skill or pattern {name!r}; {did_you_mean(name, {*REGISTRY, *declared, *SKILLS})}valid patterns: "
                          f"{', '.join(sorted({*REGISTRY, *declared}))}; valid skills: {', '.join(sorted(SKILLS))}")

    def merge(self, name: str, given: Mapping[str, Any], branches: Sequence[Term]) -> Merge:
        from .generic import fused, lead_kept

        if name == "keep_lead" and len(branches) == 2:
            return lead_kept(*branches, **given)
        if name != "fan_out_merge":
            raise ConfigError(f"unknown merge {name!r}; valid merges: {', '.join(MERGES)} (keep_lead: of two "
                              f"branches, the route's and the plain ranking's)")
        return fused(branches, **given)
