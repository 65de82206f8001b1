"""What the learned evidence scorer reads of the question (issue 40, round 26): features that know its type."""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np

from lambdarag import Context, State
from lambdarag.domains.generic import GenericProfile
from lambdarag.skills.evidence import Candidate, feature_matrix, ranked
from lambdarag.skills.generate import extractive_answer
from lambdarag.skills.store.records import Hit
from lambdarag.skills.unit_features import FEATURES, load_weights


def matrix(query: str, texts: list[str], query_type=None, ends=(), cosine=None, heading="") -> dict[str, list]:
    """Returns the feature columns, by name, of `texts` as one hit's units for the question."""
    hit = Hit(chunk_id="a.md#0", source="a.md", title="a", text=" ".join(texts))
    found = [Candidate(text=t, heading=heading, hit=hit, rank=0, place=i) for i, t in enumerate(texts)]
    n = len(texts)
    parts = {"bm25": np.ones(n), "heading": np.zeros(n), "dense": np.ones(n),
             "cosine": np.asarray(cosine if cosine is not None else np.full(n, 0.5), dtype=float)}
    m = feature_matrix(query, found, parts, [0.5] * n, [0.5] * n, range(n), query_type, ends)
    return {name: m[:, i].tolist() for i, name in enumerate(FEATURES)}


DATED = "Since version 3.7.0 the tool reads the suppression file twice."
UNDATED = "The tool reads the suppression file twice."


def test_a_temporal_question_marks_the_unit_naming_a_version_and_a_fact_question_marks_none():
    asked = "When did the tool start reading the suppression file twice?"
    got = matrix(asked, [DATED, UNDATED], "temporal")
    assert got["dated_when"] == [1.0, 0.0] and got["marks_time"] == [1.0, 0.0]
    got = matrix(asked, [DATED, UNDATED], "fact")
    assert got["dated_when"] == [0.0, 0.0] and got["marks_time"] == [0.0, 0.0]


def test_a_chinese_unit_placing_a_statement_in_time_is_marked_for_a_temporal_question():
    got = matrix("从哪个版本开始默认启用自动保存？", ["从 6.4 版起默认启用自动保存。", "自动保存可以在选项中设置。"], "temporal")
    assert got["dated_when"] == [1.0, 0.0] and got["marks_time"] == [1.0, 0.0]


def test_a_relation_unit_naming_both_ends_with_a_link_word_between_them_is_marked():
    asked = "How is named related to rndc?"
    texts = ["The rndc utility controls named over a control channel.", "named and rndc are installed together.",
             "rndc has many commands."]
    got = matrix(asked, texts, "relation", ("named", "rndc"))
    assert got["links_ends"] == [1.0, 1.0, 0.0] and got["link_word"] == [1.0, 0.0, 0.0]
    assert matrix(asked, texts, "fact", ("named", "rndc"))["links_ends"] == [0.0, 0.0, 0.0]


def test_a_chinese_relation_unit_with_a_link_word_is_marked():
    got = matrix("样式和模板有什么关系？", ["模板包含样式和页面设置。", "样式可以修改。"], "relation", ("模板", "样式"))
    assert got["links_ends"] == [1.0, 0.0] and got["link_word"] == [1.0, 0.0]


def test_a_unit_defining_a_term_the_question_asks_about_is_marked_in_both_languages():
    got = matrix("What is a folder hook?", ["A folder hook is a command run when a folder opens.",
                                            "A mailbox is a file.", "Hooks run commands."])
    assert got["defines_asked"] == [1.0, 0.0, 0.0]
    assert matrix("什么是母版页？", ["母版页是所有幻灯片共用的背景。", "幻灯片是演示文稿的一页。"])["defines_asked"] == [1.0, 0.0]


def test_the_cosine_rank_is_the_units_place_by_cosine_within_the_question_whatever_the_scale():
    texts = ["one unit here.", "another unit here.", "a third unit here."]
    low = matrix("which unit?", texts, cosine=[0.2, 0.3, 0.1])["cosine_rank"]
    high = matrix("which unit?", texts, cosine=[0.6, 0.9, 0.3])["cosine_rank"]
    assert low == high == [0.5, 1.0, 1 / 3]
    assert matrix("which unit?", texts, cosine=[0.0, 0.3, 0.1])["cosine_rank"][0] == 0.0    # never embedded


def test_the_heading_path_s_share_of_the_question_s_words_is_read():
    got = matrix("How do I configure zone transfers?", ["It is done in one line."], heading="Zone transfers")
    none = matrix("How do I configure zone transfers?", ["It is done in one line."], heading="Logging")
    assert got["heading_asked"][0] > 0 and none["heading_asked"][0] == 0.0


def weighing(tmp_path, feature: str) -> GenericProfile:
    """Returns a generic profile whose learned order weighs `feature` five times BM25."""
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"features": ["bm25", feature], "weights": [1.0, 5.0]}), encoding="utf-8")
    load_weights.cache_clear()
    return type("Weighing", (GenericProfile,), {"wording": replace(GenericProfile.wording, evidence_weights=path)})()


def test_the_question_type_reaches_the_learned_order_through_ranked_and_the_extractive_answer(tmp_path):
    profile = weighing(tmp_path, "marks_time")
    hits = (Hit(chunk_id="a.md#0", source="a.md", title="cache", score=1.0,
                text="The resolver cache no longer drops old entries once they expire. "
                     "Resolver cache entries expire and the resolver cache drops expired resolver cache entries."),)
    asked = "When does the resolver cache drop expired entries?"
    ctx = Context(resources={"profile": profile})
    assert ranked(asked, hits, profile, ctx)[0].text.startswith("Resolver cache entries expire")
    assert ranked(asked, hits, profile, ctx, query_type="temporal")[0].text.startswith("The resolver cache no longer")

    def first(query_type: str) -> str:
        return extractive_answer(State.of(asked, hits=hits, query_type=query_type), ctx)["answer"].splitlines()[1]

    assert first("fact").startswith("- Resolver cache entries expire")
    assert first("temporal").startswith("- The resolver cache no longer drops")


def test_units_with_one_feature_row_tie_exactly_whatever_else_the_matrix_holds():
    # a matrix product's last bits follow the row's place and the matrix's layout: without rounding, two units the
    # features cannot tell apart were ordered by that noise, and adding a column the weights do not read reordered them
    weights = load_weights(GenericProfile().wording.evidence_weights)
    rng = np.random.default_rng(7)
    for n in range(2, 40):
        rows = rng.random((n, len(FEATURES)))
        rows[-1] = rows[0]
        scores = weights.scores(rows)
        assert scores[0] == scores[-1]
        wider = np.column_stack([rows, rng.random((n, 5))])[:, :len(FEATURES)]
        assert np.array_equal(weights.scores(wider), scores)
