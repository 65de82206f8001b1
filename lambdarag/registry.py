"""A named registry of term factories ``(config) -> Term``, used for skills and for patterns.

Config validation, error messages listing valid choices, and the CLI read the
registry; nothing keeps a second hand-written list. A registry may know where
a name is registered (`homes`: name → module) without importing that module:
the module is imported the first time the name is built, so a process loads
only the skills its routes run.
"""
from __future__ import annotations

import ast
import functools
import importlib
import sys
from pathlib import Path
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

    def parameters(self, name: str) -> frozenset[str]:
        """Returns the config keys the named factory reads: ``config.get("k")``, ``config["k"]`` or ``"k" in config``,
        in its body or in a function of its module it hands ``config`` to.

        Factories take plain mappings, so their code is where their parameters
        are written; a declared parameter that it never reads is a typo, not a
        setting (`patterns.registry.Names` refuses it, listing these).
        """
        factory = self[name]
        module = sys.modules[factory.__module__]
        return _config_keys(getattr(module, "__file__", None) or "", factory.__name__)

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


@functools.lru_cache(maxsize=None)
def _config_keys(path: str, function: str) -> frozenset[str]:
    """Returns the string keys `function` (a top-level def of the file at `path`) reads from its ``config``."""
    if not path.endswith(".py"):
        return frozenset()
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    keys: set[str] = set()
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen or name not in defs:
            return
        seen.add(name)
        for node in ast.walk(defs[name]):
            key = _key_read(node)
            if key is not None:
                keys.add(key)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and any(
                    isinstance(a, ast.Name) and a.id == "config" for a in node.args):
                visit(node.func.id)  # a helper handed the config reads it too

    visit(function)
    return frozenset(keys)


def _key_read(node: ast.AST) -> "str | None":
    """Returns the key of ``config.get("k")``, ``config["k"]`` or ``"k" in config`` at `node`, else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
        target, key = node.func.value, node.args[0]
    elif isinstance(node, ast.Subscript):
        target, key = node.value, node.slice
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In):
        target, key = node.comparators[0], node.left
    else:
        return None
    if isinstance(target, ast.Name) and target.id == "config" and isinstance(key, ast.Constant) \
            and isinstance(key.value, str):
        return key.value
    return None
