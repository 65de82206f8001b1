"""Statute name coverage: does the compare route's resolver find every statute by the names people use, and no other?

For every statute of an index (each family once, newest version) it derives the forms a question names
it by — the full title, the title without 中华人民共和国, both in 《》, and the customary short forms of
skills.statutes.abbreviations (刑诉法), a law's name without 法 (海上交通安全) — sets each form side by side with a partner statute (the next
family in title order, named by its short title) in template compare questions, and asks
`StatuteNames.named(query, loose=True)` (what `name_sides` does on the compare route) for the
statutes named. A question is right when exactly the two statutes come back. No benchmark question is
used. Writes per-form rates, counts by failure class and examples to bench/results/statute-names.json.
Run:
  python -m orchestration.cli bench statute_names [--index laws] [--out bench/results/statute-names.json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import write  # noqa: E402

from lambdarag.skills.store.index import open_index  # noqa: E402
from lambdarag.domains.prc_statutes.names import StatuteNames, abbreviations  # noqa: E402

TEMPLATES = ("{x}和{y}在法律责任方面有何不同？", "{y}与{x}对主管部门的规定有什么区别？", "{x}的罚则跟{y}的罚则比，哪个更重？")
"""Compare questions, the statute under test first and second."""
EXAMPLES = 12
"""Failures listed per form."""


def forms(full: str, short: str) -> dict[str, str]:
    """Returns the names of one statute by form: full title, short title, both quoted, its customary short forms."""
    out = {"short": short, "quoted_short": f"《{short}》", **{"abbreviation": a for a in abbreviations(short)},
           **({"stem": short[:-1]} if short.endswith("法") and not short.endswith("办法") and len(short) >= 4 else {})}
    return {**out, "full": full, "quoted_full": f"《{full}》"} if full != short else out


def verdict(found: set[str], x: str, y: str) -> str:
    """Returns "right", or the failure class: missed (x not found), partner_lost (y not found), extra (another statute too)."""
    if x not in found:
        return "missed"
    if y not in found:
        return "partner_lost"
    return "extra" if found - {x, y} else "right"


def main(index: str = "laws") -> dict:
    started = time.perf_counter()
    documents = open_index(index).documents()
    names = StatuteNames(documents)
    full = {}
    for meta in documents.values():
        full.setdefault(str(meta.get("family") or meta.get("title") or ""), str(meta.get("title") or ""))
    titles = sorted(names.titles, key=lambda t: t.title)
    tally: dict[str, Counter] = defaultdict(Counter)
    examples: dict[str, list[dict]] = defaultdict(list)
    for i, t in enumerate(titles):
        partner = titles[(i + 1) % len(titles)]
        for form, name in forms(full.get(t.family) or t.title, t.title).items():
            for template in TEMPLATES:
                query = template.format(x=name, y=partner.title)
                found = {s.family for s in names.named(query, limit=4, loose=True)}
                outcome = verdict(found, t.family, partner.family)
                tally[form][outcome] += 1
                if outcome != "right" and len(examples[form]) < EXAMPLES:
                    examples[form].append({"query": query, "statute": t.title, "partner": partner.title,
                                           "outcome": outcome, "found": sorted(found)})
    per_form = {form: {"questions": sum(c.values()), "right": round(c["right"] / sum(c.values()), 4),
                       **{k: c[k] for k in ("missed", "partner_lost", "extra")}} for form, c in sorted(tally.items())}
    total = sum(sum(c.values()) for c in tally.values())
    right = sum(c["right"] for c in tally.values())
    return {"index": index, "statutes": len(titles), "templates": list(TEMPLATES), "questions": total,
            "right": round(right / total, 4), "per_form": per_form, "examples": dict(examples),
            "seconds": round(time.perf_counter() - started, 1)}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", default="laws", help="built index over ../shared/data/laws (default laws)")
    ap.add_argument("--out", type=Path, default=None, help="result file (default bench/results/statute-names.json)")
    args = ap.parse_args()
    path = write("statute-names", main(args.index), args.out)
    print(json.dumps({k: v for k, v in json.loads(path.read_text()).items() if k != "examples"}, ensure_ascii=False,
                     indent=1))
