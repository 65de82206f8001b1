"""Answer benchmark on a fresh dev set (issue 40): does each named side of a comparison get its own cited sentence?

bench/data/fresh/<corpus>.jsonl holds questions written in round 13, after the answerer had been tuned on the other
sets' dev halves and before it was tuned on these: mostly compare questions on pairs no other set asks about (each
with per-side evidence), and a few fact and relation questions, in English and Chinese, over five Debian corpora
(bench/answer_data.py's record). It is a DEV set: tune on it; the frozen test halves stay as they are.
bench/data/fresh15/ (round 15) is a second one with no compare question: fact, relation, temporal and synthesis
questions on six Debian corpora, written before the answerer was run on them (its README says how).
Scores as bench/answers.py's (evidence, compare_all_sides: every side quoted with its own evidence and cited,
false refusals, exit codes), per corpus, per type and over all.
  python bench/fresh_answers.py [--set fresh15] [--corpora valgrind-en,faq-zh-cn] [--tag before]
      → bench/results/answers-<SET>-dev[-TAG].json (SET: fresh unless given)
Indexes: domain-<corpus> under $LAMBDARAG_HOME (bench/domain_bench.py builds them).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from answer_data import corpora_home, problems  # noqa: E402
from answers import run_half, summarise, summary  # noqa: E402
from machine import write as write_result  # noqa: E402
from routing import warm_up  # noqa: E402

from lambdarag.orchestration.config import load_config  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
SETS = ("fresh", "fresh15")


def corpora(name: str = "fresh") -> list[str]:
    """Returns the corpora a fresh set (bench/data/<name>/) has questions on."""
    return sorted(p.stem for p in (DATA / name).glob("*.jsonl"))


def load(corpus: str, name: str = "fresh") -> list[dict]:
    """Returns a fresh set's questions on one corpus."""
    return [json.loads(line) for line in (DATA / name / f"{corpus}.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]


def check(corpus: str, name: str = "fresh") -> list[str]:
    """Returns what is wrong with one corpus's questions against the built corpus (bench/answer_data.problems)."""
    folder = corpora_home() / corpus
    return problems(load(corpus, name), folder) if folder.is_dir() else [f"{corpus}: no corpus at {folder}"]


def main(names: list[str], config: str | None, name: str = "fresh") -> dict:
    cfg = load_config(config)
    if cfg.llm.base_url:
        raise SystemExit(f"bench/fresh_answers.py measures the offline answer; {config or 'the config'} sets "
                         "llm.baseUrl")
    result = {"set": name, "half": "dev", "config": config or "agent-config.yml", "corpora": {}}
    for corpus in names:
        questions = load(corpus, name)
        warm_up(f"domain-{corpus}", cfg, questions=questions)
        result["corpora"][corpus] = {"corpus": corpus, "dev": run_half(questions, f"domain-{corpus}", cfg, config, 0)}
    rows = [row for c in result["corpora"].values() for row in c["dev"]["answers"]]
    result["overall"] = summarise(rows)
    result["per_type"] = {t: summarise([r for r in rows if r["type"] == t]) for t in dict.fromkeys(r["type"] for r in rows)}
    return result


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="fresh", choices=SETS, help="the question set: a folder of bench/data")
    ap.add_argument("--corpora", default="", help="comma-separated corpora (default: every one the set has)")
    ap.add_argument("--config", default=None)
    ap.add_argument("--tag", default="", help="result file suffix, e.g. before")
    args = ap.parse_args()
    res = main(args.corpora.split(",") if args.corpora else corpora(args.set), args.config, args.set)
    path = write_result(f"answers-{args.set}-dev" + (f"-{args.tag}" if args.tag else ""), res)
    o = res["overall"]
    types = ", ".join(f"{t} {m['evidence']:.2f}" + (f" (every side cited {m['compare_all_sides']:.2f})"
                                                    if "compare_all_sides" in m else "")
                      for t, m in res["per_type"].items())
    sys.stdout.write("\n".join(summary(r) for r in res["corpora"].values())
                     + f"\nall {o['n']}: evidence {o['evidence']:.2f} ({types}), false refusals "
                       f"{o['false_refusal']:.2f}\n→ {path}\n")
