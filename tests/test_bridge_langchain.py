"""The LangChain bridge against the real langchain-core: an LCEL chain retrieving through LambdaRAG, and a LangChain
vector store as one branch of a LambdaRAG `Par` (needs the langchain extra)."""
from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("langchain_core", reason="the langchain extra is not installed")
from langchain_core.documents import Document  # noqa: E402
from langchain_core.embeddings import DeterministicFakeEmbedding  # noqa: E402
from langchain_core.prompts import ChatPromptTemplate  # noqa: E402
from langchain_core.runnables import RunnableLambda, RunnablePassthrough  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore  # noqa: E402

from lambdarag import Context, Par, State, appended  # noqa: E402
from lambdarag.orchestration.bridges import langchain as bridge  # noqa: E402
from lambdarag.orchestration.bridges.langchain import LambdaRAGRetriever, langchain_search  # noqa: E402
from lambdarag.orchestration.search_unified import search  # noqa: E402
from lambdarag.skills import build  # noqa: E402
from tests.bridged import PATIENT, PORT, missing_extra_is_named  # noqa: E402
from tests.test_stream import COMPARE  # noqa: E402

NOTES = [Document(id="faq-1", page_content="船长可以拒绝不适航的船舶开航。", metadata={"source": "faq.md", "section": "开航"}),
         Document(id="faq-2", page_content="船员证书遗失后应当补办。", metadata={"source": "faq.md", "section": "证书"}),
         Document(id="port-1", page_content="港口巡查组负责船长报告的核查。",
                  metadata={"source": "内部.md", "department": "港口处", "security_level": 2})]


def shown(docs: list[Document]) -> str:
    return "\n".join(f"{d.page_content} {d.metadata['citation']}" for d in docs)


def test_an_lcel_chain_retrieves_through_lambdarag_with_citations_in_the_metadata():
    retriever = LambdaRAGRetriever(config=PATIENT)
    prompt = ChatPromptTemplate.from_messages([("human", "依据：\n{context}\n\n问题：{question}")])
    chain = {"context": retriever | RunnableLambda(shown), "question": RunnablePassthrough()} | prompt
    result = search(COMPARE, config=PATIENT)
    docs = retriever.invoke(COMPARE)
    assert [d.id for d in docs] == [h.chunk_id for h in result.hits]
    cited = [d for d in docs if d.metadata["cited"]]
    assert {d.metadata["chunk_id"] for d in cited} == {c.chunk_id for c in result.citations if c.chunk_id}
    assert cited[0].metadata["citation"] == f"[来源: {cited[0].metadata['source']}#{cited[0].metadata['section']}]"
    text = asyncio.run(chain.ainvoke(COMPARE)).to_string()                # async: through asearch
    assert COMPARE in text and cited[0].metadata["citation"] in text and cited[0].page_content in text
    only = LambdaRAGRetriever(config=PATIENT, cited_only=True).invoke(COMPARE)
    assert only and all(d.metadata["cited"] for d in only)


def test_a_langchain_vector_store_is_one_branch_of_a_par_merged_by_rrf(maritime_bm25):
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=64))
    store.add_documents(NOTES)
    branch = langchain_search(store.as_retriever(search_kwargs={"k": 3}), name="faq")
    pipeline = Par(build("bm25_search", {}), branch, merge=appended("candidates")) >> build("rrf_merge", {})
    assert str(pipeline) == "λq. Par(bm25_search, langchain_search(retriever=‹VectorStoreRetriever›, name=faq)) " \
                            ">> rrf_merge"
    assert pipeline.effect_signature() == "(io ∥ io) · pure"
    ctx = Context(resources={"index": maritime_bm25})
    public = pipeline.run(State.of("船长有什么权力？"), ctx).hits
    ranked = {h.chunk_id: h.ranks for h in public}
    assert ranked["faq-1"] == {"faq": ranked["faq-1"]["faq"]} and {"faq-1", "faq-2"} <= set(ranked)
    assert any("bm25" in r for r in ranked.values())
    top = [next(iter(h.ranks)) for h in public[:2]]
    assert sorted(top) == ["bm25", "faq"]                                 # RRF interleaves the two first places
    assert "port-1" not in ranked                                         # a labelled document stays hidden
    assert "port-1" in {h.chunk_id for h in pipeline.run(State.of("船长有什么权力？", user=PORT), ctx).hits}


def test_a_missing_extra_is_named(monkeypatch):
    missing_extra_is_named(monkeypatch, bridge, "langchain_core.retrievers", "langchain")


def test_a_bad_retriever_or_parameter_is_named():
    with pytest.raises(TypeError, match="langchain_search: retriever must be a langchain_core BaseRetriever, got list"):
        langchain_search([])
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=8))
    with pytest.raises(Exception, match="langchain_search: top_k must be a positive integer or None, got 0"):
        langchain_search(store.as_retriever(), top_k=0)
