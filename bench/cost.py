"""Cost of a maximum-length question (issue 44 §7): wall time of `search()` on the demo index for a 2,000-character
question and a short one, with the query embedding capped at `QUERY_CHARS` and uncapped, interleaved in one run
(medians; ratios against the short question of the same run). Writes bench/results/cost.json.
Usage: nice -n 10 python bench/cost.py [--rounds N]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.machine import facts as machine_facts  # noqa: E402
OUT = ROOT / "bench" / "results" / "cost.json"
LONG = ("船舶在海上航行时，船长应当如何保障人命安全，海事管理机构有哪些职责，" * 60)[:1990]
SHORT = "船长应当如何保障人命安全？"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    os.environ["LAMBDARAG_FEEDBACK"] = "off"
    import lambdarag.providers.embedder as embedder
    from lambdarag.orchestration.search_unified import search

    capped = embedder.QUERY_CHARS
    search(SHORT)                                          # builds and warms what the first question builds
    times: dict[str, list[float]] = {"short": [], "long_capped": [], "long_uncapped": []}
    for n in range(args.rounds):
        for name, text, cap in (("short", SHORT, capped), ("long_capped", f"{LONG}甲{n}", capped),
                                ("long_uncapped", f"{LONG}乙{n}", 10 ** 6)):   # distinct texts: no vector reused
            embedder.QUERY_CHARS = cap
            started = time.perf_counter()
            search(text)
            times[name].append(time.perf_counter() - started)
    embedder.QUERY_CHARS = capped
    median = {k: round(statistics.median(v), 3) for k, v in times.items()}
    out = {"query_chars": capped, "long_chars": len(LONG) + 2, "rounds": args.rounds, "median_s": median,
           "long_over_short": {k: round(median[k] / median["short"], 1) for k in ("long_capped", "long_uncapped")},
           "machine": machine_facts()}
    OUT.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(out, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
