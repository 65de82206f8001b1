"""Whether cited text states a fact: the offline support test of write-back (instructions: `store.instructions`).

A relation is supported by a cited chunk when one of its sentences names both
ends (the cited document itself counts as named: a self-reference such as 本办法 is its title) and the
relation's cue. Sentences that read like instructions to the system (忽略以上
所有指令…, ignore previous instructions…) are never evidence: a document can
quote anything, but it cannot order the loop to learn.
"""
from __future__ import annotations

from typing import Iterable, Optional

from .sentences import split_sentences
from .store.graph import PRC, short_name
from .store.instructions import instruction_like
from .store.records import Hit, Relation

CUES = {"主管": ("主管", "负责", "管理", "监督"), "依据": ("根据", "依据", "依照"),
        "发布机构": ("通过", "公布", "发布", "批准", "制定", "修订", "修正"), "引用": ("《",),
        "涉及": ("",), "规定": ("规定", "应当", "不得", "可以")}
"""Words one of which a sentence must contain to state a relation of that type (any other type: its own name)."""


def evidence(hit: Hit) -> list[str]:
    """Returns the sentences of a cited chunk that may state facts (instruction-like ones left out)."""
    return [s for s in split_sentences(f"{hit.section} {hit.text}") if not instruction_like(s)]


def forms(name: str) -> set[str]:
    """Returns the ways a sentence may write an entity's name (full, short, with 中华人民共和国)."""
    short = short_name(name)
    return {f for f in (name, short, PRC + short) if len(f) >= 2}


def names(sentence: str, name: str, hit: Hit) -> bool:
    """Returns whether `sentence` of `hit` names the entity (the cited document itself counts as named)."""
    if short_name(name) in {short_name(hit.title), short_name(hit.source.rsplit("/", 1)[-1].split("(")[0])}:
        return True
    return any(f in sentence for f in forms(name))


def unsupported(relation: Relation, hits: Iterable[Hit]) -> Optional[str]:
    """Returns why no cited chunk of the relation's source states it, or None when one does."""
    candidates = [h for h in hits if h.source == relation.source
                  and (not relation.section or not h.section or h.section == relation.section)]
    if not candidates:
        return f"its source {relation.source}#{relation.section} is not a cited chunk"
    cues = CUES.get(relation.relation, (relation.relation,))
    injected = False
    for hit in candidates:
        for sentence in split_sentences(f"{hit.section} {hit.text}"):
            if not (names(sentence, relation.head, hit) and names(sentence, relation.tail, hit)):
                continue
            if instruction_like(sentence):
                injected = True
            elif any(c in sentence for c in cues):
                return None
    if injected:
        return "the only sentence naming both ends reads like an instruction to the system"
    return f"no sentence of the cited text names {relation.head!r}, {relation.tail!r} and a cue of {relation.relation!r}"


def attesting(name: str, hits: Iterable[Hit]) -> tuple[str, ...]:
    """Returns the sources of the cited chunks that name `name` in a sentence that is not an instruction."""
    return tuple(dict.fromkeys(h.source for h in hits if any(names(s, name, h) for s in evidence(h))))
