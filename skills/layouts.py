"""Offline answer layouts for the multi-document question types: compare, synthesis and relation.

- compare: one labelled block per named side (a document the question names, else a named thing), each with
  its best unit and its own citation, per aspect when the profile compares on aspects, then a unit that names
  every side when one says how they relate (quoted: a keyword list of what each side "stresses" is no sentence a
  reader can use, so no verdict is written); without aspects, the blocks and that unit quote at most
  `evidence.QUOTED` sentences where cutting a unit to its best sentence allows (`bounds`);
- synthesis: up to six relevant points from distinct documents (`evidence.diverse`);
- relation: the edge first (A —relation→ B), then the unit that states it, the passages within the bound
  (`bounds`); without an edge whose passage scores near the best unit, the units naming both ends.

The units come from `evidence.ranked` (scored against the question). Each layout returns None when it cannot
lay out an answer (e.g. fewer than two sides), and the generic extractive answer is used instead. Words come
from the profile's phrasing in the question's language (skills.phrasing).
"""
from __future__ import annotations

import re
from typing import Any, Mapping, Optional, Sequence

from lambdarag import State
from .store.records import Hit

from .context import cited, marker
from .edges import asked_relations
from .evidence import (LEAD, SECOND, Scored, diverse, fact, names, naming, normalised, piece, piece_before,
                       sentence_before)
from .profile import CorpusProfile
from .named import DEFINES, defines_in, named_things
from .coverage import SubQuestion, coverage
from .bounds import bounded
from .sentences import english_stem_in, keywords


def label(title: str) -> str:
    """Returns a title fit to label a quoted line: without the sentence ends (？。!) that would cut the line in
    two where the check splits an answer into claims."""
    return re.sub(r"\s*[。！？!?]+\s*", " ", title).strip()


def best_sentence(ranking: Sequence[Scored], cues: Sequence[str] = (), used: frozenset[str] = frozenset()
                  ) -> Optional[Scored]:
    """Returns the best-scored unit not yet `used`, preferring one that states a cue word (an aspect's)."""
    fresh = [s for s in ranking if s.text not in used]
    cued = [s for s in fresh if any(c.lower() in s.text.lower() for c in cues)]
    return (cued or fresh or [None])[0]


def line(sentence: str, hit: Hit, p: Mapping[str, str]) -> str:
    """Returns a quoted sentence ending in its own full stop, else the language's (a row, a clause, a lead-in), then
    its citation marker: an English sentence of a Chinese book ends in `.`, not `。` (SMD pads … have no hole.)."""
    said = sentence.rstrip('；;，,。.：:')
    stop = sentence[len(said):].strip()[:1]
    return f"{said}{stop if stop in ('。', '.') else p['end']}{marker(hit, p['source'])}"


def answer_of(lines: Sequence[str], hits: Sequence[Hit], p: Mapping[str, str]) -> dict[str, Any]:
    text = p["according"] + "\n" + "\n".join(lines)
    citations, _ = cited(text, hits)
    return {"answer": text, "citations": citations}


# -- compare ---------------------------------------------------------------------


def stating(own: Sequence[Scored], cues: Sequence[str], used: frozenset[str]) -> Optional[Scored]:
    """Returns a side's unit not yet `used` that states the aspect best: the one saying the earliest of its cue words
    (a pack lists them strongest first: 主管 before 负责), then the first stated in the best-ranked chunk (an
    article's first paragraph sets its rule, the next ones its parts); with no cue words, the side's first unit.
    """
    def strength(unit: Scored) -> tuple[int, ...]:
        said = [i for i, c in enumerate(cues) if c.lower() in unit.text.lower()]
        return (min(said), unit.candidate.rank, unit.hit.text.find(unit.text)) if said else (len(cues),)

    return min((s for s in own if s.text not in used), key=strength, default=None)


def states(unit: Scored, cues: Sequence[str]) -> bool:
    """Returns whether a unit says one of an aspect's cue words (为了…制定本法 for a statute's purpose)."""
    return any(c.lower() in unit.text.lower() for c in cues)


def compared(state: State, hits: Sequence[Hit], profile: CorpusProfile, ranking: Sequence[Scored]
             ) -> tuple[list[tuple[str, list[Scored]]], bool]:
    """Returns the sides a comparison names, each with its units best first, and whether they are documents:
    the named documents present in the evidence, else the named things of the question (a unit naming one, or
    in a hit titled with it; among equals, one from a document that speaks for the other side too, where the two
    are set side by side)."""
    sides = [s for s in getattr(state, "sides", ()) if any(h.source == s.source for h in hits)][:2]
    named = named_things(state.original_query, hits, profile, state.entities)
    if len(sides) >= 2 and all(titled(s) for s in sides) and not others(named, sides):   # each its own page
        called = [s.name for s in sides]    # in its own page, a unit naming the other side compares: no fault
        # steered by the aspect before its definition here: a unit of a side's own page speaks for no other side
        steered = on_aspect(state.original_query, called, ranking)
        verbs = asked_of(state.original_query, called)
        return [(side_label(s), sorted([r for r in ranking if r.hit.source == s.source or defining(r, s.name)],
                                       key=lambda r, s=s: speaks_for(r, s.name, called, steered, verbs)[:8]))
                for s in sides], True
    if len(named) < 2:
        return [], False
    spoken = {e: spoken_as(e, ranking) for e in named}
    called = list(spoken.values())
    # a side's units name it whole or by its first two words (X Window System as texts say it)
    headed = {e: {r.text for r in ranking if run_in(r, said(spoken[e]), hits)} for e in named}
    own = {e: [r for r in ranking if r.text in headed[e] or any(
        names(t, f) for t in (unsaid(r.text, spoken[e], called), r.hit.title, r.candidate.heading)
        for f in said(spoken[e]))] for e in named}
    speaking = {e: {r.hit.source for r in ranking if any(names(unsaid(r.text, spoken[e], called), f)
                                                         for f in said(spoken[e]))} for e in named}

    steered = on_aspect(state.original_query, called, ranking)
    verbs = asked_of(state.original_query, called)

    def key(unit: Scored, e: str) -> tuple[bool, ...]:
        beside = set().union(*(speaking[o] for o in named if o != e))   # a document speaking for another side
        # the aspect goes before the first thing said about the side (its page's opening), not before a definition;
        # and only for a unit speaking for this side alone: one naming another side speaks for either
        alone = not any(names(unsaid(unit.text, spoken[o], called), f)
                        for o in named if o != e for f in said(spoken[o]))
        speaks = speaks_for(unit, spoken[e], called, asked=verbs, headed=unit.text in headed[e])
        return (*speaks[:4], not (alone and unit.text in steered), *speaks[4:], unit.hit.source not in beside)

    return [(e, sorted(own[e], key=lambda r: key(r, e))) for e in named], False


_KIND_AFTER = re.compile(r"([A-Za-z][\w.+-]*(?: [A-Za-z][\w.+-]*)*)\s?[\u4e00-\u9fff]{1,4}")
"""A Chinese question's side that is a Latin name and the kind of thing it is (SMD 焊盘, Debian 计划)."""


def spoken_as(name: str, ranking: Sequence[Scored]) -> str:
    """Returns the name by which the units say a side: as the question writes it when one does, else the Latin name
    of a side written as a Latin name and its Chinese kind (`_KIND_AFTER`) when one says that: a book whose
    paragraphs are in English writes "SMD pads are…", never SMD 焊盘 (kicad-pcb-zh-cn dev c06); else its plural
    (`plural`) when one says that: "…are different TCP endpoints." for a TCP endpoint (wireshark-guide-en dev c04)."""
    if any(naming([r], f) for r in ranking for f in said(name)):
        return name
    kind = _KIND_AFTER.fullmatch(name)
    if kind is not None and any(names(r.text, kind.group(1)) for r in ranking):
        return kind.group(1)
    return next((p for p in plural(name) if any(names(r.text, p) for r in ranking)), name)


def others(named: Sequence[str], sides: Sequence[Any]) -> bool:
    """Returns whether the question sets side by side two named things that neither document side is nor holds
    (AppArmor 配置文件的 enforce 模式和 complain 模式区别在哪: AppArmor and 配置文件 each name a page, but the question
    compares enforce with complain; handbook-zh-cn dev c04 quoted AppArmor's page and the syslog page)."""
    called = [s.name.lower() for s in sides]
    return len(named) == 2 and not any(n.lower() in c or c in n.lower() for n in named for c in called)


def defining(unit: Scored, name: str) -> bool:
    """Returns whether a unit of another page says what a side is (Massif is a heap profiler. in the tools' overview,
    where the page found by its title, "Using Massif", says how to run it): its text names the side and defines it."""
    return any(names(unit.text, f) for f in said(name)) and not speaks_for(unit, name, [name])[3]


ASPECT_SHARE = 0.5
"""Share of the compared aspect's weighted words a unit holds whole to speak for a side on that aspect."""


def on_aspect(query: str, named: Sequence[str], ranking: Sequence[Scored]) -> frozenset[str]:
    """Returns the units stating what the sides are compared on: holding `ASPECT_SHARE` of the question's words
    other than the sides' names (what decides a process's rights: "The rights of a process depend on its security
    context."), when it has two or more; none when the question names no aspect (How does apt differ from apt-get?)."""
    called = {w for n in named for w in keywords(n)}
    asked = [w for w in keywords(query) if w not in called]
    if len(asked) < 2:
        return frozenset()
    units = [(r.text, r.hit, r.candidate.rank) for r in ranking]
    shares = coverage(SubQuestion("aspect", tuple((w, 1.0) for w in asked)), units, partial=False)
    return frozenset(r.text for r, share in zip(ranking, shares) if share >= ASPECT_SHARE)


_AUXILIARY = r"(?:(?:also|only|then|can|will|should|must|may|just|也|还|会|可以|能|将|只)\s*)?"
"""A word that may stand between a subject and its verb (piuparts also tests, lintian 会检查)."""


_SUBJECT = r"\b(?:does|do|did|can|could|will|would|should)\s+{name}\s+{word}(?![A-Za-z])|{name}\s*{word}了?(?:什么|哪些|哪|多少)"
"""A question asking what a side does, the side its verb's subject: "What does piuparts test", "piuparts 测试哪些"
(not the noun phrase of "the X Window System core protocol")."""


def asked_of(query: str, named: Sequence[str]) -> list[str]:
    """Returns what the question asks a side does: its word right after a side's name that is the name's verb
    (`_SUBJECT`: test of "What does piuparts test…", 测试 of "piuparts 测试哪些…"); "NFS vs Samba: what does each one
    share…" asks no side's verb."""
    words = [w for w in keywords(query) if w.lower() not in {k.lower() for n in named for k in keywords(n)}]
    return [w for w in words if any(re.search(_SUBJECT.format(name=re.escape(n), word=re.escape(w)), query, re.I)
                                    for n in named)]


def acts(text: str, forms: Sequence[str], asked: Sequence[str]) -> bool:
    """Returns whether a unit says the side does what the question asks of it: one of its names as the subject of
    one of the question's words in any inflection (piuparts tests… for what piuparts tests; piuparts 测试…), which
    answers for that side what a sentence defining it (piuparts is the … testing tool.) only names."""
    stems = [w.lower() for w in asked if len(w) >= 2]
    return bool(stems) and any(
        any(m.group(1).lower().startswith(w) for w in stems)
        for f in forms for m in re.finditer(r"(?<![A-Za-z0-9_-])" + re.escape(f) + r"(?![A-Za-z0-9_-])[\"”」』*`]*\s*"
                                            + _AUXILIARY + r"(\w+)", text, re.I))


def titled(side: Any) -> bool:
    """Returns whether a document side's title names it (git-reset(1) names git reset; a Chinese name, a
    statute's short name, always counts): a page found by a heading alone (apt in "Automatic Upgrades") is
    not the side's own."""
    return not side.name.isascii() or any(names(side.title, f) for f in said(side.name))


def side_label(side: Any) -> str:
    """Returns what labels a side that is a document: the name as the question writes it when it is a word of an
    English title (AppArmor, not "Introduction to AppArmor"), else the title (a statute's full name)."""
    return side.name if side.name.isascii() and side.name.lower() != side.title.lower() else side.title


def said(name: str) -> list[str]:
    """Returns the ways a text may say a side's name: as written, by its first two words (`leading`), with
    hyphens for spaces (git reset as git-reset), and an option's value as its description says it
    (--leak-check=summary: "If set to summary")."""
    value = _VALUED.fullmatch(name)
    return list(dict.fromkeys([name, leading(name), name.replace(" ", "-"),
                               *([f"set to {value.group(2)}"] if value else [])]))


def plural(name: str) -> list[str]:
    """Returns the plural of a name of several Latin words whose last is a lower-case noun (TCP endpoints, mail
    queues): a text speaking of such things in general says them so; none for one word (a command's name) or a
    name already ending in s. Only for a side no unit says as written (`spoken_as`): where one does, "Group quotas
    can be modified with." would open with the name before "If you need group quota, …"."""
    *_, last = name.split(" ")
    if " " not in name or not re.fullmatch(r"[a-z]{3,}", last) or last.endswith("s"):
        return []
    return [name + ("es" if re.search(r"(?:x|ch|sh)$", last) else "s")]


def leading(name: str) -> str:
    """Returns the first two words of a longer name (X Window of X Window System), which a text may say alone; a
    name with a qualifier in brackets whole (To Cell (resize with cell): To Cell is another option)."""
    words = name.split()
    return " ".join(words[:2]) if len(words) > 2 and not name.endswith(")") else name


def unsaid(text: str, name: str, named: Sequence[str]) -> str:
    """Returns `text` without the other sides' names that hold `name` (To Cell (resize with cell) for To Cell): saying
    the longer name is not saying the shorter one."""
    for other in (o for o in named if o != name and name.lower() in o.lower()):
        text = re.sub(re.escape(other), " ", text, flags=re.I)
    return text


_VALUED = re.compile(r"(--?[A-Za-z][\w-]*)=(\S+)")
"""An option with a value (--leak-check=summary), as a question names a side."""


def described(unit: Scored, name: str) -> bool:
    """Returns whether a unit is part of the description of an option side's option: after the line listing its
    values among which the side's (--leak-check=<no|summary|yes|full>) in its chunk, before the next option's
    line, saying the value as set (If set to summary, …): where the value is defined."""
    value = _VALUED.fullmatch(name)
    if value is None:
        return False
    text, at = unit.hit.text, max(unit.hit.text.find(unit.text), 0)
    line = re.search(r"(?m)^[\s`*]*" + re.escape(value.group(1)) + r"=[<\[][\w|,-]*?(?<![\w-])"
                     + re.escape(value.group(2)) + r"(?![\w-])", text)
    return (line is not None and line.start() <= at and not _OPTION_LINE.search(text, line.end(), at)
            and names(unit.text, f"set to {value.group(2)}"))


_OPTION_LINE = re.compile(r"(?m)^[\s`*]*--?[A-Za-z]")
"""A line opening with an option: where the description of the option before it ends."""


_GLOSS = r"\s*[（(][A-Za-z][A-Za-z -]*[)）]"
"""A Chinese term's Latin gloss in brackets right after it (依赖（depend）): where a text introduces the term (a term,
not the end of a longer one: 预依赖（Pre-Depend） glosses no 依赖). A Latin name's brackets hold no gloss of it but a
cross-reference (Run lintian (see lintian).)."""
_BARE_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def spells_out(text: str, name: str) -> bool:
    """Returns whether `text` writes an acronym side's words out before it in brackets (Mail Transfer Agent (MTA),
    the initials spelling it): where a text introduces the thing, whatever the sentence opens with (然后是…)."""
    if not re.fullmatch(r"[A-Z]{2,6}", name):
        return False
    words = r"[\s-]+".join([r"([A-Za-z])[a-z]*"] * len(name))
    return any("".join(m.groups()).upper() == name
               for m in re.finditer(rf"(?<![A-Za-z]){words}\s*[(（]\s*{name}\s*[)）]", text))


def exactly(text: str, name: str) -> bool:
    """Returns whether `text` says `name` as the question writes it (a capital opening a sentence aside): apt, not
    the project APT."""
    return re.search(r"(?<![A-Za-z0-9_-])(?:" + re.escape(name) + "|" + re.escape(name[:1].upper() + name[1:])
                     + r")(?![A-Za-z0-9_-])", text) is not None


_CONTRARY = (r"(?:unlike|contrary\s+to|in\s+contrast\s+(?:to|with)|as\s+opposed\s+to|不像|不同于|有别于|区别于)"
             r"\s*[\"“「`*]*{name}(?![A-Za-z0-9_-])|(?:与|跟|和|同)\s*[\"“「`*]*{name}.{{0,12}}?(?:不同|相比|相反)"
             r"|^[\s\"“]*(?:where|whereas|while)\s+(?:the\s+|a\s+|an\s+)?[\"“`*]*{name}(?![A-Za-z0-9_-])[^.;:]*?,")
"""A unit setting a thing against the name in it (Contrary to SELinux…, Unlike telnet…, 不像 telnet…, 与 X 不同), or
opening with a clause on it before its main one (Where DLZ translates queries into lookups, …, a DynDB module…)."""
_CONVERSELY = re.compile(r"^[\s\"“]*(?:conversely|in\s+contrast|by\s+contrast|on\s+the\s+other\s+hand|相反|反之)",
                         re.I)
"""A unit opening by setting itself against the one before it (Conversely, …)."""


def contrasts(unit: Scored, name: str, others: Sequence[str]) -> bool:
    """Returns whether a unit sets its side against another: it names another side after a contrary word (Contrary
    to SELinux, the rules… on AppArmor's page; 不像 telnet 命令，ssh 命令…), or it names its side and opens with one
    (Conversely, …) right after a sentence naming another. Such a unit says how the two differ, which is what a
    comparison asks."""
    text = unit.text
    if _CONVERSELY.match(text):
        before = sentence_before(unit)
        return any(names(text, f) for f in said(name)) and any(names(before, f) for o in others for f in said(o))
    return any(re.search(_CONTRARY.format(name=re.escape(f)), text, re.I) for o in others for f in said(o))


def speaks_for(unit: Scored, name: str, named: Sequence[str], steered: frozenset[str] = frozenset(),
               asked: Sequence[str] = (), headed: bool = False) -> tuple[bool, ...]:
    """Returns the sort key of a unit for one side, units that speak for it first: one whose text names it (or
    its first two words: X Window of X Window System), or whose title names it and no other side (its own law,
    its own page), or that sits in its glossary item (under its quoted term: `evidence.units`); then one not from
    the page of another side (Contrary to SELinux… on AppArmor's page, a citation of the wrong page) unless it opens
    with the side's name defining it (「灰度」将所有颜色转换成… on the page 黑白打印, which sets out both); then one of
    the `steered` units (stating the compared aspect: `on_aspect`) or saying the side does what the question
    `asked` of it (`acts`: piuparts tests…); then one defining it (opening with the name, a link's text counting
    as its words, quoted or before a copula: "Suggests" Many users…, cron is the daemon…, [PolicyKit](…) is…, or
    keying a table row, or so opening a sentence or cell of it: `named.defines_in`; or
    glossing it, as a text introduces a term: A 依赖（depend）B; or in its glossary item; or in its option's
    description: `described`); then one first said about it (`leads`, which also makes a unit its own): each
    side's block says what that side is; then one setting it against another side (`contrasts`), which says how
    they differ but from the other's side too (the contrast may follow as what lies between them); then one that
    says something (not a shell command, not a link alone); then one saying the name as the question writes it
    (apt, not APT); then one naming no other side unless it opens with this one (its subject: `bzip2 foo |
    compress "foo"… (better compression than gzip)` speaks for bzip2); then one opening with the name. A unit
    `headed` by the side (`run_in`) is read as opening with its name: its paragraph's subject is the side."""
    text, title = unsaid(_BARE_LINK.sub(r"\1", unit.text), name, named), unit.hit.title + " " + unit.hit.source
    text = f"{name}. {text}" if headed else text
    forms = said(name)
    others = [o for o in named if o != name]
    glossed = unit.candidate.heading.rsplit(" / ", 1)[-1].lower() in [f"“{f.lower()}”" for f in forms]
    own = any(names(text, f) for f in forms) or (names(title, name) and not any(names(title, o) for o in others)) \
        or glossed
    opens = [m for f in forms if (m := re.match(r"[\s\"“「『*`]*" + re.escape(f) + r"(?![A-Za-z0-9_-])[\"”」』*`]*",
                                                 text, re.I))]
    opens_defining = any(m.group(0)[-1:] in "\"”」』*`" or DEFINES.match(text, m.end()) for m in opens)
    defines = opens_defining or any(
        (not f.isascii() and re.search(r"(?<![\u4e00-\u9fff])" + re.escape(f) + _GLOSS, text)) or defines_in(text, f)
        for f in forms) \
        or described(unit, name) or glossed or spells_out(text, name)
    says = unit.candidate.kind != "command" and len(re.findall(r"[A-Za-z]{2,}|[\u4e00-\u9fff]", text)) > len(
        re.findall(r"[A-Za-z]{2,}|[\u4e00-\u9fff]", " ".join(_BARE_LINK.findall(unit.text)))) + 1
    elsewhere = any(names(title, o) for o in others) and not any(names(title, f) for f in forms) and not opens_defining
    first = leads(unit, forms, others)
    steered = unit.text in steered or acts(text, forms, asked)
    return (not (own or first), elsewhere, not steered, not defines, not first,
            not contrasts(unit, name, others), not says, not any(exactly(text, f) for f in forms),
            any(names(text, o) for o in others) and not opens, not opens)


def run_in(unit: Scored, forms: Sequence[str], hits: Sequence[Hit]) -> bool:
    """Returns whether a unit sits in a paragraph opening with a side's name and a full stop, past that paragraph's
    first sentence (`Maildir. The newest of the mailbox formats… Filenames for the messages are unique…`: a
    definition list flattened, each item's name run in): the paragraph is about that side though the unit never
    names it. Where the unit's piece opens inside the paragraph, its start is read in the piece before (in `hits`):
    the chunker cut the paragraph at a sentence end, leaving that piece ending with the space after the stop."""
    at = unit.hit.text.find(unit.text)
    start = unit.hit.text.rfind("\n", 0, max(at, 0)) + 1
    before = piece_before(unit.hit, hits) if start == 0 else None
    before = before if before is not None and before.text[-1:].isspace() else None
    paragraph = (before.text.rsplit("\n", 1)[-1] if before is not None else "") + unit.hit.text[start:max(at, 0)]
    return at >= 0 and any(re.match(r"[\s\"“*`]*" + re.escape(f) + r"[\"”*`]*\.\s+\S", paragraph, re.I)
                           for f in forms)


_HEADING_LINE = re.compile(r"(?m)^\s{0,3}#{1,6}\s+(.*?)\s*$")


def leads(unit: Scored, forms: Sequence[str], others: Sequence[str] = ()) -> bool:
    """Returns whether a unit is the first thing said about a side: the first unit of a page titled with it and no
    other side (the
    “unstable” directory contains… on the page “What does unstable contain?”), or the first under a heading that is
    the side's name alone (## dpkg, then "This is the main package manager."), where a text says what the thing is
    without repeating its name."""
    hit, c = unit.hit, unit.candidate
    if c.opening and c.place == 0 and piece(hit) == 1 and any(names(hit.title, f) for f in forms) \
            and not any(names(hit.title, o) for o in others):
        return True
    heading = re.sub(r"[\"“”「」『』*`]", "", c.heading.rsplit(" / ", 1)[-1]).strip().lower()
    if heading not in [f.lower() for f in forms]:
        return False
    at = hit.text.find(unit.text[:24])
    above = [m for m in _HEADING_LINE.finditer(hit.text, 0, max(at, 0))]
    if not above and piece(hit) > 1:
        return False    # a later piece of the section: its first unit is no first thing said under the heading
    start = above[-1].end() if above else 0
    return at >= 0 and not hit.text[start:at].strip(" \t\n-*>")


_ALIKE = re.compile(r"\b(?:differ(?:s|ent|ence|ences)?|unlike|whereas|same|alike|similar(?:ly)?)\b"
                    r"|不同|区别|差别|差异|相同|一样|类似", re.I)
"""Words saying how two things compare (…in BIOS and native UEFI is completely different, 之间完全不同)."""


def naming_all(ranking: Sequence[Scored], sides: Sequence[tuple[str, Any]], used: set[str]) -> list[Scored]:
    """Returns the best unit not yet `used` nor holding one (`fresh`) that names every side (`inflected` counts), one
    saying how they compare (`_ALIKE`) first when it scores within `SECOND` of that one, and says a word besides
    options (a list of options, `--leak-check=summary --leak-check=full`, relates nothing), or none."""
    both = [r for r in ranking if fresh(r.text, used) and re.search(r"[A-Za-z]{2}|[\u4e00-\u9fff]", _OPTIONS.sub(
        " ", r.text)) and all(any(names(r.text, f) for f in said(name)) or inflected(r.text, name)
                              for name, _ in sides) and not listed(r.text, [name for name, _ in sides])]
    near = [r for r in both if r.score >= SECOND * both[0].score]
    return sorted(near, key=lambda r: not _ALIKE.search(r.text))[:1]


def fresh(text: str, used: set[str]) -> bool:
    """Returns whether `text` holds no unit already quoted: a list's lead-in read with its items holds the item
    quoted for a side, and quoted again between the sides it says nothing new."""
    return not any(u in text for u in used)


_LIST = re.compile(r"[^\s,;:()（）、，]+(?:(?:\s*[,、，]\s*|\s+(?:and|or)\s+|[和与及或])[^\s,;:()（）、，]+){2,}")
"""A list of three or more one-word items (Memcheck, Helgrind, DRD; A、B 和 C)."""


def listed(text: str, called: Sequence[str]) -> bool:
    """Returns whether `text` says every side only as items of one list of three or more (…for the tools that can
    take advantage of it (Memcheck, Helgrind, DRD)…) and no word of how things compare (`_ALIKE`): such a sentence
    is about the list, not about how the sides relate."""
    return not _ALIKE.search(text) and any(
        all(any(names(m.group(0), f) for f in said(n)) for n in called) for m in _LIST.finditer(text))


def inflected(text: str, name: str) -> bool:
    """Returns whether `text` says a side that is an everyday English word in another form (salvage as
    "eligible for salvaging"): a verb compared with a named thing is said as the sentence needs it. Only for a
    lower-case word of five or more letters, whose stem is no prefix of unrelated words (tar of target)."""
    return name.isalpha() and name.islower() and len(name) >= 5 and english_stem_in(name, text.lower())


def relating(ranking: Sequence[Scored], sides: Sequence[tuple[str, Any]], used: set[str]) -> list[Scored]:
    """Returns the best unit not yet `used` that sets one side against another (`contrasts`: Unlike GNOME and Plasma,
    Xfce…), which says how they differ, else the one naming every side (`naming_all`), or none."""
    called = [name for name, _ in sides]
    return [r for r in ranking if fresh(r.text, used) and any(contrasts(r, n, called) for n in called)][:1] \
        or naming_all(ranking, sides, used)


_OPTIONS = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*(?:=\S*)?")
"""A command-line option with its value, if any."""


def compare_answer(state: State, hits: Sequence[Hit], profile: CorpusProfile,
                   ranking: Sequence[Scored]) -> Optional[dict[str, Any]]:
    """Returns one labelled, cited block per side (per aspect when the sides are documents and the profile
    compares on aspects), then a unit naming every side when one says how they relate; None with fewer than two
    sides. A side whose best unit is the one quoted for another side shares that block's label when it has no other
    unit (a sentence naming both) rather than being called missing, or when that unit defines it too (a table row
    saying 盲孔是… 埋孔是…) rather than quoting a worse one."""
    sides, documents = compared(state, hits, profile, ranking)
    if len(sides) < 2:
        return None
    query = state.original_query
    p = profile.wording.phrasing(query)
    aspects = [a for a in (profile.comparison.named_aspects(query) or profile.comparison.aspects(query)) if a[0]] if documents else []
    lines: list[str] = []
    used: set[str] = set()
    between: list[Scored] = []
    for aspect, cues in aspects or [("", ())]:
        blocks: list[tuple[list[str], Optional[Scored]]] = []
        for name, own in sides:    # each side its own unit: one quoted for a side is not quoted again for the next
            got = stating(own, cues, frozenset(used))
            got = got if got is None or not cues or states(got, cues) else None    # off the aspect: not under its heading
            # its best unit, quoted for another side, stands for it too when nothing else does or it defines it
            shared = next((b for b in blocks if b[1] is not None and b[1] in own[:1] and (
                got is None or not speaks_for(b[1], name, [s for s, _ in sides])[3])), None)
            if shared is not None:
                shared[0].append(name)
                continue
            blocks.append(([name], got))
            used.update([got.text] if got is not None else [])
        if cues and not any(g is not None and states(g, cues) for _, g in blocks):
            used.difference_update(g.text for _, g in blocks if g is not None)
            continue    # no side states the aspect: a heading over what no unit says would mislabel the quotes
        if aspect:
            lines.append(p["aspect"].format(aspect=aspect))
        else:   # one block per side and the unit naming both: at most `QUOTED` sentences where cutting allows
            cuts = iter(bounded([g for _, g in blocks if g is not None] + relating(ranking, sides, used), query,
                                keep=sum(g is not None for _, g in blocks)))
            blocks = [(called, got if got is None else next(cuts)) for called, got in blocks]
            between = list(cuts)
        for called, got in blocks:
            title = label(p["separator"].join(called))
            if got is None:
                lines.append(p["side_not_found"].format(title=title, aspect=aspect) if aspect
                             else p["side_missing"].format(title=title))
                continue
            lines.append((p["side"].format(title=title) if aspect else p["about"].format(label=title))
                         + ("" if aspect else "\n- ") + line(got.text, got.hit, p))
    if aspects:     # a pack's aspects, then the unit naming both sides as before
        between = naming_all(ranking, sides, used)
    if between:
        lines.append(p["between"] + "\n- " + line(between[0].text, between[0].hit, p))
    return answer_of(lines, hits, p)


# -- synthesis -------------------------------------------------------------------


def synthesis_answer(state: State, hits: Sequence[Hit], profile: CorpusProfile,
                     ranking: Sequence[Scored]) -> Optional[dict[str, Any]]:
    """Returns up to six relevant points from distinct documents, each labelled with its title and cited, or
    None when fewer than two documents have one."""
    p = profile.wording.phrasing(state.original_query)
    points = diverse(ranking)
    if len(points) < 2:
        return None
    return answer_of([p["side"].format(title=label(s.hit.title or s.hit.source)) + line(s.text, s.hit, p)
                      for s in points], hits, p)


# -- relation --------------------------------------------------------------------


def relation_answer(state: State, hits: Sequence[Hit], profile: CorpusProfile,
                    ranking: Sequence[Scored]) -> Optional[dict[str, Any]]:
    """Returns each edge of an asked type (A —relation→ B) followed by the passage stating it, then the units a
    fact's answer quotes that no passage holds (an edge is one reading of one passage, and the best units answer
    whichever edge the graph holds), or None without such edges or when no passage stating one scores within
    `evidence.LEAD` of the best unit."""
    asked = asked_relations(state.original_query, profile.graph.relation_cues)
    p = profile.wording.phrasing(state.original_query)
    first: dict[tuple[str, str, str], Any] = {}
    for r in state.relations:
        if r.relation in asked:
            first.setdefault((r.head, r.relation, r.tail), r)  # each fact once, from its best-ranked edge
    edges = list(first.values())[:3]
    stated = []
    for rel in edges:
        stating = [h for h in hits if h.source == rel.source and (not rel.section or h.section == rel.section)]
        # a passage far below the best unit says how its ends relate, not what the question asks
        own = [r for r in ranking if r.hit in stating and r.score >= LEAD * ranking[0].score]
        stated.append(best_sentence(own, (rel.head, rel.tail)) if own else None)
    passages = [g for g in stated if g is not None]
    held = [normalised(g.text) for g in passages]
    facts = [s for s in fact(ranking, state.original_query) if not any(h in normalised(s.text) or normalised(s.text)
                                                                        in h for h in held)]
    bound = bounded(passages + facts, state.original_query)     # leaves the last units out first: the facts
    kept = iter(bound[:len(passages)])
    lines: list[str] = []
    for rel, got in zip(edges, stated):
        quote = None if got is None else next(kept, None)
        if got is not None and quote is None:
            continue    # the bound left its passage out: the edge goes with it
        lines.append(f"- {rel.head} —{rel.relation}→ {rel.tail}：")
        if quote is not None:
            lines.append(p["basis"] + line(quote.text, quote.hit, p))
    if not any(l.startswith(p["basis"]) for l in lines):
        return None
    return answer_of(lines + [f"- {line(s.text, s.hit, p)}" for s in bound[len(passages):]], hits, p)


LAYOUTS = {"compare": compare_answer, "synthesis": synthesis_answer, "relation": relation_answer}


def laid_out(state: State, hits: Sequence[Hit], profile: CorpusProfile,
             ranking: Sequence[Scored]) -> Optional[dict[str, Any]]:
    """Returns the answer in the layout of the question's type, or None when that type has none or it does not apply."""
    layout = LAYOUTS.get(state.query_type or "")
    return layout(state, hits, profile, ranking) if layout and ranking else None
