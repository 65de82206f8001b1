"""The skill registry: skill name → factory ``(config) -> Term`` (see `lambdarag.registry`)."""
from __future__ import annotations

from lambdarag.registry import Registry

REGISTRY = Registry("skill")
skill = REGISTRY.register
build = REGISTRY.build
