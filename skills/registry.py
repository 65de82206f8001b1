"""The skill registry: skill name → factory ``(config) -> Term``.

Config validation, error messages listing valid choices, and the CLI all read
this one mapping; nothing keeps a second hand-written list.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from lambdarag import Term
from lambdarag.errors import ConfigError

Factory = Callable[[Mapping[str, Any]], Term]
REGISTRY: dict[str, Factory] = {}


def skill(name: str) -> Callable[[Factory], Factory]:
    """Returns a decorator that registers a skill factory under `name`."""

    def register(factory: Factory) -> Factory:
        if name in REGISTRY:
            raise ConfigError(f"skill {name!r} is registered twice")
        REGISTRY[name] = factory
        return factory

    return register


def build(name: str, config: Mapping[str, Any] | None = None) -> Term:
    """Returns the named skill built from its config, or fails listing the valid names."""
    try:
        factory = REGISTRY[name]
    except KeyError:
        raise ConfigError(f"unknown skill {name!r}; valid skills: {', '.join(sorted(REGISTRY))}") from None
    return factory(dict(config or {}))
