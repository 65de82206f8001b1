"""Non-statute benchmark (issue 29): does routed search() beat one plain route on documentation corpora?

For each corpus of bench/data/domains (dev: may be tuned on; test: frozen, report only) it answers every
question three ways through the full search() pipeline: routed (the configured routes), hybrid (every type
routed to hybrid_search) and bm25 (every type routed to keyword_search). Per type and overall it scores
document recall@5 and recall@10 (the share of *all* relevant files among the first 5 / 10 distinct documents)
and MRR@5 of the hits, the share of answers whose citations include a relevant file,
what routing keeps of plain retrieval (`routed_keeps`: the share of questions whose routed first five documents
hold hybrid's first document, and the share of the relevant files among hybrid's first five that routed's first
five hold too: a route adds to hybrid, never subtracts, docs/routes.md), what a route's own choices earn
(`routed_swaps`: how many documents routed's first five hold that hybrid's do not, and how many of hybrid's they lose,
each with how many of them are relevant),
the share of answers in the question's language, crashes (a question whose search() raises), and for the
classifier (the same for all three) type accuracy per type (relation's own entry is the one issue 41 asks
about). Documents count by file name, as in bench/routing.py.

Language test: an answer is English when it holds no CJK ideograph, Chinese when CJK ideographs are at
least half of its ideographs plus Latin words, else mixed; it is in the question's language when that
matches the question's `lang`. (Identifiers and paths are Latin words in either language, so a Chinese
answer may quote them; an English answer with any Chinese scaffolding, such as 根据现有资料, is not English.)

The corpora come from bench/debian_docs.py (handbook-en: the Debian Administrator's Handbook, converted into
$LAMBDARAG_HOME/corpora/handbook-en beforehand, checked against its manifest here), the index `domain-<corpus>` is built on first use (dense and
wiki as `lambdarag index` builds them) under $LAMBDARAG_HOME.
Run:
  apt-get install debian-reference-en debian-reference-zh-cn debian-faq-zh-cn debian-handbook valgrind maint-guide
  python bench/domain_bench.py [--corpora reference-en,faq-zh-cn,reference-zh-cn,handbook-en,valgrind-en,maint-guide-en] [--halves dev,test]
  python bench/domain_bench.py --corpora maint-guide-en,faq-zh-cn,handbook-en,reference-zh-cn --halves dev2 --tag dev2
  python bench/domain_bench.py --corpora maint-guide-en,faq-zh-cn,handbook-en --halves dev3 --tag dev3
                          [--config agent-config.yml] [--tag TAG]   → bench/results/domain-<corpus>[-TAG].json
The "before" measurement (the code before the domain profiles) is tagged: --tag before. A run after changes
to chunking or to what an index records needs a fresh $LAMBDARAG_HOME: an index is reused while its files'
digests, tokenizer and model are unchanged.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

os.environ.setdefault("LAMBDARAG_FEEDBACK", "off")  # measure the routes as configured, without learning between questions

sys.path.insert(0, str(Path(__file__).resolve().parent))
from debian_docs import SOURCES, default_out, write  # noqa: E402
from domain_data import CORPORA, EXTRA, HALVES, LABELLED, load, manifest  # noqa: E402
from machine import facts as machine  # noqa: E402
from routing import K, doc_name, judged, mean, top_documents, warm_up  # noqa: E402
from routing_data import TYPES  # noqa: E402

from lambdarag.orchestration.cli import main as cli  # noqa: E402
from lambdarag.orchestration.config import RoutingConfig, load_config  # noqa: E402
from lambdarag.orchestration.metrics import score  # noqa: E402
from lambdarag.orchestration.search_unified import search  # noqa: E402
from lambdarag.orchestration.setup import open_index  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = {"routed": None, "hybrid": "hybrid_search", "bm25": "keyword_search"}
WIDE = 10
"""The wider cut of a survey's coverage: recall@10 counts the relevant files among the first ten documents."""
METRICS = ("recall@5", "recall@10", "mrr@5", "cites_answer", "answer_language")
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
WORD = re.compile(r"[A-Za-z]+")


def language(text: str) -> str:
    """Returns 'en' for text without CJK ideographs, 'zh' when they are at least half of ideographs plus Latin
    words, else 'mixed'."""
    cjk, words = len(CJK.findall(text)), len(WORD.findall(text))
    return "en" if cjk == 0 else "zh" if cjk >= words else "mixed"


def swapped(routed: list[str], hybrid: list[str], relevant: dict[str, float]) -> Counter:
    """Returns the documents `routed` holds that `hybrid` does not (`added`) and those of `hybrid` it does not hold
    (`dropped`), each with how many are relevant: whether a route's own choices earn the places they take."""
    added, dropped = [d for d in routed if d not in hybrid], [d for d in hybrid if d not in routed]
    return Counter(added=len(added), added_relevant=sum(d in relevant for d in added),
                   dropped=len(dropped), dropped_relevant=sum(d in relevant for d in dropped))


def system_config(cfg, pattern: str | None):
    """Returns `cfg` with every query type routed to `pattern` (no adaptive choice), or `cfg` itself for None."""
    if pattern is None:
        return cfg
    routing = RoutingConfig(**{t: pattern for t in TYPES}, default=pattern, adaptive=False)
    return cfg.model_copy(update={"orchestration": cfg.orchestration.model_copy(update={"routing": routing})})


def prepare(corpus: str) -> tuple[str, dict]:
    """Converts the corpus when its folder is missing or differs from the labelled manifest, builds or updates
    its index (`lambdarag index`: unchanged files are reused), and returns the index name and the manifest."""
    folder, want = default_out(corpus), manifest(corpus)
    have = folder.with_suffix(".json")
    if not have.is_file() or json.loads(have.read_text(encoding="utf-8"))["sha256"] != want["sha256"]:
        if corpus not in SOURCES:
            raise SystemExit(f"{corpus}: {folder} is missing or is not the converted corpus the questions were "
                             f"labelled on ({want['package']} {want['version']}); convert it there first")
        got = write(corpus, folder)
        if got["sha256"] != want["sha256"]:
            raise SystemExit(f"{corpus}: the installed {got['package']} {got['version']} does not convert to the "
                             f"files the questions were labelled on ({want['version']})")
    name = f"domain-{corpus}"
    if cli(["index", "--corpus", str(folder), "--name", name]) != 0:
        raise SystemExit(f"{corpus}: `lambdarag index` failed building {name} (its message is above)")
    return name, want


def run_half(questions: list[dict], index: str, configs: dict) -> dict:
    """Returns every system's scores on one half, per type and overall, with crashes and type accuracy."""
    scores: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    confusion: dict[str, Counter] = defaultdict(Counter)
    crashes: dict[str, list[dict]] = {s: [] for s in SYSTEMS}
    strategies: dict[str, Counter] = {s: Counter() for s in SYSTEMS}
    misses = []
    kept: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    swaps: dict[str, Counter] = defaultdict(Counter)
    for q in questions:
        firsts: dict[str, list[str]] = {}
        for system, cfg in configs.items():
            try:
                r = search(q["query"], index=index, config=cfg)
            except Exception as e:  # a crash is what this benchmark counts, whatever its class
                crashes[system].append({"qid": q["qid"], "type": q["type"], "error": f"{type(e).__name__}: {e}"[:300]})
                for m in METRICS:
                    scores[system][q["type"]][m].append(0.0)
                continue
            ranked = firsts[system] = top_documents(r.hits)
            cited = {doc_name(c.source) for c in r.citations}
            s = scores[system][q["type"]]
            s["recall@5"].append(score(f"recall@{K}", ranked, judged(q["relevant"])))
            s["recall@10"].append(score(f"recall@{WIDE}", top_documents(r.hits, WIDE), judged(q["relevant"])))
            s["mrr@5"].append(score(f"mrr@{K}", ranked, judged(q["relevant"])))
            s["cites_answer"].append(float(bool(cited & {doc_name(f) for f in q["relevant"]})))
            s["answer_language"].append(float(language(r.answer) == q["lang"]))
            strategies[system][r.strategy] += 1
            if system == "routed":
                confusion[q["type"]][r.query_type] += 1
                if r.query_type != q["type"] or s["recall@5"][-1] < 1 or not s["cites_answer"][-1]:
                    misses.append({"qid": q["qid"], "type": q["type"], "routed_as": r.query_type,
                                   "strategy": r.strategy, "recall@5": s["recall@5"][-1], "top5": ranked,
                                   "cited": sorted(cited), "answer_language": language(r.answer)})
        if "routed" in firsts and "hybrid" in firsts:
            for t in (q["type"], "overall"):
                kept[t]["hybrid_first"] += [float(d in firsts["routed"]) for d in firsts["hybrid"][:1]]
                kept[t]["hybrid_relevant"] += [float(d in firsts["routed"]) for d in firsts["hybrid"]
                                               if d in judged(q["relevant"])]
                swaps[t] += swapped(firsts["routed"], firsts["hybrid"], judged(q["relevant"]))
            lost = [d for d in firsts["hybrid"] if d in judged(q["relevant"]) and d not in firsts["routed"]]
            if lost and misses and misses[-1]["qid"] == q["qid"]:
                misses[-1]["lost_from_hybrid"] = lost
    out: dict = {"questions": len(questions)}
    for system in SYSTEMS:
        per_type = {t: {m: mean(v) for m, v in scores[system][t].items()} | {"n": len(scores[system][t]["recall@5"])}
                    for t in TYPES if t in scores[system]}
        overall = {m: mean([x for t in scores[system].values() for x in t[m]]) for m in METRICS}
        out[system] = {"overall": overall, "per_type": per_type, "crashes": len(crashes[system]),
                       "strategies": dict(strategies[system])}
    classified = sum(sum(c.values()) for c in confusion.values())
    out["type_accuracy"] = {"overall": round(sum(confusion[t][t] for t in confusion) / classified, 3)
                            if classified else float("nan")} | {
        t: round(confusion[t][t] / sum(confusion[t].values()), 3) for t in TYPES if t in confusion}
    out["confusion"] = {t: dict(v) for t, v in confusion.items()}
    out["crashes"] = {s: v for s, v in crashes.items() if v}
    out["routed_keeps"] = {t: {k: mean(v) for k, v in kept[t].items()} | {"n": len(kept[t]["hybrid_first"])}
                           for t in ("overall",) + TYPES if t in kept}
    out["routed_swaps"] = {t: {k: swaps[t][k] for k in ("added", "added_relevant", "dropped", "dropped_relevant")}
                           for t in ("overall",) + TYPES if t in kept}
    out["routed_misses"] = misses
    return out


def main(corpus: str, config: str | None = None, halves: tuple[str, ...] = HALVES) -> dict:
    index, corpus_manifest = prepare(corpus)
    cfg = load_config(config)
    kb = open_index(cfg, index)
    configs = {s: system_config(cfg, p) for s, p in SYSTEMS.items()}
    warm_up(index, cfg, questions=load(corpus, "dev"))
    result = {"machine": machine(), "config": config or "agent-config.yml", "k": K,
              "corpus": {k: corpus_manifest[k] for k in ("corpus", "package", "version", "language", "files")},
              "index": {"name": index, "chunks": len(kb.index.chunks()), "dense": bool(kb.index.has_dense),
                        "graph": kb.graph is not None, "wiki": kb.wiki is not None},
              "systems": {s: p or "configured routing" for s, p in SYSTEMS.items()},
              "language_test": language.__doc__}
    for half in halves:
        result[half] = run_half(load(corpus, half), index, configs)
    return result


def summary(corpus: str, result: dict) -> str:
    """Returns recall@5 / recall@10 / MRR@5 per half, type and system, with type accuracy and crashes, as lines."""
    lines = []
    for half in (h for h in (*HALVES, *EXTRA) if h in result):
        r = result[half]
        crashes = {s: r[s]["crashes"] for s in SYSTEMS}
        lines.append(f"{corpus} {half} ({r['questions']} q) type accuracy {r['type_accuracy']['overall']}"
                     f"  crashes {crashes}   recall@5/recall@10/MRR@5")
        for t in ("overall",) + TYPES:
            cells = []
            for s in SYSTEMS:
                m = r[s]["overall"] if t == "overall" else r[s]["per_type"].get(t, {})
                cells.append("{} {:.2f}/{:.2f}/{:.2f}".format(s, *(m.get(k, float("nan"))
                                                                  for k in ("recall@5", "recall@10", "mrr@5"))))
            acc = r["type_accuracy"].get(t, r["type_accuracy"]["overall"] if t == "overall" else float("nan"))
            lines.append(f"  {t:<10} acc {acc:.2f}  " + "  ".join(cells))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", default=",".join(CORPORA), help=f"comma-separated, of {','.join(LABELLED)}")
    ap.add_argument("--halves", default=",".join(HALVES), help="dev,test (default both); dev2 or dev3 where a corpus has it (with --tag dev2, --tag dev3)")
    ap.add_argument("--config", default=None, help="agent config (default agent-config.yml)")
    ap.add_argument("--tag", default="", help="result files are bench/results/domain-<corpus>-TAG.json (default no tag)")
    args = ap.parse_args()
    for c in args.corpora.split(","):
        out = main(c, args.config, tuple(args.halves.split(",")))
        path = ROOT / "bench" / "results" / f"domain-{c}{'-' + args.tag if args.tag else ''}.json"
        path.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        sys.stdout.write(summary(c, out))
