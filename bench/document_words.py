"""What a survey's first question pays for its whole-document BM25 (survey.Mentions), per Debian corpus.

Per corpus of bench/data/domains (its index `domain-<corpus>`, as bench/domain_bench.py builds it), CPU seconds
of two ways to make the table, alternated in one run, medians of `--runs`: summed from the index's own term counts
(`LocalBackend.document_words`, what the survey now does) and every chunk tokenised again (`IndexBackend.document_
words`, what a backend keeping no counts does, and what the survey did on every index before). Both rank alike
(tests/test_backends.py); the ratio is tokenised / summed. The first summed run also reads the chunks' sources
from the chunk store (later runs reuse them, as a question after the first does): it is recorded on its own.
Run: python bench/document_words.py [--corpora reference-en,…] [--runs 5]   → bench/results/document-words.json
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from bench.machine import write  # noqa: E402
from domain_data import CORPORA  # noqa: E402

from lambdarag.orchestration.config import load_config  # noqa: E402
from lambdarag.orchestration.setup import open_index  # noqa: E402
from lambdarag.skills.store.base import IndexBackend  # noqa: E402


def cpu_seconds(make) -> float:
    """Returns the CPU seconds `make()` takes."""
    start = time.process_time()
    make()
    return time.process_time() - start


def measure(corpus: str, runs: int) -> dict:
    """Returns the median CPU seconds of both ways on one corpus's index, alternated `runs` times."""
    index = open_index(load_config(None), f"domain-{corpus}").index
    summed, tokenised = [], []
    for _ in range(runs):
        summed.append(cpu_seconds(index.document_words))
        tokenised.append(cpu_seconds(lambda: IndexBackend.document_words(index)))
    s, t = statistics.median(summed), statistics.median(tokenised)
    return {"chunks": len(index.chunks()), "documents": len(index.documents()), "runs": runs,
            "first_summed_cpu_s": round(summed[0], 4),
            "median_cpu_s": {"summed counts": round(s, 4), "chunks tokenised": round(t, 3)},
            "ratio_tokenised_to_summed": round(t / s, 1)}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", default=",".join(CORPORA))
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    out = {"corpora": {c: measure(c, args.runs) for c in args.corpora.split(",")}}
    print(write("document-words", out))
