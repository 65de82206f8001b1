"""A named registry of term factories ``(config) -> Term``, used for skills and for patterns.

Config validation, error messages listing valid choices, and the CLI read the
registry; nothing keeps a second hand-written list. A registry may know where
a name is registered (`homes`: name → module) without importing that module:
the module is imported the first time the name is built, so a process loads
only the skills its routes run.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable, Iterator, Mapping

from .errors import ConfigError
from .term import Term

Factory = Callable[[Mapping[str, Any]], Term]


class Registry(Mapping[str, Factory]):
    """Returns factories by name; `register(name)` is the decorator that adds one."""

    def __init__(self, kind: str, homes: Mapping[str, str] | None = None, *, declares: bool = True) -> None:
        self.kind = kind
        self.homes = dict(homes or {})
        self.declares = declares
        self._factories: dict[str, Factory] = {}

    def register(self, name: str) -> Callable[[Factory], Factory]:
        def add(factory: Factory) -> Factory:
            if name in self._factories:
                raise ConfigError(f"{self.kind} {name!r} is registered twice")
            self._factories[name] = factory
            return factory

        return add

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
            raise ConfigError(f"unknown {self.kind} {name!r}; valid {self.kind}s: {', '.join(sorted(self))}") from None
        config = dict(config or {})
        term = factory(config)
        return term.declared(name, config if params is None else params, config) if self.declares else term

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
