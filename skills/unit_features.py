"""What the learned evidence scorer reads of a candidate unit: a few dozen numbers in [0, 1] per unit.

The scaled signals (`evidence.signals`), the hit's rank, what the hand rules of `evidence.ranked` look for (a unit
stating the amount, path, count or negation asked, naming the option, command, file or shortcut asked), the share of
the question's words it holds, its kind, length and place. A linear score over them (`learned_scores`) is fitted by
scripts/fit_evidence.py on the labelled dev halves into a pack's data file (`Wording.evidence_weights`), read once.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from lambdarag.errors import ConfigError

KINDS = ("item", "row", "option", "command", "heading", "definition", "label", "pair", "synopsis", "term")
"""The unit kinds with a feature of their own (a plain sentence is the base)."""
FEATURES = ("bm25", "dense", "heading", "cosine", "prior", "first_hit", "states_asked", "states_count",
            "negates_asked", "names_asked", "measures_asked", "cover", "held", *(f"kind_{k}" for k in KINDS),
            "length", "short", "sentences", "place", "opening", "lead", "refers_back", "asked_words", "shipped",
            "shipped_first")
"""The features' names, in the order of a weight vector; the last two are the unit's place in the hand-set mix's
order (`evidence.ranked` without weights), so the fit may keep what that order knows."""
SHIPPED = ("shipped", "shipped_first")


def features(query: str, found: Sequence[Any], parts: dict[str, np.ndarray], cover: Sequence[float],
             held: Sequence[float], shipped: Sequence[int]) -> np.ndarray:
    """Returns the matrix of `FEATURES` (a row per candidate of `found`) for the question, from the signals `parts`,
    the coverage shares `cover` (partial words counting a little) and `held` (whole words only) and each unit's
    place in the hand-set mix's order (`shipped`, 0 first)."""
    from . import evidence as ev

    n = len(found)
    texts = [ev._LINK_TARGET.sub("]", c.text) for c in found]
    last = max((c.rank for c in found), default=0) or 1
    asked = [s for asks, s in ev.ASKED if asks.search(query)]
    count, negation = ev.counted(query), ev.negated(query)
    named = [s for asks, s in ev.NAMES_ASKED if asks.search(query)]
    measured = [ev.measure(noun) for noun in ev.dimensions(query)]
    wanted = len(set(ev.keywords(query))) or 1

    def has(patterns: Sequence[re.Pattern], text: str) -> float:
        return float(any(p.search(text) for p in patterns))

    zeros = np.zeros(n)
    columns = {
        "bm25": parts["bm25"], "dense": parts.get("dense", zeros), "heading": parts["heading"],
        "cosine": np.clip(parts.get("cosine", zeros), 0.0, 1.0),
        "prior": np.array([1 - c.rank / last for c in found]), "first_hit": np.array([c.rank == 0 for c in found]),
        "states_asked": np.array([has(asked, t) for t in texts]),
        "states_count": np.array([has([count] if count else [], t) for t in texts]),
        "negates_asked": np.array([has([negation] if negation else [], t) for t in texts]),
        "names_asked": np.array([has(named, t) for t in texts]),
        "measures_asked": np.array([has(measured, t) for t in texts]),
        "cover": np.asarray(cover, dtype=float), "held": np.asarray(held, dtype=float),
        **{f"kind_{k}": np.array([c.kind == k for c in found]) for k in KINDS},
        "length": np.array([min(math.log1p(len(c.text)) / math.log1p(600), 1.0) for c in found]),
        "short": np.array([len(c.text) < 40 for c in found]),
        "sentences": np.array([min(ev.sentence_count(c.text) - 1, 3) / 3 for c in found]),
        "place": np.array([1 / (1 + c.place) for c in found]), "opening": np.array([c.opening for c in found]),
        "lead": np.array([bool(c.lead) for c in found]),
        "refers_back": np.array([bool(ev.REFERS_BACK.search(c.text)) for c in found]),
        "asked_words": np.array([min(len(set(ev.keywords(t)) & set(ev.keywords(query))) / wanted, 1.0) for t in texts]),
        "shipped": np.array([1 / (1 + p) for p in shipped]), "shipped_first": np.array([p == 0 for p in shipped]),
    }
    return np.column_stack([np.asarray(columns[name], dtype=float) for name in FEATURES]) if n else np.zeros((0, len(FEATURES)))


@dataclass(frozen=True)
class Weights:
    """A fitted linear scorer: the features it reads (names of `FEATURES`), a weight for each, and whether
    `evidence.option_first` still overrides its order (the fit's choice)."""

    features: tuple[str, ...]
    weights: tuple[float, ...]
    overrides: bool = False

    def scores(self, matrix: np.ndarray) -> np.ndarray:
        """Returns each unit's learned score from its row of the `FEATURES` matrix."""
        columns = [FEATURES.index(name) for name in self.features]
        return matrix[:, columns] @ np.asarray(self.weights) if len(matrix) else np.zeros(0)


@lru_cache(maxsize=8)
def load_weights(path: Path) -> Weights:
    """Returns the weights a pack's data file holds (scripts/fit_evidence.py writes it), read once per path; a
    ConfigError names the file and the field when it is missing, unreadable or names a feature this code lacks."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ConfigError(f"evidence weights {path}: cannot be read ({e}); refit with scripts/fit_evidence.py") from e
    names, weights = data.get("features"), data.get("weights")
    if not isinstance(names, list) or not isinstance(weights, list) or len(names) != len(weights):
        raise ConfigError(f"evidence weights {path}: 'features' and 'weights' must be lists of one length")
    unknown = [n for n in names if n not in FEATURES]
    if unknown:
        raise ConfigError(f"evidence weights {path}: field 'features' names {unknown}, which unit_features.FEATURES "
                          f"lacks (it has {list(FEATURES)})")
    return Weights(tuple(names), tuple(float(w) for w in weights), bool(data.get("overrides", False)))
