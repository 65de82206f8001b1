"""One set of defaults: a config that names nothing routes and parameterises every pattern as the shipped one does."""
from __future__ import annotations

from lambdarag.orchestration.config import DEFAULT_CONFIG, parse_config
from lambdarag.orchestration.router import route_table


def test_an_empty_config_prints_every_route_the_shipped_config_prints():
    shipped, empty = parse_config(DEFAULT_CONFIG.read_text(encoding="utf-8")), parse_config("{}")
    routes, bare = route_table(shipped), route_table(empty)
    assert {t: str(c.term) for t, c in bare.items()} == {t: str(c.term) for t, c in routes.items()}
    assert empty.model_dump() == shipped.model_dump()


def test_a_two_line_config_keeps_the_shipped_routes_and_rerank_off():
    two = parse_config("retrieval:\n  index: hb\n")
    assert two.orchestration.routing.fact == "hybrid_search" and two.orchestration.routing.compare == "compare_search"
    assert not two.retrieval.skills.rerank.enabled


def test_a_pattern_section_is_laid_over_its_defaults_key_by_key():
    config = parse_config("patterns:\n  hybrid_search:\n    rrf_k: 30\n  compare_search:\n    perSide: 2\n")
    hybrid = config.pattern("hybrid_search")
    assert hybrid.rrf_k == 30 and hybrid.skills == ("bm25", "embedding") and hybrid.merge == "score"
    assert config.pattern("compare_search").model_extra == {"perSide": 2}
    assert config.pattern("fusion_search").query_expansion   # untouched sections keep theirs
