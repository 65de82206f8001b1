"""Trust regressions: restricted sources never reach a reader through wiki lines, graph lookups or write-back,
write-back needs support in the cited text, and every answer sentence is checked against what it cites."""
from __future__ import annotations

from pathlib import Path

from lambdarag import Context, State, User
from skills import build
from skills.store.graph import EntityGraph
from skills.store.wiki import WikiStore
from skills.wiki import compile_wiki
from tests.conftest import MARITIME

LAW = "行政法/海洋环境保护法(2023-10-24).md"
STAFF = User(id="staff", departments=("法规处",), security_level=2)
SECRET_RULE = "---\ndepartment: 法规处\nsecurity_level: 2\n---\n# 船舶检查内部规定\n\n" \
              "第一条 根据《中华人民共和国海洋环境保护法》，制定本规定。\n"


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def law_text() -> str:
    return (MARITIME / LAW).read_text(encoding="utf-8")


def test_l1_a_restricted_source_with_hash_in_its_path_stays_hidden(tmp_path):
    docs = tmp_path / "docs"
    write(docs, LAW, law_text())
    write(docs, "内部#2/船舶检查内部规定(2020-01-01).md", SECRET_RULE)
    compile_wiki(docs, tmp_path / "wiki", progress=False)
    store = WikiStore(tmp_path / "wiki")
    assert "船舶检查内部规定" in store.read("海洋环境保护法", STAFF).text
    assert "船舶检查内部规定" not in store.read("海洋环境保护法", User()).text
    assert store.read("船舶检查内部规定", User()) is None
    pages = build("wiki_page_read", {"k": 5}).run(State.of("船舶检查内部规定 海洋环境保护法"),
                                                 Context(resources={"wiki": store})).wiki_pages
    assert pages and all("船舶检查内部规定" not in p.text for p in pages)


def two_versions(tmp_path: Path) -> tuple[WikiStore, EntityGraph]:
    """Returns the wiki of a law whose 2023 text is public and whose 2019 text is restricted."""
    docs = tmp_path / "docs"
    write(docs, LAW, law_text())
    write(docs, "内部/海洋环境保护法(2019-03-15).md", "---\nsecurity_level: 2\n---\n" + law_text())
    compile_wiki(docs, tmp_path / "wiki", progress=False)
    return WikiStore(tmp_path / "wiki"), EntityGraph.load(tmp_path / "wiki" / "relations.json")


def test_l2_a_line_derived_from_a_public_and_a_restricted_source_is_hidden(tmp_path):
    store, _ = two_versions(tmp_path)
    assert "取代 2019-03-15 版" in store.read("海洋环境保护法", STAFF).text
    public = store.read("海洋环境保护法", User()).text
    assert "2023-10-24" in public and "2019-03-15" not in public and "内部/" not in public


def test_l4_version_chain_follows_the_user(tmp_path):
    _, graph = two_versions(tmp_path)
    lookup = build("relation_lookup")
    ctx = Context(resources={"graph": graph})
    staff = lookup.run(State.of("海洋环境保护法", entities=("海洋环境保护法",), user=STAFF), ctx).relations
    assert any(r.relation == "新版本" and "2019-03-15" in r.head for r in staff)
    public = lookup.run(State.of("海洋环境保护法", entities=("海洋环境保护法",), user=User()), ctx).relations
    assert not any("2019-03-15" in f"{r.head}{r.tail}{r.description}" or r.source.startswith("内部/")
                   for r in public)
    assert graph.version_relations("海洋环境保护法", User()) == []
    assert [v.date for v in graph.versions("海洋环境保护法", User())] == ["2023-10-24"]
