"""Statute routes follow what the question asks for: the kind it names, the best-matching document, each listed area."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lambdarag import Context, State
from lambdarag.domains.prc_statutes import StatuteProfile
from lambdarag.domains.prc_statutes.kinds import (INTERPRETATION, LAW, REGULATION, asked_kinds, document_kind, order_ahead,
                                                title_rank)
from lambdarag.domains.prc_statutes.ranks import area_first, by_document
from lambdarag.skills import build
from lambdarag.skills.diversify import per_document
from lambdarag.skills.store.records import Hit
from lambdarag.domains import index_profile

FIXTURES = Path(__file__).parent / "fixtures"
STATUTES = {"profile": StatuteProfile()}


def hit(source: str, section: str, score: float, text: str = "") -> Hit:
    title = source.rsplit("/", 1)[-1].split("(")[0].removesuffix(".md")
    return Hit(chunk_id=f"{source}#{section}", text=text or section, score=score, source=source, title=title,
               section=section)


@pytest.fixture(scope="module")
def kinds_index(tmp_path_factory):
    """Returns a BM25-only index of the maritime fixture's 14 statutes plus its three judicial interpretations."""
    from lambdarag.domains.corpus import build_index

    corpus = tmp_path_factory.mktemp("corpus")
    for folder in ("maritime", "maritime-interpretations"):
        shutil.copytree(FIXTURES / folder, corpus, dirs_exist_ok=True, ignore=shutil.ignore_patterns("README.md"))
    mp = pytest.MonkeyPatch()
    mp.setenv("LAMBDARAG_HOME", str(tmp_path_factory.mktemp("home")))
    yield build_index(corpus, "maritime-kinds", dense=False, progress=False)
    mp.undo()


def survey(index, question: str) -> list[str]:
    """Returns the document titles of the synthesis route's evidence, in order, one entry per chunk."""
    ctx = Context(resources={"index": index, "profile": index_profile(index)})
    state = State.of(question, hits=(), time_range=None)
    for name, config in (("statute_documents", {}), ("statute_topics", {}), ("time_filter", {"undated": "latest"}),
                         ("drop_repealed", {"undated": "latest"}), ("statute_spread", {})):
        state = build(name, config).run(state, ctx)
    return [h.title for h in state.hits]


@pytest.mark.parametrize("question, kinds", [
    ("有哪些司法解释涉及海事诉讼的管辖？", {INTERPRETATION}),
    ("船舶登记条例和船员条例各管什么？", {REGULATION}),
    ("有哪些行政法规和司法解释规定了海事赔偿限额？", {REGULATION, INTERPRETATION}),
    ("海关工作人员使用武器警械有哪些规定？", {LAW, REGULATION, INTERPRETATION}),   # 规定 alone: any kind
    ("海洋环境保护有哪些法律规定？", {LAW}),                                        # 法律规定 asks for laws
    ("船舶吨税和车船税分别由哪些法律法规规定？", {LAW, REGULATION}),
    ("船员管理法规体系梳理", {LAW, REGULATION}),                                  # 法规 alone: laws and regulations
    ("发生在我国管辖海域的案件，在法律适用上有哪些专门规定？", {LAW, REGULATION, INTERPRETATION}),  # 法律适用 names none
    ("2018年版公司法规定有限责任公司最多能有多少个股东？", {LAW, REGULATION, INTERPRETATION}),  # 法规定 is no 法规
    ("船舶污染海洋环境要担什么责任？", set()),
])
def test_the_kinds_a_question_asks_for(question, kinds):
    assert asked_kinds(question) == kinds


def test_a_documents_kind_is_its_folder_before_its_title():
    assert document_kind("行政法/海关关衔条例(2003-02-28).md", "中华人民共和国海关关衔条例") == LAW
    assert document_kind("行政法规/外国籍非军用船舶通过琼州海峡管理规则(2019-03-02).md",
                         "外国籍非军用船舶通过琼州海峡管理规则") == REGULATION
    assert document_kind("", "外国籍非军用船舶通过琼州海峡管理规则") == REGULATION
    assert document_kind("", "最高人民法院关于海事诉讼管辖问题的规定") == INTERPRETATION
    assert document_kind("", "中华人民共和国海商法") == LAW


def test_a_fact_whose_answer_is_in_an_interpretation_keeps_it_first():
    # maritime dev mf01 (两次拍卖都流拍的船舶还能变卖吗？): the interpretation's article is the hybrid ranking's first
    # hit, fused z 7.94 against 1.23 for the best law; laws-first put five laws ahead of it
    hits = [hit("司法解释/最高人民法院关于扣押与拍卖船舶适用法律若干问题的规定(2015-02-28).md", "第十三条", 7.94)]
    hits += [hit(f"{folder}/{law}.md", "第一条", 1.23 - i / 10) for i, (folder, law) in enumerate(
        [("行政法", "海警法(2021-01-22)"), ("诉讼与非诉讼程序法", "民事诉讼法(2023-09-01)"),
         ("诉讼与非诉讼程序法", "海事诉讼特别程序法(1999-12-25)"), ("行政法", "海关法(2021-04-29)"),
         ("民法商法", "海商法(1992-11-07)")])]
    out = build("statute_priors", {}).run(State.of("两次拍卖都流拍的船舶还能变卖吗？变卖价格最低不能低于多少？",
                                                 hits=tuple(hits)), Context(resources=STATUTES)).hits
    assert out[0].source == hits[0].source
    assert [h.source for h in out[1:]] == [h.source for h in hits[1:]]   # the laws behind it keep their order


def test_a_survey_asking_for_judicial_interpretations_gets_them_in_its_top_5(kinds_index):
    titles = list(dict.fromkeys(survey(kinds_index, "有哪些司法解释涉及海事赔偿责任限制和船舶碰撞纠纷？")))[:5]
    interpretations = [t for t in titles if t.startswith("最高人民法院")]
    assert "最高人民法院关于审理海事赔偿责任限制相关纠纷案件的若干规定" in interpretations
    assert "最高人民法院关于审理船舶碰撞纠纷案件若干问题的规定" in interpretations
    assert titles[0] in interpretations


def test_a_survey_asking_for_laws_lists_laws_first(kinds_index):
    titles = survey(kinds_index, "防治船舶污染和海洋环境保护的法律有哪些？")
    first_round = list(dict.fromkeys(titles))
    laws = [t for t in first_round if not title_rank(t)]
    assert first_round[:len(laws)] == laws


def test_a_survey_naming_no_kind_keeps_a_regulation_that_matches_it_best_in_its_top_5(kinds_index):
    # a question routed as a survey by mistake (it asks for one regulation's list of papers) must not get five laws
    titles = list(dict.fromkeys(survey(kinds_index, "买了一条船去办船舶登记，要交哪些材料？")))
    assert "中华人民共和国船舶登记条例" in titles[:5]
    assert any(not title_rank(t) for t in titles[:5])            # laws still lead the survey


def test_a_worse_prior_stands_back_some_places_not_behind_every_better_one():
    hits = [hit("行政法规/船舶登记条例.md", "第一条", 5.0)] + [hit(f"法律/{n}法.md", "第一条", 4.0 - i)
                                                               for i, n in enumerate("甲乙丙丁戊")]
    laws_first = lambda h: int("条例" in h.title)
    assert [h.title for h in per_document(hits, rank=laws_first)][-1] == "船舶登记条例"
    assert [h.title for h in per_document(hits, rank=laws_first, stand_back=3)].index("船舶登记条例") == 2
    assert [h.title for h in per_document(hits, rank=laws_first, stand_back=0)][0] == "船舶登记条例"


def test_a_law_taking_first_place_from_a_near_tie_leaves_the_best_match_in_the_first_three():
    regulation = hit("行政法规/涉外海洋科学研究管理规定.md", "第六条", 4.5)
    laws = [hit(f"法律/{n}法.md", "第一条", 3.0 - i / 10) for i, n in enumerate("甲乙丙丁戊")]
    order = [h.title for h in order_ahead([regulation, *laws], "外国机构在我国海域做科考要提前多久申请？", lambda t: t)]
    assert order[:3] == ["甲法", "乙法", "涉外海洋科学研究管理规定"]     # 甲法 is within NEAR_TIE, the rest within LEAD
    far = [hit(f"法律/{n}法.md", "第一条", 0.1) for n in "甲乙丙丁戊"]
    assert order_ahead([regulation, *far], "外国机构做科考要提前多久申请？", lambda t: t)[0] is regulation


def test_a_survey_listing_three_areas_gets_three_different_documents_before_a_repeat(kinds_index):
    titles = survey(kinds_index, "防治船舶污染、船员管理、船舶登记分别有哪些行政法规？")
    assert len(set(titles[:3])) == 3
    assert set(titles[:3]) == {"防治船舶污染海洋环境管理条例", "中华人民共和国船员条例", "中华人民共和国船舶登记条例"}


def test_each_listed_area_gets_its_own_best_document_ahead():
    pollution, pollution_too, crew = ("行政法规/防治船舶污染海洋环境管理条例.md", "行政法规/防治海洋工程污染条例.md",
                                      "行政法规/船员条例.md")
    documents = [hit(pollution, "第一条", 3.0), hit(pollution_too, "第一条", 2.5), hit(crew, "第一条", 1.0)]
    found = [hit(pollution, "第一条", 3.0, "防治船舶污染"), hit(pollution_too, "第一条", 2.5, "防治污染"),
             hit(crew, "第四条", 1.0, "船员应当持证")]
    out = area_first(documents, found, ["污染", "船员"])
    assert [h.source for h in out] == [pollution, crew, pollution_too]
    assert [h.source for h in area_first(documents, found, ["港口"])] == [h.source for h in documents]


def test_a_hub_law_does_not_take_every_surveys_first_place():
    # a long general law matches every survey in three of its 300 articles, a little better than the regulation
    # on the survey's topic matches in six of its 12
    hub = "民法商法/海商法(1992-11-07).md"
    sizes = {hub: 300, "行政法规/船员条例.md": 12, "行政法规/船舶登记条例.md": 12}
    for specific in ("行政法规/船员条例.md", "行政法规/船舶登记条例.md"):
        found = [hit(hub, f"第{n}条", 0.9) for n in "一二三"] + [hit(specific, f"第{n}条", 0.8) for n in "一二三四五六"]
        assert by_document(found, depth=3, statutes_only=False)[0].source == hub        # by match alone: the hub
        assert by_document(found, depth=3, statutes_only=False, sizes=sizes)[0].source == specific
