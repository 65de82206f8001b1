"""A survey question on documents of no known field is answered by the documents *about* its topic, one each first.

Plain retrieval ranks chunks, so five chunks of the one best-matching page
can fill a survey's first places while the other pages about the topic wait
further down. A page is about a topic when its content matches the question
(the plain hybrid ranking: BM25 and dense, z-score fused) and its title and
headings do too (`Headings`: BM25 over each document's title and heading
lines), and the things the question lists (cron, at and anacron), when one is
a name, each find their own best documents, by text and, for a proper name, by
the headings that name it, its own or its chapter page's (Massif's output file format). A page that speaks of the
topics the question names (its words some title or heading holds) anywhere in its text, not in one chunk
(`Mentions`: BM25 over whole documents), counts too, at half weight: a tool named in one line of a command summary
or a footnote. Where the corpus numbers its files as an outline
(15.00-… a chapter page, 15.01-… its sections: `Outline`), a chapter page among
the first documents brings its sections, which are about its topic whatever
words they use, and a chapter holding two of the plain ranking's first five
documents brings its sibling sections, and a short chapter the question asks
about as a whole (`Outline.asked`) brings every file of it, after the first the
fusion ranks (`whole_chapters`). The rankings are fused by reciprocal rank, so a page two of
them match goes ahead of one only its text matches; the plain ranking's first
document keeps the first place; each document whose headings name a thing the question
lists, and each of hybrid_search's first five unless more of the rankings that match
the question's words (headings, whole text, listed and named things) hold the document
that would take it, and one does, keep a place among the first five (`kept_first`),
except that a long chapter's sibling section keeps its place there only when its best chunks match the question
better as a whole than hybrid's page it displaces (`document_ranking`, `arbitrated`), and hybrid's pages there keep
hybrid's order (`plain_order`); then each of the first `COVER` documents of the
fusion leads with its best chunk, then the plain ranking follows, then the
route's own hits (wiki pages, graph-expanded and rewritten queries).
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, fields, replace
from pathlib import PurePosixPath
from typing import Any, Mapping, Sequence

import numpy as np

from lambdarag import State
from lambdarag.patterns.hybrid_search import fuse, retrieve
from lambdarag.skills.store.bm25 import Bm25Index
from lambdarag.skills.store.corpus import to_hits
from lambdarag.skills.store.derived import PerObject
from lambdarag.skills.store.records import Hit, RankedList, RetrievalPlan
from lambdarag.trace import Trace

LEAD = 50
"""Chunks of the plain ranking that go ahead of the route's hits."""
COVER = 10
"""Documents of the fused document ranking that lead with their best chunk (the survey's recall@10)."""
RRF_K = 60
"""The reciprocal-rank constant fusing the content, heading and listed-item rankings of documents."""
HEADINGS_WEIGHT = 0.5
"""Weight of the heading ranking in the fusion: a title word is weaker evidence than the text or a listed thing
(at 1.0 the dev surveys of bench/data/domains lost MRR@5: 0.854 against 0.875)."""
LISTED = re.compile(r"\s*(?:,|，|、|;|；|\band\b|\bor\b|以及|和|与|及|或)\s*", re.I)
"""What separates the things a survey question lists (cron, at and anacron; 文档、在线讨论和报告缺陷)."""
SPANNED = re.compile(r"\s*(?:\bto\b|到)\s*", re.I)
"""What separates the ends of a span a question lists from … to … (从密码到安全模块)."""
LIST_START = re.compile(r"[:：]|\b(?:such as|like|including|from)\b|(?:比如|例如|包括|从)")
"""Where a question's list of things starts, when it says so."""
NAME = re.compile(r"[A-Za-z0-9]")
"""What makes a listed thing a name (ps, Massif, systemd-networkd): a list of Chinese words alone (磁盘、移动介质和文件)
names aspects of the topic, which the question's own ranking covers, not documents of their own."""
PROPER = re.compile(r"[A-Z0-9_./-]")
"""What makes a word a proper name (Cachegrind, systemd-networkd, cg_annotate), not a common word (use, stable): a
heading naming a common word is not about the thing the question lists."""
MAX_ITEM = 40
"""Characters of a listed thing at most: a longer part is a clause, not a thing."""
ASKED = re.compile(r"^(?:where|how|what|which|when|why|who|whether)\b|^(?:如何|怎么|怎样|哪|什么|为什么|是否)", re.I)
"""How a part of a question that is itself a question starts (where it runs, how its reports are handled): a clause
the question asks, not a thing it lists."""
NAMED_WEIGHT = 1.0
"""Weight of the ranking of documents whose headings name a listed proper name (titled_documents) in the fusion: a
heading naming the thing and the question's other words is as strong as the text (at 0.5 and 0.75 the dev survey
of valgrind-en kept the format section of one of its three tools out of the first five)."""
MENTIONS_WEIGHT = 0.5
"""Weight of the whole-text ranking of documents (Mentions) in the fusion: a page that names the topic in one line
is weaker evidence than one whose text or headings are about it (searched by every word of the question, at 1.0
one-line mentions of uploads pushed the sections about them out of the dev surveys' first five; by its topic words
only, 0.5 to 1.0 rank the dev surveys of bench/data/domains alike)."""
SEEDS = 3
"""Documents of the first fusion whose sections, when it is a chapter page (Outline), join the survey."""
SECTIONS_WEIGHT = 0.5
"""Weight of the ranking of the first documents' sections (a chapter page's) in the fusion: a section is about its
chapter's topic whatever words it uses, but a chapter page among the first three may be there by a side topic (at
1.0 the dev surveys of faq-zh-cn and valgrind-en recalled 0.81 at 5, not 0.88: one heap profiler's chapter filled
the places of the other's)."""
SIBLINGS_TOP = 5
"""Documents of the plain ranking whose chapters vote for their sibling sections (at 10, two chance hits in the
second five brought a whole chapter of unrelated sections into a survey of uploads)."""
SIBLINGS_LEAST = 2
"""Of the plain ranking's first `SIBLINGS_TOP` documents, how many one chapter must hold for its sections to join."""
SIBLINGS_WEIGHT = 1.0
"""Weight of the sibling sections' ranking in the fusion: as much as the text's, since sections a chapter shares
with the first documents are about their topic (FAQ answers of one chapter, a manual's sections on one tool)."""
KEPT = 5
"""The plain ranking's first documents that keep a place in the survey's first as many (kept_first)."""
LONG = 12
"""Files (page and sections) a chapter may hold for its sibling sections to keep the places they take among a
survey's first five from hybrid's pages (`arbitrated`): two of the first five in a longer chapter are chance more often
than its topic."""
BEST = 3
"""A document's best chunks whose mean scores it as a whole (document_ranking): its first chunk alone is how plain
retrieval ranks it, and a sum would rank a long page above a short section for its length."""
ITSELF = re.compile(r"\b(?:the|this|our)\s+(?:book|guide|manual|handbook|documentation|docs|faq|tutorial)(?:'s|’s)?\b"
                    r"|本书|这本书|该书|本指南|本手册|本文档|书中|书里|手册[中里]|文档[中里]|指南[中里]", re.I)
"""How a question names the documents it is asked of ("which services does the book set up", 手册中): words about the
corpus, not the topic, that match its pages about itself (Why this book, Book structure, Acknowledgments)."""
NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)(?=[-_ .])")
"""A file name's section number (15.00-…, 2.3-…): the corpus's own outline, where it has one."""


class DocumentWords:
    """BM25 over one bag of words per document: which documents match a question's words as a whole."""

    def __init__(self, sources: Sequence[str], bm25: Bm25Index) -> None:
        self.sources, self.bm25 = list(sources), bm25

    def ranked(self, tokens: Sequence[str], k: int) -> list[str]:
        """Returns the sources of the `k` documents whose words best match `tokens` (a score above 0)."""
        if not tokens or not self.sources:
            return []
        rows, scores = self.bm25.top(list(tokens), k)
        return [self.sources[int(r)] for r, s in zip(rows, scores) if s > 0]


class Headings(DocumentWords):
    """BM25 over each document's title and heading lines: which documents are about a question's words."""

    def __init__(self, index: Any) -> None:
        lines: dict[str, dict[str, None]] = defaultdict(dict)
        for meta in index.documents().values():
            lines[str(meta.get("source") or "")][str(meta.get("title") or "")] = None
        for chunk in index.chunks():
            for heading in (chunk.section or "").split(" / "):
                lines[chunk.source][heading] = None
        tokens = {s: index.tokenizer(" ".join(lines[s])) for s in lines if s}
        super().__init__(list(tokens), Bm25Index.of(list(tokens.values())))
        self.words = {s: frozenset(tokens[s]) for s in self.sources}
        self.vocabulary = frozenset().union(*self.words.values())

    def naming(self, thing: Sequence[str], aspect: Sequence[str], parent: Mapping[str, str]) -> list[str]:
        """Returns the documents that hold every word of `thing` in their title or headings or in those of their
        `parent` (Massif's output file format, for Massif; Basic block vector file format, a section of the chapter
        on the BBV tool), those whose title and headings match `aspect` (the question's other words), best first."""
        return [s for s in self.ranked(aspect, len(self.sources))
                if thing and set(thing) <= self.words[s] | self.words.get(parent.get(s, ""), frozenset())]


class Mentions(DocumentWords):
    """BM25 over each document's whole text (its chunks' searchable text: title and text): which documents speak of
    a question's words anywhere, not in one chunk (a tool a page names in one line of its command summary, a
    footnote naming it). Its counts are the index's own, summed per document (`IndexBackend.document_words`)."""

    def __init__(self, index: Any) -> None:
        super().__init__(*index.document_words())

    def ranked(self, tokens: Sequence[str], k: int) -> list[str]:
        """Returns the `k` documents whose whole text best matches the question's distinctive words: those at most
        half of the documents hold (a page holding only its common words, files or package, speaks of no topic)."""
        return super().ranked([t for t in tokens if self.bm25.counts(t) is not None and not self.common(t)], k)

    def common(self, token: str) -> bool:
        """Returns whether more than half of the documents hold `token` (Debian in the Debian FAQ): a corpus's
        common word names no topic of its own."""
        held = self.bm25.counts(token)
        return held is not None and len(held[0]) > len(self.sources) / 2


mentions: PerObject[Mentions] = PerObject(Mentions)
"""Returns the whole-text table of an index, rebuilt when the index changes."""
headings: PerObject[Headings] = PerObject(Headings)
"""Returns the heading table of an index, rebuilt when the index changes."""


def section_number(source: str) -> tuple[int, ...] | None:
    """Returns the section number a file name starts with ('15.01-x.md' → (15, 1)), else None."""
    m = NUMBERED.match(PurePosixPath(source).name)
    return tuple(int(p) for p in m.group(1).split(".")) if m else None


class Outline:
    """The corpus's own outline, where its file names are numbered: a chapter page (15.00-…) and the sections
    under it (15.01-…, 15.02-…), which are about the chapter's topic whatever words they use. A chapter in which
    two files hold one number (an appendix numbered as the chapter before it) is no outline: its files join none."""

    def __init__(self, index: Any) -> None:
        self.titles = {str(m.get("source") or ""): str(m.get("title") or "") for m in index.documents().values()}
        sources = sorted(set(self.titles) - {""})
        numbers = {s: n for s in sources if (n := section_number(s))}
        held = Counter(numbers.values())
        broken = {n[:-1] for n, count in held.items() if count > 1 and len(n) > 1}   # two files numbered 09.01
        numbers = {s: n for s, n in numbers.items() if n[:-1] not in broken}
        pages = {n[:-1]: s for s, n in numbers.items() if len(n) > 1 and n[-1] == 0}   # 15.00 heads chapter 15
        self.sections: dict[str, list[str]] = defaultdict(list)
        self.chapters: dict[tuple[int, ...], list[str]] = defaultdict(list)
        self.chapter: dict[str, tuple[int, ...]] = {}
        self.page: dict[str, str] = {}
        for s, n in numbers.items():
            if len(n) > 1 and n[-1] != 0:
                self.chapters[n[:-1]].append(s)
                self.chapter[s] = n[:-1]
                if n[:-1] in pages:
                    self.sections[pages[n[:-1]]].append(s)
                    self.page[s] = pages[n[:-1]]
        self.head = {self.chapter[sections[0]]: page for page, sections in self.sections.items()}

    def long(self, doc: str, most: int = LONG) -> bool:
        """Returns whether `doc` is a section of a chapter of more than `most` files."""
        return doc in self.chapter and len(self.files(self.chapter[doc])) > most

    def files(self, chapter: tuple[int, ...]) -> list[str]:
        """Returns the files of `chapter`: its page, if it has one, then its sections in the outline's order."""
        return ([self.head[chapter]] if chapter in self.head else []) + sorted(self.chapters.get(chapter, []))

    def asked(self, titled: Sequence[str], plain: Sequence[str], named: Any, top: int = KEPT) -> list[tuple[int, ...]]:
        """Returns the chapters a survey question asks about as a whole, short ones (page and sections fit in the
        survey's `COVER` places): the one whose page is the first document of `titled` (the question's words match
        its title best) when no other chapter's page is the second (Massif's and DHAT's chapters for "which tools
        profile the heap": a survey across chapters), and those holding most of the first `top` documents of
        `plain` whose page's title the question names (`named(title)`: it holds every word of it; Massif's chapter
        held most of them in that survey too)."""
        held = Counter(c for d in plain[:top] if (c := self.chapter_of(d)) is not None)
        pages = [d in self.sections for d in titled[:2]]
        chosen = [self.chapter_of(titled[0])] if pages[:1] == [True] and True not in pages[1:] else []
        chosen += [c for c, n in held.items() if n > top // 2 and c in self.head and named(self.titles[self.head[c]])]
        return [c for c in dict.fromkeys(chosen) if c is not None and len(self.files(c)) <= COVER]

    def chapter_of(self, doc: str) -> tuple[int, ...] | None:
        """Returns the chapter `doc` heads or is a section of, else None."""
        return self.chapter.get(doc) or (self.chapter[self.sections[doc][0]] if doc in self.sections else None)

    def sections_by(self, page: str, ranking: Sequence[str]) -> list[str]:
        """Returns the sections under chapter page `page`, those `ranking` holds first in its order, then the rest
        in the outline's."""
        return ranked_first(self.sections.get(page, []), ranking)

    def siblings(self, ranking: Sequence[str], top: int = SIBLINGS_TOP, least: int = SIBLINGS_LEAST) -> list[str]:
        """Returns the sections of the chapters holding at least `least` of the first `top` documents of `ranking`
        (most held first), each chapter's in `ranking`'s order, then the rest in the outline's."""
        held: dict[tuple[int, ...], int] = {}
        for doc in ranking[:top]:
            if doc in self.chapter:
                held[self.chapter[doc]] = held.get(self.chapter[doc], 0) + 1
        chosen = sorted((c for c, n in held.items() if n >= least), key=lambda c: -held[c])
        return [d for c in chosen for d in ranked_first(self.chapters[c], ranking)]


def ranked_first(sections: Sequence[str], ranking: Sequence[str]) -> list[str]:
    """Returns `sections`, those `ranking` holds first in its order, then the rest in their own order."""
    place = {d: i for i, d in enumerate(ranking)}
    return [d for _, d in sorted(enumerate(sections), key=lambda p: (place.get(p[1], len(place)), p[0]))]


outline: PerObject[Outline] = PerObject(Outline)
"""Returns the outline of an index (its numbered chapters), rebuilt when the index changes."""


def listed_things(query: str) -> list[str]:
    """Returns the things a survey question lists (two or more, each at most `MAX_ITEM` characters), else none."""
    start = LIST_START.search(query)
    tail = query[start.end():] if start else query
    spans = start is not None and start.group(0).lower() in ("from", "从")
    parts = [p.strip(" ?？。.!！\"'“”") for part in LISTED.split(tail)
             for p in (SPANNED.split(part) if spans else [part])]
    if not start and len(parts) > 2:
        parts[0], parts[-1] = clause_end(parts[0], -1), clause_end(parts[-1], 0)
    parts = [p for p in parts if 1 < len(p) <= MAX_ITEM and not ASKED.match(p)]
    return parts if len(parts) >= 2 else []


def clause_end(part: str, end: int) -> str:
    """Returns the name at the `end` (0: first, -1: last) of `part` when `part` is a clause longer than a listed
    thing ("… written by Cachegrind", the first of "Cachegrind, Massif and the BBV tool"), else `part`."""
    words = part.split()
    return words[end] if len(part) > MAX_ITEM and words and PROPER.search(words[end]) else part


def named_list(backend: Any, query: str) -> tuple[list[str], str]:
    """Returns the things the question lists and its other words, or no things when none is a name (`NAME`) that
    at most half of the documents hold: clauses naming only the corpus's own subject ("总结一下 Debian 系统升级、保持最新
    状态…" in the Debian FAQ) list no things, and searched alone they led with pages on neither."""
    things = listed_things(query)
    table = mentions(backend)
    if not any(NAME.search(w) and not table.common(w) for t in things for w in backend.tokenizer(t)):
        return [], query
    rest = query
    for thing in things:
        rest = rest.replace(thing, " ")
    return things, rest


def listed_documents(backend: Any, query: str, user: Any) -> list[str]:
    """Returns, round-robin, the best documents of each thing the question lists, each searched with the question's
    other words (BM25: a listed name is a word of the text); none when no listed thing is a name (`named_list`)."""
    things, rest = named_list(backend, query)
    found = [list(dict.fromkeys(c.source for c, _ in backend.bm25(f"{thing} {rest}", 10, user=user)))[:2]
             for thing in things]
    return list(dict.fromkeys(d for rank in range(2) for docs in found if rank < len(docs) for d in [docs[rank]]))


def titled_documents(backend: Any, query: str) -> list[str]:
    """Returns, for each proper name the question lists (`PROPER`), the document whose title or headings name it and
    best match the question's other words (`Headings.naming`), in the list's order."""
    things, rest = named_list(backend, query)
    table = headings(backend)
    found = [table.naming(backend.tokenizer(thing), backend.tokenizer(rest), outline(backend).page)[:1]
             for thing in things if PROPER.search(thing)]
    return list(dict.fromkeys(d for docs in found for d in docs))


def topic_words(backend: Any, query: str) -> list[str]:
    """Returns the question's words that some document's title or headings hold: the names of the topics it asks
    about (lintian, upload), whose mentions anywhere in a page tie the page to them, not its other words (guide,
    handled), which any page may say."""
    named = headings(backend).vocabulary
    return [t for t in backend.tokenizer(query) if t in named]


def fused_documents(*rankings: tuple[Sequence[str], float], k: int = RRF_K) -> list[str]:
    """Returns the documents of several (ranking, weight) pairs ordered by weighted reciprocal-rank fusion (ties:
    first seen first)."""
    score: dict[str, float] = {}
    for ranking, weight in rankings:
        for i, doc in enumerate(dict.fromkeys(ranking)):
            score[doc] = score.get(doc, 0.0) + weight / (k + i + 1)
    return sorted(score, key=lambda d: -score[d])


PLAIN = {"skills": {"rerank": {"enabled": False}}, "patterns": {"hybrid_search": {"weights": {"bm25": 1.0, "dense": 1.0}}}}
"""The plain ranking's hybrid retrieval: BM25 and dense fused by z-scores of equal weight, not reranked."""
HYBRID = {"skills": {"rerank": {"enabled": False}}}
"""hybrid_search's own ranking (its default z-score weights), whose first documents the survey keeps (kept_first):
the equal-weight ranking put another document fourth in place of hybrid's, and the survey lost hybrid's answer."""


def with_dense(settings: Mapping[str, Any], dense: bool) -> dict[str, Any]:
    """Returns `settings` with the dense retriever on when the index has vectors."""
    return {**settings, "skills": {**settings["skills"], "embedding": {"enabled": dense}}}


def plain_rankings(ctx: Any, query: str, user: Any) -> tuple[tuple[Hit, ...], tuple[Hit, ...], list[str]]:
    """Returns the question's equal-weight ranking (`PLAIN`), hybrid_search's own (`HYBRID`), at most `LEAD`
    chunks each, and its documents as wholes (`document_ranking`): its words as asked, without learned synonyms, in
    a trace of their own. One retrieval feeds all three (patterns.hybrid_search.retrieve, then each setting's fusion
    without the learned boost): the first two differ only in the fusion's weights."""
    backend = ctx.resource("index")
    plan = RetrievalPlan(bm25_top_k=LEAD, dense_top_k=LEAD, fused_top_k=LEAD)
    own = replace(ctx, trace=Trace(), resources={k: v for k, v in ctx.resources.items() if k != "synonyms"})
    found = retrieve(with_dense(PLAIN, backend.has_dense)).run(State.of(query, user=user, plan=plan), own)
    plain, hybrid = (fuse(with_dense(s, backend.has_dense), "hybrid_search", learned=False).run(found, own).hits
                     for s in (PLAIN, HYBRID))
    return plain, hybrid, document_ranking(found.candidates)


def document_ranking(candidates: Sequence[RankedList]) -> list[str]:
    """Returns the documents of the retrievers' chunk rankings by how well they match as wholes: per retriever, the
    mean of each document's best `BEST` chunk scores, standardised over its documents (one it did not return counting
    as its lowest), summed over the retrievers (ties: first seen first). A page whose sections answer the question
    together ranks above one that a single chunk matches."""
    means = []
    for ranked in candidates:
        found: dict[str, list[float]] = defaultdict(list)
        for h in ranked.hits:
            found[h.source].append(h.scores.get(ranked.retriever, h.score))
        means.append({d: float(np.mean(sorted(v, reverse=True)[:BEST])) for d, v in found.items()})
    total: dict[str, float] = {d: 0.0 for m in means for d in m}
    for m in (m for m in means if m):
        values = np.array(list(m.values()))
        spread = values.std() if values.std() > 1e-12 else 1.0
        for d in total:
            total[d] += (m.get(d, values.min()) - values.mean()) / spread
    return sorted(total, key=lambda d: -total[d])


def best_chunk(backend: Any, source: str, queries: Sequence[str], user: Any) -> Hit | None:
    """Returns the chunk of `source` that the first of `queries` matching any of its chunks matches best (the
    question, then the document's title: a chapter's section may share no word with the question), else None."""
    for words in (q for q in queries if q):
        found = to_hits(backend.bm25(words, 1, user=user, filters={"source": source}), "headings")
        if found:
            return found[0]
    return None


def kept_first(order: Sequence[str], plain: Sequence[str], named: Sequence[str], support: Mapping[str, int],
               window: int = KEPT) -> list[str]:
    """Returns `order` with what holds stronger evidence than a fused rank put among its first `window` documents:
    each document the question names (`named`: its headings name a listed thing, titled_documents, or its title and
    headings match the question's topic best and another match ranking holds it), in place of any there but
    `plain`'s first and the named, and each of `plain`'s first `window` that `order` pushed out, in place of one that
    is none of these and that fewer of the question's match rankings (`support`: headings, whole text, listed and
    named things, a chapter asked as a whole) hold, or none. The weakest gives way (the survey's own additions before
    `plain`'s, then the fewest rankings, the later on a tie) and follows the window: a survey adds to plain retrieval
    and subtracts only for stronger evidence, never for the outline's (a chapter's sibling sections) or the fused
    rank alone."""
    top, moved, own = list(order[:window]), [], set(plain[:window])

    def put(doc: str, kept: set[str], weaker: Any) -> None:
        places = [i for i, d in enumerate(top) if d not in kept and weaker(d)]
        if places:
            at = min(places, key=lambda i: (top[i] in own, support.get(top[i], 0), -i))
            moved.append(top[at])
            top[at] = doc

    for doc in (d for d in named if d not in top):
        put(doc, {*plain[:1], *named}, lambda d: True)
    for doc in sorted((d for d in plain[:window] if d not in top), key=lambda d: -support.get(d, 0)):
        put(doc, {*plain[:window], *named}, lambda d, doc=doc: support.get(d, 0) < max(support.get(doc, 0), 1))
    return list(dict.fromkeys([*top, *moved, *order[window:]]))


def arbitrated(order: Sequence[str], plain: Sequence[str], wholes: Sequence[str], fixed: set[str],
               window: int = KEPT) -> list[str]:
    """Returns `order` with its first `window` places filled from its own first `window` documents and `plain`'s:
    those of `fixed` first, then the best of the rest by `wholes` (document_ranking), in the order `order` then
    `plain` gives them; the rest of `order` follows. An addition not in `fixed` (a long chapter's sibling section)
    keeps a place of plain retrieval's only when its chunks match the question better as a whole than the page it
    displaces: the chapter's two sections among the first five are no evidence that a third is on the topic."""
    place = {d: i for i, d in enumerate(wholes)}
    pool = list(dict.fromkeys([*order[:window], *plain[:window]]))
    chosen = [d for d in pool if d in fixed][:window]
    chosen += sorted((d for d in pool if d not in chosen), key=lambda d: place.get(d, len(place)))[:window - len(chosen)]
    return list(dict.fromkeys([*(d for d in pool if d in chosen), *order]))


def plain_order(order: Sequence[str], plain: Sequence[str], window: int = KEPT) -> list[str]:
    """Returns `order` with the documents of `plain`'s first `window` that its own first `window` hold put in `plain`'s
    order, in the places they hold: a survey adds to plain retrieval's pages without reordering them (a page
    `kept_first` puts back lands in the place of the addition it displaces, which may be ahead of a better one)."""
    top, firsts = list(order[:window]), list(plain[:window])
    places = [i for i, d in enumerate(top) if d in firsts]
    for i, d in zip(places, sorted((top[i] for i in places), key=firsts.index)):
        top[i] = d
    return [*top, *order[window:]]


def whole_chapters(order: Sequence[str], chapters: Sequence[Sequence[str]], ranking: Sequence[str]) -> list[str]:
    """Returns `order` with the files of each of `chapters` (each a chapter's files) right after the first of them
    `order` holds, those `ranking` (the survey's fused ranking) holds first in its order, then the rest in the
    outline's: a chapter the question asks about as a whole answers it with every section, whatever words each uses
    (a chapter's tools for checking a package: debc, debdiff, interdiff and mc say "check" nowhere)."""
    out: list[str] = []
    for doc in order:
        out.append(doc)
        for files in (f for f in chapters if doc in f):
            out += ranked_first(files, ranking)
    return list(dict.fromkeys(out))


def topic_of(query: str) -> str:
    """Returns the question without the words naming the documents it is asked of (`ITSELF`), or the question when
    nothing else is left."""
    topic = " ".join(ITSELF.sub(" ", query).split())
    return topic if topic.strip(" ?？.。,，'s") else query


@dataclass(frozen=True)
class Surveyed:
    """The document rankings a survey orders (`surveyed`), each a tuple of sources, best first: what `survey_order`
    reads and all it reads, so bench/survey_replay.py can record them once per question and replay rules on them."""

    plain: tuple[str, ...]
    """The plain ranking's documents (`PLAIN`), its first kept first."""
    hybrid: tuple[str, ...]
    """hybrid_search's own ranking's documents (`HYBRID`), whose first five keep their places (kept_first)."""
    wholes: tuple[str, ...]
    """The documents as wholes (`document_ranking`), which arbitrate a long chapter's additions."""
    titled: tuple[str, ...]
    """The heading ranking of the question's topic (`Headings`)."""
    listed: tuple[str, ...]
    """The listed things' best documents (`listed_documents`)."""
    mentions: tuple[str, ...]
    """The whole-text ranking of the topic's words (`Mentions`)."""
    named: tuple[str, ...]
    """The documents whose headings name a listed proper name (`titled_documents`)."""
    near: tuple[str, ...]
    """The sections of the first fusion's chapter pages (`Outline.sections_by`)."""
    siblings: tuple[str, ...]
    """The sibling sections of the chapters the plain ranking's first documents share (`Outline.siblings`)."""
    long: tuple[str, ...]
    """Those of `siblings` in a long chapter (`Outline.long`)."""
    asked: tuple[tuple[str, ...], ...]
    """The files of each chapter the question asks about as a whole (`Outline.asked`)."""

    def to_dict(self) -> dict[str, Any]:
        """Returns the rankings as lists, JSON-able."""
        return {f.name: [list(c) if isinstance(c, tuple) else c for c in getattr(self, f.name)] for f in fields(self)}

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> "Surveyed":
        """Returns the rankings `to_dict` wrote."""
        return cls(**{f.name: tuple(tuple(c) if isinstance(c, list) else c for c in data[f.name]) for f in fields(cls)})


def surveyed(ctx: Any, query: str, user: Any) -> tuple[Surveyed, tuple[Hit, ...]]:
    """Returns the rankings a survey of `query` orders and the plain ranking's chunks. The rankings that say what a
    document is about (its headings, its whole text, listed and named things) search the question's topic
    (`topic_of`)."""
    backend = ctx.resource("index")
    topic = topic_of(query)
    plain, by_hybrid, wholes = plain_rankings(ctx, query, user)
    docs = list(dict.fromkeys(h.source for h in plain))
    titled = headings(backend).ranked(backend.tokenizer(topic), COVER)
    listed = listed_documents(backend, topic, user)
    named = titled_documents(backend, topic)
    said = mentions(backend).ranked(topic_words(backend, topic), COVER)
    table = outline(backend)
    rankings = [(docs, 1.0), *zip((titled, listed, said, named), (HEADINGS_WEIGHT, 1.0, MENTIONS_WEIGHT, NAMED_WEIGHT))]
    near = [d for seed in fused_documents(*rankings)[:SEEDS] for d in table.sections_by(seed, docs)]
    siblings = table.siblings(docs)
    asked = set(backend.tokenizer(query))
    whole = table.asked(titled, docs, lambda title: set(backend.tokenizer(title)) <= asked)
    found = Surveyed(plain=tuple(docs), hybrid=tuple(dict.fromkeys(h.source for h in by_hybrid)), wholes=tuple(wholes),
                     titled=tuple(titled), listed=tuple(listed), mentions=tuple(said), named=tuple(named),
                     near=tuple(near), siblings=tuple(siblings), long=tuple(d for d in siblings if table.long(d)),
                     asked=tuple(tuple(table.files(c)) for c in whole))
    return found, plain


def survey_order(found: Surveyed) -> list[str]:
    """Returns the survey's documents, best first (module docstring): the plain ranking's first, then the fusion of
    the match rankings with the outline's, each asked chapter whole, plain retrieval's first five kept unless a
    named document or stronger support displaces them, a long chapter's additions arbitrated by the whole-document
    ranking, hybrid's pages in hybrid's order."""
    plain, hybrid = list(found.plain), list(found.hybrid)
    matched = [list(found.titled), list(found.listed), list(found.mentions), list(found.named)]
    rankings = [(plain, 1.0), *zip(matched, (HEADINGS_WEIGHT, 1.0, MENTIONS_WEIGHT, NAMED_WEIGHT))]
    fused = fused_documents(*rankings, (found.near, SECTIONS_WEIGHT), (found.siblings, SIBLINGS_WEIGHT))
    support = Counter(d for ranking in matched for d in set(ranking[:COVER]))
    support.update(d for files in found.asked for d in files)  # the question names the chapter's title
    first = plain[:1]  # the plain ranking's first document keeps its place: a survey adds, never subtracts
    ranked = list(dict.fromkeys([*first, *fused]))
    order = list(dict.fromkeys([*first, *fused][:COVER]))
    order = whole_chapters(order, found.asked, ranked)[:len(order)]
    # and the page whose title and headings match the topic best, when another match ranking holds it too
    about = list(dict.fromkeys([*found.named, *(d for d in found.titled[:1] if support[d] > 1)]))
    kept = kept_first(order, hybrid, about, support)
    chance = set(found.long) - set(hybrid[:KEPT])
    fixed = {*kept[:1], *hybrid[:1], *about, *(d for d in kept[:KEPT] if d not in chance)}
    return plain_order(arbitrated(kept, hybrid, found.wholes, fixed), hybrid)


def covering(ctx: Any, query: str, hits: Sequence[Hit], user: Any) -> tuple[Hit, ...]:
    """Returns the best chunk of each of the first `COVER` documents about the question (`survey_order` of what
    `surveyed` finds), then the plain ranking, then `hits`, each chunk once."""
    backend = ctx.resource("index")
    found, plain = surveyed(ctx, query, user)
    titles = outline(backend).titles
    best: dict[str, Hit] = {}
    for h in plain:
        best.setdefault(h.source, h)
    leads = []
    for source in survey_order(found):
        if source not in best:
            found_chunk = best_chunk(backend, source, (query, titles.get(source, "")), user)
            if found_chunk is None:
                continue  # the user may not read it, or none of its chunks holds a word of the question or title
            best[source] = found_chunk
        leads.append(best[source])
    unique: dict[str, Hit] = {}
    for h in (*leads, *plain, *hits):
        unique.setdefault(h.chunk_id, h)
    order = list(unique.values())
    return tuple(h.model_copy(update={"score": float(len(order) - i)}) for i, h in enumerate(order))
