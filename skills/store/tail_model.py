"""The learned tail stage: a pointwise logistic ranker of the candidates after the top `HEAD`, for recall@100.

The fitted tail weights (`LearnedParams.tail`) rank the tail by one linear mix of
the learned signals; a `TailModel` re-ranks that order again from the same columns
and a few derived ones (ranks among the tail, whether plain retrieval returned the
chunk, where the fitted tail put it), blended into the fitted tail's order by the
fit's `blend`. It only reorders chunks already ranked after the top `HEAD`, each
already checked for the reader's permission, so it can neither take the top 10
nor make a chunk reachable. `orchestration.learning.choose_tail_model` fits it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from lambdarag.errors import StoreCorrupt

VERSION = 1
"""The stored form's version: a model stored under another is not read (the tail then ranks as fitted without it)."""
TAIL_SIGNALS = ("neighbours", "expansion", "prior", "field", "families")
"""The learned signals the model reads: those the tail weights may read (the term-mapped search is never run for
the tail), each computed for a question whose tail acts once a model is held."""
TAIL_FEATURES = ("base", *TAIL_SIGNALS, "base_rr", "in_base", "tail_rr", "neighbours_rr", "families_rr", "log_prior")
"""Per tail chunk: its `score_matrix` columns (the standardised fused score, then each of `TAIL_SIGNALS`), 1/(1 +
its fused rank) and whether plain retrieval returned it, 1/(1 + its rank in the fitted tail's order), 1/(1 + its
rank by neighbours (0 where that is 0) and by families among the tail, and log(1 + 10 · prior)."""
RIDGE = 1.0
"""L2 penalty of the logistic fit (on standardised features)."""
NEWTON_STEPS = 25


def reciprocal_rank(values: np.ndarray) -> np.ndarray:
    """Returns 1/(1 + rank) of each value, the largest first (ties in order)."""
    ranks = np.empty(len(values), dtype=np.int64)
    ranks[np.argsort(-values, kind="stable")] = np.arange(len(values))
    return 1.0 / (1 + ranks)


def standard(s: np.ndarray) -> np.ndarray:
    """Returns `s` standardised (mean 0, deviation 1; a constant `s` is centred only)."""
    return (s - s.mean()) / max(float(s.std()), 1e-9)


@dataclass(frozen=True)
class TailModel:
    """A fitted pointwise ranker of the tail: feature means and scales, logistic weights (over the standardised
    `TAIL_FEATURES`) and how far its score moves the fitted tail's order (`blend`, in (0, 1])."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    blend: float

    def order(self, features: np.ndarray) -> np.ndarray:
        """Returns the blended score of each tail chunk (rows of `store.learned.tail_features`, in the fitted tail's
        order): `blend` × the model's standardised score + (1 − `blend`) × the fitted tail's (1/(1 + rank),
        standardised)."""
        z = (features - np.asarray(self.mean)) / np.asarray(self.scale)
        model = standard(z @ np.asarray(self.weights))
        return self.blend * model + (1 - self.blend) * standard(features[:, TAIL_FEATURES.index("tail_rr")])

    def to_dict(self) -> dict[str, Any]:
        return {"version": VERSION, "features": list(TAIL_FEATURES), "mean": list(self.mean),
                "scale": list(self.scale), "weights": list(self.weights), "blend": self.blend}

    @classmethod
    def from_dict(cls, data: Any) -> "TailModel":
        """Returns the model of a stored `to_dict`; raises StoreCorrupt naming the field when it is of another
        version, over other features, or not finite numbers of the right lengths."""
        if not isinstance(data, Mapping):
            raise StoreCorrupt(f"learned params: tail_model is a {type(data).__name__}, not a mapping")
        if data.get("version") != VERSION:
            raise StoreCorrupt(f"learned params: tail_model.version is {data.get('version')!r}, not {VERSION}")
        if list(data.get("features") or ()) != list(TAIL_FEATURES):
            raise StoreCorrupt(f"learned params: tail_model.features {data.get('features')!r} are not this "
                               f"version's {list(TAIL_FEATURES)}")
        values = {}
        for name in ("mean", "scale", "weights"):
            v = data.get(name)
            if not isinstance(v, list) or len(v) != len(TAIL_FEATURES) or not all(finite(x) for x in v):
                raise StoreCorrupt(f"learned params: tail_model.{name} is not {len(TAIL_FEATURES)} finite numbers")
            values[name] = tuple(float(x) for x in v)
        blend = data.get("blend")
        if not finite(blend) or not 0 < blend <= 1:
            raise StoreCorrupt(f"learned params: tail_model.blend {blend!r} is not a number in (0, 1]")
        if min(values["scale"]) <= 0:
            raise StoreCorrupt("learned params: tail_model.scale holds a scale that is not positive")
        return cls(**values, blend=float(blend))


def finite(x: Any) -> bool:
    """Returns whether `x` is a finite int or float (a stored bool is not a number here)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def logistic(x: np.ndarray, y: np.ndarray, ridge: float = RIDGE, steps: int = NEWTON_STEPS) -> np.ndarray:
    """Returns weights (last: intercept) of an L2 logistic regression of `y` on `x`, by Newton's method."""
    a = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(a.shape[1])
    penalty = ridge * np.eye(a.shape[1])
    penalty[-1, -1] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(a @ w)))
        grad = a.T @ (p - y) + penalty @ w
        hess = (a * (p * (1 - p))[:, None]).T @ a + penalty + 1e-9 * np.eye(a.shape[1])
        w -= np.linalg.solve(hess, grad)
    return w


def fit_tail_model(rows: Sequence[tuple[np.ndarray, np.ndarray]], blend: float) -> TailModel:
    """Returns the `TailModel` at `blend` of a pointwise logistic ranker of (tail features, relevance) rows."""
    x = np.vstack([f for f, _ in rows])
    mean, scale = x.mean(axis=0), np.maximum(x.std(axis=0), 1e-9)
    w = logistic((x - mean) / scale, np.concatenate([y for _, y in rows]).astype(np.float64))
    return TailModel(tuple(mean.tolist()), tuple(scale.tolist()), tuple(w[:-1].tolist()), float(blend))
