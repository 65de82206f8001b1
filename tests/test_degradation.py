"""Indexes without vectors and corpora with bare records still answer: dense skills degrade visibly to lexical."""
from __future__ import annotations

import json

import pytest

from lambdarag.orchestration.config import DEMO_DOCS, load_config
from lambdarag.orchestration.knowledge import forget
from lambdarag.orchestration.search_unified import search
from lambdarag.domains.corpus import read_corpus
from lambdarag.domains.corpus import build_index
from lambdarag.domains.corpus import compile_wiki

QUESTIONS = {
    "fact": "船长在保障海上生命安全和防治船舶污染方面有什么权力？",
    "compare": "海上交通安全法与水污染防治法在船舶管理方面有何异同？",
    "relation": "船员条例由哪个部门主管？",
    "synthesis": "梳理船员管理法规体系",
    "temporal": "海洋环境保护法最新版本是哪一年修订的？",
}


@pytest.fixture(scope="module")
def lexical_only(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    mp = pytest.MonkeyPatch()
    mp.setenv("LAMBDARAG_HOME", str(home))
    mp.setenv("LAMBDARAG_FEEDBACK", "off")
    forget()
    docs = DEMO_DOCS
    build_index(docs, "nodense", dense=False, progress=False)
    compile_wiki(docs, home / "nodense" / "wiki", progress=False)
    yield "nodense"
    forget()
    mp.undo()


@pytest.mark.parametrize("query_type", sorted(QUESTIONS))
def test_every_route_answers_on_an_index_built_without_vectors(lexical_only, query_type):
    r = search(QUESTIONS[query_type], index=lexical_only, config=load_config(None))
    assert r.query_type == query_type
    assert r.answer and r.citations
    dense = [f for f in r.fallbacks if f["term"] == "embedding_search"]
    if "embedding_search" in r.expression:
        assert dense and "--no-dense" in dense[0]["reason"]
        assert "dense_as_lexical" in r.latency_ms
    else:
        assert not dense


def test_records_without_title_or_metadata_get_a_derived_title_and_no_nameless_entity(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    rows = [{"id": "r1", "text": "第一条　为了加强船舶管理，制定本规定。"}, {"id": "r2", "text": "船员应当持证上岗。", "title": " "}]
    (corpus / "notes.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n",
                                        encoding="utf-8")
    corpus_read = read_corpus(corpus)
    assert [d.title for d in corpus_read.documents] == ["notes r1", "notes r2"]
    report = compile_wiki(corpus, tmp_path / "wiki", progress=False)
    assert report.documents == 2
    from lambdarag.skills.store.graph import EntityGraph

    graph = EntityGraph.load(tmp_path / "wiki" / "relations.json")
    assert all(name.strip() for name in graph.g.nodes)
