"""Ranking metrics, the only ones: Recall@k, MRR@k, nDCG@k in numpy, for `lambdarag eval`, learning and the benchmarks.

They equal ranx's `recall@k`, `mrr@k` and `ndcg@k` (Järvelin's gain, binary or graded
relevance; tests/test_metrics.py checks this on the same runs) without pulling ranx's
numba/pandas stack into the core install. `evaluate` averages them over a run, `score`
gives one ranking's, and `ndcg_columns` scores many orderings of one question at once
(learning's fit ranks every weight setting in one matrix).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from lambdarag.errors import ConfigError

Qrels = Mapping[str, Mapping[str, float]]   # query id → document id → relevance (> 0 is relevant)
Run = Mapping[str, Sequence[str]]           # query id → document ids, best first


def evaluate(qrels: Qrels, run: Run, metrics: Sequence[str]) -> dict[str, float]:
    """Returns each metric (e.g. "recall@10", "mrr@10", "ndcg@10") averaged over the queries of `qrels`.

    A query missing from `run` scores 0; repeated documents in a ranking count once, at their first rank.
    """
    parsed = [_parse(m) for m in metrics]
    scores = {m: np.zeros(len(qrels)) for m in metrics}
    for n, (qid, judged) in enumerate(qrels.items()):
        gains, ideal = _gains(run.get(qid, ()), judged)
        for metric, (name, k) in zip(metrics, parsed):
            scores[metric][n] = _SCORES[name](gains[:k], ideal, k)
    return {m: float(s.mean()) if len(s) else 0.0 for m, s in scores.items()}


def score(metric: str, ranking: Sequence[str], judged: Mapping[str, float]) -> float:
    """Returns one metric (e.g. "ndcg@5") of one ranking, best first, against its judged documents (id → relevance)."""
    name, k = _parse(metric)
    gains, ideal = _gains(ranking, judged)
    return float(_SCORES[name](gains[:k], ideal, k))


def dcg(gains: np.ndarray) -> np.ndarray:
    """Returns the discounted cumulative gain of each column of `gains` (ranks × columns, best rank first).

    Summed rank by rank, however many columns there are, so one ordering scores
    the same to the last bit alone or beside others (`np.sum` pairs terms up
    along a single contiguous column, which changes the last bits).
    """
    if not len(gains):
        return np.zeros(gains.shape[1])
    return np.cumsum(gains / np.log2(np.arange(2, len(gains) + 2))[:, None], axis=0)[-1]


def ndcg_columns(gains: np.ndarray, ideal: np.ndarray, k: int) -> np.ndarray:
    """Returns nDCG@k of each column of `gains` (ranks × columns) against `ideal`, the judged gains best first."""
    best = float(dcg(ideal[:k, None])[0])
    return dcg(gains[:k]) / best if best else np.zeros(gains.shape[1])


def _gains(ranking: Sequence[str], judged: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Returns the gain at each rank of `ranking` (each document once, at its first rank) and the ideal gains."""
    gains = np.array([float(judged.get(doc, 0.0)) for doc in dict.fromkeys(ranking)])
    gains[gains < 0] = 0.0
    return gains, np.sort(np.array([g for g in judged.values() if g > 0], dtype=float))[::-1]


def _recall(gains: np.ndarray, ideal: np.ndarray, k: int) -> float:
    return float((gains > 0).sum() / len(ideal)) if len(ideal) else 0.0


def _mrr(gains: np.ndarray, ideal: np.ndarray, k: int) -> float:
    hits = np.flatnonzero(gains > 0)
    return 1.0 / (hits[0] + 1) if len(hits) else 0.0


def _ndcg(gains: np.ndarray, ideal: np.ndarray, k: int) -> float:
    return float(ndcg_columns(gains[:, None], ideal, k)[0])


_SCORES = {"recall": _recall, "mrr": _mrr, "ndcg": _ndcg}


def _parse(metric: str) -> tuple[str, int]:
    name, _, k = metric.partition("@")
    if name not in _SCORES or not k.isdigit() or int(k) < 1:
        raise ConfigError(f"metric {metric!r}: expected one of {', '.join(f'{n}@K' for n in _SCORES)} with K ≥ 1")
    return name, int(k)
