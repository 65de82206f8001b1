"""The PRC statute pack: a corpus profile for statutes, regulations and judicial interpretations in Chinese.

Every rule that only statutes have lives in this package: articles 第X条
and 编/章/节 divisions (documents), statute titles and their short forms
(names), the aspects two statutes are compared on (aspects), repeals by a
successor's closing article (repeal), law-before-regulation priors and the
topic and purpose searches of a survey (ranks), agency relations and the
entity extraction of the graph (hierarchy, extract), the classifier's cues
and exemplars (cues), and the wording of answers and replies (wording).
"""
from __future__ import annotations

from typing import Any, Sequence

from skills.profile import CorpusProfile

from . import documents


class StatuteProfile(CorpusProfile):
    """PRC statutes: articles are the units, titles name families of dated versions, laws outrank regulations."""

    name = "prc_statutes"
    language = "zh"

    @classmethod
    def claims(cls, docs: Sequence[Any]) -> bool:
        return documents.claims(docs)

    def markdown_fields(self, name: str, title: str, lines: Sequence[str]) -> dict[str, Any]:
        headers = documents.header_lines(lines)
        return {"kind": "statute" if documents.is_statute(lines) else "markdown", "headers": headers,
                "date": documents.date_of(name, headers), "family": self.family(title)}

    def family(self, title: str) -> str:
        return documents.family(title)

    def chunk(self, doc: Any, cap: int) -> list:
        return documents.chunk(doc, cap)
