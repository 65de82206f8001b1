"""side_search on the shipped statutes: a named statute keeps its place in the evidence even when it is the only side."""
from __future__ import annotations

import pytest

from lambdarag import Context, State
from lambdarag.skills import build
from lambdarag.domains.prc_statutes.names import StatuteNames
from lambdarag.skills.sides import Side
from lambdarag.skills.store.corpus import to_hits
from lambdarag.domains import index_profile

PORT = "经济法/港口法(2018-12-29).md"
FISHERY = "经济法/渔业法(2013-12-28).md"


def test_a_single_named_side_goes_ahead_of_a_ranking_without_it(maritime_bm25):
    question = "港口法里的港口经营许可跟渔业捕捞许可有什么不同？"
    crowded = to_hits(maritime_bm25.bm25("渔业 捕捞 许可", 10, filters={"source": FISHERY}), "bm25")
    port = Side(name="港口法", title="港口法", source=PORT, family="港口法")
    state = State.of(question, hits=crowded, sides=(port,))
    out = build("side_search", {}).run(state, Context(resources={"index": maritime_bm25, "profile": index_profile(maritime_bm25)}))
    assert out.hits[0].source == PORT
    assert {h.source for h in out.hits[1:]} >= {FISHERY}


def titles(*names: str) -> dict[str, dict[str, str]]:
    """Returns an index's document table holding one statute per title."""
    return {name: {"source": f"法/{name}.md", "title": name, "family": name} for name in names}


def test_a_side_named_by_a_contraction_resolves_when_sides_are_compared():
    names = StatuteNames(titles("人民警察法", "人民武装警察法", "仲裁法", "劳动争议调解仲裁法", "个人所得税法", "企业所得税法",
                                "最高人民法院关于经劳动争议仲裁裁决的纠纷准予撤诉后劳动争议仲裁裁决从何时起生效的解释"))
    assert [s.title for s in names.named("人民警察和武警的职责有什么区别？", loose=True)] == ["人民警察法", "人民武装警察法"]
    assert [(s.name, s.title) for s in names.named("仲裁法里的仲裁跟劳动争议仲裁有什么不同？", loose=True)] == \
        [("仲裁法", "仲裁法"), ("劳动争议仲裁", "劳动争议调解仲裁法")]
    assert [s.title for s in names.named("个税和企业所得税法有什么不同", loose=True)] == ["个人所得税法", "企业所得税法"]
    assert [s.title for s in names.named("人民警察和武警的职责有什么区别？")] == []  # exact matching only without loose


def test_a_word_or_an_ambiguous_contraction_names_no_statute():
    names = StatuteNames(titles("矿产资源法", "煤矿安全生产条例", "森林法", "反垄断法", "反洗钱法", "商标法",
                                "律师法", "互联网上网服务营业场所管理条例"))
    assert [s.title for s in names.named("森林和矿产的保护有什么不同？", loose=True)] == ["森林法"]  # not 煤矿安全生产条例
    assert [s.title for s in names.named("反法和商标法有什么关系", loose=True)] == ["商标法"]
    assert [s.title for s in names.named("律师事务所和律师协会有什么区别", loose=True)] == []


def test_a_two_character_title_names_its_statute_beside_a_longer_one_that_contains_its_characters():
    names = StatuteNames(titles("中华人民共和国刑法", "中华人民共和国刑事诉讼法", "中华人民共和国宪法", "宪法修正案（1988年）",
                                "中华人民共和国水法", "中华人民共和国水污染防治法"))
    for question, named in [("刑事诉讼法和刑法在法律责任方面有何不同？", ["刑事诉讼法", "刑法"]),
                            ("《中华人民共和国宪法》与宪法修正案（1988年）有什么区别？", ["宪法", "宪法修正案（1988年）"]),
                            ("水法的罚则跟水污染防治法的罚则比，哪个更重？", ["水法", "水污染防治法"])]:
        assert [s.title for s in names.named(question, loose=True)] == named
        assert [s.title for s in names.named(question)] == named
