"""Word coverage: the share of a question's weighted words a sentence holds, the measure refusals are set in.

A word weighs its idf among the candidate sentences times its weight in the
(sub-)question; a Chinese word a sentence holds only in part counts a little
(权力 → 有权), an English one counts whole in any inflection (gives → given).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from .sentences import english_stem_in
from .store.records import Hit

THRESHOLD = 0.4
"""Share of a (sub-)question's weighted words a sentence must cover to answer it."""


@dataclass(frozen=True)
class SubQuestion:
    """One part of a question: a label and the words it is about (weighted)."""

    label: str
    focus: tuple[tuple[str, float], ...]


def _weights(sub: SubQuestion, sentences: Sequence[tuple[str, Hit, int]]) -> dict[str, float]:
    n = len(sentences)
    out = {}
    for word, weight in sub.focus:
        df = sum(word in s.lower() for s, _, _ in sentences)
        out[word] = weight * (1.0 + math.log((n + 1) / (df + 1)))
    return out


def word_share(word: str, sentence: str) -> float:
    """Returns 1 when the sentence contains the word (letters in any case), else half the share of its
    characters it contains; an English word counts only whole, in any inflection (gives → given).

    Chinese paraphrase often keeps one character of a word (权力 → 有权), so a
    partial match counts a little instead of nothing.
    """
    sentence = sentence.lower()
    if word in sentence:
        return 1.0
    if word.isascii() and word.isalpha():
        return 1.0 if english_stem_in(word, sentence) else 0.0
    return 0.5 * sum(c in sentence for c in word) / len(word)


def coverage(sub: SubQuestion, sentences: Sequence[tuple[str, Hit, int]], partial: bool = True) -> list[float]:
    """Returns, per sentence, the share of the sub-question's weighted words it holds (`word_share`; with
    `partial` false a word counts only when held whole, in any inflection)."""
    weights = _weights(sub, sentences)
    total = sum(weights.values()) or 1.0
    return [sum(w * share for w, share in ((w, word_share(word, s)) for word, w in weights.items())
                if partial or share == 1.0) / total for s, _, _ in sentences]


