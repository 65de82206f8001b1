"""`lambdarag eval --routed` on the laws folder's frozen test half, set beside what bench/routing.py measured.

Needs the laws index bench/routing.py uses (its docstring says how to build it). Run:
  python bench/eval_routed.py [--index laws] → bench/results/eval-routed.json
It records the command's JSON and whether its routed recall@5 and type accuracy, overall and per type,
equal bench/results/routing.json's to 3 decimals.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import write  # noqa: E402
from lambdarag.orchestration.cli import main as cli  # noqa: E402

QUERIES = ROOT / "bench" / "data" / "routing" / "test.jsonl"


def agreement(ours: dict, routing: dict) -> dict:
    """Returns, per figure, (eval --routed, routing.py) rounded to 3 decimals and whether they are equal."""
    pairs = {"recall@5": (ours["metrics"]["recall@5"], routing["routed"]["overall"]["recall@5"]),
             "type_accuracy": (ours["metrics"]["type_accuracy"], routing["type_accuracy"]["overall"])}
    for kind, m in ours["per_type"].items():
        pairs[f"{kind} recall@5"] = (m["recall@5"], routing["routed"]["per_type"][kind]["recall@5"])
        pairs[f"{kind} type_accuracy"] = (m["type_accuracy"], routing["type_accuracy"][kind])
    return {k: {"eval_routed": round(a, 3), "routing_py": round(b, 3), "equal": round(a, 3) == round(b, 3)}
            for k, (a, b) in pairs.items()}


def main(index: str) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = cli(["eval", "--routed", "--index", index, "--queries", str(QUERIES), "--json"])
    if status:
        raise SystemExit(f"lambdarag eval --routed exited {status}")
    ours = json.loads(out.getvalue())
    routing = json.loads((ROOT / "bench" / "results" / "routing.json").read_text(encoding="utf-8"))["test"]
    figures = agreement(ours, routing)
    result = {"command": f"lambdarag eval --routed --index {index} --queries bench/data/routing/test.jsonl --json",
              "eval": ours, "versus_routing_json": figures, "all_equal": all(f["equal"] for f in figures.values())}
    write("eval-routed", result)
    return result


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", default="laws", help="built index over ../shared/data/laws with vectors (default laws)")
    print(json.dumps(main(ap.parse_args().index), ensure_ascii=False, indent=1))
