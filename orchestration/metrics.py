"""Ranking metrics for `lambdarag eval` and the benchmarks: Recall@k, MRR@k, nDCG@k in numpy.

They equal ranx's `recall@k`, `mrr@k` and `ndcg@k` (Järvelin's gain, binary or graded
relevance; tests/test_metrics.py checks this on the same runs) without pulling ranx's
numba/pandas stack into the core install.
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
        ranking = list(dict.fromkeys(run.get(qid, ())))
        gains = np.array([float(judged.get(doc, 0.0)) for doc in ranking])
        gains[gains < 0] = 0.0
        ideal = np.sort(np.array([g for g in judged.values() if g > 0], dtype=float))[::-1]
        for metric, (name, k) in zip(metrics, parsed):
            scores[metric][n] = _SCORES[name](gains[:k], ideal, k)
    return {m: float(s.mean()) if len(s) else 0.0 for m, s in scores.items()}


def _recall(gains: np.ndarray, ideal: np.ndarray, k: int) -> float:
    return float((gains > 0).sum() / len(ideal)) if len(ideal) else 0.0


def _mrr(gains: np.ndarray, ideal: np.ndarray, k: int) -> float:
    hits = np.flatnonzero(gains > 0)
    return 1.0 / (hits[0] + 1) if len(hits) else 0.0


def _ndcg(gains: np.ndarray, ideal: np.ndarray, k: int) -> float:
    def dcg(g: np.ndarray) -> float:
        return float((g / np.log2(np.arange(2, len(g) + 2))).sum())
    best = dcg(ideal[:k])
    return dcg(gains) / best if best else 0.0


_SCORES = {"recall": _recall, "mrr": _mrr, "ndcg": _ndcg}


def _parse(metric: str) -> tuple[str, int]:
    name, _, k = metric.partition("@")
    if name not in _SCORES or not k.isdigit() or int(k) < 1:
        raise ConfigError(f"metric {metric!r}: expected one of {', '.join(f'{n}@K' for n in _SCORES)} with K ≥ 1")
    return name, int(k)
