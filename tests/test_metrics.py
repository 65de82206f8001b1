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


def test_one_ranking_scores_the_same_alone_in_evaluate_and_as_a_column_of_many():
    """`score`, `evaluate` and `ndcg_columns` are one nDCG: a ranking gets the same bits however it is scored
    (learning's fit compares a question's unlearned score with its columns; a last-bit difference is a false gain)."""
    import numpy as np

    from lambdarag.orchestration.metrics import ndcg_columns, score

    rng = random.Random(3)
    docs = [f"d{i}" for i in range(30)]
    for _ in range(300):
        judged = {d: float(rng.randint(1, 3)) for d in rng.sample(docs, rng.randint(1, 12))}
        rankings = [rng.sample(docs, 10) for _ in range(5)]
        gains = np.array([[judged.get(r[i], 0.0) for r in rankings] for i in range(10)])  # ranks × rankings
        ideal = np.sort(np.array(list(judged.values())))[::-1]
        for layout in (gains, np.asfortranarray(gains)):        # numpy's sum order depends on the memory layout
            columns = ndcg_columns(layout, ideal, 10)
            for j, r in enumerate(rankings):
                assert score("ndcg@10", r, judged) == evaluate({"q": judged}, {"q": r}, ["ndcg@10"])["ndcg@10"] \
                    == columns[j] == ndcg_columns(layout[:, [j]], ideal, 10)[0]


def test_score_of_one_ranking_counts_a_repeat_once_and_names_a_bad_metric():
    from lambdarag.orchestration.metrics import score

    assert score("recall@3", ["y", "y", "n", "x"], {"x": 1, "y": 1}) == 1.0   # the repeat takes no rank
    assert score("mrr@5", ["n", "x"], {"x": 1}) == 0.5
    with pytest.raises(ConfigError, match=r"'ndcg@0'"):
        score("ndcg@0", ["x"], {"x": 1})
