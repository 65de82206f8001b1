"""The learned evidence scorer (issue 40): its weights file, its errors, and the fit that writes it."""
from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from lambdarag import Context
from lambdarag.domains import profile_named
from lambdarag.domains.generic import EVIDENCE_WEIGHTS, GenericProfile
from lambdarag.errors import ConfigError
from lambdarag.skills.evidence import ranked
from lambdarag.skills.store.records import Hit
from lambdarag.skills.unit_features import FEATURES, load_weights

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import fit_evidence  # noqa: E402
from evidence_units import read_units  # noqa: E402


def test_a_weights_file_naming_features_loads_and_scores_by_name(tmp_path):
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"features": ["dense", "bm25"], "weights": [2.0, -1.0]}), encoding="utf-8")
    weights = load_weights(path)
    matrix = np.zeros((2, len(FEATURES)))
    matrix[0, FEATURES.index("bm25")], matrix[1, FEATURES.index("dense")] = 1.0, 1.0
    assert weights.scores(matrix).tolist() == [-1.0, 2.0]


def test_a_missing_weights_file_is_a_config_error_naming_it(tmp_path):
    with pytest.raises(ConfigError, match="absent.json"):
        load_weights(tmp_path / "absent.json")


def test_a_feature_the_code_lacks_is_a_config_error_naming_the_field(tmp_path):
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"features": ["bm25", "sparkle"], "weights": [1.0, 1.0]}), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"'features' names \['sparkle'\]"):
        load_weights(path)


def test_weights_and_features_of_different_lengths_are_a_config_error(tmp_path):
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"features": ["bm25", "dense"], "weights": [1.0]}), encoding="utf-8")
    with pytest.raises(ConfigError, match="one length"):
        load_weights(path)


@pytest.mark.parametrize("weight", ["NaN", "Infinity", '"heavy"', "null"])
def test_a_weight_that_is_not_a_finite_number_is_a_config_error_naming_the_field(tmp_path, weight):
    path = tmp_path / "w.json"      # json.dumps writes NaN and Infinity as Python reads them back
    path.write_text(f'{{"features": ["bm25", "dense"], "weights": [1.0, {weight}]}}', encoding="utf-8")
    with pytest.raises(ConfigError, match="field 'weights'"):
        load_weights(path)


def synthetic(seed: int, books: int = 3, n: int = 60) -> list[dict]:
    """Questions of ten units with two features, the labelled unit the best by `first − second / 2`."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        X = rng.random((10, 2))
        y = np.zeros(10)
        y[np.argmax(X[:, 0] - 0.5 * X[:, 1])] = 1
        out.append({"X": X, "y": y, "book": f"b{i % books}", "corpus": f"b{i % books}"})
    return out


def test_the_fit_recovers_a_known_preference():
    w = fit_evidence.fit(synthetic(0), penalty=0.01)
    assert w[0] > 0 > w[1] and w[0] > abs(w[1])
    held_out = synthetic(1)
    assert sum(q["y"][fit_evidence.order(q, w)[0]] for q in held_out) >= 0.8 * len(held_out)


def test_leaving_a_book_out_ranks_only_that_book_with_weights_fitted_on_the_others():
    questions = synthetic(2)
    got = fit_evidence.lobo(questions, penalty=0.01)
    assert sorted(got) == ["b0", "b1", "b2"] and all(len(rows) == 20 for rows in got.values())
    assert sum(a for rows in got.values() for a, _ in rows) >= 0.8 * len(questions)


def test_a_fit_without_any_labelled_unit_is_a_named_error():
    with pytest.raises(ValueError, match="labels"):
        fit_evidence.fit([{"X": np.ones((3, 2)), "y": np.zeros(3), "book": "b", "corpus": "b"}], penalty=0.1)


MIX = type("MixProfile", (GenericProfile,), {"wording": replace(GenericProfile.wording, evidence_weights=None)})()
LEARNED = profile_named("generic")
DEFINING = "The mail folder hook runs when you open a folder."
REPEATING = "A mail folder hook is a hook of mail folders, and hooks of folders are mail folder hooks."


def best(query: str, profile) -> str:
    hits = (Hit(chunk_id="hooks.md#0", source="hooks.md", title="hooks", score=1.0,
                text=f"{DEFINING} It is set with a pattern and a command.\n\nExample settings follow."),
            Hit(chunk_id="intro.md#1", source="intro.md", title="intro", score=0.9,
                text=f"Any mail folder hook may use a folder hook command. {REPEATING}"))
    return ranked(query, hits, profile, Context(resources={"profile": profile}))[0].text


def test_the_fitted_scorer_quotes_the_defining_sentence_over_one_repeating_the_question():
    assert best("What is a mail folder hook?", MIX).startswith(REPEATING[:40])    # the hand-set mix's choice
    assert best("What is a mail folder hook?", LEARNED) == DEFINING


def test_the_shipped_weights_are_what_the_fit_script_writes_from_the_committed_units():
    shipped = json.loads(EVIDENCE_WEIGHTS.read_text(encoding="utf-8"))
    data = read_units(fit_evidence.UNITS)
    refit = fit_evidence.weights_file(data, tuple(shipped["features"]), shipped["fit"]["penalty"],
                                      shipped["overrides"], fit_evidence.UNITS)
    assert shipped["fit"]["units"] == fit_evidence.UNITS.name
    assert json.dumps(refit, indent=1) + "\n" == EVIDENCE_WEIGHTS.read_text(encoding="utf-8")
    assert set(load_weights(EVIDENCE_WEIGHTS).features) <= set(FEATURES)


def choice(at1: float, worst: int, features: str = "all") -> dict:
    """A judged choice: its pooled @1 and the most questions a book loses against the mix."""
    return {"features": features, "penalty": 0.01, "overrides": True, "pooled": {"@1": at1, "@2": at1},
            "lost": {"book": worst, "other": 0}}


def test_a_refit_ranking_below_the_weights_in_place_is_not_chosen():
    choices = {"even": choice(0.53, 1), "uneven": choice(0.55, 2)}
    assert fit_evidence.chosen(choices, {"all": 3}, mix=0.50, in_place=0.52) == "even"
    assert fit_evidence.chosen(choices, {"all": 3}, mix=0.50, in_place=0.545) is None     # below what is shipped
    assert fit_evidence.chosen(choices, {"all": 3}, mix=0.53, in_place=0.50) is None      # no better than the mix
    assert fit_evidence.chosen({"uneven": choice(0.55, 2)}, {"all": 3}, mix=0.50, in_place=0.50) is None
