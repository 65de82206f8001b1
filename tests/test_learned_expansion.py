"""bench/learned_expansion.py: an expansion list joins only the tail (the top 10 stays as shipped), and a setting is
chosen only when the never-confirmed questions keep their recall."""
import numpy as np

from bench import learned_expansion as le


def test_an_expansion_chunk_enters_the_tail_but_never_the_head():
    shipped = [f"s{i}" for i in range(100)]
    out = le.merged(shipped, ["new", "s3", "s50"], "rrf", 1.0)
    assert out[:10] == shipped[:10]
    assert len(out) == 100 and len(set(out)) == 100
    assert out.index("new") < 15 and "s99" not in out          # entered near the tail's top, pushed the last out
    assert le.merged(shipped, ["new"], "rrf", 0.0)[10:] == shipped[10:]  # weight 0: only ties below the tail
    slots = le.merged(shipped, ["s5", "new", "s98", "other", "more"], "slots", 3)
    assert slots == shipped[:97] + ["new", "s98", "other"]         # the last 3 places, to chunks not yet kept


def row(seen: bool, recall: float, fold: int = 0) -> dict:
    """A question of shipped recall@100 0.5 whose one setting ("dense", 1.0, "rrf", 1.0) scores `recall`."""
    return {"seen": seen, "fold": fold, "shipped": np.array([0.5, 0.5, 0.5]),
            "settings": {("dense", 1.0, "rrf", 1.0): np.array([0.5, recall, 0.5])}}


def test_a_setting_that_costs_unseen_questions_recall_is_refused():
    setting = [("dense", 1.0, "rrf", 1.0)]
    assert le.choose([row(True, 1.0) for _ in range(20)] + [row(False, 0.5) for _ in range(20)], setting) == setting[0]
    assert le.choose([row(True, 1.0) for _ in range(20)] + [row(False, 0.0) for _ in range(20)], setting) is None
