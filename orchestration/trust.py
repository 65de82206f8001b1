"""Which configs may run code, read secrets and choose endpoints: those the user named or approved (direnv's `allow`).

A config found in the working folder (``./agent-config.yml``) came with
whatever folder the user is in — a cloned repository, a downloaded archive —
so it may set parameters only. Importing code (``plugins:``, a ``module:attr``
domain), reading an environment variable for a secret (``apiKeyEnv``) and
choosing where requests and data go (``baseUrl``, a Milvus ``uri``, a store
``dsn``) need a config named with ``--config`` / ``$LAMBDARAG_CONFIG``, or one
approved with ``lambdarag trust FILE``. Approval records the file's SHA-256 in
``<data home>/trusted-configs.json``; any change to the file revokes it.
The packaged default config is ours and trusted.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterator

from lambdarag.errors import UntrustedConfig
from lambdarag.skills.store.files import write_replace
from lambdarag.skills.store.home import data_home

TRUST_FILE = "trusted-configs.json"
ENDPOINTS = ("llm", "retrieval.skills.embedding", "retrieval.skills.rerank")
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
"""The key variable an endpoint reads when its file names none; it goes with whatever endpoint is configured, so
naming it (as the packaged config does) needs no trust."""
PRIVILEGED = (
    ("plugins", "imports code"),
    *((f"{e}.apiKeyEnv", "reads a secret from the environment") for e in ENDPOINTS),
    *((f"{e}.baseUrl", "chooses where questions and documents are sent") for e in ENDPOINTS),
    ("retrieval.backend.uri", "chooses where the index is stored"),
    ("orchestration.feedback.store.dsn", "chooses where what is learned is stored"),
)
"""Config keys only a trusted config may set, and why."""


def digest(text: str) -> str:
    """Returns the SHA-256 of a config's text, as approvals record it."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def trust_file() -> Path:
    """Returns the file holding the approvals, in the data home."""
    return data_home() / TRUST_FILE


def approvals() -> dict[str, str]:
    """Returns the approved configs: resolved path → SHA-256 of the text approved (none when unreadable)."""
    try:
        data = json.loads(trust_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _save(entries: dict[str, str]) -> None:
    """Writes the approvals by write-rename (0600: they say which configs may run code)."""
    write_replace(trust_file(), json.dumps(dict(sorted(entries.items())), indent=1).encode("utf-8"))


def approve(path: Path) -> str:
    """Records `path`'s current text as approved; returns its digest."""
    path = path.resolve()
    value = digest(path.read_text(encoding="utf-8"))
    _save({**approvals(), str(path): value})
    return value


def revoke(path: Path) -> bool:
    """Forgets the approval of `path`; returns whether there was one."""
    entries = approvals()
    found = entries.pop(str(path.resolve()), None) is not None
    if found:
        _save(entries)
    return found


def approval_states() -> Iterator[tuple[str, str]]:
    """Yields (path, state) per approval: ``trusted``, ``changed since approved`` or ``missing``."""
    for path, value in approvals().items():
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError:
            yield path, "missing"
            continue
        yield path, "trusted" if digest(text) == value else "changed since approved (revoked)"


def is_approved(path: Path, text: str) -> bool:
    """Returns whether `text`, read from `path`, is exactly what the user approved for that path."""
    return approvals().get(str(path.resolve())) == digest(text)


def _value_at(data: Any, dotted: str) -> Any:
    """Returns the value at a dotted key path of raw config data, or None."""
    for key in dotted.split("."):
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


PATHS = (("retrieval.corpus", "reads documents from outside the config's folder"),
         ("retrieval.skills.wiki.dir", "writes outside the config's folder"))
"""Paths a found config may set only inside its own folder (a cloned repository's ``docs/``, not ``~/.ssh``)."""


def privileged_keys(data: Any, folder: Path) -> list[tuple[str, str]]:
    """Returns (key, why) for each key of raw config data (of a file in `folder`) only a trusted config may set."""
    found = [(key, why) for key, why in PRIVILEGED if _value_at(data, key) not in (None, [], "", DEFAULT_KEY_ENV)]
    domain = _value_at(data, "retrieval.domain")
    if isinstance(domain, str) and ":" in domain:
        found.append(("retrieval.domain", "imports code (module:attr)"))
    for key, why in PATHS:
        value = _value_at(data, key)
        if isinstance(value, str) and value and not (folder / Path(value).expanduser()).resolve().is_relative_to(
                folder.resolve()):
            found.append((key, why))
    return found


def refuse_untrusted(data: Any, path: Path, line_of: Any) -> None:
    """Raises `UntrustedConfig` when a config found in the working folder, not approved, sets a privileged key."""
    found = privileged_keys(data, path.parent)
    if not found:
        return
    key, why = found[0]
    line = line_of(tuple(key.split(".")))
    more = f" (and {', '.join(k for k, _ in found[1:])})" if found[1:] else ""
    raise UntrustedConfig(
        f"{path}:{f' line {line}:' if line else ''} {key} {why}{more}, but this config was found in the working "
        f"folder and nobody approved it; a config found there may set parameters only. If you trust it, run "
        f"`lambdarag trust {path}` (approval lasts until the file changes), or name it with --config / "
        f"$LAMBDARAG_CONFIG")


def describe(path: Path) -> str:
    """Returns whether the working folder's config at `path` is approved, as `lambdarag where` shows it."""
    approved = path.is_file() and is_approved(path, path.read_text(encoding="utf-8"))
    return "approved with lambdarag trust" if approved else "not approved: parameters only"
