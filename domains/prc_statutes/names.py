"""Statutes named in a question, resolved to the indexed documents that are them.

A question names a statute by its full title (中华人民共和国海上交通安全法), its
short title (海上交通安全法), in 《quotes》, or by a paraphrase of a long title
(最高法关于船舶碰撞纠纷的规定). Names are matched exactly first, then by how much
of a title's distinctive character bigrams (weighted by rarity among all
titles, so 最高人民法院关于…若干问题的规定 counts for little) the question
contains; where things are set side by side, also by a contraction of a title
(武警 for 人民武装警察法, 劳动争议仲裁 for 劳动争议调解仲裁法). Each named statute
resolves to its current (newest) version.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from lambdarag.skills.sentences import bigrams
from lambdarag.skills.sides import Side
from lambdarag.skills.store.derived import PerObject
from lambdarag.skills.store.graph import plain_name

QUOTED = re.compile(r"《([^《》]{2,60})》")
MIN_COVER = 0.8
"""Share of a title's weighted bigrams the question must contain for a paraphrase to name it."""
STEM_END = re.compile(r"$|[和与跟同及、，,。？?的在对两]|机构|机关|部门")
"""What may follow a law's name without 法 for it to name the law (拍卖和…, 海关在…)."""
LOOSE_COVER = ((0.5, 4), (0.35, 6))
"""For loose matching: (share, characters) pairs — a lower share suffices when a longer stretch of the title is quoted."""
SIDE_BY_SIDE = re.compile(r"以及|还是|和|与|跟|同|及|、|或")
"""Words that set two named things side by side: a contraction is looked for on either side of one."""
NOT_NAME_EDGE = frozenset("的地得在对里了是有把被从向为于之等上中下都也还这那其各两")
"""Characters a statute's contraction neither starts nor ends with (武警的 is 武警 followed by 的)."""
CONTRACTION_CHARS = (2, 8)
"""Shortest and longest contraction tried, in characters."""

PRC = "中华人民共和国"
STATUTE_TYPES = frozenset({"law", "regulation", "judicial_interpretation", "departmental_rule"})
"""Entity types whose name text may write with the state's name in front (中华人民共和国海商法 for 海商法)."""


def short_name(name: str) -> str:
    """Returns a law's name without the leading 中华人民共和国 and without 《》 / 〈〉 quotes."""
    name = plain_name(name)
    if name.startswith(PRC) and len(name) > len(PRC) + 1:
        name = name[len(PRC):]
    return name


def name_forms(name: str, kind: Optional[str] = None) -> set[str]:
    """Returns the ways text may write an entity's name: full, short, and for a statute (or an entity of unknown type)
    short with 中华人民共和国."""
    short = short_name(name)
    return {name, short, PRC + short} if kind is None or kind in STATUTE_TYPES else {name, short}


def abbreviations(title: str) -> list[str]:
    """Returns the customary short forms of a law's title: 刑事诉讼法 → 刑诉法, 招标投标法 → 招投标法."""
    stem = title[:-1] if title.endswith("法") else ""
    if len(stem) != 4:
        return []
    return [stem[0] + stem[2:] + "法"] if stem[1] == stem[3] else [stem[0] + stem[2] + "法"]


def contraction(name: str, title: str) -> bool:
    """Returns whether `name` is `title` with characters left out (武警 of 人民武装警察法, 个税 of 个人所得税法).

    A stretch of the title as written is not a contraction (exact and stem
    matching decide those), and the kept characters must lie close together:
    within twice the name's length plus one.
    """
    if name in title:
        return False
    first, at = title.find(name[0]), -1
    for ch in name:
        at = title.find(ch, at + 1)
        if at < 0:
            return False
    return at - first < 2 * len(name) + 1


def unique(pairs: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Returns the (name, title) pairs whose name belongs to one title only (an ambiguous short form names none)."""
    owners: dict[str, set[str]] = {}
    for name, t in pairs:
        owners.setdefault(name, set()).add(t.family)
    return [(name, t) for name, t in pairs if len(owners[name]) == 1 and len(name) >= 2]


def longest_first(pairs: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    return sorted(pairs, key=lambda p: -len(p[0]))


def longest_common(text: str, title: str) -> tuple[int, int]:
    """Returns (start in `text`, length) of the longest stretch of `text` that occurs in `title`."""
    best = (0, 0)
    for i in range(len(text)):
        j = i + best[1] + 1
        while j <= len(text) and text[i:j] in title:
            best = (i, j - i)
            j += 1
    return best


@dataclass(frozen=True)
class Title:
    family: str
    title: str
    source: str          # the newest version's document
    grams: frozenset[str]


class StatuteNames:
    """The titles of an index's documents, each family once (newest version), ready for matching."""

    def __init__(self, documents: Mapping[str, Mapping[str, Any]]) -> None:
        newest: dict[str, Mapping[str, Any]] = {}
        for meta in documents.values():
            family = str(meta.get("family") or meta.get("title") or "")
            if family and (family not in newest or (meta.get("date") or "") > (newest[family].get("date") or "")):
                newest[family] = meta
        self.titles = [Title(f, short_name(str(m.get("title") or f)), str(m.get("source") or ""),
                             bigrams(short_name(str(m.get("title") or f)))) for f, m in newest.items()]
        df: dict[str, int] = {}
        for t in self.titles:
            for g in t.grams:
                df[g] = df.get(g, 0) + 1
        n = len(self.titles) or 1
        self.idf = {g: math.log((n + 1) / (c + 0.5)) for g, c in df.items()}
        self.exact = longest_first([(t.title, t) for t in self.titles if len(t.title) >= 2]
                                   + unique([(a, t) for t in self.titles for a in abbreviations(t.title)]))
        self.stems = longest_first(unique([(name[:-1], t) for t in self.titles for name in [t.title, *abbreviations(t.title)]
                                           if name.endswith("法") and len(name) >= 3]))

    def cover(self, title: Title, grams: frozenset[str]) -> float:
        """Returns the idf-weighted share of the title's bigrams that `grams` contains."""
        total = sum(self.idf[g] for g in title.grams) or 1.0
        return sum(self.idf[g] for g in title.grams & grams) / total

    def named(self, query: str, limit: int = 4, loose: bool = False) -> tuple[Side, ...]:
        """Returns the statutes `query` names, in order of mention: exact titles, 《quoted》 names, then paraphrases.

        `loose` (for questions that set named things side by side) also accepts
        a law's name without 法 (拍卖 for 拍卖法) and a paraphrase that repeats a
        long enough stretch of the title (海事法院受理案件范围的规定 for
        最高人民法院关于海事法院受理案件范围的规定).
        """
        found: dict[str, tuple[int, Side]] = {}
        rest = query
        for name, t in self.exact + (self.stems if loose else []):
            at = rest.find(name)
            if at >= 0 and name in dict(self.stems) and not STEM_END.match(rest, at + len(name)):
                continue  # 渔业 in 渔业船舶检验 is part of a longer name, not 渔业法
            if at >= 0 and t.family not in found:
                found[t.family] = (at, Side(name=name, title=t.title, source=t.source, family=t.family))
                rest = rest[:at] + "，" * len(name) + rest[at + len(name):]
        for m in QUOTED.finditer(rest):
            best = self._best(bigrams(m.group(1)), exclude=found)
            if best:
                found[best.family] = (m.start(), Side(name=m.group(1), title=best.title, source=best.source,
                                                      family=best.family))
        grams = bigrams(rest)
        scored = sorted(((self.cover(t, grams), t) for t in self.titles if t.family not in found and len(t.grams) >= 3),
                        key=lambda p: -p[0])
        taken: list[tuple[int, int]] = []
        for score, t in scored:
            if score < (LOOSE_COVER[-1][0] if loose else MIN_COVER) or len(found) >= limit:
                break
            at, size = longest_common(rest, t.title)
            if not (score >= MIN_COVER or (loose and any(score >= c and size >= n for c, n in LOOSE_COVER))):
                continue
            if any(at < end and start < at + size for start, end in taken):
                continue  # that phrase already names a better-matching statute
            taken.append((at, at + size))
            found[t.family] = (at, Side(name=rest[at:at + size], title=t.title, source=t.source, family=t.family))
        if loose and len(found) < limit:
            for at, side in self._contractions(rest, found):
                found.setdefault(side.family, (at, side))
        return tuple(side for _, side in sorted(found.values(), key=lambda p: p[0]))[:limit]

    def _contractions(self, rest: str, found: Mapping[str, Any]) -> list[tuple[int, Side]]:
        """Returns the statutes named by a contraction next to a side-by-side word (人民警察和武警 → 人民武装警察法).

        On each side of 和/与/跟/…, a whole word is tried: a run of characters
        reaching from that word to punctuation or a particle (武警 in 和武警的职责),
        neither starting nor ending with a particle; the longest run that
        contracts exactly one shortest title wins, unless a title as short or
        shorter carries the run as written; a tie between equally short titles
        (反法: 反垄断法, 反洗钱法, …) names none.
        """
        out: list[tuple[int, Side]] = []
        low, high = CONTRACTION_CHARS
        for m in SIDE_BY_SIDE.finditer(rest):
            before = re.search(r"[\u4e00-\u9fff]*$", rest[:m.start()]).group()
            after = re.match(r"[\u4e00-\u9fff]*", rest[m.end():]).group()
            sizes = range(high, low - 1, -1)
            for runs in ([(m.start() - n, before[-n:]) for n in sizes if n == len(before) or
                          (n < len(before) and before[-n - 1] in NOT_NAME_EDGE)],
                         [(m.end(), after[:n]) for n in sizes if n == len(after) or
                          (n < len(after) and after[n] in NOT_NAME_EDGE)]):
                side = next(filter(None, (self._contracted(name, at, found) for at, name in runs)), None)
                if side:
                    out.append(side)
        return out

    def _contracted(self, name: str, at: int, found: Mapping[str, Any]) -> Optional[tuple[int, Side]]:
        """Returns (`at`, the side) when `name` contracts exactly one shortest title not yet found, else None."""
        if name[0] in NOT_NAME_EDGE or name[-1] in NOT_NAME_EDGE:
            return None
        fits = sorted((t for t in self.titles if t.family not in found and contraction(name, t.title)),
                      key=lambda t: len(t.title))
        written = min((len(t.title) for t in self.titles if name in t.title), default=math.inf)
        if not fits or len(fits[0].title) >= written or (len(fits) > 1 and len(fits[0].title) == len(fits[1].title)):
            return None  # 矿产 is a word of 矿产资源法 before it is a contraction of 煤矿安全生产条例
        return at, Side(name=name, title=fits[0].title, source=fits[0].source, family=fits[0].family)

    def _best(self, grams: frozenset[str], exclude: Mapping[str, Any]) -> Optional[Title]:
        scored = [(self.cover(t, grams) * len(t.grams & grams) / max(len(grams), 1), t) for t in self.titles
                  if t.family not in exclude]
        score, best = max(scored, key=lambda p: p[0], default=(0.0, None))
        return best if score >= MIN_COVER / 2 else None


statute_names: PerObject[StatuteNames] = PerObject(lambda index: StatuteNames(index.documents()))
"""Returns the title table of an index, rebuilt when the index changes."""
