"""Layer between orchestration and patterns: domain packs, each a corpus profile (skills.profile), its own terms and routes.

`generic` fits any markdown, plain text or JSONL corpus in Chinese or English;
`prc_statutes` holds every rule that only PRC statutes have (articles, titles
and their short forms, versions and repeals, law-before-regulation priors,
agency relations, statute phrasing). A user's own pack is any
``package.module:Factory`` returning a `CorpusProfile`, of a module a trusted
config lists under ``plugins:``.

This is the one place a pack is found by name: a config's or an index
manifest's ``domain`` is resolved here (`profile_named`, `index_profile`), and
the skills below receive the profile object, never a name.
"""
from __future__ import annotations

import importlib
import threading
from typing import Any, Callable, Sequence

from lambdarag.errors import ConfigError
from lambdarag.registry import is_plugin
from lambdarag.skills.profile import CorpusProfile
from lambdarag.skills.store.derived import PerObject

from . import generic, prc_statutes

PACKS: dict[str, type[CorpusProfile]] = {"generic": generic.GenericProfile, "prc_statutes": prc_statutes.StatuteProfile}
"""The packs that ship, by name, as their profiles; importing a pack registers its own terms and route variants."""
AUTO_ORDER = ("prc_statutes", "generic")
"""The order in which ``domain: auto`` asks the shipped profiles whether they claim a corpus (statutes first)."""


def load_profile(spec: str) -> CorpusProfile:
    """Returns the profile `spec` names: a shipped name, or ``package.module:Factory`` of a listed plugin
    (`lambdarag.registry.is_plugin`) returning a `CorpusProfile`; an index manifest's `domain` comes here too, so
    neither a config nor a manifest can make this import a module nobody listed."""
    if spec in PACKS:
        return PACKS[spec]()
    module, _, attr = spec.partition(":")
    if not module or not attr:
        raise ConfigError(f"retrieval.domain: {spec!r} is neither a shipped profile "
                          f"({', '.join(['auto', *PACKS])}) nor package.module:Factory")
    if not is_plugin(module):
        raise ConfigError(f"retrieval.domain: {spec!r} imports {module}, which no trusted config lists under "
                          f"plugins:; a domain is a shipped profile ({', '.join(PACKS)}) or module:Factory of a "
                          f"listed plugin")
    try:
        factory: Callable[[], Any] = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as e:
        raise ConfigError(f"retrieval.domain: cannot load {spec!r}: {e}") from None
    profile = factory()
    if not isinstance(profile, CorpusProfile):
        raise ConfigError(f"retrieval.domain: {spec!r} returned {type(profile).__name__}, not a CorpusProfile")
    return profile


_LOADED: dict[str, CorpusProfile] = {}
_LOADING = threading.Lock()


def profile_named(spec: str) -> CorpusProfile:
    """Returns the profile of `spec`, loaded once per process (under a lock: concurrent first questions share it)."""
    with _LOADING:
        if spec not in _LOADED:
            _LOADED[spec] = load_profile(spec)
        return _LOADED[spec]


def choose_profile(documents: Sequence[Any]) -> CorpusProfile:
    """Returns the first shipped profile that claims the documents (``domain: auto``), else the generic one."""
    for name in AUTO_ORDER:
        if profile_named(name).reading.claims(documents):
            return profile_named(name)
    return profile_named("generic")


def index_profile(index: Any) -> CorpusProfile:
    """Returns the profile an index was built with (its manifest's `domain`), else the one its documents fit."""
    domain = getattr(index, "domain", None)
    return profile_named(domain) if domain else _detected(index)


_detected: PerObject[CorpusProfile] = PerObject(lambda index: choose_profile(list(index.documents().values())))
"""Returns the profile an index built before profiles were recorded fits, judged once per index version."""
