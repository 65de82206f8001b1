"""How often a new STARD question's best-matching past question is a right one (shares a relevant article), by how
past questions are matched (`PastQuestions.match`): the questions' cosine alone, with their BM25 words, the cosine
of the chunks they confirmed, and the unlearned rank of those chunks.

The product matches by the cosine (`LearnedIndex.nearest`): this probe's best matching lifted the rate from 0.375
to 0.54, but bench/feedback.py's fits with it ranked no better (bench/results/feedback-match-fits.json), so it stays
here. 5-fold on STARD train (split 0: question order; other seeds shuffle, as bench/feedback.py --partition): the
questions of four folds are the past ones, each question of the fifth with a relevant article among theirs
("seen") is matched. `MATCHINGS`' weights were chosen on split 0; split 3 was not tuned on.
Writes bench/results/feedback-match.json.
Needs: the stard index (see bench/feedback.py).

Usage: python bench/neighbour_match.py [--splits 0 3]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.feedback import FOLDS, open_stard  # noqa: E402
from bench.machine import facts, write  # noqa: E402

MATCHINGS = {"cosine": {"answer": 0.0, "rank": 0.0, "words": 0.0},
             "cosine+words": {"answer": 0.0, "rank": 0.0, "words": 0.05},
             "cosine+answer": {"answer": 1.0, "rank": 0.0, "words": 0.0},
             "cosine+answer+words": {"answer": 1.0, "rank": 0.0, "words": 0.05},
             "cosine+answer+rank+words": {"answer": 1.0, "rank": 0.2, "words": 0.05}}
"""Matchings compared: the weights `PastQuestions.match` adds its terms with."""


class PastQuestions:
    """Past questions as a matcher reads them: unit question vectors, their BM25 index, and the unit vectors of the
    chunks each confirmed."""

    def __init__(self, vectors: np.ndarray, tokens: Sequence[Sequence[str]], answers: Sequence[Sequence[int]],
                 chunk_vectors: np.ndarray, chunks: Sequence[Sequence[str]]) -> None:
        from lambdarag.skills.store.bm25 import Bm25Index

        self.vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        self.words = Bm25Index()
        self.words.add([list(t) for t in tokens])
        rows = [(i, r) for i, rs in enumerate(answers) for r in rs]
        v = np.asarray(chunk_vectors[[r for _, r in rows]], dtype=np.float32)
        self.answer_vectors = v / np.linalg.norm(v, axis=1, keepdims=True)
        self.answer_pair = np.array([i for i, _ in rows])
        self.chunk_pairs: dict[str, list[int]] = {}
        for i, cs in enumerate(chunks):
            for c in cs:
                self.chunk_pairs.setdefault(c, []).append(i)

    def match(self, vector: np.ndarray, tokens: Sequence[str], place: Mapping[str, int],
              weights: Mapping[str, float]) -> np.ndarray:
        """Returns every past question's match: its cosine to the unit query vector, plus (by `weights`) the cosine
        of the query and its closest confirmed chunk, 1 / (1 + its closest chunk's unlearned rank `place`), and
        its BM25 score for `tokens` over the best."""
        out = (self.vectors @ vector).astype(np.float64)
        answer = np.full(len(out), -1.0)
        np.maximum.at(answer, self.answer_pair, self.answer_vectors @ vector)
        out += weights["answer"] * np.where(answer > -1.0, answer, out)
        ranked = np.zeros(len(out))
        for c, r in place.items():
            for i in self.chunk_pairs.get(c, ()):
                ranked[i] = max(ranked[i], 1.0 / (1 + r))
        out += weights["rank"] * ranked
        words = self.words.scores(tokens)
        if words.max() > 0:
            out += weights["words"] * words / words.max()
        return out


def split_rates(seed: int, vectors: np.ndarray, ranked: list[dict[str, int]]) -> dict:
    """Returns, per matching, the share of seen held-out questions whose best (and any of the best 5) matching
    past question shares a relevant article, over the five folds of split `seed`."""
    backend, _, view, queries, chunks = open_stard(0)
    chunk_vectors = np.asarray(backend.vectors)
    own = {c.id: r for r, c in enumerate(backend.chunks())}
    place = np.random.default_rng(seed).permutation(len(queries)) if seed else range(len(queries))
    fold = np.array([int(n) % FOLDS for n in place])
    relevant = [set(chunks[q["qid"]]) for q in queries]
    hits = {name: [] for name in MATCHINGS}
    hits5 = {name: [] for name in MATCHINGS}
    for f in range(FOLDS):
        past = np.flatnonzero(fold != f)
        known = PastQuestions(vectors[past], [view.tokens(queries[i]["query"]) for i in past],
                              [[own[c] for c in relevant[i] if c in own] for i in past], chunk_vectors,
                              [sorted(relevant[i]) for i in past])
        taught = set().union(*(relevant[i] for i in past))
        for i in np.flatnonzero(fold == f):
            if not relevant[i] & taught:
                continue
            tokens = view.tokens(queries[i]["query"])
            vector = vectors[i] / np.linalg.norm(vectors[i])
            for name, weights in MATCHINGS.items():
                order = np.argsort(-known.match(vector, tokens, ranked[i], weights), kind="stable")
                right = [bool(relevant[i] & relevant[past[j]]) for j in order[:5]]
                hits[name].append(right[0])
                hits5[name].append(any(right))
    return {"seen_questions": len(hits["cosine"]),
            "top1_right": {k: round(float(np.mean(v)), 4) for k, v in hits.items()},
            "top5_any_right": {k: round(float(np.mean(v)), 4) for k, v in hits5.items()}}


def main() -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--splits", type=int, nargs="+", default=[0, 3])
    args = p.parse_args()
    from lambdarag.orchestration.feedback.confirmations import embed_batches
    from lambdarag.orchestration.learning import base_ranking

    backend, embedder, _, queries, _ = open_stard(0)
    before = facts()
    vectors = np.asarray(embed_batches(embedder, [q["query"] for q in queries]), dtype=np.float32)
    base = base_ranking(backend, embedder)
    ranked = [{c: r for r, (c, _) in enumerate(base(q["query"]).fused)} for q in queries]
    result = {"machine_before": before, "questions": len(queries), "folds": FOLDS, "matchings": MATCHINGS,
              "splits": {str(s): split_rates(s, vectors, ranked) for s in args.splits}, "machine_after": facts()}
    write("feedback-match", result)
    return result


if __name__ == "__main__":
    import json

    print(json.dumps(main(), ensure_ascii=False, indent=1))
