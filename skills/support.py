"""Whether cited text states a fact: the offline support test of write-back (instructions: `store.instructions`).

A relation is supported by a cited chunk when one of its sentences names both
ends (the cited document itself counts as named: a self-reference such as 本办法 is its title) and the
relation's cue, names and cues written as the corpus profile says. Sentences that read like instructions to
the system (忽略以上所有指令…, ignore previous instructions…) are never evidence: a document can
quote anything, but it cannot order the loop to learn.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Optional

from .sentences import split_sentences
from .store.graph import Names
from .store.instructions import instruction_like
from .store.records import Hit, Relation

if TYPE_CHECKING:
    from .profile import CorpusProfile


def evidence(hit: Hit) -> list[str]:
    """Returns the sentences of a cited chunk that may state facts (instruction-like ones left out)."""
    return [s for s in split_sentences(f"{hit.section} {hit.text}") if not instruction_like(s)]


def names(sentence: str, name: str, hit: Hit, forms: Names) -> bool:
    """Returns whether `sentence` of `hit` names the entity in one of the ways `forms` (the profile's names) says text
    writes it (the cited document itself counts as named)."""
    short = forms.short_name
    if short(name) in {short(hit.title), short(hit.source.rsplit("/", 1)[-1].split("(")[0])}:
        return True
    return any(f in sentence for f in forms.name_forms(name) if len(f) >= 2)


def unsupported(relation: Relation, hits: Iterable[Hit], profile: "CorpusProfile") -> Optional[str]:
    """Returns why no cited chunk of the relation's source states it, or None when one does: a sentence must name
    both ends and one of the profile's cue words for the relation's type (`support_cues`; else the type itself)."""
    candidates = [h for h in hits if h.source == relation.source
                  and (not relation.section or not h.section or h.section == relation.section)]
    if not candidates:
        return f"its source {relation.source}#{relation.section} is not a cited chunk"
    cues = profile.graph.support_cues.get(relation.relation, (relation.relation,))
    injected = False
    for hit in candidates:
        for sentence in split_sentences(f"{hit.section} {hit.text}"):
            if not (names(sentence, relation.head, hit, profile.names)
                    and names(sentence, relation.tail, hit, profile.names)):
                continue
            if instruction_like(sentence):
                injected = True
            elif any(c in sentence for c in cues):
                return None
    if injected:
        return "the only sentence naming both ends reads like an instruction to the system"
    return f"no sentence of the cited text names {relation.head!r}, {relation.tail!r} and a cue of {relation.relation!r}"


def attesting(name: str, hits: Iterable[Hit], forms: Names) -> tuple[str, ...]:
    """Returns the sources of the cited chunks that name `name` in a sentence that is not an instruction."""
    return tuple(dict.fromkeys(h.source for h in hits if any(names(s, name, h, forms) for s in evidence(h))))
