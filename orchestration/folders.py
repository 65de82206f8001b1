"""Where an index's feedback and wiki live and whether this process learns, without importing the feedback loop.

What `lambdarag where` and a question with learning off need: they import neither the knowledge base nor the loop.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from lambdarag.skills.store.home import data_home

if TYPE_CHECKING:
    from .config import AgentConfig

OFF = ("0", "off", "false", "no")


def disabled_by_env() -> bool:
    """Returns whether LAMBDARAG_FEEDBACK switches learning off for this process (e.g. a test run)."""
    return os.environ.get("LAMBDARAG_FEEDBACK", "").strip().lower() in OFF


def learns(config: "AgentConfig") -> bool:
    """Returns whether questions under `config` feed the loop: orchestration.feedback.enabled and not switched off
    by LAMBDARAG_FEEDBACK."""
    return config.orchestration.feedback.enabled and not disabled_by_env()


def feedback_dir(kb_name: str) -> Path:
    """Returns the feedback folder of the knowledge base `kb_name` in the data home."""
    return data_home() / kb_name / "feedback"


def wiki_dir_for(config: "AgentConfig", name: str) -> Path:
    """Returns the wiki folder of an index: retrieval.skills.wiki.dir for the default index when set, else
    <data home>/<name>/wiki."""
    if name == config.retrieval.index and config.retrieval.skills.wiki.dir:
        return Path(config.retrieval.skills.wiki.dir).resolve()
    return data_home() / name / "wiki"
