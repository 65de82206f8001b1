"""Probe of a query-side linear adapter on the bundled embedder (issue 45 §2): is it a lever worth gating?

A d × d map W, fitted in closed form from confirmed (question → chunk) pairs — ridge regression of the
relevant chunk's passage vector on the question's query vector, shrunk towards the identity
(``W = argmin Σ‖W q − p‖² + λ‖W − I‖²``) — is applied to the query vector only: the corpus's vectors stay as
indexed. On STARD train, 5-fold CV (question i in fold i mod 5, the split of bench/feedback.py part 2): dense
top-10 of the held-out questions with the plain and the adapted query vector, MRR@10 overall and split into
seen / unseen questions (a relevant article confirmed in the other folds or not), per ridge λ.
Writes bench/results/feedback-adapter.json. No torch: numpy only.
Needs: ../shared/data/stard (train.jsonl, embeddings/).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.machine import facts, write  # noqa: E402

STARD = ROOT.parent / "shared" / "data" / "stard"
FOLDS = 5
RIDGES = (0.3, 1.0, 3.0, 10.0)


def adapter(questions: np.ndarray, passages: np.ndarray, ridge: float) -> np.ndarray:
    """Returns Wᵀ (d × d) minimising Σ‖W q − p‖² + ridge‖W − I‖² over the rows (q, p): a query is adapted as q @ Wᵀ."""
    d = questions.shape[1]
    return np.linalg.solve(questions.T @ questions + ridge * np.eye(d), questions.T @ passages + ridge * np.eye(d))


def reciprocal_ranks(queries: np.ndarray, passages: np.ndarray, relevant: list[set[int]]) -> np.ndarray:
    """Returns each query's reciprocal rank of its first relevant passage in the dense top 10 (0 when none)."""
    out = np.zeros(len(queries))
    for i, scores in enumerate(queries @ passages.T):
        top = np.argpartition(-scores, 10)[:10]
        top = top[np.argsort(-scores[top], kind="stable")]
        out[i] = next((1.0 / (r + 1) for r, t in enumerate(top) if t in relevant[i]), 0.0)
    return out


def main() -> dict:
    from lambdarag.orchestration.feedback.confirmations import embed_batches
    from lambdarag.skills.store.vectors import default_embedder

    before = facts()
    ids = [x for x in (STARD / "embeddings" / "ids.txt").read_text(encoding="utf-8").split("\n") if x]
    row = {c: i for i, c in enumerate(ids)}
    passages = np.load(STARD / "embeddings" / "vectors.f16.npy").astype(np.float32)
    queries = [json.loads(x) for x in (STARD / "train.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    vectors = embed_batches(default_embedder(), [q["query"] for q in queries])
    relevant = [{row[r] for r in q["relevant"] if r in row} for q in queries]
    fold = np.arange(len(queries)) % FOLDS
    plain = np.zeros(len(queries))
    adapted = {ridge: np.zeros(len(queries)) for ridge in RIDGES}
    seen = np.zeros(len(queries), dtype=bool)
    for f in range(FOLDS):
        learn = [i for i in np.flatnonzero(fold != f) if relevant[i]]
        test = np.flatnonzero(fold == f)
        taught = set().union(*(relevant[i] for i in learn))
        seen[test] = [bool(relevant[i] & taught) for i in test]
        held = [relevant[i] for i in test]
        plain[test] = reciprocal_ranks(vectors[test], passages, held)
        q = np.concatenate([np.repeat(vectors[[i]], len(relevant[i]), axis=0) for i in learn])
        p = np.concatenate([passages[sorted(relevant[i])] for i in learn])
        for ridge in RIDGES:
            moved = vectors[test] @ adapter(q, p, ridge)
            moved /= np.linalg.norm(moved, axis=1, keepdims=True)
            adapted[ridge][test] = reciprocal_ranks(moved, passages, held)

    def split(rr: np.ndarray) -> dict:
        return {"all": round(float(rr.mean()), 4), "seen": round(float(rr[seen].mean()), 4),
                "unseen": round(float(rr[~seen].mean()), 4)}
    return {"machine_before": before, "questions": len(queries), "folds": FOLDS, "seen": int(seen.sum()),
            "unseen": int((~seen).sum()), "metric": "dense MRR@10", "plain": split(plain),
            "adapted": {str(ridge): split(rr) for ridge, rr in adapted.items()},
            "note": "query vector adapted only; no learned signal, no gate: the lever on its own"}


if __name__ == "__main__":
    print(write("feedback-adapter", main()).read_text(encoding="utf-8"))
