"""Fusing ranked lists: reciprocal rank fusion, score-aware (z-score) fusion, and provenance-keeping merge.

Every fused hit keeps each contributing retriever's rank and score in
`Hit.ranks` / `Hit.scores`, so the trace shows why a chunk ranked where it did.
"""
from __future__ import annotations

from typing import Callable, Mapping, Optional, Sequence

import numpy as np

from lambdarag import Positive, tool
from .store.records import Candidates, Hit, Hits, HitsOut, RankedList, RetrievalPlan

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
        name = ranked.retriever
        hits = _unique(ranked.hits)
        for rank, (h, value) in enumerate(zip(hits, contribution(i, hits)), 1):
            cid = h.chunk_id
            if cid in base:
                total[cid] += value
                ranks, scores = prov[cid]
            else:
                total[cid] = 0.0 + value
                base[cid] = h
                prov[cid] = ranks, scores = {}, {}
            if name not in ranks or rank < ranks[name]:
                ranks[name], scores[name] = rank, h.scores.get(name, h.score)
    order = sorted(total, key=total.__getitem__, reverse=True)  # stable: ties keep first-seen order
    return tuple(base[cid].updated({"score": total[cid], "ranks": prov[cid][0], "scores": prov[cid][1]})
                 for cid in (order[:top] if top else order))


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

    def contribution(i: int, hits: list[Hit]) -> list[float]:
        name = lists[i].retriever
        s = np.array([h.scores.get(name, h.score) for h in hits], dtype=np.float64)
        if not len(s):
            return []
        mean, std = s.mean(), s.std()
        std = std if std > 1e-12 else 1.0
        return (w.get(name, 1.0) * ((s - mean) / std - (s.min() - mean) / std)).tolist()

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


@skill
@tool
def rrf_merge(candidates: Candidates, plan: RetrievalPlan, *, k: Positive = 60, weights: Weights = None) -> HitsOut:
    """Fuses `candidates` into `hits` by RRF (`weights` per retriever), keeping `plan.fused_top_k` hits."""
    return {"hits": rrf(candidates, k, dict(weights or {}), plan.fused_top_k)}


@skill
@tool
def score_fusion(candidates: Candidates, plan: RetrievalPlan, *, weights: Weights = None) -> HitsOut:
    """Fuses `candidates` into `hits` by weighted z-scores (`weights` per retriever), keeping `plan.fused_top_k`.

    The default weights (bm25 0.6, dense 1.0) are what 5-fold cross-validation
    picked on every fold of STARD's training split (bench/retrieval.py).
    """
    return {"hits": zscore(candidates, {**DEFAULT_ZSCORE_WEIGHTS, **dict(weights or {})}, plan.fused_top_k)}


DEFAULT_ZSCORE_WEIGHTS = {"bm25": 0.6, "dense": 1.0}


@skill
@tool
def merge_results(candidates: Candidates, hits: Hits) -> HitsOut:
    """Merges `candidates` into the current `hits`, each chunk once with all its provenance."""
    return {"hits": merge(hits, candidates)}
