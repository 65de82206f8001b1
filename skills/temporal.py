"""Time in questions and documents: `extract_time_range` reads it from the query, `time_filter` applies it.

A family's dated versions each stay in force from their date until the next
version's date; "latest" keeps the newest version, a date or span keeps the
versions in force then.
"""
from __future__ import annotations

import datetime as dt
import re
from typing import Any, Callable, Literal, Mapping, Optional, Sequence, TypedDict

from lambdarag import Context, User, tool
from .store.records import Hit, Hits, HitsOut, TimeRange

from .registry import skill

LATEST_WORDS = re.compile(r"最新|现行|现在|目前|当前|最近|如今|现阶段|现今|新修订|修订后")
FULL_DATE = re.compile(r"(\d{4})\s*(?:年|-|/|\.)\s*(\d{1,2})\s*(?:月|-|/|\.)\s*(\d{1,2})\s*日?")
YEAR_MONTH = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月(?!\s*\d)")
YEAR = re.compile(r"(\d{4})\s*年(?!\s*\d{1,2}\s*月)")
RELATIVE_YEAR = {"前年": -2, "去年": -1, "上一年": -1, "今年": 0, "本年": 0, "当年": 0}
BEFORE = re.compile(r"^\s*(?:以前|之前|前)")
AFTER = re.compile(r"^\s*(?:以后|之后|以来|后)")
EDITION = re.compile(r"^\s*(?:的)?(?:版|修订|修改|修正)(?!前|之前|以前)")
"""What names a version by the time it was made (2022年版, 2024年修订的, 2023年修改后): the one in force when that time ends."""


def _month_end(year: int, month: int) -> dt.date:
    return (dt.date(year + month // 12, month % 12 + 1, 1) - dt.timedelta(days=1))


def time_range_of(query: str, today: Optional[dt.date] = None) -> Optional[TimeRange]:
    """Returns the time a question asks about, or None when it names none.

    Dates (2023年10月24日, 2023-10-24) give a point; 2019年 / 2019年3月 / 去年 a
    span, opened by 以前/之前 (ends there) or 以后/以来 (starts there), or its
    last day when it names an edition (2022年版, 2024年修订的: in a year with two
    versions in force, the one made that year); 最新,
    现行, 最近 … ask for the newest version. Relative years count from `today`.
    """
    today = today or dt.date.today()
    spans: list[tuple[Optional[dt.date], Optional[dt.date]]] = []
    taken: list[tuple[int, int]] = []

    def free(m: re.Match) -> bool:
        return not any(a < m.end() and m.start() < b for a, b in taken)

    def add(m: re.Match, start: dt.date, end: dt.date) -> None:
        taken.append((m.start(), m.end()))
        after = query[m.end():]
        if BEFORE.match(after):
            spans.append((None, end))
        elif AFTER.match(after):
            spans.append((start, None))
        elif EDITION.match(after):
            spans.append((end, end))
        else:
            spans.append((start, end))

    for m in FULL_DATE.finditer(query):
        try:
            day = dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            continue
        add(m, day, day)
    for m in YEAR_MONTH.finditer(query):
        y, mo = int(m.group(1)), int(m.group(2))
        if free(m) and 1 <= mo <= 12:
            add(m, dt.date(y, mo, 1), _month_end(y, mo))
    for m in YEAR.finditer(query):
        if free(m):
            y = int(m.group(1))
            add(m, dt.date(y, 1, 1), dt.date(y, 12, 31))
    for word, delta in RELATIVE_YEAR.items():
        for m in re.finditer(word, query):
            if free(m):
                y = today.year + delta
                add(m, dt.date(y, 1, 1), dt.date(y, 12, 31))
    if not spans:
        return TimeRange(latest=True) if LATEST_WORDS.search(query) else None
    starts = [s for s, _ in spans]
    ends = [e for _, e in spans]
    start = None if None in starts else min(starts)
    end = None if None in ends else max(ends)
    if start is not None and start == end:
        return TimeRange(as_of=start)
    return TimeRange(start=start, end=end)


Versions = Mapping[str, Sequence[tuple[str, str]]]
"""family → [(date YYYY-MM-DD, doc id), …] of its dated versions."""
LATEST = TimeRange(latest=True)
UNDATED: Mapping[str, Optional[TimeRange]] = {"all": None, "latest": LATEST}
"""time_filter's `undated` choices: which versions a question that names no time keeps."""


def in_force(dates: Sequence[str], window: TimeRange) -> set[str]:
    """Returns the version dates in force at some time in the window (the newest one for `latest`).

    A window before every known version keeps the earliest one: the corpus
    holds nothing older, and the earliest text is the closest evidence.
    """
    ordered = sorted(set(dates))
    if not ordered:
        return set()
    if window.latest and window.as_of is None and window.start is None and window.end is None:
        return {ordered[-1]}
    lo = window.as_of or window.start
    hi = window.as_of or window.end
    keep = set()
    for i, d in enumerate(ordered):
        until = ordered[i + 1] if i + 1 < len(ordered) else None
        starts_before_end = hi is None or d <= hi.isoformat()
        ends_after_start = until is None or lo is None or until > lo.isoformat()
        if starts_before_end and ends_after_start:
            keep.add(d)
    return keep or {ordered[0]}


def time_filter_hits(hits: Sequence[Hit], window: Optional[TimeRange], versions: Versions,
                     counterpart: Callable[[Hit, str], Optional[Hit]] = lambda h, doc: None) -> tuple[Hit, ...]:
    """Returns the hits whose version is in force in the window; others become their in-force counterpart or go.

    Hits without a family or date are kept. `counterpart(hit, doc_id)` returns
    the same section in another version (when the index has it and the user may read it).
    """
    if window is None:
        return tuple(hits)
    out: list[Hit] = []
    seen: set[str] = set()
    for h in hits:
        dated = versions.get(h.family) or ()
        if not h.family or not h.date or not dated:
            keep: Optional[Hit] = h
        else:
            good = in_force([d for d, _ in dated], window)
            keep = h if h.date in good else None
            if keep is None:
                newest = max(good)
                doc = next(doc for d, doc in dated if d == newest)
                keep = counterpart(h, doc)
        if keep is not None and keep.chunk_id not in seen:
            seen.add(keep.chunk_id)
            out.append(keep)
    return tuple(out)


def index_versions(backend: Any, hits: Sequence[Hit]) -> Versions:
    families = {h.family for h in hits if h.family}
    out: dict[str, list[tuple[str, str]]] = {}
    for doc_id, meta in backend.documents().items():
        if meta.get("family") in families and meta.get("date"):
            out.setdefault(meta["family"], []).append((meta["date"], doc_id))
    return out


def _hit_versions(hits: Sequence[Hit]) -> Versions:
    out: dict[str, set[tuple[str, str]]] = {}
    for h in hits:
        if h.family and h.date:
            out.setdefault(h.family, set()).add((h.date, h.source))
    return {f: sorted(v) for f, v in out.items()}


def _counterpart_in(backend: Any, user: User) -> Callable[[Hit, str], Optional[Hit]]:
    from .store.corpus import to_hits

    def find(hit: Hit, doc_id: str) -> Optional[Hit]:
        if not hit.section:
            return None
        try:
            chunk = backend.chunk(f"{doc_id}#{hit.section}")
        except KeyError:
            return None
        if not user.may_read(chunk.department, chunk.security_level):
            return None
        (found,) = to_hits([(chunk, hit.score)], "time_filter")
        return found.model_copy(update={"ranks": dict(hit.ranks), "scores": dict(hit.scores)})

    return find


class TimeRangeOut(TypedDict):
    """The write of `extract_time_range`."""

    time_range: Optional[TimeRange]


@skill
@tool
def extract_time_range(query: str, *, today: str = "") -> TimeRangeOut:
    """Writes `time_range` from the query (`today`: YYYY-MM-DD reference date of relative years)."""
    return {"time_range": time_range_of(query, dt.date.fromisoformat(today) if today else None)}


def current_versions(backend: Any, hits: Sequence[Hit], window: Optional[TimeRange]) -> tuple[Hit, ...]:
    """Returns the hits of the versions in force in `window`, or of the newest versions when it is None; others go.

    A document answers an undated question in its current text: two versions
    share most units word for word, so without this the older one ranks as
    often as the newer (identical vectors tie).
    """
    return time_filter_hits(hits, window or LATEST, index_versions(backend, hits))


@skill
@tool
def time_filter(hits: Hits, time_range: Optional[TimeRange], user: User, ctx: Context, *,
                undated: Literal["all", "latest"] = "all") -> HitsOut:
    """Keeps the `hits` in force in `time_range` (newest version for "latest").

    Versions come from the index (resource "index") when the context has one,
    else from the hits themselves; an out-of-force article is swapped for the
    same article of the in-force version when the index holds it. Config
    `undated: latest` keeps the newest versions when the question names no
    time (one version per family); by default such a question keeps them all.
    """
    backend, window = ctx.resources.get("index"), time_range or UNDATED[undated]
    if backend is None:
        return {"hits": time_filter_hits(hits, window, _hit_versions(hits))}
    return {"hits": time_filter_hits(hits, window, index_versions(backend, hits), _counterpart_in(backend, user))}
