"""A named registry of term factories ``(config) -> Term``, used for skills and for patterns.

Config validation, error messages listing valid choices, and the CLI read the
registry; nothing keeps a second hand-written list. A factory is registered
under its function's name and a typed tool under its own (one name, written
once); its parameters are what it reads from its config or, for a typed tool,
its keyword-only parameters. A registry may know where
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

from .errors import ConfigError, did_you_mean
from .term import Term

Factory = Callable[[Mapping[str, Any]], Term]


class Registry(Mapping[str, Factory]):
    """Returns factories by name; `register(name)` is the decorator that adds one."""

    def __init__(self, kind: str, homes: Mapping[str, str] | None = None, *, declares: bool = True) -> None:
        self.kind = kind
        self.homes = dict(homes or {})
        self.declares = declares
        self._factories: dict[str, Factory] = {}

    def register(self, what: Any) -> Any:
        """Registers a factory under its function's name, or a typed `Tool` under its own name (built with the
        config keys it takes, `Tool.configured`); returns what it was given, so it is a decorator.

        ``register("name")`` is the decorator registering a factory under another name (a wrapper's).
        """
        if isinstance(what, str):
            return lambda factory: self._add(what, factory)
        if isinstance(what, Term):
            self._add(what.name, configuring(what))
            return what
        return self._add(what.__name__, what)

    def _add(self, name: str, factory: Factory) -> Factory:
        if name in self._factories:
            raise ConfigError(f"{self.kind} {name!r} is registered twice")
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
        """Returns the config keys the named factory reads: ``config.get("k")``, ``config["k"]`` or ``"k" in config``,
        in its body or in a function of its module it hands ``config`` to.

        Factories take plain mappings, so their code is where their parameters
        are written; a declared parameter that it never reads is a typo, not a
        setting (`patterns.registry.Names` refuses it, listing these).
        """
        factory = self[name]
        declared = getattr(factory, "parameters", None)  # a typed tool's keyword-only parameters
        if declared is not None:
            return declared
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


def configuring(term: Term) -> Factory:
    """Returns the factory of a typed tool: it is built with the config keys its function takes, ignoring the
    rest of a component's section (the bm25 section's ``enabled`` is not a parameter of ``bm25_search``)."""
    takes = term.parameters  # type: ignore[attr-defined]

    def build(config: Mapping[str, Any]) -> Term:
        return term.configured(**{k: v for k, v in config.items() if k in takes})  # type: ignore[attr-defined]

    build.parameters = takes  # type: ignore[attr-defined]
    build.__module__ = term.fn.__module__  # type: ignore[attr-defined]
    build.__name__ = build.__qualname__ = term.name
    build.__doc__ = term.fn.__doc__  # type: ignore[attr-defined]
    return build


@functools.lru_cache(maxsize=None)
def _config_keys(path: str, function: str) -> frozenset[str]:
    """Returns the string keys `function` (a top-level def of the file at `path`) reads from its first parameter,
    the config, whatever it is named."""
    if not path.endswith(".py"):
        return frozenset()
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    keys: set[str] = set()
    seen: set[tuple[str, int]] = set()

    def visit(name: str, position: int) -> None:
        node = defs.get(name)
        if (name, position) in seen or node is None or len(node.args.args) <= position:
            return
        seen.add((name, position))
        config = node.args.args[position].arg
        for inner in ast.walk(node):
            key = _key_read(inner, config)
            if key is not None:
                keys.add(key)
            elif isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name):
                for i, a in enumerate(inner.args):  # a helper handed the config reads it too
                    if isinstance(a, ast.Name) and a.id == config:
                        visit(inner.func.id, i)

    visit(function, 0)
    return frozenset(keys)


def _key_read(node: ast.AST, config: str) -> "str | None":
    """Returns the key of ``config.get("k")``, ``config["k"]`` or ``"k" in config`` at `node` (`config` the
    parameter's name), else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
        target, key = node.func.value, node.args[0]
    elif isinstance(node, ast.Subscript):
        target, key = node.value, node.slice
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In):
        target, key = node.comparators[0], node.left
    else:
        return None
    if isinstance(target, ast.Name) and target.id == config and isinstance(key, ast.Constant) \
            and isinstance(key.value, str):
        return key.value
    return None


_PLUGINS: set[str] = set()


def allow_plugin(module: str) -> None:
    """Records `module` as a plugin the user listed (a trusted config's ``plugins:``), so a ``module:attr`` under
    it may be loaded by name (`is_plugin`)."""
    _PLUGINS.add(module)


def is_plugin(module: str) -> bool:
    """Returns whether `module` is a listed plugin or inside one: the only modules a ``module:attr`` spec read from
    a config or an index manifest may import (``os:abort`` is neither)."""
    return any(module == p or module.startswith(p + ".") for p in _PLUGINS)
