"""The routing benchmarks' question sets: every committed half validates against its corpus, and the validator catches bad records."""
from __future__ import annotations

import sys
from collections import Counter

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import routing_data  # noqa: E402

ARTICLE = "# 船员条例\n\n第三条 国务院交通主管部门主管全国船员管理工作。\n"


@pytest.fixture
def corpus(tmp_path):
    (tmp_path / "行政法规").mkdir()
    (tmp_path / "行政法规" / "船员条例(2023-07-20).md").write_text(ARTICLE, encoding="utf-8")
    return tmp_path


@pytest.mark.needs_shared
@pytest.mark.parametrize("name", sorted(routing_data.SETS))
def test_every_half_of_every_set_validates_against_its_corpus(name):
    qs = routing_data.SETS[name]
    records = [r for half in qs.halves for r in routing_data.load(half, qs.folder)]
    assert records and routing_data.problems(records, qs.corpus) == []


def test_maritime_halves_are_disjoint_and_stratified_by_type():
    qs = routing_data.SETS["maritime"]
    dev, dev2, test = (routing_data.load(h, qs.folder) for h in ("dev", "dev2", "test"))
    qids = [r["qid"] for r in dev + dev2 + test]
    assert len(qids) == len(set(qids))
    assert Counter(r["type"] for r in dev) == Counter(r["type"] for r in test) == dict.fromkeys(routing_data.TYPES, 6)
    assert Counter(r["type"] for r in dev2) == dict.fromkeys(routing_data.TYPES, 8)
    for half in (dev + test, dev2):
        kinds = Counter(p.split("/")[0] for r in half for p in r["relevant"])
        assert kinds["行政法规"] + kinds["司法解释"] > sum(kinds.values()) / 2  # mostly regulations and interpretations


def test_the_split_is_seeded_and_puts_the_smaller_half_of_each_type_in_dev():
    records = [{"qid": f"{t}{i}", "type": t} for t in routing_data.TYPES for i in range(5)]
    dev, test = routing_data.split(records)
    assert (dev, test) == routing_data.split(records)
    assert Counter(r["type"] for r in dev) == dict.fromkeys(routing_data.TYPES, 2)
    assert len(test) == 15


def test_a_valid_record_passes(corpus):
    path = "行政法规/船员条例(2023-07-20).md"
    good = {"qid": "r1", "type": "relation", "query": "?", "relevant": [path], "articles": {path: ["第三条"]}}
    assert routing_data.problems([good], corpus) == []


@pytest.mark.parametrize("record, problem", [
    ({"qid": "f1", "type": "fact", "relevant": ["行政法规/船员条例(2020-03-27).md"]},
     "f1: no file 行政法规/船员条例(2020-03-27).md"),
    ({"qid": "f2", "type": "fact", "relevant": ["行政法规/船员条例(2023-07-20).md"],
      "articles": {"行政法规/船员条例(2023-07-20).md": ["第九条"]}}, "f2: 行政法规/船员条例(2023-07-20).md has no 第九条"),
    ({"qid": "x", "type": "survey", "relevant": []}, "x: type 'survey' is not one of"),
    ({"qid": "c1", "type": "compare", "relevant": [], "named": ["行政法规/船员条例(2023-07-20).md"]},
     "c1: compare needs at least two named statutes"),
    ({"qid": "t1", "type": "temporal", "relevant": ["行政法规/船员条例(2023-07-20).md"],
      "right_version": "行政法规/船员条例(2023-07-20).md"}, "t1: temporal needs right_version among relevant"),
])
def test_a_bad_record_is_named_with_what_is_wrong(corpus, record, problem):
    assert any(p.startswith(problem) for p in routing_data.problems([record], corpus))
