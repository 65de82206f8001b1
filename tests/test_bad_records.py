"""Bad corpus records and files (issue 30): each is skipped with a one-line message naming file and record, the rest
is indexed and searchable, symlinks never lead out of the corpus folder, and a killed writer's temp files go."""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from lambdarag.orchestration.cli import main
from lambdarag.domains.corpus import read_corpus
from lambdarag.skills.store.index import index_dir, open_index
from lambdarag.domains.corpus import compile_wiki
from tests.conftest import MARITIME
from tests.test_crash_safety import home, run_child  # noqa: F401  (home is a fixture)

STATUTE = "行政法规/国际海运条例(2019-03-02).md"
GOOD = {"id": "good-1", "title": "引航规定", "text": "引航员应当持有有效的引航员适任证书。"}


def jsonl(path: Path, *lines: str) -> None:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


BAD_RECORDS = [
    ('{"id": null, "text": null}', "record lacks id and text"),
    ('{"id": "s1", "text": "船舶\\ud800应当"}', "record 's1': text holds a lone surrogate U+D800 at character 2"),
    ('{"id": "\\udfff", "text": "正文"}', "id holds a lone surrogate U+DFFF"),
    ('{"id": 7, "text": "正文"}', "id must be a string, got int 7"),
    ('{"id": "t1", "text": ["一", "二"]}', "record 't1': text must be a string, got list"),
    ('{"id": "t2", "text": "正文", "title": 3.5}', "record 't2': title must be a string, got float"),
    ('{"id": "d1", "text": "正文", "date": "not-a-date"}', "record 'd1': date must be a calendar date YYYY-MM-DD, got 'not-a-date'"),
    ('{"id": "d2", "text": "正文", "date": "2021-02-30"}', "record 'd2': date must be a calendar date"),
    ('{"id": "d3", "text": "正文", "date": 20210101}', "record 'd3': date must be a calendar date"),
    ('{"question": "多久？", "answer": 7}', "answer must be a string, got int 7"),
]


@pytest.mark.parametrize("line, message", BAD_RECORDS)
def test_a_bad_record_is_skipped_with_a_message_naming_file_line_and_record(tmp_path, line, message):
    jsonl(tmp_path / "records.jsonl", json.dumps(GOOD, ensure_ascii=False), line)
    corpus = read_corpus(tmp_path)
    assert [d.id for d in corpus.documents] == ["good-1"]
    assert len(corpus.problems) == 1
    path, n, text = corpus.problems[0]
    assert (path, n) == ("records.jsonl", 2) and text.startswith(message), text


def test_markdown_front_matter_of_the_wrong_type_or_with_a_bad_date_is_a_named_skip(tmp_path):
    (tmp_path / "dated.md").write_text("---\ndate: not-a-date\n---\n# 规定\n\n正文。\n", encoding="utf-8")
    (tmp_path / "titled.md").write_text("---\ntitle: [a, b]\n---\n# 规定\n\n正文。\n", encoding="utf-8")
    (tmp_path / "fine.md").write_text("---\ndate: 2021-04-29\n---\n# 规定\n\n正文。\n", encoding="utf-8")
    corpus = read_corpus(tmp_path)
    assert [(d.id, d.date) for d in corpus.documents] == [("fine.md", "2021-04-29")]
    assert sorted(corpus.problems) == [
        ("dated.md", 2, "date must be a calendar date YYYY-MM-DD, got 'not-a-date'"),
        ("titled.md", 2, "title must be a string, got list ['a', 'b']")]


def test_a_file_name_that_is_not_utf8_is_a_named_skip(tmp_path):
    (tmp_path / "ok.md").write_text("# 规定\n\n正文。\n", encoding="utf-8")
    with open(os.path.join(os.fsencode(tmp_path), b"bad\xff.md"), "w", encoding="utf-8") as f:
        f.write("# 规定\n\n正文。\n")
    read = read_corpus(tmp_path)
    assert [d.id for d in read.documents] == ["ok.md"]
    assert read.problems == [("bad\ufffd.md", 0, "file name is not valid UTF-8")]


def test_symlinks_never_lead_out_of_the_corpus_and_every_skipped_one_is_reported(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    shutil.copy(MARITIME / STATUTE, corpus / "sub" / "海运条例.md")
    outside = tmp_path / "secret.md"
    outside.write_text("# 机密\n\n外部文件的内容。\n", encoding="utf-8")
    (corpus / "passwd.md").symlink_to("/etc/passwd")
    (corpus / "secret.md").symlink_to(outside)
    (corpus / "outdir").symlink_to(tmp_path)
    (corpus / "dangling.md").symlink_to(corpus / "gone.md")
    (corpus / "loop.md").symlink_to(corpus / "loop.md")
    (corpus / "inside.md").symlink_to(corpus / "sub" / "海运条例.md")
    (corpus / "sub" / "海运条例.md.meta.json").unlink(missing_ok=True)
    read = read_corpus(corpus)
    assert sorted(d.id for d in read.documents) == ["inside.md", "sub/海运条例.md"]
    assert not any("root:" in c.text or "外部文件" in c.text for c in read.chunks)
    assert sorted(read.problems) == [
        ("dangling.md", 0, f"symlink to {str(corpus / 'gone.md')!r} dangles (its target does not exist)"),
        ("loop.md", 0, "symlink loops (it leads back to itself)"),
        ("outdir", 0, "symlink leads outside the corpus folder"),
        ("passwd.md", 0, "symlink leads outside the corpus folder"),
        ("secret.md", 0, "symlink leads outside the corpus folder"),
    ]


def test_a_sidecar_linked_out_of_the_corpus_skips_its_document(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "labels.json").write_text('{"department": "x"}', encoding="utf-8")
    (tmp_path / "c" / "a.md").write_text("# 规定\n\n正文。\n", encoding="utf-8")
    (tmp_path / "c" / "a.md.meta.json").symlink_to(tmp_path / "labels.json")
    read = read_corpus(tmp_path / "c")
    assert read.documents == [] and sorted(read.problems) == [
        ("a.md", 0, "sidecar a.md.meta.json: symlink leads outside the corpus folder"),
        ("a.md.meta.json", 0, "symlink leads outside the corpus folder")]


def test_index_skips_bad_records_with_one_line_each_and_keeps_the_rest_searchable(home, capsys):
    corpus = home / "corpus"
    (corpus / "行政法规").mkdir(parents=True)
    shutil.copy(MARITIME / STATUTE, corpus / STATUTE)
    jsonl(corpus / "records.jsonl", json.dumps(GOOD, ensure_ascii=False), *(line for line, _ in BAD_RECORDS))
    (corpus / "passwd.md").symlink_to("/etc/passwd")
    assert main(["index", "--corpus", str(corpus), "--name", "kb", "--no-dense", "--no-wiki"]) == 0
    err = capsys.readouterr().err
    skipped = [line for line in err.splitlines() if line.startswith("skipped ")]
    assert len(skipped) == len(BAD_RECORDS) + 1 and "Traceback" not in err
    assert "skipped records.jsonl:2: record lacks id and text" in skipped
    assert "skipped passwd.md:0: symlink leads outside the corpus folder" in skipped
    assert (index_dir("kb") / "manifest.json").is_file()
    kb = open_index("kb")
    assert kb.bm25("引航员 适任证书", 1)[0][0].id == "good-1"
    assert kb.bm25("无船承运业务 保证金", 1)[0][0].doc_id == STATUTE
    assert not any(c.source.startswith("passwd") or "root:" in c.text for c in kb.chunks())


def orphans(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob(".*.tmp"))


def test_a_killed_compile_never_touches_the_published_wiki_and_the_next_run_removes_what_it_left(home):
    corpus = home / "corpus"
    corpus.mkdir()
    shutil.copy(MARITIME / STATUTE, corpus / "海运条例.md")
    wiki = home / "wiki"
    compile_wiki(corpus, wiki, progress=False)
    published = wiki.resolve()
    before = sorted((p.name, p.read_bytes()) for p in published.rglob("*") if p.is_file())
    (corpus / "海运条例.md").write_text((corpus / "海运条例.md").read_text(encoding="utf-8") + "\n第九十九条　附则。\n",
                                      encoding="utf-8")
    argv = ["compile-wiki", "--corpus", str(corpus), "--wiki", str(wiki)]
    counts = home / "events.json"
    shutil.copytree(published, home / "snapshot")

    def reset() -> None:
        for p in home.glob("wiki*"):
            p.unlink() if p.is_symlink() else shutil.rmtree(p)
        shutil.copytree(home / "snapshot", published)
        os.symlink(published.name, wiki)

    assert not run_child(argv, 0, counts)
    saving = sorted(set(json.loads(counts.read_text())["saving"]))
    abandoned: list[Path] = []
    for moment in saving[1::7]:          # kill -9 inside a write until one leaves a temp file behind
        reset()
        assert run_child(argv, moment, counts)
        abandoned = [p for p in home.glob("wiki.g*") if p != published and (orphans(p) or orphans(p / "entities"))]
        if abandoned:
            break
    assert abandoned, "no kill left a temp file"
    assert wiki.resolve() == published and orphans(published) == orphans(published / "entities") == []
    assert sorted((p.name, p.read_bytes()) for p in published.rglob("*") if p.is_file()) == before
    stale = time.time() - 120
    for p in [*abandoned, *abandoned[0].rglob("*")]:
        os.utime(p, (stale, stale))
    (published / "entities" / ".old.md.x1.tmp").write_text("x", encoding="utf-8")   # a killed write-back's
    os.utime(published / "entities" / ".old.md.x1.tmp", (stale, stale))
    live = published / "entities" / ".页面.md.live.tmp"      # a concurrent writer's file, just created: not an orphan
    live.write_text("x", encoding="utf-8")
    report = compile_wiki(corpus, wiki, progress=False)
    assert not abandoned[0].exists() and wiki.resolve() == report.generation != published
    assert orphans(published / "entities") == [live.name] and orphans(report.generation / "entities") == []
    assert (wiki / "relations.json").is_file()


def test_a_killed_classifier_fit_leaves_no_temp_file_after_the_next_fit(tmp_path):
    import numpy as np

    from lambdarag.skills.exemplars import read_fit, write_fit

    stale = tmp_path / ".fit.npz.k1ll3d.tmp"
    stale.write_bytes(b"half a fit")
    old = time.time() - 120
    os.utime(stale, (old, old))
    write_fit(tmp_path / "fit.npz", ({"fact": 0}, np.zeros((1, 2)), np.zeros(1)))
    assert orphans(tmp_path) == [] and read_fit(tmp_path / "fit.npz") is not None
