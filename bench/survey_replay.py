"""Records what each survey question's survey orders (`survey.Surveyed`) and replays ordering rules on it in seconds.

A survey's recall@5 turns on how it orders the documents its rankings found (docs/routes.md, round 25: an oracle
ordering of them lifts the opened surveys' recall@5 0.725 → 0.842). `record` runs each synthesis question of a half
through the routed and the hybrid search() of bench/domain_bench.py, keeping the routed survey's `Surveyed` (the
argument of `survey_order`), and `replay` scores any ordering of it as the routed route would place it: hybrid's
first document first (the synthesis route's keep_lead), then the ordering's. Replaying `survey_order` itself
reproduces domain_bench's routed synthesis recall@5 and MRR@5 (tests/test_survey_replay.py); a row whose question
was not routed as synthesis keeps its routed ranking.
Run:
  python bench/survey_replay.py record --corpora mutt-manual-en,bind-arm-en --halves dev --out surveys.jsonl
  python bench/survey_replay.py replay surveys.jsonl
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

os.environ.setdefault("LAMBDARAG_FEEDBACK", "off")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from domain_bench import SYSTEMS, prepare, system_config  # noqa: E402
from domain_data import CORPORA, DEV_OPENED, load  # noqa: E402
from routing import K, doc_name, judged, mean, top_documents  # noqa: E402

from lambdarag.domains.generic import survey  # noqa: E402
from lambdarag.orchestration.config import load_config  # noqa: E402
from lambdarag.orchestration.metrics import score  # noqa: E402
from lambdarag.orchestration.search_unified import search  # noqa: E402

WIDE = 10
"""Documents of each ranking a row keeps."""
Order = Callable[[survey.Surveyed], Sequence[str]]


@contextmanager
def recording() -> Iterator[list[survey.Surveyed]]:
    """Yields a list that collects every `Surveyed` the survey finds while the block runs."""
    found: list[survey.Surveyed] = []
    own = survey.surveyed

    def kept(*args, **kwargs):
        out = own(*args, **kwargs)
        found.append(out[0])
        return out

    survey.surveyed = kept
    try:
        yield found
    finally:
        survey.surveyed = own


def record(questions: Sequence[dict], index: str, cfg, corpus: str = "", half: str = "") -> list[dict]:
    """Returns one row per synthesis question of `questions`: its relevant files, the type it was routed as, routed's
    and hybrid's first `WIDE` documents and, when it was routed as synthesis, what its survey ordered. A search that
    raises leaves its ranking empty and names the error (`crash`): domain_bench scores such a question 0."""
    routed, hybrid = system_config(cfg, SYSTEMS["routed"]), system_config(cfg, SYSTEMS["hybrid"])
    rows = []
    for q in (q for q in questions if q["type"] == "synthesis"):
        with recording() as found:
            r, crash = searched(q["query"], index, routed)
        h, crash = searched(q["query"], index, hybrid, crash)
        rows.append({"corpus": corpus, "half": half, "qid": q["qid"], "query": q["query"], "relevant": judged(q["relevant"]),
                     "routed_as": r.query_type if r else None, "routed": top_documents(r.hits, WIDE) if r else [],
                     "hybrid": top_documents(h.hits, WIDE) if h else [],
                     "found": found[-1].to_dict() if found and r and r.query_type == "synthesis" else None}
                    | ({"crash": crash} if crash else {}))
    return rows


def searched(query: str, index: str, config, crash: str = "") -> tuple[Any, str]:
    """Returns search()'s result for `query`, or None and the error it raised, after `crash` (an earlier one's)."""
    try:
        return search(query, index=index, config=config), crash
    except Exception as e:  # a crash is what domain_bench counts, whatever its class
        return None, " ".join(filter(None, (crash, f"{type(e).__name__}: {e}"[:300])))


def placed(row: dict, order: Order = survey.survey_order) -> list[str]:
    """Returns the first `WIDE` documents (file names) the routed route would give `row` with its survey ordered by
    `order`: hybrid's first, then the order's; a row without a survey keeps its routed ranking."""
    if row["found"] is None:
        return row["routed"]
    docs = [doc_name(d) for d in order(survey.Surveyed.of(row["found"]))]
    return list(dict.fromkeys([*row["hybrid"][:1], *docs]))[:WIDE]


def replay(rows: Sequence[dict], order: Order = survey.survey_order) -> dict[str, float]:
    """Returns mean recall@5 and MRR@5 of `rows` placed by `order`, and how many rows there are."""
    ranked = [(placed(r, order), r["relevant"]) for r in rows]
    return {"recall@5": mean([score(f"recall@{K}", p, rel) for p, rel in ranked]),
            "mrr@5": mean([score(f"mrr@{K}", p, rel) for p, rel in ranked]), "n": len(rows)}


def groups(rows: Sequence[dict], order: Order = survey.survey_order) -> dict[str, dict[str, float]]:
    """Returns `replay` over the rows of the tuned corpora, of the dev-opened ones, and of all."""
    split: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        split["tuned" if r["corpus"] in CORPORA else "opened" if r["corpus"] in DEV_OPENED else "other"].append(r)
        split["all"].append(r)
    return {g: replay(v, order) for g, v in split.items()}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="record the surveys of the synthesis questions of some halves")
    rec.add_argument("--corpora", required=True, help="comma-separated corpora of bench/data/domains")
    rec.add_argument("--halves", default="dev", help="comma-separated halves (default dev)")
    rec.add_argument("--out", required=True, help="JSON lines file the rows are appended to")
    rep = sub.add_parser("replay", help="replay the shipped survey_order on recorded rows")
    rep.add_argument("files", nargs="+")
    args = ap.parse_args()
    if args.command == "record":
        cfg = load_config(None)
        for corpus in args.corpora.split(","):
            name, _ = prepare(corpus)
            for half in args.halves.split(","):
                with open(args.out, "a", encoding="utf-8") as out:
                    for row in record(load(corpus, half), name, cfg, corpus, half):
                        out.write(json.dumps(row, ensure_ascii=False) + "\n")
    else:
        rows = [json.loads(line) for f in args.files for line in Path(f).read_text(encoding="utf-8").splitlines()]
        for group, figures in groups(rows).items():
            print(f"{group:<7} n {figures['n']:>3}  recall@5 {figures['recall@5']:.3f}  MRR@5 {figures['mrr@5']:.3f}")
