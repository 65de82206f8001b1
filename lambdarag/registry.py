"""A named registry of term factories ``(config) -> Term``, used for skills and for patterns.

Config validation, error messages listing valid choices, and the CLI read the
registry; nothing keeps a second hand-written list.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping

from .errors import ConfigError
from .term import Term

Factory = Callable[[Mapping[str, Any]], Term]


class Registry(Mapping[str, Factory]):
    """Returns factories by name; `register(name)` is the decorator that adds one."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._factories: dict[str, Factory] = {}

    def register(self, name: str) -> Callable[[Factory], Factory]:
        def add(factory: Factory) -> Factory:
            if name in self._factories:
                raise ConfigError(f"{self.kind} {name!r} is registered twice")
            self._factories[name] = factory
            return factory

        return add

    def build(self, name: str, config: Mapping[str, Any] | None = None) -> Term:
        """Returns the named term built from `config`, or fails listing the valid names."""
        try:
            factory = self._factories[name]
        except KeyError:
            raise ConfigError(f"unknown {self.kind} {name!r}; valid {self.kind}s: {', '.join(sorted(self))}") from None
        return factory(dict(config or {}))

    def __getitem__(self, name: str) -> Factory:
        return self._factories[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._factories)

    def __len__(self) -> int:
        return len(self._factories)
