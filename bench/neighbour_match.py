"""How often a new STARD question's best-matching past question is a right one (shares a relevant article), by how
past questions are matched (`LearnedIndex.match`): the questions' cosine alone, with their BM25 words, the cosine
of the chunks they confirmed, and the unlearned rank of those chunks.

5-fold on STARD train (split 0: question order; other seeds shuffle, as bench/feedback.py --partition): the
questions of four folds are the past ones, each question of the fifth with a relevant article among theirs
("seen") is matched. The shipped `MATCH` weights were chosen on split 0; split 3 was not tuned on.
Writes bench/results/feedback-match.json.
Needs: the stard index (see bench/feedback.py).

Usage: python bench/neighbour_match.py [--splits 0 3]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.feedback import FOLDS, open_stard  # noqa: E402
from bench.machine import facts, write  # noqa: E402

MATCHINGS = {"cosine": {"answer": 0.0, "rank": 0.0, "words": 0.0},
             "cosine+words": {"answer": 0.0, "rank": 0.0, "words": 0.05},
             "cosine+answer": {"answer": 1.0, "rank": 0.0, "words": 0.0},
             "cosine+answer+words": {"answer": 1.0, "rank": 0.0, "words": 0.05},
             "cosine+answer+rank+words (shipped)": None}
"""Matchings compared (`LearnedIndex.match` weights; None: the shipped `MATCH`)."""


def split_rates(seed: int, vectors: np.ndarray, ranked: list[dict[str, int]]) -> dict:
    """Returns, per matching, the share of seen held-out questions whose best (and any of the best 5) matching
    past question shares a relevant article, over the five folds of split `seed`."""
    from lambdarag.orchestration.learning import build_learned
    from lambdarag.skills.store.learned import MATCH, LearnedParams, Pair

    backend, _, view, queries, chunks = open_stard(0)
    place = np.random.default_rng(seed).permutation(len(queries)) if seed else range(len(queries))
    fold = np.array([int(n) % FOLDS for n in place])
    relevant = [set(chunks[q["qid"]]) for q in queries]
    hits = {name: [] for name in MATCHINGS}
    hits5 = {name: [] for name in MATCHINGS}
    for f in range(FOLDS):
        past = np.flatnonzero(fold != f)
        learned = build_learned(view, [Pair(queries[i]["query"], tuple(relevant[i])) for i in past], vectors[past],
                                LearnedParams(), term_map={})
        taught = set().union(*(relevant[i] for i in past))
        for i in np.flatnonzero(fold == f):
            if not relevant[i] & taught:
                continue
            tokens = view.tokens(queries[i]["query"])
            for name, weights in MATCHINGS.items():
                order = np.argsort(-learned.match(vectors[i], tokens, ranked[i], weights or MATCH), kind="stable")
                right = [bool(relevant[i] & relevant[past[j]]) for j in order[:5]]
                hits[name].append(right[0])
                hits5[name].append(any(right))
    n = len(hits["cosine"])
    return {"seen_questions": n, "top1_right": {k: round(float(np.mean(v)), 4) for k, v in hits.items()},
            "top5_any_right": {k: round(float(np.mean(v)), 4) for k, v in hits5.items()}}


def main() -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--splits", type=int, nargs="+", default=[0, 3])
    args = p.parse_args()
    from lambdarag.orchestration.feedback.confirmations import embed_batches
    from lambdarag.orchestration.learning import base_ranking
    from lambdarag.skills.store.learned import MATCH

    backend, embedder, _, queries, _ = open_stard(0)
    before = facts()
    vectors = np.asarray(embed_batches(embedder, [q["query"] for q in queries]), dtype=np.float32)
    base = base_ranking(backend, embedder)
    ranked = [{c: r for r, (c, _) in enumerate(base(q["query"]).fused)} for q in queries]
    result = {"machine_before": before, "questions": len(queries), "folds": FOLDS,
              "matchings": {k: v or dict(MATCH) for k, v in MATCHINGS.items()},
              "splits": {str(s): split_rates(s, vectors, ranked) for s in args.splits}, "machine_after": facts()}
    write("feedback-match", result)
    return result


if __name__ == "__main__":
    import json

    print(json.dumps(main(), ensure_ascii=False, indent=1))
