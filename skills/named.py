"""The things a comparison sets side by side and the ends of a relation question, as the question names them.

A comparison's sides: apt and apt-get, Depends 和 Pre-Depends; a relation's ends (`relation_ends`): the same
named things, without those given only as examples.

What names a side depends on the question's language: a Chinese question's runs
of Latin words (`X Window`), an English one's capitalised words and the
lower-case words the retrieved text uses as names (commands: `cron is the
daemon…`, `| gzip foo |`, `gzip(1)`), besides the profile's named things
(quoted terms, code-like words, "between X and Y"). `skills.sides` searches for
each; `skills.layouts` gives each its block.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

from .evidence import names
from .sentences import STOPWORDS, keywords, proper_nouns
from .store.records import Hit
from .store.tokenize import language_of

_LATIN = re.compile(r"(?<![A-Za-z0-9_./+-])[A-Za-z](?:[\w.+/-]*[A-Za-z0-9_+])?(?: [A-Za-z](?:[\w.+/-]*[A-Za-z0-9_+])?)*"
                    r"(?: ?\([A-Za-z][\w .+/-]*\))?(?![A-Za-z0-9_./+-])", re.A)
"""A run of Latin words in a Chinese question (Pre-Depends, X Window), with a Latin qualifier in brackets after it
(To Cell (resize with cell), a UI option's variant): a name."""
_CONNECTIVE = re.compile(r"\b(?:and|or|with|from|vs\.?|versus|against|to|rather\s+than|instead\s+of)\b|和|与|及|跟|同|对比|相比|比较|还是|或", re.I)
_OPTION = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*(?:=[\w.,:/+-]*[\w+])?")
"""A command-line option as the question writes it, with its value (--leak-check=summary): a name whole, not its
value alone ("summary")."""
_OPERATOR = r"[^\w\s\"'“”‘’?,.()]{1,3}"
"""An operator (&&, >>, |): a name holding no word."""
_OPERATORS = re.compile(rf"(?<!\S)({_OPERATOR})\s+(?:or|and|vs\.?|versus)\s+({_OPERATOR})(?=[\s?,.;!]|$)")
"""Two operators a connective joins (& or &&, > vs >>)."""
_COMMAND = re.compile(r"(?<![A-Za-z0-9_./+-])[a-z][a-z0-9_.+-]*[a-z0-9+](?![A-Za-z0-9_./+-])")


DEFINES = re.compile(r"/?\s*(?:[(（][^()（）]{1,60}[)）]\s*)?(?:is|are|was|means|refers|stands|[:：]|是|指|即|为"
                      r"|\|(?=[^\n]*?(?:[A-Za-z][\w'-]*\s+[A-Za-z]|[\u4e00-\u9fff]{2}))"
                      r"|程序(?!员)|命令(?!行)|(?:\s*,\s*[\w.+-]+)*\s+[-–—]{1,2}\s)", re.I)
"""What follows a name that a sentence defines, after a directory's slash (stable/main/：) and its gloss or manual
section in brackets if any (NFS (Network File System) is…, gzip(1) is…): a copula (cron is the daemon…, X Window
是…), a colon, the cell bar of a table row keyed by the name when a cell after it says something in words (| tmux |
terminal multiplexer…; not `unstable | 1 | 2`, bare names and numbers), 程序 or 命令 as its
kind (not the 程序员 of "dpkg 程序员手册"), or the dash of a manual page's name line (gzip, gunzip, zcat - compress
or expand files)."""
_OPENS = r"(?:^\s*(?:[-*+]\s+)?|(?<=[.!?。！？:;：；])\s*|\|\s*)[\"“「『*`]*"
"""Where a unit of text opens: its start, after a sentence end or a clause's colon or semicolon (…minor tools:
Lackey is an example tool…), at a line or list item, in a table cell."""


def defines_in(text: str, name: str) -> bool:
    """Returns whether `text` holds a unit opening with `name` and defining it (`DEFINES`: NFS (Network File System)
    is…, | tmux | terminal multiplexer…): where a text says what a side is."""
    text = re.sub(r"\[\s*([^\]]*?)\s*\]\([^)]*\)", r"\1", text)     # a link counts as its words
    return any(DEFINES.match(text, m.end()) for m in re.finditer(
        _OPENS + re.escape(name) + r"(?![A-Za-z0-9_-])[\"”」』*`]*", text, re.I | re.M))


def named_things(query: str, hits: Sequence[Hit], profile: Any, entities: Sequence[str] = ()
                 ) -> list[str]:
    """Returns the things a comparison sets side by side, in order: options as written (`_OPTION`) and operators a
    connective joins (`_OPERATORS`: & or &&), the profile's
    named things, a Chinese
    question's runs of Latin words, an English one's capitalised words and the commands the hits name
    (`commands`), and the question's entities; a name inside another only when also said alone; when more than
    two, the two a connective joins (`paired`)."""
    latin = [w for w in _LATIN.findall(query) if len(w) >= 2] if language_of(query) == "zh" \
        else [whole(query, n) for n in proper_nouns(query)] + commands(query, hits)
    options = _OPTION.findall(query) + [o for m in _OPERATORS.finditer(query) for o in m.groups()]
    named = [e for e in [*options, *profile.names.query_entities(query), *latin]
             if e in query and e not in STOPWORDS and not _CONNECTIVE.fullmatch(e)]   # and, or, 和: no side
    named += [e for e in entities if e in query and len(e) >= 3 and e not in STOPWORDS]
    named += partners(query, named, "\n".join(h.text for h in hits))
    named += alternatives(query, named)
    named = headed(query, named) if language_of(query) == "zh" else qualified(query, named)
    # a name inside another (Pre in Pre-Depends) is no side unless the question also says it on its own (Depends)
    named = [e for e in dict.fromkeys(named)
             if query.count(e) > sum(o.count(e) for o in dict.fromkeys(named) if o != e and e in o)]
    return paired(query, sorted(named, key=lambda n: said_at(query, n)))


def said_at(query: str, name: str) -> int:
    """Returns where `query` first says `name` as a word of its own, not as part of a longer name (the `stable` of
    "…to stable users", not of stable-updates), else where it first holds it at all."""
    m = re.search(r"(?<![A-Za-z0-9_.+/-])" + re.escape(name) + r"(?![A-Za-z0-9_+/]|[-.][A-Za-z0-9])", query)
    return m.start() if m else query.find(name)


def headed(query: str, named: Sequence[str]) -> list[str]:
    """Returns a Chinese question's names with a Latin name and the Chinese name right after it as one (Debian 计划,
    GNU 计划: the thing, not its kind 计划 alone), and without a name that only qualifies the next one through 的
    (自由软件基金会 in 自由软件基金会的 GNU 计划: the side is the 计划)."""
    out = list(named)
    for latin in [n for n in named if n.isascii()]:
        for cjk in [n for n in named if not n.isascii()]:
            m = re.search(re.escape(latin) + r"\s?" + re.escape(cjk), query)
            if m:
                out.append(m.group(0))
    return [n for n in out if not any(re.search(re.escape(n) + r"的\s?" + re.escape(o), query) for o in out if o != n)]


_EXAMPLES = re.compile(r"\b(?:such as|e\.g\.|for example|for instance)\b[^,;:?!()（）]*"
                       r"|(?:例如|比如|诸如|譬如)[^，,；;：:？?！!（）()]*", re.I)
"""An aside giving examples (such as files or DNS, 例如 ext4 或 xfs): what it names only illustrates a term."""


_JOINED = re.compile(r"(?<![\w.+/-])(?P<first>[\w.+/-]*\w)\s+(?:or|and|vs\.?|versus)\s+(?P<second>[\w.+/-]*\w)"
                     r"(?![\w.+/-])", re.I)
"""Two words a connective joins (Exim4 vs Postfix, Cachegrind or Callgrind); a preposition said again after it (to
compress or to encrypt, for a holiday or for good) is a stop word, so it pairs nothing."""


_COORDINATED = re.compile(r"\b(?:both|either|neither|whether)\s+$", re.I)
"""What makes "X and Y" a pair of qualities of one thing asked about (both recurring and one-off), not two sides."""


_COMMON = re.compile(r"\b(?:a|an)\s+([a-z][\w-]*)(?=\s+(?:and|or|vs\.?|versus)\b|\s*[?.,;!:]|$)", re.I)
"""A word a question says as the head of an indefinite noun phrase (marking a message and…, as a newbie?): a common
noun, never a side (a text names a command bare)."""


def partners(query: str, named: Sequence[str], text: str = "") -> list[str]:
    """Returns the words of an English question a connective joins to a named thing (Cachegrind in "Cachegrind or
    Callgrind", which opens the question and so is no proper noun; ifupdown in "NetworkManager or ifupdown"): the
    two operands of "X or Y" are alike, so the other one is a side too, unless it is a stop or question word, or
    "both" or "either" joins them as qualities of one thing (both recurring and one-off), or it is the head of an
    indefinite noun phrase (`_COMMON`: marking a message and tagging messages). With
    fewer than two named things, two such words both found as written in the retrieved `text` are sides too
    (iptables and nftables: lower-case names no rule knows)."""
    if language_of(query) == "zh":
        return []
    out, common = [], set(_COMMON.findall(query))
    for m in _JOINED.finditer(query):
        if _COORDINATED.search(query[:m.start()]):
            continue
        first, second = m.group("first"), m.group("second")
        pair = [w for w in (first, second) if keywords(w) and w.lower() not in STOPWORDS and w not in common]
        for this, other in ((first, second), (second, first)):
            if other in named and this not in named and this in pair:
                out.append(this)
        if len(named) < 2 and not out and len(pair) == 2 and all(names(text, w, cased=True) for w in pair):
            out += pair
    return out


_INSTEAD = re.compile(r"\s+(?:rather\s+than|instead\s+of)\s+", re.I)
_PLACED = re.compile(r"(?:in|at|on|from|with|via|through|inside|into)\s+", re.I)
"""A preposition opening the clause after "instead of" (…at the login screen instead of in GOsa²): the two clauses set
places or means side by side, each the one its preposition governs."""
_LIGHT = frozenset("use using do doing make get go run pick choose take just".split())
"""Verbs and adverbs of an English clause that say no action of their own (do an NMU, use tar, just): the side
is their object."""


def alternatives(query: str, named: Sequence[str]) -> list[str]:
    """Returns the two things an English question sets one instead of the other ("salvage a package rather than
    just do an NMU": salvage, NMU), each clause around "rather than" or "instead of" giving its named thing, else
    the first content word after its subject (I, we, to), else its first content word: the action it asks about.
    When a preposition opens the clause after it (`_PLACED`: "at the login screen instead of in GOsa²"), the left
    side is what the left clause's last preposition governs (login screen), not its subject's action."""
    m = _INSTEAD.search(query)
    if language_of(query) == "zh" or m is None:
        return []
    left = re.split(r"[,;:?!]", query[:m.start()])[-1]
    right = re.split(r"[,;:?!]", query[m.end():])[0]
    placed = _PLACED.match(right)
    if placed:
        left = re.sub(r"(?i)^(?:the|a|an)\s+", "", re.split(r"(?i)\b" + _PLACED.pattern, left)[-1]).strip()
        right = right[placed.end():]
    out = []
    for clause in (left, right):
        inside = [n for n in named if n in clause]
        after = re.split(r"(?i)\b(?:I|we|you|to)\s+", clause)[-1]
        words = [w for w in re.findall(r"[\w.+/-]*\w", after) or re.findall(r"[\w.+/-]*\w", clause)
                 if keywords(w) and w.lower() not in _LIGHT]
        whole = [clause] if placed and clause == left and keywords(clause) else []   # a place is said whole
        out += inside[-1:] or whole or words[:1]
    return out if len(out) == 2 else []


def qualified(query: str, named: Sequence[str]) -> list[str]:
    """Returns an English question's names with a name said twice, each time after another word or glued to a
    prefix, as two kinds of it (binary-only NMU, source NMU; binNMU, source NMU: the sides, not NMU and source): a
    comparison of two kinds of one thing."""
    out = list(named)
    for name in named:
        before = [m.groups() for m in re.finditer(r"(?:([\w.+/-]*\w)\s+|(?<![\w.+/-])([\w.+/-]*\w))" + re.escape(name)
                                                  + r"(?![\w-])", query)]
        kinds = list(dict.fromkeys(f"{w} {name}" if w else f"{glued}{name}" for w, glued in before
                                   if keywords(w or glued)))
        if len(kinds) >= 2 and query.count(name) == len(before):
            words = {w for w, _ in before}
            out = [n for n in out if n != name and n not in words and n not in kinds] + kinds
    return out


def relation_ends(query: str, hits: Sequence[Hit], profile: Any) -> list[str]:
    """Returns the named things at the ends of a relation question (`named_things`), without those it names only
    as examples (which sources, such as files or DNS: the end is the sources, not files) or that are no topic word
    (the), and two names written side by side as one (dpkg --search: a command and its option): a unit naming
    two examples, or a name and its option, states no relation the question asks about."""
    aside = _EXAMPLES.sub(" ", query)
    ends: list[str] = []
    for e in (e for e in named_things(query, hits, profile) if e in aside and keywords(e)):
        if ends and re.search(re.escape(ends[-1]) + r"\s+" + re.escape(e), query):
            ends[-1] = f"{ends[-1]} {e}"
        else:
            ends.append(e)
    return ends


def whole(query: str, name: str) -> str:
    """Returns the whole word of `query` that `name` is part of (AppArmor, not its App)."""
    m = re.search(r"[\w.+-]*" + re.escape(name) + r"[\w.+-]*", query)
    return m.group(0).strip(".-") if m else name


def commands(query: str, hits: Sequence[Hit]) -> list[str]:
    """Returns the lower-case words of an English question that some hit opens a sentence, a list item or a table
    cell with in lower case (cron is the daemon…, | gzip foo | compress…), or names as a manual page (gzip(1)):
    commands and other names, which a sentence never capitalises, where an everyday word would be; never a stop
    word (should, which a text may open a clause with too)."""
    text = "\n".join(h.text for h in hits)
    return [w for w in dict.fromkeys(_COMMAND.findall(query)) if w not in STOPWORDS and keywords(w) and re.search(
        r"(?:(?:^\s*(?:[-*+]\s+)?|[.!?]\s+|\|\s*\[?\s*)[\"“`*]*" + re.escape(w) + r"(?![A-Za-z0-9_(-])"
        r"|(?<![\w.-])" + re.escape(w) + r"\(\d\w*\))", text, re.M)]


_LISTED = re.compile(r"\s*,\s*(?:the\s+|a\s+|an\s+)?")
"""What lies between two names of a list (the upstream version, the package version and…): a comma and an article."""


_PREPOSITION = re.compile(r"\s*\b(?:with|from|to|against)\s*", re.I)
"""A connective that is a bare preposition (zone with dnssec-policy): it may join a thing to the means of a verb, not
two sides."""


def paired(query: str, named: Sequence[str]) -> list[str]:
    """Returns the names a comparison sets side by side when it names more than two: the first two in a row joined by
    a connective and at most three other words (Wayland with the X Window System: not network-capable), one joined by
    more than a bare preposition first (`_PREPOSITION`: the sides of "sign my zone with A or with B" are A and B), with
    the names a list of commas runs up to them (the upstream version, the package version and the kernel version:
    three sides), else all."""
    gaps = [query[query.find(a) + len(a):query.find(b)] for a, b in zip(named, named[1:])]
    joined = [i for i, gap in enumerate(gaps) if _CONNECTIVE.search(gap) and len(re.findall(r"\w+", gap)) <= 4]
    if len(named) <= 2 or not joined:
        return list(named)
    last = first = min(joined, key=lambda i: bool(_PREPOSITION.fullmatch(gaps[i])))     # the first among equals
    while first > 0 and _LISTED.fullmatch(gaps[first - 1]):
        first -= 1
    return list(named[first:last + 2])
