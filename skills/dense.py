"""Dense retrieval: the `embedding_search` skill over the index's vectors (`skills.store.vectors`)."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from lambdarag import RankedList, Term, Tool

from .registry import skill
from .store.corpus import to_hits
from .store.vectors import default_embedder


def query_vector(ctx: Any, text: str) -> np.ndarray:
    """Returns the query embedding from `ctx.embedder` (the bundled model when none is set)."""
    return (ctx.embedder or default_embedder()).embed([text], kind="query")[0]


@skill("embedding_search")
def embedding_search(config: Mapping[str, Any]) -> Term:
    """Returns a term appending the dense ranking of `query` to `candidates`.

    Reads `plan.dense_top_k` (config `top_k` overrides); permission and
    metadata filters apply inside the index search. `candidates` is extended,
    not declared as a read (an accumulator that starts empty). When an
    embedding endpoint fails twice, `dense_unavailable` adds no list, so the
    pipeline goes on with lexical retrieval and the trace says why.
    """
    filters = dict(config.get("filters") or {})

    def run(state, ctx):
        backend = ctx.resource("index")
        k = int(config.get("top_k") or state.plan.dense_top_k)
        found = backend.dense(query_vector(ctx, state.query), k, user=state.user, filters=filters)
        ranked = RankedList(retriever="dense", query=state.query, hits=to_hits(found, "dense"))
        return {"candidates": state.candidates + (ranked,)}

    skip = Tool("dense_unavailable", lambda state: {"candidates": state.candidates}, writes=["candidates"])
    return Tool("embedding_search", run, reads=["query", "user", "plan"], writes=["candidates"], effect="io",
                fallback=skip)
