"""Corpus ingestion: markdown folders and JSONL records → documents → structure-aware chunks."""
from __future__ import annotations

import datetime
import fnmatch
import hashlib
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, Union

from .tokenize import language_of

from .bounded import MAX_FRONT_MATTER_BYTES, Unreadable, load_json, load_yaml
from .access import ACCESS_KEYS, ACCESS_SECTION, AccessLabelError, labels_of
from .formats import CONVERTED_SUFFIXES, Unconvertible, read_as_markdown
from .instructions import instruction_phrases


@dataclass(frozen=True)
class Document:
    """One source file or JSONL record, with its metadata."""

    id: str                      # stable: source path (markdown) or record id (JSONL)
    source: str                  # path relative to the corpus root (JSONL: file:line, since # starts a cited section)
    title: str                   # the first-level heading, front matter `title`, or the file name
    text: str                    # body without front matter
    date: Optional[str] = None   # version date YYYY-MM-DD (front matter, file name, or what a pack reads)
    family: str = ""             # shared by all dated versions of one document
    kind: str = "markdown"       # markdown | record | faq, or a kind a domain pack defines
    headers: tuple[str, ...] = ()  # header lines under the title a domain pack reads (e.g. revision notes)
    department: Optional[str] = None
    security_level: int = 0
    meta: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Chunk:
    """One retrievable unit: a markdown section piece, a record, a table row, or a unit a domain pack defines."""

    id: str                      # stable, e.g. "<doc id>#<section>" or the JSONL record id
    doc_id: str
    text: str                    # text to show and cite (article text with its label)
    source: str
    title: str
    section: str = ""            # the unit's label (a numbered article), or heading path
    heading: str = ""            # chapter / heading carried along
    date: Optional[str] = None
    family: str = ""
    kind: str = "text"           # article | text | record | table_row | faq
    department: Optional[str] = None
    security_level: int = 0
    meta: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Reading: files → documents (with problems reported, never dropped silently)

Problem = tuple[str, int, str]
"""(path relative to the root, 1-based line or 0 for the whole file, message)."""

MARKDOWN_SUFFIXES = (".md", ".markdown")
READ_SUFFIXES = (*MARKDOWN_SUFFIXES, ".jsonl", *CONVERTED_SUFFIXES)
"""The files a corpus folder's documents are read from; others are left alone."""
FORMAT_ORDER = (*MARKDOWN_SUFFIXES, *CONVERTED_SUFFIXES)
"""Which format of a document is read when a folder holds it in several (guide.md beside guide.html and guide.pdf,
one converted from another): the first here."""
DEFAULT_EXCLUDE = ("README.md", "SOURCE.md")
LABEL_KEYS = ACCESS_KEYS + (ACCESS_SECTION,)
"""Metadata keys that hold access labels (`access.labels_of` reads them), not kept as other metadata."""

HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE_RE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
COMMENT_RE = re.compile(r"<!--.*?-->", re.S)
EMPTY_HEADING_RE = re.compile(r"(?m)^#{1,6}[ \t]*$")
FILE_DATE_RE = re.compile(r"[(（](\d{4})-(\d{2})-(\d{2})[)）]")
BRACKETS = "()（）[]【】《》〈〉<>〔〕{}「」『』"
FAMILY_DROP = re.compile(rf"[\s\u3000、{re.escape(BRACKETS)}]")


CHUNKER_VERSION = "5"
"""Bump when chunking changes (e.g. table rows, FAQ pairs, instruction flags, layout tables), so that indexes re-chunk unchanged files."""


def content_digest(text: str) -> str:
    """Returns a document's digest: its content and the chunker version, so either change re-indexes it."""
    return hashlib.sha1(f"{CHUNKER_VERSION}\0{text}".encode()).hexdigest()


def family_of(title: str) -> str:
    """Returns the family id of a title: dated versions of one document share it.

    Drops whitespace, 、 and bracket characters (not their contents, so （一）
    and （二） of one series stay apart).
    """
    return FAMILY_DROP.sub("", title)


def file_date(name: str) -> Optional[str]:
    """Returns the version date `(YYYY-MM-DD)` a file name carries, else None."""
    m = FILE_DATE_RE.search(name)
    return "-".join(m.groups()) if m else None


def title_from_name(name: str) -> str:
    """Returns the title a file name gives: its stem without a version date."""
    return FILE_DATE_RE.sub("", Path(name).stem).strip()


class Malformed(ValueError):
    """A file or record that cannot be read; carries the 1-based line."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line


LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
ISO_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def check_unicode(value: object, where: str, line: int) -> None:
    """Raises `Malformed` when a string in `value` (or in its lists and mappings) holds a lone surrogate, which
    no encoder accepts: the record is skipped rather than crashing the store that writes it."""
    if isinstance(value, str):
        m = LONE_SURROGATE.search(value)
        if m:
            raise Malformed(line, f"{where} holds a lone surrogate U+{ord(m.group()):04X} at character "
                                  f"{m.start()} (not valid Unicode)")
    elif isinstance(value, dict):
        for k, v in value.items():
            check_unicode(k, f"{where} key", line)
            check_unicode(v, f"{where}.{k}" if where else str(k), line)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            check_unicode(v, f"{where}[{i}]", line)


def text_of(meta: dict, key: str, line: int) -> Optional[str]:
    """Returns the string under `key` (None when absent or null); raises `Malformed` for any other type, so a
    number or a list is never silently turned into text."""
    value = meta.get(key)
    if value is None or isinstance(value, str):
        return value
    raise Malformed(line, f"{key} must be a string, got {type(value).__name__} {value!r:.40}")


def version_date(value: object, line: int) -> Optional[str]:
    """Returns a version date as YYYY-MM-DD (from a string or a YAML date); raises `Malformed` for anything else
    (``not-a-date``, 2021-02-30, a number), so an unparseable date is never kept."""
    if value is None or value == "":
        return None
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()[:10]
    if isinstance(value, str) and ISO_DATE_RE.match(value.strip()):
        try:
            return datetime.date.fromisoformat(value.strip()).isoformat()
        except ValueError:
            pass
    raise Malformed(line, f"date must be a calendar date YYYY-MM-DD, got {value!r:.40}")


def front_matter_start(lines: list[str]) -> Optional[int]:
    """Returns the index of the line opening front matter: the first line holding more than spaces and byte order
    marks, when it is ``---`` (indented or after blank lines, so a stray space never makes labels body text)."""
    first = next((i for i, line in enumerate(lines) if line.strip(" \t\ufeff")), None)
    return first if first is not None and lines[first].strip(" \t\ufeff") == "---" else None


def split_front_matter(text: str) -> tuple[dict, str, int]:
    """Returns (front matter mapping, body, number of lines the front matter took).

    The YAML is read by `bounded.load_yaml`: an alias, nesting past its limit or
    front matter over `MAX_FRONT_MATTER_BYTES` is this file's `Malformed`.
    """
    lines = text.split("\n")
    start = front_matter_start(lines)
    if start is None:
        return {}, text, 0
    for i in range(start + 1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            import yaml

            try:
                data = load_yaml("\n".join(lines[start + 1:i]), "front matter", MAX_FRONT_MATTER_BYTES) or {}
            except Unreadable as e:
                raise Malformed(start + 1 + e.line if e.line else start + 1, str(e)) from None
            except yaml.YAMLError as e:
                mark = getattr(e, "problem_mark", None)
                raise Malformed(start + 2 + (mark.line if mark else 0), f"invalid YAML front matter: {e}") from None
            if not isinstance(data, dict):
                raise Malformed(start + 2, "front matter must be a mapping of keys to values")
            return data, "\n".join(lines[i + 1:]), i + 1
    raise Malformed(start + 1, "front matter opened with --- is never closed")


def front_matter_lines(text: str) -> dict[str, int]:
    """Returns the 1-based line of each top-level key of a markdown file's front matter."""
    lines = text.split("\n")
    start = front_matter_start(lines)
    if start is None:
        return {}
    out: dict[str, int] = {}
    for n, line in enumerate(lines[start + 1:], start + 2):
        if line.strip() in ("---", "..."):
            break
        m = re.match(r"^([^\s#:][^:]*?)\s*:", line)
        if m:
            out.setdefault(m.group(1).strip("'\""), n)
    return out


UNREADABLE = "not indexed: nobody may read it until its access labels are fixed"
"""Ends the problem of a document whose labels break the schema (`index` counts these)."""


def access_labels(meta: dict, line: int = 1, lines: Optional[dict[str, int]] = None) -> tuple[Optional[str], int]:
    """Returns (department, security_level) from metadata by the access schema (`access.labels_of`); raises
    `Malformed` at the line of the key at fault."""
    try:
        label = labels_of(meta)
    except AccessLabelError as e:
        raise Malformed((lines or {}).get(e.key, line), f"{e}; {UNREADABLE}") from None
    return label.department, label.security_level


def _sidecar(path: Path, root: Path) -> Optional[Path]:
    for candidate in (path.with_name(path.name + ".meta.json"), path.with_suffix(".meta.json")):
        if candidate.is_file():
            if link_problem(candidate, root):
                raise Malformed(0, f"sidecar {candidate.name}: {link_problem(candidate, root)}")
            return candidate
    return None


def read_markdown(path: Path, root: Path, profile: Any) -> Document:
    """Returns the document of one markdown file, or of an HTML, reStructuredText, plain-text or PDF file read as
    the markdown it converts to (store.formats); raises `Malformed` when it cannot be used.

    Kind, header lines, date and family not declared in front matter come from
    the corpus profile (skills.profile): a statute's adoption notes and its
    articles are what a statute pack knows, not what markdown is.
    """
    rel = path.relative_to(root).as_posix() if path != root else path.name
    converted = path.suffix.lower() in CONVERTED_SUFFIXES
    try:
        raw = read_as_markdown(path) if converted else path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise Malformed(0, f"not UTF-8 text: {e.reason} at byte {e.start}") from None
    except Unconvertible as e:
        raise Malformed(0, str(e)) from None
    if converted:
        meta, body, skipped, keys = {}, raw, 0, {}
    else:
        meta, body, skipped = split_front_matter(raw.replace("\r\n", "\n"))
        keys = front_matter_lines(raw.replace("\r\n", "\n"))
        body = COMMENT_RE.sub("", body)
    side = _sidecar(path, root)
    if side is not None:
        try:
            extra = load_json(side.read_text(encoding="utf-8"), f"sidecar {side.name}")
        except Unreadable as e:
            raise Malformed(e.line, str(e)) from None
        except (ValueError, UnicodeDecodeError) as e:
            raise Malformed(getattr(e, "lineno", 0), f"sidecar {side.name} is not valid JSON: {e}") from None
        if not isinstance(extra, dict):
            raise Malformed(1, f"sidecar {side.name} must hold a JSON object")
        meta = {**meta, **extra}
    department, level = access_labels(meta, lines=keys)
    check_unicode(meta, "", 1)
    named = {k: text_of(meta, k, keys.get(k, 1)) for k in ("title", "family", "kind")}
    body = EMPTY_HEADING_RE.sub("", body)
    if not body.strip():
        raise Malformed(0, "no text")
    lines = body.split("\n")
    title, start = "", 0
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        m = HEADING_RE.match(line)
        if m and len(m.group(1)) == 1:
            title, start = m.group(2).strip(), i + 1
        break
    title = named["title"] or title or title_from_name(path.name)
    text = "\n".join(lines[start:]).strip("\n")
    fields = profile.reading.markdown_fields(path.name, title, lines[start:])
    rest = {k: v for k, v in meta.items() if k not in LABEL_KEYS + ("title", "date", "family", "kind")}
    return Document(
        id=rel, source=rel, title=title, text=text,
        date=version_date(meta.get("date"), keys.get("date", 1)) or fields["date"],
        family=named["family"] or fields["family"], kind=named["kind"] or fields["kind"],
        headers=tuple(fields["headers"]), department=department, security_level=level,
        meta={**rest, "digest": content_digest(raw), "body_line": skipped + 1},
    )


def read_records(path: Path, root: Path, profile: Any) -> Iterator[Union[Document, Problem]]:
    """Yields one document per JSONL record, or a problem for each bad line.

    A record is either ``{"id", "text", …}`` or a FAQ pair ``{"question", "answer", …}``
    (kind "faq": text = question + answer, meta keeps both, id defaults to ``file#question``).
    A record without a title is titled by its file name and id (a FAQ record by its file name).
    """
    rel = path.relative_to(root).as_posix() if path != root else path.name
    try:
        lines = path.read_text(encoding="utf-8-sig").split("\n")
    except UnicodeDecodeError as e:
        yield (rel, 0, f"not UTF-8 text: {e.reason} at byte {e.start}")
        return
    except OSError as e:
        yield (rel, 0, f"cannot read: {e.strerror or e}")
        return
    seen: set[str] = set()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = load_json(line, "the record")
        except Unreadable as e:
            yield (rel, n, str(e))
            continue
        except ValueError as e:
            yield (rel, n, f"invalid JSON: {e}")
            continue
        if not isinstance(record, dict):
            yield (rel, n, "a record must be a JSON object")
            continue
        try:
            doc = record_document(record, rel, n, line, profile)
        except Malformed as e:
            rid = record.get("id")
            named = isinstance(rid, str) and rid.strip() and not LONE_SURROGATE.search(rid)
            yield (rel, n, f"record {rid!r}: {e}" if named else str(e))
            continue
        if doc.id in seen:
            yield (rel, n, f"duplicate record id {doc.id!r}")
            continue
        seen.add(doc.id)
        yield doc


def record_document(record: dict, rel: str, n: int, line: str, profile: Any) -> Document:
    """Returns the document of one JSONL record (line `n` of file `rel`); raises `Malformed` for a record lacking
    its text, with a field of the wrong type, an unparseable date, bad access labels or invalid Unicode."""
    check_unicode(record, "", n)
    faq = "question" in record or "answer" in record
    required = ("question", "answer") if faq else ("id", "text")
    fields = {k: text_of(record, k, n) for k in ("id", "text", "title", "family", "kind", "question", "answer",
                                                  "article", "section", *profile.reading.record_document_keys)}
    missing = [k for k in required if not (fields[k] or "").strip()]
    if missing:
        raise Malformed(n, f"{'FAQ ' if faq else ''}record lacks {' and '.join(missing)}")
    pair = (fields["question"].strip(), fields["answer"].strip()) if faq else None
    rid = fields["id"] if fields["id"] and fields["id"].strip() else f"{rel}#{pair[0]}"
    department, level = access_labels(record, n)
    date = version_date(record.get("date"), n)
    title = (fields["title"] or "").strip() or (Path(rel).stem if pair else f"{Path(rel).stem} {rid}")
    rest = {k: v for k, v in record.items() if k not in ("id", "title", "text", "date", "family") + LABEL_KEYS}
    if pair:
        rest.update(question=pair[0], answer=pair[1])
    return Document(
        id=rid, source=f"{rel}:{n}", title=title, text="\n".join(pair) if pair else fields["text"], date=date,
        family=fields["family"] or profile.reading.family(
            next(filter(None, map(fields.get, profile.reading.record_document_keys)), title)),
        kind="faq" if pair else fields["kind"] or "record", department=department, security_level=level,
        meta={**rest, "digest": content_digest(line)},
    )


# ---------------------------------------------------------------------------------------------
# Chunking: documents → chunks that keep the structure


def make_chunk(doc: Document, cid: str, text: str, *, section: str = "", heading: str = "", kind: str = "text",
               meta: Optional[dict] = None) -> Chunk:
    """Returns a chunk of `doc` carrying the document's source, title, date, family and access labels."""
    return Chunk(id=cid, doc_id=doc.id, text=text, source=doc.source, title=doc.title, section=section,
                 heading=heading, date=doc.date, family=doc.family, kind=kind, department=doc.department,
                 security_level=doc.security_level, meta=meta or {})


class Outline:
    """The heading path above the current line; deeper headings replace shallower ones' children."""

    def __init__(self) -> None:
        self.stack: list[tuple[int, str]] = []

    def push(self, depth: int, text: str) -> None:
        self.stack = [(d, t) for d, t in self.stack if d < depth] + [(depth, text)]

    def path(self) -> str:
        return " / ".join(t for _, t in self.stack)


Heading = Callable[[str], Optional[tuple[int, str]]]
"""Returns (depth, text) when a stripped line is a heading, else None."""


def markdown_heading(line: str) -> Optional[tuple[int, str]]:
    """Returns (depth, text) when the line is a markdown ATX heading (``## Text``)."""
    m = HEADING_RE.match(line)
    return (len(m.group(1)), re.sub(r"\s+", " ", m.group(2).strip())) if m else None


def markdown_blocks(text: str, heading: Heading = markdown_heading) -> Iterator[tuple[str, Any]]:
    """Yields ("heading", (depth, text)) and ("block", lines) in order: blocks end at blank lines and headings.

    A heading needs no blank line before or after it, and a line inside fenced
    code (``` or ~~~) is never a heading, nor does a blank line there end the block.
    """
    block: list[str] = []
    fence = ""
    for line in text.split("\n"):
        if fence:
            block.append(line)
            if line.strip().startswith(fence):
                fence = ""
            continue
        opened = FENCE_RE.match(line)
        if opened:
            fence = opened.group(1)
            block.append(line)
            continue
        head = heading(line.strip())
        if head or not line.strip():
            if block:
                yield "block", block
            block = []
            if head:
                yield "heading", head
            continue
        block.append(line)
    if block:
        yield "block", block


SENTENCE_END = re.compile(r"[.?!](?=\s)\s*")
"""An English sentence's end inside a paragraph, where a long paragraph may be cut when it has no 。."""


def _pieces(paragraphs: list[str], cap: int) -> list[str]:
    """Returns paragraphs packed into pieces of at most `cap` characters (long paragraphs split at a sentence end)."""
    units: list[str] = []
    for p in paragraphs:
        while len(p) > cap:
            cut = p.rfind("。", 0, cap) + 1 or max((m.end() for m in SENTENCE_END.finditer(p, 0, cap)), default=cap)
            units.append(p[:cut])
            p = p[cut:]
        if p:
            units.append(p)
    pieces, current = [], ""
    for u in units:
        if current and len(current) + 1 + len(u) > cap:
            pieces.append(current)
            current = u
        else:
            current = f"{current}\n{u}" if current else u
    if current:
        pieces.append(current)
    return pieces


ROW_LABELS = {"zh": "第{n}行", "en": "row {n}"}
"""How a table row's section is labelled, in its document's language."""
FAQ_QUESTION_RE = re.compile(r"^(?:Q|问)\s*[:：]\s*(.+)$", re.I)
FAQ_ANSWER_RE = re.compile(r"^(?:A|答)\s*[:：]\s*", re.I)
TABLE_RULE_RE = re.compile(r"^\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?$")


def table_cells(line: str) -> list[str]:
    """Returns the cells of a markdown table line (outer pipes dropped, cells stripped)."""
    return [c.strip() for c in line.strip().strip("|").split("|")]


def layout_text(table: list[str]) -> Optional[list[str]]:
    """Returns the lines of text a layout table holds, or None for a table of data (a row pairing two cells).

    No row of a layout table pairs two texts: DocBook's admonition box (a label, beside an icon or not, over a body
    spanning the box: read "Tip: body") or a column of icons beside sentences. Read as rows, each would be headed by
    an empty cell or by the box's label alone.
    """
    rows = [table_cells(line) for line in table if not TABLE_RULE_RE.match(line.strip())]
    texts = [[c for c in row if c] for row in rows]
    if any(len(t) > 1 for t in texts):
        return None
    if len(rows) == 2 and len(rows[1]) == 1 and all(texts) and texts[0][0][-1] not in ".。!！?？:：;；":
        label, body = texts[0][0], texts[1][0]      # a box's title over the one cell spanning it
        return [label + ("：" if language_of(label) == "zh" else ": ") + body]
    return [t[0] for t in texts if t]


def split_tables(lines: list[str]) -> list[tuple[str, list[str]]]:
    """Returns a block's lines as runs of ("text", lines), ("table", lines) and ("layout", its text's lines).

    A table is a run of lines starting with ``|`` whose second line is the
    ``| --- |`` rule under the header; a layout table is one no row of which pairs two texts (`layout_text`).
    """
    runs: list[tuple[str, list[str]]] = []
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and lines[j].lstrip().startswith("|"):
            j += 1
        if j - i >= 2 and TABLE_RULE_RE.match(lines[i + 1].strip()):
            layout = layout_text(lines[i:j])
            runs.append(("table", lines[i:j]) if layout is None else ("layout", layout))
            i = j
            continue
        if runs and runs[-1][0] == "text":
            runs[-1][1].append(lines[i])
        else:
            runs.append(("text", [lines[i]]))
        i += 1
    return runs


def chunk_markdown(doc: Document, cap: int = 800, heading: Heading = markdown_heading) -> list[Chunk]:
    """Returns chunks of a markdown document: by heading (see markdown_blocks), then by paragraph up to `cap` chars.

    A chunk's id is the document's id and its heading path (``guide.md#Install / Debian``).

    Three structures get chunks of their own. A table gives one `table_row` chunk
    per row: the header line, its rule and the row, so every row reads as a
    one-row table. A layout table (`layout_text`) gives text chunks of its text. A FAQ pair is a heading ``Q: question`` (or ``问：``) over its
    answer (an optional ``A:`` / ``答：`` prefix is dropped); it gives one `faq`
    chunk whose text is question + answer and whose meta keeps both.
    """
    chunks: list[Chunk] = []
    outline = Outline()
    paragraphs: list[str] = []
    count: dict[str, int] = {}
    row_label = ROW_LABELS[language_of(doc.text)]

    def numbered(path: str) -> int:
        count[path] = count.get(path, 0) + 1
        return count[path]

    def flush() -> None:
        path = outline.path()
        question = FAQ_QUESTION_RE.match(outline.stack[-1][1]) if outline.stack else None
        if question and paragraphs:
            q, a = question.group(1).strip(), FAQ_ANSWER_RE.sub("", "\n".join(paragraphs).strip())
            chunks.append(make_chunk(doc, f"{doc.id}#{path}", f"{q}\n{a}", section=path, heading=path, kind="faq",
                                 meta={"question": q, "answer": a}))
            paragraphs.clear()
        for piece in _pieces(paragraphs, cap):
            n = numbered(path)
            cid = f"{doc.id}#{path or 'text'}" + (f"~{n}" if n > 1 else "")
            chunks.append(make_chunk(doc, cid, piece, section=path, heading=path))
        paragraphs.clear()

    def table(lines: list[str]) -> None:
        path = outline.path()
        header, rule = lines[0].strip(), lines[1].strip()
        for line in lines[2:]:
            if not any(table_cells(line)) or TABLE_RULE_RE.match(line.strip()):    # a rule is no row
                continue
            n = numbered(f"{path}|table")
            label = row_label.format(n=n)
            section = f"{path} {label}" if path else label
            chunks.append(make_chunk(doc, f"{doc.id}#{section}", f"{header}\n{rule}\n{line.strip()}", section=section,
                                 heading=path, kind="table_row", meta={"header": table_cells(header), "row": n}))

    for what, item in markdown_blocks(doc.text, heading):
        if what == "heading":
            flush()
            outline.push(*item)
            continue
        for kind, lines in split_tables([l.rstrip() for l in item if l.strip()]):
            if kind == "table":
                flush()
                table(lines)
            elif kind == "layout":      # a box of its own, as its rows were: the text around it keeps its chunks
                flush()
                paragraphs.append("\n".join(lines))
                flush()
            else:
                paragraphs.append("\n".join(lines))
    flush()
    return chunks


def chunk_record(doc: Document) -> list[Chunk]:
    """Returns a JSONL record as one whole chunk that keeps the record id."""
    section = str(doc.meta.get("article") or doc.meta.get("section") or "")
    kind = "faq" if doc.kind == "faq" else "record"
    return [make_chunk(doc, doc.id, doc.text, section=section, kind=kind, meta=dict(doc.meta))]


def chunk_document(doc: Document, cap: int = 800, heading: Heading = markdown_heading) -> list[Chunk]:
    """Returns the chunks of a document: a JSONL record whole, a markdown file by its headings."""
    if doc.source != doc.id:  # a JSONL record (its source is file#line)
        return chunk_record(doc)
    return chunk_markdown(doc, cap, heading)


def searchable_text(chunk: Chunk) -> str:
    """Returns the text retrievers index for a chunk: its title, then its text.

    This is the formula of the precomputed STARD vectors (title + newline + text).
    """
    return f"{chunk.title}\n{chunk.text}" if chunk.title else chunk.text


# ---------------------------------------------------------------------------------------------
# The corpus


@dataclass
class Corpus:
    """Documents, their chunks, and the problems met while reading (path, line, message)."""

    root: str
    domain: str = "generic"      # the corpus profile chunking used (skills.profile), recorded in the index
    profile: Any = None          # that profile itself (skills.reading sets it), which indexing and the wiki read by
    documents: list[Document] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def digest(self) -> str:
        """Returns a digest of every document's content: equal corpora have equal digests."""
        h = hashlib.sha1()
        for doc in sorted(self.documents, key=lambda d: d.id):
            h.update(f"{doc.id}\0{doc.meta.get('digest', '')}\n".encode())
        return h.hexdigest()


def link_problem(path: Path, root: Path) -> Optional[str]:
    """Returns why the symlink `path` is not followed — it dangles, loops, or leads outside the corpus folder
    `root` — or None when it is no link or stays inside (a `passwd.md → /etc/passwd` link is never read)."""
    if not path.is_symlink():
        return None
    try:
        target = path.resolve(strict=True)
    except FileNotFoundError:
        return f"symlink to {os.readlink(path)!r} dangles (its target does not exist)"
    except (RuntimeError, OSError):
        return "symlink loops (it leads back to itself)"
    if not target.is_relative_to(root.resolve()):
        return "symlink leads outside the corpus folder"
    return None


def corpus_files(root: Path, exclude: Iterable[str] = DEFAULT_EXCLUDE) -> tuple[list[Path], list[Problem]]:
    """Returns the files under `root` (or `root` itself) with a suffix it reads, sorted, skipping hidden and index dirs,
    and a problem for each symlink not followed (dangling, looping, leading outside `root`, or to a folder)."""
    if root.is_file():
        return [root], []
    skip = tuple(exclude)
    out, problems = [], []
    for path in sorted(root.rglob("*")):
        parts = path.relative_to(root).parts
        if any(p.startswith(".") or p == "index" for p in parts[:-1]) or path.name.startswith("."):
            continue
        rel = path.relative_to(root).as_posix()
        if LONE_SURROGATE.search(rel):      # bytes that are not UTF-8, which no store can write
            problems.append((rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace"), 0,
                             "file name is not valid UTF-8"))
            continue
        if path.is_symlink():
            why = link_problem(path, root) or ("symlink to a folder is not followed" if path.is_dir() else None)
            if why:
                problems.append((rel, 0, why))
                continue
        if path.is_file() and not excluded(rel, skip) and path.suffix.lower() in READ_SUFFIXES:
            out.append(path)
    kept, repeated = one_format(out, root)
    return kept, problems + repeated


def excluded(rel: str, patterns: Iterable[str]) -> bool:
    """Returns whether a file (its path in the corpus folder) matches one of `patterns`: shell globs matched, case
    kept, against its name or its whole path (``README.md``, ``LICENSE*``, ``drafts/*``; a ``*`` also matches a ``/``)."""
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(rel, p) for p in patterns)


def one_format(files: list[Path], root: Path) -> tuple[list[Path], list[Problem]]:
    """Returns `files` with one file a document, in FORMAT_ORDER where a folder holds one name in several formats,
    and a problem naming the file read for each one left out (JSONL records are no such document)."""
    def key(path: Path) -> tuple[Path, str]:
        return path.parent, path.stem.casefold()

    rank = {suffix: i for i, suffix in enumerate(FORMAT_ORDER)}
    best: dict[tuple[Path, str], Path] = {}
    for path in sorted((p for p in files if p.suffix.lower() in rank), key=lambda p: rank[p.suffix.lower()]):
        best.setdefault(key(path), path)
    kept, problems = [], []
    for path in files:
        read = best[key(path)] if path.suffix.lower() in rank else path    # JSONL records are no such document
        if read == path:
            kept.append(path)
        else:
            problems.append((path.relative_to(root).as_posix(), 0, f"the same document as {read.name}, which is read"))
    return kept, problems


def flag_instructions(chunk: Chunk) -> Chunk:
    """Returns the chunk with the instruction-like phrases of its text, if any, in ``meta["instructions"]``
    (`store.instructions`: such a chunk is shown flagged, never quoted offline, never support for a claim)."""
    found = instruction_phrases(chunk.text)
    return replace(chunk, meta={**chunk.meta, "instructions": list(found)}) if found else chunk


def read_files(root: Path, files: list[Path], profile: Any, progress: bool = False) -> Corpus:
    """Returns the documents of `files` read under `profile` (no chunks yet), with the problems met."""
    base = root.parent if root.is_file() else root
    corpus = Corpus(root=str(root))
    if progress:
        from tqdm import tqdm

        files = tqdm(files, desc="read corpus", unit="file")
    for path in files:
        rel = path.relative_to(base).as_posix()
        if path.suffix.lower() == ".jsonl":
            for item in read_records(path, base, profile):
                if isinstance(item, Document):
                    corpus.documents.append(item)
                else:
                    corpus.problems.append(item)
            continue
        try:
            doc = read_markdown(path, base, profile)
        except Malformed as e:
            corpus.problems.append((rel, e.line, str(e)))
            continue
        except OSError as e:
            corpus.problems.append((rel, 0, f"cannot read: {e.strerror or e}"))
            continue
        corpus.documents.append(doc)
    return corpus


def to_hits(found: Iterable[tuple[Chunk, float]], retriever: str) -> tuple:
    """Returns `Hit`s for (chunk, score) pairs in rank order, recording the retriever's rank and score.

    Built unvalidated (`Record.trusted`): a backend's chunks carry the field types `Chunk` declares, and a
    search builds hundreds of hits per query.
    """
    from .records import Hit

    return tuple(
        Hit.trusted({"chunk_id": c.id, "text": c.text, "score": float(score), "source": c.source, "title": c.title,
                     "section": c.section, "date": c.date, "family": c.family, "kind": c.kind,
                     "department": c.department, "security_level": c.security_level,
                     "instructions": tuple(c.meta.get("instructions", ())), "ranks": {retriever: rank},
                     "scores": {retriever: float(score)}})
        for rank, (c, score) in enumerate(found, 1))
