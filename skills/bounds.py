"""How much an offline answer quotes (issue 40): a non-synthesis answer at most `evidence.QUOTED` sentences.

When the units an answer would quote hold more sentences than that, the longest are cut first, each to its
sentence covering the question best (an option line to its first, which names the option); a table row of
several cells (one record) and a term's definition (`evidence.DEFINITION` sentences, one statement) stay whole
(`evidence.cuttable`); a short sentence with the next one carrying on its subject (`evidence.continued`: Massif is a
heap profiler. It measures…) is cut only after every other unit.
When cutting is not enough, the last units are left out, never the first `keep` (a comparison's sides).
"""
from __future__ import annotations

from typing import Sequence

from .coverage import SubQuestion, coverage
from .evidence import QUOTED, Scored, cuttable, quoted_sentences, sentence_count, sentence_of
from .sentences import keywords


def cut(unit: Scored, query: str) -> Scored:
    """Returns the unit quoting only its sentence that covers the question's words best (the first among equals;
    an option line's first, naming the option), a verbatim part of the unit."""
    parts = quoted_sentences(unit.text)
    if unit.candidate.kind == "option":
        best = parts[0]
    else:
        asked = SubQuestion(query, tuple((w, 1.0) for w in keywords(query)))
        shares = coverage(asked, [(p, unit.hit, 0) for p in parts])
        best = parts[shares.index(max(shares))]
    return sentence_of(unit, best)


def total(units: Sequence[Scored]) -> int:
    """Returns how many sentences the units quote together."""
    return sum(sentence_count(u.text) for u in units)


def bounded(units: Sequence[Scored], query: str, keep: int = 1, budget: int = QUOTED) -> list[Scored]:
    """Returns `units` quoting at most `budget` sentences where cutting and leaving out allow (see the module
    docstring); the units kept stay in their order. Past the bound only when the first `keep` alone are."""
    out = list(units)
    # a sentence and the one carrying on its subject (`evidence.continued`) are cut last: the second says what it does
    for i in sorted(range(len(out)), key=lambda i: (out[i].candidate.kind == "pair", -sentence_count(out[i].text))):
        if total(out) <= budget:
            break
        if cuttable(out[i]):
            out[i] = cut(out[i], query)
    while total(out) > budget and len(out) > keep:
        out.pop()
    return out
