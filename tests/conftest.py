"""Shared fixtures: a scripted OpenAI-compatible server and paths to the shared data."""
from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from tests.scripted_server import Running

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("LAMBDARAG_SHARED", ROOT.parent / "shared"))
LAWS = SHARED / "data" / "laws"
MARITIME = SHARED / "data" / "maritime"
STARD = SHARED / "data" / "stard"

# Searches in tests must not learn into the repo's wiki/ and knowledge/; tests of the
# feedback loop switch it back on with a temporary LAMBDARAG_HOME and wiki dir.
os.environ.setdefault("LAMBDARAG_FEEDBACK", "off")


@pytest.fixture
def llm_server():
    """Yields a running scripted server; tests call `.script.script(Reply(...))`."""
    server = Running()
    yield server
    server.stop()


@pytest.fixture
def dead_url():
    """Returns a /v1 URL on 127.0.0.1 where nothing listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
