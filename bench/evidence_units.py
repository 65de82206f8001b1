"""Every candidate unit of every open dev question, with its features and whether it holds an evidence sentence.

For each dev question (dev, dev2, dev3; never a test half) of bench/data/answers and of every labelled corpus of
bench/domain_data.py that is not held out, the full search() runs offline; at the answer, the ranking
`evidence.ranked` returns under the hand-set mix (its bonuses and overrides; a profile's learned weights set
aside) is kept with each unit's
`evidence.feature_matrix` and whether it holds one of the question's evidence sentences (bench/answers.py's
`holds`). Per corpus it reports `pool` (some candidate holds one: the ceiling of any scorer) and the shipped
order's @1 and @2; the units go to a gzipped JSON file (written byte for byte the same for the same units) that
scripts/fit_evidence.py fits the learned scorer on.
  python bench/evidence_units.py [--corpora mutt-manual-en,answers/maritime] [--tag r25dev-before]
      → bench/results/answers-scorers-<tag>.json, bench/results/evidence-units-<tag>.json.gz
"""
from __future__ import annotations

import argparse
import copy
import gzip
import json
import os
import sys
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("LAMBDARAG_FEEDBACK", "off")
for _var in ("LAMBDARAG_LLM_BASE_URL", "LAMBDARAG_LLM_MODEL"):
    os.environ.pop(_var, None)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import answer_data  # noqa: E402
import domain_data  # noqa: E402
from answers import holds  # noqa: E402
from domain_answers import as_answer_question  # noqa: E402
from machine import results_dir, write as write_result  # noqa: E402

import lambdarag.skills.generate as generate  # noqa: E402
from lambdarag.orchestration.config import load_config  # noqa: E402
from lambdarag.orchestration.search_unified import search  # noqa: E402
from lambdarag.skills import evidence  # noqa: E402
from lambdarag.skills.evidence import feature_matrix  # noqa: E402
from lambdarag.skills.unit_features import FEATURES  # noqa: E402

SEEN: list = []
"""The first ranking the answer term made for the question asked last, with its features."""
RANKED = generate.ranked


def keep(query, hits, profile, ctx=None, rejected=frozenset(), query_type=None, ends=()):
    """Returns `evidence.ranked`'s ranking by the hand-set mix (the profile's learned weights set aside: the units
    are dumped in the mix's order, which the fit reads as a feature), keeping the first one of a question in SEEN
    with its units' features."""
    mix = copy.copy(profile)
    mix.wording = replace(profile.wording, evidence_weights=None)
    ranking = RANKED(query, hits, mix, ctx, rejected, query_type, ends)
    if not SEEN:
        found = [s.candidate for s in ranking]
        parts = evidence.signals(query, found, ctx, profile=profile) if found else {}
        matrix = feature_matrix(query, found, parts, [s.cover for s in ranking], [s.held for s in ranking],
                          range(len(found)), query_type, ends) if found else []
        SEEN.append((ranking, matrix, query_type))
    return ranking


def questions() -> list[tuple[str, str, str, list[dict]]]:
    """Returns (corpus, half, index, questions) for every open dev half: the answer sets' (named answers/<corpus>)
    and the labelled corpora's, never a test half nor a held-out corpus."""
    out = [(f"answers/{c}", "dev", s.index, answer_data.load(c, "dev")) for c, s in answer_data.answer_sets().items()]
    for corpus in domain_data.LABELLED:
        for half in (h for h in domain_data.open_halves(corpus) if h != "test"):
            out.append((corpus, half, f"domain-{corpus}", [as_answer_question(r) for r in domain_data.load(corpus, half)]))
    return out


def book(corpus: str) -> str:
    """Returns the book a set's questions are about (an answer set's and a labelled corpus's of one book are one)."""
    return domain_data.book_of(corpus.removeprefix("answers/"))


def dump(corpus: str, half: str, index: str, asked: list[dict], cfg) -> list[dict]:
    """Returns one record per question: its units in the shipped order, their features and labels."""
    out = []
    for q in asked:
        SEEN.clear()
        search(q["query"], index=index, config=cfg)
        ranking, matrix, asked_as = SEEN[0] if SEEN else ([], [], None)
        out.append({"corpus": corpus, "book": book(corpus), "half": half, "qid": q["qid"], "type": q["type"],
                    "asked_as": asked_as,
                    "labels": [int(holds(s.text, q["evidence"])) for s in ranking],
                    "kinds": [s.candidate.kind for s in ranking],
                    "x": [[round(float(v), 4) for v in row] for row in matrix]})
    return out


def at(record: dict, k: int, order=None) -> bool:
    """Returns whether one of the first `k` units of `order` (default the shipped one) holds an evidence sentence."""
    order = range(len(record["labels"])) if order is None else order
    return any(record["labels"][i] for i in list(order)[:k])


def summary(records: list[dict]) -> dict:
    """Returns n, pool and the shipped order's @1 and @2 over `records`."""
    n = len(records) or 1
    return {"n": len(records), "pool": round(sum(any(r["labels"]) for r in records) / n, 3),
            "@1": round(sum(at(r, 1) for r in records) / n, 3), "@2": round(sum(at(r, 2) for r in records) / n, 3)}


def write_units(tag: str, records: list[dict]) -> Path:
    """Writes the units gzipped with no timestamp, so the same units make the same bytes."""
    path = results_dir() / f"evidence-units-{tag}.json.gz"
    body = json.dumps({"features": list(FEATURES), "questions": records}, ensure_ascii=False, separators=(",", ":"))
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as out:
        out.write(body.encode("utf-8"))
    return path


def read_units(path: Path) -> dict:
    """Returns the features and question records `write_units` wrote."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", default="", help="comma-separated sets (default: every open dev half)")
    ap.add_argument("--config", default="bench/timeout600.yml")
    ap.add_argument("--tag", default="r25dev-before")
    args = ap.parse_args()
    cfg = load_config(args.config)
    generate.ranked = keep
    chosen = set(filter(None, args.corpora.split(",")))
    records: list[dict] = []
    for corpus, half, index, asked in questions():
        if chosen and corpus not in chosen:
            continue
        rows = dump(corpus, half, index, asked, cfg)
        records += rows
        print(corpus, half, json.dumps(summary(rows)), flush=True)
        write_units(args.tag, records)      # so far: a long run can be read (and fitted on) before it ends
    sets = dict.fromkeys(r["corpus"] for r in records)
    result = {"half": "dev (dev2, dev3)", "config": args.config, "features": list(FEATURES),
              "pooled": summary(records),
              "corpora": {c: summary([r for r in records if r["corpus"] == c]) for c in sets}}
    print(write_result(f"answers-scorers-{args.tag}", result), write_units(args.tag, records))
