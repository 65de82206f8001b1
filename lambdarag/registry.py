"""A named registry of declared terms, used for skills and for patterns.

Config validation, error messages listing valid choices, and the CLI read the
registry; nothing keeps a second hand-written list. What is registered
declares its parameters, never leaving them to be found in its source: a typed
tool or a `Lam` its keyword-only configuration (`Tool.configured`), a term
built in Python by a function of keyword-only parameters those parameters,
and a pattern's factory ``(settings) -> Term`` none (patterns are configured
by their section of the config). Registering records the module it is called
from as the name's home; a registry may be told the homes of names
(`homes`: name → module) without importing those modules, so a module is
imported the first time one of its names is built (a process loads only the
skills its routes run), and a name registered elsewhere than its declared
home is refused.
"""
from __future__ import annotations

import importlib
import inspect
import sys
from typing import Any, Callable, Iterator, Mapping

from .errors import ConfigError, did_you_mean
from .term import Term
from .tool import parameter

Factory = Callable[[Mapping[str, Any]], Term]


class Registry(Mapping[str, Factory]):
    """Returns factories by name; `register` is the decorator that adds one."""

    def __init__(self, kind: str, homes: Mapping[str, str] | None = None, *, declares: bool = True) -> None:
        self.kind = kind
        self.homes = dict(homes or {})
        self.declares = declares
        self._factories: dict[str, Factory] = {}

    def register(self, what: Any) -> Any:
        """Registers a typed tool or `Lam` under its own name (built with the config keys it takes), or a
        function of keyword-only parameters returning a term under the function's name; returns what it was
        given, so it is a decorator. The module it is called from is the name's home.

        ``register("name")`` is the decorator registering a pattern's factory ``(settings) -> Term`` under
        `name` (a wrapper's).
        """
        if isinstance(what, str):
            return lambda factory: self._add(what, factory, factory.__module__)
        home = sys._getframe(1).f_globals.get("__name__", "")
        if isinstance(what, Term):
            self._add(what.name, configuring(what), home)
            return what
        self._add(what.__name__, constructing(what), home)
        return what

    def _add(self, name: str, factory: Factory, home: str) -> Factory:
        if name in self._factories:
            raise ConfigError(f"{self.kind} {name!r} is registered twice")
        declared = self.homes.setdefault(name, home)
        if declared != home:
            raise ConfigError(f"{self.kind} {name!r} is registered in {home}, but its declared home is {declared}")
        self._factories[name] = factory
        return factory

    def build(self, name: str, config: Mapping[str, Any] | None = None, *,
              params: Mapping[str, Any] | None = None) -> Term:
        """Returns the named term built from `config`, or fails listing the valid names.

        With `declares`, the term is marked as built here (`Term.declared`), so
        it prints as ``name(params)`` — `params` are the keys of `config` given
        explicitly (default: all of it) — and can be read back from that form.
        """
        try:
            factory = self[name]
        except KeyError:
            raise ConfigError(f"unknown {self.kind} {name!r}; {did_you_mean(name, self)}"
                              f"valid {self.kind}s: {', '.join(sorted(self))}") from None
        config = dict(config or {})
        term = factory(config)
        return term.declared(name, config if params is None else params, config) if self.declares else term

    def parameters(self, name: str) -> frozenset[str]:
        """Returns the config keys the named term declares (a pattern's factory declares none); a parameter it
        does not declare is a typo, not a setting (`patterns.registry.Names` refuses it, listing these)."""
        return getattr(self[name], "parameters", frozenset())

    def home(self, name: str) -> str:
        """Returns the module that registers `name` (declared, or recorded when it was registered)."""
        self[name]
        return self.homes[name]

    def __getitem__(self, name: str) -> Factory:
        if name not in self._factories and name in self.homes:
            importlib.import_module(self.homes[name])   # registers `name`
            if name not in self._factories:
                raise ConfigError(f"{self.kind} {name!r}: its module {self.homes[name]} does not register it")
        return self._factories[name]

    def __contains__(self, name: object) -> bool:
        return name in self._factories or name in self.homes

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self.homes, *self._factories]))

    def __len__(self) -> int:
        return len(dict.fromkeys([*self.homes, *self._factories]))


def configuring(term: Term) -> Factory:
    """Returns the factory of a typed tool or `Lam`: it is built with the config keys it takes, ignoring the
    rest of a component's section (the bm25 section's ``enabled`` is not a parameter of ``bm25_search``)."""
    takes = term.parameters  # type: ignore[attr-defined]

    def build(config: Mapping[str, Any]) -> Term:
        return term.configured(**{k: v for k, v in config.items() if k in takes})  # type: ignore[attr-defined]

    build.parameters = takes  # type: ignore[attr-defined]
    build.__name__ = build.__qualname__ = term.name
    return build


def constructing(fn: Callable[..., Term]) -> Factory:
    """Returns the factory of a function of keyword-only parameters returning a term (a skill built from
    others): it is called with the config keys it declares, each checked by its annotation. A function of one
    parameter is a factory of its whole config section already."""
    params = inspect.signature(fn).parameters.values()
    if [p.kind for p in params] == [inspect.Parameter.POSITIONAL_OR_KEYWORD]:
        return fn   # a factory of the whole config section, as a pattern's: it declares no parameters
    if any(p.kind is not p.KEYWORD_ONLY for p in params):
        raise ConfigError(f"{fn.__name__}: a registered function declares its configuration as keyword-only "
                          f"parameters (def {fn.__name__}(*, limit: int = 3) -> Term); register a typed tool or a "
                          f"Lam as it is")
    import typing

    types = typing.get_type_hints(fn, include_extras=True)   # ranges: Annotated[int, Ge(1)]
    takes = frozenset(p.name for p in params)

    def build(config: Mapping[str, Any]) -> Term:
        return fn(**{k: parameter(fn.__name__, k, types.get(k, Any), v) for k, v in config.items() if k in takes})

    build.parameters = takes  # type: ignore[attr-defined]
    build.__name__ = build.__qualname__ = fn.__name__
    return build


_PLUGINS: set[str] = set()


def allow_plugin(module: str) -> None:
    """Records `module` as a plugin the user listed (a trusted config's ``plugins:``), so a ``module:attr`` under
    it may be loaded by name (`is_plugin`)."""
    _PLUGINS.add(module)


def is_plugin(module: str) -> bool:
    """Returns whether `module` is a listed plugin or inside one: the only modules a ``module:attr`` spec read from
    a config or an index manifest may import (``os:abort`` is neither)."""
    return any(module == p or module.startswith(p + ".") for p in _PLUGINS)
