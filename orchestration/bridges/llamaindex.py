"""The LlamaIndex bridge (extra ``llamaindex``): LambdaRAG as a LlamaIndex retriever, and any LlamaIndex
retriever as a LambdaRAG skill.

>>> engine = RetrieverQueryEngine.from_args(LambdaRAGRetriever(index="mykb"), llm=llm)   # a BaseRetriever
>>> engine.query("船长有什么权力？").source_nodes[0].node.metadata["citation"]
>>> branch = llamaindex_search(vector_index.as_retriever(), name="notes")              # a term for a Par
"""
from __future__ import annotations

from typing import Any, Optional

from lambdarag import Term, User

from ..result import SearchResult
from ..search_unified import asearch, search
from .passages import Passage, foreign_search, missing_extra, passages

try:
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as e:
    raise missing_extra("LlamaIndex", "llamaindex") from e


def nodes(result: SearchResult, cited_only: bool) -> list[NodeWithScore]:
    """Returns a result's hits as LlamaIndex nodes with their scores, citations and chunk ids in their metadata.

    An LLM reading a node sees its text and citation marker only (so it can cite it), an embedder its text.
    """
    return [NodeWithScore(node=TextNode(id_=p.id, text=p.text, metadata=dict(p.metadata),
                                        excluded_llm_metadata_keys=[k for k in p.metadata if k != "citation"],
                                        excluded_embed_metadata_keys=list(p.metadata)), score=p.score)
            for p in passages(result, cited_only)]


class LambdaRAGRetriever(BaseRetriever):
    """A LlamaIndex retriever whose nodes are the hits of a LambdaRAG `search` (the routed pipeline of the config)
    on `index`, as `user` may see them; `cited_only` keeps the hits the answer cites. Async engines run `asearch`."""

    def __init__(self, index: Optional[str] = None, config: Any = None, user: Optional[User] = None,
                 cited_only: bool = False, **kwargs: Any) -> None:
        self.index, self.config, self.user, self.cited_only = index, config, user, cited_only
        super().__init__(**kwargs)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = search(query_bundle.query_str, index=self.index, user=self.user, config=self.config)
        return nodes(result, self.cited_only)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = await asearch(query_bundle.query_str, index=self.index, user=self.user, config=self.config)
        return nodes(result, self.cited_only)


def llamaindex_search(retriever: BaseRetriever, *, name: str = "llamaindex", top_k: Optional[int] = None) -> Term:
    """Returns a term that appends `retriever`'s nodes for the query to `candidates` as the ranked list `name`
    (`passages.foreign_search`): a node's id is its chunk id, its metadata its place and labels."""
    if not isinstance(retriever, BaseRetriever):
        raise TypeError(f"llamaindex_search: retriever must be a llama_index.core BaseRetriever, "
                        f"got {type(retriever).__name__}")

    def fetch(query: str) -> list[Passage]:
        return [Passage(n.node.node_id, n.node.get_content(), float(n.score or 0.0), n.node.metadata)
                for n in retriever.retrieve(query)]

    return foreign_search("llamaindex_search", retriever, fetch, name=name, top_k=top_k)
