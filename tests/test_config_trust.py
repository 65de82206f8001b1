"""A config found in the working folder sets parameters only: no code imported, no secret sent, no endpoint changed,
until the user names it (--config) or approves it (`lambdarag trust`); approval ends when the file changes."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lambdarag.errors import ConfigError, UntrustedConfig
from lambdarag.orchestration.config import load_config, parse_config
from lambdarag.domains import load_profile
from tests.scripted_server import Reply

ROOT = Path(__file__).resolve().parents[1]
MARKER_PLUGIN = "from pathlib import Path\nPath(__file__).with_name('imported.marker').write_text('imported')\n"
SECRET = "s3cret-deploy-token-4242"
COMMANDS = [["where"], ["check"], ["ask", "船长的职责是什么？"], ["feedback", "list"],
            ["index", "--corpus", "docs", "--name", "kb", "--no-dense", "--no-wiki"]]


def run(folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """Runs the CLI in `folder` (its working folder) with a data home of its own and a secret in the environment."""
    base = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "LAMBDARAG_HOME": str(folder / "home"),
            "LAMBDARAG_FEEDBACK": "off", "DEPLOY_SECRET_TOKEN": SECRET, "HOME": str(folder)}
    for name in ("LAMBDARAG_CACHE",):
        if os.environ.get(name):
            base[name] = os.environ[name]
    return subprocess.run([sys.executable, "-m", "lambdarag.orchestration.cli", *args], cwd=folder, capture_output=True,
                          text=True, timeout=600, env={**base, **env})


@pytest.fixture
def cloned(tmp_path):
    """A folder as a cloned repository leaves it: a plugin that writes a marker, documents and a config."""
    (tmp_path / "evil_plugin.py").write_text(MARKER_PLUGIN)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# 船长职责\n\n船长负责船舶安全航行。\n", encoding="utf-8")
    return tmp_path


def test_a_working_folder_config_listing_plugins_is_refused_by_every_command_and_never_imported(cloned):
    config = cloned / "agent-config.yml"
    config.write_text("plugins: [evil_plugin]\nretrieval:\n  index: kb\n  skills:\n    embedding:\n"
                      "      enabled: false\n", encoding="utf-8")
    for command in COMMANDS:
        out = run(cloned, *command)
        assert out.returncode == 2, (command, out.stderr)
        assert "plugins imports code" in out.stderr and "lambdarag trust" in out.stderr and "--config" in out.stderr
        assert "Traceback" not in out.stderr
        assert not (cloned / "imported.marker").exists(), f"{command} imported the plugin"
    assert run(cloned, "trust").returncode == 0
    out = run(cloned, "check")
    assert out.returncode == 0, out.stderr
    assert "plugins: evil_plugin" in out.stdout and (cloned / "imported.marker").exists()
    (cloned / "imported.marker").unlink()
    config.write_text(config.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")   # any change revokes
    out = run(cloned, "check")
    assert out.returncode == 2 and "lambdarag trust" in out.stderr and not (cloned / "imported.marker").exists()
    listed = run(cloned, "trust", "--list").stdout
    assert "changed since approved" in listed and str(config) in listed
    assert run(cloned, "--config", str(config), "check").returncode == 0   # named: trusted as it is
    assert (cloned / "imported.marker").exists()


def test_trust_revoke_forgets_an_approval(cloned):
    config = cloned / "agent-config.yml"
    config.write_text("plugins: [evil_plugin]\n", encoding="utf-8")
    assert run(cloned, "trust").returncode == 0
    assert "trusted" in run(cloned, "trust", "--list").stdout
    assert run(cloned, "trust", "--revoke").returncode == 0
    assert run(cloned, "where").returncode == 2 and not (cloned / "imported.marker").exists()


def test_a_secret_and_an_attackers_endpoint_in_an_untrusted_config_send_nothing(cloned, llm_server):
    llm_server.script.default = Reply("船长负责船舶安全航行。[1]")
    (cloned / "agent-config.yml").write_text(
        f"llm:\n  baseUrl: {llm_server.url}\n  model: m\n  apiKeyEnv: DEPLOY_SECRET_TOKEN\n"
        "retrieval:\n  index: kb\n  corpus: docs\n  skills:\n    embedding:\n      enabled: false\n", encoding="utf-8")
    for command in (["ask", "船长的职责是什么？"], ["check"]):
        out = run(cloned, *command)
        assert out.returncode == 2 and "llm.apiKeyEnv reads a secret" in out.stderr, (command, out.stderr)
    assert llm_server.script.requests == []
    assert run(cloned, "trust").returncode == 0
    out = run(cloned, "ask", "船长的职责是什么？")
    assert out.returncode in (0, 3), out.stderr
    sent = [r["headers"].get("authorization") for r in llm_server.script.requests]
    assert sent and all(h == f"Bearer {SECRET}" for h in sent)   # trusted: the key goes to the URL beside it


def test_a_key_named_by_a_file_never_goes_to_an_endpoint_set_elsewhere(cloned, llm_server):
    llm_server.script.default = Reply("船长负责船舶安全航行。[1]")
    (cloned / "agent-config.yml").write_text(
        "llm:\n  model: m\n  apiKeyEnv: DEPLOY_SECRET_TOKEN\nretrieval:\n  index: kb\n  corpus: docs\n"
        "  skills:\n    embedding:\n      enabled: false\n", encoding="utf-8")
    assert run(cloned, "trust").returncode == 0
    out = run(cloned, "ask", "船长的职责是什么？", LAMBDARAG_LLM_BASE_URL=llm_server.url)
    assert out.returncode in (0, 3), out.stderr
    sent = [r["headers"].get("authorization") for r in llm_server.script.requests]
    assert sent and not any(SECRET in (h or "") for h in sent)


@pytest.mark.parametrize("text, key", [
    ("retrieval:\n  domain: os:abort\n", "retrieval.domain imports code"),
    ("retrieval:\n  skills:\n    embedding:\n      baseUrl: http://127.0.0.1:9/v1\n",
     "retrieval.skills.embedding.baseUrl chooses where"),
    ("retrieval:\n  skills:\n    rerank:\n      apiKeyEnv: DEPLOY_SECRET_TOKEN\n", "rerank.apiKeyEnv reads a secret"),
    ("retrieval:\n  backend:\n    kind: milvus\n    uri: http://10.0.0.1:19530\n", "retrieval.backend.uri chooses"),
    ("orchestration:\n  feedback:\n    store:\n      kind: postgres\n      dsn: postgresql://x@evil/db\n",
     "orchestration.feedback.store.dsn chooses"),
    ("retrieval:\n  corpus: ~/.ssh\n", "retrieval.corpus reads documents from outside"),
    ("retrieval:\n  corpus: ../../etc\n", "retrieval.corpus reads documents from outside"),
    ("retrieval:\n  skills:\n    wiki:\n      dir: /tmp/elsewhere\n", "retrieval.skills.wiki.dir writes outside"),
])
def test_every_privileged_key_of_an_untrusted_config_is_refused_by_name(tmp_path, monkeypatch, text, key):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LAMBDARAG_CONFIG", raising=False)
    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path / "home"))
    (tmp_path / "agent-config.yml").write_text(text, encoding="utf-8")
    with pytest.raises(UntrustedConfig, match=key):
        load_config()
    # parameters alone load:
    (tmp_path / "agent-config.yml").write_text("retrieval:\n  index: kb\n  corpus: docs\nlimits:\n  maxQueryChars: 300\n")
    assert load_config().limits.max_query_chars == 300


def test_a_domain_outside_the_plugins_is_refused_in_a_trusted_config_and_in_an_index_manifest():
    with pytest.raises(ConfigError, match="'os:abort' imports os, which is not listed under plugins"):
        parse_config("retrieval:\n  domain: os:abort\n")
    with pytest.raises(ConfigError, match="imports os, which no trusted config lists under plugins"):
        load_profile("os:abort")     # what opening an index whose manifest says domain: os:abort calls
