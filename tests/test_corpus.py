"""Corpus reading and structure-aware chunking on the real statute files, plus malformed inputs."""
from __future__ import annotations

import json

import pytest

from lambdarag.domains.prc_statutes.documents import family as family_of
from lambdarag.domains.corpus import read_corpus
from tests.conftest import LAWS, MARITIME


def by_id(corpus):
    return {c.id: c for c in corpus.chunks}


def test_statute_chunks_by_article_with_chapter_heading_and_file_date():
    corpus = read_corpus(MARITIME / "行政法")
    assert corpus.problems == []
    doc = next(d for d in corpus.documents if d.id == "海洋环境保护法(2023-10-24).md")
    assert (doc.title, doc.date, doc.family, doc.kind) == ("中华人民共和国海洋环境保护法", "2023-10-24", "海洋环境保护法", "statute")
    assert doc.headers[0].startswith("1982年8月23日")
    chunks = by_id(corpus)
    first = chunks["海洋环境保护法(2023-10-24).md#第一条"]
    assert first.text.startswith("第一条 ") and first.section == "第一条" and first.heading == "第一章 总 则"
    assert "第二条" not in first.text and "INFO END" not in first.text
    second = chunks["海洋环境保护法(2023-10-24).md#第二条"]
    assert second.text.count("\n") >= 1  # a multi-paragraph article stays whole
    articles = [c for c in corpus.chunks if c.doc_id == doc.id]
    assert all(c.kind == "article" and c.date == "2023-10-24" for c in articles)
    assert articles[-1].heading.startswith("第九章")


def test_family_groups_dated_versions():
    corpus = read_corpus(MARITIME)
    families = {}
    for d in corpus.documents:
        families.setdefault(d.family, set()).add(d.date)
    assert families["海洋环境保护法"] == {"2017-11-04", "2023-10-24"}
    assert families["国际海运条例"] == {"2019-03-02", "2023-07-20"}
    assert family_of("中华人民共和国 民事诉讼法（2021）") == family_of("民事诉讼法(2021)")
    assert family_of("规定（一）") != family_of("规定（二）")


@pytest.mark.needs_shared
def test_nested_headings_article_suffixes_and_header_dates():
    corpus = read_corpus(LAWS / "刑法", domain="prc_statutes")  # 12 of its 13 files are amendments without articles
    chunks = by_id(corpus)
    c = chunks["刑法.md#第十七条之一"]
    assert c.heading == "第一编 总则 / 第二章 犯罪 / 第一节 犯罪和刑事责任"
    assert c.text.startswith("第十七条之一 ")
    assert next(d for d in corpus.documents if d.id == "刑法.md").date == "2023-12-29"  # latest header date
    civil = read_corpus(LAWS / "民法典")
    doc = next(d for d in civil.documents if d.id == "总则.md")
    assert doc.date == "2020-05-28"  # the 2021-01-01 施行 line is ignored
    assert by_id(civil)["总则.md#第一条"].heading == "总则 / 第一章 基本规定"


def test_markdown_headings_paragraph_cap_front_matter_and_sidecar(tmp_path):
    (tmp_path / "guide(2024-01-02).md").write_text(
        "---\ndepartment: 船舶监督处\nsecurity_level: 2\nowner: x\n---\n# 指引\n\n## 目的\n\n" + "甲" * 50 + "。\n\n"
        + "乙" * 50 + "。\n\n## 范围\n\n丙。\n", encoding="utf-8")
    (tmp_path / "notes.md").write_text("# 笔记\n\n正文。\n", encoding="utf-8")
    (tmp_path / "notes.md.meta.json").write_text(json.dumps({"department": "办公室", "security_level": 1}))
    corpus = read_corpus(tmp_path, cap=60)
    assert corpus.problems == []
    guide = [c for c in corpus.chunks if c.doc_id == "guide(2024-01-02).md"]
    assert [c.section for c in guide] == ["目的", "目的", "范围"]
    assert len({c.id for c in guide}) == 3 and all(len(c.text) <= 60 for c in guide)
    assert all(c.department == "船舶监督处" and c.security_level == 2 and c.date == "2024-01-02" for c in guide)
    notes = next(c for c in corpus.chunks if c.doc_id == "notes.md")
    assert (notes.department, notes.security_level, notes.kind) == ("办公室", 1, "text")


def test_jsonl_records_stay_whole_and_bad_inputs_are_reported_by_path_and_line(tmp_path):
    lines = [json.dumps({"id": "r1", "title": "T", "text": "第一段\n第二段", "document": "民法典", "date": "2020-05-28"}),
             "{not json", json.dumps({"id": "r2", "title": "x"}), json.dumps({"id": "r1", "text": "dup"}),
             json.dumps({"id": "r3", "text": "ok", "security_level": "high"})]
    (tmp_path / "records.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "bad.md").write_text("---\ndepartment: [unclosed\n---\n# x\n正文\n", encoding="utf-8")
    (tmp_path / "open.md").write_text("---\ndepartment: a\n# x\n", encoding="utf-8")
    (tmp_path / "latin1.md").write_bytes("# 标题\n".encode("gbk"))
    corpus = read_corpus(tmp_path)
    (record,) = corpus.chunks
    assert (record.id, record.text, record.kind, record.family, record.source) == ("r1", "第一段\n第二段", "record", "民法典", "records.jsonl:1")
    problems = {(p, line) for p, line, _ in corpus.problems}
    assert {("records.jsonl", 2), ("records.jsonl", 3), ("records.jsonl", 4), ("records.jsonl", 5)} <= problems
    assert ("bad.md", 2) in problems and ("open.md", 1) in problems and ("latin1.md", 0) in problems
    messages = " ".join(m for _, _, m in corpus.problems)
    assert "invalid JSON" in messages and "lacks text" in messages and "duplicate" in messages and "security_level" in messages


def test_folder_notes_are_not_documents():
    corpus = read_corpus(MARITIME)
    assert not any(d.id == "README.md" for d in corpus.documents)
    statutes = [p for p in MARITIME.rglob("*.md") if p.name != "README.md"]
    assert len(corpus.documents) == len(statutes) == 14
