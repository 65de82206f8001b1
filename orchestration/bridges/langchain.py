"""The LangChain bridge (extra ``langchain``): LambdaRAG as a LangChain retriever, and any LangChain retriever as
a LambdaRAG skill.

>>> docs = LambdaRAGRetriever(index="mykb").invoke("船长有什么权力？")      # a BaseRetriever: any chain takes it
>>> docs[0].metadata["chunk_id"], docs[0].metadata["citation"], docs[0].metadata["cited"]
>>> branch = langchain_search(vector_store.as_retriever(), name="faq")    # a term: Par(bm25_search, branch)
"""
from __future__ import annotations

from typing import Any, Optional

from lambdarag import Term, User

from ..result import SearchResult
from ..search_unified import asearch, search
from .passages import Passage, foreign_search, missing_extra, passages

try:
    from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ImportError as e:
    raise missing_extra("LangChain", "langchain") from e


def documents(result: SearchResult, cited_only: bool) -> list[Document]:
    """Returns a result's hits as LangChain documents, citations and chunk ids in their metadata."""
    return [Document(id=p.id, page_content=p.text, metadata={**p.metadata, "score": p.score})
            for p in passages(result, cited_only)]


class LambdaRAGRetriever(BaseRetriever):
    """A LangChain retriever whose documents are the hits of a LambdaRAG `search` (the routed pipeline of the
    config) on `index`, as `user` may see them; `cited_only` keeps the hits the answer cites. Async chains run
    `asearch`."""

    index: Optional[str] = None
    config: Any = None
    """A path to agent-config.yml or an `AgentConfig` (default: the packaged one)."""
    user: Optional[User] = None
    cited_only: bool = False

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return documents(search(query, index=self.index, user=self.user, config=self.config), self.cited_only)

    async def _aget_relevant_documents(self, query: str, *,
                                       run_manager: AsyncCallbackManagerForRetrieverRun) -> list[Document]:
        result = await asearch(query, index=self.index, user=self.user, config=self.config)
        return documents(result, self.cited_only)


def langchain_search(retriever: BaseRetriever, *, name: str = "langchain", top_k: Optional[int] = None) -> Term:
    """Returns a term that appends `retriever`'s documents for the query to `candidates` as the ranked list
    `name` (`passages.foreign_search`): a document's ``id`` is its chunk id, its metadata its place and labels."""
    if not isinstance(retriever, BaseRetriever):
        raise TypeError(f"langchain_search: retriever must be a langchain_core BaseRetriever, "
                        f"got {type(retriever).__name__}")

    def fetch(query: str) -> list[Passage]:
        return [Passage(d.id or f"{name}:{rank}", d.page_content, float(d.metadata.get("score", 0.0)), d.metadata)
                for rank, d in enumerate(retriever.invoke(query), 1)]

    return foreign_search("langchain_search", retriever, fetch, name=name, top_k=top_k)
