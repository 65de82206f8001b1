"""Exit codes, `degraded` and fallbacks of `ask` offline and against an endpoint that only answers in plain text.

python bench/llm_modes.py [--code DIR] [--label NAME] [--domains faq-zh-cn reference-en] [--set domains|answers]
                          [--limit N] [--model-url URL]
Runs the CLI itself (``lambdarag --config FILE ask --json QUESTION``, in-process: `orchestration.cli.main` returns
the exit status) over dev questions, once with no LLM configured and once against an endpoint on 127.0.0.1 that
refuses any ``response_format`` with HTTP 400 and answers in plain text, as a server without guided decoding does.
The questions are the Debian dev questions (``--set domains``: bench/data/domains/<domain>/dev.jsonl on the index
``domain-<domain>`` of $LAMBDARAG_HOME) or the dev half of bench/answers.py's sets (``--set answers``, the
`--domains` naming its corpora: reference-en, reference-zh-cn, handbook-en, maritime), the first `--limit` of each.
The endpoint is a scripted server quoting the first sentence of the first passage with the marker on its heading
line (`tests.scripted_server.dialect_route("plain")`), or with ``--model-url`` a real model's, such as
tests/local_model_server.py (SmolLM2-135M; scripts/local-llm.sh), given 300 s a call and 1800 s a question, time
enough on a shared CPU. The questions run in a child process whose code is `--code` (default: this checkout; give
main's checkout for the before figures), against the same endpoint; writes bench/results/llm-modes-<label>.json.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODES = ("offline", "plain-text endpoint")
SCRIPTED = {"model": "plain", "timeout": 20}
"""The scripted server's LLM settings; a real model (--model-url) gets `REAL` and `REAL_DEADLINE`."""
REAL = {"model": "smollm2-135m-instruct", "timeout": 300}
REAL_DEADLINE = 1800


def questions_of(question_set: str, name: str, halves: tuple[str, ...] = ("dev",)) -> tuple[list[dict], str]:
    """Returns the questions of `halves` of `name` in `question_set` (domains or answers) and the index they are
    asked on; a question carries its half, so the held-out halves read apart."""
    if question_set == "answers":
        from bench.answer_data import answer_sets, load

        return [{**q, "half": h} for h in halves for q in load(name, h)], answer_sets()[name].index
    folder = ROOT / "bench" / "data" / "domains" / name
    return [{**json.loads(line), "half": h} for h in halves
            for line in (folder / f"{h}.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()], \
        f"domain-{name}"


def ask_all(code: Path, url: str, domains: list[str], question_set: str = "domains", limit: int = 0,
            real: bool = False, halves: tuple[str, ...] = ("dev",)) -> list[dict]:
    """Returns one record per question and mode, run with the code of `code` (in this process: its path first)."""
    import yaml

    sys.path.insert(0, str(code))
    os.environ["LAMBDARAG_FEEDBACK"] = "off"          # every question answered from the same state
    from lambdarag.orchestration.cli import main                 # noqa: E402  (the checkout's own code)

    base = yaml.safe_load((code / "agent-config.yml").read_text(encoding="utf-8"))
    records = []
    for domain in domains:
        questions, index = questions_of(question_set, domain, halves)
        questions = questions[:limit] if limit else questions
        for mode in MODES:
            data = json.loads(json.dumps(base))
            data["retrieval"]["index"] = index
            if mode != "offline":
                data["llm"] = {"baseUrl": url, **(REAL if real else SCRIPTED)}
                if real:
                    data["limits"] = {"timeoutSeconds": REAL_DEADLINE}
            path = Path(os.environ["LAMBDARAG_HOME"]) / f"llm-modes-{domain}-{MODES.index(mode)}.yml"
            path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
            for q in questions:
                out, err = io.StringIO(), io.StringIO()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    code_ = main(["--config", str(path), "ask", "--json", q["query"]])
                r = json.loads(out.getvalue())
                records.append({"domain": domain, "mode": mode, "half": q["half"], "qid": q["qid"],
                                "lang": q.get("lang", ""),
                                "exit": code_, "degraded": r["degraded"],
                                "fallbacks": [f["term"] for f in r["fallbacks"]],
                                "reasons": [f"{f['term']}: {f['reason'][:100]}" for f in r["fallbacks"]],
                                "cited": bool(r["citations"]), "marker_zh": "[来源:" in r["answer"],
                                "marker_en": "[source:" in r["answer"], "answer": r["answer"]})
    return records


def summary(records: list[dict]) -> dict:
    """Returns, per domain and mode, the exit codes, degraded answers and fallbacks counted over the questions."""
    out: dict = {}
    for r in records:
        row = out.setdefault(r["domain"], {}).setdefault(r["mode"], {
            "questions": 0, "exit_codes": collections.Counter(), "degraded": 0, "with_fallbacks": 0,
            "fallbacks": 0, "fallback_terms": collections.Counter(), "cited": 0, "wrong_language_marker": 0})
        row["questions"] += 1
        row["exit_codes"][str(r["exit"])] += 1
        row["degraded"] += r["degraded"]
        row["with_fallbacks"] += bool(r["fallbacks"])
        row["fallbacks"] += len(r["fallbacks"])
        row["fallback_terms"].update(r["fallbacks"])
        row["cited"] += r["cited"]
        row["wrong_language_marker"] += r["marker_zh"] if r["lang"] == "en" else r["marker_en"]
    return json.loads(json.dumps(out))


def main() -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--code", type=Path, default=ROOT, help="checkout whose code answers (default: this one)")
    p.add_argument("--label", default="after")
    p.add_argument("--domains", nargs="+", default=["faq-zh-cn", "reference-en"])
    p.add_argument("--set", dest="question_set", choices=("domains", "answers"), default="domains",
                   help="the Debian domain questions or bench/answers.py's sets (dev halves both)")
    p.add_argument("--halves", default="dev",
                   help="comma-separated halves asked (default: dev; a held-out corpus's test half is only measured)")
    p.add_argument("--limit", type=int, default=0, help="the first N questions of each set (default: all)")
    p.add_argument("--model-url", help="a real model's /v1 endpoint, answering in plain text only")
    p.add_argument("--child", metavar="URL", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        print(json.dumps(ask_all(args.code.resolve(), args.child, args.domains, args.question_set, args.limit,
                                 bool(args.model_url), tuple(args.halves.split(","))), ensure_ascii=False))
        return {}
    sys.path.insert(0, str(ROOT))
    from bench.machine import write
    from tests.scripted_server import Running, dialect_route

    server = None if args.model_url else Running()
    if server is not None:
        server.script.route = dialect_route("plain")
    url = args.model_url or server.url
    try:
        child = subprocess.run([sys.executable, __file__, "--child", url, "--code", str(args.code),
                                "--domains", *args.domains, "--set", args.question_set, "--limit", str(args.limit),
                                "--halves", args.halves,
                                *(["--model-url", args.model_url] if args.model_url else [])],
                               capture_output=True, text=True, check=True,
                               env={**os.environ, "PYTHONPATH": str(args.code.resolve())}, cwd=args.code)
    finally:
        if server is not None:
            server.stop()
    records = json.loads(child.stdout.strip().splitlines()[-1])
    result = {"code": args.label, "domains": args.domains, "set": args.question_set, "halves": args.halves,
              "limit": args.limit,
              "summary": summary(records), "questions": records,
              "server": (f"a real model at {args.model_url} ({REAL['model']}), plain text only" if args.model_url
                         else "plain text only: any response_format refused with HTTP 400")}
    write(f"llm-modes-{args.label}", result)
    return result


if __name__ == "__main__":
    done = main()
    if done:   # the child printed its records instead
        print(json.dumps(done["summary"], ensure_ascii=False, indent=1))
