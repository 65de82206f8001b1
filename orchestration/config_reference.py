"""The configuration reference: every key of `agent-config.yml` with its type, default and meaning, from the schema.

Defaults are read off the default `AgentConfig`, so a table of per-type entries shows each type's own numbers, and
meanings off the docstring written under each field, which only this generator parses (the config stays light to
import). `python -m lambdarag.orchestration.config_reference` prints it; docs/configuration.md holds it.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from functools import cache
from typing import Any

import yaml
from pydantic import BaseModel

from .config import PATTERN_DEFAULTS, AgentConfig


@cache
def field_notes(model: type[BaseModel]) -> dict[str, str]:
    """Field name → the first sentence of the docstring under its declaration, over the model and its bases."""
    notes: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if not issubclass(cls, BaseModel) or cls is BaseModel:
            continue
        try:
            body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0].body
        except (OSError, TypeError):   # a class made at run time has no source to read
            continue
        for field, doc in zip(body, body[1:]):
            if (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
                    and isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)
                    and isinstance(doc.value.value, str)):
                notes[field.target.id] = first_sentence(doc.value.value)
    return notes


def first_sentence(text: str) -> str:
    """Returns `text` on one line, up to and including its first full stop."""
    line = " ".join(text.split())
    end = line.find(". ")
    return line if end < 0 else line[:end + 1]


def json_default(value: Any) -> str:
    """Returns a default value as it would be written in YAML, compactly."""
    if isinstance(value, BaseModel):
        value = value.model_dump(by_alias=True)
    text = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=1000).strip()
    return text.removesuffix("\n...").removesuffix(" ...").replace("|", "\\|")


def rows(section: BaseModel, prefix: str = "") -> list[str]:
    """Returns a table row per key under `section` (a default config value), descending into nested sections."""
    model, out = type(section), []
    notes = field_notes(model)
    for name, field in model.model_fields.items():
        key, kind, value = f"{prefix}{field.alias or name}", field.annotation, getattr(section, name)
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            out.extend(rows(value, key + "."))
        elif model is AgentConfig and name == "patterns":   # a row per pattern: the defaults laid under each
            out.extend(f"| `patterns.{p}` | PatternConfig | `{json_default(d)}` | |"
                       for p, d in PATTERN_DEFAULTS.items())
        else:
            type_name = kind.__name__ if isinstance(kind, type) else str(kind).replace("typing.", "")
            note = notes.get(name, "").replace("|", "\\|")
            out.append(f"| `{key}` | {type_name} | `{json_default(value)}` | {note} |")
    return out


def reference() -> str:
    """Returns the configuration reference as a markdown table."""
    return "\n".join(["| key | type | default | meaning |", "|---|---|---|---|", *rows(AgentConfig())])


if __name__ == "__main__":
    print(reference())
