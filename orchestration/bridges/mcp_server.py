"""The MCP bridge (extra ``mcp``): ``lambdarag mcp --index NAME`` serves one knowledge base to an agent over stdio
with the official MCP SDK, as the tools ``search`` (the cited answer) and ``explain`` (how it was reached).

Whom the answers are for is the server's to say: the access labels (``--department``, ``--security-level``) are
fixed when it starts, and a tool takes only the question, so a caller cannot widen what it may read.
"""
from __future__ import annotations

from typing import Any, Optional

from lambdarag import User

from ..result import SearchResult
from ..search_unified import asearch, lifecycle_term
from ..setup import ConfigArg
from .passages import missing_extra

try:
    from mcp.server.mcpserver import MCPServer
except ImportError as e:
    raise missing_extra("MCP", "mcp") from e


def answered(r: SearchResult) -> dict[str, Any]:
    """Returns what the ``search`` tool gives an agent: the answer, its citations with the cited text, and how
    much to trust it."""
    texts = {h.chunk_id: h.text for h in r.hits}
    return {"answer": r.answer, "query_type": r.query_type, "strategy": r.strategy, "degraded": r.degraded,
            "from_cache": r.from_cache, "index": r.index,
            "citations": [{**c.model_dump(), "text": texts.get(c.chunk_id, c.quote)} for c in r.citations]}


def explained(r: SearchResult) -> dict[str, Any]:
    """Returns what the ``explain`` tool adds: the route's lambda form and effects, the plan, the hits retrieved,
    the fallbacks taken and the latency."""
    return {**answered(r), "expression": r.expression, "effect_signature": r.effect_signature,
            "plan": r.plan.model_dump(mode="json"), "fallbacks": r.fallbacks, "latency_ms": r.latency_ms,
            "hits": [{"chunk_id": h.chunk_id, "source": h.source, "section": h.section, "score": h.score}
                     for h in r.hits]}


def mcp_server(index: Optional[str] = None, config: ConfigArg = None, user: Optional[User] = None) -> MCPServer:
    """Returns the MCP server of knowledge base `index`, answering every call as `user` (default: the public)."""
    who = user or User()
    server: MCPServer = MCPServer("lambdarag", instructions=(
        "Answers questions from one knowledge base with cited sources. `search` returns the answer and its "
        "citations; `explain` also the pipeline that ran, its plan, hits and fallbacks."))

    @server.tool(name="search", description="Answer a question from the knowledge base, with citations "
                                            "(source#section and the cited text) for every claim.")
    async def search_tool(query: str) -> dict[str, Any]:
        return answered(await asearch(query, index=index, user=who, config=config))

    @server.tool(name="explain", description="Answer a question and explain how: the routed pipeline's lambda "
                                             "form, its effects, the retrieval plan, the hits and the fallbacks.")
    async def explain_tool(query: str) -> dict[str, Any]:
        return explained(await asearch(query, index=index, user=who, config=config))

    return server


def serve_stdio(index: Optional[str], config: ConfigArg, user: User) -> None:
    """Opens the knowledge base (so the first call is not the one that waits for it), then serves over stdio."""
    lifecycle_term(index, config)
    mcp_server(index, config, user).run("stdio")
