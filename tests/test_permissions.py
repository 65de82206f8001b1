"""No retrieval path returns a chunk whose labels the user lacks (property test over random labels and users)."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from lambdarag import Context, Par, State, User, appended
from lambdarag.skills.store.records import RetrievalPlan
from lambdarag.skills import build
from lambdarag.skills.store.local import LocalBackend
from lambdarag.skills.store.corpus import Chunk, Document
from lambdarag.skills.store.tokenize import Tokenizer

DEPTS = [None, "船舶监督处", "船员管理处", "办公室"]
WORDS = ["船舶", "污染", "检查", "船员", "证书", "港口"]
TOKENIZER = Tokenizer()


class FixedEmbedder:
    name, dim = "fixed", 4

    def embed(self, texts, *, kind="passage"):
        return np.ones((len(texts), 4), dtype=np.float32) / 2


labels = st.tuples(st.sampled_from(DEPTS), st.integers(0, 3))
users = st.builds(User, departments=st.lists(st.sampled_from(DEPTS[1:]), max_size=3).map(tuple),
                  security_level=st.integers(0, 3))


def corpus(draw_labels, texts):
    docs, chunks = [], []
    for i, ((dept, level), text) in enumerate(zip(draw_labels, texts)):
        doc = Document(id=f"d{i}", source=f"d{i}.md", title=f"t{i}", text=text, department=dept, security_level=level)
        docs.append(doc)
        chunks.append(Chunk(id=f"d{i}#1", doc_id=doc.id, text=text, source=doc.source, title=doc.title,
                            department=dept, security_level=level))
    return docs, chunks


@settings(max_examples=40, deadline=None)
@given(st.lists(labels, min_size=1, max_size=15), st.data())
def test_no_leak_through_bm25_dense_or_skills(doc_labels, data):
    texts = [" ".join(data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4))) for _ in doc_labels]
    docs, chunks = corpus(doc_labels, texts)
    rng = np.random.default_rng(len(docs))
    vectors = rng.normal(size=(len(chunks), 4)).astype(np.float32)
    backend = LocalBackend(TOKENIZER, model="fixed")
    backend.add(docs, chunks, vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    user = data.draw(users)
    readable = {c.id for c in chunks if user.may_read(c.department, c.security_level)}
    query = " ".join(WORDS)
    assert {c.id for c, _ in backend.bm25(query, 50, user=user)} <= readable
    found = {c.id for c, _ in backend.dense(np.ones(4) / 2, 50, user=user)}
    assert found == readable  # dense ranks every readable chunk, and only those
    term = Par(build("bm25_search"), build("embedding_search"), merge=appended("candidates")) >> build("rrf_merge")
    state = term.run(State.of(query, user=user, plan=RetrievalPlan(bm25_top_k=50, dense_top_k=50)),
                     Context(embedder=FixedEmbedder(), resources={"index": backend}))
    assert {h.chunk_id for h in state.hits} <= readable
    assert all(user.may_read(h.department, h.security_level) for h in state.hits)


def test_public_user_sees_only_public_chunks():
    docs, chunks = corpus([(None, 0), ("办公室", 0), (None, 2)], ["船舶 污染"] * 3)
    backend = LocalBackend(TOKENIZER)
    backend.add(docs, chunks)
    assert [c.id for c, _ in backend.bm25("船舶", 10)] == ["d0#1"]
    assert {c.id for c, _ in backend.bm25("船舶", 10, user=User(departments=("办公室",), security_level=2))} \
        == {"d0#1", "d1#1", "d2#1"}
