"""Answer benchmark on the routing sets' DEV halves (issue 40): bench/answers.py's scores on more questions.

bench/answers.py's own sets are small and their dev halves nearly saturated; the labelled sets of
bench/domain_bench.py (bench/domain_data.py: valgrind-en, faq-zh-cn, handbook-en, reference-zh-cn, reference-en,
maint-guide-en) hold 20 more dev questions each, every one with a verbatim passage per relevant file. Each passage is cut
into sentences (answers.SENTENCE_END) and a sentence of at least MIN_CHARS normalised characters counts as
evidence; a compare question's named things are its sides, each answered when a block labelled with its name
(or a cited claim naming it) cites a relevant file (answers.side_cited): the labels give no side its own
passage. Only DEV halves are read: the test halves stay frozen for bench/domain_bench.py.
  python bench/domain_answers.py [--corpora valgrind-en,faq-zh-cn] [--types compare] → bench/results/answers-domain-dev.json
Indexes: domain-<corpus> under $LAMBDARAG_HOME (bench/domain_bench.py builds them).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from answers import SENTENCE_END, normalise, run_half, summary  # noqa: E402
from domain_data import CORPORA, load  # noqa: E402
from machine import write as write_result  # noqa: E402
from routing import warm_up  # noqa: E402

from lambdarag.orchestration.config import load_config  # noqa: E402

MIN_CHARS = 12
"""A passage's piece shorter than this (normalised) is no evidence sentence: "Yes." would match anything."""


def as_answer_question(r: dict) -> dict:
    """Returns a labelled routing record in bench/answers.py's shape: its passages' sentences as evidence."""
    pieces = [p.strip() for passage in r["evidence"].values() for p in SENTENCE_END.split(passage)]
    evidence = [p for p in pieces if len(normalise(p)) >= MIN_CHARS] or list(r["evidence"].values())
    return {"qid": r["qid"], "type": r["type"], "query": r["query"], "relevant": r["relevant"],
            "evidence": evidence, **({"named": r["named"]} if r.get("named") else {})}


def main(corpora: list[str], config: str | None, halves: tuple[str, ...] = ("dev",),
         types: tuple[str, ...] = ()) -> dict:
    cfg = load_config(config)
    if cfg.llm.base_url:
        raise SystemExit(f"bench/domain_answers.py measures the offline answer; {config or 'the config'} sets "
                         "llm.baseUrl")
    result = {"half": ",".join(halves), "min_chars": MIN_CHARS, "config": config or "agent-config.yml", "corpora": {},
              **({"types": list(types)} if types else {})}
    for corpus in corpora:
        asked = {half: [as_answer_question(r) for r in load(corpus, half) if not types or r["type"] in types]
                 for half in halves}
        warm_up(f"domain-{corpus}", cfg, questions=asked[halves[0]])
        result["corpora"][corpus] = {"corpus": corpus} | {
            half: run_half(questions, f"domain-{corpus}", cfg, config, 0) for half, questions in asked.items()}
    return result


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", default=",".join(CORPORA), help="comma-separated corpora")
    ap.add_argument("--config", default=None)
    ap.add_argument("--halves", default="dev", help="comma-separated halves (default dev; test only to measure the frozen "
                                                     "halves of domain_data.HELD_OUT and DEV_OPENED)")
    ap.add_argument("--types", default="", help="comma-separated question types to ask (default: every type)")
    ap.add_argument("--name", default="answers-domain-dev", help="result file name before the tag")
    ap.add_argument("--tag", default="", help="result file suffix, e.g. before")
    args = ap.parse_args()
    res = main(args.corpora.split(","), args.config, tuple(args.halves.split(",")),
               tuple(t for t in args.types.split(",") if t))
    path = write_result(args.name + (f"-{args.tag}" if args.tag else ""), res)
    sys.stdout.write("\n".join(summary(r) for r in res["corpora"].values()) + f"\n→ {path}\n")
