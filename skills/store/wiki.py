"""The wiki store: compiled entity pages read by name (any alias) or by BM25, filtered by the reader's rights."""
from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

from lambdarag import User
from .records import WikiPage

from .access import HIDDEN, Label, attested, principal, visible
from .graph import PLAIN, Names

HEADER = re.compile(r"^<!-- wiki (\{.*\}) -->$")


@dataclass
class Page:
    """One compiled page: its text, and the structured sources of the entity and of each line (from the header)."""

    entity: str
    path: str
    text: str
    aliases: tuple[str, ...]
    labels: dict[str, Label]
    attested: tuple[str, ...] = ()
    lines: Optional[dict[int, tuple[str, ...]]] = None    # None: a page compiled before lines carried sources

    def visible_text(self, user: Optional[User]) -> str:
        """Returns the page with every line derived from a source `user` may not read removed ('' if hidden; no
        user: the public)."""
        if principal(user).all_access:
            return self.text
        if self.lines is None:      # no per-line sources recorded: all or nothing
            return self.text if visible(self.labels, self.labels, user) else ""
        derived = self.lines
        if self.attested:
            known = attested({s: self.labels.get(s, HIDDEN) for s in self.attested}, user)
        else:
            known = not derived or any(visible(src, self.labels, user) for src in derived.values())
        if not known:
            return ""
        kept = [line for i, line in enumerate(self.text.splitlines())
                if i not in derived or visible(derived[i], self.labels, user)]
        return "\n".join(without_empty_sections(kept)) + "\n"


def without_empty_sections(lines: list[str]) -> list[str]:
    """Returns the lines minus ``## `` headings (and the blank line before them) whose items were all removed."""
    out: list[str] = []
    for i, line in enumerate(lines):
        if line.startswith("## ") and (i + 1 == len(lines) or not lines[i + 1].strip()
                                       or lines[i + 1].startswith("## ")):
            if out and not out[-1].strip():
                out.pop()
            continue
        out.append(line)
    return out


def read_pages(wiki_dir: Path) -> tuple[dict[str, str], dict[str, Page]]:
    """Returns (surface form → entity, entity → page) for the entity pages under `wiki_dir`."""
    names: dict[str, str] = {}
    pages: dict[str, Page] = {}
    for path in sorted((wiki_dir / "entities").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        m = HEADER.match(text.split("\n", 1)[0])
        if not m:
            continue
        head = json.loads(m.group(1))
        lines = head.get("lines")
        page = Page(entity=head["entity"], path=path.relative_to(wiki_dir).as_posix(),
                    text=text.split("\n", 1)[1], aliases=tuple(head.get("aliases", ())),
                    labels={s: Label(**lab) for s, lab in head.get("sources", {}).items()},
                    attested=tuple(head.get("attested", ())),
                    lines=None if lines is None else {int(i): tuple(src) for i, src in lines.items()})
        pages[page.entity] = page
        for form in (page.entity, *page.aliases):
            names.setdefault(form, page.entity)
    return names, pages


class WikiStore:
    """Returns wiki pages by entity name (any alias) or by BM25 over page text, filtered by the reader's rights."""

    def __init__(self, wiki_dir: Union[str, Path], tokenizer: Any = None, *, names: Names = PLAIN) -> None:
        self.dir = Path(wiki_dir)
        self.names = names                            # how the corpus writes names (its profile's forms)
        self._tokenizer = tokenizer
        self._pages: Optional[dict[str, Page]] = None
        self._names: dict[str, str] = {}
        self._search: Optional[tuple[list[str], Any]] = None   # (page order, BM25 over their text)
        self._building = threading.Lock()

    def pages(self) -> dict[str, Page]:
        """Returns the pages by entity, read on first use, once, under a lock (concurrent readers share them)."""
        if self._pages is None:
            with self._building:
                if self._pages is None:
                    self._names, self._pages = read_pages(self.dir)
        return self._pages

    def read(self, name: str, user: Optional[User] = None) -> Optional[WikiPage]:
        """Returns the page of an entity (by name or alias) as `user` may see it, or None."""
        pages = self.pages()
        canonical = self._names.get(name) or self._names.get(self.names.short_name(name))
        if canonical is None:
            return None
        page = pages[canonical]
        text = page.visible_text(user)
        return WikiPage(entity=page.entity, path=page.path, text=text, score=1.0) if text else None

    def search(self, query: str, k: int = 3, user: Optional[User] = None) -> list[WikiPage]:
        """Returns up to `k` pages ranked by BM25 over their text, hidden pages skipped."""
        pages = self.pages()
        if not pages:
            return []
        order, index = self._ranker(pages)
        scores = index.scores(self._tokenizer(query))
        out = []
        for i in scores.argsort()[::-1]:
            if scores[i] <= 0 or len(out) >= k:
                break
            page = pages[order[i]]
            text = page.visible_text(user)
            if text:
                out.append(WikiPage(entity=page.entity, path=page.path, text=text, score=float(scores[i])))
        return out

    def _ranker(self, pages: dict[str, Page]) -> tuple[list[str], Any]:
        """Returns the page order and a BM25 index over their text, built on first search, once, under a lock."""
        if self._search is None:
            with self._building:
                if self._search is None:
                    from .bm25 import Bm25Index
                    from .tokenize import default_tokenizer

                    self._tokenizer = self._tokenizer or default_tokenizer()
                    order = sorted(pages)
                    index = Bm25Index()
                    index.add([self._tokenizer(f"{n} {pages[n].text}") for n in order])
                    self._search = (order, index)
        return self._search
