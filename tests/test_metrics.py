"""The numpy ranking metrics equal ranx's on the same runs (ranx is a test-only reference)."""
from __future__ import annotations

import random

import pytest

from lambdarag.errors import ConfigError
from lambdarag.orchestration.metrics import evaluate

METRICS = ["recall@1", "recall@10", "recall@100", "mrr@10", "ndcg@3", "ndcg@10"]


def random_case(rng: random.Random, graded: bool):
    docs = [f"d{i}" for i in range(60)]
    qrels, run = {}, {}
    for q in range(100):
        relevant = rng.sample(docs, rng.randint(1, 6))
        qrels[f"q{q}"] = {d: (rng.randint(1, 3) if graded else 1) for d in relevant}
        run[f"q{q}"] = rng.sample(docs, rng.randint(0, 40))
    return qrels, run


@pytest.mark.parametrize("graded", [False, True])
def test_metrics_equal_ranx_on_random_runs(graded):
    ranx = pytest.importorskip("ranx")   # ranx compiles with numba on first use: one call per case keeps it short
    qrels, run = random_case(random.Random(19), graded)
    scored = {q: ({d: float(len(r) - i) for i, d in enumerate(r)} or {"<none>": 0.0}) for q, r in run.items()}
    expected = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(scored), METRICS)
    assert evaluate(qrels, run, METRICS) == pytest.approx(expected, abs=1e-9)


def test_hand_computed_values():
    qrels = {"a": {"x": 1, "y": 1}, "b": {"z": 1}}
    run = {"a": ["y", "n", "x", "x"], "b": ["n"]}
    got = evaluate(qrels, run, ["recall@2", "mrr@10", "ndcg@3"])
    ndcg_a = (1 + 1 / 2) / (1 + 1 / 1.5849625007211562)
    assert got == pytest.approx({"recall@2": 0.25, "mrr@10": 0.5, "ndcg@3": ndcg_a / 2})


def test_unknown_metric_names_the_valid_ones():
    with pytest.raises(ConfigError, match=r"'map@10'.*recall@K, mrr@K, ndcg@K"):
        evaluate({"a": {"x": 1}}, {}, ["map@10"])
