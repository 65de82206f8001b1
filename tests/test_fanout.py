"""Fan-outs nest to any depth and serve concurrent queries without deadlock (issue 13, point 1)."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from lambdarag import Context, Map, Par, State, Tool, appended
from lambdarag.skills.store.records import RankedList, Variant

COMPARE = "海上交通安全法与水污染防治法在船舶管理方面有何异同？"


def ranked(retriever: str) -> Tool:
    """A tool that appends one ranked list named for the retriever and the query it ran on."""
    return Tool(retriever, lambda s: {"candidates": (RankedList(retriever=retriever, query=s.query),)},
                reads=["query"], writes=["candidates"], effect="io")


def test_map_over_a_par_at_width_one_returns():
    term = Map(Par(ranked("a"), ranked("b"), merge=appended("candidates")), over="variants", pick="text", width=1, limit=100)
    state = State.of("q", variants=tuple(Variant(text=str(i)) for i in range(100)))
    out = term.run(state, Context().with_timeout(30))
    assert [(c.query, c.retriever) for c in out.candidates] == [(str(i), r) for i in range(100) for r in "ab"]


def test_nested_fan_outs_wider_than_the_pool_return():
    """80 outer branches (more than the 64 pool threads), each fanning out 8 × Par(a, b)."""
    inner = Map(Par(ranked("a"), ranked("b"), merge=appended("candidates")), over="variants", pick="text", width=8, limit=8)
    outer = Map(inner, over="variants", pick="text", width=80, limit=80)
    state = State.of("q", variants=tuple(Variant(text=str(i)) for i in range(80)))
    out = outer.run(state, Context().with_timeout(60))
    assert len(out.candidates) == 80 * 8 * 2


@pytest.mark.slow  # 16 full searches on 2 shared cores: about a minute
def test_sixteen_concurrent_compare_searches_all_answer():
    from lambdarag.orchestration.search_unified import search

    search(COMPARE)  # builds the demo index once, outside the race
    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(lambda _: search(COMPARE), range(16)))
    assert all(r.answer and r.query_type == "compare" for r in results)
    assert not [f for r in results for f in r.fallbacks if "deadline" in f["reason"].lower()]
