"""bench/agreement_gate.py: its gates are chosen within the unseen bound, and a gate that does not open leaves a
question exactly as the shipped gate ranked it."""
import numpy as np

from bench import agreement_gate as ag


def row(seen: bool, agree: float, boosted: float, opened: bool = True) -> dict:
    """A question scoring nDCG@10 0.5 plain and shipped, `boosted` with every boost or lift, of agreement `agree`."""
    plain, lift = np.array([0.5, 1.0, 0.5]), np.array([boosted, 1.0, boosted])
    return {"plain": plain, "open": plain, "closed": plain, "seen": seen, "opened": opened, "nearest": 0.95,
            "boost": dict.fromkeys(ag.BOOSTS, lift), "agree": dict.fromkeys(ag.AGREEMENT_GRID, agree),
            "lifted": {(name, b): lift if agree or name != "scaled" else plain           # scaled: b × agreement
                       for name, grid in (("boost", ag.BOOSTS), ("families", ag.BOOSTS), ("scaled", ag.SCALES))
                       for b in grid}}


def test_the_boost_is_taken_where_neighbours_agree_and_unseen_questions_keep_their_answers():
    rows = [row(True, 0.9, 1.0) for _ in range(20)] + [row(False, 0.1, 0.0) for _ in range(20)]
    setting, threshold, boost = ag.choose(rows, "boost")
    assert setting is not None and 0.1 < threshold <= 0.9
    chosen = ag.gated(rows, "boost", setting, threshold, boost)
    assert (chosen[:20, 2] == 1.0).all() and (chosen[20:, 2] == 0.5).all()


def test_the_shipped_gate_stays_when_agreement_cannot_tell_unseen_questions_apart():
    rows = [row(True, 0.9, 1.0) for _ in range(20)] + [row(False, 0.9, 0.0) for _ in range(20)]
    assert ag.choose(rows, "boost") == (None, 0.0, 0.0)
    assert ag.choose(rows, "agreement") == (None, 0.0, 0.0)


def test_a_question_the_shipped_gate_kept_is_never_boosted():
    kept = row(True, 1.0, 1.0, opened=False)
    assert (ag.gated([kept], "boost", ag.AGREEMENT_GRID[0], 0.0, ag.BOOSTS[0])[0] == kept["open"]).all()


def test_round_26_levers_lift_where_neighbours_agree_and_keep_the_shipped_head_where_unseen_questions_would_lose():
    rows = [row(True, 0.9, 1.0) for _ in range(20)] + [row(False, 0.0, 0.0) for _ in range(20)]
    fitted = ag.levers(rows)
    for name in ag.LEVERS:
        key, apply = fitted[name]
        held = apply(rows)
        assert (held[:20, 2] == 1.0).all() and (held[20:, 2] == 0.5).all(), name
    rows = [row(True, 0.9, 1.0) for _ in range(20)] + [row(False, 0.9, 0.0) for _ in range(20)]
    for name, (key, apply) in ag.levers(rows).items():
        assert (apply(rows)[:, 2] == 0.5).all(), name                    # none can spare the unseen questions
