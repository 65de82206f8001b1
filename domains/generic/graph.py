"""Entities and relations any markdown document states in its form: its title, its headings, its links, its definitions.

A document contains its sections (``contains``: the heading path's parent →
the heading), links to what its links name (``links_to``), and defines the
terms a bold lead-in or a ``X is a …`` / ``X是指…`` opening sentence introduces
(``defines``: the section → the term), so the graph routes have edges to walk
on documents that are not statutes. A configuration key, file or variable
configures what its section describes (``configures``: the key → the section,
the sentence or table row as its description) where an option table lists it
or a sentence says it controls, sets or decides something; a relation question
that asks what steers what is answered by those edges.
"""
from __future__ import annotations

import re
from pathlib import PurePosixPath

from lambdarag.skills.store.corpus import Document, markdown_blocks
from lambdarag.skills.store.graph import EntityRecord, Label, RelationRecord, Version
from lambdarag.skills.store.graph import DocFacts

RULES_VERSION = "generic-2"
LINK = re.compile(r"(?<!!)\[([^\]\n]{2,80})\]\(([^)\s]+)\)")
BOLD_TERM = re.compile(r"^\s*(?:[-*+]\s+)?\*\*([^*\n]{2,60})\*\*\s*(?:[:：—–-]|\s+(?:is|are|means)\b)")
DEFINITION = re.compile(r"^\s*(?:An?\s+|The\s+)?(?!(?:This|That|It|There|These|Those|Here|What|Which)\b)"
                        r"([A-Z][\w .+/-]{1,40}?)\s+(?:is|are|means|refers to)\s+(?:an?|the)\s+")
ZH_DEFINITION = re.compile(r"^\s*([\u4e00-\u9fffA-Za-z0-9_+.-]{2,20})(?:是指|指的是|是一种|是一个|是用来)")
KEY = (r"(?:/etc/[\w./+-]+|~/\.[\w./-]+|\$?[A-Z][A-Z0-9]*_[A-Z0-9_]+|[\w-]+\.(?:conf|cfg|ini|list|rc)\b"
       r"|[a-z][\w-]*\.[a-z][\w.-]*(?==)|[A-Z][A-Za-z]+=)")
"""A configuration file, key or variable as documentation writes it: /etc/x.conf, ~/.xrc, HOME_DIR, x.y=, Key=."""
OPTION_ROW = re.compile(r"^\s*\|\s*`?(" + KEY + r"|[\w.-]+\.[\w.-]+|--?[\w-]{2,})`?\s*\|(.*\w.*)\|\s*$")
"""A row of an option table: its first cell a key, a file or an option, the rest what it does."""
STEERS = re.compile(r"\b(?:controls?|configures?|decides?|determines?|defines?|sets|specifies|selects|governs?|"
                    r"overrides?)\b|控制|决定|配置|设置|指定", re.I)
CONFIG_KEY = re.compile(KEY)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
"""Where a sentence ends: a stop before whitespace (not the dot of apt.conf), or a Chinese stop."""
DESCRIBED = 160


def _name(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip(" *`_#:：")).strip()


def extract_document(doc: Document) -> DocFacts:
    """Returns the document's own entity, its sections, link targets and defined terms, and the edges between them."""
    label = Label(department=doc.department, security_level=doc.security_level)
    src = {doc.source: label}
    name = _name(doc.title) or doc.family
    me = EntityRecord(name=name, type="document", sources=src,
                      aliases=tuple(a for a in {PurePosixPath(doc.source).stem} if a and a != name),
                      versions=(Version(date=doc.date, source=doc.source, title=doc.title),))
    facts = DocFacts(source=doc.source, entity=name, entities=[me])
    seen: set[tuple[str, str, str]] = set()

    def rel(head: str, relation: str, tail: str, kind: str, section: str, description: str) -> None:
        head, tail = _name(head), _name(tail)
        if len(tail) < 2 or head == tail or (head, relation, tail) in seen:
            return
        seen.add((head, relation, tail))
        facts.entities.append(EntityRecord(name=tail, type=kind, sources=src))
        facts.relations.append(RelationRecord(head=head, relation=relation, tail=tail, source=doc.source,
                                              section=section, description=description[:DESCRIBED], origin="rule",
                                              department=doc.department, security_level=doc.security_level))

    path: list[tuple[int, str]] = []
    for what, item in markdown_blocks(doc.text):
        if what == "heading":
            depth, text = item
            path = [(d, t) for d, t in path if d < depth]
            parent = path[-1][1] if path else name
            path.append((depth, text))
            rel(parent, "contains", text, "section", " / ".join(t for _, t in path), f"{parent} → {text}")
            continue
        here = path[-1][1] if path else name
        section = " / ".join(t for _, t in path)
        lines = [line for line in item if line.strip()]
        for line in lines:
            for m in LINK.finditer(line):
                target = m.group(1) if "://" in m.group(2) else (m.group(1) or PurePosixPath(m.group(2)).stem)
                rel(here, "links_to", target, "topic", section, line.strip())
        for line in lines:
            row = OPTION_ROW.match(line)
            if row and not set(row.group(2)) <= set("|-: "):
                rel(row.group(1), "configures", here, "key", section, f"{row.group(1)}: {row.group(2).strip(' |')}")
                continue
            for sentence in SENTENCE_END.split(line) if STEERS.search(line) else ():
                for key in dict.fromkeys(CONFIG_KEY.findall(sentence)) if STEERS.search(sentence) else ():
                    rel(key, "configures", here, "key", section, sentence.strip())
        first = lines[0] if lines else ""
        term = BOLD_TERM.match(first) or DEFINITION.match(first) or ZH_DEFINITION.match(first)
        if term:
            rel(here, "defines", term.group(1), "term", section, first.strip())
    return facts
