"""The `learned_boost` skill: fused hits re-ranked with what the index learned from confirmed questions."""
from __future__ import annotations

from typing import Any, Mapping

from lambdarag import Term, Tool

from .dense import query_vector
from .registry import skill
from .store.corpus import to_hits
from .store.learned import LearnedIndex, rank, score_matrix


def learned_signals(learned: LearnedIndex, state: Any, ctx: Any, filters: Mapping[str, Any]) -> Any:
    """Returns the signals of `learned` for the state's query (None when the gate stays closed).

    Every chunk a signal names passes the same permission and metadata checks
    as an index search, so a confirmation never makes a chunk reachable to a
    user who may not read it.
    """
    vector = query_vector(ctx, state.query)
    near = learned.nearest(vector)
    if not learned.opened(near):
        return None
    backend = ctx.resource("index")
    tokens = backend.tokenizer(state.query)
    signals = {"neighbours": learned.neighbour_scores(near, vector), "expansion": learned.expansion_scores(tokens),
               "prior": learned.prior_scores([h.chunk_id for h in state.hits])}
    expanded = learned.expand(tokens)
    if expanded:
        found = backend.bm25(expanded, state.plan.bm25_top_k, user=state.user, filters=filters)
        signals["terms"] = {c.id: s for c, s in found}
    for name in ("neighbours", "expansion", "prior"):
        signals[name] = {c: s for c, s in signals[name].items() if readable(backend, c, state.user, filters)}
    return signals


def readable(backend: Any, chunk_id: str, user: Any, filters: Mapping[str, Any]) -> bool:
    """Returns whether `user` may see the chunk and it passes `filters` (an unknown chunk is not readable)."""
    try:
        c = backend.chunk(chunk_id)
    except KeyError:
        return False
    if not user.may_read(c.department, c.security_level):
        return False
    for name, value in filters.items():
        allowed = value if isinstance(value, (list, tuple, set, frozenset)) else [value]
        if getattr(c, name) not in allowed:
            return False
    return True


@skill("learned_boost")
def learned_boost(config: Mapping[str, Any]) -> Term:
    """Returns a term re-ranking `hits` by the learned signals of `ctx.resources["learned"]` (see skills.store.learned).

    Without a learned index, or when the query's nearest past question is below
    the fitted gate, the hits pass through unchanged — the same ranking as
    without learning. Keeps `plan.fused_top_k` hits; config `filters` as in
    `bm25_search`.
    """
    filters = dict(config.get("filters") or {})

    def run(state, ctx):
        learned = ctx.resources.get("learned")
        if learned is None or learned.empty:
            return {"hits": state.hits}
        signals = learned_signals(learned, state, ctx, filters)
        if signals is None:
            return {"hits": state.hits}
        ids, matrix = score_matrix([(h.chunk_id, h.score) for h in state.hits], signals)
        order = rank(ids, matrix, learned.params.vector())[:state.plan.fused_top_k]
        have = {h.chunk_id: h for h in state.hits}
        backend = ctx.resource("index")
        out = []
        for cid, score in order:
            hit = have.get(cid) or to_hits([(backend.chunk(cid), 0.0)], "learned")[0]
            learned_scores = {n: round(v[cid], 6) for n, v in signals.items() if cid in v}
            out.append(hit.model_copy(update={"score": score, "scores": {**hit.scores, **learned_scores}}))
        return {"hits": tuple(out)}

    return Tool("learned_boost", run, reads=["query", "user", "plan", "hits"], writes=["hits"], effect="io")
