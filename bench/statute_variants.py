"""Dev-only variants of the statute pack's kind prior and survey rules (issue 33): what each one does per question type.

Runs bench/routing.py on the halves that may be tuned on (maritime dev; laws dev and dev2), never on a test half.
Each variant sets constants or functions of the pack (domains/prc_statutes) in this process. It writes routed recall@5
and nDCG@5 per type, compare all-named and temporal right-version-first to bench/results/routing-statute-variants.json.
The shipped values are the `shipped` variant.
  python bench/statute_variants.py [--variants shipped,lead=inf,...] [--out bench/results/routing-statute-variants.json]
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import routing  # noqa: E402
from machine import facts as machine  # noqa: E402

import domains.prc_statutes.kinds as kinds  # noqa: E402
import domains.prc_statutes.ranks as ranks  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HALVES = {"maritime": ("dev",), "laws": ("dev", "dev2")}
VARIANTS = {
    "shipped": {},
    "lead=inf": {(kinds, "LEAD"): math.inf},
    "lead=2": {(kinds, "LEAD"): 2.0},
    "lead=0": {(kinds, "LEAD"): 0.0},
    "tie=0": {(kinds, "NEAR_TIE"): 0.0},
    "tie=0.5": {(kinds, "NEAR_TIE"): 0.5},
    "tie=1": {(kinds, "NEAR_TIE"): 1.0},
    "tie=1.5": {(kinds, "NEAR_TIE"): 1.5},
    "tie=3": {(kinds, "NEAR_TIE"): 3.0},
    "hub=0": {(ranks, "HUB_POWER"): 0.0},
    "hub=0.5": {(ranks, "HUB_POWER"): 0.5},
    "hub=1": {(ranks, "HUB_POWER"): 1.0},
    "areas=off": {(ranks, "area_first"): lambda documents, found, areas: tuple(documents)},
}
"""Name → {(module, attribute): value}; what each changes against the shipped pack."""
WHAT = {
    "shipped": "the pack as committed: LEAD 4, NEAR_TIE 2, HUB_POWER 0.25, area_first on surveys asking for a kind",
    "tie=0": "the best match keeps first place unless a better prior ties it exactly",
    "tie=0.5": "a better prior takes first place within 0.5 points", "tie=1": "… within 1 point",
    "tie=1.5": "… within 1.5 points",
    "tie=3": "… within 3 points",
    "lead=inf": "documents of a better prior go first behind the best match whatever their score (the old sort)",
    "lead=2": "a better prior is worth 2 points of fused score", "lead=0": "no prior behind the best match",
    "hub=0": "no hub penalty", "hub=0.5": "specificity to the power 0.5", "hub=1": "specificity to the power 1",
    "areas=off": "no listed area's document first",
}


def run(variant: str) -> dict:
    """Returns routed figures per set and half with `variant` set, the pack restored after."""
    saved = {key: getattr(*key) for key in VARIANTS[variant]}
    for (module, name), value in VARIANTS[variant].items():
        setattr(module, name, value)
    try:
        out = {}
        for questions, halves in HALVES.items():
            result = routing.main(None, None, halves, questions)
            for half in halves:
                h = result[half]
                out[f"{questions}:{half}"] = {
                    "per_type": {t: m["recall@5"] for t, m in h["routed"]["per_type"].items()},
                    "overall": h["routed"]["overall"]["recall@5"],
                    "ndcg_per_type": {t: m["ndcg@5"] for t, m in h["routed"]["per_type"].items()},
                    "compare_all_named_in_top5": h["compare_all_named_in_top5"]["routed"],
                    "temporal_right_version_first": h["temporal_right_version_first"]["routed"],
                    "misses": {m["qid"]: round(m["recall@5"], 3) for m in h["routed_misses"]}}
        return out
    finally:
        for (module, name), value in saved.items():
            setattr(module, name, value)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated (default all)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "routing-statute-variants.json")
    args = ap.parse_args()
    results = {}
    for name in args.variants.split(","):
        results[name] = run(name)
        print(name, {k: v["overall"] for k, v in results[name].items()}, flush=True)
    halves = {k: list(v) for k, v in HALVES.items()}
    args.out.write_text(json.dumps({"what": WHAT, "machine": machine(), "halves": halves, "results": results},
                                   ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
