"""Corpus ingestion: markdown folders and JSONL records → documents → structure-aware chunks."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True)
class Document:
    """One source file or JSONL record, with its metadata."""

    id: str                      # stable: source path (markdown) or record id (JSONL)
    source: str                  # path relative to the corpus root (JSONL: file#line)
    title: str                   # e.g. 中华人民共和国海上交通安全法
    text: str                    # body without front matter
    date: Optional[str] = None   # version date YYYY-MM-DD (file name or header lines)
    family: str = ""             # shared by all dated versions of one document
    kind: str = "markdown"       # markdown | statute | record | faq
    headers: tuple[str, ...] = ()  # header lines under the title (adoption / revision notes)
    department: Optional[str] = None
    security_level: int = 0
    meta: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Chunk:
    """One retrievable unit: a statute article, a markdown section piece, a record, a table row."""

    id: str                      # stable, e.g. "<doc id>#第三十八条" or the JSONL record id
    doc_id: str
    text: str                    # text to show and cite (article text with its label)
    source: str
    title: str
    section: str = ""            # article label 第X条, or heading path
    heading: str = ""            # chapter / heading carried along
    date: Optional[str] = None
    family: str = ""
    kind: str = "text"           # article | text | record | table_row | faq
    department: Optional[str] = None
    security_level: int = 0
    meta: dict = field(default_factory=dict)
