"""The LlamaIndex bridge against the real llama-index-core: a query engine retrieving through LambdaRAG (with the
offline MockLLM llama-index-core ships), and a LlamaIndex retriever as one branch of a LambdaRAG `Par` (needs the
llamaindex extra)."""
from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_index.core", reason="the llamaindex extra is not installed")
from llama_index.core import Document, VectorStoreIndex  # noqa: E402
from llama_index.core.embeddings import MockEmbedding  # noqa: E402
from llama_index.core.llms import MockLLM  # noqa: E402
from llama_index.core.query_engine import RetrieverQueryEngine  # noqa: E402
from llama_index.core.response_synthesizers import ResponseMode  # noqa: E402

from lambdarag import Context, Par, State, appended  # noqa: E402
from lambdarag.orchestration.bridges import llamaindex as bridge  # noqa: E402
from lambdarag.orchestration.bridges.llamaindex import LambdaRAGRetriever, llamaindex_search  # noqa: E402
from lambdarag.orchestration.search_unified import search  # noqa: E402
from lambdarag.skills import build  # noqa: E402
from tests.bridged import PATIENT, PORT, missing_extra_is_named  # noqa: E402
from tests.test_stream import COMPARE  # noqa: E402


def test_a_query_engine_retrieves_through_lambdarag_with_citations_in_the_nodes():
    engine = RetrieverQueryEngine.from_args(LambdaRAGRetriever(config=PATIENT), llm=MockLLM(),
                                            response_mode=ResponseMode.SIMPLE_SUMMARIZE)
    result = search(COMPARE, config=PATIENT)
    response = engine.query(COMPARE)
    nodes = response.source_nodes
    assert [n.node.node_id for n in nodes] == [h.chunk_id for h in result.hits]
    assert [n.score for n in nodes] == [h.score for h in result.hits]
    cited = [n.node for n in nodes if n.node.metadata["cited"]]
    assert {n.metadata["chunk_id"] for n in cited} == {c.chunk_id for c in result.citations if c.chunk_id}
    assert cited[0].metadata["citation"].startswith(f"[来源: {cited[0].metadata['source']}")
    prompt = str(response)                                  # MockLLM echoes its prompt: the context LambdaRAG found
    assert COMPARE in prompt and cited[0].metadata["citation"] in prompt and cited[0].get_content()[:40] in prompt
    assert "citation: " in prompt and "chunk_id: " not in prompt and "strategy: " not in prompt   # text, citation
    again = asyncio.run(engine.aquery(COMPARE))             # async: through asearch
    assert [n.node.node_id for n in again.source_nodes] == [n.node.node_id for n in nodes]


def test_a_llamaindex_retriever_is_one_branch_of_a_par_merged_by_rrf(maritime_bm25):
    notes = VectorStoreIndex.from_documents(
        [Document(text="船长可以拒绝不适航的船舶开航。", id_="note-1", metadata={"source": "notes.md"}),
         Document(text="港口巡查组负责船长报告的核查。", id_="port-1",
                  metadata={"source": "内部.md", "department": "港口处", "security_level": 2})],
        embed_model=MockEmbedding(embed_dim=8))
    branch = llamaindex_search(notes.as_retriever(similarity_top_k=2), name="notes")
    pipeline = Par(build("bm25_search", {}), branch, merge=appended("candidates")) >> build("rrf_merge", {})
    assert str(pipeline) == "λq. Par(bm25_search, llamaindex_search(retriever=‹VectorIndexRetriever›, name=notes)) " \
                            ">> rrf_merge"
    ctx = Context(resources={"index": maritime_bm25})
    hits = pipeline.run(State.of("船长有什么权力？"), ctx).hits
    notes_hits = [h for h in hits if "notes" in h.ranks]
    assert [h.source for h in notes_hits] == ["notes.md"] and any("bm25" in h.ranks for h in hits)
    privileged = pipeline.run(State.of("船长有什么权力？", user=PORT), ctx).hits
    assert {"notes.md", "内部.md"} <= {h.source for h in privileged}


def test_a_missing_extra_is_named(monkeypatch):
    missing_extra_is_named(monkeypatch, bridge, "llama_index.core.retrievers", "llamaindex")
