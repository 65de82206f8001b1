"""A survey question on documents of no known field is answered by the documents *about* its topic, one each first.

Plain retrieval ranks chunks, so five chunks of the one best-matching page
can fill a survey's first places while the other pages about the topic wait
further down. A page is about a topic when its content matches the question
(the plain hybrid ranking: BM25 and dense, z-score fused) and its title and
headings do too (`Headings`: BM25 over each document's title and heading
lines). The two document rankings are fused by reciprocal rank, so a page
both match goes ahead of one only its text matches; the plain ranking's first
document keeps the first place, then each of the first `COVER` documents of
the fusion leads with its best chunk, then the plain ranking follows,
then the route's own hits (wiki pages, graph-expanded and rewritten queries).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Sequence

from skills.dense import query_vector
from skills.fusion import zscore
from skills.store.bm25 import Bm25Index
from skills.store.corpus import to_hits
from skills.store.derived import PerObject
from skills.store.records import Hit, RankedList

LEAD = 50
"""Chunks of the plain ranking that go ahead of the route's hits."""
COVER = 10
"""Documents of the fused document ranking that lead with their best chunk (the survey's recall@10)."""
RRF_K = 60
"""The reciprocal-rank constant fusing the content and the heading rankings of documents."""


class Headings:
    """BM25 over each document's title and heading lines: which documents are about a question's words."""

    def __init__(self, index: Any) -> None:
        lines: dict[str, dict[str, None]] = defaultdict(dict)
        for meta in index.documents().values():
            lines[str(meta.get("source") or "")][str(meta.get("title") or "")] = None
        for chunk in index.chunks():
            for heading in (chunk.section or "").split(" / "):
                lines[chunk.source][heading] = None
        self.sources = [s for s in lines if s]
        self.bm25 = Bm25Index()
        self.bm25.add([index.tokenizer(" ".join(lines[s])) for s in self.sources])

    def ranked(self, tokens: Sequence[str], k: int) -> list[str]:
        """Returns the sources of the `k` documents whose title and headings best match `tokens` (a score above 0)."""
        if not tokens or not self.sources:
            return []
        rows, scores = self.bm25.top(list(tokens), k)
        return [self.sources[int(r)] for r, s in zip(rows, scores) if s > 0]


headings: PerObject[Headings] = PerObject(Headings)
"""Returns the heading table of an index, rebuilt when the index changes."""


def fused_documents(*rankings: Sequence[str], k: int = RRF_K) -> list[str]:
    """Returns the documents of several rankings ordered by reciprocal-rank fusion (ties: first seen first)."""
    score: dict[str, float] = {}
    for ranking in rankings:
        for i, doc in enumerate(dict.fromkeys(ranking)):
            score[doc] = score.get(doc, 0.0) + 1.0 / (k + i + 1)
    return sorted(score, key=lambda d: -score[d])


def plain_ranking(ctx: Any, state: Any) -> tuple[Hit, ...]:
    """Returns the question's hybrid ranking (BM25 and dense, z-score fused), at most `LEAD` chunks."""
    backend = ctx.resource("index")
    lists = [RankedList(retriever="bm25", query=state.query,
                        hits=to_hits(backend.bm25(state.query, LEAD, user=state.user), "bm25"))]
    if backend.has_dense:
        found = backend.dense(query_vector(ctx, state.query), LEAD, user=state.user)
        lists.append(RankedList(retriever="dense", query=state.query, hits=to_hits(found, "dense")))
    return tuple(zscore(lists, top=LEAD) if len(lists) > 1 else lists[0].hits)


def covering(ctx: Any, state: Any) -> tuple[Hit, ...]:
    """Returns the best chunk of each of the first `COVER` documents about the question (module docstring), then the
    plain ranking, then `state.hits`, each chunk once."""
    backend = ctx.resource("index")
    plain = plain_ranking(ctx, state)
    best: dict[str, Hit] = {}
    for h in plain:
        best.setdefault(h.source, h)
    titled = headings(backend).ranked(backend.tokenizer(state.query), COVER)
    leads = []
    first = list(best)[:1]  # the plain ranking's first document keeps its place: a survey adds, never subtracts
    for source in dict.fromkeys([*first, *fused_documents(list(best), titled)][:COVER]):
        if source not in best:
            found = to_hits(backend.bm25(state.query, 1, user=state.user, filters={"source": source}), "headings")
            if not found:
                continue  # the user may not read it, or none of its chunks holds a word of the question
            best[source] = found[0]
        leads.append(best[source])
    unique: dict[str, Hit] = {}
    for h in (*leads, *plain, *state.hits):
        unique.setdefault(h.chunk_id, h)
    order = list(unique.values())
    return tuple(h.model_copy(update={"score": float(len(order) - i)}) for i, h in enumerate(order))
