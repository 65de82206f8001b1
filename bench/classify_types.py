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
The shipped exemplars hold every open dev half's questions, so a dev figure is fitted. `--lobo` measures each open
corpus's open halves with a classifier fitted on exemplars without any question of its book (both languages left out
together): what a book nobody labelled gets, but for the cues, which were written on these halves too; so each book is
also classified without its own cues (`own_cues`: those firing on its questions and no other book's), the honest
estimate (round 22), and each relation cue is ablated on it: the books it wins on (`relation_cues`, round 26).
Run:
  python bench/classify_types.py [--sets reference-en,…,laws,maritime,written] [--out classify-types-before.json]
  python bench/classify_types.py --sets edu-en,edu-zh-cn --halves dev --out classify-types-edu-dev.json
                                                                         → bench/results/classify-types.json
  python bench/classify_types.py --lobo                                  → bench/results/classify-types-lobo.json
"""
from __future__ import annotations

import argparse
import copy
import json
import re
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from domain_data import (DEV_OPENED, HELD_OUT, LABELLED, OPENED, book_of, halves_of, load as load_domain,  # noqa: E402
                         open_halves)
from machine import facts as machine  # noqa: E402
from routing_data import SETS, TYPES, load as load_routing  # noqa: E402

from lambdarag import Context  # noqa: E402
from lambdarag.domains import profile_named  # noqa: E402
from lambdarag.domains.generic import EXEMPLARS  # noqa: E402
from lambdarag.domains.generic.cues import CUES, rules_of  # noqa: E402
from lambdarag.skills import build  # noqa: E402
from lambdarag.skills.classify import learned_classify  # noqa: E402
from lambdarag.skills.exemplars import shipped_path  # noqa: E402
from lambdarag.skills.profile import CorpusProfile  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
WRITTEN = ROOT / "bench" / "data" / "classify" / "written.jsonl"
"""Questions in both languages about no benchmark's corpus, written next to the round-14 cues: a dev half
(bench/data/classify/README.md)."""
PROFILES = {**{c: "generic" for c in LABELLED}, **{s: "prc_statutes" for s in SETS}, "written": "generic"}
"""The corpus profile each set's index is built with (``domain: auto``: the statute pack claims the statutes)."""
DEFAULT_SETS = [n for n in PROFILES if n not in OPENED + DEV_OPENED + HELD_OUT]
"""The sets a run without --sets classifies: all but the held-out corpora, opened or not (name them with --sets)."""
LOBO_SETS = [c for c in LABELLED if open_halves(c)]
"""The corpora `--lobo` measures: every one with an open half."""


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


def classified(questions: list[dict], profile: CorpusProfile) -> dict:
    """Returns type accuracy per type and overall, the confusion and the misclassified questions of one half, and
    the accuracy of the learned classifier alone (no rules; fact when unsure): how well the fallback carries."""
    term, ctx = build("classify_offline", {}), {"profile": profile}
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
            "sets": {n: {h: classified(qs, profile_named(PROFILES[n])) for h, qs in halves(n, only).items()}
                     for n in names}}


def without_book(rows: list[dict], book: str) -> list[dict]:
    """Returns the exemplar rows that hold no question of a book: none sourced from one of its corpora (any half)
    and none whose text one of its open halves asks."""
    corpora = {c for c in LABELLED if book_of(c) == book}
    asked = {q["query"] for c in corpora if open_halves(c) for qs in halves(c, open_halves(c)).values() for q in qs}
    return [r for r in rows if r.get("source", "").split("/")[0] not in corpora and r["query"] not in asked]


def lobo_profile(book: str, folder: Path) -> CorpusProfile:
    """Returns the generic profile whose learned classifier is fitted without a book's questions: its exemplars
    (`without_book`) are written to `folder`, beside a link to the shipped vectors, so nothing is embedded again."""
    generic = profile_named("generic")
    rows = [json.loads(line) for line in EXEMPLARS.read_text(encoding="utf-8").splitlines() if line.strip()]
    path = folder / book / EXEMPLARS.name
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in without_book(rows, book)),
                    encoding="utf-8")
    shipped_path(path).symlink_to(shipped_path(EXEMPLARS))
    profile = copy.copy(generic)
    profile.classifier = replace(generic.classifier, exemplars_file=path)
    return profile


def cue_books(read: dict[str, dict[str, list[dict]]]) -> dict[tuple[int, int], set[str]]:
    """Returns the books each generic cue (its group and place in cues.CUES) fires on among the questions read, by
    corpus and half (the written set is a book of its own)."""
    cues = [((g, i), re.compile(cue, re.I)) for g, (_, _, group) in enumerate(CUES) for i, cue in enumerate(group)]
    books: dict[tuple[int, int], set[str]] = defaultdict(set)
    for name, by_half in read.items():
        for q in (q for qs in by_half.values() for q in qs):
            for key, cue in cues:
                if cue.search(q["query"]):
                    books[key].add(book_of(name))
    return dict(books)


def own_cues(books: dict[tuple[int, int], set[str]], book: str) -> set[tuple[int, int]]:
    """Returns the cues a book may have prompted: those firing on its questions and on no other book's. A cue written
    on one book and never heard again elsewhere is no evidence for a book nobody read."""
    return {key for key, found in books.items() if found == {book}}


def without_cues(profile: CorpusProfile, dropped: set[tuple[int, int]]) -> CorpusProfile:
    """Returns the profile whose rules lack the `dropped` cues (group, place in cues.CUES)."""
    groups = tuple((kind, confidence, tuple(c for i, c in enumerate(cues) if (g, i) not in dropped))
                   for g, (kind, confidence, cues) in enumerate(CUES))
    out = copy.copy(profile)
    out.classifier = replace(profile.classifier, rules=rules_of(groups))
    return out


def relation_cue_wins(read: dict[str, dict[str, list[dict]]], profiles: dict[str, CorpusProfile],
                      dropped: dict[str, set[tuple[int, int]]]) -> list[dict]:
    """Returns each relation cue with the books whose dev questions (no test half) it fires on, and those where the
    honest run (each book's profile without its own cues) types more of them right with it than without (wins) or
    fewer (losses): what a cue is worth for a book nobody read."""
    term, out = build("classify_offline", {}), []

    def right(q: dict, profile: CorpusProfile) -> bool:
        return term.run(q["query"], Context(resources={"profile": profile})).classification.type == q["type"]

    for g, (kind, _, group) in enumerate(CUES):
        for i, cue in enumerate(group if kind == "relation" else ()):
            pattern, gained, fires_on = re.compile(cue, re.I), Counter(), set()
            for name, by_half in read.items():
                book = book_of(name)
                asked = [q for h, qs in by_half.items() if h != "test" for q in qs if pattern.search(q["query"])]
                if not asked or (g, i) in dropped[book]:
                    continue
                fires_on.add(book)
                honest = without_cues(profiles[book], dropped[book])
                bare = without_cues(profiles[book], dropped[book] | {(g, i)})
                gained[book] += sum(right(q, honest) - right(q, bare) for q in asked)
            out.append({"cue": cue, "fires_on": sorted(fires_on), "wins": sorted(b for b, n in gained.items() if n > 0),
                        "losses": sorted(b for b, n in gained.items() if n < 0)})
    return out


def pooled(results: list[dict]) -> dict:
    """Returns overall and relation accuracy over several halves' `classified` results, with their question counts."""
    confusion = [r["confusion"] for r in results]
    right = sum(c[t].get(t, 0) for c in confusion for t in c)
    relations = [c.get("relation", {}) for c in confusion]
    asked = sum(sum(r.values()) for r in relations)
    questions = sum(r["questions"] for r in results)
    return {"questions": questions, "overall": round(right / questions, 3), "relation_questions": asked,
            "relation": round(sum(r.get("relation", 0) for r in relations) / asked, 3)}


def lobo(names: list[str]) -> dict:
    """Returns each corpus's open halves classified leaving its book out of the exemplars (`sets`) and, more honest,
    out of the cues too (`sets_own_cues_dropped`: `own_cues`, found on every open half and the written set), with
    their accuracy with every exemplar and cue for contrast (`fitted`), the exemplars and cues each book's run
    dropped, the dev halves pooled both ways, and what each relation cue wins on the honest run (`relation_cue_wins`)."""
    books = {book_of(n) for n in names}
    read = {n: halves(n, open_halves(n)) for n in names}
    fired = cue_books(read | {"written": halves("written")})
    dropped = {b: own_cues(fired, b) for b in sorted(books)}
    with tempfile.TemporaryDirectory() as folder:
        profiles = {b: lobo_profile(b, Path(folder)) for b in sorted(books)}
        sets = {n: {h: classified(qs, profiles[book_of(n)]) for h, qs in by_half.items()}
                for n, by_half in read.items()}
        honest = {n: {h: classified(qs, without_cues(profiles[book_of(n)], dropped[book_of(n)]))
                      for h, qs in by_half.items()} for n, by_half in read.items()}
        kept = {b: len(p.classifier.exemplars) for b, p in profiles.items()}
        cues = relation_cue_wins(read, profiles, dropped)
    generic = profile_named("generic")
    fitted = {n: {h: classified(qs, generic)["type_accuracy"] for h, qs in by_half.items()}
              for n, by_half in read.items()}
    return {"machine": machine(), "exemplars": len(generic.classifier.exemplars),
            "left_out": {b: len(generic.classifier.exemplars) - k for b, k in kept.items()},
            "own_cues": {b: [CUES[g][2][i] for g, i in sorted(keys)] for b, keys in dropped.items()},
            "books": {b: [n for n in names if book_of(n) == b] for b in sorted(books)},
            "pooled_dev": pooled([by_half["dev"] for by_half in sets.values()]),
            "pooled_dev_own_cues_dropped": pooled([by_half["dev"] for by_half in honest.values()]),
            "sets": sets, "sets_own_cues_dropped": honest, "fitted": fitted, "relation_cues": cues}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="", help=f"comma-separated, of {','.join(PROFILES)} (default: all but the "
                    "held-out corpora; with --lobo every corpus with an open half)")
    ap.add_argument("--halves", default="", help="comma-separated halves to keep (dev,dev2,…); default every half")
    ap.add_argument("--lobo", action="store_true", help="leave each corpus's book out of the exemplars (every open "
                    "corpus unless --sets names some; its open halves; --halves is ignored)")
    ap.add_argument("--out", default="", help="the result file's name in bench/results (default classify-types.json, "
                    "with --lobo classify-types-lobo.json)")
    args = ap.parse_args()
    names = args.sets.split(",") if args.sets else LOBO_SETS if args.lobo else DEFAULT_SETS
    out = lobo(names) if args.lobo else main(names, tuple(h for h in args.halves.split(",") if h))
    result = args.out or ("classify-types-lobo.json" if args.lobo else "classify-types.json")
    (ROOT / "bench" / "results" / result).write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n",
                                                                   encoding="utf-8")
    if args.lobo:
        sys.stdout.write(f"dev pooled: exemplars left out {out['pooled_dev']}, own cues dropped too "
                         f"{out['pooled_dev_own_cues_dropped']}\n")
    for name, by_half in out["sets"].items():
        sys.stdout.write(f"{name:16} " + "  ".join(f"{h} {r['type_accuracy']['overall']:.3f} (relation "
                                                  f"{r['type_accuracy'].get('relation', float('nan')):.2f}, "
                                                  f"learned alone {r['learned_only']:.2f})"
                                                  for h, r in by_half.items()) + "\n")
