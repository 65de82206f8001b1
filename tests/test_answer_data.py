"""The answer question sets validate: every quote is verbatim in a relevant file, compare sides are whole."""
import shutil
import subprocess
from collections import Counter

import pytest

from bench import answer_data, debian_docs, fresh_answers

CORPORA = sorted(p.name for p in answer_data.DATA.iterdir() if p.is_dir())


def records(corpus):
    return [r for half in answer_data.HALVES if (answer_data.DATA / corpus / f"{half}.jsonl").is_file()
            for r in answer_data.load(corpus, half)]


def installed(package):
    return shutil.which("dpkg-query") and subprocess.run(["dpkg-query", "-W", package], capture_output=True).returncode == 0


@pytest.mark.parametrize("corpus", CORPORA)
def test_every_quote_is_in_a_relevant_file_of_the_corpus(corpus, tmp_path):
    if corpus in debian_docs.SOURCES:
        package = debian_docs.SOURCES[corpus].package
        if not installed(package):
            pytest.skip(f"{package} is not installed (apt-get install {package})")
        debian_docs.write(corpus, tmp_path / corpus)
        folder = tmp_path / corpus
    else:
        folder = answer_data.answer_sets()[corpus].corpus
        if not folder.is_dir():
            pytest.skip(f"no corpus at {folder}")
    assert answer_data.problems(records(corpus), folder) == []


@pytest.mark.parametrize("corpus", CORPORA)
def test_both_halves_cover_every_type_in_the_corpus_language(corpus):
    for half in answer_data.HALVES:
        rows = answer_data.load(corpus, half)
        assert set(Counter(r["type"] for r in rows)) == set(answer_data.TYPES), (corpus, half)
    assert {r["lang"] for r in records(corpus)} == {"en" if corpus.endswith("-en") else "zh"}


def test_problems_name_what_is_wrong(tmp_path):
    (tmp_path / "a.md").write_text("# Links\nA hard link is a duplicate\nname for a file.\n", encoding="utf-8")
    good = {"qid": "c", "query": "hard link or symlink?", "type": "compare", "lang": "en", "relevant": ["a.md"],
            "evidence": ["a duplicate name for a file."],
            "sides": [{"name": "hard link", "evidence": ["a duplicate name for a file."], "relevant": ["a.md"]},
                      {"name": "symlink", "evidence": ["a duplicate name for a file."], "relevant": ["a.md"]}]}
    assert answer_data.problems([good], tmp_path) == []
    bad = [good | {"qid": "x", "relevant": ["a.md", "b.md"], "evidence": ["a symlink points"],
                   "sides": [{"name": "rpm", "evidence": ["a symlink points"], "relevant": ["a.md"]}]},
           {"qid": "x", "query": "q", "type": "survey", "lang": "fr", "relevant": ["a.md"], "evidence": ["hard link"]}]
    found = answer_data.problems(bad, tmp_path)
    assert "x: no file b.md" in found and "x: duplicate qid" in found
    assert "x: no relevant file contains 'a symlink points'" in found
    assert "x: a compare question, and only it, has two or more sides" in found
    assert "x: side 'rpm' is not named in the query" in found
    assert any("type 'survey'" in p for p in found) and any("lang 'fr'" in p for p in found)


@pytest.mark.parametrize("name,corpus", [(name, c) for name in fresh_answers.SETS for c in fresh_answers.corpora(name)])
def test_fresh_quotes_are_in_their_files_and_each_set_asks_what_it_says(name, corpus, tmp_path):
    package = debian_docs.SOURCES[corpus].package
    if not installed(package):
        pytest.skip(f"{package} is not installed (apt-get install {package})")
    debian_docs.write(corpus, tmp_path / corpus)
    rows = fresh_answers.load(corpus, name)
    compares = sum(r["type"] == "compare" for r in rows)
    assert compares >= len(rows) / 2 if name == "fresh" else compares == 0, (name, corpus)
    assert answer_data.problems(rows, tmp_path / corpus) == []
