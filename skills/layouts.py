"""Offline answer layouts for the multi-document question types: compare, synthesis and relation.

- compare: one labelled block per named side (a document the question names, else a named thing), each with
  its best unit and its own citation, per aspect when the profile compares on aspects (with its same/different
  statement), then a unit that names every side when one says how they relate;
- synthesis: up to six relevant points from distinct documents (`evidence.diverse`);
- relation: the edge first (A —relation→ B), then the unit that states it; without an edge, the unit naming
  both ends.

The units come from `evidence.ranked` (scored against the question). Each layout returns None when it cannot
lay out an answer (e.g. fewer than two sides), and the generic extractive answer is used instead. Words come
from the profile's phrasing in the question's language (skills.phrasing).
"""
from __future__ import annotations

import re
from typing import Any, Mapping, Optional, Sequence

from lambdarag import State
from .store.records import Hit

from .context import cited, marker
from .edges import asked_relations
from .evidence import Scored, diverse, names, naming
from .profile import CorpusProfile
from .sentences import STOPWORDS, covered, keywords, proper_nouns
from .store.tokenize import language_of


_LATIN = re.compile(r"(?<![A-Za-z0-9_./+-])[A-Za-z](?:[\w.+/-]*[A-Za-z0-9_+])?(?: [A-Za-z](?:[\w.+/-]*[A-Za-z0-9_+])?)*"
                    r"(?![A-Za-z0-9_./+-])", re.A)
"""A run of Latin words in a Chinese question (Pre-Depends, X Window): a name."""
_CONNECTIVE = re.compile(r"\b(?:and|or|with|from|vs\.?|versus|against|to)\b|和|与|及|跟|同|对比|相比|比较|还是|或", re.I)
_COMMAND = re.compile(r"(?<![A-Za-z0-9_./+-])[a-z][a-z0-9_.+-]*[a-z0-9+](?![A-Za-z0-9_./+-])")


def label(title: str) -> str:
    """Returns a title fit to label a quoted line: without the sentence ends (？。!) that would cut the line in
    two where the check splits an answer into claims."""
    return re.sub(r"\s*[。！？!?]+\s*", " ", title).strip()


def best_sentence(ranking: Sequence[Scored], cues: Sequence[str] = (), used: frozenset[str] = frozenset()
                  ) -> Optional[Scored]:
    """Returns the best-scored unit not yet `used`, preferring one that states a cue word (an aspect's)."""
    fresh = [s for s in ranking if s.text not in used]
    cued = [s for s in fresh if any(c.lower() in s.text.lower() for c in cues)]
    return (cued or fresh or [None])[0]


def line(sentence: str, hit: Hit, p: Mapping[str, str]) -> str:
    """Returns a quoted sentence ending in the language's full stop, then its citation marker."""
    return f"{sentence.rstrip('；;，,。.：:')}{p['end']}{marker(hit, p['source'])}"


def answer_of(lines: Sequence[str], hits: Sequence[Hit], p: Mapping[str, str]) -> dict[str, Any]:
    text = p["according"] + "\n" + "\n".join(lines)
    citations, _ = cited(text, hits)
    return {"answer": text, "citations": citations}


# -- compare ---------------------------------------------------------------------


def verdict(a: str, b: str, names: tuple[str, str], aspect: str, p: Mapping[str, str]) -> str:
    """Returns the same/different statement for two sides' sentences on one aspect."""
    wa, wb = set(keywords(a)), set(keywords(b))
    shared = [w for w in keywords(a) if w in wb and w not in STOPWORDS][:4]
    sep = p["separator"]
    if covered(a, b) >= 0.6 or (shared and len(shared) >= 0.6 * min(len(wa), len(wb))):
        return p["same"].format(aspect=aspect, a=names[0], b=names[1], shared=sep.join(shared) or aspect)
    only_a = [w for w in keywords(a) if w not in wb][:3]
    only_b = [w for w in keywords(b) if w not in wa][:3]
    same = p["both"].format(shared=sep.join(shared)) if shared else ""
    return p["different"].format(aspect=aspect, same=same, a=names[0], b=names[1],
                                 only_a=sep.join(only_a) or p["own"], only_b=sep.join(only_b) or p["own"])


def compared(state: State, hits: Sequence[Hit], profile: CorpusProfile, ranking: Sequence[Scored]
             ) -> tuple[list[tuple[str, list[Scored]]], bool]:
    """Returns the sides a comparison names, each with its units best first, and whether they are documents:
    the named documents present in the evidence, else the named things of the question (a unit naming one, or
    in a hit titled with it; among equals, one from a document that speaks for the other side too, where the two
    are set side by side)."""
    sides = [s for s in getattr(state, "sides", ()) if any(h.source == s.source for h in hits)]
    if len(sides) >= 2:
        return [(s.title, [r for r in ranking if r.hit.source == s.source]) for s in sides[:2]], True
    query = state.original_query
    # a Chinese question's Latin words are names; an English one's capitalised words and the commands it names
    latin = [w for w in _LATIN.findall(query) if len(w) >= 2] if language_of(query) == "zh" \
        else [*proper_nouns(query), *commands(query, hits)]
    named = [e for e in [*profile.names.query_entities(query), *latin] if e in query and e not in STOPWORDS]
    named += [e for e in state.entities if e in query and len(e) >= 3 and e not in STOPWORDS]
    # a name inside another (Pre in Pre-Depends) is no side unless the question also says it on its own (Depends)
    named = [e for e in dict.fromkeys(named)
             if query.count(e) > sum(o.count(e) for o in dict.fromkeys(named) if o != e and e in o)]
    named = paired(query, sorted(named, key=query.find))
    if len(named) < 2:
        return [], False
    said = {e: e if naming(ranking, e) else leading(e) for e in named}   # X Window System as texts say it
    speaking = {e: {r.hit.source for r in ranking if names(r.text, said[e])} for e in named}

    def key(unit: Scored, e: str) -> tuple[bool, ...]:
        beside = set().union(*(speaking[o] for o in named if o != e))   # a document speaking for another side
        return (*speaks_for(unit, said[e], list(said.values())), unit.hit.source not in beside)

    return [(e, sorted(naming(ranking, said[e]), key=lambda r: key(r, e))) for e in named], False


def commands(query: str, hits: Sequence[Hit]) -> list[str]:
    """Returns the lower-case words of an English question that some hit opens a sentence or a list item with in
    lower case (cron is the daemon…, apt is a second front end…): commands and other names, which a sentence
    never capitalises, where an everyday word would be."""
    text = "\n".join(h.text for h in hits)
    return [w for w in dict.fromkeys(_COMMAND.findall(query)) if w not in STOPWORDS and re.search(
        r"(?:^\s*(?:[-*+]\s+)?|[.!?]\s+)[\"“`*]*" + re.escape(w) + r"(?![A-Za-z0-9_-])", text, re.M)]


def paired(query: str, named: Sequence[str]) -> list[str]:
    """Returns the two names a comparison sets side by side when it names more: the first two in a row joined by a
    connective and at most three other words (Wayland with the X Window System: not network-capable), else all."""
    for a, b in zip(named, named[1:]):
        gap = query[query.find(a) + len(a):query.find(b)]
        if len(named) > 2 and _CONNECTIVE.search(gap) and len(re.findall(r"\w+", gap)) <= 4:
            return [a, b]
    return list(named)


def leading(name: str) -> str:
    """Returns the first two words of a longer name (X Window of X Window System), which a text may say alone."""
    words = name.split()
    return " ".join(words[:2]) if len(words) > 2 else name


_DEFINES = re.compile(r"\s*(?:is|are|was|means|refers|stands|[:：]|是|指|即|为)", re.I)
"""What follows a name that a sentence defines: a copula (cron is the daemon…, X Window 是…) or a colon."""


def speaks_for(unit: Scored, name: str, named: Sequence[str]) -> tuple[bool, bool, bool, bool]:
    """Returns the sort key of a unit for one side, units that speak for it first: one whose text names it, or
    whose title names it and no other side (its own law, its own page); then one defining it (opening with the
    name, quoted or before a copula: "Suggests" Many users…, cron is the daemon…); then one naming no other side;
    then one opening with the name."""
    text, title = unit.text, unit.hit.title + " " + unit.hit.source
    others = [o for o in named if o != name]
    own = names(text, name) or (names(title, name) and not any(names(title, o) for o in others))
    opens = re.match(r"[\s\"“「『*`]*" + re.escape(name) + r"(?![A-Za-z0-9_-])[\"”」』*`]*", text, re.I)
    defines = opens is not None and (opens.group(0)[-1:] in "\"”」』*`" or _DEFINES.match(text, opens.end()) is not None)
    return not own, not defines, any(names(text, o) for o in others), opens is None


def compare_answer(state: State, hits: Sequence[Hit], profile: CorpusProfile,
                   ranking: Sequence[Scored]) -> Optional[dict[str, Any]]:
    """Returns one labelled, cited block per side (per aspect when the sides are documents and the profile
    compares on aspects), then a unit naming every side; None with fewer than two sides."""
    sides, documents = compared(state, hits, profile, ranking)
    if len(sides) < 2:
        return None
    query = state.original_query
    p = profile.wording.phrasing(query)
    aspects = [a for a in (profile.comparison.named_aspects(query) or profile.comparison.aspects(query)) if a[0]] if documents else []
    lines: list[str] = []
    used: set[str] = set()
    for aspect, cues in aspects or [("", ())]:
        found = []
        for _, own in sides:    # each side its own unit: one quoted for a side is not quoted again for the next
            found.append(best_sentence(own, cues, frozenset(used)))
            used.update([found[-1].text] if found[-1] is not None else [])
        if aspect:
            lines.append(p["aspect"].format(aspect=aspect))
        for (name, _), got in zip(sides, found):
            if got is None:
                lines.append(p["side_not_found"].format(title=label(name), aspect=aspect) if aspect
                             else p["side_missing"].format(title=label(name)))
                continue
            lines.append((p["side"].format(title=label(name)) if aspect else p["about"].format(label=label(name)))
                         + ("" if aspect else "\n- ") + line(got.text, got.hit, p))
        if aspect and all(g is not None for g in found):
            markers = "".join(dict.fromkeys(marker(g.hit, p["source"]) for g in found))
            said = verdict(found[0].text, found[1].text, (sides[0][0], sides[1][0]), aspect, p)
            lines.append(f"- {said}{p['end']}{markers}")
    both = [r for r in ranking if r.text not in used and all(names(r.text, name) for name, _ in sides)]
    if both and not aspects:
        lines.append(p["between"] + "\n- " + line(both[0].text, both[0].hit, p))
    return answer_of(lines, hits, p)


# -- synthesis -------------------------------------------------------------------


def synthesis_answer(state: State, hits: Sequence[Hit], profile: CorpusProfile,
                     ranking: Sequence[Scored]) -> Optional[dict[str, Any]]:
    """Returns up to six relevant points from distinct documents, each labelled with its title and cited, or
    None when fewer than two documents have one."""
    p = profile.wording.phrasing(state.original_query)
    points = diverse(ranking)
    if len(points) < 2:
        return None
    return answer_of([p["side"].format(title=label(s.hit.title or s.hit.source)) + line(s.text, s.hit, p)
                      for s in points], hits, p)


# -- relation --------------------------------------------------------------------


def relation_answer(state: State, hits: Sequence[Hit], profile: CorpusProfile,
                    ranking: Sequence[Scored]) -> Optional[dict[str, Any]]:
    """Returns each edge of an asked type (A —relation→ B) followed by the passage stating it, or None without such edges."""
    asked = asked_relations(state.original_query, profile.graph.relation_cues)
    p = profile.wording.phrasing(state.original_query)
    first: dict[tuple[str, str, str], Any] = {}
    for r in state.relations:
        if r.relation in asked:
            first.setdefault((r.head, r.relation, r.tail), r)  # each fact once, from its best-ranked edge
    edges = list(first.values())[:3]
    lines: list[str] = []
    for rel in edges:
        stating = [h for h in hits if h.source == rel.source and (not rel.section or h.section == rel.section)]
        lines.append(f"- {rel.head} —{rel.relation}→ {rel.tail}：")
        own = [r for r in ranking if r.hit in stating]
        got = best_sentence(own, (rel.head, rel.tail)) if own else None
        if got is not None:
            lines.append(p["basis"] + line(got.text, got.hit, p))
    if not any(l.startswith(p["basis"]) for l in lines):
        return None
    return answer_of(lines, hits, p)


LAYOUTS = {"compare": compare_answer, "synthesis": synthesis_answer, "relation": relation_answer}


def laid_out(state: State, hits: Sequence[Hit], profile: CorpusProfile,
             ranking: Sequence[Scored]) -> Optional[dict[str, Any]]:
    """Returns the answer in the layout of the question's type, or None when that type has none or it does not apply."""
    layout = LAYOUTS.get(state.query_type or "")
    return layout(state, hits, profile, ranking) if layout and ranking else None
