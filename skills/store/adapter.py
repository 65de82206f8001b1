"""The query adapter: a linear map of the dense leg's query vector fitted from confirmed (question → chunk) pairs.

``W = argmin Σ w‖q W − p‖² + RIDGE ‖W − I‖²`` over the confirmed questions' query
vectors q (rows) and their chunks' passage vectors p (closed form, numpy only), so a
question like a confirmed one searches nearer the passages such questions were
confirmed on; the corpus's vectors stay as indexed. A query moves to the unit
blend ``q + BLEND (q W − q)`` only when its nearest confirmed question is at
least `FLOOR` close (and as close as the learned gate's cosine floor:
`LearnedIndex.dense_query`): a question unlike every confirmed one keeps its own vector.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

RIDGE = 1.0
BLEND = 0.5
FLOOR = 0.7
"""Ridge, blend and cosine floor, as bench/query_adapter.py chose them on STARD's tuning splits."""


@dataclass(frozen=True, eq=False)
class QueryAdapter:
    """A fitted map (d × d, applied as q @ matrix) with the blend and cosine floor it is applied behind."""

    matrix: np.ndarray
    blend: float = BLEND
    floor: float = FLOOR

    def apply(self, vector: np.ndarray, nearest: float) -> np.ndarray:
        """Returns the unit blend of `vector` and its mapped image when `nearest` (the closest confirmed question's
        cosine) reaches the floor and the blend is above 0, else `vector` itself."""
        if nearest < self.floor or self.blend <= 0:
            return vector
        q = np.asarray(vector, dtype=np.float32).ravel()
        moved = q + self.blend * (q @ self.matrix - q)
        return moved / max(float(np.linalg.norm(moved)), 1e-12)


def fit_adapter(questions: np.ndarray, passages: np.ndarray, weights: np.ndarray, ridge: float = RIDGE
                ) -> Optional[np.ndarray]:
    """Returns the map minimising Σ w‖q W − p‖² + ridge ‖W − I‖² over the rows (q, p, w), or None without rows."""
    if not len(questions):
        return None
    q = np.asarray(questions, dtype=np.float64)
    weighted = q * np.asarray(weights, dtype=np.float64)[:, None]
    eye = ridge * np.eye(q.shape[1])
    return np.linalg.solve(weighted.T @ q + eye, weighted.T @ np.asarray(passages, dtype=np.float64) + eye
                           ).astype(np.float32)
