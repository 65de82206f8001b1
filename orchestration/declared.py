"""Pipelines declared in agent-config.yml: the `plugins:` allowlist imported, `expr:` patterns built at load.

Only the modules listed under ``plugins:`` are imported (from the config's
folder or the Python path); a name in an expression or a route is looked up in
the registries and never imported. Every error names the YAML line; an
expression's error also names its column.
"""
from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from lambdarag.errors import CompositionError, ConfigError, DeclarationError

MODULE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
Where = Callable[[tuple[Any, ...]], Optional[int]]
"""Returns the YAML line of a config path (`orchestration.config._line_of` over the file's text)."""


def at(source: str, line: Optional[int], path: str, message: str) -> str:
    return f"{source}:{f' line {line}:' if line else ''} {path}: {message}"


def import_plugins(names: Any, folder: Optional[Path], where: Where, source: str) -> tuple[str, ...]:
    """Imports each module of the `plugins:` list, so the skills and patterns it registers exist; returns the names.

    A module is found in the config file's folder first, then on the Python path.
    """
    if names is None:
        return ()
    from lambdarag.registry import allow_plugin      # here: a config that lists no plugin needs no registry

    if not isinstance(names, list):
        raise ConfigError(at(source, where(("plugins",)), "plugins", "expected a list of module names"))
    for i, name in enumerate(names):
        if not isinstance(name, str) or not MODULE.fullmatch(name):
            raise ConfigError(at(source, where(("plugins", i)), f"plugins.{i}",
                                 f"{name!r} is not a module name (e.g. mypkg.retrieval)"))
        added = folder is not None and str(folder) not in sys.path
        if added:
            sys.path.insert(0, str(folder))
        try:
            importlib.import_module(name)
            allow_plugin(name)
        except Exception as e:  # whatever the plugin raises, the config names it
            raise ConfigError(at(source, where(("plugins", i)), f"plugins.{i}",
                                 f"cannot import plugin {name!r}: {type(e).__name__}: {e}")) from None
        finally:
            if added:
                sys.path.remove(str(folder))
    return tuple(names)


def declared_names(data: Any) -> frozenset[str]:
    """Returns the names of the patterns the YAML declares by ``expr:``."""
    patterns = data.get("patterns") if isinstance(data, dict) else None
    if not isinstance(patterns, dict):
        return frozenset()
    return frozenset(name for name, section in patterns.items() if isinstance(section, dict) and "expr" in section)


def expr_column(text: str, name: str) -> tuple[Optional[int], int]:
    """Returns the YAML line and the column where the expression of pattern `name` starts (after a quote)."""
    import yaml

    try:
        root = yaml.compose(text)
        patterns = next(v for k, v in root.value if k.value == "patterns")
        section = next(v for k, v in patterns.value if k.value == name)
        node = next(v for k, v in section.value if k.value == "expr")
    except (yaml.YAMLError, StopIteration, AttributeError, TypeError):
        return None, 0
    quoted = 1 if node.style in ("'", '"') else 0
    return node.start_mark.line + 1, node.start_mark.column + quoted


def check_expressions(settings: Mapping[str, Any], text: str, source: str, where: Where) -> None:
    """Builds every pattern declared by ``expr:``, so syntax, unknown names and wiring (free reads, overlapping
    `Par` writes, a `Guard` whose generator cannot see the verdict) fail at load, naming the YAML line."""
    if not settings["declared"]:
        return     # nothing to build: loading the config needs no calculus (`lambdarag where`)
    from lambdarag.patterns import build as build_pattern

    for name in settings["declared"]:
        try:
            build_pattern(name, settings)
        except DeclarationError as e:
            line, start = expr_column(text, name)
            message = str(e).replace(f"column {e.column}:", f"column {start + e.column}:", 1)
            raise ConfigError(at(source, line, f"patterns.{name}.expr", message)) from None
        except (ConfigError, CompositionError) as e:
            raise ConfigError(at(source, where(("patterns", name, "expr")), f"patterns.{name}.expr", str(e))) from None
