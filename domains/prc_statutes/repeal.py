"""Statutes a newer statute of another title repealed: 噪声污染防治法 (2021) ends 《环境噪声污染防治法》同时废止.

Versions of one statute share a title (skills.temporal picks the one in force);
a statute replaced under a new title does not, so both would count as in force
and an undated survey of noise pollution cites the repealed law beside its
successor. The repealing clause in the successor's text says which, and from
which version on; `repeals(index)` reads every such clause of an index once.
"""
from __future__ import annotations

import re
from typing import Any, Literal, Optional, Sequence

from lambdarag import Context, tool
from lambdarag.skills.registry import skill
from lambdarag.skills.store.derived import PerObject
from lambdarag.skills.store.records import Hit, Hits, HitsOut, TimeRange
from lambdarag.skills.temporal import UNDATED

from .names import short_name

REPEALING = re.compile(r"((?:《[^《》]{2,80}》[、，,和及与]?)+)同时废止")
"""A repealing clause: 《A》、《B》同时废止 (the law's closing article)."""
NAMED = re.compile(r"《([^《》]{2,80})》")


def repealed_families(index: Any) -> dict[str, str]:
    """Returns family → date of the first version of another family whose text repeals it, over `index`'s chunks.

    A clause repeals an indexed family when the name it quotes is that
    family's title (short form: 中华人民共和国 dropped), the family is not the
    repealer's own (工会法 (2021) repeals the 1950 工会法, which is not indexed),
    and every indexed version of it is older than the repealing version: the
    国家安全法 反间谍法 (2014) repealed is the 1993 one, not the indexed 2015 law.
    """
    families: dict[str, set[str]] = {}
    newest: dict[str, str] = {}
    for meta in index.documents().values():
        family = str(meta.get("family") or "")
        if not family or not meta.get("date"):
            continue
        newest[family] = max(newest.get(family, ""), str(meta["date"]))
        for name in {short_name(str(meta.get("title") or "")), family} - {""}:
            families.setdefault(name, set()).add(family)
    out: dict[str, str] = {}
    for chunk in index.chunks():
        if "同时废止" not in chunk.text or not chunk.date:
            continue
        for clause in REPEALING.finditer(chunk.text):
            for name in NAMED.findall(clause.group(1)):
                for family in families.get(short_name(name), ()):
                    if family != chunk.family and newest[family] < chunk.date < out.get(family, "9999"):
                        out[family] = chunk.date
    return out


repeals: PerObject[dict[str, str]] = PerObject(repealed_families)
"""Returns repealed_families(index), computed again only when the index changes."""


def unrepealed(hits: Sequence[Hit], window: Optional[TimeRange], repealed: dict[str, str]) -> tuple[Hit, ...]:
    """Returns the hits of families not repealed before `window` (`repealed`: family → date,
    repealed_families): all of them when the window is None.

    A repealed family is out of force for the newest-version window (an
    undated question) and for a window that starts on or after its repeal; a
    question about a time before the repeal keeps it.
    """
    if window is None or not repealed:
        return tuple(hits)
    since = window.as_of or window.start
    if not window.latest and since is None:
        return tuple(hits)

    def repealed_then(h: Hit) -> bool:
        date = repealed.get(h.family or "")
        return date is not None and (since is None or date <= since.isoformat())

    return tuple(h for h in hits if not repealed_then(h))


@skill
@tool
def drop_repealed(hits: Hits, ctx: Context, time_range: Optional[TimeRange] = None, *,
                  undated: Literal["all", "latest"] = "all") -> HitsOut:
    """Drops the hits of statutes a successor of another title repealed by the question's time (`time_range`, else
    `undated` as time_filter takes it): both would count as in force, the repealed one cited beside its successor."""
    backend, window = ctx.resources.get("index"), time_range or UNDATED[undated]
    return {"hits": tuple(hits) if backend is None else unrepealed(hits, window, repeals(backend))}
