"""``llm.prompts`` in agent-config.yml: overrides of the Lams' prompts, checked against what each Lam reads."""
from __future__ import annotations

from typing import TYPE_CHECKING

from lambdarag.errors import ConfigError

from .declared import Where, at

if TYPE_CHECKING:
    from .config import AgentConfig


def default_prompt_files() -> tuple:
    """Returns the prompt files whose prompts and variables an override is checked against: the generic pack's
    (every pack's prompts use the same variables, those of the Lam)."""
    from lambdarag.domains.generic import PROMPTS

    return (PROMPTS,)


def check_prompts(config: "AgentConfig", source: str, where: Where) -> None:
    """Raises `ConfigError` naming the YAML line of the first bad override: an unknown prompt or language, a
    variable the Lam does not read, a required variable that neither template (with the default filling what the
    override leaves out) uses, or a malformed brace."""
    if not config.llm.prompts_by_name():
        return     # no override: nothing to check, and loading the config imports no Lam
    from lambdarag.skills.prompts import languages, prompt_specs, read_prompts, template_errors

    files = default_prompt_files()
    specs, table, langs = prompt_specs(files), read_prompts(files), languages(files)
    for name, by_language in config.llm.prompts_by_name().items():
        path = ("llm", "prompts", name)
        if name not in specs:
            raise ConfigError(at(source, where(path), ".".join(path),
                                 f"no Lam has a prompt named {name!r}; prompts: {', '.join(sorted(specs))}"))
        for language, texts in by_language.items():
            here = (*path, language)
            if language not in langs:
                raise ConfigError(at(source, where(here), ".".join(here),
                                     f"unknown language {language!r}; languages: {', '.join(langs)}"))
            merged = {**table[name].get(language, {}), **{k: v for k, v in texts.items() if v is not None}}
            errors = template_errors(name, merged.get("system", ""), merged.get("user", ""), specs[name])
            if errors:
                key = next((k for k in ("user", "system") if texts.get(k) is not None), "user")
                raise ConfigError(at(source, where((*here, key)), ".".join((*here, key)), errors[0]))
