"""bench/query_adapter.py: the adapter moves queries towards confirmed passages, the gate keeps far questions plain,
and the choice never takes a setting that costs unseen questions more than the bound on a tuning split."""
import numpy as np

from bench import query_adapter as qa


def test_the_adapter_maps_a_confirmed_question_onto_its_passage_and_the_identity_without_pairs():
    rng = np.random.default_rng(0)
    q, p = qa.unit(rng.normal(size=(40, 6))), qa.unit(rng.normal(size=(40, 6)))
    w = qa.adapter(q, p, 1e-6)
    assert np.linalg.norm(q @ w - p) < np.linalg.norm(q - p)
    assert np.allclose(qa.adapter(q, p, 1e9), np.eye(6), atol=1e-6)


def test_the_gate_uses_the_adapted_rank_only_from_the_cosine_floor_up():
    run = {"plain": np.array([1.0, 0.5, 0.0]), "nearest": np.array([0.95, 0.80, 0.60]),
           "adapted": {(1.0, 0.5): np.array([0.5, 1.0, 1.0])}, "seen": np.array([True, True, False])}
    assert qa.gated(run, 1.0, 0.5, 0.75).tolist() == [0.5, 1.0, 0.0]
    assert qa.gated(run, 1.0, 0.5, 0.99).tolist() == run["plain"].tolist()


def test_the_choice_skips_settings_that_cost_unseen_questions_and_closes_when_all_do(monkeypatch):
    monkeypatch.setattr(qa, "RIDGES", (1.0,))
    monkeypatch.setattr(qa, "BLENDS", (1.0,))
    monkeypatch.setattr(qa, "FLOORS", (0.7, 0.9))
    seen = np.array([True, True, False, False])
    nearest = np.array([0.95, 0.95, 0.8, 0.8])                  # the unseen questions sit between the floors
    runs = {s: {"plain": np.array([0.5, 0.5, 1.0, 1.0]), "nearest": nearest, "seen": seen,
                "adapted": {(1.0, 1.0): np.array([1.0, 1.0, 0.5, 0.5])}} for s in qa.TUNING}
    (ridge, blend, floor), _ = qa.choose(runs)
    assert (ridge, blend, floor) == (1.0, 1.0, 0.9)              # 0.7 would open it to the unseen, who lose 0.5
    for run in runs.values():
        run["nearest"] = np.full(4, 0.95)
    assert qa.choose(runs)[0] == (None, None, float("inf"))
