"""The wiki store: compiled entity pages read by name (any alias) or by BM25, filtered by the reader's rights."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

from lambdarag import User
from .records import WikiPage

from .graph import Label, short_name

SOURCE_TAG = re.compile(r"\[来源: ([^\]#]+)(?:#[^\]]*)?\]")
HEADER = re.compile(r"^<!-- wiki (\{.*\}) -->$")


@dataclass
class Page:
    entity: str
    path: str
    text: str
    aliases: tuple[str, ...]
    labels: dict[str, Label]

    def visible_text(self, user: Optional[User]) -> str:
        """Returns the page with lines from sources `user` may not read removed ('' if none is readable)."""
        if user is None:
            return self.text
        if self.labels and not any(lab.visible_to(user) for lab in self.labels.values()):
            return ""
        kept = []
        for line in self.text.splitlines():
            tags = SOURCE_TAG.findall(line)
            if tags and not any(self.labels.get(s, Label()).visible_to(user) for s in tags):
                continue
            kept.append(line)
        return "\n".join(kept) + "\n"


class WikiStore:
    """Returns wiki pages by entity name (any alias) or by BM25 over page text, filtered by the reader's rights."""

    def __init__(self, wiki_dir: Union[str, Path], tokenizer: Any = None) -> None:
        self.dir = Path(wiki_dir)
        self._tokenizer = tokenizer
        self._pages: Optional[dict[str, Page]] = None
        self._names: dict[str, str] = {}
        self._index: Any = None
        self._order: list[str] = []

    def pages(self) -> dict[str, Page]:
        if self._pages is None:
            self._pages = {}
            for path in sorted((self.dir / "entities").glob("*.md")):
                text = path.read_text(encoding="utf-8")
                m = HEADER.match(text.split("\n", 1)[0])
                if not m:
                    continue
                head = json.loads(m.group(1))
                page = Page(entity=head["entity"], path=path.relative_to(self.dir).as_posix(),
                            text=text.split("\n", 1)[1], aliases=tuple(head.get("aliases", ())),
                            labels={s: Label(**lab) for s, lab in head.get("sources", {}).items()})
                self._pages[page.entity] = page
                for form in (page.entity, *page.aliases):
                    self._names.setdefault(form, page.entity)
        return self._pages

    def read(self, name: str, user: Optional[User] = None) -> Optional[WikiPage]:
        """Returns the page of an entity (by name or alias) as `user` may see it, or None."""
        pages = self.pages()
        canonical = self._names.get(name) or self._names.get(short_name(name))
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
        if self._index is None:
            from .bm25 import Bm25Index
            from .tokenize import default_tokenizer

            self._tokenizer = self._tokenizer or default_tokenizer()
            self._order = sorted(pages)
            self._index = Bm25Index()
            self._index.add([self._tokenizer(f"{n} {pages[n].text}") for n in self._order])
        scores = self._index.scores(self._tokenizer(query))
        out = []
        for i in scores.argsort()[::-1]:
            if scores[i] <= 0 or len(out) >= k:
                break
            page = pages[self._order[i]]
            text = page.visible_text(user)
            if text:
                out.append(WikiPage(entity=page.entity, path=page.path, text=text, score=float(scores[i])))
        return out
