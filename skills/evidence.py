"""Evidence sentences for the offline answer: what in the retrieved chunks can be quoted, and how well each answers.

`candidates` cuts the context hits into quotable units — sentences, list items,
table rows, option lines with their description (``-h, --human-readable  print
sizes…``) and shell commands — each with the heading path it sits under (a table
row's ends in its table's header, scored with the row). What
never answers by itself is left out: synopsis and usage lines, bare
cross-references ("See 'X' in git(1)", 参见第 3 章), headings and captions,
questions, and repeats of a unit already taken. A hit's title or section heading
naming a date or version (… Debian Edu 11 … released 2021-08-14) is a unit of
its own, for a question asking when (`ASKS_WHEN`) only.

`ranked` scores them against the question with three signals, each scaled to
[0, 1] within the question: BM25 over the units (the index's tokenizer: jieba
for Chinese, its stemmer for English), the embedder's cosine between the
question's vector (the one retrieval computed, `skills.dense.query_vector`)
and the units', and BM25 of the heading path, so a heading's words count for
the units below it. `WEIGHTS` says how they mix; under a profile naming learned weights
(`Wording.evidence_weights`, `unit_features`) that mix's order is one feature of a fitted score that orders them.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Optional, Sequence

import numpy as np

from .store.bm25 import Bm25Index
from .store.records import Hit
from .store.tokenize import Tokenizer, default_tokenizer
from .coverage import THRESHOLD, SubQuestion, coverage
from .sentences import covered, english_stem, keywords, split_sentences
from .unit_features import FEATURES, KINDS, TYPED, load_weights

WEIGHTS = {"bm25": 0.45, "dense": 0.45, "heading": 0.10}
"""How the scaled signals mix (the dev questions' choice: see docs/answers.md)."""
DENSE_POOL = 32
"""How many candidates (best by BM25 and heading) the embedder scores for one answer."""
RANK_PRIOR = 0.05
"""Bonus a unit of the first hit gets over one of the last (retrieval's order breaks near-ties)."""

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}")
_OPTIONS = re.compile(r"^\s*(?:\*\*|`)?-{1,2}[\w?][\w-]*(?:[= ]?<?[\w-]*>?)?(?:\*\*|`)?"
                      r"(?:\s*,\s*(?:\*\*|`)?-{1,2}[\w-]+(?:[= ]?<?[\w-]*>?)?(?:\*\*|`)?)*\s*(?=$|\s{2,}|:\s|\t|\s[a-z])")
"""An option line: one or more options (-h, --human-readable, --block-size=SIZE) before a description or alone."""
_COMMAND = re.compile(r"^\s*[$#]\s+\S")
_MARKUP = re.compile(r"\[(?:来源|[Ss]ource):[^\]]*\]|\[\[|\]\]|\*\*|^\s*(?:>\s*)*(?:[-*+•]\s+)?")
_LEAD_IN = re.compile(r"^[^：。]{1,40} ：")
_FILE_LINE = re.compile(r"\.md\b|^entities/")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_LINK = re.compile(r"\[[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*\]\([^)]*\)")
FOOTNOTE = re.compile(r"\[\[\d+\]\s*\]\([^)]*\)\s*|(?<=[\w.,;:!?)])\s*\[\d{1,3}\]\([^)\s:]*\.md(?:#[^)\s]*)?\)")
"""A footnote reference of converted documentation ([[6] ](11.05-….md); after a word or a sentence end, a number
linking to a page of the corpus: …in your package. [11](10.10-file-names.md) dpkg-shlibdeps will…): a pointer,
never part of a quote; left in, it hid the end of the sentence before it, so a unit quoted two sentences as one
(policy-en dev r04). A number in a table cell (| [163](http://…) |) or linking to a bug is no footnote."""

SYNOPSIS = re.compile(
    r"^\s*(?i:usage|synopsis|用法|概要|语法|格式)\s*[:：]"
    r"|^\s*[\w./-]+(?:\s+[a-z][\w./-]*)?(?:\s+(?:\[[^\]]*\]|<[^>]*>|\{[^}]*\}|[A-Z][A-Z_]+|\.\.\.|…)(?:\.{3}|…)?)+\s*$")
"""A usage line: "Usage: …", or a command followed only by bracketed or upper-case placeholders (df [OPTION]… [FILE]…)."""
_REFERENCE = re.compile(
    r"(?:\b(?:see(?:\s+also)?|refer\s+to|read|consult|described\s+in)\b|参见|参阅|请参见|请参阅|请阅读|阅读|详见|见)"
    r"\s*(?:the\s+|下方的|上方的|下面的|上面的)?\s*(?=[\[“\"'「『`]|第\s*\d|[\w.-]+\(\d\w*\)|(?:section|chapter)\s)", re.I)
"""A pointer elsewhere: a see/参见 verb before a link, a quoted title, a section number or a man page (git(1))."""
_CAPTION = re.compile(r"^\s*(?:table|figure|example|表|图|例)\s*\d+(?:\.\d+)*[.．:：]?\s", re.I)
_QUESTION = re.compile(r"[?？][」』”\"']?\s*$")


@dataclass(frozen=True)
class Unit:
    """A piece of one hit's text that may be quoted whole (see the module docstring): its text, its heading path
    and its kind (sentence, item, term, definition, option, row, command)."""

    text: str
    heading: str = ""
    kind: str = "sentence"


@dataclass(frozen=True, kw_only=True)
class Candidate(Unit):
    """A unit of a context hit that may stand as an answer: the hit it cites, that hit's rank, the unit before it
    when this one names that as its subject (`lead`, scored with it, never quoted), and whether it opens its
    document (`opening`: among the first `OPENING` units before any heading) and its place among the units of its
    hit (`place`, in reading order); a lead-in quoted with its items is scored by what it says alone (`scored`)."""

    hit: Hit
    rank: int
    lead: str = ""
    opening: bool = False
    place: int = 0
    scored: str = ""


def normalised(text: str) -> str:
    """Returns `text` lower-cased without link targets, citation markers, whitespace and punctuation: what two
    copies of one sentence still share."""
    text = _LINK_TARGET.sub("", FOOTNOTE.sub("", re.sub(r"\[(?:来源|[Ss]ource):[^\]]*\]", "", text))).lower()
    return re.sub(r"[\W_]+", "", text)


_TARGET = re.compile(r"\[[^\]]*\](?:\([^)]*\))?|[“\"'「『][^”\"'」』]*[”\"'」』]?|第\s*[\d.]+\s*[节章]"
                     r"|[\w.-]+\(\d\w*\)|(?i:section|chapter)\s+[\d.]+")
_FOR_MORE = re.compile(r"(?i:for\s+(?:more|further|details|information)|more\s+(?:information|details))"
                       r"|以获得|以获取|了解更多|更多信息|更多细节|详细信息")
_POINTER = re.compile(r"(?i:\b(?:see|refer\s+to|read|consult)\b|\b(?:is|are)\s+(?:provided|given|available|found)\s+in\b)"
                      r"|参见|参阅|请阅读|阅读|详见|中提供|中找到")
"""Where a "for more" sentence says to look: a see/read verb, or "… is provided in" (More information about Debian
12 is provided in the release notes; …的更多信息在其[发布说明]…中提供)."""


def _words(text: str) -> int:
    return len(re.findall(r"[A-Za-z]{2,}", text)) + len(re.findall(r"[\u4e00-\u9fff]", text)) // 3


_ASIDE = re.compile(r"\s*[(（]\s*(?:(?i:see(?:\s+also)?|cf\.)\s|参见|参阅|请参见|请参阅|详见)(?:[^()（）]|\([^()]*\))*[)）]")
"""A pointer in parentheses closing a statement (有 8 种 namespaces (参见 namespaces(7), unshare(1))): an aside."""


def is_reference(text: str) -> bool:
    """Returns whether a unit only points elsewhere: a see/参见 verb before a link, title, section or man page,
    with at most a short lead-in (关于报告缺陷的注意事项，请阅读[…]) and nothing said after it but where to look;
    or a short "for more details, read …" whatever it names. A pointer in parentheses after something said
    (`_ASIDE`) is an aside of that statement, not what the unit is."""
    stated = _ASIDE.sub(" ", text)
    text = stated if _words(stated) else text
    if _FOR_MORE.search(text) and _POINTER.search(text) and _words(text) <= 40:
        return True     # "for more details, read …": where to look, whatever the target looks like
    m = _REFERENCE.search(text)
    if m is None or _words(text[:m.start()]) > 4:
        return False
    tail = _TARGET.sub(" ", text[m.end():])
    return _words(text[:m.start()]) == 0 or _words(tail) <= 8 or bool(_FOR_MORE.search(tail))


_CONTENTS = re.compile(r"[\W_]*(?:\d+(?:\.\d+)*\.?\s+[^.。!?！？:：]*)?")
"""What a table of contents line holds besides its links: nothing, or a chapter's number and title."""
SYMBOL = re.compile(r"[%$][A-Za-z]\w{0,9}\s+=\s+\S")
"""A format symbol and its meaning on a line (%R = 修订版, $HOME = …): a record, however few its words."""


def stands(text: str, kind: str = "sentence", short: bool = False) -> bool:
    """Returns whether a unit may stand as an answer: not a usage line, a bare cross-reference, a caption, a
    question or a line of links alone (a table of contents: `[1. 简介](01.00-简介.md)。`), holding some words (a
    sentence or list item at least three: a term alone says nothing; a `short` list item fewer, when the question
    asks which one: GOsa² 2.8 for which GOsa² version; a format symbol with its meaning, `SYMBOL`), and a
    table row saying something past its first cell (`| gpg --armor --sign file | , , |` only repeats the row
    above: its ditto cells mean nothing quoted alone)."""
    words = len(re.findall(r"[A-Za-z0-9][\w'./-]*", text)) + len(re.findall(r"[\u4e00-\u9fff]", text)) / 2
    cells = text.split(" | ") if kind == "row" else []
    linked = _LINK.search(text) is not None and _CONTENTS.fullmatch(_LINK.sub(" ", text)) is not None
    return (len(text) >= 6 and bool(re.search(r"[A-Za-z]{2}|[\u4e00-\u9fff]", text)) and not SYNOPSIS.search(text)
            and not linked
            and (words >= 3 or kind in ("row", "option", "command") or short and kind == "item"
                 or SYMBOL.match(text) is not None)
            and (len(cells) < 2 or any(re.search(r"\w", c) for c in cells[1:]))
            and not is_reference(text) and not _CAPTION.search(text) and not _QUESTION.search(text))


def _clean(text: str, profile: Any) -> str:
    return _LEAD_IN.sub("", _MARKUP.sub("", profile.reading.without_label(text))).strip()


_EMPTY_LINK = re.compile(r"\[\]\([^)]*\)")
"""A link without words (an icon a converter kept as `[](page.md)`): it says nothing, and its target is no name."""


def _row(line: str) -> str:
    """Returns a table row's cells joined by " | " (the row without its outer bars), a cell holding only links
    without words left out."""
    cells = (c.strip() for c in line.strip().strip("|").split("|"))
    return " | ".join(c for c in cells if _EMPTY_LINK.sub("", c).strip())


_COLUMN = re.compile(r"[A-Za-z\u4e00-\u9fff][A-Za-z\u4e00-\u9fff '/()（）、-]{0,40}")
"""A column name: a few words, no digit, symbol or sentence end (操作, Default Hotkey, Pin-Priority)."""


def names_columns(header: str) -> bool:
    """Returns whether a table's row above its rule names columns (操作 | 默认快捷键 | 说明): every cell a
    `_COLUMN`. Else it is a record a converter wrote there, a table having no header (`*.dxf | AutoCAD 2000 或更高
    版本的 DXF 图纸`, `F1 | 放大`): a row of its own, and still the heading of the rows under it."""
    return all(_COLUMN.fullmatch(cell) for cell in header.split(" | "))


def units(hit: Hit, profile: Any) -> list[Unit]:
    """Returns the units of one hit, in order (see the module docstring).

    Lines are gathered into blocks first: an option line with the description lines under it, a list item or
    a paragraph with its hard-wrapped continuation lines; a block ends at a blank line or where another one
    starts (a heading, a table row, an option, an item).
    """
    out: list[Unit] = []
    path = [hit.section] if hit.section else []
    blocks: list[list] = []       # [kind, heading path, lines, indentation of the first]
    lines = hit.text.splitlines()
    fenced, open_block, header = opens_fenced(lines), None, ""
    term, code, shown = None, [], []       # the name line above a code block, the block's lines, commands too
    for i, raw in enumerate(lines):
        line = raw.strip()
        if _FENCE.match(raw):
            if fenced:      # a builtin's synopsis stays open for its definition
                open_block = synopsis(term, code, blocks)
                blocks += [open_block] if open_block else []
                if open_block is None and ended_by(term, shown):
                    term[2][-1] += " " + _PROMPT.sub("", shown[0])
            else:
                term, code, shown, open_block = open_block, [], [], None
            fenced = not fenced
            continue
        if fenced:
            if _COMMAND.match(raw):
                blocks.append(["command", " / ".join(path), [line], 0])
            elif line:
                code.append(line)
            shown += [line] if line else []
            continue
        heading = _HEADING.match(raw)
        if heading or (line and profile.reading.is_heading(line)):
            path, open_block = [*path[:1], heading.group(1) if heading else line], None
            continue
        if not line:
            open_block = None
            continue
        if line.startswith("|"):
            following = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if _TABLE_RULE.match(following.strip("|").strip()):
                header = _row(line)     # the header above the rule: the heading of the rows below it
                if not names_columns(header):   # a headerless table's first row, which a converter put there
                    blocks.append(["row", " / ".join(path), [header], 0])
            elif not _TABLE_RULE.match(line.strip("|").strip()):
                blocks.append(["row", " / ".join([*path, header] if header else path), [_row(line)], 0])
            open_block = None
            continue
        header = ""
        bare = _ITEM.sub("", line)
        kind = "option" if _OPTIONS.match(bare) else "item" if _ITEM.match(line) else None
        indent = len(raw) - len(raw.lstrip())
        if open_block is not None and kind is None and announces(open_block, line):
            open_block[2][-1] += " " + line     # one line: a Chinese paragraph's sentences end at each line break
            continue
        if open_block is not None and (continues(open_block, line, indent) or labels(open_block)
                                       if kind is None else kind == "item" and defines(open_block, indent)):
            if kind is not None:
                open_block[0] = "term"      # the item above is a term, this one its definition
            elif labels(open_block):
                open_block[0] = "label"     # the line above is a term, this paragraph its definition
            open_block[2].append(line if kind is None else bare)
            continue
        open_block = [kind or "sentence", " / ".join(path), [bare if kind == "option" else line], indent]
        blocks.append(open_block)
    for kind, heading, block, *_ in blocks:
        if kind == "option":
            option = _OPTIONS.match(block[0])
            said = " ".join([block[0][option.end():].strip(" :\t"), *block[1:]]).strip()
            out.append(Unit(f"{block[0][:option.end()].strip()}  {said}".strip(), heading, kind))
        elif kind in ("row", "command"):
            out.append(Unit(block[0], heading, kind))
        elif kind == "term":
            said = defined(block[0], "\n".join(block[1:]))
            out += [Unit(text, heading, "definition" if len(said) == 1 else "item") for text in said]
        elif kind in ("label", "synopsis"):     # with its definition's first sentence, which it names; the rest apart
            first, *rest = sentences_of(FOOTNOTE.sub("", "\n".join(block[1:]))) or [""]
            out += [Unit(f"{block[0]} {first}", heading, kind),
                    *(Unit(text, heading, "pair" if pair else "sentence") for text, pair in continued(rest))]
        else:
            joined = "\n".join(FOOTNOTE.sub("", b) for b in block)
            said = sentences_of(joined)
            term = _GLOSSED.fullmatch(_ITEM.sub("", said[0])) if kind == "item" and len(said) > 1 else None
            if term:    # a glossary item ("Possibly lost". This covers…): its sentences sit under the term
                out += [Unit(sentence, " / ".join(filter(None, [heading, f"“{term.group(1)}”"])), kind)
                        for sentence in said[1:]]
            else:
                out += [Unit(text, heading, "pair" if pair else kind) for text, pair in continued(said)]
    return out


CARRIES = re.compile(r"(?:It|Its|It's|It’s)\s|它")
"""How a sentence opens that has the sentence before it as its subject (Massif is a heap profiler. It measures…)."""
FOLLOWS = re.compile(r"(?:Instead|Thus|Therefore|Hence|Currently|Otherwise)\b|So\s|因此|所以|于是|否则"
                     r"|(?:If|When|Once|Unless)\b[^,.]{0,40},\s*(?:it|they)\s|(?:如果|若|当|一旦)[^，。]{0,10}(?<!其)它")
"""How a sentence opens that goes on from the one before whatever its length: a consequence or an alternative
(Instead, use snprintf(3)…; So the best solution…; Currently, you should set it to…; 因此…) or a condition on
the thing the sentence before named (如果安装了它，它会…; If installed, it…)."""
SHORT = 8
"""Most words (a Chinese character a third of one) of a sentence that is read with the next one `CARRIES` on: so short
a statement (Massif is a heap profiler.) says what a thing is, and the next says what it does."""


def continued(said: Sequence[str]) -> list[tuple[str, bool]]:
    """Returns a paragraph's sentences as units, each with whether it is a pair: a short sentence (`SHORT`) and
    the next one when that opens on its subject (`CARRIES`: It, 它), which alone has lost the thing it is about,
    or any sentence and the next one when that goes on from it (`FOLLOWS`: Instead, …; 如果安装了它，…).
    A pair is quoted whole unless the answer's bound needs its sentences (`bounds.bounded` cuts it last)."""
    out: list[tuple[str, bool]] = []
    i = 0
    while i < len(said):
        if i + 1 < len(said) and (FOLLOWS.match(said[i + 1])
                                  or CARRIES.match(said[i + 1]) and _words(said[i]) <= SHORT):
            out.append((f"{said[i]} {said[i + 1]}" if said[i].isascii() else said[i] + said[i + 1], True))
            i += 2
        else:
            out.append((said[i], False))
            i += 1
    return out


_GLOSSED = re.compile(r"[\"“「*]+([^\"”」*]{2,40})[\"”」*]+\s*[.:：。]")
"""A list item's first sentence that is a quoted term alone ("Possibly lost".): the item defines it, and its other
sentences (This means that…) have it as their subject, so it is their heading, quoted (“Possibly lost”) as the
glossary's term and no section's title."""


_ENDED = re.compile(r"[.。!?！？;；:：)）]\s*$")
_PROSE = re.compile(r"[A-Za-z)\]][.!?](?:\s|$)|[。！？]")


def opens_fenced(lines: Sequence[str]) -> bool:
    """Returns whether a chunk opens inside a code block: chunking cut the block, so its fence lines are odd in
    number, and the text before the first fence reads less like prose (fewer sentence ends) than the text after
    the last; else its first fence would open a block and swallow every sentence after it."""
    fences = [i for i, line in enumerate(lines) if _FENCE.match(line)]
    if len(fences) % 2 == 0:
        return False
    head, tail = "\n".join(lines[:fences[0]]), "\n".join(lines[fences[-1] + 1:])
    return len(_PROSE.findall(tail)) > len(_PROSE.findall(head))



_ANCHOR = re.compile(r"\[\s*¶\s*\]\([^)]*\)|¶")
"""A converted manual's anchor after a term (bg[ ¶](07.02-job-control-builtins.md)): a link to itself, no word."""


def synopsis(term: Optional[list], code: Sequence[str], blocks: list) -> Optional[list]:
    """Returns a builtin's synopsis as a block open for its definition, when `code` (a code block's lines) is the
    synopsis of the name line ending the block above it (`term`: bg, fg[ ¶](…), at most `LABEL` words, no sentence;
    the line leaves that block, and `blocks` when it was the whole of it): each line opens with the name (fg [jobspec];
    history [n], history -c). A converted definition list writes a name, its synopsis, then its definition, whose
    first sentence has lost what it defines (Resume the job jobspec in the foreground…): the synopsis names it, and
    the two are one unit. A code block opening with another word is an example."""
    if term is None or not code or term[0] not in ("sentence", "label", "synopsis") \
            or term[0] != "sentence" and len(term[2]) < 2:
        return None     # a one-line label or synopsis is all term, no definition the name line could end
    name = _ANCHOR.sub("", term[2][-1]).strip()
    if not name or _words(name) > LABEL or _PROSE.search(name) \
            or any(line.split()[0] != name.split()[0] for line in code):
        return None
    term[2].pop()
    if not term[2]:
        blocks.remove(term)
    return ["synopsis", term[1], ["; ".join(code)], term[3]]


CODA = 60
"""Longest line of code (characters) that ends the sentence above it (`ended_by`)."""
_PROMPT = re.compile(r"^[$#>]\s+")


def ended_by(block: Optional[list], shown: Sequence[str]) -> bool:
    """Returns whether a code block of one short line (`CODA`) ends the sentence of the prose block above it
    (`…close the device by issuing the command` above `> dev.off()`; 请在终端里使用 above `$ sha256sum …`): a line
    of more than `LABEL` words that ends no sentence. Alone, it says nothing; with the line (its prompt aside) it is
    whole. A longer block is an example, and a line ending on a colon leads in to it."""
    return block is not None and block[0] in ("sentence", "item") and len(shown) == 1 and len(shown[0]) <= CODA \
        and not _ENDED.search(block[2][-1]) and _words(block[2][-1]) > LABEL


def defines(block: list, indent: int) -> bool:
    """Returns whether a list item indented under the open block is the definition of the term that block
    holds alone ("Pre-Depends" above "This is like Depends, except…", a link [Hard link](…) above "Duplicate name
    for an existing file": a link's target ends no sentence): one unit, so the term names it."""
    kind, _, lines, above = block
    return kind == "item" and len(lines) == 1 and indent > above \
        and not _ENDED.search(_LINK_TARGET.sub("]", lines[0])) \
        and len(_ITEM.sub("", lines[0]).split()) <= 4


LABEL = 4
"""Most words of a line ending in a colon that is a term above its definition (100-999:, a converted definition list)."""


_LABELLED = re.compile(r"^[^:：]*[:：]\s*")
"""A label unit's label (100-999: of 100-999: Dynamically allocated…)."""


def labels(block: list) -> bool:
    """Returns whether the open block is a paragraph of one short line ending in a colon (`LABEL` words: 100-999:,
    Priority:): a definition list's term, whose definition is the paragraph right under it, flush left; alone it
    says nothing, and its definition's first sentence has lost what it defines (Dynamically allocated system users
    and groups.), so the two are one unit; the definition's other sentences stand apart, as a paragraph's do."""
    kind, _, lines, _ = block
    return kind == "sentence" and len(lines) == 1 and lines[0].endswith((":", "：")) and _words(lines[0]) <= LABEL \
        and not _PROSE.search(lines[0])


DEFINITION = 2
"""Most sentences of a term's definition quoted as one unit with the term: a glossary entry is one statement."""


def defined(term: str, definition: str) -> list[str]:
    """Returns the units of a term and its definition: one unit when the definition holds at most `DEFINITION`
    sentences (\"Suggests\" This declares a weak dependency. Many users…; “建议” 较弱的依赖。这个软件包…), else
    the term with the first sentence, then the others; the term never stands alone (a Chinese term, ended by no
    full stop, would otherwise be cut from its definition and dropped)."""
    parts = sentences_of(FOOTNOTE.sub("", definition))
    if not parts:
        return [term]
    if len(parts) <= DEFINITION:
        return [f"{term} {' '.join(parts) if definition.isascii() else ''.join(parts)}"]
    return [f"{term} {parts[0]}", *parts[1:]]


_WORDLESS = re.compile(r"[^A-Za-z\u4e00-\u9fff]*(?:[A-Za-z][^A-Za-z\u4e00-\u9fff]+)*[A-Za-z]?")
"""A line holding no word: an expression or a formula (=(B2<A2)+B2-A2), letters only as cell names."""


def announces(block: list, line: str) -> bool:
    """Returns whether `line` is what the paragraph above announces: the paragraph ends in a colon and the line holds
    no word (`_WORDLESS`: a formula on a line of its own); quoted apart, the lead-in says "use the formula below"
    and the formula says nothing."""
    return block[0] == "sentence" and bool(re.search(r"[:：]\s*$", block[2][-1])) and bool(_WORDLESS.fullmatch(line))


def continues(block: list, line: str, indent: int = 0) -> bool:
    """Returns whether `line` (indented by `indent`) carries on the open block (hard-wrapped text): an option's
    description while it has none or in lower case; a list item's text in lower case or indented under it (a
    line flush with the item that opens in upper case or Chinese is the paragraph after the list); other text
    after a line that ends no sentence, or in lower case."""
    kind, _, lines, above = block
    if kind == "synopsis" and len(lines) == 1:
        return True     # its definition, whatever the synopsis ends on (fc [-e ename] [-lnr] [first] [last])
    lower = line[:1].islower() and line[:1].isascii()
    if kind == "option":
        return lower or (len(lines) == 1 and _OPTIONS.match(lines[0]).end() >= len(lines[0].rstrip()))
    if kind in ("item", "term"):
        return lower or (indent > above and not _ENDED.search(lines[-1]))
    return lower or not _ENDED.search(lines[-1])


_ZH_END = re.compile(r"(?<=[。！？；])")


def sentences_of(line: str) -> list[str]:
    """Returns the sentences of a line, never cut inside a markdown link ([第 7.9 节 “…是什么意思？”](….md))."""
    links = _LINK.findall(line)
    masked = _LINK.sub(lambda m: f"\x00{links.index(m.group(0))}\x00", line)
    # a Chinese sentence end ends a sentence even in a line the language test calls English (many paths and names)
    pieces = [p.strip() for s in split_sentences(masked) for p in _ZH_END.split(s) if p.strip()]
    return [re.sub(r"\x00(\d+)\x00", lambda m: links[int(m.group(1))], p) for p in clauses_joined(pieces)]


SENTENCE = 120
"""Longest sentence (characters) whose clauses (…；…。) stay one unit: a short sentence says one thing, and its
second clause alone (经船检局授权，可以代行法定检验) has lost its subject; a long one is a list of provisions."""


def clauses_joined(pieces: Sequence[str]) -> list[str]:
    """Returns the pieces with the clauses of each sentence at most `SENTENCE` long joined again."""
    groups: list[list[str]] = []
    for piece in pieces:
        if groups and groups[-1][-1].endswith(("；", ";")):
            groups[-1].append(piece)
        else:
            groups.append([piece])
    return [p for g in groups for p in (["".join(g)] if sum(map(len, g)) <= SENTENCE else g)]


OPENING = 3
"""Units of a document's text before its first heading that count as its opening, where it says what it is about."""
_LEADS_IN = re.compile(r"(?:[:：]|例如[，,]?|(?i:\b(?:e\.?g|for example|such as)[.,]?))\s*$")
"""How a line ends that leads in to what follows it (…, eg:; 例如; The detected errors are:): alone it says nothing,
and it is never an opening statement."""
ASKS_WHICH = re.compile(r"\bwhich\s+(?!(?:is|are|was|were|do|does|did|can|could|should|would|will|has|have)\b)\w"
                        r"|\bwhat\s+(?:[\w²³.+-]+\s+){0,2}?versions?\b|哪(?:个|些|种|款)|哪一(?![年天日月])|什么版本|几版", re.I)
"""A question asking which one of several (which GOsa² version, which tools, 哪个版本): a short list item may answer it;
never which year or day (哪一年: a date, `ASKS_AMOUNT`)."""


_PIECE = re.compile(r"^(.*)~(\d+)$")


def piece(hit: Hit) -> int:
    """Returns which piece of its section a chunk is: the chunker cuts a section longer than a chunk at sentence
    ends into pieces ``…#Package dependencies``, ``…~2``, ``…~3`` (1 for the first)."""
    m = _PIECE.match(hit.chunk_id)
    return int(m.group(2)) if m else 1


def piece_before(hit: Hit, hits: Sequence[Hit]) -> Optional[Hit]:
    """Returns the hit holding the piece of `hit`'s section just before it, when `hits` hold it."""
    m = _PIECE.match(hit.chunk_id)
    if m is None:
        return None
    want = m.group(1) if m.group(2) == "2" else f"{m.group(1)}~{int(m.group(2)) - 1}"
    return next((h for h in hits if h.chunk_id == want), None)


def carried(hit: Hit, hits: Sequence[Hit]) -> str:
    """Returns `hit`'s text with the block the piece before it left open in front, when `hits` hold that piece and
    `hit` opens inside the block (a sentence flush left, no item, heading, table or fence): a cut at a sentence end
    of a long list separates a term's definition from its second sentence (`- "Suggests"` / `This declares a weak
    dependency.` | `Many users of this package…`). The block is the piece's lines from its last flush-left one,
    when that opens a list item or an option line; nothing is carried out of a code block the cut left open."""
    before = piece_before(hit, hits)
    first = hit.text.split("\n", 1)[0]
    if before is None or not first.strip() or first[:1].isspace() or _ITEM.match(first) or _HEADING.match(first) \
            or _FENCE.match(first) or first.startswith("|") or _OPTIONS.match(first):
        return hit.text
    lines = before.text.rstrip().splitlines()
    if sum(bool(_FENCE.match(line)) for line in lines) % 2:
        return hit.text     # the cut fell inside a code block: `opens_fenced` reads that piece
    start = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].strip() and not lines[i][:1].isspace()), None)
    if start is None or not (_ITEM.match(lines[start]) or _OPTIONS.match(lines[start])):
        return hit.text     # a paragraph goes on in sentences of its own; an item or option has its subject above
    return "\n".join(lines[start:]) + " " + hit.text


LISTED = 40
"""Most words of a lead-in line quoted with its items (`with_items`): it takes items while they fit, at least one."""


def listed(after: Sequence[Unit], heading: str) -> list[Unit]:
    """Returns the list items right after a lead-in line under its heading (`after`: the units following it)."""
    out = []
    for unit in after:
        if unit.kind not in ("item", "pair") or unit.heading != heading:
            break
        out.append(unit)
    return out


_CLOSED = re.compile(r"[.。!?！？;；:：]\s*$")
"""An item closed by its own punctuation (a bracket closes none: 0（关闭系统））."""
_JOINS = re.compile(r"(?:以及|及|和|或|\b(?:and|or))\s*$")
"""An item ending on a conjunction (2 到 5（各种多用户模式），以及): the next item goes on from it."""


def with_items(intro: str, items: Sequence[str]) -> str:
    """Returns a lead-in line with the first of its items that fit in `LISTED` words (at least one; never a bare
    cross-reference), each closed by ";" (in Chinese "；", for its own comma) unless it ends a sentence or on a
    conjunction: a lead-in is quoted with what it leads in to, never alone."""
    out, chinese = intro, bool(re.search(r"[\u4e00-\u9fff]", intro))
    for i, item in enumerate(item.rstrip("，,、 ") for item in items if not is_reference(item)):
        joined = out + item if chinese else f"{out} {item}"
        if i and _words(joined) > LISTED:
            break
        out = joined if _CLOSED.search(item) or _JOINS.search(item) else joined + ("；" if chinese else ";")
    return out.rstrip(";；")


def candidates(hits: Sequence[Hit], profile: Any, short: bool = False, headings: bool = False) -> list[Candidate]:
    """Returns the units of `hits` that may stand as an answer, cleaned of labels and markup, each once (the
    first, best-ranked copy), in hit order; wiki pages only when no document was retrieved; short list items too
    when `short` (`stands`); with `headings`, a hit's title or section heading naming a date or version before its
    units. A line leading in to a list (`_LEADS_IN`: …, eg:) never stands alone: it is quoted
    with its first items (`with_items`) and is the `lead` of the short items under it, scored with each (GOsa² 2.8
    under "Everything which is new in Debian 12, eg:"); before a command or a paragraph it is a statement (approx
    runs by default on port 9999 … to point to the approx server:). A piece of a section opening inside a block of
    the piece before it reads that block in front (`carried`). A unit that several documents hold (a note templated
    onto each chapter's first page: The rewrite of this tutorial document…) opens none of them: it says nothing of
    what one of them is about. A line that is a retrieved page's title is a link's caption left without its link (a
    help page's related topics): it names where an answer is and says nothing."""
    out, seen, held_by = [], set(), {}
    documents = [h for h in hits if h.kind != "wiki"]
    titles = {normalised(h.title) for h in hits}
    for rank, hit in enumerate(hits):
        if hit.kind == "wiki" and documents:
            continue    # a page quotes its sources, and the source itself is the better citation
        before, intro = "", ()
        for heading in (h for h in (hit.title, hit.section) if headings and h and normalised(h) not in seen
                        and dated(h)):
            seen.add(normalised(heading))   # a heading dating its text is the only place saying when it came
            out.append(Candidate(heading, kind="heading", hit=hit, rank=rank))
        text_of = carried(hit, hits)
        read = hit if text_of == hit.text else hit.model_copy(update={"text": text_of})
        read_units = units(read, profile)
        for place, unit in enumerate(read_units):
            heading, kind = unit.heading, unit.kind
            text = unit.text if kind in ("row", "option", "command") else _clean(unit.text, profile)
            lead, before, scored = (before if profile.reading.refers_back(text) else ""), text, ""
            if kind in ("item", "pair") and intro[1:] == (heading,):
                # only a short item says too little without it (a long one scored with it shares its words)
                lead = lead or (intro[0] if kind == "item" and not stands(text, kind) else "")
            elif kind == "label":   # scored by its definition: the label (100-999:) names, the sentence says
                intro, scored = (), _LABELLED.sub("", text)
            elif kind in ("sentence", "item") and _LEADS_IN.search(text):
                intro, scored = (text, heading), text
                text = with_items(text, [_clean(u.text, profile) for u in listed(read_units[place + 1:], heading)])
            else:
                intro = ()
            key = normalised(text)
            held_by.setdefault(key, set()).add(hit.source)
            if not key or key in seen or key in titles or not stands(text, kind, short) or profile.reading.is_heading(text) \
                    or _FILE_LINE.search(_LINK_TARGET.sub("]", text)):
                continue
            seen.add(key)
            # a pair whose second sentence leads in to a command still opens on a statement
            said_first = sentences_of(text)[0] if kind == "pair" else text
            opening = not hit.section and not heading and place < OPENING and not _LEADS_IN.search(scored or said_first)
            out.append(Candidate(text, heading, kind, hit=hit, rank=rank, lead=lead, opening=opening, place=place,
                                 scored=scored))
    return [replace(c, opening=False) if c.opening and len(held_by[normalised(c.text)]) > 1 else c
            for c in out if not read_on(c, out, hits)]


def read_on(c: Candidate, found: Sequence[Candidate], hits: Sequence[Hit]) -> bool:
    """Returns whether a unit is cut short at its piece's end and a unit of the next piece quotes it whole (read with
    what the cut left before it, `carried`): `"Suggests" This declares a weak dependency.` said in full after the
    cut; the part alone answers less and, scored apart, may be quoted instead."""
    key = normalised(c.text)
    return any(piece_before(o.hit, hits) is c.hit and len(k := normalised(o.text)) > len(key) and k.startswith(key)
               for o in found if o.hit is not c.hit)


def tokenizer_of(ctx: Any, profile: Any = None) -> Tokenizer:
    """Returns the index's tokenizer (jieba with its stemmer and user words), else one the profile's tokenizer
    options make (the generic profile's stems English words)."""
    resources = getattr(ctx, "resources", None) or {}
    index = resources.get("index")
    if getattr(index, "tokenizer", None) is not None:
        return index.tokenizer
    options = profile.reading.tokenizer if profile is not None else {}
    return _tokenizer(tuple(sorted(options.items()))) if options else default_tokenizer()


@lru_cache(maxsize=4)
def _tokenizer(options: tuple) -> Tokenizer:
    return Tokenizer(**dict(options))


def bm25_scores(query: Sequence[str], texts: Sequence[Sequence[str]]) -> np.ndarray:
    """Returns the BM25 score of each token list for the query tokens, the token lists being the corpus."""
    if not texts or not query:
        return np.zeros(len(texts))
    return np.asarray(Bm25Index.of([list(t) or ["\0"] for t in texts]).scores(list(query)), dtype=float)


def scaled(values: np.ndarray) -> np.ndarray:
    """Returns `values` divided by their maximum, negatives as 0 (zeros stay zeros; all-equal positive values
    become 1): BM25 over a few units is negative for a word most of them hold, which must not outweigh the rest."""
    top = float(values.max()) if len(values) else 0.0
    return np.clip(values, 0.0, None) / top if top > 0 else np.zeros(len(values))


def cosines(query: str, texts: Sequence[str], ctx: Any) -> Optional[np.ndarray]:
    """Returns each text's cosine to the question's vector, or None without an embedder.

    The question's vector is the one retrieval embedded (remembered, `query_vector`); the texts' vectors are
    remembered across questions and processes (`store.passage_vectors`), the new ones embedded while the time
    the question's deadline (less its reserve) leaves holds one more. When it does not, the lexical signals rank
    alone, and the step says so in the result's fallbacks: embedding never makes a question miss its deadline. An
    embedder failing at run time is said the same way; only a missing one leaves the lexical signals in silence.
    """
    from lambdarag.errors import LambdaRAGError, ProviderError

    from .dense import query_vector
    from .store.passage_vectors import embedded_passages
    from .store.vectors import default_embedder

    if not texts or ctx is None:
        return None
    try:
        embedder = getattr(ctx, "embedder", None) or default_embedder()
        vector = np.asarray(query_vector(ctx, query), dtype=np.float32)
        matrix = embedded_passages(texts, embedder, lambda: spendable(ctx))
    except ProviderError as e:    # the embedder failed at run time: a fallback, said
        ctx.trace.mark_current(f"evidence ranked without sentence vectors: {e}")
        return None
    except (LambdaRAGError, OSError, ImportError):
        return None   # no embedder here: the lexical signals rank alone
    if matrix is None:
        ctx.trace.mark_current(f"evidence ranked without sentence vectors: the deadline left no time to embed "
                               f"the {len(texts)} sentences scored")
        return None
    return matrix @ vector / np.maximum(np.linalg.norm(matrix, axis=1) * np.linalg.norm(vector), 1e-12)


def ranged_scale(cos: np.ndarray, ranged: Optional[int] = None) -> np.ndarray:
    """Returns `cos` min-max scaled over its first `ranged` values (all by default; the others clipped to that
    range): how near each text is to the question compared with the others."""
    low, high = float(cos[:ranged].min()), float(cos[:ranged].max())
    return np.clip((cos - low) / (high - low), 0.0, 1.0) if high > low else np.ones(len(cos))


def spendable(ctx: Any) -> Optional[float]:
    """Returns the seconds a step may still spend before the deadline, less what is kept for the steps after it
    (`Context.reserve`); None without a deadline."""
    left = ctx.remaining() if hasattr(ctx, "remaining") else None
    return None if left is None else left - getattr(ctx, "reserve", 0.0)


def said(c: Candidate) -> str:
    """Returns what a unit says when scored: a table row under its heading path, whose last part is the table's
    header (`1 | used as the default…` means little without `Pin-Priority | effect`); a unit naming the one
    before it as its subject after that one (`lead`); any other unit as quoted. A link's target is not what a
    unit says: a package table's row names `bzip2` in three URLs, which must not count as saying it three times."""
    text = _LINK_TARGET.sub("]", " ".join(filter(None, [c.lead, c.scored or c.text])))
    return f"{c.heading}: {text}" if c.kind == "row" and c.heading else text


DIMENSIONS = ((re.compile(r"\bhow long\b", re.I), "length"), (re.compile(r"\bhow (?:big|large)\b", re.I), "size"),
              (re.compile(r"\bhow old\b", re.I), "age"), (re.compile(r"多长"), "长度"), (re.compile(r"多大"), "大小"))
"""(a question asking a dimension, the noun a text states it by): how long a key must be is said as its "key length
… 2048 bits", 多大 as 大小. Never how many (多少): a count is said by the question's own noun (up to 100 extra
suppression files: `counted`), and "number" names any field (--input-fd=<number> [default: 0…)."""


def dimensions(query: str) -> list[str]:
    """Returns the nouns of the dimensions a question asks (`DIMENSIONS`): words of the question as its answer says them."""
    return [noun for asks, noun in DIMENSIONS if asks.search(query)]


def signals(query: str, found: Sequence[Candidate], ctx: Any = None, dense: bool = True,
            profile: Any = None) -> dict[str, np.ndarray]:
    """Returns each candidate's scaled BM25, heading and (with `dense` and an embedder) dense scores, by name.

    Only the `DENSE_POOL` candidates best by the lexical signals and the documents' openings are embedded (the
    others score 0 on dense): embedding every unit of a long context costs more than the ranking gains below that
    pool, and an opening says what its document is about in words of its own, rarely the question's. The dense
    scores are scaled over that pool alone, so adding the openings moves no other unit's score; their cosines
    unscaled are kept too (``cosine``, mixed into no score), since a scaled best is near whatever the question.
    """
    tokenize = tokenizer_of(ctx, profile)
    asked = tokenize(" ".join([query, *dimensions(query)]))
    # the document's title is every unit's top heading: a name in it (basenc) is said by each unit of the page
    out = {"bm25": scaled(bm25_scores(asked, [tokenize(said(c)) + tokenize(c.hit.title) for c in found])),
           "heading": scaled(bm25_scores(asked, [tokenize(c.heading) for c in found]))}
    if dense:
        best = np.argsort(-(out["bm25"] + out["heading"] / 2), kind="stable")[:DENSE_POOL]
        pool = np.array([*best, *(i for i, c in enumerate(found) if c.opening and i not in set(best))], dtype=int)
        near = cosines(query, [said(found[i]) for i in pool], ctx)
        if near is not None:
            out["dense"], out["cosine"] = np.zeros(len(found)), np.zeros(len(found))
            out["dense"][pool], out["cosine"][pool] = ranged_scale(near, ranged=len(best)), near
    return out


def mixed(found: Sequence[Candidate], parts: dict[str, np.ndarray], weights: Optional[dict] = None) -> np.ndarray:
    """Returns the `weights` mix of the signals there are (renormalised over them) plus `RANK_PRIOR` by hit rank."""
    weights = {n: w for n, w in (weights or WEIGHTS).items() if n in parts and w}
    total = sum(weights.values()) or 1.0
    out = sum((w / total) * parts[n] for n, w in weights.items()) if weights else np.zeros(len(found))
    last = max((c.rank for c in found), default=0) or 1
    return out + RANK_PRIOR * np.array([1 - c.rank / last for c in found])


ASKS_AMOUNT = re.compile(r"多少|几[年月日天个条次项倍]?|多长|多久|何时|什么时候|哪一年|哪年|期限|金额|数额|比例"
                         r"|\bhow (?:many|much|long|often)\b|\bwhat (?:year|date)\b|^when\b|\bwhen (?:was|were|did|will)\b",
                         re.I)
"""A question asking for an amount, a date or a period (多少, 多久, 何时, how many, when was…)."""
AMOUNT = re.compile(r"\d|[一二三四五六七八九十百千万两]+(?:日|天|年|月|个月|元|万元|条|小时|倍|人|项|次|以上|以下)")
ASKS_PLACE = re.compile(r"^where\b|\bwhere (?:is|are|can|do|does|should|will)\b"
                        r"|\b(?:which|what) (?:directory|folder|path)\b|哪个目录|什么目录|哪个路径|存放在哪|位于哪", re.I)
"""A question asking where something lies on the system (where can I view…, which directory…, 哪个目录)."""
PLACE = re.compile(r"(?<![\w.:/])~?/[\w.-]+/?")
"""A unit naming a path (/var/log/, /etc/systemd/system, ~/.bashrc)."""
ASKED = ((ASKS_AMOUNT, AMOUNT), (ASKS_PLACE, PLACE))
"""(what a question asks for, what a unit that states it holds): such a unit gains `ASKED_BONUS`."""

ASKS_HOW = re.compile(r"\bhow (?:do|does|can|could|to|would|should|are|is)\b|\bcommands?\b|\b(?:run|invoke|type)\b"
                      r"|如何|怎样|怎么|命令|执行|运行|输入", re.I)
"""A question asking how to do something or for a command: only such a question is answered by a command line
(``$ tar -xvf …``); to any other a command is an example, not a statement."""

ASKS_WHEN = re.compile(r"^when\b|\bwhen (?:was|were|did|will|is|are)\b|\bwhat (?:year|date)\b|何时|什么时候|哪一?年|哪一?天"
                       r"|哪个版本|哪一版", re.I)
"""A question asking when something came or which release: only such a question is answered by a dated heading
(`candidates`), which to any other says what its section is about, not what it states."""

ASKS_OPTION = re.compile(r"\b(?:which|what)\s+(?:[\w.-]+\s+)?(?:option|flag|switch)s?\b"
                        r"|哪个选项|哪些选项|什么选项|哪个参数|什么参数", re.I)
"""A question asking for a command-line option (which apt-get option…, what flag, 哪个选项)."""
OPTION = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*")
"""A unit naming an option (-s, --track-origins=yes, -h, --human-readable)."""
ASKS_COMMAND = re.compile(r"\b(?:which|what)\s+(?:[\w.-]+\s+)?(?:command|program|utility|script|tool)s?\b"
                          r"|哪个命令|哪条命令|什么命令|哪个程序|什么程序|哪个脚本|什么脚本|哪个工具|什么工具", re.I)
"""A question asking which command does something (which command lists…, which scripts decide…, 用什么命令)."""
MANUAL = re.compile(r"(?<![\w/.-])[a-z][\w.+-]*\((?:[1-9]\w*)\)"
                    r"|\b(?:called|named|known as)\s+[\"“'`*]?[\w.-]*[A-Za-z]|(?:叫做|称为|名为)\s*[“\"「`]?[\w.-]")
"""A unit naming a command: by its manual page (lastb(1), dpkg-divert(8)), how documentation names a command, or by
saying what it is called (these scripts are called britney; 这个程序叫做 tasksel)."""
ASKS_FILE = re.compile(r"\b(?:which|what)\s+(?:[\w.-]+\s+)?files?\b|哪个文件|哪些文件|什么文件", re.I)
"""A question asking which file holds or does something (which file determines…, 拿什么文件来核对)."""
FILE = re.compile(PLACE.pattern + r"|(?<![\w.+/-])[\w.+/-]*(?:\d|[._/][A-Za-z]|[A-Z]{2})[\w.+/-]*\s*(?:文件|files?\b)")
"""A unit naming a file: by its path, or by a name no word is spelt like (SHA256SUMS 文件, the debian/changelog
file), not an everyday kind of file (a configuration file)."""
ASKS_KEYS = re.compile(r"\b(?:keyboard\s+)?shortcuts?\b|\bhot\s?keys?\b|\bkey\s+(?:combination|binding)s?\b"
                       r"|\b(?:which|what)\s+keys?\b", re.I)
"""A question asking for a keyboard shortcut (is there a keyboard shortcut for…, which key…, hotkey)."""
KEYS = re.compile(r"(?<![\w-])(?:Ctrl|Control|Shift|Alt|Cmd|Command|Option|Meta|Super|⌘|⌥|⇧)\s*\+\s*\S")
"""A unit naming a key combination (Shift+Ctrl+A, ⌘+K): a GUI guide's answer to which shortcut, where a sentence
saying that menu items have shortcuts names none."""
ASKS_EXTENSION = re.compile(r"\b(?:file\s+)?(?:extension|suffix)(?:es)?\b|扩展名|后缀名?", re.I)
"""A question asking for a file name's extension (what file extension…, 是什么扩展名, 后缀)."""
EXTENSION = re.compile(r"(?<![\w/.-])\.[A-Za-z][A-Za-z0-9]{0,5}\b(?![\w/-])")
"""An extension a unit names (`.BAK`, `.drl`); never a link's target (….md) nor a file's name (foo.R)."""
NAMES_ASKED = ((ASKS_OPTION, OPTION), (ASKS_COMMAND, MANUAL), (ASKS_FILE, FILE), (ASKS_KEYS, KEYS),
               (ASKS_EXTENSION, EXTENSION))
"""(what a question asks for by name, a unit naming one): only a unit naming one answers it (`option_first`)."""
LEAD = 0.7
"""Share of the best score a unit needs to stand in an answer in place of the best: the best unit naming an
asked-for option (as a dated unit does for a temporal question), or the passage of a relation layout's edge."""

ASKED_BONUS = 0.1
"""What a unit stating what the question asks for (an amount or a date, a path) gains."""


@dataclass(frozen=True)
class Scored:
    """A candidate with its score for the question, the share of the question's weighted words it covers
    (`cover`, a part of a Chinese word counting a little) and holds whole (`held`), and how near its meaning is to
    the question's (`meant`: the scaled dense signal, 1 without an embedder; `near`: the cosine unscaled, None
    without an embedder)."""

    candidate: Candidate
    score: float
    cover: float
    held: float
    meant: float = 1.0
    near: Optional[float] = None

    @property
    def text(self) -> str:
        return self.candidate.text

    @property
    def hit(self) -> Hit:
        return self.candidate.hit


def ranked(query: str, hits: Sequence[Hit], profile: Any, ctx: Any = None, rejected: frozenset[str] = frozenset(),
           query_type: Optional[str] = None, ends: Sequence[str] = ()) -> list[Scored]:
    """Returns the candidates of `hits` (none the check rejected) scored for the question, best first; the learned
    order reads the question's type and a relation's named `ends` too."""

    how, when = bool(ASKS_HOW.search(query)), bool(ASKS_WHEN.search(query))
    found = [c for c in candidates(hits, profile, bool(ASKS_WHICH.search(query)), headings=when)
             if c.text.rstrip("；;，,") not in rejected
             and (how or c.kind != "command")]
    if not found:
        return []
    learned = profile.wording.evidence_weights
    parts = signals(query, found, ctx, dense=learned is not None or bool(WEIGHTS.get("dense")), profile=profile)
    whole = SubQuestion(query, tuple((w, 1.0) for w in keywords(query)))
    units = [(f"{c.lead}{c.scored or c.text}", c.hit, c.rank) for c in found]     # a unit's subject said before it counts
    cover, held = coverage(whole, units), coverage(whole, units, partial=False)
    meant = parts.get("dense", np.ones(len(found)))     # no embedder: every unit counts as on the topic
    near = parts["cosine"].tolist() if "cosine" in parts else [None] * len(found)
    bonus = asked_bonus(query, found)
    out = [Scored(c, float(s), cv, h, float(m), n) for c, s, cv, h, m, n
           in zip(found, mixed(found, parts) + bonus, cover, held, meant, near)]
    mix = option_first(query, sorted(out, key=lambda s: -s.score))
    if learned is None:
        return mix
    weights = load_weights(learned)
    place = {id(s): i for i, s in enumerate(mix)}
    learnt = weights.scores(feature_matrix(query, found, parts, cover, held, [place[id(s)] for s in out],
                                           query_type, ends))
    learnt = scaled(learnt) + bonus if weights.overrides else learnt
    # the learned score orders; each unit keeps the mix's score, the scale the answer's shares (`SECOND`, `LEAD`) are set in
    order = sorted(range(len(out)), key=lambda i: (-learnt[i], place[id(out[i])]))    # the mix's order breaks ties
    ordered = [out[i] for i in order]
    return option_first(query, ordered) if weights.overrides else ordered


def feature_matrix(query: str, found: Sequence[Candidate], parts: dict[str, np.ndarray], cover: Sequence[float],
                   held: Sequence[float], shipped: Sequence[int], query_type: Optional[str] = None,
                   ends: Sequence[str] = ()) -> np.ndarray:
    """Returns the matrix of `unit_features.FEATURES` (a row per candidate of `found`) for the question, from the
    signals `parts`, the coverage shares `cover` (partial words counting a little) and `held` (whole words only),
    each unit's place in the hand-set mix's order (`shipped`, 0 first), the question's type and a relation's named
    `ends`: what the learned scorer reads of this module's rules."""
    n = len(found)
    texts, stated = [_LINK_TARGET.sub("]", c.text) for c in found], stating(query, found)
    last = max((c.rank for c in found), default=0) or 1
    asked = [s for asks, s in ASKED if asks.search(query)]
    count, negation = counted(query), negated(query)
    named = [s for asks, s in NAMES_ASKED if asks.search(query)]
    measured = [measure(noun) for noun in dimensions(query)]
    wanted = len(set(keywords(query))) or 1

    def has(patterns: Sequence[re.Pattern], text: str) -> float:
        return float(any(p.search(text) for p in patterns))

    zeros = np.zeros(n)
    columns = {
        "bm25": parts["bm25"], "dense": parts.get("dense", zeros), "heading": parts["heading"],
        "cosine": np.clip(parts.get("cosine", zeros), 0.0, 1.0),
        "prior": np.array([1 - c.rank / last for c in found]), "first_hit": np.array([c.rank == 0 for c in found]),
        "states_asked": np.array([has(asked, t) for t in stated]),
        "states_count": np.array([has([count] if count else [], t) for t in stated]),
        "negates_asked": np.array([has([negation] if negation else [], t) for t in texts]),
        "names_asked": np.array([has(named, t) for t in texts]),
        "measures_asked": np.array([has(measured, t) for t in texts]),
        "cover": np.asarray(cover, dtype=float), "held": np.asarray(held, dtype=float),
        **{f"kind_{k}": np.array([c.kind == k for c in found]) for k in KINDS},
        "length": np.array([min(math.log1p(len(c.text)) / math.log1p(600), 1.0) for c in found]),
        "short": np.array([len(c.text) < 40 for c in found]),
        "sentences": np.array([min(sentence_count(c.text) - 1, 3) / 3 for c in found]),
        "place": np.array([1 / (1 + c.place) for c in found]), "opening": np.array([c.opening for c in found]),
        "lead": np.array([bool(c.lead) for c in found]),
        "refers_back": np.array([bool(REFERS_BACK.search(c.text)) for c in found]),
        "asked_words": np.array([min(len(set(keywords(t)) & set(keywords(query))) / wanted, 1.0) for t in texts]),
        "shipped": np.array([1 / (1 + p) for p in shipped]), "shipped_first": np.array([p == 0 for p in shipped]),
        **asked_columns(query, query_type, ends, found, texts, parts),
        **{f"{t}_{s}": (query_type == t) * parts.get(s, zeros) for t, s in TYPED},
    }
    if not n:
        return np.zeros((0, len(FEATURES)))
    return np.column_stack([np.asarray(columns[name], dtype=float) for name in FEATURES])


TIME_MARK = re.compile(r"\b(?:since|until|before|after|as of|introduced|added|new in|deprecated|removed|changed"
                       r"|starting|release[sd]?|version|prior to|no longer|former(?:ly)?|previous(?:ly)?|now)\b"
                       r"|从.{0,20}?[起开]|起|以前|以后|之前|之后|版本|引入|新增|废弃|弃用|移除|开始|发布|目前|现在|不再|早期", re.I)
"""A word placing a statement in time (since, deprecated, no longer, 从…起, 版本, 不再): what a temporal question's
answer says besides a version or a date."""
LINK_WORD = re.compile(r"\b(?:depends?|requires?|uses?|used|calls?|called|part of|belongs?|contains?|provides?"
                       r"|replace[sd]?|instead|via|through|by|with|between|relat\w+|invok\w+|runs?|handles?|reads?"
                       r"|writes?|pass(?:es|ed)|sends?|controls?|manages?|extends?|based on|derived|inherits?"
                       r"|implements?|connects?|links?|maps?|generates?|creates?|produces?)\b"
                       r"|依赖|需要|使用|调用|属于|包含|提供|替代|取代|通过|由|与|和.{0,6}之间|关系|基于|生成|创建|控制|管理"
                       r"|传递|读取|写入|连接|对应|实现", re.I)
"""A word stating how two things relate (depends on, calls, is part of, 依赖, 调用, 属于), looked for between two
ends a relation question names."""
TERM_DEFINED = re.compile(r"^\W*(?:(?:the|a|an)\s+)?([^.:;,]{1,60}?)\s+(?:is|are|means|refers to|stands for|denotes)\s"
                     r"|^\W*([^，。；：]{1,24}?)(?:是|指|即|表示|意味着|称为|就是)", re.I)
"""A unit opening on the term it defines (X is…, X refers to…, X 是…, X 指…)."""


def links_word(text: str, ends: Sequence[str]) -> bool:
    """Returns whether `text` names two of `ends` with a `LINK_WORD` between the first and the last it names."""
    said = [m for m in (re.search(r"(?<![A-Za-z0-9_-])" + re.escape(e) + r"(?![A-Za-z0-9_-])", text,
                                  re.I if e.islower() else 0) for e in ends) if m]
    if len(said) < 2:
        return False
    said.sort(key=lambda m: m.start())
    return bool(LINK_WORD.search(text[said[0].end():said[-1].start()]))


def defines_asked(text: str, asked: set[str]) -> bool:
    """Returns whether a unit opens on a term it defines (`TERM_DEFINED`) that holds a word the question asks about."""
    m = TERM_DEFINED.match(text)
    return m is not None and bool(set(keywords(m.group(1) or m.group(2))) & asked)


def asked_columns(query: str, query_type: Optional[str], ends: Sequence[str], found: Sequence[Candidate],
                  texts: Sequence[str], parts: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Returns the columns of `unit_features.ASKING`: what a unit holds of what the question asks by its type (a
    relation's two ends `ends` and a link word between them, a temporal question's version, date or time word),
    its heading path's share of the question's words, whether it defines a term asked about, and its cosine's
    rank among the question's units (a raw cosine says little across questions)."""
    n, asked = len(found), set(keywords(query))
    relation = query_type == "relation" and len(ends) >= 2
    temporal = query_type == "temporal"
    cosine = parts.get("cosine", np.zeros(n))
    rank = np.empty(n)
    rank[np.argsort(-cosine, kind="stable")] = np.arange(n)
    return {
        "dated_when": np.array([temporal and (dated(t, query) or dated(c.heading) or dated(c.hit.title))
                                for c, t in zip(found, texts)]),
        "marks_time": np.array([temporal and bool(TIME_MARK.search(t)) for t in texts]),
        "links_ends": np.array([relation and links(Scored(c, 0.0, 0.0, 0.0), ends) for c in found]),
        "link_word": np.array([relation and links_word(t, ends) for t in texts]),
        "heading_asked": np.array([min(len(set(keywords(f"{c.heading} {c.hit.title}")) & asked) / (len(asked) or 1),
                                       1.0) for c in found]),
        "defines_asked": np.array([defines_asked(t, asked) for t in texts]),
        "cosine_rank": np.where(cosine > 0, 1 / (1 + rank), 0.0),
    }


_NUMBERED_WORD = re.compile(r"[\w.+-]*\d[\w+-]*(?:\.\d[\w+-]*)*")
"""A word holding a digit (5011, ext4, 3.7.0, IPv6)."""


def stating(query: str, found: Sequence[Candidate]) -> list[str]:
    """Returns what each unit states of an amount or a path: its text without its links' targets (a target's digits
    state nothing) nor the words with digits the question writes itself (RFC 5011 of "How long… with RFC 5011?",
    Debian 12: a name the question gives, in every unit about it, never the amount it asks)."""
    given = {w.lower() for w in _NUMBERED_WORD.findall(query)}
    return [_NUMBERED_WORD.sub(lambda m: " " if m.group(0).lower() in given else m.group(0),
                               _LINK_TARGET.sub("]", c.text)) for c in found]


def asked_bonus(query: str, found: Sequence[Candidate]) -> np.ndarray:
    """Returns what each unit gains for stating what the question asks (`ASKED`, `counted`, `negated`): `ASKED_BONUS`
    for each, the hand-set mix's rules."""
    texts = stating(query, found)
    count = counted(query)      # a unit stating the asked count of the asked thing states it twice over
    stated = [s for asks, s in ASKED if asks.search(query)] + [s for s in (count, negated(query)) if s is not None]
    return sum((ASKED_BONUS * np.array([bool(states.search(t)) for t in texts]) for states in stated),
               np.zeros(len(found)))


_ANY = re.compile("")


def measure(noun: str) -> re.Pattern:
    """Returns what a unit stating a dimension holds: its noun and a number with a unit (key length … 2048 bits,
    长度为 8 个字符) in one sentence."""
    said = r"(?<![A-Za-z])" + noun + r"(?![a-z])" if noun.isascii() else noun
    amount = r"\d+(?:[.,]\d+)*\s*(?:[A-Za-z]{2,}|[\u4e00-\u9fff])"
    return re.compile(rf"{said}[^.。;；]*?{amount}|{amount}[^.。;；]*?{said}", re.I)


_COUNTED = re.compile(r"\bhow many\s+((?:[A-Za-z][\w-]*\s+){0,3}?[A-Za-z][\w-]*)(?=\s+(?:are|is|can|could|do|does|did|"
                      r"may|might|must|should|will|would|have|has)\b|[?,]|$)", re.I)
"""The noun phrase a "how many" question counts (how many extra suppression files may…, how many days must…)."""


def counted(query: str) -> Optional[re.Pattern]:
    """Returns what a unit stating the count a "how many" question asks holds: a number and, at most two words
    after it, a word of the counted noun phrase (up to 100 extra suppression files; 2, 5 or 10 days), never an
    option's placeholder (--input-fd=<number>); None for any other question."""
    m = _COUNTED.search(query)
    if m is None:
        return None
    stems = [re.escape(w.lower().rstrip("s")) for w in m.group(1).split() if keywords(w)]
    if not stems:
        return None
    return re.compile(r"(?<![\w.<=-])\d+(?:[.,]\d+)*\s+(?:[\w-]+\s+){0,2}?(?:" + "|".join(stems) + r")", re.I)


_NEGATION = r"(?:\bnot|n[’']t|\bnever|\bwithout|\bnon)[\s-]+(?:(?:a|an|the|be|been|being|yet|ever)\s+){0,2}"
"""A negation and the articles or auxiliaries between it and the word it negates (not a login shell, isn't yet
installed, non-login)."""
_NEGATED = re.compile(_NEGATION + r"([A-Za-z][\w-]*)", re.I)


def negated(query: str) -> Optional[re.Pattern]:
    """Returns what a unit negating the word a question negates holds (…a shell that isn't a login shell: `not a
    login shell`, `non-login`), or None when the question negates none; a question opening on its negation (Aren't A
    and B the same?) asks, it negates nothing. Both sides of such a question share every other word, and the
    embedder barely tells a sentence from its negation. A Chinese question negates in Chinese: its non-free is a
    name (contrib 区和 non-free 区)."""
    m = None if re.search(r"[\u4e00-\u9fff]", query) else _NEGATED.search(query)
    if m is None or re.fullmatch(r"\s*\w*", query[:m.start()]) or not keywords(m.group(1)):
        return None
    return re.compile(_NEGATION + re.escape(english_stem(m.group(1))), re.I)   # not registered: registering


def own_line(query: str) -> Optional[re.Pattern]:
    """Returns how the definition of an option the question names opens (`--vanilla  Combine --no-save…`, an option
    line: the option first), or None when it names none: such a line says what the option does, where a sentence
    naming it in passing holds as many of the question's words."""
    said = OPTION.findall(query)
    return re.compile(r"^(?:" + "|".join(map(re.escape, said)) + r")(?![\w-])") if said else None


def option_first(query: str, ranking: list[Scored]) -> list[Scored]:
    """Returns `ranking` with its best unit naming an option (a command) first when the question asks for one
    (`NAMES_ASKED`), or stating the dimension or count it asks (`measure`: how long a key must be; `counted`: how
    many days), the best unit names none and that one scores within `LEAD` of it: only a unit naming one answers
    "which option" ("which command", "which file", "which shortcut", "how long", "how many"). A question naming an
    option is answered so by that option's own line (`own_line`)."""
    stated = [measure(noun) for noun in dimensions(query)] + [p for p in (counted(query), own_line(query))
                                                              if p is not None]
    for asks, named in [*NAMES_ASKED, *((_ANY, s) for s in stated)]:
        if not ranking or not asks.search(query) or named.search(ranking[0].text):
            continue
        naming = next((s for s in ranking if named.search(s.text)), None)
        if naming is not None and naming.score >= LEAD * ranking[0].score:
            return [naming, *(s for s in ranking if s is not naming)]
    return ranking


def names(text: str, name: str, cased: bool = False) -> bool:
    """Returns whether `text` says `name` (in any case unless `cased`), as a whole word where it is Latin (apt is
    not said by apt-get or aptitude; a Chinese name needs no boundary)."""
    flags = 0 if cased else re.I
    return re.search(r"(?<![A-Za-z0-9_-])" + re.escape(name) + r"(?![A-Za-z0-9_-])", text, flags) is not None


def naming(ranking: Sequence[Scored], name: str) -> list[Scored]:
    """Returns the scored candidates that name `name` or sit in a hit (or under a heading) titled with it, best first."""
    return [s for s in ranking if any(names(t, name) for t in (s.text, s.hit.title, s.candidate.heading))]


SECOND = 0.85
"""Share of the best score a second unit needs to join a fact answer."""


_PARTS = re.compile(r"[？?；;。！!]")
_CONJUNCTS = re.compile(r"以及|和|与|及|跟|\b(?:and|or|versus|vs)\b", re.I)
"""Words joining two things asked about; never 、, which lists the items of one phrase (集装箱船、普通货船运输业务),
nor 同, far more often part of a word (合同, 相同, 同时) than a conjunction."""


_REFERRING = re.compile(r"(?:(?:did|does|do|is|was|were|has|have|had|can|could|will|would)\s+)?"
                        r"(?:that|this|it|they|these|those)\b|这|它", re.I)
"""How a conjunct opens whose subject is the part before it (…forbidden on every architecture, or did that change at
some point?): it asks about that part, not about a topic of its own."""


def parts(query: str) -> list[str]:
    """Returns the parts of a question asked together (separate questions, conjuncts with two topic words or
    more each: 海上货物运输的…时效和航次租船合同的…时效; never one opening on a pronoun for the part before it,
    `_REFERRING`), or the question alone."""

    out: list[str] = []
    for question in filter(None, (q.strip(" ，,") for q in _PARTS.split(query))):
        pieces = [p for p in _CONJUNCTS.split(question) if len(keywords(p)) >= 2 and not _REFERRING.match(p.strip())]
        out += pieces if len(pieces) >= 2 else [question]
    return out if len(out) >= 2 else [query]


def answering(part: str, query: str, ranking: Sequence[Scored], used: Sequence[Scored] = ()) -> Optional[Scored]:
    """Returns the best-scored unit not yet `used` among those holding most of one part's words (its own twice,
    the rest of the question's once), or None when none holds `coverage.THRESHOLD` of them."""

    own = keywords(part)
    sub = SubQuestion(part, tuple((w, 2.0 if w in own else 1.0) for w in dict.fromkeys([*own, *keywords(query)])))
    fresh = [s for s in ranking if s not in used]
    # the hit's rank breaks ties, as it did when this measure alone chose the units
    covers = [c + 0.01 / (s.candidate.rank + 1) for s, c in zip(fresh, coverage(sub, [(s.text, s.hit, 0) for s in fresh]))]
    top = max(covers, default=0.0)
    if top < THRESHOLD:
        return None
    return next(s for s, c in zip(fresh, covers) if c >= 0.9 * top)


QUOTED = 3
"""Most sentences a non-synthesis answer quotes: a runner-up that would take the answer past them is left out."""


_ASCII_END = re.compile(r"(?<=[\u4e00-\u9fff）)][.!?])\s+|(?<=\betc\.)\s+(?=[A-Z])")
"""A Latin full stop closing a Chinese sentence (安全. 不像…), or the one `etc.` shares with the sentence it closes
before a capitalised word (…PMPI_Recv, etc. They then use…): sentence ends the splitters do not see. A unit is still
formed across the second (a list's `etc.` mostly goes on), but counts, and is cut, as two sentences."""


def quoted_sentences(text: str) -> list[str]:
    """Returns the sentences a unit quotes, as a reader counts them: never cut inside a link, cut at a Latin full
    stop closing a Chinese sentence too, and a piece holding no word (the ） after 。) kept with the one before."""
    out: list[str] = []
    for piece in (p for s in sentences_of(text) for p in _ASCII_END.split(s) if p.strip()):
        if out and not re.search(r"\w", piece):
            out[-1] += piece
        else:
            out.append(piece)
    return out


def sentence_count(text: str) -> int:
    """Returns how many sentences a unit quotes (a paragraph line, a table cell or a definition may hold several)."""
    return len(quoted_sentences(text)) or 1


WHOLE = ("definition", "command", "label", "synopsis")
"""Kinds of unit quoted whole whatever their length: a term's definition is one statement, a command one line."""


def cuttable(unit: Scored) -> bool:
    """Returns whether a unit may be quoted by one of its sentences: not a `WHOLE` kind, not a table row of several
    cells (one record), and holding more than one sentence."""
    kind = unit.candidate.kind
    return kind not in WHOLE and not (kind == "row" and " | " in unit.text) and sentence_count(unit.text) > 1


def sentence_of(unit: Scored, sentence: str) -> Scored:
    """Returns the unit quoting only `sentence`, one of its own (`quoted_sentences`)."""
    return replace(unit, candidate=replace(unit.candidate, text=sentence.strip()))


REFERS_BACK = re.compile(r"^(?:This|These|That|Those|It|They|Such)\b|\b(?:these|those|such)\s+[a-z]{3,}\b(?!\s*:)"
                         r"|^(?:它|这|该|此|上述|以上)|(?:这些|上述|以上)(?:规则|要求|步骤|条件|选项|设置)")
"""A sentence about what the text before it said (these rules, This means…, 上述规则): alone, it lost what that is."""


def fact(ranking: Sequence[Scored], query: str = "") -> list[Scored]:
    """Returns the one or two units that answer a fact question: the best, and the best other unit within `SECOND`
    of it that does not refer back to text it lacks (`REFERS_BACK`: a pair holds its subject), one naming what the
    question asks for first when the best names it (`NAMES_ASKED`: for "Which file decides…", `…allowed in
    /etc/securetty` over `…decide very carefully which log files…`), the two quoting at most `QUOTED` sentences.
    When the best does not state the amount, date or path asked (`ASKED`, `stating`), the second is the best unit
    stating it within `LEAD` of the best: a runner-up stating none answers less (…after 30 days the key is accepted,
    for how long before a resolver accepts it, over …configure the anchor with RFC 5011)."""
    if not ranking:
        return []
    room = QUOTED - sentence_count(ranking[0].text)
    lacking = [s for asks, s in ASKED if asks.search(query)
               and not s.search(stating(query, [ranking[0].candidate])[0])]
    supplying = [s for s in ranking[1:] if s.score >= LEAD * ranking[0].score and sentence_count(s.text) <= room
                 and any(p.search(stating(query, [s.candidate])[0]) for p in lacking)]
    if supplying:   # the first does not state the amount or path asked: the near unit stating it does
        return [ranking[0], supplying[0]]
    near = [s for s in ranking[1:] if s.score >= SECOND * ranking[0].score]
    alone = [s for s in near if s.candidate.kind == "pair" or not REFERS_BACK.search(s.text)] or near
    asked = [named for asks, named in NAMES_ASKED if asks.search(query) and named.search(ranking[0].text)]
    naming = [s for s in alone if any(named.search(s.text) for named in asked) and sentence_count(s.text) <= room]
    return [ranking[0]] + [s for s in (naming or alone)[:1] if sentence_count(s.text) <= room]


OPENING_SHARE = 0.7
"""Share of its document's best score an opening unit needs to stand as the document's point in an overview."""


TOPIC = 0.6
"""Least scaled dense similarity (`Scored.meant`) of an overview's point: a unit scoring high on the question's
words alone (erase data from a disk, for the ways to encrypt data on disks) shares a word, not the topic."""


def diverse(ranking: Sequence[Scored], limit: int = 6, floor: float = 0.6, balance: float = 0.7) -> list[Scored]:
    """Returns up to `limit` relevant units from distinct documents, picked by maximal marginal relevance.

    Each pick maximises ``balance · score − (1 − balance) · likeness`` to what is picked (character-bigram
    overlap); a unit scoring under `floor` of the best, or whose meaning is far from the question's (`TOPIC`), is
    never taken, so a short list is never padded with units sharing only the question's words. A picked
    document is quoted by its opening (`opening`) when that scores within `OPENING_SHARE` of the pick, or, when
    the pick is a table row (a record, which says little of its document alone), when the opening is relevant in
    its own right (`floor` of the best), its first such opening in reading order: an overview's point on a
    document is what the document says it is about, which it says first (a boxed aside before the first heading,
    SPECIFIC CASE Microsoft Windows and NFS Shares…, comes after the sentence saying what NFS is).
    """

    if not ranking:
        return []
    pool = [s for s in ranking if s.score >= floor * ranking[0].score and s.meant >= TOPIC]
    picked: list[Scored] = []
    while pool and len(picked) < limit:
        best = max(pool, key=lambda s: balance * s.score
                   - (1 - balance) * max((covered(s.text, p.text) for p in picked), default=0.0))
        bar = OPENING_SHARE * best.score
        bar = min(bar, floor * ranking[0].score) if best.candidate.kind == "row" else bar
        opening = min((s for s in ranking if s.hit.source == best.hit.source and s.candidate.opening
                       and s.score >= bar and s.meant >= TOPIC), key=lambda s: (piece(s.hit), s.candidate.place),
                      default=best)
        picked.append(opening)
        pool = [s for s in pool if s.hit.source != best.hit.source]
    return picked


_VERSION = re.compile(r"\b(?:v(?:ersion)?\s*)?\d+(?:\.\d+)+\b|\b(?:19|20)\d\d\b|(?:Debian|release|version|版本|版)\s*\d+"
                      r"|\d{4}\s*年|\d+(?:\.\d+)*\s*版|since|as of|deprecated|(?<![\w+~])[+~][a-z]*\d+[a-z]+\d+", re.I)
"""A version or a date a unit names (Debian 8, 2.4.1, 2019年, since, a version suffix +deb11u1); never 自 or 起 alone
(自己, 自治区, 自开业之日起: a period, not a version)."""
_CODE_NAME = re.compile(r"\b(?:since|in|until|till|from|before|after)\s+([A-Z][a-z]+)(?:\s+([A-Z][a-z]{2,}))?\b")
"""A release named by its code name after a temporal preposition (in Wheezy, since Buster, in Debian Jessie)."""
_PLACE_NUMBER = re.compile(r"\]\([^)]*\)|第\s*[\d.]+\s*[节章]"
                           r"|(?i:section|chapter|table|figure|appendix|part)\s+(?:[\d.]+|[A-Z]\b)")
"""A number naming a place in the text, never a version nor a release: a link's target (06.03-那-sid-呢.md), a
section (第 6.3 节, Appendix A)."""


def dated(text: str, query: str = "") -> bool:
    """Returns whether a unit names a version or a date (`_VERSION`) outside its links' targets and section numbers,
    or, given the question, a release by a code name the question does not say (`_CODE_NAME`: Jessie of "in Debian
    Jessie" for "since which release… in Debian?", where Debian is the product asked about, no release)."""
    text = _PLACE_NUMBER.sub(" ", text)
    if _VERSION.search(text):
        return True
    asked = {w.lower() for w in re.findall(r"[A-Za-z]+", query)}
    named = [m.group(2) if m.group(1).lower() in asked else m.group(1) for m in _CODE_NAME.finditer(text)] \
        if query else []
    return any(n is not None and n.lower() not in asked for n in named)


NOTE_AFTER = 2
"""How many units after the one it dates a version note may come (a description's second sentence between)."""


def dated_after(unit: Scored, ranking: Sequence[Scored]) -> Optional[Scored]:
    """Returns the first dated unit of `ranking` at most `NOTE_AFTER` units after `unit` under its heading in its
    hit, or None."""
    near = [s for s in ranking if s.hit.chunk_id == unit.hit.chunk_id and s.candidate.heading == unit.candidate.heading
            and 0 < s.candidate.place - unit.candidate.place <= NOTE_AFTER and dated(s.text)]
    return min(near, key=lambda s: s.candidate.place, default=None)


_NUMBERED = re.compile(r"\b(?:v(?:ersion)?\s*)?\d+(?:\.\d+)+\b|\b(?:19|20)\d\d\b|(?:Debian|release|version|版本|版)\s*\d+"
                       r"|\d{4}\s*年", re.I)
"""A version number or a year (`_VERSION` without its words alone: a title "Deprecated fields" dates nothing)."""


_ENTRY_WORDS = re.compile(r"\b(?:version|revision|release|changes)\b|版本|修订|发布|变更", re.I)
"""Words a change log's entry title may hold besides its version (Version 4.6.0, Revision 3-18, 版本 2.1)."""


def titled_dated(unit: Scored) -> bool:
    """Returns whether a unit's hit is a change log's entry: its title a version or a year and nothing else but
    `_ENTRY_WORDS` (Version 4.6.0), which dates every sentence on it, and those say only what changed (Previously,
    this prohibition…). A page titled with a release and what it is about (2021 年 8 月 14 日发布的 Debian Edu 11 …)
    describes that release: its sentences are no more dated than any other page's (edu-zh-cn dev t05)."""
    title = _PLACE_NUMBER.sub(" ", unit.hit.title)
    return bool(_NUMBERED.search(title)) and not re.search(r"[A-Za-z\u4e00-\u9fff]", _ENTRY_WORDS.sub(
        " ", _NUMBERED.sub(" ", title)))


ASKS_ON_EVENT = re.compile(r"\bwhat (?:happens|will happen|would happen)\b|\bwhen (?:does|do|is|are|will)\b"
                           r"|^(?:if|after|once)\b|会怎样|会怎么样|会发生什么|什么时候|何时|的时候|之后|以后", re.I)
"""A question asking what happens on a condition or an event, or when something happens (What happens to… at the end
of a session, When is… written, 画完以后…会怎么样, 还没读入…的时候)."""
STATES_EVENT = re.compile(r"(?:^|[.!?]\s+)(?:If|When|Whenever|Once|After|Before|Until|As soon as|At the end of)\b"
                          r"[^.;:!?,]{3,80},\s*\w"
                          r"|(?:^|[。！？；])\s*(?:(?:如果|若|假如|一旦|当)[^。；！？]{1,40}?"
                          r"|[^。；！？，：]{1,40}?(?:时|之后|以后|之前|以前|后|完成))[，,]\s*[^。；]*?(?:则|就|将|会|便|需要|必须)")
"""A unit stating a condition or an event with its result (When the shell exits, the lines are copied…; 如果…，则…;
创建新备份时，将删除…; 在读取文件之前，将使用…): its clause, a comma, then what follows."""


def on_event(first: Scored, ranking: Sequence[Scored], query: str) -> Optional[Scored]:
    """Returns, for a question asking what happens on a condition or an event (`ASKS_ON_EVENT`) whose `first` unit
    states none, the best unit of its document within `LEAD` of the best stating one with its result
    (`STATES_EVENT`), or None: the first holds the question's words, its page says what follows the event (another
    page's `如果…` is about another matter: faq-zh-cn dev t04)."""
    if not ASKS_ON_EVENT.search(query) or STATES_EVENT.search(first.text):
        return None
    room = QUOTED - sentence_count(first.text)
    return next((s for s in ranking if s is not first and s.hit.source == first.hit.source
                 and s.score >= LEAD * ranking[0].score
                 and sentence_count(s.text) <= room and STATES_EVENT.search(s.text)), None)


def temporal(ranking: Sequence[Scored], around: Sequence[Scored] = (), query: str = "") -> list[Scored]:
    """Returns the best unit that names a version or a date (`dated`, a code name the question does not say
    counting) or sits on a page whose title does (`titled_dated`: a change log's Version 4.6.0), the best unit
    when none scores near it, then a second within `SECOND` of it, a dated one before an
    undated runner-up (…+deb11u1 for bullseye… over "…target their suite name"); an undated first unit is followed
    by a dated unit just after it among `around` (every unit of the context: `dated_after`; This functionality is new in Valgrind 3.7.0: a version note follows what
    it dates, in few of the question's words). The best unit of `around`, when dated, is the first candidate even
    when it holds few of the question's words (版本 11，也叫做“稳定（stable）”版 for 目前的稳定版是第几版): the
    ranking's other signals found it, and a version is what is asked. An undated first unit, asked what happens on
    an event, is followed by the near unit stating an event with its result (`on_event`)."""
    top = around[0] if around else None
    ranking = [top, *ranking] if top is not None and top not in ranking and dated(top.text, query) else list(ranking)
    versioned = [s for s in ranking if dated(s.text, query) or titled_dated(s)]
    first = versioned[0] if versioned and versioned[0].score >= 0.7 * ranking[0].score else ranking[0]
    undated = not (dated(first.text, query) or titled_dated(first))
    after = dated_after(first, around or ranking) if undated else None
    event = on_event(first, ranking, query) if undated and after is None else None
    if after is not None or event is not None:
        return [first, after or event]
    if not versioned:
        return fact(ranking, query)
    near = [s for s in ranking if s is not first and s.score >= SECOND * first.score]
    return [first] + ([s for s in near if dated(s.text, query)] or near)[:1]


def relation(ranking: Sequence[Scored], ends: Sequence[str]) -> list[Scored]:
    """Returns the units naming two of the question's named `ends` that score within `SECOND` of the best of them
    (when that one scores near the best unit: `linking`), each quoted by its sentence naming them when it holds
    several (`cuttable`), together at most `QUOTED` sentences; else `fact`'s. Several units may state how the
    same two things relate, and the score alone cannot tell which states it plainly."""
    first = linking(ranking, ends)
    if first is None:
        return fact(ranking)
    out, room = [], QUOTED
    for unit in (s for s in ranking if s.score >= SECOND * first.score and links(s, ends)):
        stating = [t for t in quoted_sentences(unit.text) if sum(names(t, e, not e.islower()) for e in ends) >= 2]
        quote = sentence_of(unit, stating[0]) if stating and cuttable(unit) else unit
        if sentence_count(quote.text) <= room:
            out.append(quote)
            room -= sentence_count(quote.text)
    return out


def sentence_before(unit: Scored) -> str:
    """Returns the sentence right before a unit in its chunk, or "" when it opens the chunk."""
    start = unit.hit.text.find(unit.text)
    return ([b for b in re.split(r"(?<=[.!?])\s+|(?<=[。！？])", unit.hit.text[:max(start, 0)].strip()) if b] or [""])[-1]


def links(unit: Scored, ends: Sequence[str]) -> bool:
    """Returns whether a unit names two of `ends` in its text, its hit's title or its heading, a unit opening on its
    subject (`CARRIES`: 它默认是使用 exim4…) counting what the sentence before it names (…工具是 reportbug…); an end
    the question capitalises only as written (the Release file is not "Pin: release a=unstable")."""
    said = (unit.text, unit.hit.title, unit.candidate.heading) + ((sentence_before(unit),) if CARRIES.match(
        unit.text) else ())
    return sum(any(names(t, e, cased=not e.islower()) for t in said) for e in ends) >= 2


def linking(ranking: Sequence[Scored], ends: Sequence[str]) -> Optional[Scored]:
    """Returns the best unit naming two of the question's named `ends` when it scores within 0.7 of the best."""
    both = [s for s in ranking if links(s, ends)]
    return both[0] if both and both[0].score >= 0.7 * ranking[0].score else None


def shaped(query_type: Optional[str], ranking: Sequence[Scored], names: Sequence[str] = (),
           around: Sequence[Scored] = (), query: str = "") -> list[Scored]:
    """Returns the units an answer of this type quotes: a temporal question's dated unit (`query`: the question,
    whose words name no release), a synthesis's diverse points (a fact's units when one document alone has any:
    its opening says what it is about, not what the question asks of it), a relation's unit naming both ends
    (`names`), else a fact's one or two units."""
    if not ranking:
        return []
    if query_type == "temporal":
        return temporal(ranking, around, query)
    if query_type == "synthesis":
        points = diverse(ranking)
        return points if len(points) >= 2 else fact(ranking, query)
    if query_type == "relation" and len(names) >= 2:
        return relation(ranking, names)
    return fact(ranking, query)
