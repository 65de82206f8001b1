"""Which evidence scorer (skills.evidence) puts a labelled evidence sentence first? Dev halves only.

For every dev question of bench/data/answers/<corpus>/dev.jsonl the full search() runs offline; at the answer
the context hits are kept, cut into candidate units (`evidence.candidates`) and ranked by each mix of the
scaled signals (BM25 over the units, the embedder's cosine, BM25 of the heading path). A question counts for
evidence@k when one of the first k units holds a labelled evidence sentence (bench/answers.py's `holds`);
`pool` is the share whose candidates hold one at all (the ceiling of any scorer). The dense signal is
computed once per question and every mix reuses it.
  python bench/evidence_scorers.py [--corpora reference-en,reference-zh-cn] → bench/results/answers-scorers-dev.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("LAMBDARAG_FEEDBACK", "off")
for _var in ("LAMBDARAG_LLM_BASE_URL", "LAMBDARAG_LLM_MODEL"):
    os.environ.pop(_var, None)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from answer_data import answer_sets, load  # noqa: E402
from answers import holds  # noqa: E402
from machine import write as write_result  # noqa: E402

import numpy as np  # noqa: E402

import lambdarag.skills.generate as generate  # noqa: E402
from lambdarag.orchestration.config import load_config  # noqa: E402
from lambdarag.orchestration.search_unified import search  # noqa: E402
from lambdarag.skills import evidence  # noqa: E402
from lambdarag.skills.context import citable  # noqa: E402
from lambdarag.skills.profile import profile_of  # noqa: E402

MIXES = {"bm25": {"bm25": 1.0}, "bm25+heading": {"bm25": 0.8, "heading": 0.2}, "dense": {"dense": 1.0},
         "bm25+dense": {"bm25": 0.5, "dense": 0.5}, "chosen (WEIGHTS)": dict(evidence.WEIGHTS),
         "bm25-heavy": {"bm25": 0.6, "dense": 0.3, "heading": 0.1}, "dense-heavy": {"bm25": 0.3, "dense": 0.5, "heading": 0.2}}


SEEN: dict = {}
"""What the answer term saw last: its candidate units and their signals (`keep` writes it)."""
ANSWER = generate.extractive_answer


def keep(state, ctx):
    """Returns the offline answer, keeping the context's units and their signals in SEEN first."""
    profile = profile_of(ctx)
    found = evidence.candidates(citable(state), profile)
    SEEN.update(found=found, parts=evidence.signals(state.original_query, found, ctx, profile=profile))
    return ANSWER(state, ctx)


def rankings(corpus: str, index: str, cfg) -> list[dict]:
    """Returns, per dev question, whether its candidates hold an evidence sentence and each mix's first two do."""
    out = []
    for q in load(corpus, "dev"):
        SEEN.clear()
        search(q["query"], index=index, config=cfg)
        found, parts = SEEN.get("found", []), SEEN.get("parts", {})
        row = {"qid": q["qid"], "type": q["type"], "pool": any(holds(c.text, q["evidence"]) for c in found)}
        for name, weights in MIXES.items():
            order = np.argsort(-evidence.mixed(found, parts, weights), kind="stable") if found else []
            top = [found[i].text for i in order[:2]]
            row[name] = {"@1": any(holds(t, q["evidence"]) for t in top[:1]),
                         "@2": any(holds(t, q["evidence"]) for t in top)}
        out.append(row)
    return out


def summary(rows: list[dict]) -> dict:
    n = len(rows) or 1
    return {"n": len(rows), "pool": round(sum(r["pool"] for r in rows) / n, 3)} | {
        name: {k: round(sum(r[name][k] for r in rows) / n, 3) for k in ("@1", "@2")} for name in MIXES}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", default="reference-en,reference-zh-cn,handbook-en")
    args = ap.parse_args()
    cfg = load_config(None)
    generate.extractive_answer = keep   # before any pipeline is built: every answer term calls it
    result: dict = {"mixes": MIXES, "half": "dev", "corpora": {}}
    for corpus in args.corpora.split(","):
        rows = rankings(corpus, answer_sets()[corpus].index, cfg)
        result["corpora"][corpus] = {"overall": summary(rows), "questions": rows}
        print(corpus, json.dumps(result["corpora"][corpus]["overall"]))
    write_result("answers-scorers-dev", result)
