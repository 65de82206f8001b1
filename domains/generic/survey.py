"""A survey question on documents of no known field starts from the plain hybrid ranking, and only adds to it.

The synthesis route's strategies (wiki pages, graph-expanded and rewritten
queries) widen the evidence, but on documentation their merged ranking can
put fewer of the relevant documents first than plain retrieval does; so the
hybrid ranking of the question (BM25 and dense, z-score fused) leads, and the
route's own hits follow it.
"""
from __future__ import annotations

from typing import Any

from lambdarag.skills.dense import query_vector
from lambdarag.skills.fusion import zscore
from lambdarag.skills.sides import interleave
from lambdarag.skills.store.corpus import to_hits
from lambdarag.skills.store.records import Hit, RankedList

LEAD = 50
"""Chunks of the plain ranking that go ahead of the route's hits."""


def hybrid_first(ctx: Any, state: Any) -> tuple[Hit, ...]:
    """Returns the question's hybrid ranking (at most `LEAD` chunks), then `state.hits` not already in it."""
    backend = ctx.resource("index")
    lists = [RankedList(retriever="bm25", query=state.query,
                        hits=to_hits(backend.bm25(state.query, LEAD, user=state.user), "bm25"))]
    if backend.has_dense:
        found = backend.dense(query_vector(ctx, state.query), LEAD, user=state.user)
        lists.append(RankedList(retriever="dense", query=state.query, hits=to_hits(found, "dense")))
    plain = zscore(lists, top=LEAD) if len(lists) > 1 else lists[0].hits
    return interleave([plain], state.hits, len(plain))
