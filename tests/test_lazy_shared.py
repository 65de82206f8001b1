"""Structures built on first use and shared by concurrent branches or requests: built once, under a lock,
never seen half-built, a failed build not remembered; and a fault in the code is reported as one, not as
the user's error (the entity-graph race of the trust issue: `KeyError: '船长'`, exit 2, HTTP 500 until restart)."""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import httpx
import networkx as nx
import pytest
from fastapi.testclient import TestClient

from lambdarag import Context, Par, Tool, run
from lambdarag.errors import BranchError, LambdaRAGError, TermError
from lambdarag.orchestration.cli import main
from lambdarag.skills.store import graph as graph_module
from lambdarag.skills.store import wiki as wiki_module
from lambdarag.skills.store.graph import EntityGraph
from lambdarag.skills.store.wiki import WikiStore
from lambdarag.domains.corpus import compile_wiki
from tests.conftest import MARITIME, serve_process

READERS = 8


@pytest.fixture(scope="module")
def maritime_wiki(tmp_path_factory) -> Path:
    wiki = tmp_path_factory.mktemp("maritime_wiki")
    compile_wiki(MARITIME, wiki, progress=False)
    return wiki


def concurrently(fn, n: int = READERS) -> list:
    """Returns what `fn()` returned (or raised) in each of `n` threads released at once."""
    barrier, out, lock = threading.Barrier(n), [], threading.Lock()

    def go():
        barrier.wait()
        try:
            value = fn()
        except Exception as e:  # collected, asserted on below
            value = e
        with lock:
            out.append(value)

    threads = [threading.Thread(target=go) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


@pytest.fixture
def slow_build(monkeypatch):
    """Widens the window in which a graph is being filled, so a reader that does not wait would see it."""
    add_node = nx.MultiDiGraph.add_node

    def slow(self, *args, **kwargs):
        time.sleep(0.0002)
        return add_node(self, *args, **kwargs)

    monkeypatch.setattr(nx.MultiDiGraph, "add_node", slow)


def test_concurrent_first_readers_all_see_the_whole_graph(maritime_wiki, slow_build):
    whole = EntityGraph.load(maritime_wiki / "relations.json")
    nodes, names = len(whole.g), len(whole._names)
    entity = next(iter(whole.g.nodes))
    for _ in range(3):
        graph = EntityGraph.load(maritime_wiki / "relations.json")
        seen = concurrently(lambda: (len(graph.g), graph.resolve(entity), len(graph._names)))
        assert seen == [(nodes, entity, names)] * READERS
        assert len(graph.g) == nodes


def test_a_failed_graph_build_is_not_remembered(maritime_wiki, monkeypatch):
    graph = EntityGraph.load(maritime_wiki / "relations.json")
    put = graph_module.put_entity
    calls = {"n": 0}

    def flaky(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError("disk hiccup")
        return put(*args, **kwargs)

    monkeypatch.setattr(graph_module, "put_entity", flaky)
    with pytest.raises(OSError):
        graph.g
    monkeypatch.setattr(graph_module, "put_entity", put)
    assert len(graph.g) == len(EntityGraph.load(maritime_wiki / "relations.json").g) > 0


def test_concurrent_first_wiki_readers_all_see_every_page(maritime_wiki, monkeypatch):
    pages = WikiStore(maritime_wiki).pages()
    entity = next(iter(pages))
    loads = json.loads

    def slow(*args, **kwargs):
        time.sleep(0.0005)
        return loads(*args, **kwargs)

    monkeypatch.setattr(wiki_module.json, "loads", slow)
    wiki = WikiStore(maritime_wiki)
    seen = concurrently(lambda: (len(wiki.pages()), bool(wiki.read(entity)), len(wiki.search(entity, k=1))))
    assert seen == [(len(pages), True, 1)] * READERS


def boom(state):
    raise KeyError("船长")


def named(state):
    raise LambdaRAGError("named failure")


def test_an_unexpected_exception_is_an_internal_fault_and_a_named_error_is_not():
    faulty = Tool("faulty", boom, reads=[], writes=["answer"], effect="pure")
    with pytest.raises(TermError) as caught:
        run(faulty, "q", Context())
    assert caught.value.internal and "KeyError" in str(caught.value)
    fine = Tool("fine", lambda s: {"hits": ()}, reads=[], writes=["hits"], effect="pure")
    with pytest.raises(BranchError) as caught:
        run(Par(fine, faulty), "q", Context())
    assert caught.value.internal
    with pytest.raises(LambdaRAGError) as caught:
        run(Tool("named", named, reads=[], writes=["answer"], effect="pure"), "q", Context())
    assert not getattr(caught.value, "internal", False)


def test_the_cli_reports_an_internal_fault_with_exit_3_in_one_line(monkeypatch, capsys):
    monkeypatch.setattr(EntityGraph, "walk", lambda self, *a, **k: boom(None))
    monkeypatch.setattr(EntityGraph, "find_entities", lambda self, *a, **k: boom(None))
    code = main(["ask", "梳理船员管理法规体系"])          # a survey: its route walks the graph
    err = capsys.readouterr().err
    assert code == 3, err
    last = err.strip().splitlines()[-1]      # earlier lines: building the demo index on first use
    assert "internal error" in last and "KeyError" in last and "Traceback" not in err


def test_the_server_answers_a_fault_with_500_for_that_request_alone(monkeypatch):
    from lambdarag.qademo.app import create_app

    client = TestClient(create_app(), raise_server_exceptions=False)
    question = {"query": "船员条例由哪个部门主管？"}
    assert client.post("/api/search", json=question).status_code == 200
    find = EntityGraph.find_entities
    monkeypatch.setattr(EntityGraph, "find_entities", lambda self, *a, **k: boom(None))
    failed = client.post("/api/search", json=question)
    assert failed.status_code == 500 and "Traceback" not in failed.text
    monkeypatch.setattr(EntityGraph, "find_entities", find)
    assert client.post("/api/search", json=question).status_code == 200


GRAPH_QUESTIONS = ("船长的权力有哪些？", "船员条例由哪个部门主管？", "梳理船员管理法规体系",
                   "海上交通安全法与水污染防治法在船舶管理方面有何异同？", "船长有什么权力？")


def test_a_fresh_server_answers_concurrent_graph_questions_without_a_failure():
    with serve_process() as url:
        def client():
            with httpx.Client(timeout=120) as http:
                return [http.post(f"{url}/api/search", json={"query": q}).status_code for q in GRAPH_QUESTIONS]

        statuses = [code for codes in concurrently(client) for code in codes]
    assert statuses == [200] * (READERS * len(GRAPH_QUESTIONS))
