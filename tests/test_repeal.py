"""Statutes repealed under another title, on real statutes: out of force for undated questions, kept before the repeal."""
from __future__ import annotations

import datetime as dt

import pytest

from lambdarag import Context, State
from lambdarag.skills import build
from lambdarag.domains.prc_statutes.repeal import repealed_families
from lambdarag.domains.prc_statutes.repeal import unrepealed
from lambdarag.skills.store.corpus import to_hits
from lambdarag.skills.store.records import TimeRange
from lambdarag.skills.temporal import LATEST
from tests.conftest import laws_slice
from lambdarag.domains import index_profile

NOISE_OLD = "行政法/环境噪声污染防治法(2018-12-29).md"
NOISE_NEW = "行政法/噪声污染防治法(2021-12-24).md"
DEGREE_RULES = "行政法/学位条例(2004-08-28).md"
SLICE = [NOISE_OLD, NOISE_NEW, DEGREE_RULES, "社会法/学位法(2024-04-26).md",
         "宪法相关法/国家安全法(2015-07-01).md", "行政法/反间谍法(2014-11-01).md"]

pytestmark = pytest.mark.needs_shared


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    """Returns a BM25-only index of SLICE, copied from the full laws folder."""
    from lambdarag.domains.corpus import build_index

    with laws_slice(tmp_path_factory, SLICE) as (_, corpus):
        yield build_index(corpus, "repeal", dense=False, progress=False)


def test_the_repealing_clause_of_a_successor_marks_the_statute_it_replaced(index):
    # 反间谍法 (2014) repealed the 1993 国家安全法: the indexed 2015 国家安全法 is newer and stays in force
    assert repealed_families(index) == {"环境噪声污染防治法": "2021-12-24", "学位条例": "2024-04-26"}


def test_a_repealed_statute_is_out_of_force_for_undated_questions_and_kept_before_its_repeal(index):
    hits = to_hits(index.bm25("噪声 污染 防治", 30), "bm25")
    assert {NOISE_OLD, NOISE_NEW} <= {h.source for h in hits}
    repealed = repealed_families(index)
    assert NOISE_OLD not in {h.source for h in unrepealed(hits, LATEST, repealed)}
    before = TimeRange(start=dt.date(2020, 1, 1), end=dt.date(2020, 12, 31))
    assert unrepealed(hits, before, repealed) == hits
    after = TimeRange(start=dt.date(2023, 1, 1), end=dt.date(2023, 12, 31))
    assert NOISE_OLD not in {h.source for h in unrepealed(hits, after, repealed)}
    assert unrepealed(hits, None, repealed) == hits


def test_the_synthesis_route_drops_a_repealed_statute_from_an_undated_survey(index):
    hits = to_hits(index.bm25("噪声 学位", 300), "bm25")
    assert {NOISE_OLD, NOISE_NEW, DEGREE_RULES} <= {h.source for h in hits}
    state, ctx = State.of("噪声和学位方面的法律有哪些", hits=hits, time_range=None), Context(resources={"index": index, "profile": index_profile(index)})
    kept = build("time_filter", {"undated": "latest"}).run(state, ctx)
    assert NOISE_OLD in {h.source for h in kept.hits}   # two titles: the time filter alone keeps both laws
    out = build("drop_repealed", {"undated": "latest"}).run(kept, ctx)
    assert {h.source for h in out.hits} & {NOISE_OLD, DEGREE_RULES} == set()
    assert NOISE_NEW in {h.source for h in out.hits}
