"""Layer between orchestration and patterns: domain packs, each a corpus profile (skills.profile), its own terms and routes.

`generic` fits any markdown, plain text or JSONL corpus in Chinese or English;
`prc_statutes` holds every rule that only PRC statutes have (articles, titles
and their short forms, versions and repeals, law-before-regulation priors,
agency relations, statute phrasing). A user's own pack is any
``package.module:Factory`` returning a `CorpusProfile`.
"""
from __future__ import annotations

from . import generic, prc_statutes

PACKS = {"generic": generic, "prc_statutes": prc_statutes}
"""The packs that ship, by name: each registers its profile, its own terms and its route variants on import."""
