"""One behavioural suite over both index backends: in-process (`local`) and Milvus (embedded milvus-lite).

BM25 scores differ by design (Milvus uses the Lucene idf, log(1 + (N−n+0.5)/(n+0.5)),
we use Okapi's floored idf), so the suite compares *which* chunks match and
the sets of top results, not scores; near-tied pairs may swap order.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from lambdarag import State, User
from lambdarag.skills.store.records import TimeRange
from lambdarag.errors import ConfigError
from lambdarag.orchestration.config import DEMO_DOCS
from lambdarag.skills import build
from lambdarag.skills.store.local import LocalBackend
from lambdarag.skills.store.index import open_backend
from lambdarag.domains.corpus import build_backend
from lambdarag.skills.store.corpus import Chunk, Document, to_hits
from lambdarag.domains.corpus import read_corpus
from lambdarag.skills.store.milvus import MilvusBackend, filter_expression
from lambdarag.skills.store.tokenize import Tokenizer

KINDS = ["local", "milvus"]
TOKENIZER = Tokenizer()
DIM = 8
QUERIES = ["船舶污染海洋环境怎么处罚", "船员适任证书", "海上交通事故调查", "港口经营许可", "国际海运条例 最新", "航道保护",
           "渔港水域", "船舶吨税 税率", "海警 职责", "船舶登记 所有权", "水污染防治", "内河 运输 经营"]


def vector_of(chunk_id: str) -> np.ndarray:
    """Returns a fixed pseudo-random unit vector per chunk id (the same on both backends)."""
    seed = int.from_bytes(hashlib.sha1(chunk_id.encode()).digest()[:4], "little")
    v = np.random.default_rng(seed).normal(size=DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def make(kind: str, uri: str, name: str, docs, chunks, dense: bool = True):
    model, dim = ("fixed", DIM) if dense else (None, None)
    backend = LocalBackend(TOKENIZER, model=model) if kind == "local" \
        else MilvusBackend.create(uri, name, TOKENIZER, model=model, dim=dim)
    backend.add(docs, chunks, np.stack([vector_of(c.id) for c in chunks]) if dense else None)
    return backend


@pytest.fixture(scope="module")
def milvus_uri(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("milvus") / "milvus.db")


@pytest.fixture(scope="module")
def demo(milvus_uri):
    """Returns {kind: backend} over the demo corpus (154 chunks), dense with fixed vectors."""
    corpus = read_corpus(DEMO_DOCS, progress=False)
    return {kind: make(kind, milvus_uri, "demo_suite", corpus.documents, corpus.chunks) for kind in KINDS}


# ---- BM25 and dense agree across backends

def test_bm25_matches_the_same_chunks_and_top_results(demo):
    local, milvus = demo["local"], demo["milvus"]
    for q in QUERIES:
        assert {c.id for c, _ in local.bm25(q, 1000)} == {c.id for c, _ in milvus.bm25(q, 1000)}, q
        a, b = local.bm25(q, 5), milvus.bm25(q, 5)
        assert {c.id for c, _ in a} == {c.id for c, _ in b}, q
        near_tie = a[1][1] > 0.98 * a[0][1]  # idf formulas differ, so near-ties may swap (海上交通事故调查)
        assert a[0][0].id == b[0][0].id or near_tie, q


def test_whole_documents_rank_alike_from_the_local_counts_and_from_tokenized_chunks(demo):
    # issue 41: the local index sums its own term counts per document; Milvus keeps none, so its chunks are tokenized
    (sources, local), (again, milvus) = demo["local"].document_words(), demo["milvus"].document_words()
    assert sorted(sources) == sorted(again) and len(sources) == len({c.source for c in demo["local"].chunks()})
    order = [again.index(s) for s in sources]
    for q in QUERIES:
        words = TOKENIZER(q)
        assert np.allclose(local.scores(words), milvus.scores(words)[order]), q


def test_dense_returns_the_same_ranking(demo):
    query = vector_of("a query")
    local, milvus = demo["local"].dense(query, 10), demo["milvus"].dense(query, 10)
    assert [c.id for c, _ in local] == [c.id for c, _ in milvus]
    assert np.allclose([s for _, s in local], [s for _, s in milvus], atol=1e-4)


@pytest.mark.parametrize("kind", KINDS)
def test_chunks_round_trip_with_their_metadata(demo, kind):
    backend = demo[kind]
    some = demo["local"].chunks()[40]
    assert backend.chunk(some.id) == some
    with pytest.raises(KeyError):
        backend.chunk("no such chunk")
    assert sorted(c.id for c in backend.chunks()) == sorted(c.id for c in demo["local"].chunks())
    assert backend.documents() == demo["local"].documents()


def test_engine_hybrid_equals_client_side_rrf(demo):
    from lambdarag.skills.store.records import Hit, RankedList
    from lambdarag.skills.fusion import rrf

    milvus, query = demo["milvus"], "船舶污染海洋环境怎么处罚"
    vector = vector_of("hybrid")

    def ranked(name, found):
        return RankedList(retriever=name, query=query, hits=tuple(Hit(chunk_id=c.id, text="", score=s) for c, s in found))

    client = rrf([ranked("bm25", milvus.bm25(query, 20)), ranked("dense", milvus.dense(vector, 20))], k=60, top=10)
    engine = milvus.hybrid(query, vector, 10, depth=20)
    mine = {c.id: round(s, 6) for c, s in engine}
    theirs = {h.chunk_id: round(h.score, 6) for h in client}
    cut = min(mine.values())  # RRF ties (rank r in one list = rank r in the other) may split at the cut
    assert {i: s for i, s in mine.items() if s > cut} == {i: s for i, s in theirs.items() if s > cut}
    assert sorted(mine.values()) == sorted(theirs.values())


# ---- permissions: no path leaks (hypothesis over users and filters, every label combination present)

DEPTS = [None, "船舶监督处", "船员管理处", "办公室"]
WORDS = ["船舶", "污染", "检查", "船员", "证书", "港口"]


@pytest.fixture(scope="module")
def labelled(milvus_uri):
    docs, chunks = [], []
    for i, (dept, level, extra) in enumerate((d, lvl, w) for d in DEPTS for lvl in range(4) for w in WORDS[1:4]):
        text = f"船舶 {extra} {WORDS[(i % 5) + 1]}"
        doc = Document(id=f"d{i}", source=f"d{i}.md", title=f"t{i}", text=text, department=dept,
                       security_level=level, family=f"f{i % 3}", meta={"digest": str(i)})
        docs.append(doc)
        chunks.append(Chunk(id=f"d{i}#1", doc_id=doc.id, text=text, source=doc.source, title=doc.title,
                            department=dept, security_level=level, family=doc.family, kind="text"))
    return chunks, {kind: make(kind, milvus_uri, "labels", docs, chunks) for kind in KINDS}


users = st.builds(User, departments=st.lists(st.sampled_from(DEPTS[1:]), max_size=3).map(tuple),
                  security_level=st.integers(0, 3)) | st.just(User.operator())
filters = st.one_of(st.just({}), st.builds(lambda f: {"family": f}, st.lists(st.sampled_from(["f0", "f1", "f2"]), max_size=2)),
                    st.builds(lambda d: {"department": d}, st.lists(st.sampled_from(DEPTS), min_size=1, max_size=2)))


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(user=users, where=filters, word=st.sampled_from(WORDS))
def test_no_chunk_leaks_past_permissions_or_filters(labelled, kind, user, where, word):
    chunks, backends = labelled
    backend = backends[kind]

    def passes(c):
        return all(getattr(c, f) in (v if isinstance(v, list) else [v]) for f, v in where.items())

    readable = {c.id for c in chunks if user.may_read(c.department, c.security_level) and passes(c)}
    assert {c.id for c, _ in backend.bm25("船舶", 100, user=user, filters=where)} == readable
    assert {c.id for c, _ in backend.bm25(word, 100, user=user, filters=where)} <= readable
    assert {c.id for c, _ in backend.dense(vector_of(word), 100, user=user, filters=where)} == readable
    if kind == "milvus":
        assert {c.id for c, _ in backend.hybrid(word, vector_of(word), 100, user=user, filters=where)} <= readable


def test_filter_expression_quotes_values_and_mirrors_may_read():
    assert filter_expression(None) == "security_level <= 0 and (department is null)"
    expr = filter_expression(User(departments=("b", 'a"x'), security_level=2), {"date": ["2020-01-01", None]})
    assert expr == ('security_level <= 2 and (department is null or department in ["a\\"x", "b"]) '
                    'and (date in ["2020-01-01"] or date is null)')
    with pytest.raises(ConfigError, match="valid fields: family"):
        filter_expression(None, {"colour": "red"})


# ---- time

@pytest.mark.parametrize("kind", KINDS)
def test_time_filters(demo, kind):
    backend = demo[kind]
    dated = backend.bm25("海洋环境保护", 50, filters={"date": "2017-11-04"})
    assert dated and {c.date for c, _ in dated} == {"2017-11-04"}
    undated = backend.bm25("船舶", 50, filters={"date": [None]})
    assert {c.id for c, _ in undated} == {c.id for c, _ in demo["local"].bm25("船舶", 50, filters={"date": [None]})}
    assert undated and all(c.date is None for c, _ in undated)
    hits = to_hits(backend.bm25("海洋环境保护法 海洋环境 污染", 30), "bm25")
    assert {h.date for h in hits if h.family == "海洋环境保护法"} >= {"2017-11-04", "2023-10-24"}
    state = build("time_filter").run(State.of("最新", hits=hits, time_range=TimeRange(latest=True)),
                                     _ctx(backend))
    assert {h.date for h in state.hits if h.family == "海洋环境保护法"} == {"2023-10-24"}


def _ctx(backend):
    from lambdarag import Context

    return Context(resources={"index": backend})


# ---- incremental add / delete, idempotent and resumable builds

def write(folder: Path, name: str, *articles: str) -> None:
    body = "\n\n".join(f"第{n}条 {text}" for n, text in zip("一二三四五", articles))
    (folder / f"{name}(2020-01-01).md").write_text(f"# {name}\n\n{body}\n", encoding="utf-8")


def backend_and_folder(kind: str, milvus_uri: str, tmp_path: Path, monkeypatch) -> tuple[dict, Path]:
    """Returns the backend spec of `kind` and an empty documents folder, under a data home of the test's own."""
    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path / "home"))
    docs = tmp_path / "docs"
    docs.mkdir()
    return {"kind": kind, "uri": milvus_uri}, docs


@pytest.mark.parametrize("kind", KINDS)
def test_incremental_build_is_idempotent_and_tracks_edits(kind, milvus_uri, tmp_path, monkeypatch):
    where, docs = backend_and_folder(kind, milvus_uri, tmp_path, monkeypatch)
    write(docs, "甲法", "船舶应当登记。", "渔船另行规定。")
    write(docs, "乙法", "港口经营许可。", "引航员考试。")
    write(docs, "丙法", "灯塔维护。")
    first = build_backend(where, docs, "inc", dense=False, progress=False)
    n, fingerprint = len(first.chunks()), first.fingerprint()
    assert n == 5 and {c.id for c, _ in first.bm25("灯塔", 5)} == {"丙法(2020-01-01).md#第一条"}
    again = build_backend(where, docs, "inc", dense=False, progress=False)
    assert again.fingerprint() == fingerprint and len(again.chunks()) == n
    write(docs, "乙法", "港口经营许可。")            # edited: one article fewer
    (docs / "丙法(2020-01-01).md").unlink()        # deleted
    write(docs, "丁法", "航标管理。")               # added
    after = build_backend(where, docs, "inc", dense=False, progress=False)
    ids = [c.id for c in after.chunks()]
    assert len(ids) == len(set(ids)) == 4
    assert after.bm25("灯塔", 5) == [] and after.bm25("引航员", 5) == []
    assert [c.id for c, _ in after.bm25("航标", 5)] == ["丁法(2020-01-01).md#第一条"]
    assert set(after.documents()) == {"甲法(2020-01-01).md", "乙法(2020-01-01).md", "丁法(2020-01-01).md"}
    assert after.fingerprint() != fingerprint
    assert open_backend(where, "inc").fingerprint() == after.fingerprint()


@pytest.mark.parametrize("kind", KINDS)
def test_an_index_records_its_corpus_profile_and_a_new_profile_rebuilds_it(kind, milvus_uri, tmp_path, monkeypatch):
    where, docs = backend_and_folder(kind, milvus_uri, tmp_path, monkeypatch)
    write(docs, "甲法", "船舶应当登记。", "渔船另行规定。")
    assert build_backend(where, docs, "prof", dense=False, progress=False).domain == "prc_statutes"   # auto
    assert open_backend(where, "prof").domain == "prc_statutes"
    generic = build_backend(where, docs, "prof", dense=False, progress=False, domain="generic")
    assert generic.domain == open_backend(where, "prof").domain == "generic"
    assert {c.id for c in generic.chunks()} != {"甲法(2020-01-01).md#第一条", "甲法(2020-01-01).md#第二条"}


def test_interrupted_milvus_build_resumes_without_duplicates(milvus_uri, tmp_path, monkeypatch):
    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path / "home"))
    where = {"kind": "milvus", "uri": milvus_uri}
    docs = tmp_path / "docs"
    docs.mkdir()
    write(docs, "甲法", "船舶应当登记。", "渔船另行规定。")
    write(docs, "乙法", "港口经营许可。")
    backend = build_backend(where, docs, "resume", dense=False, progress=False)
    # a crash after a batch's chunks were upserted but before its documents were recorded:
    backend.client.delete(backend.docs_collection, ids=["甲法(2020-01-01).md"])
    resumed = build_backend(where, docs, "resume", dense=False, progress=False)
    assert "甲法(2020-01-01).md" in resumed.documents()
    rows = resumed.client.query(resumed.collection, filter="", output_fields=["count(*)"])
    assert rows[0]["count(*)"] == 3 == len(resumed.chunks())


def test_open_backend_names_the_indexes_that_exist(demo, milvus_uri):
    with pytest.raises(ConfigError, match="indexes there: .*demo_suite"):
        open_backend({"kind": "milvus", "uri": milvus_uri}, "nope")
    with pytest.raises(ConfigError, match="valid kinds: local, milvus"):
        open_backend({"kind": "solr"}, "demo")


# ---- wiring: config → knowledge base → search, and the global --config option

def test_search_and_cli_run_on_milvus_when_the_config_says_so(milvus_uri, tmp_path, capsys):
    from lambdarag.orchestration.cli import main
    from lambdarag.orchestration.config import load_config
    from lambdarag.orchestration.knowledge import forget, open_knowledge
    from lambdarag.orchestration.search_unified import search

    cfg = tmp_path / "agent-config.yml"
    cfg.write_text(f"retrieval:\n  index: demo\n  backend:\n    kind: milvus\n    uri: {milvus_uri}\n"
                   "  skills:\n    embedding:\n      enabled: false\n", encoding="utf-8")
    try:
        kb = open_knowledge(load_config(cfg))
        assert isinstance(kb.index, MilvusBackend) and not kb.index.has_dense
        result = search("船舶吨税的税率是多少", config=cfg)
        assert result.hits and any("船舶吨税法" in h.source for h in result.hits)
        assert main(["--config", str(cfg), "ask", "船舶吨税的税率是多少", "--json"]) == 0
        assert "船舶吨税法" in capsys.readouterr().out
    finally:
        forget("demo")
