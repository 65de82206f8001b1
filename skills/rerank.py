"""The `rerank` skill: re-score fused hits against the user's original question."""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from lambdarag import Term, Tool
from lambdarag.providers.reranker import OverlapReranker

from .registry import skill


@skill
def rerank(config: Mapping[str, Any]) -> Term:
    """Returns a term ordering `hits` by `ctx.reranker` scores for `original_query`, keeping `plan.final_top_k`.

    Scores against the original question, not a rewritten variant, so that
    query expansion cannot drift the final order. Without `ctx.reranker` the
    local overlap reranker runs (no network); a rerank endpoint waits no
    longer than the deadline allows, and when it fails twice (or timed out
    earlier in the run) `rerank_local` runs instead and the trace says why; with
    `plan.rerank` off the order is kept and only truncated.
    """
    local = OverlapReranker()

    def ranked(state, score):
        top = int(config.get("top_k") or state.plan.final_top_k)
        hits = state.hits
        if not state.plan.rerank or not hits:
            return {"hits": hits[:top]}
        scores = score(state.original_query or state.query, [h.text for h in hits])
        order = sorted(range(len(hits)), key=lambda i: -scores[i])
        out = []
        for rank, i in enumerate(order[:top], 1):
            h = hits[i]
            out.append(h.model_copy(update={"score": float(scores[i]), "ranks": {**h.ranks, "rerank": rank},
                                            "scores": {**h.scores, "rerank": float(scores[i])}}))
        return {"hits": tuple(out)}

    reads = ["hits", "original_query", "query", "plan"]
    fallback = Tool("rerank_local", lambda state: ranked(state, local.scores), reads=reads, writes=["hits"])
    return Tool("rerank", lambda state, ctx: ranked(state, provider_scores(ctx, local)), reads=reads, writes=["hits"],
                effect="io", fallback=fallback)


def provider_scores(ctx: Any, local: Any) -> Callable[[str, Sequence[str]], list[float]]:
    """Returns ``score(query, documents)`` by `ctx.reranker` (else `local`), each call capped by the deadline."""
    reranker = ctx.reranker or local
    return lambda query, documents: ctx.call_provider("rerank", reranker.scores, query, documents)
