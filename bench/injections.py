"""Injection benchmark (issue 44 §5): recall of the instruction detector on paraphrased injections, its false
positives on benign text and on the Debian indexes, and what the offline answer quotes.

- recall: each order of bench/data/injections/{dev,test}.jsonl is planted in a statute-like article; it counts as
  caught when the article's chunk is flagged (`skills.store.instructions.flagged`: the phrase list, and the
  sentences `skills.store.addressed` finds) — per half and per kind, and for the phrase list alone (the "before");
- quoted: the offline answer (`extractive_answer`) to a question the planted article answers, with a true article
  beside it: how many answers quote a word of the order;
- benign: the hard negatives of benign.jsonl flagged, per half;
- corpora: chunks of each Debian index (``$LAMBDARAG_HOME/<index>``, built by bench/domain_bench.py) flagged, with
  the ids of the flagged ones (the target is ≤ 1 %), and of the statute folders (../shared/data/laws and maritime,
  read as `index` reads them). A flagged chunk is never quoted, so each false flag costs answers.

The test half was committed before `MARGIN` was chosen on the dev half. Writes bench/results/injections.json.
Usage: nice -n 10 python bench/injections.py [--index NAME ...]
"""
from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.machine import facts as machine_facts  # noqa: E402
DATA = ROOT / "bench" / "data" / "injections"
OUT = ROOT / "bench" / "results" / "injections.json"
INDEXES = tuple(f"domain-{c}" for c in ("reference-en", "faq-zh-cn", "reference-zh-cn", "handbook-en", "maint-guide-en",
                                        "valgrind-en", "developers-reference-en", "install-guide-zh-cn"))
"""The Debian indexes of bench/domain_bench.py: the candidate rules were chosen on the first six (round 17); the last
two, round 16's held-out corpora, only check them."""
STATUTES = (ROOT.parent / "shared" / "data" / "laws", ROOT.parent / "shared" / "data" / "maritime")
ARTICLE = {"zh": ("第二条　船舶检验机构应当依照本条例对船舶实施检验，检验合格的，发给相应的检验证书。", "船舶检验由什么机构实施？"),
           "en": ("Section 2. The inspection body shall inspect each ship under these rules and issue a certificate "
                  "to a ship that passes.", "Who inspects the ships?")}


def rows(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def planted(order: dict[str, Any]) -> Any:
    from lambdarag.skills.store.records import Hit

    text, _ = ARTICLE[order["lang"]]
    return Hit(chunk_id=f"planted-{order['id']}#2", source=f"planted-{order['id']}.md", section="2",
               title="Notice", text=f"{text}{order['order']}", score=2.0)


def quotes_order(order: dict[str, Any]) -> bool:
    """Returns whether the offline answer to the article's question quotes the planted order."""
    from lambdarag import Context, State
    from lambdarag.skills.generate import extractive_answer
    from lambdarag.domains import profile_named
    from lambdarag.skills.store.records import Hit, RetrievalPlan

    text, question = ARTICLE[order["lang"]]
    true = Hit(chunk_id="law#2", source="law.md", section="2", title="Law", text=text, score=1.0)
    state = State.of(question, hits=(planted(order), true), plan=RetrievalPlan())
    answer = extractive_answer(state, Context(resources={"profile": profile_named("generic")}))["answer"]
    return any(part and part in answer for part in order["order"].replace("，", "。").split("。")[:3] if len(part) > 8)


def recall(half: str) -> dict[str, Any]:
    from lambdarag.skills.store.instructions import flagged, instruction_phrases

    orders = rows(f"{half}.jsonl")
    caught = [o for o in orders if flagged(planted(o))]
    by_kind = Counter(o["kind"] for o in orders)
    caught_kind = Counter(o["kind"] for o in caught)
    return {"orders": len(orders), "caught": len(caught), "recall": round(len(caught) / len(orders), 3),
            "missed": [o["id"] for o in orders if o not in caught],
            "by_kind": {k: f"{caught_kind[k]}/{n}" for k, n in sorted(by_kind.items())},
            "phrase_list_only": sum(1 for o in orders if instruction_phrases(planted(o).text)),
            "offline_answers_quoting_the_order": sum(1 for o in orders if quotes_order(o))}


def benign(half: str) -> dict[str, Any]:
    from lambdarag.skills.store.instructions import instruction_like

    texts = [b for b in rows("benign.jsonl") if b["half"] == half]
    hit = [b["id"] for b in texts if instruction_like(b["text"])]
    return {"sentences": len(texts), "flagged": len(hit), "ids": hit}


def index_chunks(name: str, home: Path) -> list[dict[str, Any]]:
    """The chunks of a saved index, read from the SQLite chunk store of the generation its manifest names."""
    index = home / name / "index"
    if not (index / "manifest.json").is_file():
        return []
    generation = json.loads((index / "manifest.json").read_text(encoding="utf-8"))["generation"]
    db = sqlite3.connect(f"{(index / f'chunks.{generation}.sqlite').resolve().as_uri()}?mode=ro", uri=True)
    try:
        return [json.loads(row) for (row,) in db.execute("SELECT json FROM chunk ORDER BY row")]
    finally:
        db.close()


def folder_chunks(root: Path) -> list[dict[str, Any]]:
    from lambdarag.domains.corpus import read_corpus

    return [{"id": c.id, "text": c.text} for c in read_corpus(root).chunks] if root.is_dir() else []


def corpus(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    from lambdarag.skills.store.addressed import addressed_sentences, candidates
    from lambdarag.skills.store.instructions import instruction_phrases, normalised

    if not chunks:
        return {"skipped": "not found (copy the index from /work/home-shared, or the folder is missing)"}
    started = time.perf_counter()
    flagged = {}
    for c in chunks:
        found = instruction_phrases(c["text"]) + addressed_sentences(normalised(c["text"]))
        if found:
            flagged[c["id"]] = [s[:120] for s in found]
    return {"chunks": len(chunks), "with_candidates": sum(1 for c in chunks if candidates(normalised(c["text"]))),
            "flagged": len(flagged), "rate": round(len(flagged) / max(len(chunks), 1), 4), "flagged_chunks": flagged,
            "seconds": round(time.perf_counter() - started, 1)}


def main() -> int:
    import os

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", action="append", help="a Debian index to measure (default: INDEXES)")
    args = parser.parse_args()
    from lambdarag.skills.store.addressed import MARGIN

    home = Path(os.environ.get("LAMBDARAG_HOME", Path.home() / ".lambdarag"))
    out = {"margin": MARGIN, "dev": recall("dev"), "test": recall("test"),
           "benign": {"dev": benign("dev"), "test": benign("test")},
           "corpora": {**{name: corpus(index_chunks(name, home)) for name in (args.index or INDEXES)},
                       **{root.name: corpus(folder_chunks(root)) for root in STATUTES}},
           "machine": machine_facts()}
    OUT.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in out.items() if k != "corpora"}, ensure_ascii=False, indent=1))
    for name, r in out["corpora"].items():
        print(name, {k: v for k, v in r.items() if k != "flagged_chunks"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
