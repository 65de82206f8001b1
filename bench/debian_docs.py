"""Converts an installed Debian documentation package (DocBook HTML) into a folder of markdown files.

These are the non-statute corpora of bench/domain_bench.py: real text nobody on the project wrote,
installable offline from the Debian archive. One markdown file per section of the split level
(a Debian Reference section such as 3.2, a FAQ question such as 1.2), plus one for the text a
chapter holds before its first section; deeper headings stay `##`/`###` lines inside the file,
`<pre>` becomes fenced code, tables become markdown tables and links inside the document point
at the markdown file that holds their target. The output is deterministic (sorted inputs,
no dates), and `<out>.json` next to the folder records the package, its version and every
file's sha256.
  apt-get install debian-reference-en debian-reference-zh-cn debian-faq-zh-cn debian-handbook valgrind maint-guide \
    developers-reference installation-guide-amd64 debian-edu-doc-en debian-edu-doc-zh-cn debian-policy harden-doc \
    kicad-doc-zh debian-kernel-handbook bash-doc wireshark-doc mutt bind9-doc r-doc-html \
    postgresql-doc-15
  apt-get install --no-install-recommends libreoffice-help-zh-cn   # the *-guide-zh-cn, not LibreOffice
  python bench/debian_docs.py reference-en [--out DIR]   # default $LAMBDARAG_HOME/corpora/reference-en
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from lambdarag.skills.store.formats import HtmlMarkdown


@dataclass(frozen=True)
class Source:
    """One Debian package's HTML documents and how they split into markdown files."""

    package: str
    pattern: str      # glob(s) of the HTML files, space-separated, in reading order when sorted
    split: int        # heading level that starts a new file (2: h2 sections)
    language: str     # BCP 47 tag of the text
    toc: str = ""     # a page whose links give the reading order (else: page_order of the file names)
    ids_lead: bool = False   # ids just before a split heading are that heading's (makeinfo), else the text's before


SOURCES = {
    "reference-en": Source("debian-reference-en", "/usr/share/debian-reference/[pca][hrp]*.en.html", 2, "en"),
    "reference-zh-cn": Source("debian-reference-zh-cn", "/usr/share/debian-reference/[pca][hrp]*.zh-cn.html", 2,
                              "zh-CN"),
    "faq-zh-cn": Source("debian-faq-zh-cn", "/usr/share/doc/debian/FAQ/zh-cn/*.zh-cn.html", 2, "zh-CN"),
    "handbook-en": Source("debian-handbook", "/usr/share/doc/debian-handbook/html/en-US/*.html", 2, "en",
                          toc="/usr/share/doc/debian-handbook/html/en-US/index.html"),
    "valgrind-en": Source("valgrind", "/usr/share/doc/valgrind/html/manual-[ic]*.html /usr/share/doc/valgrind/html/*-manual.html",
                          2, "en", toc="/usr/share/doc/valgrind/html/manual.html"),
    "maint-guide-en": Source("maint-guide", "/usr/share/doc/maint-guide/html/*.en.html", 2, "en",
                             toc="/usr/share/doc/maint-guide/html/index.en.html"),
    "developers-reference-en": Source("developers-reference", " ".join(
        f"/usr/share/developers-reference/{page}.html" for page in ("scope", "new-maintainer", "developer-duties",
                                                                     "resources", "pkgs", "best-pkging-practices",
                                                                     "beyond-pkging", "l10n", "tools")),
        2, "en", toc="/usr/share/developers-reference/index.html"),
    "install-guide-zh-cn": Source("installation-guide-amd64", "/usr/share/doc/installation-guide-amd64/zh_CN/*.html", 2,
                                  "zh-CN", toc="/usr/share/doc/installation-guide-amd64/zh_CN/index.html"),
    # the Debian Edu manual is one page: its h2 headings are the chapters, its h3 the sections
    "edu-en": Source("debian-edu-doc-en", "/usr/share/doc/debian-edu-doc-en/debian-edu-bookworm-manual.html", 3, "en"),
    "edu-zh-cn": Source("debian-edu-doc-zh-cn", "/usr/share/doc/debian-edu-doc-zh-cn/debian-edu-bookworm-manual.html",
                        3, "zh-CN"),
    "policy-en": Source("debian-policy", " ".join(
        f"/usr/share/doc/debian-policy/policy.html/{glob}.html" for glob in ("ch-*", "ap-*", "upgrading-checklist")),
        2, "en", toc="/usr/share/doc/debian-policy/policy.html/index.html"),
    # the handbook's Simplified Chinese translation (handbook-en's text, translated; its questions are written apart)
    "handbook-zh-cn": Source("debian-handbook", "/usr/share/doc/debian-handbook/html/zh-CN/*.html", 2, "zh-CN",
                             toc="/usr/share/doc/debian-handbook/html/zh-CN/index.html"),
    "harden-en": Source("harden-doc", "/usr/share/doc/harden-doc/html/en-US/*.html", 2, "en",
                        toc="/usr/share/doc/harden-doc/html/en-US/index.html"),
    # KiCad's PCB editor manual, one asciidoctor page: its h2 headings are the chapters, its h3 the sections
    "kicad-pcb-zh-cn": Source("kicad-doc-zh", "/usr/share/doc/kicad/help/zh/pcbnew.html", 3, "zh-CN"),
    "kernel-handbook-en": Source("debian-kernel-handbook",
                                 "/usr/share/doc/debian-kernel-handbook/kernel-handbook.html/ch-*.html", 2, "en",
                                 toc="/usr/share/doc/debian-kernel-handbook/kernel-handbook.html/index.html"),
    # LibreOffice Calc's how-to guides: one help page per topic, its h1 the title (split=1: a file per page)
    "calc-guide-zh-cn": Source("libreoffice-help-zh-cn", "/usr/share/libreoffice/help/zh-CN/text/scalc/guide/*.html", 1,
                               "zh-CN"),
    # LibreOffice Writer's how-to guides, the same help system as Calc's above (another program's text)
    "writer-guide-zh-cn": Source("libreoffice-help-zh-cn",
                                 "/usr/share/libreoffice/help/zh-CN/text/swriter/guide/*.html", 1, "zh-CN"),
    # the Bash Reference Manual, one makeinfo page: its h2 headings are the chapters, its h3 the sections
    "bash-ref-en": Source("bash-doc", "/usr/share/doc/bash/bashref.html", 3, "en", ids_lead=True),
    # the Wireshark User's Guide's chapters on using the program (1, 3-8, 11), not building it, telephony, wireless,
    # MATE or the appendices: DocBook XSL pages chunked at the h2 sections, like the handbook's
    "wireshark-guide-en": Source("wireshark-doc", " ".join(
        f"/usr/share/doc/wireshark/wsug_html_chunked/{glob}.html" for glob in (
            "ChapterIntroduction", "ChIntro*", "ChapterUsing", "ChUse*", "ChapterCapture", "ChCap*", "ChapterIO", "ChIO*",
            "ChapterWork", "ChWork*", "ChapterAdvanced", "ChAdv*", "ChStat*", "ChapterCustomize", "ChCust*")),
        2, "en", toc="/usr/share/doc/wireshark/wsug_html_chunked/index.html"),
    # KiCad's manuals other than its two editors' (kicad-pcb-zh-cn's pcbnew; eeschema's is mostly English): the
    # introduction, the project manager, the drawing sheet editor, the PCB calculator and the Gerber viewer, one
    # asciidoctor page each like pcbnew's; each numbers its own chapters, so file numbers repeat across manuals
    "kicad-tools-zh-cn": Source("kicad-doc-zh", " ".join(
        f"/usr/share/doc/kicad/help/zh/{page}.html" for page in ("introduction", "kicad", "pl_editor", "pcb_calculator",
                                                                 "gerbview")), 3, "zh-CN"),
    # the Mutt manual's chapters on using and configuring the mail reader (1-8, 10), not the reference chapter 9 of
    # every command, function and variable: DocBook XSL pages chunked at the chapters, split at their h2 sections
    "mutt-manual-en": Source("mutt", " ".join(
        f"/usr/share/doc/mutt/html/{page}.html" for page in ("intro", "gettingstarted", "configuration", "advancedusage",
                                                             "mimesupport", "optionalfeatures", "security", "tuning",
                                                             "miscellany")),
        2, "en", toc="/usr/share/doc/mutt/html/index.html"),
    # LibreOffice Impress's and Draw's how-to guides, the same help system as Calc's and Writer's (two other programs)
    "impress-draw-guide-zh-cn": Source("libreoffice-help-zh-cn", " ".join(
        f"/usr/share/libreoffice/help/zh-CN/text/{module}/guide/*.html" for module in ("simpress", "sdraw")), 1, "zh-CN"),
    # the BIND 9 Administrator Reference Manual's chapters on running a name server (1-7, 9, 10), not the reference
    # chapter 8 of every statement and option, the man pages, the release notes or the separate DNSSEC guide: Sphinx
    # pages, one per chapter, split at their h2 sections like developers-reference's
    "bind-arm-en": Source("bind9-doc", " ".join(
        f"/usr/share/doc/bind9-doc/arm/chapter{number}.html" for number in (1, 2, 3, 4, 5, 6, 7, 9, 10)),
        2, "en", toc="/usr/share/doc/bind9-doc/arm/index.html"),
    # LibreOffice's shared how-to guides (the help pages common to every program: saving, printing, signing, fonts,
    # AutoCorrect, ...), the same help system as the three *-guide-zh-cn above; Base's own pages are mostly English
    "office-guide-zh-cn": Source("libreoffice-help-zh-cn", "/usr/share/libreoffice/help/zh-CN/text/shared/guide/*.html",
                                 1, "zh-CN"),
    # An Introduction to R, one makeinfo page like the Bash Reference Manual: its h2 headings are the chapters and
    # appendices, its h3 the sections; statistics and a programming language, far from system administration
    "r-intro-en": Source("r-doc-html", "/usr/share/R/doc/manual/R-intro.html", 3, "en", ids_lead=True),
    # LibreOffice Chart's help (chart types, data series, axes, titles, legends, trend lines, error bars), the same
    # help system as the *-guide-zh-cn above, another program: its overview pages, then its dialogs and toolbars
    "chart-help-zh-cn": Source("libreoffice-help-zh-cn", " ".join(
        f"/usr/share/libreoffice/help/zh-CN/text/schart/{folder}*.html" for folder in ("", "01/", "02/", "04/")),
        1, "zh-CN"),
    # PostgreSQL 15's tutorial and its SQL chapters on defining tables, changing data and queries (2-3, 5-7), not the
    # other 1100 pages: DocBook XSL pages, one per h2 section, the chapters' own pages (a table of contents) left out
    "postgres-sql-en": Source("postgresql-doc-15", " ".join(
        f"/usr/share/doc/postgresql-doc-15/html/{chapter}-*.html" for chapter in ("tutorial", "ddl", "dml", "queries")),
        2, "en"),
    # LibreOffice's wizards (letter, fax, agenda, form, report, HTML export, group element, document converter, euro
    # converter, address data source) in Simplified Chinese, the same help system as the *-guide-zh-cn above, a page
    # per wizard and per wizard page
    "wizards-zh-cn": Source("libreoffice-help-zh-cn", "/usr/share/libreoffice/help/zh-CN/text/shared/autopi/*.html", 1,
                            "zh-CN"),
}
SKIPPED = {"navheader", "navfooter", "toc", "list-of-tables", "list-of-figures", "list-of-examples", "docnav", "nav",
           "related", "sphinxsidebar", "footer",   # these three: Sphinx's navigation (developers-reference)
           "debug",   # LibreOffice help's "Help content debug info" box on every page
           "header", "section-toc", "Contents_element",   # makeinfo's node navigation, menus and table of contents
           "index-bt", "index-cp", "index-fn", "index-rw", "index-vr"}   # the Bash manual's index tables
SKIPPED_IDS = {"banner", "title"}   # the handbook's page banner and logo line, on every page
NUMBER = re.compile(r"^(?:Appendix\s+[A-Z]|[A-Z](?:\.\d+)+|\d+(?:\.\d+)*)\s+"   # makeinfo's: '3.1 Quoting', no dot
                    r"|^(?:(?:Chapter|Appendix)\s+\S+\.|第\s*\S+\s*章|附录\s*\S+[.．]?|[\dA-Z]+(?:\.\d+)*\.)\s*")
LINK = "\x00{}\x00"
PERMALINK_ICON = "\uf0c1"   # the Read the Docs theme's link glyph (Font Awesome, a private-use character): never text


@dataclass
class Section:
    """One output file: its number (01.02), heading and markdown lines, and the anchors it holds."""

    number: str
    title: str
    lines: list[str]
    anchors: set[str]


def chapter_number(heading: str, fallback: int) -> int:
    """Returns the chapter number a chapter heading states ('Chapter 3. …', '第 3 章 …', '3. …'), else `fallback`."""
    m = re.match(r"^(?:Chapter\s+|第\s*)(\d+)|^(\d+)\.?\s", heading)
    return int(m.group(1) or m.group(2)) if m else fallback


def slug(title: str, limit: int = 40) -> str:
    """Returns a file-name-safe form of a title that keeps letters of any script: 'Systemd init' → 'systemd-init'."""
    text = re.sub(r"[^\w]+", "-", title.lower(), flags=re.UNICODE).strip("-_")
    return text[:limit].rstrip("-_") or "section"


class DocBookMarkdown(HtmlMarkdown):
    """Turns one DocBook XSL HTML page into Sections: headings, paragraphs, lists, tables, code and links."""

    FRAMES = ("div", "ul", "p", "table", "footer")
    BLOCKS = frozenset({"p", "li", "dt", "dd", "div", "blockquote", "ul", "ol", "dl", "table", "title"})

    def __init__(self, split: int, chapter: int, ids_lead: bool = False):
        super().__init__()
        self.split, self.chapter, self.ids_lead = split, chapter, ids_lead
        self.sections: list[Section] = []
        self.heading_anchors: set[str] = set()
        self.loose: tuple[int, set[str]] = (0, set())   # anchors with no text after them yet, and the line count
        self.count = 0             # split-level sections so far, numbers the ones whose heading has none
        self.permalink: tuple[list, list[str]] | None = None   # an open Sphinx permalink: its attributes and text

    def current(self) -> Section:
        if not self.sections:
            self.sections.append(Section(f"{self.chapter:02d}.00", "", [], set()))
        return self.sections[-1]

    def out(self) -> list[str]:
        return self.current().lines

    def skipped(self, tag: str, attrs: dict) -> bool:
        return (bool(SKIPPED & set((attrs.get("class") or "").split())) or attrs.get("id") in SKIPPED_IDS
                or tag == "footer")   # the Read the Docs theme's page footer: next/previous buttons and copyright

    def handle_starttag(self, tag, attrs):
        if tag == "a" and "headerlink" in (dict(attrs).get("class") or "").split():
            self.permalink = (attrs, [])   # held until its end: the Read the Docs theme's icon is left out
            return
        super().handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag == "a" and self.permalink is not None:
            (attrs, text), self.permalink = self.permalink, None
            if "".join(text).strip() != PERMALINK_ICON:   # Sphinx's own ¶ reads as before
                super().handle_starttag(tag, attrs)
                super().handle_data("".join(text))
                super().handle_endtag(tag)
            return
        super().handle_endtag(tag)

    def handle_data(self, data):
        if self.permalink is not None:
            self.permalink[1].append(data)
            return
        super().handle_data(data)

    def anchor(self, tag: str, attrs: dict) -> None:
        name = attrs.get("id") or (attrs.get("name") if tag == "a" else None)   # older DocBook XSL: <a name=…>
        if name:   # a heading's own id (asciidoctor: <h3 id=…>) names the section that heading starts
            heading = self.heading is not None or re.fullmatch(r"h[1-6]", tag)
            (self.heading_anchors if heading else self.current().anchors).add(name)
            if self.ids_lead and not heading:
                lines, loose = self.loose
                self.loose = (len(self.out()), (loose if lines == len(self.out()) else set()) | {name})

    def target(self, href: str) -> str:
        """Returns an external link as is and a link into the document as a placeholder resolved later."""
        if re.match(r"^[a-z]+:", href):
            return href
        return LINK.format(href.split("#", 1)[-1] if "#" in href else href)

    def end_heading(self, level: int, title: str) -> None:
        """Starts a new Section at the split level or above (numbered from the heading), else writes a ## line."""
        self.heading, anchors, self.heading_anchors = None, self.heading_anchors, set()
        title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title).strip().rstrip("¶").rstrip()   # Sphinx's permalink
        bare = NUMBER.sub("", title).strip() or title
        if not bare:
            self.current().anchors |= anchors
            return
        (lines, loose), self.loose = self.loose, (-1, set())
        if level <= self.split and lines == len(self.out()):
            self.current().anchors -= loose
            anchors |= loose
        if level < self.split:
            self.chapter = chapter_number(title, self.chapter)
            number = f"{self.chapter:02d}.00"
        elif level == self.split:
            self.count += 1
            m = re.match(r"^(\d+)\.(\d+)[.\s]", title)
            number = f"{int(m.group(1)):02d}.{int(m.group(2)):02d}" if m else f"{self.chapter:02d}.{self.count:02d}"
        else:
            self.current().lines.append("#" * (level - self.split + 1) + " " + bare)
            self.current().anchors |= anchors
            return
        if self.sections and not self.sections[-1].lines and not self.sections[-1].title:
            anchors |= self.sections.pop().anchors
        self.sections.append(Section(number, bare, [f"# {bare}"], anchors))


def convert(name: str) -> tuple[Source, dict[str, str]]:
    """Returns the source of corpus `name` and its markdown files (file name → text), links resolved."""
    source = SOURCES[name]
    pages = sorted((p for glob in source.pattern.split() for p in Path("/").glob(glob.lstrip("/"))
                    if not p.name.startswith("index.")),
                   key=toc_order(Path(source.toc)) if source.toc else page_order)
    if not pages:
        raise SystemExit(f"no {source.pattern}: apt-get install {source.package}")
    return source, markdown_files([p.read_text(encoding="utf-8") for p in pages], source.split, source.ids_lead)


def markdown_files(pages: list[str], split: int, ids_lead: bool = False) -> dict[str, str]:
    """Returns the markdown files (file name → text) of HTML pages in reading order, links between them resolved;
    with `ids_lead`, ids with no text between them and a split heading name that heading's file (see Source)."""
    sections: list[Section] = []
    parser: DocBookMarkdown | None = None
    for chapter, page in enumerate(pages):
        previous, parser = parser, DocBookMarkdown(split, chapter, ids_lead)
        if previous and not any(re.search(rf"<h{level}[\s>]", page) for level in range(1, split)):
            # a page of one section (with split=1, every page): its chapter goes on
            parser.chapter, parser.count = previous.chapter, previous.count
        parser.feed(page)
        parser.close()
        sections += [s for s in parser.sections if s.title and len(s.lines) > 1]
    names: dict[int, str] = {}
    for i, s in enumerate(sections):
        base = f"{s.number}-{slug(s.title)}"
        names[i] = base + ".md" if base + ".md" not in names.values() else f"{base}-{i}.md"
    where = {a: names[i] for i, s in enumerate(sections) for a in s.anchors}
    files = {}
    for i, s in enumerate(sections):
        body = "\n".join(s.lines)
        body = re.sub(LINK.format("([^\x00]*)"), lambda m: where.get(m.group(1), ""), body)
        body = re.sub(r"\[([^\]\n]*)\]\(\)", r"\1", body)  # a link whose target is outside the corpus: its text
        files[names[i]] = re.sub(r"\n{3,}", "\n\n", body).strip() + "\n"
    return files


def page_order(path: Path) -> tuple[int, str]:
    """Returns the reading order of a page: the preface first, chapters in name order, appendices last."""
    stem = path.name.split(".")[0]
    return (0 if stem.startswith("pr") else 2 if stem.startswith("ap") else 1, stem)


def toc_order(toc: Path) -> Callable[[Path], tuple[int, str]]:
    """Returns the reading order the links of a table-of-contents page give (pages it never links last)."""
    links = list(dict.fromkeys(re.findall(r'href="([^"#:]+\.html)', toc.read_text(encoding="utf-8"))))
    return lambda path: (links.index(path.name) if path.name in links else len(links), path.name)


def package_version(package: str) -> str:
    """Returns the installed version of a Debian package (dpkg-query), or raises SystemExit when it is missing."""
    run = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package], capture_output=True, text=True)
    if run.returncode or not run.stdout:
        raise SystemExit(f"package {package} is not installed: apt-get install {package}")
    return run.stdout


def write(name: str, out: Path) -> dict:
    """Writes corpus `name` as markdown files under `out` (replacing what is there) and returns its manifest."""
    source, files = convert(name)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.md"):
        if old.name not in files:
            old.unlink()
    for fname, text in files.items():
        (out / fname).write_text(text, encoding="utf-8")
    manifest = {"corpus": name, "package": source.package, "version": package_version(source.package),
                "language": source.language, "from": source.pattern, "files": len(files),
                "sha256": {f: hashlib.sha256(t.encode()).hexdigest() for f, t in files.items()}}
    out.with_suffix(".json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return manifest


def default_out(name: str) -> Path:
    """Returns $LAMBDARAG_HOME/corpora/<name> (~/.lambdarag when unset)."""
    home = Path(os.environ.get("LAMBDARAG_HOME", Path.home() / ".lambdarag"))
    return home / "corpora" / name


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", choices=sorted(SOURCES))
    ap.add_argument("--out", type=Path, default=None, help="output folder (default $LAMBDARAG_HOME/corpora/<corpus>)")
    args = ap.parse_args()
    m = write(args.corpus, args.out or default_out(args.corpus))
    sys.stdout.write(f"{m['files']} files from {m['package']} {m['version']} → {args.out or default_out(args.corpus)}\n")
