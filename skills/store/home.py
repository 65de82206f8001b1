"""Where LambdaRAG writes: one data home for indexes, feedback, learned state, wikis and caches.

The data home is $LAMBDARAG_HOME, else the platform's user data folder (`platformdirs`:
~/.local/share/lambdarag on Linux, ~/Library/Application Support/lambdarag on macOS,
%LOCALAPPDATA%\\lambdarag on Windows). Each index keeps `<home>/<name>/{index,feedback,wiki}`;
caches (jieba's dictionary, the classifier's exemplar vectors) keep `<home>/cache/`, or
$LAMBDARAG_CACHE when set, so that many short-lived homes (tests) can share them. Nothing
is written inside the installed package or a source checkout.
"""
from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from lambdarag.errors import ConfigError

APP = "lambdarag"


def data_home() -> Path:
    """Returns the data home: $LAMBDARAG_HOME, else the platform's user data folder for lambdarag."""
    return Path(os.environ.get("LAMBDARAG_HOME") or platformdirs.user_data_dir(APP, appauthor=False))


def cache_root() -> Path:
    """Returns the folder of the caches: $LAMBDARAG_CACHE, else `<data home>/cache`."""
    return Path(os.environ.get("LAMBDARAG_CACHE") or data_home() / "cache")


def cache_dir(kind: str) -> Path:
    """Returns the cache folder `kind` (e.g. "jieba"), created if missing."""
    directory = cache_root() / kind
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def index_dir(name: str) -> Path:
    """Returns the directory of the named index (it may not exist yet)."""
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise ConfigError(f"index name {name!r} must be a plain folder name such as 'demo'")
    return data_home() / name / "index"


def built_indexes() -> list[str]:
    """Returns the names of the local indexes built under the data home, sorted."""
    root = data_home()
    return sorted(p.parent.parent.name for p in root.glob("*/index/manifest.json")) if root.is_dir() else []
