"""EntityGraph: matching, walks, versions, persistence (corruption, concurrent saves), provenance, graph skills."""
from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path

import pytest

from lambdarag import Context, State, User
from lambdarag.skills.store.records import RetrievalPlan
from lambdarag.errors import StoreCorrupt
from lambdarag.skills import build
from lambdarag.skills.store.graph import EntityGraph, EntityRecord, Label, RelationRecord
from lambdarag.domains.corpus import compile_wiki
from tests.conftest import MARITIME
from lambdarag.domains import profile_named

QUESTION = "海上交通安全法与水污染防治法在船舶管理方面有何异同？"
REGULATION = "防治船舶污染海洋环境管理条例"


@pytest.fixture(scope="session")
def maritime_wiki(tmp_path_factory) -> Path:
    wiki = tmp_path_factory.mktemp("maritime_wiki")
    compile_wiki(MARITIME, wiki, progress=False)
    return wiki


@pytest.fixture
def graph(maritime_wiki) -> EntityGraph:
    return EntityGraph.load(maritime_wiki / "relations.json")


def test_find_entities_names_both_laws(graph):
    assert graph.find_entities(QUESTION)[:2] == ["海上交通安全法", "水污染防治法"]


@pytest.mark.parametrize("text, expected", [
    ("《中华人民共和国海商法》第二百一十条", "海商法"),
    ("中华人民共和国海洋环境保护法的适用范围", "海洋环境保护法"),
    ("渔业法实施细则规定了什么", "渔业法实施细则"),   # longest match beats 渔业法
])
def test_find_entities_full_short_quoted_and_longest(graph, text, expected):
    assert graph.find_entities(text)[0] == expected


def test_two_hop_walk_reaches_basis_and_authority(graph):
    walk = graph.walk([REGULATION], max_hops=2, max_nodes=20)
    facts = {(r.head, r.relation, r.tail) for r in walk.relations}
    assert (REGULATION, "依据", "海洋环境保护法") in facts
    assert ("国务院交通运输主管部门", "主管", REGULATION) in facts
    assert len(walk.nodes) <= 20
    assert walk.paths["海洋环境保护法"][0].relation == "依据"


def test_walk_is_bounded_and_says_so(graph):
    walk = graph.walk(["海洋环境保护法"], max_hops=2, max_nodes=5)
    assert len(walk.nodes) == 5 and walk.truncated
    one = graph.walk(["海洋环境保护法"], max_hops=1, max_nodes=1000)
    assert all(len(p) <= 1 for p in one.paths.values())


def test_versions_are_one_entity_newest_current(graph):
    law = graph.entity("中华人民共和国海洋环境保护法")
    assert law.name == "海洋环境保护法" and law.type == "law"
    assert [v.date for v in law.versions] == ["2017-11-04", "2023-10-24"]
    assert law.current == "2023-10-24" and law.versions[-1].current and not law.versions[0].current
    assert law.versions[-1].supersedes == "2017-11-04"
    chain = graph.version_relations("海洋环境保护法")
    assert [(r.head, r.relation, r.tail) for r in chain] == [
        ("海洋环境保护法(2017-11-04)", "新版本", "海洋环境保护法(2023-10-24)")]


def test_issuer_and_shortest_path(graph):
    assert any(r.tail == "国务院" for r in graph.neighbors(REGULATION, "发布机构"))
    path = graph.shortest_path(REGULATION, "海上交通安全法")
    assert len(path) == 2 and path[0].head == "国务院交通运输主管部门"


def test_reverse_lookup(graph):
    based = {r.head for r in graph.incoming("海洋环境保护法", "依据")}
    assert REGULATION in based


def test_corrupt_file_raises_naming_position_and_is_untouched(graph, tmp_path):
    path = tmp_path / "relations.json"
    graph.save(path)
    data = path.read_bytes()
    for cut in (data[: len(data) // 2], data[:-40]):   # inside a character / between characters
        path.write_bytes(cut)
        with pytest.raises(StoreCorrupt, match=r"relations\.json: invalid (UTF-8|JSON) at line \d+, column \d+"):
            EntityGraph.load(path)
    broken = path.read_bytes()
    other = EntityGraph()
    other.add_relation(RelationRecord(head="甲", relation="依据", tail="乙"))
    with pytest.raises(StoreCorrupt):
        other.save(path)
    assert path.read_bytes() == broken


def test_invalid_record_is_reported(tmp_path):
    path = tmp_path / "relations.json"
    path.write_text(json.dumps({"schema": 1, "entities": {}, "relations": [{"head": "甲"}]}), encoding="utf-8")
    with pytest.raises(StoreCorrupt, match=r"relations\.0\.relation"):
        EntityGraph.load(path)
    path.write_text(json.dumps({"schema": 9}), encoding="utf-8")
    with pytest.raises(StoreCorrupt, match="schema"):
        EntityGraph.load(path)


def test_save_is_atomic_and_keeps_backup(tmp_path):
    path = tmp_path / "relations.json"
    g = EntityGraph()
    g.add_relation(RelationRecord(head="甲", relation="依据", tail="乙"))
    g.save(path)
    first = path.read_bytes()
    g.add_relation(RelationRecord(head="甲", relation="引用", tail="丙"))
    g.save()
    assert (tmp_path / "relations.json.bak").read_bytes() == first
    assert len(list(EntityGraph.load(path).records())) == 2
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def _add_and_save(path: str, name: str, barrier) -> None:
    g = EntityGraph.load(path)
    for i in range(20):
        g.add_relation(RelationRecord(head=name, relation="引用", tail=f"{name}{i}"))
    barrier.wait()
    g.save()


def test_concurrent_saves_lose_nothing(tmp_path):
    path = tmp_path / "relations.json"
    base = EntityGraph()
    base.add_relation(RelationRecord(head="基", relation="依据", tail="础"))
    base.save(path)
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_add_and_save, args=(str(path), n, barrier)) for n in ("甲", "乙")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    merged = EntityGraph.load(path)
    heads = sorted(r.head for r in merged.records())
    assert heads.count("甲") == 20 and heads.count("乙") == 20 and heads.count("基") == 1


def test_remove_by_provenance_reverts_exactly(graph, tmp_path):
    before = graph.to_store()
    graph.add_entity(EntityRecord(name="琼州海峡定线制", type="topic", origin="feedback", provenance={"query_id": "q7"}))
    graph.add_relation(RelationRecord(head="海上交通安全法", relation="涉及", tail="琼州海峡定线制",
                                      origin="feedback", provenance={"query_id": "q7"}))
    graph.add_relation(RelationRecord(head="海商法", relation="涉及", tail="船舶", origin="feedback",
                                      provenance={"query_id": "q8"}))
    assert graph.remove_by_provenance(query_id="q7") == 2
    assert graph.remove_by_provenance(query_id="q8") == 2   # the relation and the entity it created
    assert graph.to_store() == before


def test_permission_filters_relations():
    g = EntityGraph()
    g.add_entity(EntityRecord(name="内部规定", sources={"a.md": Label(department="法规处", security_level=1)}))
    g.add_relation(RelationRecord(head="内部规定", relation="依据", tail="海商法", source="a.md",
                                  department="法规处", security_level=1))
    public, staff = User(), User(departments=("法规处",), security_level=1)
    assert g.walk(["海商法"], user=public).relations == ()
    assert len(g.walk(["海商法"], user=staff).relations) == 1
    assert g.find_entities("内部规定的依据", user=public) == []


def test_graph_skills_run_offline(graph):
    ctx = Context(resources={"graph": graph, "profile": profile_named("generic")})
    state = build("entity_extract").run(State.of(QUESTION), ctx)
    assert state.entities[:2] == ("海上交通安全法", "水污染防治法") and "船舶" in "".join(state.entities[2:])
    walked = build("graph_walk").run(State.of(QUESTION, entities=(REGULATION,)), ctx)
    assert any(r.relation == "依据" and r.tail == "海洋环境保护法" for r in walked.relations)
    looked = build("relation_lookup").run(State.of("q", entities=("海洋环境保护法",)), ctx)
    assert any(r.relation == "新版本" for r in looked.relations)
    expanded = build("graph_expand").run(walked.model_copy(update={"plan": RetrievalPlan(expansion_count=2)}), ctx)
    kinds = [v.kind for v in expanded.variants]
    assert kinds == ["original", "expansion"]
    assert expanded.variants[1].text.startswith(QUESTION) and len(expanded.variants[1].text.split(" ")) == 3


def test_graph_skills_print_lambda_forms():
    assert str(build("graph_walk")) == "λq. graph_walk"
    assert build("entity_extract").effect_signature() == "llm"
    assert build("graph_expand").effect_signature() == "pure"
