"""Survey topics on a slice of real statutes: a topic word names a law before a regulation, a listed field its law."""
from __future__ import annotations

import pytest

from lambdarag import Context, State
from lambdarag.skills import build
from lambdarag.domains.prc_statutes.ranks import field_law, listed_statutes, listed_words, titled_by
from lambdarag.domains.prc_statutes.names import StatuteNames, statute_names
from tests.conftest import laws_slice
from lambdarag.domains import index_profile

SOLID_WASTE = "行政法/固体废物污染环境防治法(2020-04-29).md"
PRESCHOOL = "行政法/学前教育法(2024-11-08).md"
FILM_LAW = "行政法/电影产业促进法(2016-11-07).md"
VILLAGERS = "宪法相关法/村民委员会组织法(2018-12-29).md"
RESIDENTS = "宪法相关法/城市居民委员会组织法(2018-12-29).md"
SLICE = [SOLID_WASTE, "行政法/大气污染防治法(2018-10-26).md", "行政法/水污染防治法(2017-06-27).md",
         "行政法/海洋环境保护法(2023-10-24).md", PRESCHOOL, "社会法/未成年人保护法(2024-04-26).md",
         "行政法规/幼儿园管理条例(1989-09-11).md", FILM_LAW, "行政法规/电影管理条例(2001-12-25).md",
         "行政法/公务员法(2018-12-29).md", "社会法/劳动法(2018-12-29).md", "社会法/劳动合同法(2012-12-28).md",
         VILLAGERS, RESIDENTS, "宪法相关法/立法法(2023-03-13).md"]


@pytest.mark.parametrize("query, words", [
    ("空气、水、土壤、垃圾、噪音污染分别由哪些法律来管？", ["空气", "土壤", "垃圾", "噪音"]),
    ("银行、证券、保险的监管分别靠哪些法律？", ["银行", "证券", "保险"]),
    ("增值税、消费相关的车船、契税、印花税这些税收法律汇总一下", ["增值税", "消费", "车船", "契税", "印花税"]),
    ("从幼儿园到大学，教育方面的法律有哪些？", [])])
def test_listed_words_are_the_things_a_question_lists_with_the_enumeration_comma(query, words):
    assert listed_words(query) == words


def test_a_topic_word_names_a_law_before_a_shorter_regulation_titled_by_it():
    names = StatuteNames({str(i): {"source": source, "title": title, "family": title, "date": "2016-11-07"}
                          for i, (source, title) in enumerate([
                              ("行政法规/电影管理条例(2001-12-25).md", "电影管理条例"),
                              (FILM_LAW, "中华人民共和国电影产业促进法"),
                              ("经济法/森林法(2019-12-28).md", "中华人民共和国森林法"),
                              ("行政法规/森林法实施条例(2018-03-19).md", "中华人民共和国森林法实施条例")])})
    assert titled_by("电影", names.titles).source == FILM_LAW   # the old shortest-title rule chose 电影管理条例
    assert titled_by("森林", names.titles).title == "森林法"
    assert titled_by("电影", names.titles, specific=1) is None   # a word in many titles names none
    assert titled_by("幼儿园", names.titles) is None


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    """Returns a BM25-only index of SLICE, copied from the full laws folder."""
    from lambdarag.domains.corpus import build_index

    with laws_slice(tmp_path_factory, SLICE) as (_, corpus):
        yield build_index(corpus, "topics", dense=False, progress=False)


@pytest.mark.needs_shared
def test_a_listed_field_names_the_law_whose_articles_keep_mentioning_it(index):
    assert field_law(index, "垃圾").source == SOLID_WASTE        # 30 articles; 大气污染防治法 8
    assert field_law(index, "幼儿园").source == PRESCHOOL         # the regulation titled by it is not a law
    assert field_law(index, "工资") is None                        # 公务员法 11 articles, 劳动法 7: no law dominates
    assert field_law(index, "噪音") is None                        # the laws say 噪声


@pytest.mark.needs_shared
def test_statute_topics_puts_a_listed_fields_law_and_a_titled_law_first(index):
    term = build("statute_topics", {})
    state = term.run(State.of("幼儿园、电影、垃圾，这些方面的法律有哪些？", hits=()), Context(resources={"index": index, "profile": index_profile(index)}))
    # before: 幼儿园 and 电影 went to the regulations titled by them, 垃圾 to no statute
    assert [h.source for h in state.hits[:3]] == [PRESCHOOL, FILM_LAW, SOLID_WASTE]


@pytest.mark.needs_shared
def test_a_word_only_regulations_are_titled_by_names_its_field_law_even_unlisted(index):
    out = build("statute_topics", {}).run(State.of("从幼儿园到上学，孩子相关的法律有哪些？", hits=()),
                                        Context(resources={"index": index, "profile": index_profile(index)}))
    assert out.hits[0].source == PRESCHOOL   # before: 幼儿园管理条例, the regulation titled by it


@pytest.mark.needs_shared
def test_statutes_named_by_contraction_among_listed_things_go_first_and_unlisted_names_do_not(index):
    names = statute_names(index)
    query = "村委会、居委会、农村集体经济组织的法律规定汇总"
    assert [source for _, source in listed_statutes(names, query, listed_words(query), 6)] == [VILLAGERS, RESIDENTS]
    out = build("statute_topics", {}).run(State.of(query, hits=()), Context(resources={"index": index, "profile": index_profile(index)}))
    assert [h.source for h in out.hits[:2]] == [VILLAGERS, RESIDENTS]   # before: 居委会 is in no title
    query = "幼儿园、电影这些方面是怎么立法的？"
    assert listed_statutes(names, query, listed_words(query), 6) == []   # 立法 is not listed: not 立法法
