"""Markdown from the other formats a corpus folder may hold: HTML pages, reStructuredText, plain text and PDF.

A converted file is then read as a markdown file is, so its headings become the sections its chunks are cut and
cited by. Only markdown carries front matter; a sidecar JSON file gives a file of any format its metadata and
access labels. Scripts, styles, forms and navigation of a page are left out.
"""
from __future__ import annotations

import io
import logging
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Callable, Optional

SKIPPED_TAGS = frozenset({"nav", "script", "style", "noscript", "template", "svg", "form", "button", "footer"})
"""Elements whose whole subtree is no part of a page's text."""
NAVIGATION_CLASS = re.compile(r"(?:^|\s)[\w-]*(?:nav|toc|breadcrumb|menu)[\w-]*(?:\s|$)", re.I)
"""A class that marks navigation (navbar, navheader, toc, breadcrumbs, menu): left out too. Not "sidebar": in
DocBook and elsewhere a sidebar is a boxed note of the text."""


class HtmlMarkdown(HTMLParser):
    """Turns an HTML page into markdown lines: headings, paragraphs, list items, table rows and fenced code.

    A subclass can split the lines into several outputs (`out`), keep links (`target`), record anchors (`anchor`)
    and choose what to leave out (`FRAMES`, `skipped`); bench/debian_docs.py does, for DocBook pages.
    """

    FRAMES: tuple[str, ...] = ("div", "span", "ul", "ol", "p", "table", "aside", "section", "header",
                               *sorted(SKIPPED_TAGS))
    """Elements that may open a subtree `skipped` leaves out (tracked so that its end is found)."""
    BLOCKS = frozenset({"p", "li", "dt", "dd", "div", "blockquote", "ul", "ol", "dl", "table", "title", "section",
                        "article", "main", "header", "aside", "figure", "figcaption", "details", "summary", "hr"})
    """Elements that end the line before them and their own."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.title = ""            # the page's <title>
        self.skip_depth = 0        # >0 inside a skipped subtree
        self.frames: list[tuple[str, bool]] = []   # open FRAMES elements and whether each is skipped
        self.heading: Optional[int] = None
        self.pre = 0
        self.buf: list[str] = []
        self.list_depth = 0
        self.row: Optional[list[str]] = None
        self.rows_in_table = 0
        self.cell: Optional[list[str]] = None
        self.href: list[Optional[str]] = []
        self.in_head = False
        self.in_title = False
        self.pending = ""          # the bullet of a list item whose first line is not written yet

    # -- what a subclass may change
    def out(self) -> list[str]:
        """Returns the lines the page's text goes to now."""
        return self.lines

    def skipped(self, tag: str, attrs: dict) -> bool:
        """Returns whether a FRAMES element's subtree is left out: navigation, scripts, and what a reader of the page
        never sees (hidden text is where a hostile page would put instructions for a model)."""
        style = re.sub(r"\s+", "", attrs.get("style") or "").lower()
        return (tag in SKIPPED_TAGS or attrs.get("role") == "navigation" or "hidden" in attrs
                or attrs.get("aria-hidden") == "true" or "display:none" in style or "visibility:hidden" in style
                or bool(NAVIGATION_CLASS.search(attrs.get("class") or "")))

    def anchor(self, tag: str, attrs: dict) -> None:
        """Notes an element's anchor (its id); a single page needs none."""

    def target(self, href: str) -> Optional[str]:
        """Returns where a link's markdown points, or None to keep its text alone."""
        return None

    def end_heading(self, level: int, title: str) -> None:
        """Writes a heading line."""
        self.heading = None
        if title:
            self.out().append("#" * level + " " + title)

    # -- output helpers
    def text(self) -> str:
        out = "".join(self.buf)
        self.buf = []
        return out if self.pre else re.sub(r"\s+", " ", out).strip()

    def flush(self) -> None:
        line = self.text()
        if line:
            indent = "  " * self.list_depth if self.list_depth else ""
            self.out().append((self.pending or indent) + line)
            self.pending = ""

    def emit(self, s: str) -> None:
        (self.cell if self.cell is not None else self.buf).append(s)

    # -- parser callbacks
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "head":
            self.in_head = True
        if tag == "title":
            self.in_title = True
        if tag in self.FRAMES:
            skip = self.skipped(tag, a)
            self.frames.append((tag, skip))
            self.skip_depth += skip
        if self.skip_depth or self.in_head:
            return
        self.anchor(tag, a)
        if re.fullmatch(r"h[1-6]", tag):
            self.flush()
            self.heading = int(tag[1])
        elif tag == "pre":
            self.flush()
            self.pre += 1
        elif tag == "br":
            self.emit("\n" if self.pre else " ")
        elif tag in ("ul", "ol"):
            self.flush()
            self.list_depth += 1
        elif tag == "li":
            self.flush()
            self.pending = "  " * (self.list_depth - 1) + "- "
        elif tag == "table":
            self.flush()
            self.rows_in_table = 0
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.cell = []
        elif tag == "a":
            self.href.append(a.get("href"))
            if a.get("href") and not self.pre and self.target(a["href"]) is not None:
                self.emit("[")
        elif tag in self.BLOCKS:
            self.flush()

    def handle_endtag(self, tag):
        if tag == "head":
            self.in_head = False
        if tag == "title":
            self.in_title = False
        if tag in self.FRAMES and any(open_tag == tag for open_tag, _ in self.frames):
            while True:     # an end tag also closes what was left open inside it (<nav><p>Home<p>Docs</nav>)
                open_tag, skip = self.frames.pop()
                self.skip_depth -= skip
                if open_tag == tag:
                    break
            if skip:
                return
        if self.skip_depth or self.in_head:
            return
        if re.fullmatch(r"h[1-6]", tag) and self.heading is not None:
            self.end_heading(int(tag[1]), self.text())
        elif tag == "pre":
            code = self.text().strip("\n")
            self.pre -= 1
            if code:
                self.out().extend(["```", *code.split("\n"), "```"])
        elif tag in ("ul", "ol"):
            self.flush()
            self.list_depth -= 1
        elif tag in ("td", "th") and self.cell is not None:
            if self.row is not None:
                self.row.append(re.sub(r"\s+", " ", "".join(self.cell)).strip().replace("|", "\\|"))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            if any(self.row):
                self.out().append("| " + " | ".join(self.row) + " |")
                if self.rows_in_table == 0:
                    self.out().append("|" + "---|" * len(self.row))
                self.rows_in_table += 1
            self.row = None
        elif tag == "a":
            href = self.href.pop() if self.href else None
            to = self.target(href) if href and not self.pre else None
            if to is not None:
                self.emit(f"]({to})")
        elif tag in self.BLOCKS or tag == "li":
            self.flush()

    def handle_data(self, data):
        if self.in_title:
            self.title += data
            return
        if self.skip_depth or self.in_head:
            return
        self.emit(data)


def html_markdown(page: str) -> str:
    """Returns an HTML page as markdown, titled by its <title> when no top heading opens it."""
    parser = HtmlMarkdown()
    parser.feed(page)
    parser.close()
    parser.flush()
    lines = parser.lines
    title = re.sub(r"\s+", " ", parser.title).strip()
    if title and not (lines and lines[0].startswith("# ")):
        lines = [f"# {title}", *lines]
    return "\n".join(lines) + "\n"


RST_ADORNMENT = re.compile(r"^([=\-`:'\"~^_*+#<>.])\1{2,}\s*$")
"""A reStructuredText section adornment: one punctuation character repeated, three times or more."""
RST_EXPLICIT = re.compile(r"^\.\.(?:\s+(?:([\w-]+)::\s*(.*)|.*))?$")
"""An explicit markup line: a directive (``.. name:: argument``), a target or a comment."""
RST_CODE = frozenset({"code-block", "code", "sourcecode"})
RST_NOTES = frozenset({"note", "tip", "hint", "important", "warning", "caution", "attention", "danger", "error",
                       "seealso", "admonition", "versionadded", "versionchanged", "deprecated"})
"""Directives whose content is text of the document (the rest, images, tables of contents, comments, are not)."""
RST_INLINE = ((re.compile(r"`([^`<]+?)\s*<[^<>`]+>`__?"), r"\1"), (re.compile(r"`([^`]+)`__?"), r"\1"),
              (re.compile(r"(?<![\w`])([A-Za-z][\w.-]*)__?(?![\w`])"), r"\1"), (re.compile(r"``([^`]+)``"), r"`\1`"))
"""Inline markup to plain words: a link's text without its target, a reference name without its underscore, a
literal in markdown's backticks."""


def rst_markdown(text: str) -> str:
    """Returns reStructuredText as markdown: section titles as headings, levels in the order their adornment
    styles first appear (as docutils assigns them); code and literal blocks fenced; a note's text kept under its
    name; images, targets, comments and other directives left out; the rest as written."""
    return titled_markdown(text, lambda line: plain_line(rst_inline(line)), rst_block)


def rst_block(lines: list[str], i: int) -> Optional[tuple[list[str], int]]:
    """Returns the markdown of the explicit markup or literal block that line `i` opens, and the line after it;
    None when it opens none."""
    line, explicit = lines[i], RST_EXPLICIT.match(lines[i])
    if not explicit and not line.rstrip().endswith("::"):
        return None
    name, argument = (explicit.group(1), explicit.group(2)) if explicit else ("", "")
    block, end = indented_block(lines, i + 1)
    if explicit and name in RST_NOTES:
        return [f"{name.capitalize()}: {rst_inline(argument)}".rstrip(": "), *map(rst_inline, dedented(block))], end
    if explicit and name not in RST_CODE:
        return [], end
    lead = [plain_line(rst_inline(line.rstrip()[:-1]))] if not explicit and line.strip() != "::" else []
    return [*lead, "```", *dedented([b for b in block if not re.match(r"^\s+:[\w-]+:", b)]), "```"], end


def titled_markdown(text: str, plain: Callable[[str], str],
                    block: Callable[[list[str], int], Optional[tuple[list[str], int]]] = lambda lines, i: None) -> str:
    """Returns text whose adorned titles (`adorned_title`) become markdown headings, levelled by the order their
    styles first appear; a line that opens a `block` becomes that block's lines, any other line `plain` of it."""
    lines, out, styles = text.split("\n"), [], []
    i = 0
    while i < len(lines):
        opened, found = block(lines, i), None
        if opened is not None:
            written, i = opened
            out += written
        elif (found := adorned_title(lines, i)) is not None:
            title, style, i = found
            out.append(heading(styles, style, title))
        else:
            out.append(plain(lines[i]))
            i += 1
    return "\n".join(out)


def adorned_title(lines: list[str], i: int) -> Optional[tuple[str, tuple[str, bool], int]]:
    """Returns the section title the lines at `i` make with an adornment (overline, title, underline; or title,
    underline at least as long): its text, its style and the line after it; None when they make none."""
    over = RST_ADORNMENT.match(lines[i]) if i + 2 < len(lines) else None
    if over and lines[i + 1].strip() and lines[i + 2].strip() == lines[i].strip():
        return lines[i + 1].strip(), (over.group(1), True), i + 3
    if (i + 1 < len(lines) and lines[i].strip() and not lines[i][:1].isspace() and not RST_ADORNMENT.match(lines[i])
            and RST_ADORNMENT.match(lines[i + 1]) and len(lines[i + 1].strip()) >= len(lines[i].strip())):
        return lines[i].strip(), (lines[i + 1].strip()[0], False), i + 2
    return None


def heading(styles: list[tuple[str, bool]], style: tuple[str, bool], title: str) -> str:
    """Returns a markdown heading for a title of adornment `style`, its level the order in which the styles first
    appeared (`styles`, extended here)."""
    if style not in styles:
        styles.append(style)
    return "#" * min(styles.index(style) + 1, 6) + " " + title


def rst_inline(line: str) -> str:
    """Returns a line of reStructuredText with its inline markup as plain words (`RST_INLINE`)."""
    for pattern, words in RST_INLINE:
        line = pattern.sub(words, line)
    return line


def indented_block(lines: list[str], start: int) -> tuple[list[str], int]:
    """Returns the indented (or blank) lines from `start` on, trailing blanks left out, and where they end."""
    end = start
    while end < len(lines) and (not lines[end].strip() or lines[end][:1].isspace()):
        end += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end], end


def dedented(block: list[str]) -> list[str]:
    """Returns a block's lines without their common indentation and without its leading blank lines."""
    while block and not block[0].strip():
        block = block[1:]
    indent = min((len(b) - len(b.lstrip()) for b in block if b.strip()), default=0)
    return [b[indent:] for b in block]


def plain_line(line: str) -> str:
    """Returns a line of plain text that the markdown reader will not take for a heading (`#` at its start)."""
    return " " + line if line.startswith("#") else line


def text_markdown(text: str) -> str:
    """Returns plain text as markdown: a title underlined (or over- and underlined) with a repeated punctuation
    character as a heading, as reStructuredText, AsciiDoc and setext write them; the rest as written, no line of it
    read as a heading."""
    return titled_markdown(text, plain_line)


class Unconvertible(ValueError):
    """A file whose format this package reads but whose content it cannot (a damaged or encrypted PDF, or no
    PDF reader installed)."""


def pdf_markdown(data: bytes) -> str:
    """Returns a PDF's text as markdown: its outline's entries as headings on the pages they point to (at the
    line that repeats an entry's title, else at the page's top), or a ``## Page N`` heading a page when it has no
    outline; its metadata title titles it. Needs pypdf (the ``pdf`` extra)."""
    try:
        import pypdf
    except ImportError:
        raise Unconvertible("reading a PDF needs pypdf: pip install 'lambdarag[pdf]'") from None
    logging.getLogger("pypdf").setLevel(logging.ERROR)   # its warnings about a file's quirks are not ours to print
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise Unconvertible("the PDF is encrypted")
        pages = [page.extract_text() or "" for page in reader.pages]
        marks = outline_marks(reader, reader.outline, 0)
        title = re.sub(r"\s+", " ", str((reader.metadata or {}).get("/Title") or "")).strip()
    except Unconvertible:
        raise
    except Exception as e:   # a hostile or damaged file may fail anywhere in the parser: a named problem, no traceback
        raise Unconvertible(f"not a readable PDF: {type(e).__name__}: {e}") from None
    out = [f"# {title}"] if title else []
    for number, text in enumerate(pages):
        lines = [pdf_line(line) for line in text.split("\n")]
        missing = []
        for depth, head in [(d, t) for p, d, t in marks if p == number]:
            mark = "#" * min(depth + 2, 6) + " " + head
            at = next((i for i, line in enumerate(lines) if line.strip() == head), None)
            if at is None:
                missing.append(mark)
            else:
                lines[at] = mark
        out += ([] if marks else [f"## Page {number + 1}"]) + missing + lines
    return "\n".join(out)


def outline_marks(reader: Any, items: list, depth: int) -> list[tuple[int, int, str]]:
    """Returns a PDF outline's entries as (page index, depth, title), in outline order; entries without a page
    are left out."""
    out = []
    for item in items:
        if isinstance(item, list):
            out += outline_marks(reader, item, depth + 1)
            continue
        page = reader.get_destination_page_number(item)
        title = re.sub(r"\s+", " ", str(getattr(item, "title", "") or "")).strip()
        if page is not None and title:
            out.append((page, depth, title))
    return out


def pdf_line(line: str) -> str:
    """Returns a line of a PDF's text as markdown: a bullet as a list item, no line read as a heading."""
    line, bare = line.rstrip(), line.strip()
    return "- " + bare[1:].lstrip() if bare and bare[0] in "•◦▪‣" else plain_line(line)


TEXT_CONVERTERS: dict[str, Callable[[str], str]] = {
    ".html": html_markdown, ".htm": html_markdown, ".xhtml": html_markdown,
    ".rst": rst_markdown, ".txt": text_markdown,
}
"""Markdown from a text file's content, by its suffix (lower-case)."""
CONVERTED_SUFFIXES = (*TEXT_CONVERTERS, ".pdf")
"""The suffixes `read_as_markdown` reads; markdown and JSONL files are read as they are."""


def read_as_markdown(path: Path) -> str:
    """Returns a file of a CONVERTED_SUFFIXES format as markdown; raises UnicodeDecodeError for a text file that is
    not UTF-8 and `Unconvertible` for a PDF that cannot be read."""
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return pdf_markdown(path.read_bytes())
    return TEXT_CONVERTERS[suffix](path.read_text(encoding="utf-8-sig").replace("\r\n", "\n"))
