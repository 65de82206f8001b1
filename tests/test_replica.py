"""Replaying the feedback store's write-backs onto a knowledge base (`orchestration.feedback.replica`), on SQLite and
PostgreSQL: rows another server stored are applied under the access labels this index gives their sources, and a
hostile row (malformed, or claiming what a write-back may not) is refused without stopping the reader."""
from __future__ import annotations

import copy
import json

import pytest
import yaml

from lambdarag import User
from lambdarag.orchestration import knowledge
from lambdarag.orchestration.config import DEFAULT_CONFIG, DEMO_DOCS, parse_config
from lambdarag.orchestration.feedback import open_feedback
from lambdarag.orchestration.feedback.replica import Replica
from lambdarag.orchestration.feedback.store import DSN_ENV
from lambdarag.orchestration.feedback.store.rows import CHANGES, WRITEBACK, put_writeback
from lambdarag.orchestration.search_unified import search
from lambdarag.skills.store.access import HIDDEN
from lambdarag.skills.store.wiki import learned_change
from lambdarag.domains.corpus import compile_wiki

PUBLIC_DOC = "船员条例(2023-07-20).md"
RESTRICTED_DOC = "船员适任证书核查内部指引(2024-05-10).md"      # 船员管理处, level 2
CLERK = User(id="clerk", departments=("船员管理处",), security_level=2)


@pytest.fixture(params=["sqlite", "postgres"])
def learning(request, tmp_path_factory, tmp_path, monkeypatch):
    """Returns (config, knowledge base, feedback loop) of a BM25-only demo index with its wiki in a temporary folder,
    learning on, its store of the selected engine."""
    if request.param == "postgres":
        monkeypatch.setenv(DSN_ENV, request.getfixturevalue("pg_database"))
    else:
        monkeypatch.delenv(DSN_ENV, raising=False)
    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path_factory.mktemp("home")))
    monkeypatch.setenv("LAMBDARAG_FEEDBACK", "on")
    compile_wiki(DEMO_DOCS, tmp_path / "wiki", progress=False)
    data = copy.deepcopy(yaml.safe_load(DEFAULT_CONFIG.read_text(encoding="utf-8")))
    data["retrieval"]["skills"]["embedding"]["enabled"] = False
    data["retrieval"]["skills"]["wiki"]["dir"] = str(tmp_path / "wiki")
    config = parse_config(yaml.safe_dump(data, allow_unicode=True))
    knowledge.forget()
    kb = knowledge.open_knowledge(config)
    yield config, kb, open_feedback(config, kb)
    knowledge.forget()


def relation(item_id: str, head: str, source: str = PUBLIC_DOC, **fields) -> dict:
    """Returns a relation record as a write-back `item_id` stores it (public source, rule extractor's confidence)."""
    return {"head": head, "relation": "主管", "tail": "船员条例", "source": source, "section": "第三条",
            "origin": "feedback", "confidence": 0.6, "provenance": {"query_id": item_id}, **fields}


def item(item_id: str, relations=(), entity_records=(), **fields) -> dict:
    return {"id": item_id, "query": "q", "time": "2026-01-01T00:00:00+00:00", "sources": [PUBLIC_DOC],
            "entities": [e["name"] for e in entity_records], "relations": list(relations),
            "entity_records": list(entity_records), "analysis": None, "reverted": False, **fields}


def store_rows(loop, rows: list) -> None:
    """Stores write-back rows as another server would, each as the next change (a str is stored as its raw body)."""
    def write(tx):
        for row in rows:
            number = tx.bump(CHANGES)
            if isinstance(row, str):
                tx.run("INSERT INTO items (ns, kind, id, pos, state, body) VALUES (?, ?, ?, ?, ?, ?)", tx.ns,
                       WRITEBACK, f"q-raw{number}", number, "live", row)
            else:
                put_writeback(tx, row, number)
    loop.store.write(write)


def test_rows_another_server_stored_are_replayed_into_graph_pages_and_folder_under_their_labels(learning):
    config, kb, loop = learning
    secret = dict(relation("q-secret", "核查专班", RESTRICTED_DOC), department="船员管理处", security_level=2)
    store_rows(loop, [item("q-public", [relation("q-public", "甲海事机构")]), item("q-secret", [secret])])
    assert kb.graph.neighbors("甲海事机构") == []
    open_feedback(config, kb)                                     # a question opening the loop replays them
    assert [r.tail for r in kb.graph.neighbors("甲海事机构")] == ["船员条例"]
    assert kb.graph.neighbors("核查专班") == [] and [r.tail for r in kb.graph.neighbors("核查专班", user=CLERK)] \
        == ["船员条例"]                                          # the restricted fact shows to its department only
    assert "[[甲海事机构]]" in kb.wiki.read("船员条例").text
    assert "核查专班" not in kb.wiki.read("船员条例").text and "核查专班" in kb.wiki.read("船员条例", CLERK).text
    assert "[[甲海事机构]]" in (kb.wiki_dir / "entities" / "船员条例.md").read_text(encoding="utf-8")
    assert learned_change(kb.wiki_dir) == Replica.of(kb).change > 0
    store_rows(loop, [{**item("q-public"), "reverted": True}])
    open_feedback(config, kb)
    assert kb.graph.neighbors("甲海事机构") == [] and "甲海事机构" not in kb.wiki.read("船员条例").text
    knowledge.forget()                                            # a process opening the folder now replays nothing
    reopened = knowledge.open_knowledge(config)
    assert reopened.learned == learned_change(kb.wiki_dir) and reopened.graph.neighbors("甲海事机构") == []


def test_a_hostile_row_is_refused_and_the_reader_goes_on(learning):
    config, kb, loop = learning
    hostile = [
        "{torn",                                                                   # not JSON
        json.dumps(["a", "list"]),                                                 # not an item
        item("q-public-claim", [relation("q-public-claim", "乙机构", RESTRICTED_DOC)]),   # a public label on a secret
        item("q-compiled-claim", [relation("q-compiled-claim", "丙机构", origin="rule", confidence=1.0)]),
        item("q-other-id", [relation("q-someone-else", "丁机构")]),               # provenance of another write-back
        item("q-unknown-doc", [relation("q-unknown-doc", "戊机构", "不存在的文件.md")]),
        item("q-wiki-source", [relation("q-wiki-source", "己机构", "entities/船员条例.md")]),
        item("q-typed", [{**relation("q-typed", "庚机构"), "security_level": "top"}]),
        item("q-path", analysis="../../../../tmp/owned.md", analysis_text="x"),
        item("q-entity", entity_records=[{"name": "辛机构", "origin": "feedback", "provenance": {"query_id": "q-entity"},
                                          "sources": {RESTRICTED_DOC: {"security_level": 0}}}]),
    ]
    good = item("q-good", [relation("q-good", "壬海事机构")])
    hidden = item("q-hidden", [dict(relation("q-hidden", "癸机构", RESTRICTED_DOC), **HIDDEN.model_dump())])
    store_rows(loop, [*hostile, good, hidden])
    open_feedback(config, kb)
    refused = Replica.of(kb).refused
    assert set(refused) == {"q-raw1", "q-raw2", "q-public-claim", "q-compiled-claim", "q-other-id", "q-unknown-doc",
                            "q-wiki-source", "q-typed", "q-path", "q-entity"}, refused
    assert "claims label" in refused["q-public-claim"] and "not JSON" in refused["q-raw1"]
    for name in ("乙机构", "丙机构", "丁机构", "戊机构", "己机构", "庚机构", "辛机构"):
        assert kb.graph.resolve(name) is None or not kb.graph.neighbors(name, user=CLERK), name
    assert [r.tail for r in kb.graph.neighbors("壬海事机构")] == ["船员条例"]     # the rows after them still apply
    assert kb.graph.neighbors("癸机构", user=CLERK) == []                          # hidden is stricter: kept, unseen
    r = search("船员条例由哪个部门主管？", config=config)                          # answering and recording go on
    assert r.answer and r.query_id
    assert set(loop.journal.items()) >= {"q-good", "q-hidden"} and "q-raw1" not in loop.journal.items()
    assert loop.stats()["learned_items"] >= 2
