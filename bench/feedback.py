"""Feedback-loop benchmark: what learning adds on the maritime statutes, and whether learned synonyms help on STARD.

Part 1 (maritime): 20 labelled questions (tests/data/maritime_questions.jsonl) asked
in three passes through search_unified.search() with feedback on, on a copy of the
built `maritime` index and wiki (so the shared one is not changed). Reports graph
growth (each learned item traced back to its query-log record), cache hit rate of
passes 2 and 3, and the routing statistics.
Needs: lambdarag index --corpus ../shared/data/maritime --name maritime

Part 2 (STARD): BM25 over the 58.6k articles (index `stard_bm25`, built once, no
vectors needed for this lever). 5-fold cross-validation on train.jsonl: synonyms are
learned (`SynonymLearner`) from four folds' question–article pairs and expand the
BM25 query tokens (`expand_tokens`) of the fifth fold's questions. Recall@10/100 and
MRR@10 with and without, overall and split into "seen" questions (a relevant article
also answers a question of the learning folds) and "unseen" ones.

Usage: python bench/feedback.py [--skip-maritime] [--skip-stard]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import write  # noqa: E402

STARD = ROOT.parent / "shared" / "data" / "stard"
QUESTIONS = ROOT / "tests" / "data" / "maritime_questions.jsonl"
OUT = ROOT / "bench" / "results" / "feedback.json"
FOLDS = 5
PASSES = 3


def maritime() -> dict:
    """Returns graph growth, cache hit rates and routing stats of three passes over 20 questions."""
    import yaml

    from skills.index import knowledge_root

    source = knowledge_root() / "maritime"
    if not (source / "index" / "manifest.json").is_file() or not (source / "wiki" / "relations.json").is_file():
        raise SystemExit("build the maritime index first: lambdarag index --corpus ../shared/data/maritime --name maritime")
    home = Path(tempfile.mkdtemp(prefix="feedback-bench-"))
    shutil.copytree(source / "index", home / "maritime" / "index", ignore=shutil.ignore_patterns("*.lock"))
    shutil.copytree(source / "wiki", home / "maritime" / "wiki", ignore=shutil.ignore_patterns("*.lock", "analyses"))
    os.environ["LAMBDARAG_HOME"] = str(home)
    os.environ["LAMBDARAG_FEEDBACK"] = "on"
    from orchestration.config import DEFAULT_CONFIG, parse_config
    from orchestration.feedback import FeedbackLoop, feedback_dir
    from orchestration.search_unified import search
    from skills.graph import EntityGraph

    data = yaml.safe_load(DEFAULT_CONFIG.read_text(encoding="utf-8"))
    data["orchestration"]["feedback"].update({"cacheAfter": 1})
    config = parse_config(yaml.safe_dump(data, allow_unicode=True))
    questions = [json.loads(x) for x in QUESTIONS.read_text(encoding="utf-8").splitlines() if x.strip()]
    by_type: dict[str, list] = {}
    for q in questions:
        by_type.setdefault(q["type"], []).append(q)
    picked = [q for i in range(20) for qs in by_type.values() if i < len(qs) for q in [qs[i]]][:20]
    wiki = home / "maritime" / "wiki"
    before = EntityGraph.load(wiki / "relations.json")
    loop = FeedbackLoop(config.orchestration.feedback, feedback_dir("maritime"))
    passes = []
    for n in range(PASSES):
        hits, latency = 0, []
        for q in picked:
            r = search(q["query"], index="maritime", config=config)
            hits += r.from_cache
            latency.append(r.latency_ms["total"])
        graph_writes = sum(1 for i in loop.items().values() if i["entities"] or i["relations"])
        passes.append({"pass": n + 1, "cache_hits": hits, "hit_rate": round(hits / len(picked), 3),
                       "median_ms": round(sorted(latency)[len(latency) // 2], 1),
                       "graph_writes_so_far": graph_writes})
    after = EntityGraph.load(wiki / "relations.json")
    items = loop.items()
    logged = {r["query_id"]: r for r in loop.log}
    learned_relations = [r for r in after.records() if r.origin == "feedback" and r.provenance.get("query_id") in items]
    traced = sum(1 for r in learned_relations if r.provenance.get("query_id") in items
                 and r.provenance["query_id"] in logged and r.source in r.provenance.get("sources", ()))
    examples = [f"{r.head} --{r.relation}--> {r.tail} [{r.source}#{r.section}] ← {r.provenance['query_id']}"
                for r in learned_relations[:8]]
    stats = loop.stats()
    return {"questions": len(picked), "types": dict(Counter(q["type"] for q in picked)), "passes": passes,
            "graph": {"entities_before": len(before), "entities_after": len(after),
                      "relations_before": before.g.number_of_edges(), "relations_after": after.g.number_of_edges(),
                      "learned_items": len(items), "learned_relations": len(learned_relations),
                      "learned_entities": sum(len(i["entities"]) for i in items.values()),
                      "analyses": sum(1 for i in items.values() if i["analysis"]),
                      "relations_traced_to_query_log": traced, "examples": examples},
            "routing": stats["routing"], "gaps": stats["gaps"], "queries_logged": stats["queries"]}


def rank_docs(backend, tokens, k=100) -> list[str]:
    return list(dict.fromkeys(chunk.doc_id for chunk, _ in backend.bm25(tokens, k)))


def stard() -> dict:
    """Returns BM25 metrics with and without learned synonyms, 5-fold cross-validated on STARD train."""
    from orchestration.feedback import qrels_pairs, synonym_learner
    from orchestration.metrics import evaluate
    from skills.lexical import expand_tokens
    from skills.index import build_index

    start = time.perf_counter()
    backend = build_index(STARD / "corpus.jsonl", "stard_bm25", dense=False, progress=True)
    built = time.perf_counter() - start
    queries = [json.loads(x) for x in (STARD / "train.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    fold_of = {q["qid"]: i % FOLDS for i, q in enumerate(queries)}
    runs = {"bm25": {}, "bm25+synonyms": {}}
    seen: dict[str, bool] = {}
    learned_sizes, expanded = [], 0
    for fold in range(FOLDS):
        train = [q for q in queries if fold_of[q["qid"]] != fold]
        test = [q for q in queries if fold_of[q["qid"]] == fold]
        synonyms = {t: list(alts) for t, alts in synonym_learner(backend).learn(
            qrels_pairs(backend, [(q["query"], q["relevant"]) for q in train])).items()}
        learned_sizes.append(len(synonyms))
        answered = {r for q in train for r in q["relevant"]}
        for q in test:
            tokens = backend.tokenizer(q["query"])
            more = expand_tokens(tokens, synonyms)
            expanded += len(more) > len(tokens)
            runs["bm25"][q["qid"]] = rank_docs(backend, tokens)
            runs["bm25+synonyms"][q["qid"]] = rank_docs(backend, more)
            seen[q["qid"]] = any(r in answered for r in q["relevant"])
    qrels = {q["qid"]: {r: 1 for r in q["relevant"]} for q in queries}
    metrics = ["recall@10", "recall@100", "mrr@10"]
    out = {"queries": len(queries), "folds": FOLDS, "index_build_s": round(built, 1),
           "synonym_terms_per_fold": learned_sizes, "queries_expanded": expanded}
    for subset, keep in (("all", lambda q: True), ("seen", lambda q: seen[q]), ("unseen", lambda q: not seen[q])):
        ids = [q for q in qrels if keep(q)]
        out[subset] = {"n": len(ids)}
        for name, run in runs.items():
            scores = evaluate({q: qrels[q] for q in ids}, run, metrics)
            out[subset][name] = {k: round(float(v), 4) for k, v in scores.items()}
    return out


def main() -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--skip-maritime", action="store_true")
    p.add_argument("--skip-stard", action="store_true")
    args = p.parse_args()
    result = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {}
    if not args.skip_stard:
        result["stard"] = stard()
    if not args.skip_maritime:
        result["maritime"] = maritime()
    result.pop("measured", None)
    write("feedback", result, OUT)
    return result


if __name__ == "__main__":
    json.dump(main(), sys.stdout, ensure_ascii=False, indent=1)
    print()
