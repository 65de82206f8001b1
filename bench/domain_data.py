"""The non-statute question sets (bench/data/domains/<corpus>/{dev,test}.jsonl): loading, validation, split.

A corpus may have more dev halves (issue 41, round 15), questions written after tuning on dev, to find what dev no
longer shows: `dev2.jsonl` (surveys of 2–5 files, relations) and `dev3.jsonl` (overviews of a whole chapter or topic,
6–11 files); tuned on like dev, each reported apart from it, so dev's and the other halves' figures stay reproducible.
A record: qid, query, type (one of routing_data.TYPES), lang (en | zh), relevant (markdown file
names of the corpus that bench/debian_docs.py writes), evidence (file → a verbatim passage of that
file that answers the question; every relevant file has one), for compare `named` (the two or more
things compared, each as written in the query). `<corpus>/manifest.json` is the converter's manifest
of the corpus the questions were labelled on (package version and every file's sha256).
  python bench/domain_data.py [CORPUS_ROOT]   # validates every corpus built under CORPUS_ROOT
                                              # (default $LAMBDARAG_HOME/corpora)
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from debian_docs import default_out  # noqa: E402
from routing_data import TYPES, record_problems, split  # noqa: E402,F401  (split: the routing split, per type, seeded)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data" / "domains"
CORPORA = ("reference-en", "reference-zh-cn", "faq-zh-cn", "handbook-en", "valgrind-en", "maint-guide-en")
"""The corpora tuned on (their dev halves) and run by default."""
OPENED = ("developers-reference-en", "install-guide-zh-cn")
"""Round 16's held-out corpora (30 questions each, written blind), open for tuning on both halves since round 18;
default runs still leave them out, so every committed result file reproduces."""
DEV_OPENED = ("edu-en", "edu-zh-cn", "policy-en", "handbook-zh-cn", "harden-en", "kicad-pcb-zh-cn", "kernel-handbook-en",
              "calc-guide-zh-cn", "bash-ref-en", "writer-guide-zh-cn", "wireshark-guide-en", "kicad-tools-zh-cn",
              "mutt-manual-en", "impress-draw-guide-zh-cn", "bind-arm-en", "office-guide-zh-cn", "r-intro-en",
              "chart-help-zh-cn")
"""Round 18's to 26's held-out corpora (the Debian Edu bookworm manual; the Debian Policy Manual and the Administrator's
Handbook in Simplified Chinese; the Securing Debian Manual and KiCad 6's PCB editor manual in Simplified Chinese; the
Debian Linux Kernel Handbook and LibreOffice Calc's how-to guides in Simplified Chinese; the Bash Reference Manual and
LibreOffice Writer's how-to guides in Simplified Chinese; the Wireshark User's Guide's chapters on using it and KiCad's
manuals other than its editors' in Simplified Chinese; the Mutt manual's chapters on using and configuring it and
LibreOffice Impress's and Draw's how-to guides in Simplified Chinese; the BIND 9 Administrator Reference Manual's
chapters on running a name server and LibreOffice's shared how-to guides in Simplified Chinese; An Introduction to R and
LibreOffice Chart's help in Simplified Chinese; 30 questions each, written blind): their dev halves are open for tuning
(since rounds 19 to 27) and their test halves stay frozen (measured, never tuned on); default runs leave them out."""
HELD_OUT: tuple[str, ...] = ("postgres-sql-en", "wizards-zh-cn")
"""Round 27's held-out corpora (PostgreSQL 15's tutorial and SQL chapters on tables, data changes and queries;
LibreOffice's wizards' help in Simplified Chinese), 30 questions each written blind (before any run on them), measured
before the round and on its merged tree, never tuned on; default runs leave them out."""
LABELLED = CORPORA + OPENED + DEV_OPENED + HELD_OUT
HALVES = ("dev", "test")
EXTRA = ("dev2", "dev3")
"""The extra dev halves some corpora have (`halves_of`): tuned on, never mixed into dev's or test's figures."""
LANGS = ("en", "zh")
SEED = 29
DRAWN_WITH = {"maint-guide-en": 16}
"""Corpora whose halves were drawn with another seed: maint-guide-en's with routing_data's (16), by mistake, and
frozen so before any measurement; drawing them again with `SEED` would move dev questions tuned on into its test half."""


def seed_of(corpus: str) -> int:
    """Returns the seed `split` drew a corpus's halves with."""
    return DRAWN_WITH.get(corpus, SEED)


def halves_of(corpus: str) -> tuple[str, ...]:
    """Returns the halves a corpus has: dev and test, then each of `EXTRA` whose file exists."""
    return HALVES + tuple(h for h in EXTRA if (DATA / corpus / f"{h}.jsonl").is_file())


def open_halves(corpus: str) -> tuple[str, ...]:
    """Returns the halves of a corpus a run may read: every half of a tuned or opened corpus, the dev halves of a
    dev-opened one (its test half stays frozen), none of a held-out one."""
    if corpus in HELD_OUT:
        return ()
    return tuple(h for h in halves_of(corpus) if corpus not in DEV_OPENED or h != "test")


def book_of(corpus: str) -> str:
    """Returns the book a corpus's questions are about: its name without the language (handbook-en and handbook-zh-cn
    are one book, translated)."""
    return re.sub(r"-(?:en|zh-cn)$", "", corpus)


def load(corpus: str, half: str) -> list[dict]:
    """Returns the records of one half (dev or test) of one corpus's questions."""
    path = DATA / corpus / f"{half}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def manifest(corpus: str) -> dict:
    """Returns the manifest of the corpus the questions were labelled on (debian_docs.write's output)."""
    return json.loads((DATA / corpus / "manifest.json").read_text(encoding="utf-8"))


def flat(text: str) -> str:
    """Returns text with every run of whitespace as one space, so a quote may cross a line break."""
    return re.sub(r"\s+", " ", text)


def labelled_problems(r: dict, seen: set) -> list[str]:
    """Returns what is wrong with one labelled record of a documentation corpus: the routing checks and its `lang`."""
    wrong_lang = [] if r.get("lang") in LANGS else [f"{r.get('qid')}: lang {r.get('lang')!r} is not one of {LANGS}"]
    return record_problems(r, seen) + wrong_lang


def problems(records: list[dict], files: set[str], folder: Path | None = None) -> list[str]:
    """Returns what is wrong with the records against a corpus's file names (and its text, given its folder)."""
    out: list[str] = []
    seen: set[str] = set()
    for r in records:
        where = f"{r.get('qid')}: "
        out += labelled_problems(r, seen)
        relevant, evidence = r.get("relevant", []), r.get("evidence", {})
        if not relevant:
            out.append(where + "no relevant file")
        out += [where + f"no file {f}" for f in relevant if f not in files]
        out += [where + f"relevant {f} has no evidence" for f in relevant if f not in evidence]
        out += [where + f"evidence file {f} is not relevant" for f in evidence if f not in relevant]
        if folder is not None:
            for f, quote in evidence.items():
                if (folder / f).is_file() and flat(quote) not in flat((folder / f).read_text(encoding="utf-8")):
                    out.append(where + f"{f} does not contain {quote!r}")
        if r.get("type") == "synthesis" and len(relevant) < 2:
            out.append(where + "synthesis needs at least two relevant files")
        if r.get("type") == "compare":
            named = r.get("named", [])
            if len(named) < 2:
                out.append(where + "compare needs at least two named things")
            out += [where + f"named {n!r} is not in the query" for n in named
                    if n.lower() not in r.get("query", "").lower()]
    return out


def check(corpus: str, corpus_root: Path | None = None) -> list[str]:
    """Returns the problems of every half of a corpus, quotes included when the corpus is built there."""
    folder = (corpus_root / corpus) if corpus_root else default_out(corpus)
    records = [r for half in halves_of(corpus) for r in load(corpus, half)]
    return problems(records, set(manifest(corpus)["sha256"]), folder if folder.is_dir() else None)


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    found = [f"{c} {p}" for c in LABELLED if (DATA / c).is_dir() for p in check(c, root)]
    sys.stdout.write("\n".join(found) + "\n" if found else "ok\n")
    sys.exit(1 if found else 0)
