"""Offline answer layouts for the multi-document question types: compare, synthesis and relation.

- compare: per aspect (the corpus profile's, or what the question asks), one
  cited line per side and a same/different statement citing both;
- synthesis: one cited line per document, whole sentences only, none repeated;
- relation: the edge first (A —relation→ B), then the passage that states it.

Each returns None when it cannot lay out an answer (e.g. fewer than two sides),
and the generic extractive answer is used instead. Words come from the
profile's phrasing in the question's language (skills.phrasing).
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from lambdarag import State
from .store.records import Hit

from .context import cited, marker
from .edges import asked_relations
from .profile import CorpusProfile
from .sentences import STOPWORDS, covered, keywords, split_sentences

_ENDS = "。！？；!?;."


def whole_sentences(hit: Hit, profile: CorpusProfile) -> list[str]:
    """Returns the complete sentences of a hit (ending in 。！？；!?; or an English full stop), without the labels
    the profile numbers units with."""
    return [profile.without_label(s).strip() for s in split_sentences(hit.text)
            if s.rstrip().endswith(tuple(_ENDS)) and len(profile.without_label(s).strip()) >= 8]


def best_sentence(hits: Sequence[Hit], words: Sequence[str], profile: CorpusProfile, cues: Sequence[str] = (),
                  used: frozenset[str] = frozenset()) -> Optional[tuple[str, Hit, float]]:
    """Returns the sentence of `hits` that best covers `words` and `cues`, with its hit and score."""
    best = None
    for rank, hit in enumerate(hits):
        for sentence in whole_sentences(hit, profile):
            if sentence in used:
                continue
            low = sentence.lower()
            score = sum(len(w) for w in words if w.lower() in low) + sum(len(c) for c in cues if c.lower() in low)
            score -= 0.01 * rank
            if best is None or score > best[2]:
                best = (sentence, hit, score)
    return best


def line(sentence: str, hit: Hit, p: Mapping[str, str]) -> str:
    """Returns a quoted sentence ending in the language's full stop, then its citation marker."""
    return f"{sentence.rstrip('；;，,。.')}{p['end']}{marker(hit, p['source'])}"


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


def compare_answer(state: State, hits: Sequence[Hit], profile: CorpusProfile) -> Optional[dict[str, Any]]:
    """Returns the per-aspect comparison of the named sides, or None with fewer than two sides in the evidence."""
    sides = [s for s in getattr(state, "sides", ()) if any(h.source == s.source for h in hits)]
    if len(sides) < 2:
        return None
    sides = sides[:2]
    query = state.original_query
    p = profile.phrasing(query)
    topic = [w for w in profile.without_aspects(keywords(query))
             if not any(w in s.name or w in s.title for s in sides)]
    lines: list[str] = []
    used: set[str] = set()
    # an aspect the question names, else its own topic, else the profile's default aspects
    label = "".join(topic) if "".join(topic) in query else p["separator"].join(topic)
    aspects = profile.named_aspects(query) or ([(label, tuple(topic))] if topic else profile.compare_aspects(query))
    for aspect, cues in aspects:
        found = []
        for side in sides:
            own = [h for h in hits if h.source == side.source]
            found.append(best_sentence(own, topic, profile, cues, frozenset(used)))
        lines.append(p["aspect"].format(aspect=aspect))
        for side, got in zip(sides, found):
            if got is None or got[2] <= 0:
                lines.append(p["side_not_found"].format(title=side.title, aspect=aspect))
            else:
                used.add(got[0])
                lines.append(p["side"].format(title=side.title) + line(got[0], got[1], p))
        if all(g is not None and g[2] > 0 for g in found):
            markers = "".join(dict.fromkeys(marker(g[1], p["source"]) for g in found))
            said = verdict(found[0][0], found[1][0], (sides[0].title, sides[1].title), aspect, p)
            lines.append(f"- {said}{p['end']}{markers}")
    return answer_of(lines, hits, p)


# -- synthesis -------------------------------------------------------------------


def synthesis_answer(state: State, hits: Sequence[Hit], profile: CorpusProfile) -> Optional[dict[str, Any]]:
    """Returns one cited line per document of the evidence (its best whole sentence), or None for a single document."""
    docs = list(dict.fromkeys(h.source for h in hits if h.kind != "wiki"))
    if len(docs) < 2:
        return None
    words = keywords(state.original_query)
    p = profile.phrasing(state.original_query)
    lines: list[str] = []
    used: set[str] = set()
    for source in docs:
        own = [h for h in hits if h.source == source]
        got = best_sentence(own, words, profile, (), frozenset(used))
        if got is None or any(covered(got[0], u) >= 0.8 for u in used):
            continue
        used.add(got[0])
        lines.append(p["side"].format(title=own[0].title or source) + line(got[0], got[1], p))
    return answer_of(lines, hits, p) if len(lines) >= 2 else None


# -- relation --------------------------------------------------------------------


def relation_answer(state: State, hits: Sequence[Hit], profile: CorpusProfile) -> Optional[dict[str, Any]]:
    """Returns each edge of an asked type (A —relation→ B) followed by the passage stating it, or None without such edges."""
    asked = asked_relations(state.original_query, profile.relation_cues())
    p = profile.phrasing(state.original_query)
    first: dict[tuple[str, str, str], Any] = {}
    for r in state.relations:
        if r.relation in asked:
            first.setdefault((r.head, r.relation, r.tail), r)  # each fact once, from its best-ranked edge
    edges = list(first.values())[:3]
    lines: list[str] = []
    for rel in edges:
        stating = [h for h in hits if h.source == rel.source and (not rel.section or h.section == rel.section)]
        lines.append(f"- {rel.head} —{rel.relation}→ {rel.tail}：")
        got = best_sentence(stating, keywords(rel.description) or (rel.head, rel.tail), profile, (rel.head, rel.tail))
        if got is not None:
            lines.append(p["basis"] + line(got[0], got[1], p))
    if not any(l.startswith(p["basis"]) for l in lines):
        return None
    return answer_of(lines, hits, p)


LAYOUTS = {"compare": compare_answer, "synthesis": synthesis_answer, "relation": relation_answer}


def laid_out(state: State, hits: Sequence[Hit], profile: CorpusProfile) -> Optional[dict[str, Any]]:
    """Returns the answer in the layout of the question's type, or None when that type has none or it does not apply."""
    layout = LAYOUTS.get(state.query_type or "")
    return layout(state, hits, profile) if layout else None
