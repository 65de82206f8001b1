"""Dense retrieval: the `embedding_search` skill over the index's vectors (`skills.store.vectors`)."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from lambdarag import Term, Tool
from .store.records import RankedList
from lambdarag.errors import ProviderError

from .registry import skill
from .store.corpus import to_hits
from .store.vectors import default_embedder, recent_query_vector


def query_vector(ctx: Any, text: str) -> np.ndarray:
    """Returns the query embedding from `ctx.embedder` (the bundled model when none is set), embedded once per
    question (`recent_query_vector`). An embedding endpoint waits no longer than the deadline allows
    (`Context.call_provider`).
    """
    embedder = ctx.embedder or default_embedder()
    return recent_query_vector(embedder, text,
                               lambda: ctx.call_provider("embedding", embedder.embed, [text], kind="query")[0])


@skill
def embedding_search(config: Mapping[str, Any]) -> Term:
    """Returns a term appending the dense ranking of `query` to `candidates`.

    Reads `plan.dense_top_k` (config `top_k` overrides); permission and
    metadata filters apply inside the index search. `candidates` is extended,
an optional read (an accumulator that starts empty). When the index
    has no vectors (built with --no-dense) or an embedding endpoint fails
    twice, the fallback `dense_as_lexical` appends the BM25 ranking instead
    and the trace records why.
    """
    filters = dict(config.get("filters") or {})

    def run(state, ctx):
        backend = ctx.resource("index")
        if not backend.has_dense:
            raise ProviderError("embedding_search: this index was built without vectors (--no-dense)")
        k = int(config.get("top_k") or state.plan.dense_top_k)
        found = backend.dense(query_vector(ctx, state.query), k, user=state.user, filters=filters)
        ranked = RankedList(retriever="dense", query=state.query, hits=to_hits(found, "dense"))
        return {"candidates": state.candidates + (ranked,)}

    def lexical(state, ctx):
        k = int(config.get("top_k") or state.plan.dense_top_k)
        found = ctx.resource("index").bm25(state.query, k, user=state.user, filters=filters)
        ranked = RankedList(retriever="bm25", query=state.query, hits=to_hits(found, "bm25"))
        return {"candidates": state.candidates + (ranked,)}

    fallback = Tool("dense_as_lexical", lexical, reads=["query", "user", "plan"], optional=["candidates"],
                    writes=["candidates"], effect="io")
    return Tool("embedding_search", run, reads=["query", "user", "plan"], optional=["candidates"],
                writes=["candidates"], effect="io", fallback=fallback)
