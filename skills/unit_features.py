"""What the learned evidence scorer reads of a candidate unit (`FEATURES`, a few dozen numbers in [0, 1] per unit)
and the fitted weights a pack ships (`Weights`, `load_weights`).

The features are the scaled signals (`evidence.signals`), the hit's rank, what the hand rules of `evidence.ranked` look
for (a unit stating the amount, path, count or negation asked, naming the option, command, file or shortcut asked), the
share of the question's words it holds, its kind, length and place, and what it holds of what the question asks by
its type (a relation's ends, a temporal question's version or date: `ASKING`, `TYPED`); `evidence.feature_matrix`
computes them, since they read its rules. A linear score over them is fitted by scripts/fit_evidence.py on the labelled dev halves into a
pack's data file (`Wording.evidence_weights`), read once.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from lambdarag.errors import ConfigError

KINDS = ("item", "row", "option", "command", "heading", "definition", "label", "pair", "synopsis", "term")
"""The unit kinds with a feature of their own (a plain sentence is the base)."""
SHIPPED = ("shipped", "shipped_first")
ASKING = ("dated_when", "marks_time", "links_ends", "link_word", "heading_asked", "defines_asked", "cosine_rank")
"""What a unit holds of what the question asks by its type and words (`evidence.asked_columns`)."""
TYPED = tuple((t, s) for t in ("fact", "relation", "temporal", "synthesis", "compare") for s in ("bm25", "dense"))
"""(question type, signal): the signal where the question is of that type, else 0, so a type may weigh it apart."""
FEATURES = ("bm25", "dense", "heading", "cosine", "prior", "first_hit", "states_asked", "states_count",
            "negates_asked", "names_asked", "measures_asked", "cover", "held", *(f"kind_{k}" for k in KINDS),
            "length", "short", "sentences", "place", "opening", "lead", "refers_back", "asked_words", *SHIPPED,
            *ASKING, *(f"{t}_{s}" for t, s in TYPED))
"""The features' names, in the order of a weight vector; `SHIPPED` is the unit's place in the hand-set mix's order
(`evidence.ranked` without weights), so the fit may keep what that order knows."""


PLACES = 9
"""The decimals a learned score keeps (`Weights.scores`): far below any difference the fit makes, above the product's
rounding noise."""


@dataclass(frozen=True)
class Weights:
    """A fitted linear scorer: the features it reads (names of `FEATURES`), a weight for each, and whether
    `evidence.option_first` still overrides its order (the fit's choice)."""

    features: tuple[str, ...]
    weights: tuple[float, ...]
    overrides: bool = False

    def scores(self, matrix: np.ndarray) -> np.ndarray:
        """Returns each unit's learned score from its row of the `FEATURES` matrix, to `PLACES` decimals: the product's
        last bits follow the matrix's layout and a row's place in it, and two units with one row must tie (the mix's
        order then breaks it), whatever other columns the matrix holds."""
        columns = [FEATURES.index(name) for name in self.features]
        return np.round(matrix[:, columns] @ np.asarray(self.weights), PLACES) if len(matrix) else np.zeros(0)


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
    if not all(isinstance(w, (int, float)) and math.isfinite(w) for w in weights):
        raise ConfigError(f"evidence weights {path}: field 'weights' holds a value that is not a finite number; refit "
                          "with scripts/fit_evidence.py")
    return Weights(tuple(names), tuple(float(w) for w in weights), bool(data.get("overrides", False)))
