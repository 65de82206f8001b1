"""`side_search`: retrieval inside each statute a question names, with every side guaranteed a place in the evidence.

A comparison of two laws answered from one ranking often gets five chunks of
the better-matching law and none of the other. Here each named side (see
`skills.statutes`) is searched on its own, restricted to its document, once
per compared aspect (see `skills.aspects`), and the sides' best chunks are
interleaved ahead of the question's own ranking.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from lambdarag import Term, Tool
from .store.records import Hit

from .aspects import aspects_of
from .store.corpus import to_hits
from .registry import skill
from .statutes import Side, aspect_query


def side_ranking(backend: Any, side: Side, aspect: str, user: Any, k: int) -> tuple[Hit, ...]:
    """Returns one side's chunks for the aspect: BM25 inside its document.

    Lexical only: within one statute the aspect's cue words (主管, 罚款, 适用本法)
    pick the article, and a filtered approximate dense search over the whole
    index is slow and misses rows when the filter keeps a few hundred of them.
    """
    return to_hits(backend.bm25(aspect, k, user=user, filters={"source": side.source}), "bm25")


def interleave(per_side: Sequence[Sequence[Hit]], rest: Sequence[Hit], take: int) -> tuple[Hit, ...]:
    """Returns the sides' first `take` hits round-robin, then `rest`, each chunk once, scored by final rank."""
    order: list[Hit] = []
    seen: set[str] = set()
    for rank in range(take):
        for hits in per_side:
            if rank < len(hits) and hits[rank].chunk_id not in seen:
                seen.add(hits[rank].chunk_id)
                order.append(hits[rank].model_copy(update={"ranks": {**hits[rank].ranks, "side": rank + 1}}))
    order += [h for h in rest if h.chunk_id not in seen]
    n = len(order)
    return tuple(h.model_copy(update={"score": float(n - i)}) for i, h in enumerate(order))


@skill("side_search")
def side_search(config: Mapping[str, Any]) -> Term:
    """Returns a term putting each named side's best chunk per compared aspect ahead of `hits`.

    Reads `sides` (from `name_statutes`); with no side it keeps `hits` as
    they are. One side (仲裁法里的仲裁跟劳动争议仲裁…, where only 仲裁法 resolves) still
    goes first: the other side's words tend to dominate the ranking and push
    out the one statute the question names. Config `per_side` (default 1) is
    how many chunks per side and aspect go first.
    """
    take, k = int(config.get("per_side", 1)), int(config.get("top_k", 8))

    def run(state, ctx):
        if not state.sides:
            return {"hits": state.hits}
        backend = ctx.resource("index")
        asked = aspect_query(state.query, state.sides)
        ranked = [side_ranking(backend, side, f"{asked} {' '.join(cues)}", state.user, k)
                  for _, cues in aspects_of(state.query) for side in state.sides]
        return {"hits": interleave(ranked, state.hits, take)}

    return Tool("side_search", run, reads=["query", "sides", "hits", "user"], writes=["hits"], effect="io")


def named_first(hits: Sequence[Hit], sides: Sequence[Side]) -> tuple[Hit, ...]:
    """Returns `hits` with the chunks of the named statutes first (each group keeps its order), scored by final rank."""
    named = {side.source for side in sides}
    order = [h for h in hits if h.source in named] + [h for h in hits if h.source not in named]
    return tuple(h.model_copy(update={"score": float(len(order) - i)}) for i, h in enumerate(order))


@skill("named_first")
def named_first_skill(config: Mapping[str, Any]) -> Term:
    """Returns a term moving the chunks of the statutes the question names (`sides`) to the front of `hits`.

    A question about one statute (船舶登记条例由哪个部门主管？) is answered from that
    statute before any other that happens to match its words.
    """
    return Tool("named_first", lambda state: {"hits": named_first(state.hits, state.sides)},
                reads=["hits", "sides"], writes=["hits"], effect="pure")
