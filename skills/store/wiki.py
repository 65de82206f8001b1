"""The wiki store: compiled entity pages read by name (any alias) or by BM25, filtered by the reader's rights."""
from __future__ import annotations

import bisect
import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional, Union

from lambdarag import User
from .records import WikiPage

from .access import HIDDEN, Label, attested, principal, visible
from .files import write_text
from .graph import PLAIN, Names

HEADER = re.compile(r"^<!-- wiki (\{.*\}) -->$")
LEARNED = "learned.json"
"""The file of a wiki folder naming the last change of the feedback store its graph and pages hold, so a process
opening the folder replays only the changes after it (`orchestration.feedback.replica`)."""


def learned_change(wiki_dir: Path) -> int:
    """Returns the last feedback-store change the folder's graph and pages hold (0 when none is recorded or the
    record is unreadable: every change is then replayed, which changes nothing already held)."""
    try:
        change = json.loads((Path(wiki_dir) / LEARNED).read_text(encoding="utf-8")).get("change")
    except (OSError, ValueError, AttributeError):
        return 0
    return change if isinstance(change, int) and change > 0 else 0


def record_learned(wiki_dir: Path, change: int) -> None:
    """Records that the folder's graph and pages hold every feedback-store change up to `change`."""
    write_text(Path(wiki_dir) / LEARNED, json.dumps({"change": change}) + "\n")


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


def read_page(wiki_dir: Path, path: Path) -> Optional[Page]:
    """Returns the entity page at `path` (under `wiki_dir`), or None when it is missing or has no wiki header."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    m = HEADER.match(text.split("\n", 1)[0])
    if not m:
        return None
    head = json.loads(m.group(1))
    lines = head.get("lines")
    return Page(entity=head["entity"], path=path.relative_to(wiki_dir).as_posix(),
                text=text.split("\n", 1)[1], aliases=tuple(head.get("aliases", ())),
                labels={s: Label(**lab) for s, lab in head.get("sources", {}).items()},
                attested=tuple(head.get("attested", ())),
                lines=None if lines is None else {int(i): tuple(src) for i, src in lines.items()})


def read_pages(wiki_dir: Path) -> tuple[dict[str, str], dict[str, Page]]:
    """Returns (surface form → entity, entity → page) for the entity pages under `wiki_dir`."""
    pages = [read_page(wiki_dir, path) for path in sorted((wiki_dir / "entities").glob("*.md"))]
    return indexed([p for p in pages if p is not None])


def indexed(pages: list[Page]) -> tuple[dict[str, str], dict[str, Page]]:
    """Returns (surface form → entity, entity → page) of pages in path order (the first page naming a form wins)."""
    names: dict[str, str] = {}
    by_entity: dict[str, Page] = {}
    for page in pages:
        by_entity[page.entity] = page
        for form in (page.entity, *page.aliases):
            names.setdefault(form, page.entity)
    return names, by_entity


@dataclass(frozen=True)
class View:
    """What a reader of the wiki sees at once: names, pages, and the BM25 ranker over them once built."""

    names: dict[str, str]
    pages: dict[str, Page]
    search: Optional[tuple[list[str], Any]] = None   # (page order, BM25 over their text)


class WikiStore:
    """Returns wiki pages by entity name (any alias) or by BM25 over page text, filtered by the reader's rights.

    A write-back `refresh`es the pages it wrote: they are re-read and their rows of the ranker replaced, while every
    other page keeps its text and postings (re-reading the store re-tokenises every page).
    """

    def __init__(self, wiki_dir: Union[str, Path], tokenizer: Any = None, *, names: Names = PLAIN) -> None:
        self.dir = Path(wiki_dir)
        self.names = names                            # how the corpus writes names (its profile's forms)
        self._tokenizer = tokenizer
        self._view: Optional[View] = None             # replaced whole, so a reader never mixes two versions
        self._building = threading.Lock()

    def view(self) -> View:
        """Returns the pages and names, read on first use, once, under a lock (concurrent readers share them)."""
        if self._view is None:
            with self._building:
                if self._view is None:
                    self._view = View(*read_pages(self.dir))
        return self._view

    def pages(self) -> dict[str, Page]:
        """Returns the pages by entity."""
        return self.view().pages

    def read(self, name: str, user: Optional[User] = None) -> Optional[WikiPage]:
        """Returns the page of an entity (by name or alias) as `user` may see it, or None."""
        view = self.view()
        canonical = view.names.get(name) or view.names.get(self.names.short_name(name))
        if canonical is None:
            return None
        page = view.pages[canonical]
        text = page.visible_text(user)
        return WikiPage(entity=page.entity, path=page.path, text=text, score=1.0) if text else None

    def search(self, query: str, k: int = 3, user: Optional[User] = None) -> list[WikiPage]:
        """Returns up to `k` pages ranked by BM25 over their text, hidden pages skipped."""
        view = self._ranked()
        pages = view.pages
        if not pages:
            return []
        order, index = view.search
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

    def _ranked(self) -> View:
        """Returns the view with a BM25 index over the pages' text in entity order, built on first search, once,
        under a lock."""
        view = self.view()
        if view.search is None:
            with self._building:
                view = self._view
                if view.search is None:
                    from .bm25 import Bm25Index

                    order = sorted(view.pages)
                    index = Bm25Index()
                    index.add([self._tokens(view.pages[n]) for n in order])
                    view = self._view = View(view.names, view.pages, (order, index))
        return view

    def _tokens(self, page: Page) -> list[str]:
        if self._tokenizer is None:
            from .tokenize import default_tokenizer

            self._tokenizer = default_tokenizer()
        return self._tokenizer(f"{page.entity} {page.text}")

    def refresh(self, paths: Iterable[str]) -> None:
        """Re-reads the pages at `paths` (relative to the wiki folder; written, re-rendered or deleted by a write-back)
        and replaces their rows of the ranker; the other pages are neither re-read nor re-tokenised."""
        with self._building:
            view = self._view
            if view is None:               # nothing read yet: the first reader reads the folder as it is now
                return
            pages = {p.path: p for p in view.pages.values()}
            changed: dict[str, Optional[Page]] = {}
            for rel in dict.fromkeys(paths):
                old, new = pages.pop(rel, None), read_page(self.dir, self.dir / rel)
                if new is not None:
                    pages[rel] = new
                if old is not None:
                    changed[old.entity] = None
                if new is not None:
                    changed[new.entity] = new
            names, by_entity = indexed([pages[rel] for rel in sorted(pages)])
            search = view.search
            if search is not None:
                order, index = search
                for entity, page in changed.items():
                    at = bisect.bisect_left(order, entity)
                    held = at < len(order) and order[at] == entity
                    if page is None and not held:
                        continue
                    index = index.spliced(at, at + held, [] if page is None else [self._tokens(page)])
                    order = order[:at] + ([] if page is None else [entity]) + order[at + held:]
                search = (order, index)
            self._view = View(names, by_entity, search)
