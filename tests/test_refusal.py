"""When the offline answer refuses (issue 40): a unit sharing few of a long question's words is still quoted when
the embedder puts it near the question (`Wording.answer_near`), unless the question names a thing the documents
lack, the unit holds none of its words, no embedder measured it, or the profile lets words alone decide."""
from __future__ import annotations

import pytest

from lambdarag import Context, State
from lambdarag.domains.generic import ANSWER_NEAR
from lambdarag.skills import generate
from lambdarag.skills.evidence import Candidate, Scored
from lambdarag.skills.phrasing import EN, ZH
from lambdarag.domains import profile_named
from lambdarag.skills.store.records import Hit
from tests.test_evidence import GENERIC

RAM = "瘦客户端能够仅有 256 MiB RAM 而且是 400 MHz 的处理器。"
HIT = Hit(chunk_id="hw.md#", source="hw.md", title="硬件需求", text=RAM, score=1.0)
ASKED = "旧电脑拿来当瘦客户端，内存最少要多少？"
REFUSALS = (ZH["refusal"], EN["refusal"])


def answer(monkeypatch, query: str, near, held: float = 0.1, profile=GENERIC) -> str:
    """Returns the offline answer to `query` when the ranking holds only the RAM sentence, covering `held` of the
    question's words (under the floor) at cosine `near`."""
    unit = Scored(Candidate(RAM, hit=HIT, rank=0), 1.0, held, held, 1.0, near)
    monkeypatch.setattr(generate, "ranked", lambda *a, **k: [unit])
    state = State.of(query, hits=(HIT,), query_type="fact")
    return generate.extractive_answer(state, Context(resources={"profile": profile}))["answer"]


def test_a_unit_the_embedder_puts_near_the_question_answers_it_though_it_holds_few_of_its_words(monkeypatch):
    assert "256 MiB RAM" in answer(monkeypatch, ASKED, ANSWER_NEAR + 0.04)


@pytest.mark.parametrize("query, near, held", [
    (ASKED, ANSWER_NEAR - 0.03, 0.1),                       # far in meaning: an off-topic question's nearest unit
    (ASKED, None, 0.1),                                     # no embedder measured it
    (ASKED, ANSWER_NEAR + 0.04, 0.0),                       # none of the question's words
    ("How much memory does a Kubernetes node need at least?", ANSWER_NEAR + 0.04, 0.1),   # a name they lack
], ids=["far", "unembedded", "no-word", "missing-name"])
def test_a_question_is_still_refused_when_the_near_unit_is_not_enough(monkeypatch, query, near, held):
    out = answer(monkeypatch, query, near, held)
    assert out.startswith(REFUSALS) and "256 MiB" not in out


def test_a_statute_answer_is_decided_by_words_alone(monkeypatch):
    out = answer(monkeypatch, ASKED, 0.99, profile=profile_named("prc_statutes"))
    assert out.startswith(REFUSALS) and "256 MiB" not in out


def test_a_near_unit_below_the_floor_is_quoted_only_instead_of_a_refusal(monkeypatch):
    # faq-zh-cn f01 (Debian 这个名字应该怎么读): a near sentence on something else must not push out the one holding
    # the question's words
    said = "本计划的名字的发音为 Deb'-ee-en，重音在第一个音节。"
    hit = Hit(chunk_id="name.md#", source="name.md", title="Debian 一词如何发音", text=said, score=0.9)
    near = Scored(Candidate(RAM, hit=HIT, rank=0), 1.0, 0.1, 0.1, 1.0, ANSWER_NEAR + 0.04)
    held = Scored(Candidate(said, hit=hit, rank=1), 0.9, 0.3, 0.3, 0.5, ANSWER_NEAR - 0.1)
    monkeypatch.setattr(generate, "ranked", lambda *a, **k: [near, held])
    state = State.of("Debian 这个名字应该怎么读？", hits=(HIT, hit), query_type="fact")
    out = generate.extractive_answer(state, Context(resources={"profile": GENERIC}))["answer"]
    assert "Deb'-ee-en" in out and "256 MiB" not in out
