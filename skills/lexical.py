"""Lexical retrieval: the `bm25_search` skill over the index's BM25 (`skills.store.bm25`), with learned synonyms."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from lambdarag import Term, Tool
from .store.records import RankedList

from .registry import skill
from .store.corpus import to_hits


def expand_tokens(tokens: Sequence[str], synonyms: Mapping[str, Sequence[str]], per_term: int = 2) -> list[str]:
    """Returns the BM25 query tokens with up to `per_term` learned synonyms of each token appended."""
    extra = [s for t in tokens for s in list(synonyms.get(t, ()))[:per_term] if s not in tokens]
    return list(tokens) + list(dict.fromkeys(extra))


def _top_k(state: Any, config: Mapping[str, Any], plan_field: str) -> int:
    return int(config.get("top_k") or getattr(state.plan, plan_field))


@skill
def bm25_search(config: Mapping[str, Any]) -> Term:
    """Returns a term appending the BM25 ranking of `query` to `candidates`.

    Reads `plan.bm25_top_k` (config `top_k` overrides) and keeps only chunks
    the user may read; config `filters` maps chunk fields to allowed values.
    Learned synonyms (`ctx.resources["synonyms"]`, term → [synonyms]) are
    appended to the query's tokens.
    `candidates` is an optional read: an accumulator whose initial value is
    empty, so a pipeline may start with this term.
    """
    filters = dict(config.get("filters") or {})

    def run(state, ctx):
        backend = ctx.resource("index")
        synonyms = ctx.resources.get("synonyms")
        query = expand_tokens(backend.tokenizer(state.query), synonyms) if synonyms else state.query
        found = backend.bm25(query, _top_k(state, config, "bm25_top_k"), user=state.user, filters=filters)
        ranked = RankedList(retriever="bm25", query=state.query, hits=to_hits(found, "bm25"))
        return {"candidates": state.candidates + (ranked,)}

    return Tool("bm25_search", run, reads=["query", "user", "plan"], optional=["candidates"],
                writes=["candidates"], effect="io")
