"""Answer benchmark (issue 40): does the offline answer quote the sentence that answers the question?

Every question of bench/data/answers/<corpus>/<half>.jsonl goes through the full search() pipeline offline
(no LLM: llm.baseUrl unset and LAMBDARAG_LLM_* ignored; feedback off, so nothing is learnt between questions).
Per corpus, half and question type it reports:

- evidence: the share of answers that contain a labelled evidence sentence (any one of the question's);
- compare_all_sides (compare only): the share where every named side has one of its own evidence sentences in
  the answer and the answer cites one of that side's relevant files (a set whose sides are only named,
  bench/domain_answers.py: where each side has a block labelled with its name, or a cited claim naming it,
  citing one of the question's relevant files);
- refusals, and false_refusals: the share of answers that refuse (no citation, or the refusal sentence of
  skills.phrasing in either language) while one of the first five hits holds an evidence sentence;
- evidence_in_top5 / evidence_in_top8: the share whose first five (eight) hits hold an evidence sentence, what
  an answerer could have quoted;
- length: quoted sentences (sentences of the answer's cited claims, skills.context.claims, cut at 。！？ and at
  . ! ? before whitespace: a ? inside a URL ends nothing, and a piece holding no word, the ） after 。, is no
  sentence) and points (cited claims), mean and max, for synthesis and the other types apart;
- the exit code `lambdarag ask` gives (orchestration.cli.ask_exit_code on the same result), degraded answers,
  answers with fallbacks, which terms fell back and, per answer, why (`reasons`); a few questions (--cli-check)
  also run as a `lambdarag ask --json` subprocess and the two exit codes are compared;
- per question: the answer text, its citations, the type it was routed as, and each score, to read.

Containment is tested on normalised text (`normalise`): Unicode NFKC; citation markers removed
(``[来源: f#s]``, ``[source: f#s]``, ``[3]``); markdown links and images reduced to their text, emphasis and
code marks (``*``, ``_`` pairs, backquotes), heading marks, list bullets at a line start and table pipes
removed; clause semicolons (；;) removed, so a sentence quoted as two cited clauses still counts; case folded;
all whitespace removed (so re-wrapped lines and CJK spacing do not matter). An evidence
sentence counts when its normalised form, without trailing punctuation (。，,.、：:), is a substring of
the normalised answer (or hit).
  python bench/answers.py [--corpora reference-en,maritime] [--halves dev,test] [--tag before] [--cli-check 2]
      → bench/results/answers-<corpus>[-TAG].json
Indexes: domain-reference-en, domain-reference-zh-cn, domain-handbook-en, maritime under $LAMBDARAG_HOME
(bench/answer_data.py names them); the Debian corpora are converted by bench/debian_docs.py.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

os.environ.setdefault("LAMBDARAG_FEEDBACK", "off")  # each answer as configured, nothing learnt between questions
for _var in ("LAMBDARAG_LLM_BASE_URL", "LAMBDARAG_LLM_MODEL"):
    os.environ.pop(_var, None)  # the offline answer is what is measured

sys.path.insert(0, str(Path(__file__).resolve().parent))
from answer_data import HALVES, answer_sets, load  # noqa: E402
from machine import write as write_result  # noqa: E402
from routing import doc_name, mean, warm_up  # noqa: E402
from routing_data import TYPES  # noqa: E402

from lambdarag.orchestration.cli import ask_exit_code  # noqa: E402
from lambdarag.orchestration.config import load_config  # noqa: E402
from lambdarag.orchestration.search_unified import search  # noqa: E402
from lambdarag.orchestration.setup import open_index  # noqa: E402
from lambdarag.skills.context import MARKER, claims  # noqa: E402
from lambdarag.skills.evidence import names  # noqa: E402
from lambdarag.skills.phrasing import EN, ZH  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REFUSALS = (ZH["refusal"], EN["refusal"])
NUMBERED = re.compile(r"\[\d+\]")
LINK = re.compile(r"!?\[([^\]]*)\]\([^)\s]*\)")
MARKS = re.compile(r"(?m)^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+)|\*\*|__|`|\|")
EMPHASIS = re.compile(r"(?<![\w*])[*_]([^*_\n]+)[*_](?![\w*])")
SENTENCE_END = re.compile(r"(?<=[。！？])|(?<=[.!?])\s")
TRAILING = "。，,.、：: "


def normalise(text: str) -> str:
    """Returns `text` as containment is tested on: NFKC, markers, markdown and whitespace removed, case folded."""
    text = unicodedata.normalize("NFKC", text)
    text = NUMBERED.sub("", MARKER.sub("", text))
    text = MARKS.sub(" ", EMPHASIS.sub(r"\1", LINK.sub(r"\1", text)))
    return re.sub(r"[\s；;]+", "", text).casefold()


def holds(text: str, evidence: list[str]) -> bool:
    """Returns whether normalised `text` contains one of the evidence sentences (trailing punctuation aside)."""
    flat = normalise(text)
    return any(normalise(e).rstrip(TRAILING) in flat for e in evidence)


def refuses(answer: str, citations: list[dict]) -> bool:
    """Returns whether an answer refuses: it cites nothing, or it holds the refusal sentence of either language."""
    return not citations or any(r in answer for r in REFUSALS)


def cites(citations: list[dict], files: list[str]) -> bool:
    """Returns whether a citation names one of `files` (compared by file name, as bench/routing.py counts)."""
    return bool({doc_name(c.get("source", "")) for c in citations} & {doc_name(f) for f in files})


def length(answer: str) -> dict[str, int]:
    """Returns the answer's points (cited claims) and quoted sentences (the sentences of those claims)."""
    cited = [claim for claim, markers in claims(answer) if markers]
    sentences = sum(len([s for s in SENTENCE_END.split(c) if re.search(r"\w", s)]) or 1 for c in cited)
    return {"points": len(cited), "sentences": sentences}


def score(q: dict, answer: str, citations: list[dict], hits: list[dict]) -> dict:
    """Returns one question's scores from its answer, citations and ranked hits (texts)."""
    texts = [h.get("text", "") for h in hits]
    top5, top8 = any(holds(t, q["evidence"]) for t in texts[:5]), any(holds(t, q["evidence"]) for t in texts[:8])
    refused = refuses(answer, citations)
    out = {"evidence": holds(answer, q["evidence"]), "refused": refused, "false_refusal": refused and top5,
           "evidence_in_top5": top5, "evidence_in_top8": top8, **length(answer)}
    if q.get("sides"):
        out["sides"] = {s["name"]: holds(answer, s["evidence"]) and cites(citations, s["relevant"])
                        for s in q["sides"]}
        out["compare_all_sides"] = all(out["sides"].values())
    elif q.get("named"):
        out["sides"] = {name: side_cited(answer, name, q["relevant"]) for name in q["named"]}
        out["compare_all_sides"] = all(out["sides"].values())
    return out


def blocks(answer: str) -> list[tuple[str, list[tuple[str, tuple]]]]:
    """Returns the answer's blocks: each label line (ending in : or ：, no marker) with the claims below it."""
    out: list[tuple[str, list[tuple[str, tuple]]]] = [("", [])]
    for line in answer.splitlines():
        if line.rstrip().endswith(("：", ":")) and not MARKER.search(line):
            out.append((line, []))
        else:
            out[-1][1].extend(claims(line))
    return out


def side_cited(answer: str, name: str, relevant: list[str]) -> bool:
    """Returns whether a side named only (no evidence of its own) is answered: a block labelled with its name, or
    a cited claim naming it (a whole word where Latin: Depends is not named by Pre-Depends), cites one of the
    relevant files."""
    files = {doc_name(f) for f in relevant}
    return any(doc_name(m.group(1)) in files
               for label, cited in blocks(answer) for claim, markers in cited for m in markers
               if names(label, name) or names(claim, name))


def summarise(rows: list[dict]) -> dict:
    """Returns the shares, means and maxima of a group of scored questions."""
    out = {"n": len(rows)}
    for key in ("evidence", "refused", "false_refusal", "evidence_in_top5", "evidence_in_top8"):
        out[key] = round(mean([float(r["scores"][key]) for r in rows]), 3)
    sides = [float(r["scores"]["compare_all_sides"]) for r in rows if "compare_all_sides" in r["scores"]]
    if sides:
        out["compare_all_sides"] = round(mean(sides), 3)
    for key in ("sentences", "points"):
        values = [r["scores"][key] for r in rows]
        out[key] = {"mean": round(mean(values), 2), "max": max(values)}
    out["exit_0"] = round(mean([float(r["exit_code"] == 0) for r in rows]), 3)
    return out


def reasons(fallbacks: list[dict]) -> list[str]:
    """Returns each fallback as "term: reason": a term alone does not say why (extractive_answer ranks its evidence
    without sentence vectors when the deadline leaves no time to embed them, and answers differ for that)."""
    return [f"{f['term']}: {f['reason']}" for f in fallbacks]


def cli_run(question: str, index: str, config: str | None) -> dict:
    """Returns the exit code of `lambdarag ask --json` (the installed command) run as a subprocess on `question`,
    with whether its answer was degraded and which terms fell back (a cold process may time out where a warm
    one does not)."""
    command = shutil.which("lambdarag")
    if command is None:
        raise SystemExit("--cli-check runs the `lambdarag` command: pip install -e . (or --cli-check 0)")
    argv = [command, *(["--config", config] if config else []), "ask", "--index", index, "--json", question]
    run = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    try:
        r = json.loads(run.stdout)
        return {"cli": run.returncode, "degraded": r["degraded"], "fallbacks": [f["term"] for f in r["fallbacks"]]}
    except (json.JSONDecodeError, KeyError):
        return {"cli": run.returncode, "stderr": run.stderr[-500:]}


def run_half(questions: list[dict], index: str, cfg, config: str | None, cli_check: int) -> dict:
    """Returns the scores of one half: overall, per type, exit codes and fallbacks, and every answer."""
    rows, fallback_terms = [], Counter()
    for q in questions:
        r = search(q["query"], index=index, config=cfg)
        view = r.model_dump(mode="json")   # citations and hits as the JSON a user reads (--json, the page)
        fallback_terms.update(set(f["term"] for f in r.fallbacks))
        rows.append({"qid": q["qid"], "type": q["type"], "query": q["query"], "routed_as": r.query_type,
                     "strategy": r.strategy, "answer": r.answer,
                     "citations": [f"{c['source']}#{c.get('section', '')}" for c in view["citations"]],
                     "top5": [doc_name(h["source"]) for h in view["hits"][:5]], "degraded": r.degraded,
                     "fallbacks": [f["term"] for f in r.fallbacks], "reasons": reasons(r.fallbacks),
                     "exit_code": ask_exit_code(r),
                     "scores": score(q, r.answer, view["citations"], view["hits"])})
    checks = [{"qid": row["qid"], "bench": row["exit_code"], **cli_run(q["query"], index, config)}
              for q, row in list(zip(questions, rows))[:cli_check]]
    by_type = defaultdict(list)
    for row in rows:
        by_type[row["type"]].append(row)
    return {"questions": len(rows), "overall": summarise(rows),
            "per_type": {t: summarise(by_type[t]) for t in TYPES if by_type[t]},
            "exit_codes": dict(Counter(str(row["exit_code"]) for row in rows)),
            "degraded": sum(row["degraded"] for row in rows),
            "with_fallbacks": sum(bool(row["fallbacks"]) for row in rows),
            "fallback_terms": dict(fallback_terms.most_common()),
            "cli_check": {"agree": all(c["bench"] == c["cli"] for c in checks), "runs": checks},
            "answers": rows}


def main(corpus: str, halves: tuple[str, ...], config: str | None, cli_check: int) -> dict:
    answer_set = answer_sets()[corpus]
    cfg = load_config(config)
    if cfg.llm.base_url:
        raise SystemExit(f"bench/answers.py measures the offline answer; {config or 'the config'} sets llm.baseUrl")
    kb = open_index(cfg, answer_set.index)
    warm_up(answer_set.index, cfg, questions=load(corpus, "dev"))
    result = {"corpus": corpus, "index": {"name": answer_set.index, "chunks": len(kb.index.chunks())},
              "config": config or "agent-config.yml", "normalisation": normalise.__doc__,
              "containment": holds.__doc__}
    for half in halves:
        result[half] = run_half(load(corpus, half), answer_set.index, cfg, config, cli_check)
    return result


def summary(result: dict) -> str:
    """Returns evidence / compare / false-refusal shares per half and type, as lines."""
    lines = []
    for half in (h for h in HALVES if h in result):
        h = result[half]
        lines.append(f"{result['corpus']} {half}: {h['questions']} questions, exit codes {h['exit_codes']}, "
                     f"degraded {h['degraded']}, with fallbacks {h['with_fallbacks']}, cli agrees "
                     f"{h['cli_check']['agree']}")
        for t, m in [("overall", h["overall"]), *h["per_type"].items()]:
            lines.append(f"  {t:<10} evidence {m['evidence']:.2f}  in top5 {m['evidence_in_top5']:.2f}  "
                         f"false refusals {m['false_refusal']:.2f}  sentences {m['sentences']['mean']:.1f}"
                         + (f"  compare all sides {m['compare_all_sides']:.2f}" if "compare_all_sides" in m else ""))
    return "\n".join(lines)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", default=",".join(answer_sets()), help="comma-separated corpora")
    ap.add_argument("--halves", default=",".join(HALVES))
    ap.add_argument("--config", default=None)
    ap.add_argument("--tag", default="", help="result file suffix, e.g. before")
    ap.add_argument("--cli-check", type=int, default=2, help="questions per half also run as `lambdarag ask`")
    args = ap.parse_args()
    for name in args.corpora.split(","):
        res = main(name, tuple(args.halves.split(",")), args.config, args.cli_check)
        path = write_result(f"answers-{name}" + (f"-{args.tag}" if args.tag else ""), res)
        sys.stdout.write(summary(res) + f"\n→ {path}\n")
