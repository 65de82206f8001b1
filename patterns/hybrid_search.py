"""hybrid_search: λq. Par(bm25_search, embedding_search) >> score_fusion >> learned_boost >> rerank(q, _) >> versions_ahead."""
from __future__ import annotations

from typing import Any, Mapping

from lambdarag import Par, Term, appended

from .generic import keeps_lead
from .registry import enabled, params, pattern, registered, reranks, skill


def retrieve(settings: Mapping[str, Any]) -> Term:
    """Returns the enabled retrievers, in parallel when both are on (each appends to `candidates`)."""
    retrievers = [skill(settings, name) for name, component in (("bm25_search", "bm25"),
                                                                 ("embedding_search", "embedding"))
                  if enabled(settings, component)]
    if not retrievers:
        retrievers = [skill(settings, "bm25_search")]  # retrieval never switches off entirely
    return retrievers[0] if len(retrievers) == 1 else Par(*retrievers, merge=appended("candidates"))


FUSERS = {"rrf": "rrf_merge", "score": "score_fusion"}


def fusion(settings: Mapping[str, Any], name: str) -> Term:
    """Returns the pattern's fusion: ``merge: score`` (z-scores, the default) or ``merge: rrf`` with k and weights.

    Z-score fusion is the default because it beat equal-weight RRF on the
    routing benchmark's dev half (bench/results/strategies-dev.json).
    """
    p = params(settings, name)
    fuser = FUSERS.get(p.get("merge", "score"), "score_fusion")
    extra = {"k": p.get("rrf_k", 60)} if fuser == "rrf_merge" else {}  # z-score fusion has no k
    return skill(settings, fuser, **extra, **({"weights": p["weights"]} if p.get("weights") else {}))


def fuse(settings: Mapping[str, Any], name: str, learned: bool = True) -> Term:
    """Returns the pattern's fusion, the learned boost (a no-op until the index has learned) unless `learned` is
    false, then rerank if enabled."""
    merged = fusion(settings, name)
    if learned:
        merged = merged >> skill(settings, "learned_boost")
    return merged >> skill(settings, "rerank") if reranks(settings) else merged


def hybrid_retrieval(settings: Mapping[str, Any], name: str = "hybrid_search", learned: bool = True) -> Term:
    """Returns hybrid retrieval, built here only: the enabled retrievers (`retrieve`), the fusion of pattern `name`
    (`fusion`), the learned boost unless `learned` is false, rerank if enabled.

    Every pattern, `lambdarag eval --retriever`, learning's fit and the
    benchmarks build it through this function, so they rank alike.
    """
    return retrieve(settings) >> fuse(settings, name, learned)


@pattern("hybrid_search")
def hybrid_search(settings: Mapping[str, Any]) -> Term:
    """Returns lexical and dense retrieval run concurrently, fused (z-scores by default), reranked if enabled, the
    first documents' chunks ahead, one version each."""
    return hybrid(settings)


def hybrid(settings: Mapping[str, Any], ahead: str = "versions_ahead") -> Term:
    """Returns hybrid_search with `ahead` as its last step: the skill putting its first documents' chunks ahead
    (a pack's own orders them by its prior: statute_priors).

    Parameter ``priors_ahead`` (0 = off; unset: the skill's default,
    skills.diversify.AHEAD_WINDOW) is the number of first documents whose
    chunks go ahead, one version each, in the pack's prior order (for
    statutes: laws before regulations and interpretations); tuned on the dev
    sets of bench/data/routing, measured in bench/results/routing.json.
    """
    window = params(settings, "hybrid_search").get("priors_ahead")
    fused = hybrid_retrieval(settings)
    if window is None:
        return fused >> skill(settings, ahead)
    return fused >> skill(settings, ahead, window=int(window)) if int(window) else fused


def adds_to_hybrid(route: Term, settings: Mapping[str, Any], window: int = 5, ahead: int = 0) -> Term:
    """Returns `route` run beside hybrid_search, hybrid's best hit kept among its first `window` documents and its
    first `ahead` documents ahead of the route's own, unless the route's evidence there is stronger
    (patterns.generic.keeps_lead): a route adds to plain retrieval, never subtracts."""
    return keeps_lead(route, registered("hybrid_search", settings), window, ahead)
