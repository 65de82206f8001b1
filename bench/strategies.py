"""Strategy benchmark: each query type's route against plain retrievers on the same questions, plus route latency.

For every labelled question (type given, so routing mistakes do not blur the
comparison) it runs BM25, dense, plain hybrid (both retrievers, z-score fusion,
no rerank: `lambdarag eval --retriever hybrid`), hybrid with equal RRF, and the
same hybrid followed by the overlap reranker, and the
route of the question's type under two routing tables: `before` (the routing
and fusion main shipped with) and `after` (the configured one). It reports doc
recall@5 per type and system, and the median wall time of each route
(strategy + answer) before and after.

  python bench/strategies.py --index maritime                       # tests/data/maritime_questions.jsonl
  python bench/strategies.py --index laws --questions dev.jsonl --out strategies-dev.json
"""
from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("LAMBDARAG_FEEDBACK", "off")

from lambdarag import Context, State
from lambdarag.skills.store.records import RetrievalPlan
from lambdarag.skills.profile import in_domain as question_in_domain
from lambdarag.orchestration.config import load_config
from lambdarag.orchestration.knowledge import open_knowledge
from lambdarag.orchestration.metrics import score
from lambdarag.orchestration.plan import build_retrieval_plan, detect_intent
from lambdarag.orchestration.router import choose
from lambdarag.orchestration.setup import providers
from lambdarag.patterns.hybrid_search import hybrid_retrieval
from lambdarag.domains.prc_statutes.cues import query_entities

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "tests" / "data" / "maritime_questions.jsonl"
K = 5
BEFORE = {"fact": ("keyword_search",), "compare": ("graph_retrieval", "fusion_search"),
          "relation": ("graph_retrieval", "wiki_deep"), "synthesis": ("synthesis",), "temporal": ("temporal_search",)}
"""The routing table main shipped with when this benchmark was written (every pattern fused by equal RRF)."""


def top_documents(hits, k: int = K) -> list[str]:
    """Returns the first `k` distinct source documents of a ranking."""
    return list(dict.fromkeys(h.source for h in hits))[:k]


def plain_terms() -> dict[str, Any]:
    """Returns the plain retrievers, each `hybrid_retrieval` without learning, writing `hits`."""
    off, rrf = {"enabled": False}, {"hybrid_search": {"merge": "rrf"}}
    settings = {"bm25": {"skills": {"embedding": off, "rerank": off}, "patterns": rrf},
                "dense": {"skills": {"bm25": off, "rerank": off}, "patterns": rrf},
                "hybrid": {"skills": {"rerank": off}},
                "hybrid_rrf": {"skills": {"rerank": off}, "patterns": rrf},
                "hybrid_rerank": {"skills": {"rerank": {"enabled": True}}}}
    return {name: hybrid_retrieval(s, learned=False) for name, s in settings.items()}


def before_config(cfg):
    """Returns `cfg` as main shipped it: its routing table, equal-RRF fusion in every pattern, the overlap reranker on."""
    from lambdarag.orchestration.config import PatternConfig
    from lambdarag.patterns import REGISTRY

    routing = cfg.orchestration.routing.model_copy(update=BEFORE)
    patterns = {n: cfg.patterns.get(n, PatternConfig()).model_copy(update={"merge": "rrf"}) for n in REGISTRY}
    skills = cfg.retrieval.skills.model_copy(update={"rerank": cfg.retrieval.skills.rerank.model_copy(
        update={"enabled": True, "backend": "local"})})
    return cfg.model_copy(update={"orchestration": cfg.orchestration.model_copy(update={"routing": routing}),
                                  "patterns": patterns,
                                  "retrieval": cfg.retrieval.model_copy(update={"skills": skills})})


def machine() -> dict[str, Any]:
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    return {"cores": os.cpu_count(), "cpu": cpu, "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "load_average": list(os.getloadavg())}


def main(index: str, questions_path: Path, config: str | None = None) -> dict[str, Any]:
    cfg = load_config(config)
    prov = providers(cfg)
    kb = open_knowledge(cfg, index, embedder=prov["embedder"])
    cfg = kb.limit(cfg)
    ctx_of = lambda: Context(**prov, resources=kb.resources())  # noqa: E731  a fresh trace per run
    profile = kb.resources()["profile"]

    def in_domain(query: str) -> bool:
        return question_in_domain(profile, query, kb.index)

    questions = [json.loads(ln) for ln in questions_path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    plain = plain_terms()
    deep = RetrievalPlan(bm25_top_k=100, dense_top_k=100, fused_top_k=100)
    routes = {"before": before_config(cfg), "after": cfg}
    recalls: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    latency: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for q in questions:
        for name, term in plain.items():
            ranked = top_documents(term.run(State.of(q["query"], plan=deep), ctx_of()).hits)
            recalls[q["type"]][name].append(score(f"recall@{K}", ranked, dict.fromkeys(q["relevant"], 1.0)))
        plan = build_retrieval_plan(q["query"], detect_intent(q["query"], (), in_domain), cfg.orchestration.plan,
                                    query_type=q["type"])
        for name, c in routes.items():
            term = choose(c, q["type"], pack=profile.name).term
            state = State.of(q["query"], plan=plan, query_type=q["type"], entities=query_entities(q["query"]))
            started = time.perf_counter()
            out = term.run(state, ctx_of())
            latency[q["type"]][name].append((time.perf_counter() - started) * 1000)
            recalls[q["type"]][f"routed_{name}"].append(score(f"recall@{K}", top_documents(out.hits),
                                                              dict.fromkeys(q["relevant"], 1.0)))
    systems = [*plain, "routed_before", "routed_after"]
    per_type = {t: {s: round(statistics.mean(v[s]), 3) for s in systems} | {"n": len(v["bm25"])}
                for t, v in sorted(recalls.items())}
    overall = {s: round(statistics.mean([x for v in recalls.values() for x in v[s]]), 3) for s in systems}
    return {"index": index, "questions": str(questions_path.relative_to(ROOT) if questions_path.is_relative_to(ROOT)
                                             else questions_path), "n": len(questions),
            f"doc_recall@{K}": {"overall": overall, "per_type": per_type},
            "route_latency_ms_median": {t: {s: round(statistics.median(v), 1) for s, v in d.items()}
                                        for t, d in sorted(latency.items())},
            "routes": {name: {t: "+".join(c.orchestration.routing.targets(t)) for t in BEFORE} for name, c in routes.items()},
            "machine": machine()}


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", default="maritime")
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--config", default=None)
    ap.add_argument("--out", default=None, help="file name under bench/results (default strategies-<index>.json)")
    args = ap.parse_args()
    result = main(args.index, args.questions.resolve(), args.config)
    text = json.dumps(result, ensure_ascii=False, indent=1)
    (ROOT / "bench" / "results").mkdir(parents=True, exist_ok=True)
    (ROOT / "bench" / "results" / (args.out or f"strategies-{args.index}.json")).write_text(text + "\n", encoding="utf-8")
    sys.stdout.write(text + "\n")
