"""Evidence that spans documents: the statutes whose titles name the question's topics, and per-document caps.

A survey question (森林、草原、矿产、土地这些自然资源是怎么依法管理的？) is answered by
several laws, each named by one of its topics; one ranking tends to return
five chunks of whichever law matches best. `topic_search` adds, for each topic
word, the best chunk of the statute whose title carries it; `diversify` then
orders hits so that the first ones come from different documents.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from lambdarag import Term, Tool
from .store.records import Hit

from .store.corpus import to_hits
from .registry import skill
from .sentences import keywords
from .sides import interleave
from .statutes import statute_names

GENERIC_TOPICS = frozenset("法律 法规 规定 制度 体系 管理 保护 相关 领域 法律制度 立法 依法 规章 条例 哪些 有关 权益 监管 "
                           "保障 依据 概况 概述 汇总 梳理 总结 国家".split())


SPECIFIC = 16
"""A topic word found in more titles than this is too common to name a statute."""


def per_document(hits: Sequence[Hit], cap: int = 1) -> tuple[Hit, ...]:
    """Returns `hits` reordered so that each document's first `cap` chunks come before any document's next ones."""
    rounds: list[list[Hit]] = []
    seen: dict[str, int] = {}
    for h in hits:
        n = seen.get(h.source, 0)
        seen[h.source] = n + 1
        while len(rounds) <= n // cap:
            rounds.append([])
        rounds[n // cap].append(h)
    ordered = [h for r in rounds for h in r]
    return tuple(h.model_copy(update={"score": float(len(ordered) - i)}) for i, h in enumerate(ordered))


@skill("diversify")
def diversify(config: Mapping[str, Any]) -> Term:
    """Returns a term ordering `hits` so the first ones span documents (config `cap`: chunks per document per round)."""
    cap = int(config.get("cap", 1))
    return Tool("diversify", lambda state: {"hits": per_document(state.hits, cap)}, reads=["hits"], writes=["hits"],
                effect="pure")


@skill("topic_search")
def topic_search(config: Mapping[str, Any]) -> Term:
    """Returns a term putting, for each topic word of the question, the best chunk of a statute titled by it first.

    A topic names a statute when the statute's (newest) title contains the
    word; the shortest such title wins (森林 → 森林法 before 森林法实施条例). A
    word in the titles of more than `specific` statutes (船舶, 管理) names none.
    At most `limit` statutes (default 6) are added, alternating with `hits`.
    """
    limit, specific = int(config.get("limit", 6)), int(config.get("specific", SPECIFIC))

    def run(state, ctx):
        backend = ctx.resource("index")
        names = statute_names(backend)
        chosen: dict[str, str] = {}
        for word in keywords(state.query):
            if word in GENERIC_TOPICS or len(chosen) >= limit:
                continue
            titled = sorted((t for t in names.titles if word in t.title), key=lambda t: (len(t.title), t.title))
            if titled and len(titled) <= specific and titled[0].family not in chosen:
                chosen[titled[0].family] = titled[0].source
        found = [f for f in (to_hits(backend.bm25(state.query, 1, user=state.user, filters={"source": source}), "topic")
                             for source in chosen.values()) if f]
        # alternate with the question's ranking: a title word is a strong hint, not a certainty
        topical = tuple(h for f in found for h in f)
        return {"hits": interleave([topical, state.hits], state.hits, len(topical))}

    return Tool("topic_search", run, reads=["query", "hits", "user"], writes=["hits"], effect="io")
