"""How many units an answer quotes beyond the first (issue 40, round 26): read off the learned score's share of the
question, not the hand-set mix's scale; a profile without learned weights (the statute pack) keeps `SECOND`."""
from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from lambdarag import Context
from lambdarag.domains import profile_named
from lambdarag.domains.generic import GenericProfile
from lambdarag.skills.evidence import MIX_FLOOR, SECOND, SHARE, Candidate, Scored, fact, ranked, relation, temporal
from lambdarag.skills.store.records import Hit
from tests.test_evidence import sourced


def unit(text: str, score: float, share: float | None = None, source: str = "guide.md") -> Scored:
    """Returns a scored unit of its own hit: its mix `score` and its learned `share` of the question."""
    hit = Hit(chunk_id=f"{source}#0", source=source, title=source.removesuffix(".md"), score=1.0, text=text)
    return Scored(Candidate(text=text, hit=hit, rank=0), score, 1.0, 1.0, share=share)


RIGHT = "Hold down Ctrl while dragging an object to copy it."
WEAK = "Press Shift and click each object."
ALSO = "A copied object keeps the styles of the original."


def test_a_weak_second_scoring_near_the_first_by_the_mix_is_left_out_when_its_learned_share_is_small():
    # the learned first unit scores lower by the mix than the mix's best: SECOND of it lets a weak unit in
    ranking = [unit(RIGHT, 0.60, share=0.68), unit(WEAK, 0.58, share=0.05)]
    assert ranking[1].score >= SECOND * ranking[0].score
    assert [s.text for s in fact(ranking)] == [RIGHT]


def test_a_second_whose_learned_share_is_close_to_the_firsts_is_quoted_though_the_mix_scores_it_lower():
    ranking = [unit(RIGHT, 0.90, share=0.45), unit(ALSO, 0.74, share=0.40)]
    assert ranking[1].score < SECOND * ranking[0].score
    assert [s.text for s in fact(ranking)] == [RIGHT, ALSO]


def test_a_second_the_mix_scores_far_below_the_first_stays_out_however_close_its_share():
    ranking = [unit(RIGHT, 0.90, share=0.45), unit(ALSO, 0.40, share=0.44)]
    assert [s.text for s in fact(ranking)] == [RIGHT]


def test_without_learned_shares_the_mixs_bar_decides_as_before():
    assert [s.text for s in fact([unit(RIGHT, 0.60), unit(WEAK, 0.58)])] == [RIGHT, WEAK]
    assert [s.text for s in fact([unit(RIGHT, 0.90), unit(ALSO, 0.74)])] == [RIGHT]


def test_a_temporal_answer_reads_the_same_share_and_a_relation_quotes_every_unit_naming_both_ends():
    dated = [unit("Since version 7.2 a copied object keeps its styles.", 0.9, 0.6),
             unit("Version 7.1 added the toolbar.", 0.85, 0.03)]
    assert len(temporal(dated)) == 1
    assert len(temporal([replace(s, share=None) for s in dated])) == 2
    # several units may say how two things relate and the fit favours one of them: the mix's bar keeps them all
    ends = ("Ctrl", "object")
    also = "Ctrl copies an object when held while dragging."
    assert len(relation([unit(RIGHT, 0.9, 0.7), unit(also, 0.85, 0.02)], ends)) == 2


HITS = sourced(("copy.md", "Hold down Ctrl while dragging an object to copy it. The copy lands where you drop it."),
               ("select.md", "Press Shift and click each object to select several objects."),
               ("styles.md", "A copied object keeps the styles of the original object."))


def profile_weighing(tmp_path, weights: dict[str, float]):
    """Returns the generic profile reading a weights file of `weights` (feature: weight)."""
    path = tmp_path / f"weights-{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps({"features": list(weights), "weights": list(weights.values())}), encoding="utf-8")
    return type("Weighed", (GenericProfile,), {"wording": replace(GenericProfile.wording, evidence_weights=path)})()


def test_the_learned_ranking_gives_each_unit_its_softmax_share_of_the_question(tmp_path):
    profile = profile_weighing(tmp_path, {"bm25": 3.0, "dense": 3.0})
    ranking = ranked("How do I copy an object?", HITS, profile, Context(resources={"profile": profile}))
    shares = [s.share for s in ranking]
    assert all(s is not None and 0 < s < 1 for s in shares) and sum(shares) == pytest.approx(1.0)
    assert shares[0] == max(shares)
    doubled = profile_weighing(tmp_path, {"bm25": 6.0, "dense": 6.0})
    sharper = ranked("How do I copy an object?", HITS, doubled, Context(resources={"profile": doubled}))
    assert sharper[0].share > shares[0]      # the fit's confidence, not a fixed scale


def test_a_profile_without_learned_weights_gives_no_share():
    statutes = profile_named("prc_statutes")
    hits = sourced(("law.md", "第一条 船舶应当配备合格的船员。"), ("law.md", "第二条 船员应当持有适任证书。"))
    assert all(s.share is None for s in ranked("船舶应当配备什么船员？", hits, statutes,
                                                Context(resources={"profile": statutes})))


def test_the_replay_quotes_the_units_fact_quotes():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from answer_count import quoted, share_bar

    texts = [RIGHT, "This keeps the copy where you drop it.", WEAK, ALSO]
    scores, shares = [0.9, 0.88, 0.6, 0.8], [0.5, 0.3, 0.05, 0.1]
    units = [unit(t, s, p) for t, s, p in zip(texts, scores, shares)]
    q = {"order": np.arange(4), "share": np.array(shares), "mix": np.array(scores), "sentences": np.ones(4, int),
         "back": np.array([0.0, 1.0, 0.0, 0.0]), "pair": np.zeros(4, bool)}
    assert [texts[i] for i in quoted(q, share_bar(SHARE, MIX_FLOOR))] == [s.text for s in fact(units)] == [RIGHT, ALSO]
