"""Type accuracy of the offline classifier on every labelled question set, without an index (issue 41).

search() classifies a question before it retrieves anything, offline by the corpus profile's rules, then
its learned classifier, then the default type (skills.classify.classify_offline): so the type accuracy
bench/domain_bench.py and bench/routing.py report can be measured in seconds, per corpus and half, while
their indexes build. Each set is classified under the profile its index is built with (`PROFILES`): the
documentation corpora of bench/data/domains (dev and dev2: may be tuned on; test: frozen, report only) under the
generic pack, the routing sets `laws` and `maritime` (dev, dev2, test) under the statute pack, and `written`
(bench/data/classify/written.jsonl: questions about no benchmark's corpus, committed with the cues they
checked, so a dev half) under the generic pack. `--halves` keeps only the halves it names (the dev halves of a
held-out corpus: a test half no tuning run may read is never loaded).
Each half also reports `learned_only`, the learned classifier's accuracy with no rule asked: how well the fallback
that decides what no cue settles carries. `--out` names another result file (main's code measured the same way).
Run:
  python bench/classify_types.py [--sets reference-en,…,laws,maritime,written] [--out classify-types-before.json]
  python bench/classify_types.py --sets edu-en,edu-zh-cn --halves dev --out classify-types-edu-dev.json
                                                                         → bench/results/classify-types.json
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from domain_data import DEV_OPENED, HELD_OUT, LABELLED, OPENED, halves_of, load as load_domain  # noqa: E402
from machine import facts as machine  # noqa: E402
from routing_data import SETS, TYPES, load as load_routing  # noqa: E402

from lambdarag import Context  # noqa: E402
from lambdarag.domains import profile_named  # noqa: E402
from lambdarag.skills import build  # noqa: E402
from lambdarag.skills.classify import learned_classify  # noqa: E402
from lambdarag.skills.profile import CorpusProfile  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
WRITTEN = ROOT / "bench" / "data" / "classify" / "written.jsonl"
"""Questions in both languages about no benchmark's corpus, written next to the round-14 cues: a dev half
(bench/data/classify/README.md)."""
PROFILES = {**{c: "generic" for c in LABELLED}, **{s: "prc_statutes" for s in SETS}, "written": "generic"}
"""The corpus profile each set's index is built with (``domain: auto``: the statute pack claims the statutes)."""
DEFAULT_SETS = [n for n in PROFILES if n not in OPENED + DEV_OPENED + HELD_OUT]
"""The sets a run without --sets classifies: all but rounds 16's, 18's and 19's held-out corpora (name them with --sets)."""


def halves(name: str, only: tuple[str, ...] = ()) -> dict[str, list[dict]]:
    """Returns the labelled questions of each half of a set, by half: only the halves `only` names when it names any
    (a half left out is never read)."""
    if name in SETS:
        names, read = SETS[name].halves, lambda h: load_routing(h, SETS[name].folder)
    elif name == "written":
        names, read = ("dev",), lambda h: [json.loads(line) for line in WRITTEN.read_text(encoding="utf-8").splitlines()
                                           if line.strip()]
    else:
        names, read = halves_of(name), lambda h: load_domain(name, h)
    return {h: read(h) for h in names if not only or h in only}


def learned_only(query: str, profile: CorpusProfile) -> str:
    """Returns the type the learned classifier alone gives a question, no rule asked (the default, fact, when unsure)."""
    found = learned_classify(query, {}, profile)
    return found.type if found is not None else "fact"


def classified(questions: list[dict], profile: str) -> dict:
    """Returns type accuracy per type and overall, the confusion and the misclassified questions of one half, and
    the accuracy of the learned classifier alone (no rules; fact when unsure): how well the fallback carries."""
    term, ctx = build("classify_offline", {}), {"profile": profile_named(profile)}
    confusion: dict[str, Counter] = defaultdict(Counter)
    misses, learned = [], 0
    for q in questions:
        learned += learned_only(q["query"], ctx["profile"]) == q["type"]
        c = term.run(q["query"], Context(resources=ctx)).classification
        confusion[q["type"]][c.type] += 1
        if c.type != q["type"]:
            misses.append({"qid": q["qid"], "type": q["type"], "classified": c.type, "stage": c.stage,
                           "rule": c.rule, "query": q["query"]})
    accuracy = {t: round(confusion[t][t] / sum(confusion[t].values()), 3) for t in TYPES if t in confusion}
    overall = round(sum(confusion[t][t] for t in confusion) / len(questions), 3)
    return {"questions": len(questions), "type_accuracy": {"overall": overall} | accuracy,
            "learned_only": round(learned / len(questions), 3),
            "confusion": {t: dict(v) for t, v in confusion.items()}, "misses": misses}


def main(names: list[str], only: tuple[str, ...] = ()) -> dict:
    return {"machine": machine(), "profiles": {n: PROFILES[n] for n in names},
            "sets": {n: {h: classified(qs, PROFILES[n]) for h, qs in halves(n, only).items()} for n in names}}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(DEFAULT_SETS), help=f"comma-separated, of {','.join(PROFILES)}")
    ap.add_argument("--halves", default="", help="comma-separated halves to keep (dev,dev2,…); default every half")
    ap.add_argument("--out", default="classify-types.json", help="the result file's name in bench/results")
    args = ap.parse_args()
    out = main(args.sets.split(","), tuple(h for h in args.halves.split(",") if h))
    (ROOT / "bench" / "results" / args.out).write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n",
                                                                   encoding="utf-8")
    for name, by_half in out["sets"].items():
        sys.stdout.write(f"{name:16} " + "  ".join(f"{h} {r['type_accuracy']['overall']:.3f} (relation "
                                                  f"{r['type_accuracy'].get('relation', float('nan')):.2f}, "
                                                  f"learned alone {r['learned_only']:.2f})"
                                                  for h, r in by_half.items()) + "\n")
