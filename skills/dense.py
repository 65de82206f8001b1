"""Dense retrieval: the `embedding_search` skill over the index's vectors (`skills.store.vectors`)."""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import numpy as np

from lambdarag import Context, Count, User, tool
from .store.records import Candidates, CandidatesOut, RankedList, RetrievalPlan, Variant
from lambdarag.errors import ProviderError

from .registry import skill
from .store.corpus import to_hits
from .store.vectors import default_embedder, recent_query_vectors


def query_vector(ctx: Any, text: str, batch: Sequence[str] = ()) -> np.ndarray:
    """Returns the query embedding from `ctx.embedder` (the bundled model when none is set), embedded once per
    question (`recent_query_vectors`), together with the texts of `batch` not embedded yet (one call for all of a
    question's variants). An embedding endpoint waits no longer than the deadline allows (`Context.call_provider`).
    """
    embedder = ctx.embedder or default_embedder()
    texts = [text, *(t for t in batch if t != text)]
    return recent_query_vectors(embedder, texts,
                                lambda missing: ctx.call_provider("embedding", embedder.embed, missing, kind="query"))[0]


def dense_as_lexical(query, user, plan, ctx, candidates=(), variants=(), *, top_k=None, filters=None):
    """Appends the BM25 ranking instead (`embedding_search`'s fallback, with its contract)."""
    found = ctx.resource("index").bm25(query, int(top_k or plan.dense_top_k), user=user, filters=dict(filters or {}))
    ranked = RankedList(retriever="bm25", query=query, hits=to_hits(found, "bm25"))
    return {"candidates": candidates + (ranked,)}


@skill
@tool(effect="io", fallback=dense_as_lexical)
def embedding_search(query: str, user: User, plan: RetrievalPlan, ctx: Context, candidates: Candidates = (),
                     variants: tuple[Variant, ...] = (), *, top_k: Optional[Count] = None,
                     filters: Optional[Mapping[str, Any]] = None) -> CandidatesOut:
    """Appends the dense ranking of `query` to `candidates`.

    Takes `plan.dense_top_k` hits (`top_k` overrides); permission and
    metadata `filters` apply inside the index search. `candidates` is an
    optional read (an accumulator that starts empty). Run over `variants` (a `Map`), the first run embeds them
    all in one batch; the others find their vectors remembered. With a learned index
    (``ctx.resources["learned"]``) holding a query adapter, a question near a confirmed one searches with the
    adapted vector (`LearnedIndex.dense_query`); the question is still embedded once. When the index has no
    vectors (built with --no-dense) or an embedding endpoint fails twice, the
    fallback `dense_as_lexical` appends the BM25 ranking instead and the
    trace records why.
    """
    backend = ctx.resource("index")
    if not backend.has_dense:
        raise ProviderError("embedding_search: this index was built without vectors (--no-dense)")
    batch = [v.text for v in variants] if any(v.text == query for v in variants) else ()
    vector = query_vector(ctx, query, batch)
    learned = ctx.resources.get("learned")
    if learned is not None:
        vector = learned.dense_query(vector)
    found = backend.dense(vector, int(top_k or plan.dense_top_k), user=user, filters=dict(filters or {}))
    ranked = RankedList(retriever="dense", query=query, hits=to_hits(found, "dense"))
    return {"candidates": candidates + (ranked,)}
