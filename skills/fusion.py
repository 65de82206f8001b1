"""Fusing ranked lists: reciprocal rank fusion, score-aware (z-score) fusion, and provenance-keeping merge.

Every fused hit keeps each contributing retriever's rank and score in
`Hit.ranks` / `Hit.scores`, so the trace shows why a chunk ranked where it did.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from lambdarag import Term, Tool
from .store.records import Hit, RankedList

from .registry import skill

Weights = Optional[Mapping[str, float]]


def _unique(hits: Sequence[Hit]) -> list[Hit]:
    """Returns hits with repeated chunks removed (the first, best-ranked occurrence counts)."""
    seen, out = set(), []
    for h in hits:
        if h.chunk_id not in seen:
            seen.add(h.chunk_id)
            out.append(h)
    return out


def _combine(lists: Sequence[RankedList], contribution: Callable[[int, list[Hit]], list[float]],
             top: Optional[int]) -> tuple[Hit, ...]:
    """Returns hits ordered by the sum of per-list contributions, with merged provenance."""
    total: dict[str, float] = {}
    base: dict[str, Hit] = {}
    prov: dict[str, tuple[dict, dict]] = {}
    for i, ranked in enumerate(lists):
        hits = _unique(ranked.hits)
        for rank, (h, value) in enumerate(zip(hits, contribution(i, hits)), 1):
            total[h.chunk_id] = total.get(h.chunk_id, 0.0) + value
            if h.chunk_id not in base:
                base[h.chunk_id] = h
                prov[h.chunk_id] = ({}, {})
            ranks, scores = prov[h.chunk_id]
            if ranked.retriever not in ranks or rank < ranks[ranked.retriever]:
                ranks[ranked.retriever], scores[ranked.retriever] = rank, h.scores.get(ranked.retriever, h.score)
    order = sorted(total, key=lambda cid: -total[cid])  # stable: ties keep first-seen order
    out = []
    for cid in order[:top] if top else order:
        ranks, scores = prov[cid]
        out.append(base[cid].model_copy(update={"score": total[cid], "ranks": ranks, "scores": scores}))
    return tuple(out)


def rrf(lists: Sequence[RankedList], k: float = 60, weights: Weights = None, top: Optional[int] = None) -> tuple[Hit, ...]:
    """Returns reciprocal rank fusion: score(d) = Σ_lists w(retriever) / (k + rank of d in that list)."""
    w = dict(weights or {})

    def contribution(i: int, hits: list[Hit]) -> list[float]:
        weight = w.get(lists[i].retriever, 1.0)
        return [weight / (k + rank) for rank in range(1, len(hits) + 1)]

    return _combine(lists, contribution, top)


def zscore(lists: Sequence[RankedList], weights: Weights = None, top: Optional[int] = None) -> tuple[Hit, ...]:
    """Returns score-aware fusion: Σ_lists w · (score − mean) / std of that list, a missing hit counting as the list's minimum.

    Retrievers' raw scores live on different scales (BM25 sums, cosines);
    standardising per list makes them addable while keeping how far ahead a
    top hit is, which rank fusion throws away.
    """
    w = dict(weights or {})
    stats = []
    for ranked in lists:
        s = np.array([h.scores.get(ranked.retriever, h.score) for h in _unique(ranked.hits)], dtype=np.float64)
        mean, std = (s.mean(), s.std()) if len(s) else (0.0, 1.0)
        std = std if std > 1e-12 else 1.0
        stats.append((mean, std, ((s.min() - mean) / std) if len(s) else 0.0))

    def contribution(i: int, hits: list[Hit]) -> list[float]:
        mean, std, floor = stats[i]
        weight = w.get(lists[i].retriever, 1.0)
        return [weight * ((h.scores.get(lists[i].retriever, h.score) - mean) / std - floor) for h in hits]

    return _combine(lists, contribution, top)


def merge(first: Sequence[Hit], lists: Sequence[RankedList]) -> tuple[Hit, ...]:
    """Returns `first` followed by the lists interleaved by rank, each chunk once, provenance merged."""
    out: dict[str, Hit] = {}

    def take(h: Hit) -> None:
        if h.chunk_id in out:
            old = out[h.chunk_id]
            ranks, scores = dict(old.ranks), dict(old.scores)
            for r in h.ranks:
                if r not in ranks or h.ranks[r] < ranks[r]:
                    ranks[r], scores[r] = h.ranks[r], h.scores.get(r, h.score)
            out[h.chunk_id] = old.model_copy(update={"ranks": ranks, "scores": scores})
        else:
            out[h.chunk_id] = h

    for h in first:
        take(h)
    lists = [_unique(r.hits) for r in lists]
    for rank in range(max((len(l) for l in lists), default=0)):
        for hits in lists:
            if rank < len(hits):
                take(hits[rank])
    return tuple(out.values())


def _fusion_skill(name: str, fuse: Callable[[Sequence[RankedList], int], tuple[Hit, ...]]) -> Term:
    def run(state):
        return {"hits": fuse(state.candidates, state.plan.fused_top_k)}

    return Tool(name, run, reads=["candidates", "plan"], writes=["hits"], effect="pure")


@skill("rrf_merge")
def rrf_merge(config: Mapping[str, Any]) -> Term:
    """Returns a term fusing `candidates` into `hits` by RRF (config: k = 60, weights per retriever).

    Keeps `plan.fused_top_k` hits.
    """
    k = float(config.get("k", 60))
    weights = dict(config.get("weights") or {})
    return _fusion_skill("rrf_merge", lambda lists, top: rrf(lists, k, weights, top))


@skill("score_fusion")
def score_fusion(config: Mapping[str, Any]) -> Term:
    """Returns a term fusing `candidates` into `hits` by weighted z-scores (config: weights per retriever).

    The default weights (bm25 0.6, dense 1.0) are what 5-fold cross-validation
    picked on every fold of STARD's training split (bench/retrieval.py).
    """
    weights = {**DEFAULT_ZSCORE_WEIGHTS, **dict(config.get("weights") or {})}
    return _fusion_skill("score_fusion", lambda lists, top: zscore(lists, weights, top))


DEFAULT_ZSCORE_WEIGHTS = {"bm25": 0.6, "dense": 1.0}


@skill("merge_results")
def merge_results(config: Mapping[str, Any]) -> Term:
    """Returns a term merging `candidates` into the current `hits`, each chunk once with all its provenance."""

    def run(state):
        return {"hits": merge(state.hits, state.candidates)}

    return Tool("merge_results", run, reads=["candidates", "hits"], writes=["hits"], effect="pure")
