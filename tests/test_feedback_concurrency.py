"""Several processes (spawned) learning at once through one SQLite store: no lost record or count."""
from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import pytest

from lambdarag.orchestration.config import DEMO_DOCS, FeedbackConfig
from lambdarag.orchestration.feedback import FeedbackLoop
from lambdarag.orchestration.feedback.store import open_store
from lambdarag.domains.corpus import compile_wiki

WORKERS, ROUNDS = 4, 25


def hammer(directory: str, worker: int) -> None:
    """One process's share: log lines, cache entries, routing counts and synonym evidence."""
    loop = FeedbackLoop(FeedbackConfig(cache_after=1, cache_size=10), Path(directory))
    for i in range(ROUNDS):
        loop.log.append({"worker": worker, "i": i, "answer": "船舶" * 2000})   # long lines would tear if interleaved
        loop.cache.remember(f"问题{worker}-{i}", None, {"answer": f"{worker}-{i}"}, version="v")
        loop.routing.count("fact", "keyword_search", i % 2 == 0, 10.0, 0.001)
        loop.lexicon.add({"海员": {"船员": 1}}, "test")


def test_processes_hammering_the_stores_lose_nothing(tmp_path):
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=hammer, args=(str(tmp_path), w)) for w in range(WORKERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * WORKERS
    loop = FeedbackLoop(FeedbackConfig(cache_size=10), tmp_path)
    records = loop.log.records()
    assert sorted((r["worker"], r["i"]) for r in records) == [(w, i) for w in range(WORKERS) for i in range(ROUNDS)]
    assert all(r["answer"] == "船舶" * 2000 for r in records)
    route = loop.routing.table()["fact"]["keyword_search"]
    assert (route["total"], route["success"]) == (WORKERS * ROUNDS, WORKERS * ((ROUNDS + 1) // 2))
    assert loop.lexicon.terms()["海员"]["船员"] == WORKERS * ROUNDS
    assert len(loop.cache.entries()) == 10 and len(loop.cache.counts()) == WORKERS * ROUNDS


QUESTIONS = ["船员条例由哪个部门主管？", "海上交通安全法与水污染防治法在船舶管理方面有何异同？", "梳理船员管理法规体系",
             "船长在保障海上生命安全和防治船舶污染方面有什么权力？"]


def ask_all(config_path: str, worker: int) -> None:
    from lambdarag.orchestration.search_unified import search

    for q in QUESTIONS[worker % 2:] + QUESTIONS[:worker % 2]:
        search(q, config=config_path)


@pytest.mark.slow
def test_processes_searching_and_learning_at_once_keep_every_store_valid(tmp_path, monkeypatch):
    import yaml

    from lambdarag.orchestration.config import DEFAULT_CONFIG
    from lambdarag.orchestration.feedback import feedback_dir
    from lambdarag.skills.store.graph import EntityGraph

    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LAMBDARAG_FEEDBACK", "on")
    wiki = tmp_path / "wiki"
    compile_wiki(DEMO_DOCS, wiki)
    data = yaml.safe_load(DEFAULT_CONFIG.read_text(encoding="utf-8"))
    data["retrieval"]["skills"]["embedding"]["enabled"] = False
    data["retrieval"]["skills"]["wiki"]["dir"] = str(wiki)
    data["orchestration"]["feedback"]["cacheAfter"] = 1
    config = tmp_path / "agent-config.yml"
    config.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    ask_all(str(config), 0)                  # builds the index once, before the crowd arrives
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=ask_all, args=(str(config), w)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(600)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    fb = feedback_dir("demo")
    assert len(open_store(fb).log("query_log")) == 4 * len(QUESTIONS)
    EntityGraph.load(wiki / "relations.json")
    assert FeedbackLoop(FeedbackConfig(), fb).journal.items()
