"""The LLM prompts of the skills' `Lam` terms: the corpus profile's data, per language, overridable in the config.

A prompt file (YAML, a pack's ``data/prompts.yml``) maps each Lam's name to
its `variables` (the fields the template may use: the Lam's reads and given
fields), its `required` variables, and per language a `system` and a `user`
template (``str.format``: ``{context}``; a literal brace is written twice). Its
`words` entry holds, per language, the line that asks for a structured reply's
JSON (`schema_note`, ``{schema}``) and how an empty field reads (`empty`). A profile lists its prompt files in
`CorpusProfile.prompt_files`, later files overriding earlier ones per prompt
and language; the configuration's ``llm.prompts`` overrides both
(``ctx.resources["prompts"]``, checked by `template_errors`).
The language is the question's (`language_of` its first text field), so an
English question gets English instructions and English citation markers.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import yaml

from lambdarag import Prompt
from lambdarag.errors import ConfigError
from lambdarag.lam import template_fields

from .profile import profile_of
from .store.tokenize import language_of

LANGUAGE_FIELDS = ("original_query", "query", "answer", "facts")
"""The fields whose text decides a prompt's language, first present first: the question, else what is judged."""
_CACHE: dict[tuple[Path, ...], dict[str, Any]] = {}
_LOCK = threading.Lock()


def read_prompts(files: Sequence[Path]) -> dict[str, Any]:
    """Returns the prompt table of `files` merged in order (a later file's prompt replaces an earlier one's per
    language), read once per process."""
    key = tuple(files)
    with _LOCK:
        if key not in _CACHE:
            table: dict[str, Any] = {}
            for path in files:
                data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
                for name, entry in data.items():
                    merged = dict(table.get(name, {}))
                    for key, value in entry.items():  # per language, per template: a pack replaces what it gives
                        merged[key] = {**merged.get(key, {}), **value} if isinstance(value, dict) else value
                    table[name] = merged
            _CACHE[key] = table
        return _CACHE[key]


def template_errors(name: str, system: str, user: str, spec: Mapping[str, Any]) -> list[str]:
    """Returns what is wrong with one prompt's templates for the Lam `spec` describes: a variable it does not
    read, a required variable neither template uses, or a malformed brace."""
    try:
        used = template_fields(system) | template_fields(user)
    except ValueError as e:
        return [f"{name}: not a str.format template ({e}); write a literal brace twice"]
    allowed, required = set(spec.get("variables", ())), set(spec.get("required", ()))
    errors = []
    unknown = sorted(used - allowed)
    if unknown:
        errors.append(f"{name}: unknown variable {', '.join('{' + u + '}' for u in unknown)}; "
                      f"variables: {', '.join(sorted(allowed))}")
    missing = sorted(required - used)
    if missing:
        errors.append(f"{name}: missing required variable {', '.join('{' + m + '}' for m in missing)}")
    return errors


@dataclass(frozen=True)
class ProfilePrompt:
    """Returns a Lam's `Prompt` for a run: the configured override, else the corpus profile's, in the question's
    language (a `lambdarag.lam.PromptSource`)."""

    name: str

    def __call__(self, state: Any, ctx: Any) -> Prompt:
        language = next((language_of(str(v)) for f in LANGUAGE_FIELDS if (v := getattr(state, f, None))), "en")
        table = read_prompts(profile_of(ctx).wording.prompt_files)
        entry = table.get(self.name, {})
        texts = dict(entry.get(language) or entry.get("en") or {})
        overrides = ((getattr(ctx, "resources", None) or {}).get("prompts") or {}).get(self.name, {})
        texts.update({k: v for k, v in (overrides.get(language) or {}).items() if v is not None})
        if not texts.get("user"):
            raise ConfigError(f"corpus profile {profile_of(ctx).name!r} has no {language} prompt for {self.name!r}; "
                              f"add it to a file of its prompt_files or to llm.prompts.{self.name}.{language}")
        words = table.get("words", {}).get(language, {})
        return Prompt(texts.get("system", ""), texts["user"], **words)


def prompt_specs(files: Sequence[Path]) -> dict[str, Mapping[str, Any]]:
    """Returns each prompt's name with its `variables` and `required` lists (the schema note excluded)."""
    return {name: entry for name, entry in read_prompts(files).items() if name != "words"}


def languages(files: Sequence[Path]) -> tuple[str, ...]:
    """Returns the languages the prompt files write prompts in."""
    table = prompt_specs(files)
    return tuple(sorted({k for entry in table.values() for k in entry if k not in ("variables", "required")}))

