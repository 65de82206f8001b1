"""Loading YAML and JSON written by someone else: no aliases, a size limit and a nesting limit, each a named error.

One hostile file must stay that file's problem. A YAML alias bomb (a dozen
anchors each referring to the one before) expands to billions of nodes from a
few kilobytes, and structures nested thousands deep exhaust Python's recursion
limit wherever they are walked. So aliases are refused while the YAML is
composed (before anything expands), nesting is counted on the way down, and
the text is refused above a size limit before the parser sees it. The loaders
raise `Unreadable` carrying the 1-based line, which the corpus reader turns
into a skipped file and the config loader into a `ConfigError`.
"""
from __future__ import annotations

import json
import re
from typing import Any

import yaml

MAX_DEPTH = 64
"""Deepest nesting of mappings and lists accepted in front matter, sidecars, JSONL records and the config."""
MAX_FRONT_MATTER_BYTES = 64 * 1024
MAX_CONFIG_BYTES = 1024 * 1024


class Unreadable(ValueError):
    """YAML or JSON refused before or while it is parsed (alias, size, nesting); `line` is 1-based, 0 for the
    whole text."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader refusing aliases and counting nesting while it composes nodes."""

    max_depth = MAX_DEPTH

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise Unreadable(event.start_mark.line + 1, f"YAML alias *{event.anchor} refused: aliases can expand "
                                                        f"a few kilobytes into billions of nodes; write the value out")
        self._depth += 1
        if self._depth > self.max_depth:
            mark = self.peek_event().start_mark
            raise Unreadable(mark.line + 1, f"YAML nested deeper than {self.max_depth} levels")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def load_yaml(text: str, what: str, max_bytes: int) -> Any:
    """Returns the YAML value of `text` (`what` names it in errors), refusing aliases, nesting deeper than
    `MAX_DEPTH` and text over `max_bytes`; YAML syntax errors stay `yaml.YAMLError`."""
    size = len(text.encode("utf-8"))
    if size > max_bytes:
        raise Unreadable(0, f"{what} is {size} bytes, over the limit of {max_bytes}")
    loader = _Loader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def load_json(text: str, what: str) -> Any:
    """Returns the JSON value of `text`, refusing nesting deeper than `MAX_DEPTH` (`Unreadable`); syntax errors
    stay `ValueError`."""
    depth = deepest(text)
    if depth > MAX_DEPTH:
        raise Unreadable(0, f"{what} is nested {depth} levels deep, over the limit of {MAX_DEPTH}")
    return json.loads(text)


def deepest(text: str) -> int:
    """Returns the deepest bracket nesting of JSON text, brackets inside strings not counted (no recursion); text
    with no more than `MAX_DEPTH` brackets in all is not scanned, and its bracket count is returned."""
    opened = text.count("[") + text.count("{")
    if opened <= MAX_DEPTH:
        return opened
    depth = top = 0
    for bracket in BRACKET.findall(STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        top = max(top, depth)
    return top


STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
BRACKET = re.compile(r"[\[\]{}]")
