"""The feedback store, one suite over both engines: SQLite (embedded) and PostgreSQL (a real server, `pg_server`)."""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lambdarag.errors import ConfigError, FeedbackRefused, LambdaRAGError, StoreUnavailable
from lambdarag.orchestration import knowledge
from lambdarag.orchestration.config import DEFAULT_CONFIG, FeedbackConfig, VoteConfig, parse_config
from lambdarag.orchestration.feedback import FeedbackLoop, feedback_dir
from lambdarag.orchestration.feedback.confirmations import Confirmations, vector_key
from lambdarag.orchestration.feedback.store import DSN_ENV, open_store
from lambdarag.orchestration.feedback.store.jsonfiles import export_folder
from lambdarag.orchestration.feedback.store.rows import stored_vectors
from lambdarag.orchestration.feedback.votes import Votes
from lambdarag.orchestration.search_unified import search
from lambdarag.skills.store.learned import LearnedParams

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(params=["sqlite", "postgres"])
def engine(request, monkeypatch):
    """Selects the engine new stores open with; returns its name."""
    if request.param == "postgres":
        monkeypatch.setenv(DSN_ENV, request.getfixturevalue("pg_database"))
    else:
        monkeypatch.delenv(DSN_ENV, raising=False)
    return request.param


def loop_at(folder: Path, **config) -> FeedbackLoop:
    return FeedbackLoop(FeedbackConfig(**config), folder)


def test_the_store_opened_is_the_selected_engine(engine, tmp_path):
    store = open_store(tmp_path / "fb")
    assert repr(store).startswith(f"FeedbackStore({engine}")
    assert (tmp_path / "fb" / "feedback.sqlite3").exists() == (engine == "sqlite")


def test_logs_append_one_row_each_find_by_query_id_and_keep_their_order(engine, tmp_path):
    loop = loop_at(tmp_path)
    for i in range(5):
        loop.log.append({"query_id": f"q{i}", "i": i, "answer": "船舶" * 500})
    loop.gaps.append({"query_id": "q9", "query": "zz"})
    assert [r["i"] for r in loop.log] == list(range(5)) and len(loop.log) == 5 and len(loop.gaps) == 1
    assert loop.log.find("q3")["i"] == 3 and loop.log.find("q9") is None and loop.gaps.find("q9")["query"] == "zz"


def test_tallies_are_added_in_place(engine, tmp_path):
    loop = loop_at(tmp_path, min_samples=2)
    for ok in (True, False, True):
        loop.routing.count("fact", "keyword_search", ok, 10.0, 0.5)
    assert loop.routing.table() == {"fact": {"keyword_search": {"total": 3, "success": 2, "latency_ms": 30.0,
                                                                 "cost": 1.5}}}
    assert loop.lexicon.add({"海员": {"船员": 2, "海员": 1}}, "answers") == 1
    loop.lexicon.add({"海员": {"船员": 1, "水手": 1}}, "answers")
    assert loop.lexicon.terms() == {"海员": {"水手": 1, "船员": 3}} and loop.lexicon.synonyms() == {"海员": ["船员", "水手"]}


def test_rules_keep_their_order_and_an_llm_rule_is_learned_once(engine, tmp_path):
    loop = loop_at(tmp_path, min_samples=2)
    loop.rules.correct("船员条例由哪个部门主管？", "fact", "主管")
    seen = [loop.rules.observe("海事 船舶 比较", {"stage": "llm", "type": "compare"}) for _ in range(3)]
    assert seen[0] is None and seen[1]["type"] == seen[2]["type"] == "compare"       # one new rule per observation
    assert seen[1]["pattern"] != seen[2]["pattern"] and seen[1]["evidence"] == 2
    loop.rules.correct("两者有何异同？", "compare", "异同")
    assert [r["pattern"] for r in loop.rules.rules()] == ["异同", "主管", seen[1]["pattern"], seen[2]["pattern"]]
    loop.rules.correct("主管部门是谁？", "relation", "主管")          # a later correction of a pattern goes first
    assert loop.rules.rules()[0] == {"pattern": "主管", "type": "relation"} and len(loop.rules.rules()) == 4
    assert [e["type"] for e in loop.rules.exemplars()] == ["relation", "compare"]


def test_the_cache_counts_caches_after_n_retires_other_versions_and_keeps_its_size(engine, tmp_path):
    cache = loop_at(tmp_path, cache_after=2, cache_size=2).cache
    assert not cache.remember("问题一", None, {"answer": "a"}, "v1") and cache.get("问题一", None, "v1") is None
    assert cache.remember("问题一？", None, {"answer": "a"}, "v1")          # the same normalised query
    assert cache.get("问题一", None, "v1") == {"answer": "a"} and cache.get("问题一", None, "v2") is None
    for q in ("二", "三", "四"):
        cache.remember(q, None, {"answer": q}, "v2")
        cache.remember(q, None, {"answer": q}, "v2")
    assert sorted(e["result"]["answer"] for e in cache.entries().values()) == ["三", "四"]   # v1 gone, LRU dropped
    assert len(cache) == 2 and len(cache.counts()) == 4


def test_confirmations_revert_and_count_changes_every_server_can_read(engine, tmp_path):
    conf = Confirmations(tmp_path)
    first = conf.add("qrels", [("甲问题", ["c1", "c1", "c2"]), ("  ", ["c3"])])
    answer = conf.add("answer", [("乙问题", ["c4"])], scope="dept|1", query_id="q1")
    assert [p.chunks for p in conf.pairs()] == [("c1", "c2"), ("c4",)] and conf.generation() == 1
    stamp = conf.stamp()
    other = Confirmations(tmp_path)                  # what a second server opening the same store sees
    other.revert(first["id"])
    assert conf.stamp() != stamp and [p.query for p in conf.pairs()] == ["乙问题"] and conf.generation() == 2
    with pytest.raises(LambdaRAGError, match="already reverted"):
        conf.revert(first["id"])
    with pytest.raises(LambdaRAGError, match="no confirmation 'nope'"):
        conf.revert("nope")
    assert answer["id"] in conf and conf.items()[answer["id"]]["scope"] == "dept|1"
    conf.save_params(LearnedParams(gate=0.5, tail={"prior": 1.0}), {"fitted": True})
    assert other.params() == LearnedParams(gate=0.5, tail={"prior": 1.0}) and conf.generation() == 3


class CountingEmbedder:
    """A deterministic embedder that counts the texts it embedded (the store must not re-embed)."""

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed(self, texts, kind):
        self.embedded += texts
        return [np.array([len(t), sum(map(ord, t)) % 97, 1.0], dtype=np.float32) for t in texts]


def test_question_vectors_are_rows_embedded_once(engine, tmp_path):
    conf, embedder = Confirmations(tmp_path), CountingEmbedder()
    first = conf.vectors(embedder, ["甲", "乙乙"])
    again = Confirmations(tmp_path).vectors(embedder, ["乙乙", "丙", "甲"])
    assert embedder.embedded == ["甲", "乙乙", "丙"]
    assert np.array_equal(first[1], again[0]) and np.array_equal(first[0], again[2]) and again.dtype == np.float32


def test_a_vote_another_server_applied_meanwhile_is_not_applied_twice(engine, tmp_path):
    loop = loop_at(tmp_path)
    vote = {"id": "vote-1", "query_id": "q1", "question": "甲问题", "chunk": "c1", "verdict": "confirm",
            "source": "web:1", "user": "u", "scope": "|0", "trusted": False, "time": "t", "status": "pending",
            "confirmation": None}
    loop.store.write(lambda tx: tx.put_item("vote", vote["id"], vote, "pending"))
    other = Votes(open_store(tmp_path), VoteConfig(), Confirmations(tmp_path))     # a second server's view
    assert other.approve("vote-1")["status"] == "applied"
    with pytest.raises(FeedbackRefused, match="vote 'vote-1' is no longer pending"):
        loop.votes.apply([vote], by="operator")                    # the copy this server read before
    assert len(loop.confirmations.items()) == 1 and loop.votes.pending() == []


def test_an_agreement_two_requests_apply_at_once_is_applied_once_and_answered_as_applied(engine, tmp_path):
    loop = loop_at(tmp_path)
    votes = [{"id": f"vote-{n}", "query_id": f"q{n}", "question": "甲问题", "chunk": "c1", "verdict": "confirm",
              "source": f"web:{n}", "user": "-", "scope": "|0", "trusted": False, "time": f"t{n}",
              "status": "pending", "confirmation": None} for n in (1, 2)]
    for v in votes:
        loop.store.write(lambda tx, v=v: tx.put_item("vote", v["id"], v, "pending"))
    first = loop.votes.apply(votes, by="agreement")                 # one request applies both
    second = Votes(open_store(tmp_path), VoteConfig(), Confirmations(tmp_path)).apply(votes, by="agreement")
    assert {v["status"] for v in [*first.values(), *second.values()]} == {"applied"}
    assert second["vote-2"]["confirmation"] == first["vote-1"]["confirmation"]
    assert len(loop.confirmations.items()) == 1


def test_namespaces_keep_two_feedback_folders_apart(engine, tmp_path):
    a, b = loop_at(tmp_path / "a"), loop_at(tmp_path / "b")
    a.log.append({"query_id": "q1"})
    a.confirmations.add("qrels", [("问题", ["c1"])])
    assert len(b.log) == 0 and b.confirmations.items() == {} and len(a.log) == 1


def hammer(folder: str, worker: int, rounds: int) -> None:
    """One process's share of concurrent writes (run under spawn: its own connections)."""
    loop = loop_at(Path(folder), cache_after=1, cache_size=5)
    for i in range(rounds):
        loop.log.append({"query_id": f"w{worker}-{i}", "worker": worker, "i": i})
        loop.routing.count("fact", "keyword_search", i % 2 == 0, 1.0, 0.0)
        loop.lexicon.add({"海员": {"船员": 1}, "船东": {"船舶所有人": 1}}, "test")
        loop.cache.remember(f"问题{worker}-{i}", None, {"answer": i}, "v")
        loop.confirmations.add("answer", [(f"问题{worker}-{i}", [f"c{i}"])], query_id=f"w{worker}-{i}")


def test_processes_writing_at_once_lose_nothing(engine, tmp_path):
    workers, rounds = 4, 20
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=hammer, args=(str(tmp_path), w, rounds)) for w in range(workers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(180)
    assert [p.exitcode for p in procs] == [0] * workers
    loop = loop_at(tmp_path)
    assert sorted((r["worker"], r["i"]) for r in loop.log) == [(w, i) for w in range(workers) for i in range(rounds)]
    assert loop.routing.table()["fact"]["keyword_search"]["total"] == workers * rounds
    assert loop.lexicon.terms() == {"海员": {"船员": workers * rounds}, "船东": {"船舶所有人": workers * rounds}}
    assert len(loop.confirmations.pairs()) == workers * rounds and len(loop.cache) == 5


WRITER = """
import sys
from pathlib import Path
from lambdarag.orchestration.config import FeedbackConfig
from lambdarag.orchestration.feedback import FeedbackLoop
loop = FeedbackLoop(FeedbackConfig(), Path(sys.argv[1]))
for i in range(100000):
    loop.log.append({"query_id": f"k{i}", "answer": "船舶" * 300})
    loop.confirmations.add("confirm", [(f"问题{i}", ["c1"])], query_id=f"k{i}")
    print(i, flush=True)          # acknowledged: both transactions committed
"""


def test_a_writer_killed_mid_write_loses_nothing_it_acknowledged(engine, tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    acknowledged = [int(proc.stdout.readline()) for _ in range(30)]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    acknowledged += [int(line) for line in proc.stdout.read().split()]
    loop = loop_at(tmp_path)
    logged = {r["query_id"] for r in loop.log}
    confirmed = {i["query_id"] for i in loop.confirmations.items().values()}
    assert {f"k{i}" for i in acknowledged} <= logged and {f"k{i}" for i in acknowledged} <= confirmed
    loop.log.append({"query_id": "after"})                  # the store is writable after the kill
    assert loop.log.find("after") is not None


def test_export_writes_the_old_files_and_importing_them_restores_the_state(engine, tmp_path):
    loop = loop_at(tmp_path / "a", min_samples=1, cache_after=1)
    loop.log.append({"query_id": "q1", "answer": "甲"})
    loop.log.append({"query_id": "q2", "answer": "乙"})
    loop.routing.count("fact", "keyword_search", True, 3.0, 0.0)
    loop.lexicon.add({"海员": {"船员": 2}}, "answers")
    loop.rules.correct("主管部门？", "relation", "主管")
    loop.rules.observe("船舶 比较", {"stage": "llm", "type": "compare"})
    loop.cache.remember("问题", None, {"answer": "甲"}, "v")
    item = loop.confirmations.add("qrels", [("问题", ["c1"])])
    loop.confirmations.revert(item["id"])
    loop.confirmations.add("confirm", [("问题二", ["c2"])])
    loop.confirmations.vectors(CountingEmbedder(), ["问题二"])
    exported = export_folder(loop.store, tmp_path / "export")
    assert {p.name for p in exported} >= {"query_log.jsonl", "confirmations.json", "question_vectors.npz"}
    assert [json.loads(x)["query_id"] for x in (tmp_path / "export" / "query_log.jsonl").read_text().splitlines()] \
        == ["q1", "q2"]
    copy = loop_at(tmp_path / "export")                   # the first open imports the exported files
    again = export_folder(copy.store, tmp_path / "again")
    assert {p.name: p.read_bytes() for p in exported} == {p.name: p.read_bytes() for p in again}
    assert copy.confirmations.pairs() == loop.confirmations.pairs() and copy.rules.rules() == loop.rules.rules()
    assert copy.confirmations.generation() == loop.confirmations.generation()


def test_an_unreachable_postgres_is_a_named_error_that_does_not_echo_the_dsn(tmp_path, monkeypatch):
    monkeypatch.setenv(DSN_ENV, f"host={tmp_path} dbname=x user=y password=s3cret")
    with pytest.raises(StoreUnavailable, match="feedback store postgres: cannot connect") as e:
        open_store(tmp_path / "fb")
    assert "s3cret" not in str(e.value)


def test_a_new_sqlite_store_opens_while_another_process_is_writing_to_the_file(tmp_path):
    """SQLite refuses the switch to WAL at once, without its busy wait, while another connection writes in
    rollback mode: two processes opening a new store together failed with "database is locked"."""
    import sqlite3
    import threading

    path = tmp_path / "fb" / "feedback.sqlite3"
    path.parent.mkdir()
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("CREATE TABLE elsewhere (x)")
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO elsewhere VALUES (1)")
    release = threading.Timer(0.3, lambda: other.execute("COMMIT"))
    release.start()
    try:
        loop = FeedbackLoop(FeedbackConfig(), path.parent)
    finally:
        release.join()
    loop.log.append({"q": "after the other writer"})
    assert [r["q"] for r in loop.log.records()] == ["after the other writer"]
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_the_config_selects_postgres_only_with_a_dsn():
    with pytest.raises(ConfigError, match="kind postgres needs a dsn"):
        parse_config("orchestration:\n  feedback:\n    store: {kind: postgres}\n")
    with pytest.raises(ConfigError, match="dsn is for kind postgres"):
        parse_config("orchestration:\n  feedback:\n    store: {kind: sqlite, dsn: x}\n")
    store = parse_config("orchestration:\n  feedback:\n    store: {kind: postgres, dsn: 'host=/x'}\n"
                         ).orchestration.feedback.store
    assert (store.kind, store.dsn) == ("postgres", "host=/x")


SEARCH_TRANSACTIONS = 13
"""Store transactions one feedback-on search may run on the demo index: its reads (the write-back change counter
other servers' write-backs are replayed from, synonyms, learned-index stamp, classification rules, cache version and
lookup, routing table), its recording (the log line with what it taught,
the write-back journal, the cache version and count) and, after a confirmation, the learned index's rebuild
(pairs, vectors, params). Each is a round trip or three on PostgreSQL; a new read on the search path belongs in
one of these, not beside them."""


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory):
    """A data home whose demo index (dense and BM25) the module's first search builds."""
    return tmp_path_factory.mktemp("home")


def test_feedback_on_searches_reuse_the_connections_set_up_once_and_stay_within_their_transactions(
        engine, demo_home, monkeypatch):
    monkeypatch.setenv("LAMBDARAG_HOME", str(demo_home))
    monkeypatch.setenv("LAMBDARAG_FEEDBACK", "on")
    shutil.rmtree(feedback_dir("demo"), ignore_errors=True)
    knowledge.forget()
    config = parse_config(DEFAULT_CONFIG.read_text(encoding="utf-8"))
    questions = ["船长有什么权力？", "船员条例由哪个部门主管？",
                 "海上交通安全法与水污染防治法在船舶管理方面有何异同？"]
    try:
        search(questions[0], config=config)                       # builds the index, opens and sets up the store
        store = open_store(feedback_dir("demo"))
        assert store.engine.name == engine
        pool, setups = store.engine.pool, store.engine.setups
        connects, transactions = pool.connects, pool.transactions
        for i in range(6):     # each search runs in a thread of its own: a connection per thread reconnected
            search(f"{questions[i % 3]}（第{i}问）", config=config)
            ran, transactions = pool.transactions - transactions, pool.transactions
            assert ran <= SEARCH_TRANSACTIONS, f"search {i} ran {ran} store transactions"
        assert (pool.connects, store.engine.setups) == (connects, setups)
        answered = [i for i in Confirmations(store).items().values() if i["origin"] == "answer"]
        assert len(answered) >= 2
        asked = [p["query"] for i in answered for p in i["pairs"]]
        assert len(stored_vectors(store, [vector_key(q) for q in asked])) == len(set(asked))  # the search's own
    finally:
        knowledge.forget()


def test_a_new_namespace_opens_while_another_holds_a_write_open(pg_database, monkeypatch, tmp_path):
    """Setting up a namespace on a schema that exists runs no DDL: `CREATE INDEX IF NOT EXISTS` would wait for a
    share lock behind every open writer of that table, and deadlocked two servers starting in CI (stop 58)."""
    import threading

    import psycopg

    monkeypatch.setenv(DSN_ENV, pg_database)
    loop_at(tmp_path / "a").log.append({"query_id": "q0"})
    with psycopg.connect(pg_database) as writer:                  # one transaction left open on `logs`
        writer.execute("INSERT INTO logs (ns, log, key, time, record) VALUES ('x', 'log', 'k', 't', '{}')")
        opened = threading.Thread(target=lambda: loop_at(tmp_path / "b").log.append({"query_id": "q1"}),
                                  daemon=True)
        opened.start()
        opened.join(60)
        assert not opened.is_alive(), "opening a second namespace waited for another server's open transaction"
    assert len(loop_at(tmp_path / "b").log) == 1
