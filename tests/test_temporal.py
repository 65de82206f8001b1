"""Time ranges from questions, and version selection on the real multi-version maritime laws."""
from __future__ import annotations

import datetime as dt

import pytest

from lambdarag import Context, State
from lambdarag.skills.store.records import TimeRange
from lambdarag.skills import build
from lambdarag.skills.store.local import LocalBackend
from lambdarag.domains.corpus import read_corpus
from lambdarag.skills.temporal import time_range_of as extract_time_range
from tests.conftest import MARITIME
from lambdarag.domains import index_profile

TODAY = dt.date(2024, 6, 1)


@pytest.mark.parametrize("query, expected", [
    ("现行海洋环境保护法怎么规定的", TimeRange(latest=True)),
    ("最新的国际海运条例", TimeRange(latest=True)),
    ("2019年国际海运条例的规定", TimeRange(start=dt.date(2019, 1, 1), end=dt.date(2019, 12, 31))),
    ("2020年3月船员条例", TimeRange(start=dt.date(2020, 3, 1), end=dt.date(2020, 3, 31))),
    ("2023年10月24日修订的内容", TimeRange(as_of=dt.date(2023, 10, 24))),
    ("去年的规定", TimeRange(start=dt.date(2023, 1, 1), end=dt.date(2023, 12, 31))),
    ("2017年以前", TimeRange(end=dt.date(2017, 12, 31))),
    ("2018年以来有哪些变化", TimeRange(start=dt.date(2018, 1, 1))),
    ("2022年版道路运输条例", TimeRange(as_of=dt.date(2022, 12, 31))),
    ("矿产资源法2024年修订以后探矿权怎么取得", TimeRange(as_of=dt.date(2024, 12, 31))),
    ("2023年修订前的规定", TimeRange(start=dt.date(2023, 1, 1), end=dt.date(2023, 12, 31))),
    ("船舶登记需要什么材料", None),
])
def test_extract_time_range(query, expected):
    assert extract_time_range(query, TODAY) == expected


@pytest.fixture(scope="module")
def maritime():
    corpus = read_corpus(MARITIME)
    docs = [d for d in corpus.documents if d.family in ("海洋环境保护法", "国际海运条例")]
    ids = {d.id for d in docs}
    backend = LocalBackend()
    backend.add(docs, [c for c in corpus.chunks if c.doc_id in ids])
    return backend


def run(backend, query, window, k=20):
    term = build("bm25_search", {"top_k": k}) >> build("rrf_merge") >> build("time_filter")
    state = State.of(query, time_range=window)
    return term.run(state, Context(resources={"index": backend, "profile": index_profile(backend)})).hits


def test_latest_keeps_only_the_newest_version(maritime):
    hits = run(maritime, "海洋环境保护法 船舶污染 监督管理", TimeRange(latest=True))
    env = [h for h in hits if h.family == "海洋环境保护法"]
    assert env and {h.date for h in env} == {"2023-10-24"}
    hits = run(maritime, "国际海运条例 无船承运业务", TimeRange(latest=True))
    assert {h.date for h in hits if h.family == "国际海运条例"} == {"2023-07-20"}


def test_version_in_force_at_a_date(maritime):
    hits = run(maritime, "海洋环境保护法 船舶污染 监督管理", TimeRange(as_of=dt.date(2020, 1, 1)))
    assert {h.date for h in hits if h.family == "海洋环境保护法"} == {"2017-11-04"}
    hits = run(maritime, "国际海运条例 无船承运业务", TimeRange(start=dt.date(2021, 1, 1), end=dt.date(2021, 12, 31)))
    assert {h.date for h in hits if h.family == "国际海运条例"} == {"2019-03-02"}
    both = run(maritime, "国际海运条例 无船承运业务", TimeRange(start=dt.date(2019, 6, 1), end=dt.date(2024, 1, 1)))
    assert {h.date for h in both if h.family == "国际海运条例"} == {"2019-03-02", "2023-07-20"}


def test_old_article_is_swapped_for_the_same_article_of_the_newest_version(maritime):
    term = build("bm25_search", {"filters": {"date": "2017-11-04"}}) >> build("rrf_merge") >> build("time_filter")
    state = State.of("海洋环境保护法 第一条 保护和改善海洋环境", time_range=TimeRange(latest=True))
    hits = term.run(state, Context(resources={"index": maritime, "profile": index_profile(maritime)})).hits
    assert hits and all(h.date == "2023-10-24" for h in hits)
    assert "行政法/海洋环境保护法(2023-10-24).md#第一条" in {h.chunk_id for h in hits}


def test_no_time_range_keeps_hits(maritime):
    hits = run(maritime, "国际海运条例 无船承运业务", None)
    assert {h.date for h in hits} == {"2019-03-02", "2023-07-20"}


def test_an_edition_named_by_its_year_is_the_version_made_that_year_not_the_one_it_replaced(maritime):
    query = "2023年版国际海运条例对无船承运业务怎么规定？"
    hits = run(maritime, "国际海运条例 无船承运业务", extract_time_range(query, TODAY))
    assert {h.date for h in hits if h.family == "国际海运条例"} == {"2023-07-20"}   # 2019's was in force until July
