"""bench/learned_rerank.py: its metrics are ranx's, and a second stage never moves a question the shipped gate
kept, nor puts a chunk plain retrieval did not return into the top 10."""
import numpy as np
from ranx import Qrels, Run, evaluate

from bench import learned_rerank as lr


def entry(opened=True, tailed=True, nearest=0.95) -> dict:
    """A question whose plain list holds b0..b11 and whose learned candidates l0, l1 the dense feature favours."""
    ids = [f"b{i}" for i in range(12)] + ["l0", "l1"]
    x = np.zeros((len(ids), len(lr.FEATURES)), dtype=np.float32)
    x[:, lr.FEATURES.index("dense")] = np.arange(len(ids))            # the later, the better by the model
    x[:, lr.FEATURES.index("shipped_rr")] = 1.0 / (1 + np.arange(len(ids)))
    x[:12, lr.FEATURES.index("in_base")] = 1.0
    return {"ids": ids, "n_base": 12, "x": x, "shipped": ids, "opened": opened, "tailed": tailed,
            "nearest": nearest, "relevant": ["l1"], "seen": True, "fold": 0, "where": {}}


DENSE = (np.zeros(len(lr.FEATURES) + len(lr.DERIVED)), np.ones(len(lr.FEATURES) + len(lr.DERIVED)),
         np.array([1.0 if i == lr.FEATURES.index("dense") else 0.0 for i in range(len(lr.FEATURES) + len(lr.DERIVED))]
                  + [0.0]))
"""A model (mean, scale, weights + intercept) scoring by the dense feature alone."""


def test_the_metrics_are_ranx_s():
    orders = {"a": ["x", "r1", "y"] + [f"z{i}" for i in range(120)], "b": [f"z{i}" for i in range(101)] + ["r2"]}
    relevant = {"a": {"r1", "r3"}, "b": {"r2"}}
    ours = np.mean([lr.metrics(orders[q], relevant[q]) for q in orders], axis=0)
    theirs = evaluate(Qrels({q: dict.fromkeys(r, 1) for q, r in relevant.items()}),
                      Run({q: {c: float(200 - i) for i, c in enumerate(o[:100])} for q, o in orders.items()}),
                      ["mrr@10", "recall@100", "ndcg@10"])
    assert np.allclose(ours, [theirs["mrr@10"], theirs["recall@100"], theirs["ndcg@10"]])


def test_the_head_stage_keeps_learned_candidates_out_of_the_top_10():
    order = lr.reranked(entry(), DENSE)
    assert order[:10] == [f"b{i}" for i in range(11, 1, -1)]      # the best plain chunks by the model
    assert set(order) == set(entry()["ids"]) and order[10:12] == ["l1", "l0"]


def test_the_head_stage_leaves_a_closed_gate_and_a_far_question_as_shipped():
    assert lr.reranked(entry(opened=False), DENSE) == entry()["shipped"]
    assert lr.reranked(entry(nearest=0.9), DENSE, floor=0.94) == entry()["shipped"]


def test_the_tail_stage_reorders_only_after_the_top_10():
    order = lr.tail_reranked(entry(), DENSE)
    assert order[:10] == entry()["shipped"][:10] and order[10:] == ["l1", "l0", "b11", "b10"]
    assert lr.tail_reranked(entry(tailed=False), DENSE) == entry()["shipped"]


def test_the_choice_takes_the_best_setting_within_the_unseen_bound():
    """"bold" lifts the seen question most but drops the unseen one's answer; "mild" lifts less and spares it."""
    def question(fold, seen):
        return {**entry(), "fold": fold, "seen": seen, "relevant": ["b0"] if not seen else ["b3"]}
    entries = {f"{f}{s}": question(f, s) for f in (0, 1) for s in (True, False)}
    lifted = {"bold": ["b3", "b0"], "mild": ["b0", "b3"]}

    def order(e, model, setting):
        return lifted[setting] + [c for c in e["ids"] if c not in lifted[setting]]
    assert lr.choose(entries, lambda es: None, order, ("bold", "mild"), ("mrr@10", "ndcg@10", 0.005)) == "mild"
    assert lr.choose(entries, lambda es: None, order, ("bold", "mild"), ("mrr@10", "ndcg@10", 1.0)) == "bold"
    assert lr.choose(entries, lambda es: None, order, ("bold",), ("mrr@10", "ndcg@10", 0.005)) is None
