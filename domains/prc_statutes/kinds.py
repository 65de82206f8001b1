"""Kinds of statute documents (law, regulation, judicial interpretation) and the kinds a question asks for.

A question that names a kind (有哪些司法解释…, 哪些行政法规…, 船舶登记条例…, 相关规定) is answered by
documents of that kind, not by the laws that the law-first prior would put ahead of them. The folder a
document is filed in (司法解释, 行政法规) gives its kind reliably. The title suffix does not: 管理规则
is a regulation, and 海关关衔条例 is a law.
"""
from __future__ import annotations

import re
from typing import Any, Callable, FrozenSet, Optional, Sequence

LOWER_RANKS = re.compile(r"(条例|办法|规定|细则|解释|意见|批复|通知|答复|规范|决定)$|^(最高人民法院|最高人民检察院|国务院关于)")
"""Titles of instruments below a statute (法律): regulations, rules and judicial interpretations."""
LAW, REGULATION, INTERPRETATION = "law", "regulation", "interpretation"
FOLDERS = {"司法解释": INTERPRETATION, "行政法规": REGULATION, "部门规章": REGULATION}
"""Folders of the corpus that hold one kind below the laws; every other folder holds laws."""
INTERPRETATION_TITLE = re.compile(r"^(最高人民法院|最高人民检察院)|(解释|批复|答复)(（[一二三四五六七八九十]+）)?$")
RULES_TITLE = re.compile(r"规则$")
ASKS: tuple[tuple[re.Pattern[str], FrozenSet[str]], ...] = (
    (re.compile(r"司法解释"), frozenset({INTERPRETATION})),
    (re.compile(r"行政法规|条例|办法|细则|规则"), frozenset({REGULATION})),
    (re.compile(r"(?<!行政)法规(?!定)"), frozenset({LAW, REGULATION})),     # 公司法规定 names no 法规
    (re.compile(r"法律(?!适用|责任|效力|关系|援助|服务|文书|顾问|地位|后果)|立法|(?:什么|哪部|哪些)法(?!规)"),
     frozenset({LAW})),
)
"""(cue, kinds it asks for): 法规 alone is laws and regulations; 法律适用 or 法律责任 names no kind."""
ANY_KIND = re.compile(r"(?<!法律)规定")
"""A question asking for 规定 and naming no kind asks for provisions of any kind, which turns the law-first prior off;
after 法律 it asks for laws (有哪些法律规定)."""
LAWS = frozenset({LAW})
SURVEY_LEAD = 1.0
"""Points of z-score a law is worth on a survey that names no kind, ahead of how well each document matches as a
whole. Of 0, 1, 2, 3 and laws first outright, 0 and 1 kept every dev fact question of bench/data/maritime routed to a
survey by mistake in its top 5 (2: 0.83 and 0.88, laws first: 0.17 and 0.25), and 1 lost fewer of the laws dev
facts (0.77 against 0.69); no dev survey changed (bench/results/routing-statute-variants.json)."""
STAND_BACK = 3
"""Places a document below the laws stands back in each round of a survey naming no kind: 2 and 3 measured alike; 5
lost maritime dev facts routed as surveys (0.83 and 0.88 found), and behind every law (the old sort) found none
(the same file)."""
LEAD = 4.0
"""Points of fused score a better prior is worth behind the best-matching document: of 0, 2, 4 and an absolute sort,
the least that kept every dev answer of bench/data/routing and bench/data/maritime (2 left 劳动法 behind seven
regulations; bench/results/routing-statute-variants.json)."""
NEAR_TIE = 2.0
"""Points of fused score within which a document of a better prior may take the best-matching one's first place: of
0, 0.5, 1, 1.5, 2 and 3, the least that kept the laws dev half's fact nDCG@5
(bench/results/routing-statute-variants.json)."""
BEST_PLACE = 3
"""The lowest place the best-matching document may fall to when a near-tie of a better prior takes the first: 2 and
3 found every dev fact, no bound lost one of maritime dev2 (a regulation five laws within `LEAD` pushed out of the
top 5), and 2 cost the laws dev facts' nDCG@5 (0.943 → 0.923; bench/results/routing-statute-variants.json)."""
KIND_WORDS = re.compile(r"司法解释|行政法规|法规|规章")
"""Words that name a kind and no topic: 行政法规 is not about 行政."""


def title_rank(title: str) -> int:
    """Returns 0 for a statute's title (森林法), 1 for a lower-ranked instrument's (森林法实施条例, 最高人民法院关于…)."""
    return int(bool(LOWER_RANKS.search(title)))


def document_kind(source: str, title: str) -> str:
    """Returns the kind of a document: by the folder its `source` is filed in, else by its title."""
    folder = source.split("/", 1)[0] if "/" in source else ""
    if folder:
        return FOLDERS.get(folder, LAW)
    if INTERPRETATION_TITLE.search(title):
        return INTERPRETATION
    return REGULATION if title_rank(title) or RULES_TITLE.search(title) else LAW


def asked_kinds(query: str) -> FrozenSet[str]:
    """Returns the kinds of document a question names (司法解释 → interpretations; 规定 alone → every kind); empty
    when it names none."""
    asked = frozenset(kind for cue, kinds in ASKS if cue.search(query) for kind in kinds)
    return asked or (frozenset({LAW, REGULATION, INTERPRETATION}) if ANY_KIND.search(query) else asked)


def prior(query: str) -> Callable[[Any], int]:
    """Returns a hit's prior rank for a question: 0 for the kinds it asks for and 1 for the rest, else laws 0 and
    the instruments below them 1 (a question that names no kind, or asks for laws, is answered by a law first)."""
    asked = asked_kinds(query)
    if asked <= LAWS:
        return lambda hit: title_rank(hit.title or "")
    return lambda hit: int(document_kind(hit.source, hit.title or "") not in asked)


def stand_back(query: str) -> Optional[int]:
    """Returns how many places a document of a worse `prior` stands back in a survey's round: none when the question
    names a kind (it asked for those: they go first), else `STAND_BACK` (laws lead, a regulation that matches better
    is not buried behind every law)."""
    return None if asked_kinds(query) else STAND_BACK


def topic_text(query: str) -> str:
    """Returns the question without the words that name a kind, for reading its topics."""
    return KIND_WORDS.sub(" ", query)


def order_ahead(hits: Sequence[Any], query: str, short: Callable[[str], str]) -> list:
    """Returns the hits of a ranking's first documents with the best-matching one kept first and, behind it, the
    documents of a better `prior` ahead by `LEAD` points of score.

    A fact is answered by the document that matches it best, whatever its
    kind (a regulation's article, not a law that mentions the topic); the
    prior only orders what follows, and takes first place only from a
    near-tie (`NEAR_TIE`); the best-matching one then falls no lower than
    `BEST_PLACE` (laws within `LEAD` must not bury it). A document the
    question names by its `short` title counts as of the best prior. Each hit is weighed by the score of the
    place it holds, so a version standing in for its document keeps that
    document's score.
    """
    if not hits:
        return []
    rank = prior(query)
    places = sorted((h.score for h in hits), reverse=True)
    better = [not rank(h) or short(h.title or "") in query for h in hits]
    tied = [i for i in range(len(hits)) if better[i] and places[0] - places[i] <= NEAR_TIE]
    first = 0 if better[0] or not tied else tied[0]
    rest = sorted((i for i in range(len(hits)) if i != first),
                  key=lambda i: (-(places[i] + (LEAD if better[i] else 0.0)), i))
    if first and rest.index(0) > BEST_PLACE - 2:      # the best match, displaced from first place, stays near it
        rest.remove(0)
        rest.insert(BEST_PLACE - 2, 0)
    return [hits[first], *(hits[i] for i in rest)]
