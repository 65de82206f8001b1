"""Offline answer layouts for the multi-document question types: compare, synthesis and relation.

- compare: per aspect (主管部门, 适用范围, 法律责任, … or what the question asks), one
  cited line per side and a 相同/不同 statement citing both;
- synthesis: one cited line per document, whole sentences only, none repeated;
- relation: the edge first (甲 —上级→ 乙), then the article that states it.

Each returns None when it cannot lay out an answer (e.g. fewer than two sides),
and the generic extractive answer is used instead.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from lambdarag import State
from .store.records import Hit

from .aspects import aspects_of, named_aspects, without_aspects
from .context import cited, marker
from .edges import asked_relations
from .sentences import STOPWORDS, covered, keywords, split_sentences, strip_label

_ENDS = "。！？；!?;"


def whole_sentences(hit: Hit) -> list[str]:
    """Returns the complete sentences of a hit (ending in 。！？；), article labels removed."""
    return [strip_label(s).strip() for s in split_sentences(hit.text)
            if s.rstrip().endswith(tuple(_ENDS)) and len(strip_label(s).strip()) >= 8]


def best_sentence(hits: Sequence[Hit], words: Sequence[str], cues: Sequence[str] = (),
                  used: frozenset[str] = frozenset()) -> Optional[tuple[str, Hit, float]]:
    """Returns the sentence of `hits` that best covers `words` and `cues`, with its hit and score."""
    best = None
    for rank, hit in enumerate(hits):
        for sentence in whole_sentences(hit):
            if sentence in used:
                continue
            score = sum(len(w) for w in words if w in sentence) + sum(len(c) for c in cues if c in sentence)
            score -= 0.01 * rank
            if best is None or score > best[2]:
                best = (sentence, hit, score)
    return best


def line(sentence: str, hit: Hit) -> str:
    return f"{sentence.rstrip('；;，,。')}。{marker(hit)}"


def answer_of(lines: Sequence[str], hits: Sequence[Hit]) -> dict[str, Any]:
    text = "根据现有资料：\n" + "\n".join(lines)
    citations, _ = cited(text, hits)
    return {"answer": text, "citations": citations}


# -- compare ---------------------------------------------------------------------


def verdict(a: str, b: str, names: tuple[str, str], aspect: str) -> str:
    """Returns the 相同/不同 statement for two sides' sentences on one aspect."""
    wa, wb = set(keywords(a)), set(keywords(b))
    shared = [w for w in keywords(a) if w in wb and w not in STOPWORDS][:4]
    if covered(a, b) >= 0.6 or (shared and len(shared) >= 0.6 * min(len(wa), len(wb))):
        return f"相同：在{aspect}上，{names[0]}与{names[1]}的规定基本一致（均涉及{'、'.join(shared) or aspect}）"
    only_a = [w for w in keywords(a) if w not in wb][:3]
    only_b = [w for w in keywords(b) if w not in wa][:3]
    same = f"两者都涉及{'、'.join(shared)}；" if shared else ""
    return (f"不同：在{aspect}上，{same}{names[0]}侧重{'、'.join(only_a) or '其本身的规定'}，"
            f"{names[1]}侧重{'、'.join(only_b) or '其本身的规定'}")


def compare_answer(state: State, hits: Sequence[Hit]) -> Optional[dict[str, Any]]:
    """Returns the per-aspect comparison of the named sides, or None with fewer than two sides in the evidence."""
    sides = [s for s in getattr(state, "sides", ()) if any(h.source == s.source for h in hits)]
    if len(sides) < 2:
        return None
    sides = sides[:2]
    query = state.original_query
    topic = [w for w in without_aspects(keywords(query)) if not any(w in s.name or w in s.title for s in sides)]
    lines: list[str] = []
    used: set[str] = set()
    # an aspect the question names (主管部门), else its own topic (船舶管理), else the default aspects
    label = "".join(topic) if "".join(topic) in query else "、".join(topic)
    aspects = named_aspects(query) or ([(label, tuple(topic))] if topic else aspects_of(query))
    for aspect, cues in aspects:
        found = []
        for side in sides:
            own = [h for h in hits if h.source == side.source]
            found.append(best_sentence(own, topic, cues, frozenset(used)))
        lines.append(f"【{aspect}】：")
        for side, got in zip(sides, found):
            if got is None or got[2] <= 0:
                lines.append(f"以下方面现有资料中未找到依据：《{side.title}》关于{aspect}的规定。")
            else:
                used.add(got[0])
                lines.append(f"- 《{side.title}》：{line(got[0], got[1])}")
        if all(g is not None and g[2] > 0 for g in found):
            markers = "".join(dict.fromkeys(marker(g[1]) for g in found))
            lines.append(f"- {verdict(found[0][0], found[1][0], (sides[0].title, sides[1].title), aspect)}。{markers}")
    return answer_of(lines, hits)


# -- synthesis -------------------------------------------------------------------


def synthesis_answer(state: State, hits: Sequence[Hit]) -> Optional[dict[str, Any]]:
    """Returns one cited line per document of the evidence (its best whole sentence), or None for a single document."""
    docs = list(dict.fromkeys(h.source for h in hits if h.kind != "wiki"))
    if len(docs) < 2:
        return None
    words = keywords(state.original_query)
    lines: list[str] = []
    used: set[str] = set()
    for source in docs:
        own = [h for h in hits if h.source == source]
        got = best_sentence(own, words, (), frozenset(used))
        if got is None or any(covered(got[0], u) >= 0.8 for u in used):
            continue
        used.add(got[0])
        lines.append(f"- 《{own[0].title or source}》：{line(got[0], got[1])}")
    return answer_of(lines, hits) if len(lines) >= 2 else None


# -- relation --------------------------------------------------------------------


def relation_answer(state: State, hits: Sequence[Hit]) -> Optional[dict[str, Any]]:
    """Returns each edge of an asked type (甲 —关系→ 乙) followed by the article stating it, or None without such edges."""
    asked = asked_relations(state.original_query)
    first: dict[tuple[str, str, str], Any] = {}
    for r in state.relations:
        if r.relation in asked:
            first.setdefault((r.head, r.relation, r.tail), r)  # each fact once, from its best-ranked edge
    edges = list(first.values())[:3]
    lines: list[str] = []
    for rel in edges:
        stating = [h for h in hits if h.source == rel.source and (not rel.section or h.section == rel.section)]
        lines.append(f"- {rel.head} —{rel.relation}→ {rel.tail}：")
        got = best_sentence(stating, keywords(rel.description) or (rel.head, rel.tail), (rel.head, rel.tail))
        if got is not None:
            lines.append(f"  依据：{line(got[0], got[1])}")
    if not any(l.startswith("  依据") for l in lines):
        return None
    return answer_of(lines, hits)


LAYOUTS = {"compare": compare_answer, "synthesis": synthesis_answer, "relation": relation_answer}


def laid_out(state: State, hits: Sequence[Hit]) -> Optional[dict[str, Any]]:
    """Returns the answer in the layout of the question's type, or None when that type has none or it does not apply."""
    layout = LAYOUTS.get(state.query_type or "")
    return layout(state, hits) if layout else None
