"""What a statute file is: articles 第X条 under 编/章/节 divisions, adoption notes under the title, a dated version."""
from __future__ import annotations

import re
from typing import Any, Iterable, Optional, Sequence

from lambdarag.skills.store.corpus import (HEADING_RE, Chunk, Document, Outline, chunk_document, file_date,
                                 family_of, make_chunk, markdown_heading)

_NUM = "一二三四五六七八九十百千零〇两0-9０-９"
ARTICLE_RE = re.compile(rf"^(第[{_NUM}]+条(?:之[一二三四五六七八九十]+)?)(?:[\s\u3000]+(.*)|$)")
DIVISION_RE = re.compile(rf"^第[{_NUM}]+(编|分编|章|节)(?:[\s\u3000]+.*)?$")
DIVISION_DEPTH = {"编": 1, "分编": 2, "章": 3, "节": 4}
DIVISION_LINE = re.compile(r"^第[一二三四五六七八九十百]+[章节编]")
"""A division heading inside a chunk's text, never quoted as an answer."""
TEXT_DATE_RE = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日")
ARTICLE_IN = re.compile(rf"第[{_NUM}]+条")
UNIT_LABEL = re.compile(r"^\s*第[零一二三四五六七八九十百千〇\d]+条(?:之[一二三四五六七八九十])?\s*")
"""An article's leading label in a sentence of its text (第十条, 第10条之一), never part of a quote."""
FAMILY_DROP = re.compile(r"中华人民共和国")


def date_of(name: str, headers: Iterable[str] = ()) -> Optional[str]:
    """Returns the version date: `(YYYY-MM-DD)` in the file name, else the latest header date.

    Header lines about entry into force (施行) are ignored: they date the
    future effect, not the version.
    """
    named = file_date(name)
    if named:
        return named
    dates = []
    for line in headers:
        if "施行" in line:
            continue
        for y, mo, d in TEXT_DATE_RE.findall(line):
            dates.append(f"{int(y):04d}-{int(mo):02d}-{int(d):02d}")
    return max(dates) if dates else None


def header_lines(lines: Sequence[str]) -> list[str]:
    """Returns the adoption and revision notes under a statute's title: the lines before its first heading,
    division or article (a part title under the main title, 民法典 # 总则, is skipped)."""
    headers = []
    for line in lines:
        s = line.strip()
        head = HEADING_RE.match(s)
        if head and len(head.group(1)) == 1:
            continue
        if head or ARTICLE_RE.match(s) or DIVISION_RE.match(s):
            break
        if s:
            headers.append(s)
    return headers


def is_statute(lines: Sequence[str]) -> bool:
    """Returns whether a file's body holds an article line 第X条."""
    return any(ARTICLE_RE.match(line.strip()) for line in lines)


def statute_heading(line: str) -> Optional[tuple[int, str]]:
    """Returns (depth, text) when the line is a markdown heading or a bare 第X章-style division line."""
    head = markdown_heading(line)
    if head:
        return head
    m = DIVISION_RE.match(line)
    if m:
        return 1 + DIVISION_DEPTH[m.group(1)], re.sub(r"[\s\u3000]+", " ", line.strip())
    return None


def chunk_statute(doc: Document) -> list[Chunk]:
    """Returns one chunk per article 第X条, carrying the chapter/section heading path.

    Text before the first article (a preamble) becomes a `text` chunk under its heading.
    """
    chunks: list[Chunk] = []
    ids: dict[str, int] = {}
    outline = Outline()
    label, heading, body = "", "", []
    preamble: list[str] = []
    headers = set(doc.headers)

    def flush() -> None:
        if label and body:
            n = ids.get(label, 0) + 1
            ids[label] = n
            cid = f"{doc.id}#{label}" + (f"~{n}" if n > 1 else "")
            chunks.append(make_chunk(doc, cid, "\n".join(body), section=label, heading=heading, kind="article"))

    def flush_preamble() -> None:
        text = "\n".join(preamble).strip()
        if text:
            cid = f"{doc.id}#{outline.path() or 'preamble'}"
            chunks.append(make_chunk(doc, cid, text, section=outline.path(), heading=outline.path()))
        preamble.clear()

    for line in doc.text.split("\n"):
        s = line.strip()
        if not s:
            continue
        head = statute_heading(s)
        if head:
            flush()
            flush_preamble()
            label, body = "", []
            outline.push(*head)
            continue
        m = ARTICLE_RE.match(s)
        if m:
            flush()
            flush_preamble()
            label, heading, body = m.group(1), outline.path(), [s]
        elif label:
            body.append(s)
        elif s not in headers:
            preamble.append(s)
    flush()
    flush_preamble()
    return chunks


def chunk(doc: Document, cap: int) -> list[Chunk]:
    """Returns a statute's articles, a record whole, other markdown by headings and 第X章 divisions."""
    if doc.kind == "statute":
        return chunk_statute(doc)
    return chunk_document(doc, cap, statute_heading)


def family(title: str) -> str:
    """Returns the family id of a statute title: without 中华人民共和国, whitespace, 、 and brackets."""
    return family_of(FAMILY_DROP.sub("", title))


def claims(documents: Sequence[Any]) -> bool:
    """Returns whether most documents are statutes or their articles.

    A read markdown file counts when it has an article line, a JSONL record
    when its `article` or title names one (STARD: 中华人民共和国刑法第十九条); an
    indexed document by its kind or title.
    """
    def statute(d: Any) -> bool:
        if isinstance(d, Document):
            if d.source == d.id:
                return d.kind == "statute" or is_statute(d.text.split("\n"))
            return bool(ARTICLE_IN.search(f"{d.meta.get('article') or ''} {d.title}"))
        return str(d.get("kind") or "") == "statute" or bool(ARTICLE_IN.search(str(d.get("title") or "")))

    return bool(documents) and 2 * sum(map(statute, documents)) > len(documents)


def markdown_fields(name: str, title: str, lines: Sequence[str]) -> dict[str, Any]:
    """Returns the kind (statute when it reads as one), header lines, date and family of a markdown file."""
    headers = header_lines(lines)
    return {"kind": "statute" if is_statute(lines) else "markdown", "headers": headers,
            "date": date_of(name, headers), "family": family(title)}


def without_label(sentence: str) -> str:
    """Returns a sentence without its leading article label (第X条)."""
    return UNIT_LABEL.sub("", sentence, count=1)


BACK_REFERENCE = re.compile(r"^(?:依照|依据|按照|有)?(?:前款|前两款|前三款|前[一二三四五六七八九十]项|本条第[一二三四五六七八九十]款)")
"""A paragraph opening with the paragraph before it as its subject (前款保证金金额为80万元…)."""


def refers_back(sentence: str) -> bool:
    """Returns whether a unit's subject is the paragraph before it (前款…, 依照前款规定…)."""
    return bool(BACK_REFERENCE.search(sentence))


def is_heading(line: str) -> bool:
    """Returns whether a line is a 编/章/节 division heading."""
    return bool(DIVISION_LINE.search(line))
