"""Lexical retrieval: the `bm25_search` skill over the index's BM25 (`skills.store.bm25`), with learned synonyms."""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from lambdarag import Context, Count, User, tool
from .store.records import Candidates, CandidatesOut, RankedList, RetrievalPlan

from .registry import skill
from .store.corpus import to_hits


def expand_tokens(tokens: Sequence[str], synonyms: Mapping[str, Sequence[str]], per_term: int = 2) -> list[str]:
    """Returns the BM25 query tokens with up to `per_term` learned synonyms of each token appended."""
    extra = [s for t in tokens for s in list(synonyms.get(t, ()))[:per_term] if s not in tokens]
    return list(tokens) + list(dict.fromkeys(extra))


@skill
@tool(effect="io")
def bm25_search(query: str, user: User, plan: RetrievalPlan, ctx: Context, candidates: Candidates = (), *,
                top_k: Optional[Count] = None, filters: Optional[Mapping[str, Any]] = None) -> CandidatesOut:
    """Appends the BM25 ranking of `query` to `candidates`.

    Takes `plan.bm25_top_k` hits (`top_k` overrides) and keeps only chunks
    the user may read; `filters` maps chunk fields to allowed values.
    Learned synonyms (`ctx.resources["synonyms"]`, term → [synonyms]) are
    appended to the query's tokens. `candidates` is an optional read: an
    accumulator that starts empty, so a pipeline may start with this term.
    """
    backend = ctx.resource("index")
    synonyms = ctx.resources.get("synonyms")
    tokens = expand_tokens(backend.tokenizer(query), synonyms) if synonyms else query
    found = backend.bm25(tokens, int(top_k or plan.bm25_top_k), user=user, filters=dict(filters or {}))
    ranked = RankedList(retriever="bm25", query=query, hits=to_hits(found, "bm25"))
    return {"candidates": candidates + (ranked,)}
