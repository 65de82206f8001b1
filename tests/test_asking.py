"""Learning from asking is bounded (issue 44 §4): anonymous callers' answers teach nothing unless distinct callers
agree, and a flood of questions grows the feedback store by at most the documented bound."""
from __future__ import annotations

import sqlite3

from fastapi.testclient import TestClient

from lambdarag.orchestration import knowledge
from lambdarag.orchestration.feedback import FeedbackLoop
from lambdarag.orchestration.feedback.asking import asking_from
from lambdarag.orchestration.feedback.retention import bound
from lambdarag.orchestration.feedback.store import open_store
from lambdarag.orchestration.search_unified import search
from lambdarag.qademo.app import create_app
from tests.test_feedback import COMPARE_Q, RELATION_Q, final_state, home, kb, snapshot  # noqa: F401 (fixtures)
from tests.test_store import engine, loop_at  # noqa: F401 (engine is a fixture)

ATTACKS = ("海上交通安全法与水污染防治法在船舶管理方面有何异同？", "船员条例与海上交通安全法在船员管理方面有何异同？",
           "海上交通安全法和船员条例对船长职责有何不同规定？", "水污染防治法与海上交通安全法在船舶污染方面有何异同？")


def answer_items(loop: FeedbackLoop) -> list[dict]:
    """Returns the confirmations answers made (self-confirmation), not votes' or labelled pairs'."""
    return [i for i in loop.confirmations.items().values() if i["origin"] == "answer"]


def test_forty_anonymous_questions_teach_nothing_and_leave_a_victims_top_ten_as_it_was(kb):
    make, _, fb = kb
    config, _ = make(cacheAfter=1000)
    with asking_from("web:victim"):
        before = [h.chunk_id for h in search(RELATION_Q, config=config).hits[:10]]
    client = TestClient(create_app(config))
    answered = [client.post("/api/ask" if i % 2 else "/api/search",        # the stream's thread asks as the client
                            json={"query": ATTACKS[i % len(ATTACKS)] + "的" * (i // 4)}) for i in range(40)]
    assert all(r.status_code == 200 for r in answered)
    loop = FeedbackLoop(config.orchestration.feedback, fb)
    assert not answer_items(loop)
    assert loop.journal.items() == {}
    knowledge.forget()
    with asking_from("web:victim"):
        assert [h.chunk_id for h in search(RELATION_Q, config=config).hits[:10]] == before
    for query in ATTACKS:                     # the same answers asked by the process itself do teach
        search(query, config=config)
    assert answer_items(loop)


def test_distinct_anonymous_callers_teach_once_they_agree(kb):
    make, _, fb = kb
    config, _ = make(cacheAfter=1000, votes={"anonymousAgreement": 2})
    client = TestClient(create_app(config), client=("10.0.0.1", 5000))
    for _ in range(3):                           # one source asking again and again is one caller
        client.post("/api/search", json={"query": COMPARE_Q})
    loop = FeedbackLoop(config.orchestration.feedback, fb)
    assert not answer_items(loop)
    TestClient(create_app(config), client=("10.0.0.2", 5000)).post("/api/search", json={"query": COMPARE_Q})
    assert len(answer_items(loop)) == 1


def test_a_thousand_anonymous_questions_grow_the_state_by_at_most_the_documented_bound(kb):
    make, wiki, fb = kb
    config, _ = make(cacheAfter=1, cacheSize=10, retention={"maxBytes": 256 * 1024})
    with asking_from("web:flood"):
        runs = [(search(q, config=config).model_dump(), final_state(config, q)) for q in (RELATION_Q, COMPARE_Q)]
    loop = FeedbackLoop(config.orchestration.feedback, fb, knowledge.open_knowledge(config))
    database = fb / "feedback.sqlite3"

    def at_rest() -> int:
        with sqlite3.connect(database) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return sum(p.stat().st_size for p in fb.glob("feedback.sqlite3*"))

    wiki_before, db_before = snapshot(wiki), at_rest()
    with asking_from("web:flood"):
        for n in range(1000):
            result, state = runs[n % 2]
            query = f"{result['query']}（第{n}问）"
            loop.record({**result, "query": query, "rewritten_query": query, "query_id": ""},
                        state.model_copy(update={"query": query, "original_query": query}))
    grown = at_rest() - db_before
    assert snapshot(wiki) == wiki_before                          # no write-back from an anonymous caller
    assert 0 < grown <= bound(config.orchestration.feedback), grown
    records = open_store(fb).log("query_log").records()
    assert len(records) < 1000 and records[-1]["query"].endswith("（第999问）")
    assert not answer_items(loop)


def test_retention_reverts_the_oldest_live_write_backs_beyond_the_cap():
    from lambdarag.orchestration.feedback.retention import live_write_backs

    items = {i: {"id": i, "time": t, "reverted": r} for i, t, r in
             (("c", "2026-01-03", False), ("a", "2026-01-01", False), ("b", "2026-01-02", True),
              ("d", "2026-01-04", False))}
    assert live_write_backs(items, 2) == ["a"] and live_write_backs(items, 3) == [] and \
        live_write_backs(items, 0) == ["a", "c", "d"]


def test_llm_classifications_of_an_untrusted_caller_count_toward_no_rule(tmp_path):
    from lambdarag import State
    from lambdarag.orchestration.config import FeedbackConfig

    loop = FeedbackLoop(FeedbackConfig(min_samples=1), tmp_path)
    query = "琼州海峡定线制"
    result = {"query": query, "rewritten_query": query, "query_type": "temporal", "strategy": "s", "answer": "",
              "latency_ms": {"total": 1.0}, "classification": {"stage": "llm", "type": "temporal"}}
    with asking_from("web:10.0.0.9"):
        assert "rule" not in loop.record(result, State(query=query, original_query=query))
    assert loop.rules.rules() == []
    assert loop.record(result, State(query=query, original_query=query))["rule"]["type"] == "temporal"


def test_logs_are_pruned_by_age_rows_and_bytes_and_agreement_counts_sources_on_both_engines(engine, tmp_path):
    import json

    from lambdarag.orchestration.feedback.retention import prune
    from lambdarag.orchestration.feedback.store import now

    loop = loop_at(tmp_path / "fb", retention={"maxRows": 10, "maxBytes": 4096, "maxDays": 1},
                   votes={"anonymousAgreement": 2})
    for i in range(3):
        loop.log.append({"query_id": f"old{i}", "time": "2020-01-01T00:00:00.000+00:00", "query": "x"})
    for i in range(30):
        loop.log.append({"query_id": f"q{i}", "time": now(), "query": "问" * 100})
    assert loop.store.write(lambda tx: prune(tx, loop.config.retention)) == 33 - len(loop.log)
    kept = loop.log.records()
    assert 0 < len(kept) <= 10 and kept[-1]["query_id"] == "q29" and not any(r["query_id"].startswith("old")
                                                                                for r in kept)
    assert sum(len(json.dumps(r, ensure_ascii=False)) for r in kept) <= 4096

    with asking_from("web:a"):
        assert not loop.asking.teaches("甲问题", ["c1", "c2"], None)
        assert not loop.asking.teaches("甲问题", ["c2", "c1"], None)          # one source, once per window
    with asking_from("web:b"):
        assert not loop.asking.teaches("甲问题", ["c1"], None)                # other evidence: another question
        assert loop.asking.teaches("甲问题？", ["c1", "c2"], None)            # two sources agree: it teaches once
        assert not loop.asking.teaches("甲问题", ["c1", "c2"], None)
