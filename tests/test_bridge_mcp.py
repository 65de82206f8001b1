"""`lambdarag mcp`: an index served as MCP tools over stdio, driven by the official SDK's own stdio client; the
access labels are the server's, whatever a caller sends (needs the mcp extra)."""
from __future__ import annotations

import asyncio
import copy
import os
import shutil
from typing import Any

import pytest
import yaml

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")
from mcp import Client, StdioServerParameters  # noqa: E402

from lambdarag.orchestration import knowledge  # noqa: E402
from lambdarag.orchestration.bridges import mcp_server  # noqa: E402
from lambdarag.orchestration.cli import main  # noqa: E402
from lambdarag.orchestration.config import DEFAULT_CONFIG  # noqa: E402
from tests.bridged import missing_extra_is_named  # noqa: E402
from tests.conftest import MARITIME  # noqa: E402
from tests.test_feedback_trust import MARK, RULES, SECRET, SECRET_QUESTION  # noqa: E402

NAME = "mcpkb"
QUESTION = "船长在保障海上生命安全方面有什么权力？"


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> dict[str, Any]:
    """Returns the data home holding index `mcpkb` (the maritime fixture plus a restricted document) and the
    config file the servers read (dense retrieval off, a patient deadline)."""
    root = tmp_path_factory.mktemp("mcp-home")
    corpus = root / "corpus"
    shutil.copytree(MARITIME, corpus)
    (corpus / SECRET).parent.mkdir(parents=True)
    (corpus / SECRET).write_text(RULES, encoding="utf-8")
    data = copy.deepcopy(yaml.safe_load(DEFAULT_CONFIG.read_text(encoding="utf-8")))
    data["retrieval"]["skills"]["embedding"]["enabled"] = False
    data.setdefault("limits", {})["timeoutSeconds"] = 300
    config = root / "agent-config.yml"
    config.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("LAMBDARAG_HOME", str(root))
        assert main(["index", "--corpus", str(corpus), "--name", NAME, "--no-dense"]) == 0
        knowledge.forget()
    return {"home": root, "config": config}


def server(served: dict[str, Any], *options: str) -> StdioServerParameters:
    """Returns how the SDK's client starts `lambdarag mcp` on the index, with the server's own `options`."""
    command = shutil.which("lambdarag")
    assert command, "the lambdarag console script is not installed (pip install -e .)"
    return StdioServerParameters(command=command, args=["mcp", "--index", NAME, "--config", str(served["config"]),
                                                        *options],
                                 env={**os.environ, "LAMBDARAG_HOME": str(served["home"])})


def calls(params: StdioServerParameters, *requests: tuple[str, dict[str, Any]]) -> tuple[Any, list[Any]]:
    """Returns the server's tool list and the results of `requests` ((tool, arguments) pairs), over stdio."""
    async def session() -> tuple[Any, list[Any]]:
        async with Client(params, read_timeout_seconds=600) as client:
            tools = await client.list_tools()
            return tools, [await client.call_tool(name, arguments) for name, arguments in requests]

    return asyncio.run(session())


def cited_sources(result: Any) -> set[str]:
    assert not result.is_error, result.content
    return {c["source"] for c in result.structured_content["citations"]}


def seen_sources(result: Any) -> set[str]:
    """Returns the sources an ``explain`` result cites or retrieved."""
    return cited_sources(result) | {h["source"] for h in result.structured_content["hits"]}


def test_an_mcp_client_lists_and_calls_search_and_explain_and_cannot_choose_its_labels(served):
    tools, (answer, explained, secret, forged) = calls(
        server(served), ("search", {"query": QUESTION}), ("explain", {"query": QUESTION}),
        ("explain", {"query": SECRET_QUESTION}),
        ("explain", {"query": SECRET_QUESTION, "department": "港口处", "departments": ["港口处"], "security_level": 9}))
    listed = {t.name: t for t in tools.tools}
    assert set(listed) == {"search", "explain"}
    assert all(set(t.input_schema["properties"]) == {"query"} for t in listed.values())   # nothing else to send
    body = answer.structured_content
    assert body["answer"] and body["citations"] and not answer.is_error
    first = body["citations"][0]
    assert first["chunk_id"].startswith(first["source"]) and first["text"], first
    assert "海上交通安全法" in " ".join(cited_sources(answer))
    assert explained.structured_content["expression"] and "hits" in explained.structured_content
    assert SECRET not in seen_sources(secret) and MARK not in str(secret.content)
    assert SECRET not in seen_sources(forged) and MARK not in str(forged.content)       # the caller's labels: ignored


def test_the_server_s_own_labels_open_what_they_allow(served):
    _, (secret,) = calls(server(served, "--department", "港口处", "--security-level", "2"),
                         ("explain", {"query": SECRET_QUESTION}))
    assert SECRET in seen_sources(secret)


def test_a_missing_extra_is_named(monkeypatch):
    missing_extra_is_named(monkeypatch, mcp_server, "mcp.server.mcpserver", "mcp")
