"""search_unified.search() end to end on the bundled demo knowledge base: routes, errors, degradation, permissions."""
from __future__ import annotations

import copy

import pytest
import yaml

from lambdarag import User
from lambdarag.errors import ConfigError, QueryError
from lambdarag.orchestration.config import DEFAULT_CONFIG, DEMO_DOCS, parse_config
from lambdarag.orchestration.search_unified import search

BASE = yaml.safe_load(DEFAULT_CONFIG.read_text(encoding="utf-8"))


def config_with(**changes) -> object:
    """Returns the default config with dotted-path changes applied, e.g. {"retrieval.skills.rerank.enabled": False}."""
    data = copy.deepcopy(BASE)
    for dotted, value in changes.items():
        node = data
        *parents, last = dotted.split("__")
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = value
    return parse_config(yaml.safe_dump(data, allow_unicode=True))


def sources(result) -> set[str]:
    return {h.source for h in result.hits}


def test_compare_question_routes_cites_both_laws_and_explains_itself():
    r = search("海上交通安全法与水污染防治法在船舶管理方面有何异同？")
    assert r.query_type == "compare"
    assert r.strategy == "compare_search"
    # the demo corpus holds FAQ pairs, so the route sits behind the FAQ step
    assert r.expression.startswith("If(faq_direct_answer(q, _), identity, Par(statute_sides(loose=true) >> Par(bm25_search")
    assert "merge=keep_lead(window=5)" in r.expression   # the route adds to hybrid_search, never subtracts
    assert "side_search" in r.latency_ms
    assert any("海上交通安全法" in s for s in sources(r)) and any("水污染防治法" in s for s in sources(r))
    cited = {c.source for c in r.citations}
    assert any("海上交通安全法" in s for s in cited) and any("水污染防治法" in s for s in cited)
    assert r.latency_ms["total"] > 0 and "bm25_search" in r.latency_ms
    assert r.classification["stage"] == "rules"


@pytest.mark.parametrize("query, query_type, strategy", [
    ("船长在保障海上生命安全和防治船舶污染方面有什么权力？", "fact", "hybrid_search"),
    ("船员条例由哪个部门主管？", "relation", "relation_search"),
    ("梳理船员管理法规体系", "synthesis", "synthesis"),
    ("海洋环境保护法最新版本是哪一年修订的？", "temporal", "temporal_search"),
])
def test_each_type_takes_its_configured_route(query, query_type, strategy):
    r = search(query)
    assert (r.query_type, r.strategy) == (query_type, strategy)
    assert r.answer and r.hits


def test_temporal_question_gets_the_newest_version_only():
    r = search("海洋环境保护法最新版本是哪一年修订的？")
    versions = {h.source for h in r.hits if "海洋环境保护法" in h.source}
    assert versions == {"海洋环境保护法(2023-10-24).md"}


def test_fact_answer_cites_the_article_that_answers_it():
    r = search("船长在保障海上生命安全和防治船舶污染方面有什么权力？")
    assert "独立作出决定" in r.answer
    assert any(c.source.startswith("海上交通安全法") and c.section == "第三十八条" for c in r.citations)


@pytest.mark.parametrize("bad, message", [
    ("", "query is empty"),
    ("   ", "query is empty"),
    ("船" * 2001, "query is 2001 characters long; the limit is 2000"),
])
def test_bad_queries_get_a_clear_error(bad, message):
    with pytest.raises(QueryError, match=message):
        search(bad)


def test_config_errors_name_the_yaml_path_line_and_choices():
    with pytest.raises(ConfigError, match=r"line 3: retrieval.skils: unknown key 'skils'"):
        parse_config("retrieval:\n  index: demo\n  skils: {}\n")
    with pytest.raises(ConfigError, match=r"line 3: orchestration.routing.compare: unknown pattern 'fuson_search'; "
                                          r"did you mean 'fusion_search'\? valid patterns: compare_search, fusion_search, graph_retrieval, hybrid_search"):
        parse_config("orchestration:\n  routing:\n    compare: [graph_retrieval, fuson_search]\n")
    with pytest.raises(ConfigError, match=r"line 1, column 10\) is not valid YAML|is not valid YAML"):
        parse_config("retrieval: [unclosed\n")


@pytest.mark.parametrize("component", ["embedding", "rerank", "graph", "wiki"])
def test_switching_a_component_off_still_answers_and_says_so(component):
    # a component is asked for when a pattern's skills list names it (rerank is named by none by default)
    cfg = config_with(**{f"retrieval__skills__{component}__enabled": False,
                         "patterns__hybrid_search__skills": ["bm25", "embedding", component]})
    r = search("海上交通安全法与水污染防治法在船舶管理方面有何异同？", config=cfg)
    assert r.answer and r.hits
    assert any(f["term"] == component and "disabled in config" in f["reason"] for f in r.fallbacks)
    ran = set(r.latency_ms)
    gone = {"embedding": "embedding_search", "rerank": "rerank", "graph": "graph_walk", "wiki": "wiki_page_read"}
    assert gone[component] not in ran


def test_a_component_no_pattern_asks_for_is_a_mode_not_a_fallback():
    cfg = config_with(retrieval__skills__rerank__enabled=False)   # the default: no pattern's skills list names rerank
    r = search("船员条例由哪个部门主管？", config=cfg)
    assert not any(f["term"] == "rerank" for f in r.fallbacks)
    assert {"term": "rerank", "path": "config", "reason": "rerank disabled in config: fusion order kept, no rerank"} \
        in r.modes


def test_no_llm_is_a_mode_the_offline_answer_lists_no_fallback():
    r = search("船员条例由哪个部门主管？")
    assert r.fallbacks == [] and not r.degraded
    assert {"term": "llm", "path": "config", "reason": "offline answer (no LLM configured)"} in r.modes
    lams = [s for s in r.trace.spans if s.kind == "lam"]
    assert lams and all(s.notes["path_taken"] == "offline" and s.fallback is None for s in lams)


def test_an_unreachable_llm_degrades_to_the_fallbacks(dead_url):
    cfg = config_with(llm__baseUrl=dead_url, llm__model="m", llm__timeout=0.5)
    r = search("船长在保障海上生命安全和防治船舶污染方面有什么权力？", config=cfg)
    assert "独立作出决定" in r.answer
    reasons = [f["reason"] for f in r.fallbacks if f["term"] == "answer_generate"]
    assert reasons and "cannot reach LLM" in reasons[0]


def test_over_budget_routes_take_the_configured_fallback():
    cfg = config_with(cost__budgetPerQuery=0.005)
    r = search("梳理船员管理法规体系", config=cfg)
    assert r.strategy == "keyword_search"
    assert any(f["term"] == "router" and f["reason"].startswith("budget: synthesis costs up to") for f in r.fallbacks)


INTERNAL = "船员适任证书核查内部指引"


def test_internal_documents_never_reach_a_public_user():
    query = "船员适任证书核查内部指引的核查要求是什么？"
    for q in (query, "船员适任证书核查有哪些要求", "梳理船员适任证书核查的规定"):
        r = search(q)
        assert not any(INTERNAL in s for s in sources(r)), q
        assert INTERNAL not in r.answer
    insider = User(id="u1", departments=("船员管理处",), security_level=2)
    r = search(query, user=insider)
    assert any(INTERNAL in s for s in sources(r))


def test_an_index_without_a_compiled_wiki_degrades_instead_of_failing(tmp_path, monkeypatch):
    from lambdarag.domains.corpus import build_index

    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path))
    build_index(DEMO_DOCS, "nowiki", dense=False, progress=False)
    r = search("梳理船员管理法规体系", index="nowiki", config=config_with(retrieval__skills__embedding__enabled=False))
    assert r.strategy == "synthesis" and r.citations
    assert any("no compiled wiki for index 'nowiki'" in f["reason"] for f in r.fallbacks)
    assert "wiki_page_read" not in r.latency_ms and "graph_walk" not in r.latency_ms


def test_failing_embedding_and_rerank_endpoints_degrade_visibly(llm_server):
    from tests.scripted_server import Reply

    llm_server.script.default = Reply(status=503)
    cfg = config_with(retrieval__skills__embedding__baseUrl=llm_server.url,
                      retrieval__skills__embedding__model="e5", retrieval__skills__embedding__timeout=1,
                      retrieval__skills__rerank__backend="http", retrieval__skills__rerank__baseUrl=llm_server.url,
                      retrieval__skills__rerank__model="rr")
    r = search("船长在保障海上生命安全和防治船舶污染方面有什么权力？", config=cfg)
    assert "独立作出决定" in r.answer
    reasons = {f["term"]: f["reason"] for f in r.fallbacks}
    assert "attempt 2:" in reasons["faq_direct_answer"] and "HTTP 503" in reasons["faq_direct_answer"]
    r = search("海上交通安全法与水污染防治法在船舶管理方面有何异同？", config=cfg)
    reasons = {f["term"]: f["reason"] for f in r.fallbacks}
    assert "attempt 2:" in reasons["rerank"] and "rerank endpoint" in reasons["rerank"]
    assert "embedding endpoint" in reasons["embedding_search"] and r.citations
    assert "rerank_local" in r.latency_ms and "dense_as_lexical" in r.latency_ms


def test_the_api_key_never_reaches_results_or_traces(dead_url, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-4711")
    cfg = config_with(llm__baseUrl=dead_url, llm__model="m", llm__timeout=0.3)
    r = search("船员条例由哪个部门主管？", config=cfg)
    assert any("cannot reach LLM" in f["reason"] for f in r.fallbacks)
    assert "sk-test-secret-4711" not in r.model_dump_json()
    assert "sk-test-secret-4711" not in repr(cfg) and "sk-test-secret-4711" not in cfg.model_dump_json()


def test_a_question_is_embedded_once_though_the_classifier_and_dense_search_both_read_its_vector(monkeypatch):
    from lambdarag.skills.store.vectors import default_embedder, forget_query_vectors

    embedder = default_embedder()
    queries = []
    real = embedder.embed

    def counting(texts, *, kind="passage"):
        queries.extend(t for t in texts if kind == "query")
        return real(texts, kind=kind)

    monkeypatch.setattr(embedder, "embed", counting)
    forget_query_vectors()
    question = "船长在保障海上生命安全方面有什么权力？"
    r = search(question, config=config_with(orchestration__feedback__enabled=False))
    assert r.query_type == "fact" and r.classification["stage"] == "exemplars"
    assert "embedding_search" in r.latency_ms
    assert queries.count(question) == 1
