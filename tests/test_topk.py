"""The exact top-k both in-process searches end with must return what a full sort by (score desc, row asc) returns."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from lambdarag.skills.store.topk import BLOCKS_PER_K, kth_best_bound, top_k


def full_sort(rows, scores, k):
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], rows[i]))[:k]
    return rows[order], scores[order]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=0, max_size=400), st.integers(0, 30), st.booleans(), st.booleans())
def test_top_k_equals_a_full_sort_with_ties_to_the_earlier_row(values, k, shuffled, sorted_up):
    """Few distinct values make ties everywhere; ascending scores put every best row in the last blocks."""
    scores = np.sort(np.array(values, dtype=np.float64)) if sorted_up else np.array(values, dtype=np.float64)
    rows = np.arange(len(scores)) * 3 + 7
    if shuffled:
        rows = np.random.default_rng(len(values)).permutation(rows)
    got, expected = top_k(rows, scores, k), full_sort(rows, scores, k)
    assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])


def test_block_bound_is_used_on_long_arrays_and_never_exceeds_the_kth_best():
    rng = np.random.default_rng(0)
    for scores in (rng.normal(size=58_600).astype(np.float32), np.arange(20_000.0), np.zeros(10_000)):
        k = 100
        assert len(scores) // (BLOCKS_PER_K * k) >= 2            # the block-maxima path, not the exact partition
        bound = kth_best_bound(scores, k)
        assert bound <= np.sort(scores)[::-1][k - 1]
        rows = np.arange(len(scores))
        got, expected = top_k(rows, scores, k), full_sort(rows, scores, k)
        assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])


def test_k_beyond_the_array_or_zero():
    rows, scores = np.array([4, 2, 9]), np.array([0.5, 0.5, 1.0])
    assert top_k(rows, scores, 10)[0].tolist() == [9, 2, 4]
    assert len(top_k(rows, scores, 0)[0]) == 0
