"""The feedback loop on a temporary copy of the demo knowledge base: write-back and revert, cache, routing, rules, synonyms."""
from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
import yaml

from lambdarag import Context, State, User, Verdict
from lambdarag.skills.store.records import Citation
from lambdarag.errors import LambdaRAGError, StoreCorrupt
from lambdarag.skills.classify import rule_classify
from lambdarag.orchestration import knowledge
from lambdarag.orchestration.cli import main
from lambdarag.orchestration.config import DEFAULT_CONFIG, DEMO_DOCS, parse_config
from lambdarag.skills.lexical import expand_tokens
from lambdarag.skills.store.vectors import default_embedder
from lambdarag.domains import profile_named
from lambdarag.domains.corpus import compile_wiki
from lambdarag.skills.store.wiki import LEARNED
from lambdarag.orchestration.feedback import (FeedbackLoop, SynonymLearner, normalise,
                                    routing_scores, scope_of, variant_pairs)
from lambdarag.orchestration.learning import open_learned
from lambdarag.orchestration.lifecycle import unified_term
from lambdarag.orchestration.search_unified import search
from lambdarag.orchestration.feedback.store import open_store
from tests.scripted_server import Reply

BASE = yaml.safe_load(DEFAULT_CONFIG.read_text(encoding="utf-8"))
RELATION_Q = "船员条例由哪个部门主管？"
COMPARE_Q = "海上交通安全法与水污染防治法在船舶管理方面有何异同？"


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """A knowledge root holding a BM25-only demo index, built once for the module."""
    return tmp_path_factory.mktemp("home")


@pytest.fixture
def kb(home, tmp_path, monkeypatch):
    """Returns (config, config file, wiki dir, feedback dir) of a fresh learning setup in temporary folders."""
    monkeypatch.setenv("LAMBDARAG_HOME", str(home))
    monkeypatch.setenv("LAMBDARAG_FEEDBACK", "on")
    wiki = tmp_path / "wiki"
    compile_wiki(DEMO_DOCS, wiki)   # what the first search would compile (not feedback)
    shutil.rmtree(home / "demo" / "feedback", ignore_errors=True)
    knowledge.forget()

    def make(routing=None, **feedback):
        data = copy.deepcopy(BASE)
        data["orchestration"]["routing"].update(routing or {})
        data["retrieval"]["skills"]["embedding"]["enabled"] = False
        data["retrieval"]["skills"]["wiki"]["dir"] = str(wiki)
        data["orchestration"]["feedback"].update(feedback)
        text = yaml.safe_dump(data, allow_unicode=True)
        path = tmp_path / f"config-{len(list(tmp_path.glob('config-*')))}.yml"
        path.write_text(text, encoding="utf-8")
        return parse_config(text), path

    yield make, wiki, home / "demo" / "feedback"
    knowledge.forget()


def snapshot(wiki: Path) -> dict[str, bytes]:
    """Returns the wiki's files but locks, backups and the number of the last store change it holds (`LEARNED`)."""
    return {p.relative_to(wiki).as_posix(): p.read_bytes() for p in sorted(wiki.rglob("*"))
            if p.is_file() and not p.name.endswith((".lock", ".bak")) and p.name != LEARNED}


def drop_relation(config, head: str, relation: str, tail: str) -> None:
    """Removes a compiled fact from the temporary wiki (graph and pages) so that an answer can teach it again."""
    from lambdarag.orchestration.feedback import render_into

    base = knowledge.open_knowledge(config)
    graph = base.graph
    for rec in [r for r in graph.neighbors(head) if r.relation == relation and r.tail == tail]:
        graph.remove_relation(rec)
    graph.save()
    for name in (head, tail):
        render_into(graph, base.wiki_dir, name)
    knowledge.forget()


def final_state(config, query: str) -> State:
    """Returns the pipeline's last state for `query` (what search() hands to the feedback loop)."""
    base = knowledge.open_knowledge(config)
    term = unified_term(config).term
    return term.run(State(query=query, original_query=query), Context(resources=base.resources()))


def test_cited_answer_is_written_back_with_provenance_and_revert_restores_exactly(kb, capsys):
    make, wiki, fb = kb
    config, path = make(minSources=1)  # relation_search answers this from the one statute it names
    drop_relation(config, "国家海事管理机构", "主管", "船员条例")
    before = snapshot(wiki)

    r = search(RELATION_Q, config=config)
    assert r.citations and r.query_id
    item = open_store(fb).read(lambda tx: tx.item("writeback", r.query_id))
    learned = {(x["head"], x["relation"], x["tail"]) for x in item["relations"]}
    assert ("国家海事管理机构", "主管", "船员条例") in learned
    rel = next(x for x in item["relations"] if x["head"] == "国家海事管理机构")
    assert rel["origin"] == "feedback" and rel["source"] == "船员条例(2023-07-20).md" and rel["section"] == "第三条"
    assert rel["provenance"]["query_id"] == r.query_id and rel["provenance"]["extractor"] == "fact_extract/rule"
    assert set(rel["provenance"]["sources"]) == {c.source for c in r.citations} and rel["confidence"] == 0.6
    graph = json.loads((wiki / "relations.json").read_text(encoding="utf-8"))
    assert any(x["origin"] == "feedback" and x["provenance"]["query_id"] == r.query_id for x in graph["relations"])
    assert "[[国家海事管理机构]]" in (wiki / "entities" / "船员条例.md").read_text(encoding="utf-8")
    analysis = (wiki / item["analysis"]).read_text(encoding="utf-8")
    assert RELATION_Q in analysis and r.query_id in analysis
    assert snapshot(wiki) != before

    assert main(["feedback", "list", "--config", str(path)]) == 0
    assert r.query_id in capsys.readouterr().out
    assert main(["feedback", "revert", r.query_id, "--config", str(path)]) == 0
    assert snapshot(wiki) == before
    assert main(["feedback", "revert", r.query_id, "--config", str(path)]) == 2
    assert "already reverted" in capsys.readouterr().err


def test_a_failed_citation_check_or_too_few_sources_writes_nothing(kb):
    make, wiki, fb = kb
    config, _ = make()
    drop_relation(config, "国家海事管理机构", "主管", "船员条例")
    before = snapshot(wiki)
    state = final_state(config, RELATION_Q)
    assert state.verdict is None or state.verdict.passed
    loop = FeedbackLoop(config.orchestration.feedback, fb, knowledge.open_knowledge(config))
    failed = state.model_copy(update={"verdict": Verdict(passed=False, details=("unsupported | x | y",))})
    assert loop.journal.write_back("q-failed", failed, Context()) is None
    one_source = state.model_copy(update={"verdict": Verdict(passed=True),
                                          "citations": (Citation(source="船员条例(2023-07-20).md", section="第三条"),)})
    assert loop.journal.write_back("q-one", one_source, Context()) is None
    result = {"query": RELATION_Q, "rewritten_query": RELATION_Q, "query_type": "relation", "strategy": "s",
              "answer": failed.answer, "latency_ms": {"total": 1.0}}
    learned = loop.record(result, failed)
    assert "write_back" not in learned and snapshot(wiki) == before and loop.journal.items() == {}
    logged = open_store(fb).log("query_log").records()
    assert logged[-1]["success"] is False and logged[-1]["verdict"]["passed"] is False


def test_switched_off_feedback_writes_nothing(kb):
    make, wiki, fb = kb
    config, _ = make(enabled=False)
    before = snapshot(wiki)
    r = search(COMPARE_Q, config=config)
    assert r.answer and not r.query_id and not r.from_cache
    assert not fb.exists() and snapshot(wiki) == before


def test_hot_queries_are_cached_per_permission_scope_and_version(kb):
    make, wiki, fb = kb
    config, _ = make(cacheAfter=2)
    first, second = search(COMPARE_Q, config=config), search(COMPARE_Q, config=config)
    assert not first.from_cache and not second.from_cache
    third = search("  海上交通安全法与水污染防治法在船舶管理方面有何异同? ", config=config)
    assert third.from_cache and third.answer == second.answer and third.strategy == second.strategy
    assert third.query_id and third.query_id != second.query_id
    other = search(COMPARE_Q, config=config, user=User(id="x", departments=("法规处",), security_level=1))
    assert not other.from_cache
    (wiki / "relations.json").touch()            # a write-back or a recompile changes the knowledge version
    assert not search(COMPARE_Q, config=config).from_cache
    log = open_store(fb).log("query_log").records()
    assert [r["from_cache"] for r in log] == [False, False, True, False, False]
    assert log[0]["retrieval"] and log[0]["rerank_top5"] and log[0]["latency_ms"]["total"] > 0


def test_an_upgrade_never_serves_the_answer_the_old_release_cached(kb, monkeypatch):
    import lambdarag

    make, _, _ = kb
    config, _ = make(cacheAfter=1)
    search(RELATION_Q, config=config)
    assert search(RELATION_Q, config=config).from_cache
    monkeypatch.setattr(lambdarag, "__version__", lambdarag.__version__ + ".post1")   # same terms, new code
    assert not search(RELATION_Q, config=config).from_cache


def test_a_confirm_reject_or_revert_drops_the_cached_answers_it_could_change(kb):
    make, _, fb = kb
    config, path = make(cacheAfter=1)
    first = search(RELATION_Q, config=config)
    assert search(RELATION_Q, config=config).from_cache
    chunk = first.hits[-1].chunk_id
    for action in ("confirm", "reject"):
        assert main(["feedback", action, first.query_id, chunk, "--config", str(path)]) == 0
        assert not search(RELATION_Q, config=config).from_cache     # the learned stores changed: answered afresh
        assert search(RELATION_Q, config=config).from_cache         # and cached again under the new version
    item = next(iter(FeedbackLoop(config.orchestration.feedback, fb).confirmations.items()))
    assert main(["feedback", "revert", item, "--config", str(path)]) == 0
    assert not search(RELATION_Q, config=config).from_cache


def test_cache_is_lru_bounded_and_keys_never_cross_scopes(tmp_path):
    from lambdarag.orchestration.config import FeedbackConfig

    loop = FeedbackLoop(FeedbackConfig(cache_after=1, cache_size=2), tmp_path)
    for q in ("甲", "乙", "丙"):
        assert loop.cache.remember(q, None, {"answer": q}, version="v1")
    assert loop.cache.get("甲", None, "v1") is None and loop.cache.get("丙", None, "v1") == {"answer": "丙"}
    assert loop.cache.get("丙", User(departments=("a",)), "v1") is None
    assert loop.cache.get("丙", None, "v2") is None
    assert scope_of(User(departments=("b", "a"), security_level=2)) == scope_of(User(departments=("a", "b", "a"),
                                                                                      security_level=2))
    assert scope_of(User(departments=("a,b",), security_level=2)) != scope_of(User(departments=("a", "b"),
                                                                                  security_level=2))
    assert normalise(" ＡＢ  c？") == "ab c"


def test_adaptive_routing_uses_samples_then_score_and_explores_deterministically(kb):
    make, _, fb = kb
    # a route that fans out to two patterns, so adaptive routing has candidates to pick among
    config, _ = make(routing={"compare": ["graph_retrieval", "fusion_search"]}, minSamples=3, explore=0.0)
    loop = FeedbackLoop(config.orchestration.feedback, fb)
    options = (("graph_retrieval", "fusion_search"), ("graph_retrieval",), ("fusion_search",))
    few = {"graph_retrieval": {"total": 5, "success": 5, "latency_ms": 50.0, "cost": 0.0}}
    assert loop.routing.pick("compare", options, few, "q") == (options[0], "configured: fewer than minSamples=3 runs of "
                                                                   "some candidate")
    stats = {"graph_retrieval+fusion_search": {"total": 4, "success": 2, "latency_ms": 400.0, "cost": 0.0},
             "graph_retrieval": {"total": 4, "success": 4, "latency_ms": 100.0, "cost": 0.0},
             "fusion_search": {"total": 4, "success": 3, "latency_ms": 200.0, "cost": 0.0}}
    chosen, reason = loop.routing.pick("compare", options, stats, "q")
    assert chosen == ("graph_retrieval",) and reason.startswith("adaptive: graph_retrieval+fusion_search=0.500, graph_retrieval=1.000")
    scores = routing_scores({o: stats["+".join(o)] for o in options})
    assert scores[("graph_retrieval",)] == pytest.approx(0.7 + 0.2 + 0.1)
    explorer = FeedbackLoop(config.orchestration.feedback.model_copy(update={"explore": 1.0}), fb)
    assert explorer.routing.pick("compare", options, {**stats, "fusion_search": {**stats["fusion_search"], "total": 9}},
                         "q")[0] == options[0]
    assert [explorer.routing.pick("compare", options, stats, q) for q in "ab"] == [explorer.routing.pick("compare", options, stats, q)
                                                                         for q in "ab"]
    from lambdarag.orchestration.feedback.store.rows import add_runs

    loop.store.write(lambda tx: [add_runs(tx, "compare", s, r["total"], r["success"], r["latency_ms"], r["cost"])
                                 for s, r in stats.items()])
    r = search(COMPARE_Q, config=config)
    assert r.strategy == "graph_retrieval"
    logged = open_store(fb).log("query_log").records()[-1]
    assert logged["strategy"] == "graph_retrieval"
    assert loop.routing.table()["compare"]["graph_retrieval"]["total"] == 5


def test_a_correction_becomes_a_rule_the_classifier_uses(kb, capsys):
    make, _, fb = kb
    config, path = make()
    query = "琼州海峡定线制"
    wanted = "compare" if search(query, config=config).query_type != "compare" else "synthesis"
    assert main(["feedback", "correct", "--query", query, "--type", wanted, "--config", str(path)]) == 0
    r = search(query, config=config)
    assert (r.query_type, r.classification["stage"], r.from_cache) == (wanted, "learned", False)
    assert main(["feedback", "correct", "--query", query, "--type", "temporal", "--pattern", "([",
                 "--config", str(path)]) == 2
    assert "bad pattern" in capsys.readouterr().err


def test_a_correction_becomes_an_exemplar_of_the_learned_classifier(tmp_path):
    from lambdarag.orchestration.config import FeedbackConfig

    loop = FeedbackLoop(FeedbackConfig(), tmp_path)
    loop.rules.correct("琼州海峡定线制", "temporal", pattern="定线制")
    assert loop.rules.exemplars() == [{"query": "琼州海峡定线制", "type": "temporal"}]


def test_agreeing_llm_classifications_become_a_rule(tmp_path):
    from lambdarag.orchestration.config import FeedbackConfig

    loop = FeedbackLoop(FeedbackConfig(min_samples=2), tmp_path)
    llm = {"stage": "llm", "type": "temporal"}
    assert loop.rules.observe("定线制怎么规定", {"stage": "rules", "type": "fact"}) is None
    assert loop.rules.observe("琼州海峡定线制", llm) is None
    rule = loop.rules.observe("成山角定线制", llm)
    assert rule["type"] == "temporal" and rule["origin"] == "llm" and rule["evidence"] == 2
    found = rule_classify("老铁山水道定线制", loop.rules.rules(), profile_named("prc_statutes"))
    assert (found.type, found.stage) == ("temporal", "learned")


def test_term_map_is_learned_from_labelled_pairs_and_synonyms_from_rewrites_that_found_cited_chunks(kb, tmp_path,
                                                                                                       capsys):
    make, _, fb = kb
    config, path = make()
    index = knowledge.open_knowledge(config).index
    chunk_id = next(c.id for c in index.chunks() if c.source == "船员条例(2023-07-20).md" and c.section == "第三条")
    qrels = tmp_path / "qrels.jsonl"
    lines = [{"qid": str(i), "query": q, "relevant": [chunk_id]}
             for i, q in enumerate(["海员需要什么证书", "海员证书怎么办理", "海员的证书有效期", "海员注册条件"])]
    qrels.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines), encoding="utf-8")
    assert main(["feedback", "learn", "--qrels", str(qrels), "--config", str(path)]) == 0
    learned = open_learned(fb, index, default_embedder())
    chunk = index.chunk(chunk_id)
    assert learned.term_map["海员"] and all(s in chunk.text for s in learned.term_map["海员"])
    assert learned.expand(["海员", "证书"])[:3] == ["海员", "证书", learned.term_map["海员"][0]]
    assert expand_tokens(["海员", "证书"], {"海员": ["船员"]}) == ["海员", "证书", "船员"]
    [item_id] = FeedbackLoop(config.orchestration.feedback, fb).confirmations.items()
    assert main(["feedback", "revert", item_id, "--config", str(path)]) == 0
    assert open_learned(fb, index, default_embedder()) is None
    assert variant_pairs("海员证书怎么办理", "船员证书怎么办理") == {"海员": {"船员": 1}}
    assert variant_pairs("海员证书", "海员证书 船员条例 相关规定") == {}


def test_synonym_learner_keeps_specific_frequent_associations_only():
    df = {"船员": 5, "的": 900, "证书": 40}
    pairs = [(["海员", "证书"], [["船员", "证书", "的"]])] * 3 + [(["罕见"], [["船员"]])]
    learned = SynonymLearner(df, 1000, min_queries=3, min_share=0.5, min_lift=10).learn(pairs)
    assert learned == {"海员": {"船员": 3}}


def test_empty_results_are_queued_as_wiki_gaps(kb):
    make, _, fb = kb
    config, _ = make()
    r = search("zzqx wvvk", config=config)
    assert not r.hits
    gaps = open_store(fb).log("gaps").records()
    assert gaps[-1]["query"] == "zzqx wvvk" and gaps[-1]["query_id"] == r.query_id


def test_the_first_open_imports_old_files_once_skipping_a_torn_line_and_refusing_corrupt_json(tmp_path):
    (tmp_path / "query_log.jsonl").write_bytes(b'{"query_id": "q1", "a": 1}\n{"query_id": "q2", "b"')   # a torn append
    store = open_store(tmp_path)
    assert store.log("query_log").records() == [{"query_id": "q1", "a": 1}]
    assert store.read(lambda tx: tx.document("imported"))["torn"] == {"query_log": 1}
    (tmp_path / "query_log.jsonl").write_text('{"query_id": "q3"}\n', encoding="utf-8")
    assert [r["query_id"] for r in open_store(tmp_path).log("query_log")] == ["q1"]      # imported once
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "votes.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(StoreCorrupt, match="votes.json: not valid JSON"):
        open_store(tmp_path / "bad")
    assert (tmp_path / "bad" / "votes.json").read_text(encoding="utf-8") == "{not json"


def test_show_of_an_unknown_item_names_the_known_ones(tmp_path):
    from lambdarag.orchestration.config import FeedbackConfig

    with pytest.raises(LambdaRAGError, match="no learned item 'nope'; known: none"):
        FeedbackLoop(FeedbackConfig(), tmp_path).journal.item("nope")


def test_an_answer_from_wiki_pages_alone_is_checked_without_crashing():
    from lambdarag import State
    from lambdarag.skills.store.records import WikiPage
    from lambdarag.orchestration.feedback import verdict_of

    state = State.of("船员条例由哪个部门主管？", answer="国务院交通运输主管部门主管全国船员管理工作。[来源: entities/船员条例.md]",
                     wiki_pages=(WikiPage(entity="船员条例", path="entities/船员条例.md",
                                          text="国务院交通运输主管部门主管全国船员管理工作。"),))
    verdict = verdict_of(state, None)
    assert verdict is not None and verdict.passed


def test_thumbs_on_a_citation_wait_for_review_then_approve_confirms_that_chunk_and_revert_undoes_it(kb, capsys):
    from fastapi.testclient import TestClient

    from lambdarag.qademo.app import create_app

    make, _, fb = kb
    config, path = make()
    client = TestClient(create_app(config))
    view = client.post("/api/search", json={"query": COMPARE_Q}).json()
    chunk = next(c["chunk_id"] for c in view["citations"] if c["chunk_id"])
    before = FeedbackLoop(config.orchestration.feedback, fb).confirmations.items()
    r = client.post("/api/feedback", json={"query_id": view["query_id"], "chunk_id": chunk, "verdict": "down"})
    assert r.status_code == 200 and r.json()["origin"] == "reject" and r.json()["status"] == "pending"
    assert r.json()["weight"] is None
    assert FeedbackLoop(config.orchestration.feedback, fb).confirmations.items() == before   # nothing learned yet
    assert main(["feedback", "review", "--config", str(path)]) == 0
    listed = capsys.readouterr().out
    assert r.json()["id"] in listed and chunk in listed and "untrusted" in listed
    assert main(["feedback", "approve", r.json()["id"], "--config", str(path)]) == 0
    loop = FeedbackLoop(config.orchestration.feedback, fb)
    item_id = loop.votes.get(r.json()["id"])["confirmation"]
    item = loop.confirmations.items()[item_id]
    assert item["origin"] == "reject" and item["weight"] < 0
    assert item["query_id"] == view["query_id"] and item["pairs"][0]["chunks"] == [chunk]
    assert set(loop.confirmations.items()) - set(before) == {item["id"]} and not loop.votes.pending()
    assert main(["feedback", "revert", item["id"], "--config", str(path)]) == 0
    assert FeedbackLoop(config.orchestration.feedback, fb).confirmations.items()[item["id"]]["reverted"]
    bad = client.post("/api/feedback", json={"query_id": "nope", "chunk_id": chunk, "verdict": "up"})
    assert bad.status_code == 400 and "nope" not in bad.json()["error"]
    assert bad.json()["error"] == "feedback confirm: the query id names no answer logged for this caller"


def with_llm(config, url: str):
    """Returns `config` with its llm section pointing at `url`."""
    return config.model_copy(update={"llm": config.llm.model_copy(update={"base_url": url, "model": "m",
                                                                          "timeout": 2.0})})


def test_enabling_an_llm_never_serves_the_offline_cached_answer_and_degraded_answers_are_not_cached(kb, llm_server):
    make, wiki, fb = kb
    config, _ = make(cacheAfter=1)
    search(COMPARE_Q, config=config)
    assert search(COMPARE_Q, config=config).from_cache
    llm_server.script.default = Reply(status=500)
    online = with_llm(config, llm_server.url)
    for _ in range(2):
        r = search(COMPARE_Q, config=online)
        assert not r.from_cache and r.degraded
        assert not any("no LLM configured" in f["reason"] for f in r.fallbacks)
        assert any("answered HTTP 500" in f["reason"] for f in r.fallbacks if f["term"] == "answer_generate")


def test_the_llm_side_of_learning_runs_after_the_result_in_the_background(kb, llm_server):
    from lambdarag.orchestration.feedback.worker import drain

    make, wiki, fb = kb
    config, _ = make(minSources=1)
    drop_relation(config, "国家海事管理机构", "主管", "船员条例")
    llm_server.script.default = Reply(status=500)
    r = search(RELATION_Q, config=with_llm(config, llm_server.url))
    assert r.citations and r.query_id
    spans = r.trace.spans
    assert "fact_extract" not in {s.name for s in spans}
    # the answer's own review (the route's Guard) is the only check in the foreground; learning adds none
    assert all("Guard.check" in s.path for s in spans if s.name == "citation_check")
    assert drain(60)
    job = open_store(fb).log("background").records()[-1]
    assert job["query_id"] == r.query_id and "error" not in job
    ran = {s["name"]: s for s in job["trace"]["spans"]}
    assert "answered HTTP 500" in ran["fact_extract"]["fallback"]
    item = open_store(fb).read(lambda tx: tx.item("writeback", r.query_id))
    assert ("国家海事管理机构", "主管", "船员条例") in {(x["head"], x["relation"], x["tail"]) for x in item["relations"]}


def test_a_department_named_like_three_shares_no_cached_answer_with_a_user_in_those_three(kb):
    make, _, _ = kb
    config, _ = make(cacheAfter=1)
    three = User(id="a", departments=("人事处", "安保处", "引航处"), security_level=2)
    forged = User(id="b", departments=("人事处,安保处,引航处",), security_level=2)
    for query in (RELATION_Q, COMPARE_Q):
        search(query, config=config, user=three)
        assert search(query, config=config, user=three).from_cache
        assert not search(query, config=config, user=forged).from_cache


def test_rerouting_a_type_in_the_config_misses_the_cache_and_the_cli_says_from_cache(kb, capsys):
    make, _, _ = kb
    config, path = make(cacheAfter=1)
    first = search(RELATION_Q, config=config)
    assert search(RELATION_Q, config=config).from_cache
    rerouted, _ = make(cacheAfter=1, routing={"relation": "hybrid_search"})
    again = search(RELATION_Q, config=rerouted)
    assert not again.from_cache and again.strategy != first.strategy
    assert main(["ask", RELATION_Q, "--config", str(path)]) == 0       # cached anew (one version is kept)
    assert "from cache" not in capsys.readouterr().out
    assert main(["ask", RELATION_Q, "--config", str(path)]) == 0
    assert "from cache" in capsys.readouterr().out


def test_a_rule_learned_from_privileged_questions_shows_only_to_who_may_read_them(kb, capsys):
    from lambdarag.orchestration.search_unified import lifecycle_term

    make, _, fb = kb
    config, path = make(minSamples=2)
    loop = FeedbackLoop(config.orchestration.feedback, fb)
    insider = User(id="i", departments=("引航处",), security_level=3)
    for query in ("机密代号青龙的部署", "青龙行动的部署安排"):
        result = {"query": query, "rewritten_query": query, "query_type": "temporal", "strategy": "s",
                  "answer": "", "latency_ms": {"total": 1.0}, "classification": {"stage": "llm", "type": "temporal"}}
        learned = loop.record(result, State(query=query, original_query=query), user=insider)
    assert learned["rule"]["scope"] == {"departments": ["引航处"], "security_level": 3, "all_access": False}
    assert "青龙" in str(lifecycle_term(config=config, user=insider))
    assert "青龙" not in str(lifecycle_term(config=config))
    assert "青龙" not in str(lifecycle_term(config=config, user=User(departments=("引航处",), security_level=1)))
    assert main(["ask", "青龙行动什么时候开始", "--explain", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    assert "lifecycle:" in out and "青龙" not in out.split("lifecycle:")[1].split("\n")[0]
    assert main(["ask", "青龙行动什么时候开始", "--explain", "--config", str(path), "--department", "引航处",
                 "--security-level", "3"]) == 0
    assert "青龙" in capsys.readouterr().out.split("lifecycle:")[1].split("\n")[0]
