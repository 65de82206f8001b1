"""The answer question sets (bench/data/answers/<corpus>/{dev,test}.jsonl): loading and validation.

A record: qid, query, type (one of routing_data.TYPES), lang (en | zh), relevant (files of the corpus,
paths relative to its folder), evidence (sentences, list items, table rows or option lines copied
verbatim from a relevant file, any one of which answers the question), and for compare `sides`
(per named thing: name as written in the query, its own evidence and relevant files; the record's
evidence and relevant are the union of its sides'). A quote is checked with runs of whitespace as one
space, so it may cross a line break of the file.
  python bench/answer_data.py      # validates every half of every corpus built where it is looked for
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from domain_data import LANGS, flat  # noqa: E402
from routing_data import MARITIME, TYPES, record_problems  # noqa: E402,F401  (TYPES: the question types)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data" / "answers"
HALVES = ("dev", "test")


@dataclass(frozen=True)
class AnswerSet:
    """A corpus's answer questions: the folder the corpus's files lie in and the index built from them."""
    name: str
    corpus: Path
    index: str


def corpora_home() -> Path:
    """Returns $LAMBDARAG_HOME/corpora (~/.lambdarag/corpora when unset), where bench/debian_docs.py writes."""
    return Path(os.environ.get("LAMBDARAG_HOME", Path.home() / ".lambdarag")) / "corpora"


def answer_sets() -> dict[str, AnswerSet]:
    """Returns every answer set by corpus name (the Debian corpora under corpora_home(), maritime under shared)."""
    home = corpora_home()
    return {"reference-en": AnswerSet("reference-en", home / "reference-en", "domain-reference-en"),
            "reference-zh-cn": AnswerSet("reference-zh-cn", home / "reference-zh-cn", "domain-reference-zh-cn"),
            "handbook-en": AnswerSet("handbook-en", home / "handbook-en", "domain-handbook-en"),
            "maritime": AnswerSet("maritime", MARITIME, "maritime")}


def load(corpus: str, half: str) -> list[dict]:
    """Returns the records of one half (dev or test) of one corpus's answer questions."""
    path = DATA / corpus / f"{half}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def quote_problems(where: str, quotes: list[str], relevant: list[str], folder: Path) -> list[str]:
    """Returns a problem for each quote found verbatim in none of the relevant files under `folder`."""
    texts = [flat((folder / f).read_text(encoding="utf-8")) for f in relevant if (folder / f).is_file()]
    return [where + f"no relevant file contains {q!r}" for q in quotes if not any(flat(q) in t for t in texts)]


def problems(records: list[dict], folder: Path) -> list[str]:
    """Returns what is wrong with the records against the corpus in `folder`: files, quotes, sides, types."""
    out: list[str] = []
    seen: set[str] = set()
    for r in records:
        where = f"{r.get('qid')}: "
        out += record_problems(r, seen)
        if r.get("lang") not in LANGS:
            out.append(where + f"lang {r.get('lang')!r} is not one of {LANGS}")
        relevant, evidence = r.get("relevant", []), r.get("evidence", [])
        if not relevant or not evidence:
            out.append(where + "needs relevant files and evidence")
        out += [where + f"no file {f}" for f in relevant if not (folder / f).is_file()]
        out += quote_problems(where, evidence, relevant, folder)
        if r.get("type") == "synthesis" and len(relevant) < 2:
            out.append(where + "synthesis needs at least two relevant files")
        sides = r.get("sides", [])
        if (r.get("type") == "compare") != bool(sides) or (sides and len(sides) < 2):
            out.append(where + "a compare question, and only it, has two or more sides")
        for s in sides:
            out += quote_problems(where + f"side {s.get('name')!r}: ", s.get("evidence", []), s.get("relevant", []),
                                  folder)
            if s.get("name", "").lower() not in r.get("query", "").lower():
                out.append(where + f"side {s.get('name')!r} is not named in the query")
            if not set(s.get("evidence", [])) <= set(evidence) or not set(s.get("relevant", [])) <= set(relevant):
                out.append(where + f"side {s.get('name')!r} has evidence or files the record lacks")
    return out


def check(corpus: str) -> list[str]:
    """Returns the problems of every half of one corpus's answer questions (the corpus must be built)."""
    answer_set = answer_sets()[corpus]
    if not answer_set.corpus.is_dir():
        return [f"{corpus}: no corpus at {answer_set.corpus}"]
    halves = [h for h in HALVES if (DATA / corpus / f"{h}.jsonl").is_file()]
    return problems([r for h in halves for r in load(corpus, h)], answer_set.corpus)


if __name__ == "__main__":
    bad = [p for c in answer_sets() if (DATA / c).is_dir() for p in check(c)]
    sys.stdout.write("\n".join(bad) + "\n" if bad else "every answer question checks out\n")
    sys.exit(1 if bad else 0)
