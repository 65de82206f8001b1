"""Statute ranks by title and path, and survey searches: statutes named by a question's topics, statutes matching a
question as a whole and by their purpose article, weighed by specificity and one per listed area when the question
asks for a kind (see kinds).

A survey question (森林、草原、矿产、土地这些自然资源是怎么依法管理的？) is answered by
several laws, each named by one of its topics; one ranking tends to return
five chunks of whichever law matches best. `topic_hits` adds, for each topic
word, the best chunk of the statute whose title carries it; `document_hits`
adds the statutes most of whose best articles match the question (a field's
laws rarely carry its name: 知识产权 → 专利法, 商标法, 著作权法). The pack's
survey terms (routes) run them.

Tuned on the dev half of bench/data/routing only; bench/results/routing.json holds
what it measures on both halves.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Any, Mapping, Optional, Sequence

from lambdarag.skills.dense import query_vector
from lambdarag.skills.fusion import zscore
from lambdarag.skills.sentences import keywords
from lambdarag.skills.sides import interleave
from lambdarag.skills.store.corpus import to_hits
from lambdarag.skills.store.derived import PerObject
from lambdarag.skills.store.records import Hit, RankedList
from lambdarag.skills.temporal import LATEST, current_versions

from .kinds import LAWS, SURVEY_LEAD, asked_kinds, title_rank, topic_text
from .names import statute_names
from .repeal import repeals, unrepealed

GENERIC_TOPICS = frozenset("法律 法规 规定 制度 体系 管理 保护 相关 领域 法律制度 立法 依法 规章 条例 哪些 有关 权益 监管 "
                           "保障 依据 概况 概述 汇总 梳理 总结 国家".split())


SPECIFIC = 16
"""A topic word found in more titles than this is too common to name a statute."""


LIST = re.compile(r"[^，,。？?！!：:；;]*、[^，,。？?！!：:；;]*")
"""A clause listing things with 、 (银行、证券、保险的监管)."""
FIELD_ARTICLES = 5
"""A listed word names the law whose articles mention it most when at least this many do."""
DOMINANT = 2
"""…and at least this many times as many as any other law does."""
FIELD_CANDIDATES = 300
"""Chunks searched by BM25 for a listed word, to count per law how many of its articles mention it."""
PURPOSE = "第一条"
"""The section of a statute that states its purpose (为了…，制定本法)."""
HUB_POWER = 0.25
"""How much a document's specificity weighs on a survey not confined to laws (0: not at all)."""
HUB_SMOOTHING = 20
"""Chunks added to every document's size, so that a document of a few chunks is not specific by its size alone."""


def rank_of(hit: Hit) -> int:
    """Returns 0 for a statute (法律), 1 for a lower-ranked instrument (条例, 办法, 司法解释, …), by its title."""
    return title_rank(hit.title or "")


def source_rank(source: str) -> int:
    """Returns 0 for a law's document (审计法), 1 for a regulation's, measure's or interpretation's (…办法, …条例)."""
    name = source.rsplit("/", 1)[-1].split("(")[0]
    return int(not (name.endswith("法") and not name.endswith("办法")))


def titled_by(word: str, titles: Sequence[Any], specific: int = SPECIFIC) -> Optional[Any]:
    """Returns the statute a topic word names by title, or None: laws first, then the shortest title.

    Laws go before the instruments below them (电影 → 电影产业促进法, not the
    shorter 电影管理条例: a survey is answered by laws), then shorter titles
    first (森林 → 森林法 before 森林法实施条例). A word in more than `specific`
    titles names none (管理, 船舶).
    """
    titled = [t for t in titles if word in t.title]
    if not titled or len(titled) > specific:
        return None
    return min(titled, key=lambda t: (title_rank(t.title), len(t.title), t.title))


def listed_words(query: str) -> list[str]:
    """Returns the topic words of the things a question lists with 、, in order: 空气、水、土壤、垃圾污染 → 空气 土壤 垃圾.

    Of a list's first item only its last word is listed (农业的种子、化肥 → 种子),
    of its last item only its first (…、养殖，… / …、保险的监管 → 保险); words of one
    character carry no topic.
    """
    words: list[str] = []
    for clause in LIST.findall(query):
        items = [keywords(item) for item in clause.split("、")]
        words += [*items[0][-1:], *(w for item in items[1:-1] for w in item), *items[-1][:1]]
    return list(dict.fromkeys(words))


def listed_statutes(names: Any, query: str, listed: Sequence[str], limit: int) -> list[tuple[str, str]]:
    """Returns (family, source) of the statutes the question names among the things it lists, in order of mention.

    A listed thing is often a statute's short name, stem or contraction
    (村委会、居委会 → 村民委员会组织法, 城市居民委员会组织法; 农机 → 农业机械化促进法),
    which no single title word finds; the compare resolver does
    (skills.statutes). Only names that are, or hold, a listed word count: the
    rest of the question names no statute it surveys (怎么立法的 is not 立法法).
    """
    if not listed:
        return []
    return [(side.family, side.source) for side in names.named(query, limit=limit, loose=True)
            if any(word in side.name or side.name in word for word in listed)]


def field_law(backend: Any, word: str, user: Any = None, least: int = FIELD_ARTICLES) -> Optional[Hit]:
    """Returns the best chunk of the law whose articles mention `word` most, if at least `least` do, else None.

    A listed thing no law is titled by is usually the field of one law all
    the same, which names it article after article (垃圾 → 固体废物污染环境防治法,
    幼儿园 → 学前教育法); a word that no law mentions `DOMINANT` times as often
    as any other law (工资: 公务员法 11 articles, 劳动法 7) names none. Versions of one law count its articles once; the newest version's chunk
    stands for it (a survey reads the law in force).
    """
    found = [h for h in to_hits(backend.bm25(word, FIELD_CANDIDATES, user=user), "field")
             if not rank_of(h) and word in h.text]
    articles: dict[str, set[str]] = {}
    for h in found:
        articles.setdefault(h.title or h.source, set()).add(h.section or h.chunk_id)
    if not articles:
        return None
    counts = sorted(((len(sections), title) for title, sections in articles.items()), reverse=True)
    (most, title), runner_up = counts[0], (counts[1][0] if len(counts) > 1 else 0)
    if most < least or most < DOMINANT * runner_up:
        return None
    return max((h for h in found if (h.title or h.source) == title), key=lambda h: (h.date or "", h.score))


def topic_hits(backend: Any, query: str, hits: Sequence[Hit], user: Any, limit: int, specific: int) -> tuple[Hit, ...]:
    """Returns `hits` with, for each topic of the question, the best chunk of the statute it names alternating in front.

    Statutes named among the things the question lists come first
    (listed_statutes); then each topic word names the statute whose (newest)
    title contains it, laws before lower instruments, then the shortest title
    (titled_by: 森林 → 森林法 before 森林法实施条例; a word in the titles of more
    than `specific` statutes, 船舶 or 管理, names none); a listed word no law is
    titled by, or a word only regulations are, names the law whose articles
    keep mentioning it (field_law). At most `limit` statutes are added.
    """
    names = statute_names(backend)
    query = topic_text(query)
    chosen: dict[str, Optional[str]] = {}  # family → source to search, or None when field_law found its chunk
    fields: dict[str, Hit] = {}
    listed = listed_words(query)
    for family, source in listed_statutes(names, query, listed, limit):
        chosen.setdefault(family, source)
    for word in keywords(query):
        if word in GENERIC_TOPICS or len(chosen) >= limit:
            continue
        named = titled_by(word, names.titles, specific)
        # a field no law is titled by goes to the law that keeps naming it, before a regulation's title; of
        # words naming no title at all, only listed ones are fields (分别, 来管 are not)
        field = field_law(backend, word, user) \
            if (named is None and word in listed) or (named is not None and title_rank(named.title)) else None
        if field is not None:
            family = field.family or field.title or field.source
            if family not in chosen:
                chosen[family], fields[family] = None, field
        elif named is not None:
            chosen.setdefault(named.family, named.source)
    found = [(to_hits(backend.bm25(query, 1, user=user, filters={"source": source}), "topic")
              if source else (fields[family],)) for family, source in chosen.items()]
    # alternate with the question's ranking: a title word is a strong hint, not a certainty
    topical = tuple(h for f in found for h in f)
    return interleave([topical, hits], hits, len(topical))


def by_document(hits: Sequence[Hit], depth: int = 3, statutes_only: bool = True,
                sizes: Optional[Mapping[str, int]] = None) -> tuple[Hit, ...]:
    """Returns each document's best chunk scored by the sum of its `depth` best chunk scores, best document first.

    A document that matches a topic in many articles outranks one that matches
    it once; versions of a statute share its title and count as one document.
    With `sizes` (source → its number of chunks), each score is weighed by how
    specific the document is to the question (see specificity).
    """
    chunks: dict[str, list[Hit]] = {}
    for h in hits:
        if not (statutes_only and rank_of(h)):
            chunks.setdefault(h.title or h.source, []).append(h)
    total = {key: sum(sorted((h.score for h in own), reverse=True)[:depth])
             * (specificity(len(own), sizes.get(own[0].source, len(own))) if sizes else 1.0)
             for key, own in chunks.items()}
    return tuple(chunks[key][0].model_copy(update={"score": total[key]})
                 for key in sorted(chunks, key=lambda key: -total[key]))


def specificity(found: int, size: int) -> float:
    """Returns how specific a document is to a question: the smoothed share of its chunks that the question found,
    to the power `HUB_POWER`. A long general law (a hub) matches every survey in a few of its hundreds of articles.
    A regulation on the topic matches in many of its few."""
    return ((found + 1) / (size + HUB_SMOOTHING)) ** HUB_POWER


def by_match_and_purpose(found: Sequence[Hit], purposes: Sequence[Hit], depth: int = 3, statutes_only: bool = True,
                         sizes: Optional[Mapping[str, int]] = None) -> tuple[Hit, ...]:
    """Returns each statute's best chunk, statutes ordered by z-scores of how they match as a whole plus their purpose.

    `found` ranks statutes by their `depth` best chunks (see by_document),
    `purposes` by their purpose article (第一条: 为了…，制定本法), which says in
    one sentence what field the whole law governs; the two are standardised and
    added (skills.fusion.zscore), a statute missing from one list counting as
    its last. A statute found only by its purpose is represented by that article.
    """
    whole = by_document(found, depth, statutes_only, sizes)
    best = {h.title or h.source: h for h in whole}
    purpose = tuple(best.get(h.title or h.source, h).model_copy(update={"score": h.score})
                    for h in by_document(purposes, 1, statutes_only))
    return zscore([RankedList(retriever="whole", query="", hits=whole),
                   RankedList(retriever="purpose", query="", hits=purpose)])


def area_first(documents: Sequence[Hit], found: Sequence[Hit], areas: Sequence[str]) -> tuple[Hit, ...]:
    """Returns `documents` with, for each listed area in order, the best-ranked one whose found chunks mention it ahead.

    A survey that lists areas (船舶污染、陆源污染、海洋倾废) is answered by one
    document per area; a ranking of whole documents tends to give the first
    area several. An area no found chunk mentions, or whose documents are all
    taken, adds none.
    """
    texts: dict[str, list[str]] = {}
    for h in found:
        texts.setdefault(h.title or h.source, []).append(h.text)
    chosen: list[Hit] = []
    for area in areas:
        match = next((d for d in documents if d not in chosen
                      and any(area in text for text in texts.get(d.title or d.source, ()))), None)
        if match is not None:
            chosen.append(match)
    return (*chosen, *(d for d in documents if d not in chosen))


_sizes: PerObject[dict[str, int]] = PerObject(lambda index: dict(Counter(c.source for c in index.chunks())))
"""Returns source → number of chunks of an index, counted once per index version."""


def document_hits(ctx: Any, query: str, hits: Sequence[Hit], user: Any, time_range: Any, k: int, depth: int,
                  purposes: int) -> tuple[Hit, ...]:
    """Returns `hits` with the statutes that match the question as a whole, in their current version, ahead.

    Searches `k` chunks and `purposes` purpose articles densely (BM25 on an
    index without vectors), keeps the versions in force when the question is
    dated, else the newest (see skills.temporal.current_versions), of statutes not repealed then (repeal), ranks
    statutes by by_match_and_purpose and puts each one's best chunk ahead of
    the question's chunk ranking: on the dev half of bench/data/routing the
    chunk ranking alone finds fewer of a survey's statutes than either
    document ranking (bench/results/routing.json). A question that asks for
    a kind below the laws (kinds.asked_kinds) ranks every kind, each weighed by
    its specificity, and a listed area's best document goes first (area_first);
    one that names no kind ranks every kind by specificity too, laws ahead by
    `SURVEY_LEAD` (laws_lead); one asking for laws ranks laws only, its areas
    being the topics topic_hits finds laws for.
    """
    backend = ctx.resource("index")
    vector = query_vector(ctx, query) if backend.has_dense else None

    def current(n: int, filters=None) -> tuple[Hit, ...]:
        found = backend.dense(vector, n, user=user, filters=filters) if vector is not None \
            else backend.bm25(query, n, user=user, filters=filters)
        return unrepealed(current_versions(backend, to_hits(found, "document"), time_range), time_range or LATEST,
                          repeals(backend))

    found, asked = current(k), asked_kinds(query)
    laws = asked == LAWS
    documents = by_match_and_purpose(found, current(purposes, {"section": PURPOSE}), depth, statutes_only=laws,
                                     sizes=None if laws or not HUB_POWER else _sizes(backend))
    if not asked:
        documents = laws_lead(documents)
    elif not laws:
        documents = area_first(documents, found, listed_words(topic_text(query)))
    return interleave([documents], hits, len(documents))


def laws_lead(documents: Sequence[Hit]) -> tuple[Hit, ...]:
    """Returns documents ranked by their score with `SURVEY_LEAD` added to every law's: a survey naming no kind is
    answered by laws first, unless a regulation or interpretation matches it clearly better."""
    return tuple(sorted(documents, key=lambda h: -(h.score + (0.0 if rank_of(h) else SURVEY_LEAD))))
