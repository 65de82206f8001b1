"""Same-run latency of routed search() per question type: this tree against a baseline checkout.

Issue 16 allows no route to get slower than 1.5× its median before the routing work. Medians measured
in different runs on this shared machine differ by more than that from load alone, so this script
times both code trees in one run: for each round it starts one process per tree (baseline first,
then this tree, alternating which goes first), each answers every routing question once untimed
(warm-up: index, models and caches loaded) and once timed. A question's time is its median over
the rounds. A type's route median is over the questions of that type each tree classified as that type
(so both sides time the route the type is configured to, not a misrouted question's route); the median
over all questions of the type is kept beside it. Feedback is off in both (no answer cache).
The baseline needs its own index of the laws folder, built by its own code (the format changed):
  git worktree add /work/wt-base e0524d0      # the code routing-baseline.json measured
  cd /work/wt-base && lambdarag index --corpus ../shared/data/laws --name laws \
      --vectors <data home>/laws/stard-vectors
Run: python bench/route_latency.py --baseline /work/wt-base [--rounds 3] [--name route-latency]
     → bench/results/NAME.json
One strategy's own cost, before and after, whatever the types are routed to (a type that moved to another
strategy, as fact moved from keyword_search to hybrid_search, is compared with that strategy's old cost):
  python bench/route_latency.py --baseline /work/wt-base --types fact --route hybrid_search \
      --name route-latency-hybrid
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from machine import facts, write  # noqa: E402
from routing_data import TYPES, load  # noqa: E402

LIMIT = 1.5
CHILD = """
import json, os, sys, tempfile, time, yaml
from lambdarag.orchestration.config import config_path
from lambdarag.orchestration.search_unified import search
questions = json.load(sys.stdin)
config = None
if os.environ.get("BENCH_ROUTE"):
    data = yaml.safe_load(open(config_path(), encoding="utf-8"))
    data["orchestration"]["routing"] = {t: os.environ["BENCH_ROUTE"] for t in data["orchestration"]["routing"]}
    with tempfile.NamedTemporaryFile("w", suffix=".yml", encoding="utf-8", delete=False) as written:
        written.write(yaml.safe_dump(data, allow_unicode=True))
    config = written.name
for q in questions:
    search(q["query"], index="laws", config=config)
out = []
for q in questions:
    start = time.perf_counter()
    r = search(q["query"], index="laws", config=config)
    out.append({"qid": q["qid"], "type": r.query_type, "strategy": r.strategy,
                "wall_ms": (time.perf_counter() - start) * 1000})
print(json.dumps(out))
"""
"""The timed child: answers every question once to warm up, then once timed; prints one JSON list. With
BENCH_ROUTE set, the tree's own config routes every type to that strategy."""


def run_tree(tree: Path, questions: list[dict], route: str = "") -> list[dict]:
    """Returns one timed pass over `questions` by the code in `tree` (a fresh process, feedback off), every
    question sent to `route` when one is named."""
    env = {**os.environ, "PYTHONPATH": str(tree), "LAMBDARAG_FEEDBACK": "off", "BENCH_ROUTE": route}
    env.pop("LAMBDARAG_HOME", None)
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=tree, env=env, input=json.dumps(questions),
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def medians(passes: list[list[dict]], types: dict[str, str], route: str = "") -> dict:
    """Returns per type its route, the route's median over the questions classified as their own type, how many
    those were, and the median over all the type's questions; each question counts with its median over passes.
    """
    per_question: dict[str, list[float]] = defaultdict(list)
    on_route: dict[str, str] = {}
    for timed in passes:
        for row in timed:
            per_question[row["qid"]].append(row["wall_ms"])
            if (row["strategy"] == route) if route else row["type"] == types[row["qid"]]:
                on_route[row["qid"]] = row["strategy"]
    out = {}
    for t in TYPES:
        qids = [q for q in per_question if types[q] == t]
        routed = [q for q in qids if q in on_route]
        if not routed:
            continue
        out[t] = {"route": Counter(on_route[q] for q in routed).most_common(1)[0][0],
                  "route_median_ms": round(statistics.median(statistics.median(per_question[q]) for q in routed), 1),
                  "on_route": len(routed), "questions": len(qids),
                  "median_ms": round(statistics.median(statistics.median(per_question[q]) for q in qids), 1)}
    return out


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", type=Path, required=True, help="checkout of the baseline code with its laws index")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--halves", default="dev,test")
    ap.add_argument("--types", default=",".join(TYPES), help="question types to time")
    ap.add_argument("--route", default="", help="send every question to this strategy in both trees (one route's "
                    "cost before and after, whatever the types are routed to)")
    ap.add_argument("--name", default="route-latency",
                    help="result file bench/results/NAME.json (another name keeps an A/B of a branch apart)")
    args = ap.parse_args()
    questions = [{"qid": r["qid"], "query": r["query"], "type": r["type"]}
                 for half in args.halves.split(",") for r in load(half) if r["type"] in args.types.split(",")]
    types = {q["qid"]: q["type"] for q in questions}
    trees = {"baseline": args.baseline.resolve(), "current": ROOT}
    passes: dict[str, list] = {"baseline": [], "current": []}
    load_before = facts()["loadavg"]
    for i in range(args.rounds):
        order = ("baseline", "current") if i % 2 == 0 else ("current", "baseline")
        for name in order:
            passes[name].append(run_tree(trees[name], questions, args.route))
    base, cur = medians(passes["baseline"], types, args.route), medians(passes["current"], types, args.route)
    ratios = {t: round(cur[t]["route_median_ms"] / base[t]["route_median_ms"], 2) for t in cur if t in base}
    baseline_commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=trees["baseline"],
                                     capture_output=True, text=True).stdout.strip()
    result = {"questions": len(questions), "halves": args.halves, "rounds": args.rounds, "route": args.route or None,
              "baseline_commit": baseline_commit, "baseline": base, "current": cur, "ratio": ratios,
              "limit": LIMIT, "within_limit": all(r <= LIMIT for r in ratios.values()),
              "loadavg_before": load_before}
    write(args.name, result)
    return result


if __name__ == "__main__":
    print(json.dumps(main(), ensure_ascii=False, indent=1))
