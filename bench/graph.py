"""Benchmark: wiki compile time on a corpus, and walk / find_entities latency medians.

Run: python bench/graph.py [--corpus ../shared/data/laws] [--out bench/results/graph.json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import write  # noqa: E402
from lambdarag.domains import profile_named  # noqa: E402
from lambdarag.skills.store.graph import EntityGraph  # noqa: E402
from lambdarag.domains.corpus import compile_wiki  # noqa: E402

QUERIES = ["海上交通安全法与水污染防治法在船舶管理方面有何异同？", "防治船舶污染海洋环境管理条例的立法依据是什么",
           "《中华人民共和国民法典》和公司法关于担保的规定", "国务院交通运输主管部门负责哪些工作"]


def median_ms(fn, repeat: int = 50) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 3)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "data" / "laws"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "graph.json"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as parent:
        tmp = Path(parent) / "wiki"  # a compile publishes the wiki folder as a link to its generation
        start = time.perf_counter()
        report = compile_wiki(args.corpus, tmp, progress=False)
        compile_s = time.perf_counter() - start
        start = time.perf_counter()
        again = compile_wiki(args.corpus, tmp, progress=False)
        noop_s = time.perf_counter() - start
        start = time.perf_counter()
        graph = EntityGraph.load(tmp / "relations.json", names=profile_named(report.domain).names)
        load_s = time.perf_counter() - start
        seeds = [graph.find_entities(q) for q in QUERIES]
        result = {
            "corpus": args.corpus, "documents": report.documents, "entities": report.entities,
            "relations": report.relations, "pages": report.pages_written,
            "compile_s": round(compile_s, 2), "recompile_unchanged_s": round(noop_s, 2), "noop": again.noop,
            "load_s": round(load_s, 2),
            "find_entities_ms": {q: median_ms(lambda q=q: graph.find_entities(q)) for q in QUERIES},
            "walk_2hop_20nodes_ms": {q: median_ms(lambda s=s: graph.walk(s, 2, 20)) for q, s in zip(QUERIES, seeds)},
            "relation_types": {},
        }
        for r in graph.records():
            result["relation_types"][r.relation] = result["relation_types"].get(r.relation, 0) + 1
    write("graph", result, args.out)
    print(json.dumps(result, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
