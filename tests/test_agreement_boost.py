"""The agreement boost (issue 45): `lambdarag feedback fit` chooses it with the head weights, under the unseen bound,
so a store gets its own boost or none; it is stored with the params, and the config may fix it."""
from __future__ import annotations

import numpy as np

from lambdarag import Context
from lambdarag.orchestration import learning
from lambdarag.orchestration.learning import Confirmations, corpus_view, learn_pairs, open_learned
from lambdarag.skills.dense import query_vector
from lambdarag.skills.store.learned import GATE_FEATURES, SIGNALS, LearnedParams
from lambdarag.skills.store.vectors import default_embedder
from tests.test_learning import ANSWER, CONFIRMED, OTHER, PARAPHRASE, backend_of, corpus  # noqa: F401

PLAIN = 12


def row(unseen: bool, agree: float) -> learning.Row:
    """Returns a fitted-on row of 12 plain hits whose one neighbour-confirmed chunk is a seen row's answer (plain's
    6th) or, for an unseen row, plain's 4th above its answer (plain's 1st), with near questions agreeing `agree`."""
    ids = [f"p{i}" for i in range(PLAIN)]
    matrix = np.zeros((PLAIN, 1 + len(SIGNALS)))
    matrix[:, 0] = np.linspace(3.0, 0.0, PLAIN)
    matrix[3 if unseen else 5, 1 + SIGNALS.index("neighbours")] = 1.0
    answer = "p0" if unseen else "p5"
    base = 1.0 if unseen else 1.0 / np.log2(7)
    gate = np.full(len(GATE_FEATURES), 0.95)                  # the gate cannot tell the rows apart
    return learning.Row(0.95, unseen, float(base), {ks: (ids, matrix, gate) for ks in learning.NEIGHBOURING},
                        {answer}, PLAIN, {(*ks, n): (ids, matrix) for ks in learning.NEIGHBOURING
                                          for n in learning.CANDIDATE_COUNTS[1:]},
                        {s: agree for _, s in learning.NEIGHBOURING})


def test_the_fit_boosts_the_neighbour_signal_only_where_near_questions_agree_and_spares_unseen_questions():
    rows = [row(False, 0.9) for _ in range(30)] + [row(True, 0.0) for _ in range(30)]
    params, report = learning.choose(rows)
    assert params.agreement_boost > 0 and report["agreement_boost"] == params.agreement_boost
    assert params.weights["neighbours"] + params.agreement_boost >= 2.0 > params.weights["neighbours"]
    assert report["ndcg10_learned"] == 1.0                    # seen answers first, unseen ones kept
    fixed, report = learning.choose(rows, boosts=(0.0,))       # the config fixed it at 0
    assert fixed.agreement_boost == 0.0 and report["ndcg10_learned"] < 1.0


def test_the_fit_leaves_the_boost_off_when_unseen_questions_neighbours_agree_as_much():
    rows = [row(False, 0.9) for _ in range(30)] + [row(True, 0.9) for _ in range(30)]
    params, _ = learning.choose(rows)
    assert params.agreement_boost == 0.0


def test_a_fitted_boost_is_stored_with_the_params_and_a_config_value_overrides_it(corpus, tmp_path):
    from lambdarag.orchestration.config import DEFAULT_CONFIG, parse_config
    text = DEFAULT_CONFIG.read_text(encoding="utf-8").replace("    minSources: 2\n",
                                                               "    minSources: 2\n    agreementBoost: null\n")
    assert parse_config(text).orchestration.feedback.agreement_boost is None     # null: the fit chooses it
    assert LearnedParams.from_dict(LearnedParams(agreement_boost=2.0).to_dict()).agreement_boost == 2.0
    backend, embedder = backend_of(corpus), default_embedder()
    learn_pairs(tmp_path, backend, embedder, "confirm", [(CONFIRMED, [ANSWER])], refit=False)
    Confirmations(tmp_path).save_params(LearnedParams(agreement_boost=4.0), {})
    assert open_learned(tmp_path, backend, embedder).params.agreement_boost == 4.0      # null: the fit's
    assert open_learned(tmp_path, backend, embedder, agreement_boost=0.0).params.agreement_boost == 0.0


def test_a_fitted_on_question_holds_the_agreement_of_its_near_confirmed_questions(corpus, tmp_path):
    backend, embedder = backend_of(corpus), default_embedder()
    view, base = corpus_view(backend), learning.base_ranking(backend, embedder)
    vector = query_vector(Context(embedder=embedder), PARAPHRASE)
    for name, other, agree in (("split", OTHER[1], 0.0), ("agree", ANSWER, 1.0)):
        learn_pairs(tmp_path / name, backend, embedder, "confirm", [(CONFIRMED, [ANSWER]), (OTHER[0], [other])],
                    refit=False)
        learned = open_learned(tmp_path / name, backend, embedder)
        [fitted] = learning.question_rows(view, learned, [(PARAPHRASE, vector, {ANSWER})], base)
        assert fitted.agreement == {s: agree for _, s in learning.NEIGHBOURING}


def test_the_tail_models_fitted_on_rows_rank_their_head_with_the_boost_where_near_questions_agree():
    k, s = learning.NEIGHBOURING[0]
    params = LearnedParams(weights=dict.fromkeys(SIGNALS, 0.0), gate=0.5, neighbours=k, sharpness=s,
                           agreement_boost=4.0)
    agreeing, split = learning.tail_rows([row(False, 0.9), row(False, 0.0)], params)
    assert agreeing.head[0] == "p5" and split.head[0] == "p0"


def test_a_fit_whose_boost_is_fixed_at_zero_never_reads_the_agreement(corpus, tmp_path, monkeypatch):
    # the default config fixes the boost at 0: each fitted-on row's agreement would be read for nothing
    backend, embedder = backend_of(corpus), default_embedder()
    learn_pairs(tmp_path, backend, embedder, "confirm", [(CONFIRMED, [ANSWER]), (OTHER[0], [OTHER[1]])], refit=False)
    view, base = corpus_view(backend), learning.base_ranking(backend, embedder)
    learned = open_learned(tmp_path, backend, embedder)
    vector = query_vector(Context(embedder=embedder), PARAPHRASE)
    read = []
    monkeypatch.setattr(type(learned), "agreeing", lambda self, *a: read.append(a[-1]) or 0.0)
    [row_off] = learning.question_rows(view, learned, [(PARAPHRASE, vector, {ANSWER})], base, agreement=False)
    assert row_off.agreement == {} and read == []
    [row_on] = learning.question_rows(view, learned, [(PARAPHRASE, vector, {ANSWER})], base)
    assert sorted(read) == sorted(learning.SHARPNESSES)      # once per sharpness, not per neighbour setting
