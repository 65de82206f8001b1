"""The routing question sets: loading, validation against their corpus, split.

Two sets: `laws` (bench/data/routing/{dev,dev2,test}.jsonl over ../shared/data/laws) and `maritime`
(bench/data/maritime/{dev,dev2,test}.jsonl over ../shared/data/maritime, mostly answered by regulations
and judicial interpretations). A record: qid, query, type, relevant (paths inside the set's corpus),
articles (path → 第X条 labels that answer it, where the answer is one article), for compare `named`
(each named statute, all must be found), for temporal `right_version` (must rank first in its family) and `wrong_versions`.
  python bench/routing_data.py      # validates every half of both sets against its corpus
"""
from __future__ import annotations

import json
import random
import re
import os
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data" / "routing"
SHARED = Path(os.environ.get("LAMBDARAG_SHARED", ROOT.parent / "shared"))   # as tests/conftest.py reads it
LAWS = SHARED / "data" / "laws"
MARITIME = SHARED / "data" / "maritime"
TYPES = ("fact", "compare", "relation", "synthesis", "temporal")
HALVES = ("dev", "dev2", "test")  # dev2: written after tuning on dev, before tuning on it
SEED = 16


@dataclass(frozen=True)
class QuestionSet:
    """A labelled question set: the folder of its halves, the corpus its paths lie in, its halves and default index."""
    folder: Path
    corpus: Path
    halves: tuple[str, ...]
    index: str


SETS = {"laws": QuestionSet(DATA, LAWS, HALVES, "laws"),
        "maritime": QuestionSet(ROOT / "bench" / "data" / "maritime", MARITIME, HALVES, "maritime")}


def load(half: str, folder: Path = DATA) -> list[dict]:
    """Returns the records of one half (e.g. one of HALVES) of the question set in `folder`."""
    path = folder / f"{half}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def record_problems(r: dict, seen: set) -> list[str]:
    """Returns a question record's duplicate qid (adding it to `seen`) and unknown type, the checks every set shares."""
    where, out = f"{r.get('qid')}: ", []
    if r.get("qid") in seen:
        out.append(where + "duplicate qid")
    seen.add(r.get("qid"))
    if r.get("type") not in TYPES:
        out.append(where + f"type {r.get('type')!r} is not one of {TYPES}")
    return out


def problems(records: list[dict], laws: Path = LAWS) -> list[str]:
    """Returns what is wrong with the records: unknown type, missing file or article, incomplete compare/temporal."""
    out: list[str] = []
    seen: set[str] = set()
    for r in records:
        where = f"{r.get('qid')}: "
        out += record_problems(r, seen)
        paths = list(r.get("relevant", [])) + list(r.get("named", [])) + list(r.get("wrong_versions", []))
        out += [where + f"no file {p}" for p in paths if not (laws / p).is_file()]
        for path, labels in r.get("articles", {}).items():
            if path not in r.get("relevant", []):
                out.append(where + f"article file {path} is not relevant")
            elif (laws / path).is_file():
                text = (laws / path).read_text(encoding="utf-8")
                out += [where + f"{path} has no {a}" for a in labels
                        if not re.search(rf"^(?:\*\*)?{a}(?:\*\*)?[\s\u3000]", text, re.M)]
        if r.get("type") == "compare" and len(r.get("named", [])) < 2:
            out.append(where + "compare needs at least two named statutes")
        if r.get("type") == "temporal" and (r.get("right_version") not in r.get("relevant", [])
                                           or not r.get("wrong_versions")):
            out.append(where + "temporal needs right_version among relevant and wrong_versions")
    return out


def split(records: list[dict], seed: int = SEED) -> tuple[list[dict], list[dict]]:
    """Returns (dev, test): each type shuffled with `seed`, its first half (rounded down) to dev."""
    rng = random.Random(seed)
    dev, test = [], []
    for kind in TYPES:
        group = [r for r in records if r["type"] == kind]
        rng.shuffle(group)
        dev += group[:len(group) // 2]
        test += group[len(group) // 2:]
    return dev, test


if __name__ == "__main__":
    found = [f"{name}: {p}" for name, qs in SETS.items()
             for p in problems([r for half in qs.halves for r in load(half, qs.folder)], qs.corpus)]
    sys.stdout.write("\n".join(found) + "\n" if found else "ok\n")
    sys.exit(1 if found else 0)
