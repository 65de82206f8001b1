"""Wiki compile (incremental, LLM merge, time normalisation), WikiStore reading and permissions, rule extraction."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lambdarag import Context, State, User
from lambdarag.providers.llm import OpenAIChat
from lambdarag.skills import build
from lambdarag.domains.prc_statutes.extract import extract_relations, normalise_time
from lambdarag.skills.store.graph import EntityGraph
from lambdarag.skills.store.wiki import WikiStore
from lambdarag.domains.corpus import compile_wiki
from tests.conftest import MARITIME
from tests.scripted_server import Reply

REGULATION = "行政法规/防治船舶污染海洋环境管理条例(2018-03-09).md"
LAW = "行政法/海洋环境保护法(2023-10-24).md"
OTHER = "行政法/海上交通安全法(2021-04-29).md"


def small_corpus(root: Path, *sources: str) -> Path:
    for s in sources:
        (root / s).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(MARITIME / s, root / s)
    return root


def facts(graph: EntityGraph) -> set[str]:
    return {r.key() for r in graph.records()}


def test_rules_on_the_regulation():
    found = {(r.head, r.relation, r.tail) for r in extract_relations((MARITIME / REGULATION).read_text(), source=REGULATION)}
    assert ("防治船舶污染海洋环境管理条例", "依据", "海洋环境保护法") in found
    assert ("防治船舶污染海洋环境管理条例", "发布机构", "国务院") in found
    assert ("国务院交通运输主管部门", "主管", "防治船舶污染海洋环境管理条例") in found
    assert ("防治船舶污染海洋环境管理条例", "涉及", "船舶污染物的排放和接收") in found
    assert ("防治船舶污染海洋环境管理条例", "引用", "海商法") in found


@pytest.mark.parametrize("text, expected", [
    ("本规定自发布之日起施行", "本规定自2017年8月31日起施行"),
    ("去年修订", "2016年修订"),
    ("近年来船舶增多", "2014年至2017年船舶增多"),
    ("现行有效", "截至2017年8月31日现行有效"),
])
def test_normalise_time(text, expected):
    assert normalise_time(text, "2017-08-31") == expected


def test_recompile_is_incremental_and_noop_when_unchanged(tmp_path):
    corpus = small_corpus(tmp_path / "docs", REGULATION, LAW, OTHER)
    wiki = tmp_path / "wiki"
    first = compile_wiki(corpus, wiki, progress=False)
    assert len(first.added) == 3 and first.pages_written > 0
    before = facts(EntityGraph.load(wiki / "relations.json"))
    stamps = {p: p.stat().st_mtime_ns for p in wiki.rglob("*") if p.is_file()}
    again = compile_wiki(corpus, wiki, progress=False)
    assert again.noop and again.pages_written == 0
    assert {p: p.stat().st_mtime_ns for p in wiki.rglob("*") if p.is_file()} == stamps

    (corpus / OTHER).unlink()
    removed = compile_wiki(corpus, wiki, progress=False)
    assert removed.removed == [OTHER] and not removed.added and not removed.changed
    after = EntityGraph.load(wiki / "relations.json")
    assert {k for k in before if OTHER not in k} == facts(after)
    assert "海上交通安全法" not in after and not (wiki / "entities" / "海上交通安全法.md").exists()

    small_corpus(corpus, OTHER)
    back = compile_wiki(corpus, wiki, progress=False)
    assert back.added == [OTHER]
    assert facts(EntityGraph.load(wiki / "relations.json")) == before


def test_llm_relations_merge_with_rules_and_dates_are_absolute(tmp_path, llm_server):
    corpus = small_corpus(tmp_path / "docs", REGULATION, LAW)
    reply = {"entities": [{"name": "船舶油污损害赔偿基金", "type": "topic"}],
             "relations": [{"head": "防治船舶污染海洋环境管理条例", "relation": "规定", "tail": "船舶油污损害赔偿基金",
                            "description": "去年设立的基金，本条例自发布之日起施行", "section": "第五十六条"}]}
    llm_server.script.script(Reply(status=500), Reply(text=json.dumps(reply, ensure_ascii=False)))
    report = compile_wiki(corpus, tmp_path / "wiki", llm=OpenAIChat(llm_server.url, "m", timeout=5), progress=False)
    assert len(report.llm_failures) == 1 and LAW in report.llm_failures[0]       # sorted: 行政法/ before 行政法规/
    graph = EntityGraph.load(tmp_path / "wiki" / "relations.json")
    learned = [r for r in graph.records() if r.origin == "llm"]
    assert len(learned) == 1 and learned[0].source == REGULATION
    assert learned[0].description == "2017年设立的基金，本条例自2018年3月9日起施行"
    assert any(r.origin == "rule" and r.relation == "依据" for r in graph.records())
    prompt = llm_server.script.requests[-1]["body"]["messages"][0]["content"]
    assert "文件发布日期：2018-03-09" in prompt


def test_wiki_store_reads_by_alias_and_bm25(tmp_path):
    corpus = small_corpus(tmp_path / "docs", REGULATION, LAW, OTHER)
    compile_wiki(corpus, tmp_path / "wiki", progress=False)
    store = WikiStore(tmp_path / "wiki")
    page = store.read("《中华人民共和国海洋环境保护法》")
    assert page.entity == "海洋环境保护法" and "（现行）" in page.text and page.path == "entities/海洋环境保护法.md"
    top = [p.entity for p in store.search("海上交通安全 主管部门", k=3)]
    assert "海上交通安全法" in top and "海洋环境保护法" not in top


def test_pages_from_unreadable_documents_are_hidden(tmp_path):
    corpus = small_corpus(tmp_path / "docs", LAW)
    secret = corpus / "内部" / "船舶检查内部规定(2020-01-01).md"
    secret.parent.mkdir()
    secret.write_text("---\ndepartment: 法规处\nsecurity_level: 2\n---\n# 船舶检查内部规定\n\n"
                      "第一条 根据《中华人民共和国海洋环境保护法》，制定本规定。\n", encoding="utf-8")
    compile_wiki(corpus, tmp_path / "wiki", progress=False)
    store = WikiStore(tmp_path / "wiki")
    staff = User(departments=("法规处",), security_level=2)
    assert store.read("船舶检查内部规定", User()) is None
    assert store.read("船舶检查内部规定", staff) is not None
    public_law = store.read("海洋环境保护法", User()).text
    assert "船舶检查内部规定" not in public_law and "船舶检查内部规定" in store.read("海洋环境保护法", staff).text
    graph = EntityGraph.load(tmp_path / "wiki" / "relations.json")
    assert graph.incoming("海洋环境保护法", "依据", user=User()) == []

    ctx = Context(resources={"wiki": store})
    state = build("wiki_page_read", {"k": 2}).run(State.of("内部规定", entities=("船舶检查内部规定",)), ctx)
    assert all(p.entity != "船舶检查内部规定" for p in state.wiki_pages)
    state = build("wiki_page_read").run(State.of("内部规定", entities=("船舶检查内部规定",), user=staff), ctx)
    assert state.wiki_pages[0].entity == "船舶检查内部规定"
