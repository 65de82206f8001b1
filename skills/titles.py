"""The documents a question names, by title, file name or a heading only one document has, on word boundaries.

"difference" does not name ``if.md`` and "inside" does not name ``in.md``: an English name must stand as a whole
word (letters, digits, ``-`` ``.`` ``_`` ``+`` or ``/`` around it make it part of a longer one: ``source`` does
not name a page in ``source/lintian-overrides``), case-insensitively; a name that is an English stop word names
nothing. A Chinese name must begin and end where jieba cuts the question, unless it is four characters or longer.
Longer names win, and a stretch of the question names one document only.

A title's name-like words name its document too, when no other title has them: a word with a digit, ``-``,
``.`` or ``_`` (``apt-cache`` of "The apt-cache Command"), one capitalised inside (``AppArmor``, ``SELinux``), or
a lower-case word of a capitalised or Chinese title (``cron`` of "Scheduling Tasks with cron and atd", ``ssh``
of 服务器远程访问和工具-ssh): commands, which a title never capitalises. A hyphenated name may be said with spaces (``git reset`` for ``git-reset``).

A name that the text of more than a quarter of the documents (and of more than ten) holds (`COMMON`) names none of them: it is a word of
the corpus's own subject (分区 in an installation guide, *package* in a packaging manual), which one document has
as a heading or title by chance, and as a compare side it put that document ahead of the pages the question asks
about.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Mapping

from lambdarag.state import Record

from .store.derived import PerObject
from .store.tokenize import ENGLISH_STOPWORDS, load_words, plain_words


class Side(Record):
    """One thing a question names: the name as written, the title it resolved to, and its document."""

    name: str
    title: str
    source: str
    family: str = ""


Sides = tuple[Side, ...]


_NUMBERING = re.compile(r"^(?:chapter\s+)?[\dA-Z]+(?:\.\d+)*[.)]?\s+|^第[一二三四五六七八九十\d]+[章节]\s*", re.I)
_WORD = "A-Za-z0-9_+\\-."
MIN_ASCII = 3
_CJK = re.compile(r"[\u4e00-\u9fff]")
_NAME_LIKE = re.compile(r"(?<![\w.-])(?:[A-Za-z][\w]*[\d_.-][\w.-]*[A-Za-z0-9]|[A-Za-z]+\d\w*|[A-Z]?[a-z]+[A-Z]\w*|[A-Z]{2,}[a-z]\w*)(?![\w-])")
"""A code-like word of a title: a digit, -, . or _ inside (apt-cache, bzip2), or a capital inside (AppArmor)."""
COMMON = 0.25
"""The share of documents whose text holding a name makes it a word of the corpus's subject, no document's name."""
FEW = 10
"""Documents that may hold a name however small the corpus: in a handful of pages each names the tools they share."""



def as_word(name: str) -> re.Pattern:
    """Returns a pattern finding `name` where no Latin letter or digit goes on from its Latin ends (a Chinese name
    has no word breaks, so 分区 inside 预置分区方案 counts)."""
    latin = re.compile(r"[A-Za-z0-9]")
    before = r"(?<![A-Za-z0-9])" if latin.match(name[:1]) else ""
    after = r"(?![A-Za-z0-9])" if latin.match(name[-1:]) else ""
    return re.compile(before + re.escape(name) + after)

@dataclass(frozen=True)
class Name:
    text: str          # lower-cased
    title: str
    source: str
    family: str


def _clean(name: str) -> str:
    return _NUMBERING.sub("", name.strip()).strip(" :：").lower()


class DocumentNames:
    """The names of an index's documents: titles, file stems, and headings found in one document only."""

    def __init__(self, documents: Mapping[str, Mapping[str, Any]], chunks: Any) -> None:
        stop = frozenset(load_words(ENGLISH_STOPWORDS))
        owners: dict[str, set[str]] = {}
        names: dict[tuple[str, str], Name] = {}

        def add(text: str, meta: Mapping[str, Any]) -> None:
            text = _clean(text)
            if len(text) < 2 or text in stop or (text.isascii() and len(text) < MIN_ASCII):
                return
            source = str(meta.get("source") or "")
            owners.setdefault(text, set()).add(str(meta.get("family") or source))
            names[(text, source)] = Name(text, str(meta.get("title") or text), source,
                                         str(meta.get("family") or ""))

        for meta in documents.values():
            title = str(meta.get("title") or "")
            for name in (title, PurePosixPath(str(meta.get("source") or "").split(":")[0]).stem):
                add(name, meta)
                if "-" in name.strip("-") and " " not in name.strip():
                    add(name.replace("-", " "), meta)      # git-reset as a question says it: git reset
            for word in name_like(title):
                add(word, meta)
        by_source = {str(m.get("source") or ""): m for m in documents.values()}
        texts: dict[str, list[str]] = {}
        for chunk in chunks:
            texts.setdefault(chunk.source, []).append(chunk.text.lower())
            if chunk.section and chunk.source in by_source:
                add(chunk.section.split(" / ")[-1], by_source[chunk.source])
        self.texts = ["\n".join(parts) for parts in texts.values()]
        unique = [n for (text, _), n in names.items() if len(owners[text]) == 1]
        self.names = sorted(unique, key=lambda n: -len(n.text))
        self._common: dict[str, bool] = {}

    def common(self, name: str) -> bool:
        """Returns whether the text of more than `COMMON` of the documents, and of more than `FEW`, holds `name`
        (lower-cased) as a word of its own (`as_word`: tails inside details is not tails): a subject word."""
        if name not in self._common:
            word = as_word(name)
            self._common[name] = sum(bool(word.search(text)) for text in self.texts) > max(COMMON * len(self.texts), FEW)
        return self._common[name]

    def named(self, query: str, limit: int = 4) -> tuple[Side, ...]:
        """Returns the documents `query` names, in order of mention (at most `limit`)."""
        low = query.lower()
        cuts = _cuts(query) if re.search(r"[\u4e00-\u9fff]", query) else set()
        taken: list[tuple[int, int]] = []
        found: dict[str, tuple[int, Side]] = {}
        for name in self.names:
            if len(found) >= limit:
                break
            if name.source in found:
                continue
            for at in _places(low, name.text, cuts):
                if self.common(name.text):
                    break
                end = at + len(name.text)
                if any(at < e and s < end for s, e in taken):
                    continue
                taken.append((at, end))
                found[name.source] = (at, Side(name=query[at:end], title=name.title, source=name.source,
                                               family=name.family))
                break
        return tuple(side for _, side in sorted(found.values(), key=lambda p: p[0]))


def names_whole(side: Side) -> bool:
    """Returns whether a side names its document whole, by its title or file name: a word of the title or a heading
    only that document has names it too, but plain retrieval weighs such words as well ("login" named the page
    *Restrict SSH login access* in "…changes the password at the login screen…")."""
    stem = _clean(PurePosixPath(side.source.split(":")[0]).stem)
    return _clean(side.name) in {_clean(side.title), stem, stem.replace("-", " ")}


def name_like(title: str) -> list[str]:
    """Returns the name-like words of a title (see the module docstring): code-like or CamelCase words, and the
    lower-case words of a title whose other words are capitalised."""
    words = re.findall(r"[A-Za-z][\w.+-]*[A-Za-z0-9+]|[A-Za-z]", title)
    stop = frozenset(load_words(ENGLISH_STOPWORDS))
    content = [w for w in words if w.lower() not in stop]
    capitalised = len(content) >= 2 and sum(w[:1].isupper() for w in content) >= len(content) / 2
    lower = [w for w in content if (capitalised or _CJK.search(title)) and w.isalpha() and w.islower()
             and len(w) >= MIN_ASCII]
    return [*_NAME_LIKE.findall(title), *lower]


def _places(low: str, name: str, cuts: set[int]) -> list[int]:
    """Returns where `name` stands in the lower-cased question as a whole word (see the module docstring)."""
    if name.isascii():
        pattern = rf"(?<![{_WORD}/]){re.escape(name)}(?![A-Za-z0-9_+/\-]|\.[A-Za-z0-9])"
        return [m.start() for m in re.finditer(pattern, low)]
    out = []
    start = low.find(name)
    while start >= 0:
        if len(name) >= 4 or (start in cuts and start + len(name) in cuts):
            out.append(start)
        start = low.find(name, start + 1)
    return out


def _cuts(query: str) -> set[int]:
    """Returns the offsets where jieba cuts the question into words (its start and end included)."""
    cuts = {0, len(query)}
    for _, start, end in plain_words().spans(query):
        cuts.update((start, end))
    return cuts


document_names: PerObject[DocumentNames] = PerObject(lambda index: DocumentNames(index.documents(), index.chunks()))
"""Returns the name table of an index, rebuilt when the index changes."""
