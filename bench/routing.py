"""Routing benchmark on the maritime statutes: routing accuracy, per-route document recall@5, latency per route.

Compares the routed pipeline (search_unified.search) with plain BM25 and plain
hybrid retrieval on the same labelled questions (tests/data/maritime_questions.jsonl),
and runs the seed's five standard questions as an A/B table (BM25 only vs routed).
Needs the index: lambdarag index --corpus ../shared/data/maritime --name maritime
Harder variant, the whole laws folder (the question paths are the same relative paths there), BM25 only:
  lambdarag index --corpus ../shared/data/laws --name laws --no-dense
  python bench/routing.py --index laws --config bench/no-dense.yml
"""
from __future__ import annotations

import json
import os
import statistics
import sys
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("LAMBDARAG_FEEDBACK", "off")  # measure routing as configured, without learning between questions

from bench.machine import write
from lambdarag import Context, State
from orchestration.config import load_config
from orchestration.knowledge import open_knowledge
from orchestration.router import settings_of
from orchestration.search_unified import providers, search
from patterns import build as build_pattern

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "tests" / "data" / "maritime_questions.jsonl"
SEED_QUESTIONS = ["2019年船员注册人数", "海上交通安全法与水污染防治法异同", "海事局的职责",
                  "船员管理法规体系梳理", "琼州海峡定线制最新版本"]
INDEX = "maritime"
K = 5


def top_documents(hits, k: int = K) -> list[str]:
    """Returns the first `k` distinct source documents of a ranking."""
    docs: list[str] = []
    for h in hits:
        source = h["source"] if isinstance(h, dict) else h.source
        if source not in docs:
            docs.append(source)
        if len(docs) == k:
            break
    return docs


def family(source: str) -> str:
    """Returns a statute's name without folder and version date: 行政法/船员条例(2023-07-20).md → 船员条例."""
    return source.rsplit("/", 1)[-1].split("(")[0]


def right_version(relevant: list[str], ranked: list[str]) -> float:
    """Returns 1 when, for each relevant document, the first ranked version of its family is that document."""
    ok = [next((r for r in ranked if family(r) == family(rel)), None) == rel for rel in relevant]
    return float(all(ok))


def recall(relevant: list[str], ranked: list[str]) -> float:
    return len(set(relevant) & set(ranked)) / len(relevant) if relevant else 0.0


def plain(name: str, question: str, cfg, kb, prov) -> list[str]:
    """Returns the top documents of one pattern run alone on the question."""
    term = build_pattern(name, settings_of(cfg))
    ctx = Context(**prov, resources=kb.resources())
    return top_documents(term.run(State.of(question), ctx).hits)


def main(index: str = INDEX, config: str | None = None) -> dict:
    cfg = load_config(config)
    prov = providers(cfg)
    kb = open_knowledge(cfg, index, embedder=prov["embedder"])
    questions = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    per_type: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    latency: dict[str, list[float]] = defaultdict(list)
    steps: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    confusion: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    versions: dict[str, list[float]] = defaultdict(list)
    correct = 0
    for q in questions:
        r = search(q["query"], index=index, config=cfg)
        correct += r.query_type == q["type"]
        confusion[q["type"]][r.query_type] += 1
        ranked = {"routed": top_documents(r.hits),
                  "bm25": plain("keyword_search", q["query"], cfg, kb, prov),
                  "hybrid": plain("hybrid_search", q["query"], cfg, kb, prov)}
        for system, docs in ranked.items():
            per_type[q["type"]][system].append(recall(q["relevant"], docs))
            if q["type"] == "temporal":
                versions[system].append(right_version(q["relevant"], docs))
        latency[r.strategy].append(r.latency_ms["total"])
        for step, ms in r.latency_ms.items():
            if step != "total":
                steps[q["type"]][step].append(ms)
    table = {t: {system: round(statistics.mean(v), 3) for system, v in systems.items()} | {"n": len(systems["routed"])}
             for t, systems in sorted(per_type.items())}
    overall = {system: round(statistics.mean([x for t in per_type.values() for x in t[system]]), 3)
               for system in ("routed", "bm25", "hybrid")}
    seed = []
    for question in SEED_QUESTIONS:
        r = search(question, index=index, config=cfg)
        seed.append({"question": question, "type": r.query_type, "strategy": r.strategy,
                     "bm25_top3": plain("keyword_search", question, cfg, kb, prov)[:3],
                     "routed_top3": top_documents(r.hits, 3), "answer_head": r.answer[:120]})
    return {
        "index": index, "config": config or "agent-config.yml", "questions": len(questions), "routing_accuracy": round(correct / len(questions), 3),
        "confusion": {k: dict(v) for k, v in confusion.items()},
        f"doc_recall@{K}": {"overall": overall, "per_type": table},
        "temporal_right_version_first": {s: round(statistics.mean(v), 3) for s, v in versions.items()},
        "latency_ms_median_per_strategy": {s: round(statistics.median(v), 1) for s, v in latency.items()},
        "latency_ms_median_per_type_step": {t: {s: round(statistics.median(v), 2) for s, v in d.items()}
                                            for t, d in steps.items()},
        "seed_questions": seed,
    }


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", default=INDEX)
    ap.add_argument("--config", default=None)
    args = ap.parse_args()
    out = main(args.index, args.config)
    write("routing" if args.index == INDEX else f"routing-{args.index}", out)
    sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=1) + "\n")
