"""The `rerank` skill: re-score fused hits against the user's original question."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from lambdarag import Context, tool
from lambdarag.providers.reranker import OverlapReranker

from .registry import skill
from .store.records import Hits, HitsOut, RetrievalPlan

LOCAL = OverlapReranker()


def ranked(hits: Hits, question: str, plan: RetrievalPlan, top_k: Optional[int],
           score: Callable[[str, Sequence[str]], list[float]]) -> HitsOut:
    """Returns the writes of `rerank`: `hits` ordered by `score` against the question, the first `top_k` kept."""
    top = int(top_k or plan.final_top_k)
    if not plan.rerank or not hits:
        return {"hits": hits[:top]}
    scores = score(question, [h.text for h in hits])
    order = sorted(range(len(hits)), key=lambda i: -scores[i])
    out = []
    for rank, i in enumerate(order[:top], 1):
        h = hits[i]
        out.append(h.model_copy(update={"score": float(scores[i]), "ranks": {**h.ranks, "rerank": rank},
                                        "scores": {**h.scores, "rerank": float(scores[i])}}))
    return {"hits": tuple(out)}


def rerank_local(hits, original_query, query, plan, *, top_k=None):
    """`rerank` by the local overlap reranker (the endpoint failed twice), with its contract."""
    return ranked(hits, original_query or query, plan, top_k, LOCAL.scores)


@skill
@tool(effect="io", fallback=rerank_local)
def rerank(hits: Hits, original_query: str, query: str, plan: RetrievalPlan, ctx: Context, *,
           top_k: Optional[int] = None) -> HitsOut:
    """Orders `hits` by `ctx.reranker` scores for `original_query`, keeping `plan.final_top_k` (`top_k` overrides).

    Scores against the original question, not a rewritten variant, so that
    query expansion cannot drift the final order. Without `ctx.reranker` the
    local overlap reranker runs (no network); a rerank endpoint waits no
    longer than the deadline allows, and when it fails twice (or timed out
    earlier in the run) `rerank_local` runs instead and the trace says why; with
    `plan.rerank` off the order is kept and only truncated.
    """
    return ranked(hits, original_query or query, plan, top_k, provider_scores(ctx, LOCAL))


def provider_scores(ctx: Any, local: Any) -> Callable[[str, Sequence[str]], list[float]]:
    """Returns ``score(query, documents)`` by `ctx.reranker` (else `local`), each call capped by the deadline."""
    reranker = ctx.reranker or local
    return lambda query, documents: ctx.call_provider("rerank", reranker.scores, query, documents)
