"""Probe of a learned second stage on STARD (issue 45): can a re-ranking of the learned hybrid's candidates lift
MRR@10 without costing the questions whose answers were never confirmed?

For one split (1-3: `bench/feedback.py --partition` seeds; 3 is the fresh split) each fold's learned hybrid is
rebuilt from the params that split's committed result stored (as bench/adapter_blend.py does), and every held-out
question's candidates are cached once (`$LAMBDARAG_HOME/cache/learned-rerank-<split>.pkl`): the unlearned fused list
and its BM25 and dense scores, every learned signal (computed whatever its weight, with the learned candidates), the
nearest confirmed question's cosine, whether the gate and the tail act, the shipped learned order, and where each
relevant chunk lies (fused list, learned candidates, BM25 top 1000, dense rank over the whole corpus). Re-rankings
of the cache are then measured in seconds (MRR@10, R@100, nDCG@10, overall and on the seen and unseen questions):
plain, the shipped learned order (checked against the committed result), a head stage (a pointwise or pairwise
logistic ranker re-ranking the shipped order's first `WINDOW` chunks, at fixed blends and at the floor and blend
cross-validated on the learning folds under the unseen bound) and a tail stage (a pointwise ranker re-ranking every
candidate after the shipped top 10, for recall@100, its blend cross-validated likewise under the product's tail
bound). Each stage is fitted on the other folds' questions only and acts only where the shipped gate (head) or tail
acted. A learning question's cached features were computed by its own fold's learned hybrid, which learned from the
held-out fold's pairs too, so a stage's weights are not strictly blind to that fold (a product fit would use inner
folds, as the gate's does). Writes bench/results/feedback-rerank.json (splits not named keep their entries).

Usage: python bench/learned_rerank.py [--splits 1 2]
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.adapter_blend import split_folds  # noqa: E402
from bench.feedback import FOLDS  # noqa: E402
from bench.machine import facts as machine_facts, results_dir, write  # noqa: E402
from lambdarag.orchestration.metrics import score  # noqa: E402
from lambdarag.skills.store.tail_model import logistic, standard  # noqa: E402

BM25_DEPTH = 1000
"""How deep the BM25 rank of a relevant chunk is looked up (the pool analysis)."""
FEATURES = ("base", "neighbours", "expansion", "terms", "prior", "field", "families", "base_rr", "in_base", "bm25",
            "dense", "shipped_rr")
"""Per-candidate features: the `score_matrix` columns (standardised fused score, then each signal as the learned
ranking scales it), 1/(1 + fused rank), whether plain retrieval returned it, its BM25 score over the list's
largest, its dense cosine, and 1/(1 + its rank in the shipped learned order)."""


def cache_path(split: int) -> Path:
    home = Path(os.environ.get("LAMBDARAG_HOME") or Path.home() / ".lambdarag")
    return home / "cache" / f"learned-rerank-{split}.pkl"


def every_signal(learned, backend, view, query: str, vector: np.ndarray, unlearned) -> tuple:
    """Returns a question's retrieved chunks (→ family), nearest confirmed questions, public reader and every learned
    signal (`learned_signals`, whatever its weight) of its `unlearned` ranking."""
    from lambdarag.skills.learned import learned_signals, reader
    from lambdarag.state import PUBLIC

    fused = {c: view.family.get(c, "") for c, _ in unlearned.fused}
    near = learned.nearest(vector)
    may_read = reader(backend, PUBLIC, {}, fused)
    return fused, near, may_read, learned_signals(learned, backend, backend.tokenizer(query), vector, near, fused,
                                                  PUBLIC, {}, 100, lexical=unlearned.lexical, may_read=may_read)


def question_entry(learned, backend, view, query: str, vector: np.ndarray, unlearned, relevant: set) -> dict:
    """Returns one question's cached candidates: ids (fused list first), the `FEATURES` matrix, the shipped learned
    order, gate facts and where its relevant chunks lie."""
    from dataclasses import replace

    from lambdarag.skills.learned import gated_signals, with_candidates
    from lambdarag.skills.store.learned import SIGNALS, arrange, score_matrix
    from lambdarag.state import PUBLIC

    base, lexical = unlearned.fused, unlearned.lexical
    fused, near, may_read, signals = every_signal(learned, backend, view, query, vector, unlearned)
    count = max(learned.params.candidates, 50)
    signals = with_candidates(signals, learned.candidate_scores(vector, near, fused, may_read, count=count))
    ids, matrix = score_matrix(base, {n: signals.get(n, {}) for n in SIGNALS})
    gated = gated_signals(learned, backend, query, vector, base, view.family, PUBLIC, {}, 100, lexical)
    opened = tailed = False
    shipped = [c for c, _ in base]
    if gated is not None:
        shown, opened, tailed = gated
        sid, smatrix = score_matrix(base, shown)
        params = learned.params if tailed else replace(learned.params, tail={})
        shipped = [c for c, _ in arrange(base, sid, smatrix, params, opened)[:100]]
    place = {c: i for i, c in enumerate(shipped)}
    ids = list(dict.fromkeys([*ids, *shipped]))
    matrix = np.vstack([matrix, np.zeros((len(ids) - len(matrix), matrix.shape[1]))])
    row = {c: i for i, c in enumerate(view.ids)}
    passages = backend.vectors
    dense = np.asarray(passages[[row[c] for c in ids]], dtype=np.float32) @ vector
    top = max(lexical.values(), default=0.0) or 1.0
    extra = np.array([[1.0 / (1 + i) if i < len(base) else 0.0, float(i < len(base)), lexical.get(c, 0.0) / top,
                       float(dense[i]), 1.0 / (1 + place[c]) if c in place else 0.0] for i, c in enumerate(ids)])
    everything = np.asarray(passages, dtype=np.float32) @ vector
    bm25 = {h.id: i for i, (h, _) in enumerate(backend.bm25(backend.tokenizer(query), BM25_DEPTH, user=PUBLIC))}
    return {"ids": ids, "n_base": len(base), "x": np.hstack([matrix, extra]).astype(np.float32),
            "shipped": shipped, "opened": bool(opened), "tailed": bool(tailed), "nearest": near.best,
            "relevant": sorted(relevant),
            "where": {c: {"fused": c in fused, "pool": c in set(ids),
                          "bm25_rank": bm25.get(c), "dense_rank": int((everything > everything[row[c]]).sum())}
                      for c in relevant if c in row}}


def build_cache(split: int, entry=question_entry, path: Optional[Path] = None,
                folds: Sequence[int] = range(FOLDS)) -> dict:
    """Returns (and stores, at `path`: default `cache_path`) the `entry` (default `question_entry`) of every question
    of `split`'s held-out `folds`, each ranked by its fold's learned hybrid."""
    from lambdarag.orchestration.learning import base_ranking, build_learned
    from lambdarag.skills.store.learned import LearnedParams, Pair

    backend, embedder, view, queries, chunks, vectors, row, fold_of, fits = split_folds(split)
    unlearned = base_ranking(backend, embedder)
    entries = {}
    for fold in folds:
        learn = [q for q in queries if fold_of[q["qid"]] != fold]
        pairs = [Pair(q["query"], chunks[q["qid"]]) for q in learn]
        learned = build_learned(view, pairs, vectors[[row[q["qid"]] for q in learn]],
                                LearnedParams.from_dict(fits[fold]))
        taught = {c for q in learn for c in chunks[q["qid"]]}
        for q in (q for q in queries if fold_of[q["qid"]] == fold):
            relevant = set(chunks[q["qid"]])
            entries[q["qid"]] = {"fold": fold, "seen": bool(relevant & taught), **entry(
                learned, backend, view, q["query"], vectors[row[q["qid"]]], unlearned(q["query"]), relevant)}
        print(f"split {split} fold {fold} cached", file=sys.stderr, flush=True)
    path = path or cache_path(split)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(entries))
    return entries


def load_cache(split: int, entry=question_entry, path: Optional[Path] = None,
               folds: Sequence[int] = range(FOLDS)) -> dict:
    """Returns the cache of `split`'s held-out `folds` at `path` (default `cache_path`), built by `build_cache` when
    missing."""
    path = path or cache_path(split)
    return pickle.loads(path.read_bytes()) if path.exists() else build_cache(split, entry, path, folds)


def metrics(order: list, relevant: set) -> np.ndarray:
    """Returns MRR@10, recall@100 and binary nDCG@10 of one ranking (`orchestration.metrics`, ranx's figures)."""
    judged = dict.fromkeys(relevant, 1.0)
    return np.array([score(m, order, judged) for m in ("mrr@10", "recall@100", "ndcg@10")])


def scores_of(entries: dict, orders: dict) -> dict:
    """Returns MRR@10 / R@100 / nDCG@10 of `orders` (qid → ranking) overall and on the seen and unseen questions."""
    out = {}
    for subset, keep in (("all", lambda e: True), ("seen", lambda e: e["seen"]), ("unseen", lambda e: not e["seen"])):
        qids = [q for q, e in entries.items() if keep(e)]
        m = np.mean([metrics(orders[q], set(entries[q]["relevant"])) for q in qids], axis=0)
        out[subset] = {"n": len(qids), "mrr@10": round(float(m[0]), 4), "recall@100": round(float(m[1]), 4),
                       "ndcg@10": round(float(m[2]), 4)}
    return out


def pool(entries: dict) -> dict:
    """Returns where the relevant chunks the shipped top 100 misses lie, as shares of all relevant chunks: among
    the learned candidates below 100, in the BM25 top 1000 or the dense top 1000 but no candidate, or deeper."""
    counts = dict.fromkeys(("shipped_top100", "pool_below_100", "bm25_or_dense_top1000", "deeper"), 0)
    for e in entries.values():
        top = set(e["shipped"][:100])
        for c, w in e["where"].items():
            if c in top:
                counts["shipped_top100"] += 1
            elif w["pool"]:
                counts["pool_below_100"] += 1
            elif (w["bm25_rank"] is not None) or w["dense_rank"] < BM25_DEPTH:
                counts["bm25_or_dense_top1000"] += 1
            else:
                counts["deeper"] += 1
    total = sum(counts.values())
    return {"relevant_chunks": total, **{k: round(v / total, 4) for k, v in counts.items()}}



WINDOW = 30
"""How many of the shipped order's first chunks the head stage re-ranks (the rest keep their places)."""
DERIVED = ("dense_rank", "bm25_rank", "families_rank", "neighbours_rank", "nearest_neighbours", "nearest_top",
           "log_prior", "families_dense", "nearest_prior")
"""Features derived from `FEATURES` among the chunks ranked together: 1/(1 + rank) by dense, BM25, families and
(where it scores) neighbours; neighbours × the nearest cosine; whether it has the largest neighbour score; log of
the prior; families × dense; the nearest cosine × prior."""


def reciprocal_rank(v: np.ndarray) -> np.ndarray:
    return 1.0 / (1 + np.argsort(np.argsort(-v, kind="stable"), kind="stable"))


def features(e: dict, chunks: list) -> np.ndarray:
    """Returns the `FEATURES` and `DERIVED` rows of `chunks` of one question, derived among them."""
    where = {c: i for i, c in enumerate(e["ids"])}
    x = e["x"][[where[c] for c in chunks]].astype(np.float64)
    col = {n: x[:, i] for i, n in enumerate(FEATURES)}
    scored = col["neighbours"] > 0
    return np.hstack([x, np.column_stack([
        reciprocal_rank(col["dense"]), reciprocal_rank(col["bm25"]), reciprocal_rank(col["families"]),
        reciprocal_rank(col["neighbours"]) * scored, col["neighbours"] * e["nearest"],
        (col["neighbours"] >= col["neighbours"].max() - 1e-9) * scored, np.log1p(10 * col["prior"]),
        col["families"] * col["dense"], e["nearest"] * col["prior"]])])


def head_chunks(e: dict) -> list:
    """The chunks the head stage re-ranks: the first `WINDOW` of the shipped order."""
    return e["shipped"][:WINDOW]


def tail_chunks(e: dict) -> list:
    """The chunks the tail stage re-ranks: every candidate but the shipped top 10."""
    top = set(e["shipped"][:10])
    return [c for c in e["ids"] if c not in top]


def labelled(entries: list, chunks, acts: str) -> list:
    """Returns (features, relevance) of `chunks(e)` for each of `entries` where the shipped `acts` ("opened": the
    gate, "tailed": the tail)."""
    out = []
    for e in entries:
        if e[acts]:
            ranked = chunks(e)
            out.append((features(e, ranked), np.array([c in set(e["relevant"]) for c in ranked])))
    return out


def standardiser(rows: list) -> tuple[np.ndarray, np.ndarray]:
    x = np.vstack([x for x, _ in rows])
    return x.mean(axis=0), np.maximum(x.std(axis=0), 1e-9)


def pointwise(rows: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Returns (mean, scale, weights) of a pointwise logistic ranker of `labelled` rows."""
    mean, scale = standardiser(rows)
    return mean, scale, logistic((np.vstack([x for x, _ in rows]) - mean) / scale,
                                 np.concatenate([y for _, y in rows]).astype(np.float64))


def pairwise(rows: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Returns (mean, scale, weights) of a pairwise logistic ranker (RankNet, linear) of `labelled` rows: each
    relevant chunk against each irrelevant one of its question, both orders."""
    mean, scale = standardiser(rows)
    pairs = []
    for x, rel in rows:
        z = (x - mean) / scale
        if rel.any() and (~rel).any():
            pairs.append((z[rel][:, None, :] - z[~rel][None, :, :]).reshape(-1, z.shape[1]))
    d = np.vstack(pairs)
    w = logistic(np.vstack([d, -d]), np.concatenate([np.ones(len(d)), np.zeros(len(d))]))
    return mean, scale, np.append(w[:-1], 0.0)


def moved(e: dict, chunks: list, model: tuple, blend: float) -> list:
    """Returns `chunks` ordered by `blend` × `model`'s standardised score + (1 − `blend`) × the shipped order's
    (1/(1 + rank), standardised)."""
    mean, scale, w = model
    x = features(e, chunks)
    s = blend * standard(((x - mean) / scale) @ w[:-1]) + (1 - blend) * standard(x[:, FEATURES.index("shipped_rr")])
    return [chunks[i] for i in np.argsort(-s, kind="stable")]


def reranked(e: dict, model: tuple, floor: float = -1.0, blend: float = 1.0) -> list:
    """Returns a question's order with its `head_chunks` re-ranked (`moved`) when the shipped gate opened and the
    nearest confirmed question reaches `floor`; a chunk plain retrieval did not return stays out of the top 10."""
    if not e["opened"] or e["nearest"] < floor:
        return e["shipped"]
    order = moved(e, head_chunks(e), model, blend)
    base = set(e["ids"][:e["n_base"]])
    top = [c for c in order if c in base][:10]
    return top + [c for c in order if c not in top] + e["shipped"][WINDOW:]


def tail_reranked(e: dict, model: tuple, blend: float = 1.0) -> list:
    """Returns a question's order with its `tail_chunks` re-ranked (`moved`) below the shipped top 10, where the
    shipped tail acts."""
    return e["shipped"][:10] + moved(e, tail_chunks(e), model, blend) if e["tailed"] else e["shipped"]


RANKERS = {"pointwise": pointwise, "pairwise": pairwise}
"""The head stage's rankers, each fitted on the learning folds' gate-open questions."""
FLOORS = (-1.0, 0.94)
"""Cosine floors of the nearest confirmed question below which the head stage keeps the shipped order."""
BLENDS = (0.25, 0.5, 1.0)
"""How far a stage's score moves the shipped order (`moved`)."""
SETTINGS = tuple((f, b) for f in FLOORS for b in BLENDS)
"""The head stage's (floor, blend) settings; the tail stage's are the `BLENDS`."""
HEAD_BOUND = ("mrr@10", "ndcg@10", 0.005)
"""The head stage's setting: best MRR@10 whose unseen nDCG@10 loses at most 0.005 against plain (the product's
bound)."""
TAIL_BOUND = ("recall@100", "recall@100", 0.01)
"""The tail stage's blend: best R@100 whose unseen R@100 loses at most 0.01 against plain (the product's tail
bound, `orchestration.learning.UNSEEN_RECALL_LOSS`)."""


def plain_order(e: dict) -> list:
    return e["ids"][:e["n_base"]]


def head_fit(ranker):
    return lambda entries: ranker(labelled(list(entries), head_chunks, "opened"))


def tail_fit(entries):
    return pointwise(labelled(list(entries), tail_chunks, "tailed"))


def head_order(e: dict, model: tuple, setting: tuple) -> list:
    return reranked(e, model, *setting)


def tail_order(e: dict, model: tuple, blend: float) -> list:
    return tail_reranked(e, model, blend)


def choose(entries: dict, fit, order, settings: tuple, bound: tuple):
    """Returns the setting of best `bound[0]` whose unseen `bound[1]` loses at most `bound[2]` against plain, by
    cross-validation over the folds of `entries` (each fold ordered by `order(e, fit(the other folds), setting)`);
    None when none does."""
    goal, guarded, loss = bound
    orders = {s: {} for s in settings}
    for g in sorted({e["fold"] for e in entries.values()}):
        model = fit(e for e in entries.values() if e["fold"] != g)
        for setting in settings:
            orders[setting].update({q: order(e, model, setting) for q, e in entries.items() if e["fold"] == g})
    plain = scores_of(entries, {q: plain_order(e) for q, e in entries.items()})["unseen"][guarded]
    report = {s: scores_of(entries, o) for s, o in orders.items()}
    safe = [s for s in settings if report[s]["unseen"][guarded] >= plain - loss]
    return max(safe, key=lambda s: report[s]["all"][goal], default=None)


def cross_fitted(entries: dict, fit, order, setting=None, settings: tuple = (), bound: tuple = ()) -> tuple[dict, list]:
    """Returns every question's order by `order(e, fit(the other folds), setting)`, the setting fixed or, when None,
    chosen on the other folds (`choose` among `settings` under `bound`; none: the shipped order), and each fold's
    setting."""
    orders, chosen = {}, []
    for f in range(FOLDS):
        learn = {q: e for q, e in entries.items() if e["fold"] != f}
        held = {q: e for q, e in entries.items() if e["fold"] == f}
        pick = setting if setting is not None else choose(learn, fit, order, settings, bound)
        chosen.append(pick)
        model = fit(learn.values()) if pick is not None else None
        orders.update({q: order(e, model, pick) if pick is not None else e["shipped"] for q, e in held.items()})
    return orders, chosen


def split_result(split: int) -> dict:
    """Returns the pool analysis and the scores of plain, shipped, each head ranker and the tail stage (at fixed
    settings and at the setting cross-validated on the learning folds) on `split`."""
    entries = load_cache(split)
    out = {"questions": len(entries), "gate_open": sum(e["opened"] for e in entries.values()),
           "unseen_gate_open": sum(e["opened"] and not e["seen"] for e in entries.values()), "pool": pool(entries),
           "plain": scores_of(entries, {q: plain_order(e) for q, e in entries.items()}),
           "shipped": scores_of(entries, {q: e["shipped"] for q, e in entries.items()})}
    stages = {f"head {name}": (head_fit(ranker), head_order, SETTINGS, HEAD_BOUND, lambda b: (-1.0, b))
              for name, ranker in RANKERS.items()}
    stages["tail pointwise"] = (tail_fit, tail_order, BLENDS, TAIL_BOUND, lambda b: b)
    for name, (fit, order, settings, bound, fixed) in stages.items():
        for blend in BLENDS:
            out[f"{name}, blend {blend}"] = scores_of(entries, cross_fitted(entries, fit, order, fixed(blend))[0])
        orders, chosen = cross_fitted(entries, fit, order, settings=settings, bound=bound)
        out[f"{name}, fitted setting"] = {**scores_of(entries, orders), "settings": chosen}
    return out


def main() -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--splits", type=int, nargs="+", default=[1, 2])
    args = p.parse_args()
    kept = results_dir() / "feedback-rerank.json"
    result = json.loads(kept.read_text(encoding="utf-8")) if kept.exists() else {"splits": {}}
    result.update({"features": [*FEATURES, *DERIVED], "window": WINDOW, "floors": list(FLOORS),
                   "blends": list(BLENDS), "head_bound": list(HEAD_BOUND),
                   "tail_bound": list(TAIL_BOUND)})
    for split in args.splits:
        result["splits"][str(split)] = {"machine_before": machine_facts(), **split_result(split)}
        write("feedback-rerank", result)
    return result


if __name__ == "__main__":
    json.dump(main(), sys.stdout, ensure_ascii=False, indent=1)
    print()
