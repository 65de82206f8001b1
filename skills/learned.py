"""The `learned_boost` skill: fused hits re-ranked with what the index learned from confirmed questions."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from lambdarag import Context, User, tool

from .dense import query_vector
from .fusion import DEFAULT_ZSCORE_WEIGHTS
from .registry import skill
from .store.corpus import to_hits
from .store.learned import GATE_SIGNALS, SIGNALS, LearnedIndex, Nearest, arrange, gate_features, score_matrix
from .store.records import Candidates, Hits, HitsOut, RetrievalPlan
from .store.tail_model import TAIL_SIGNALS


def learned_signals(learned: LearnedIndex, backend: Any, tokens: Sequence[str], vector: Any, near: Nearest,
                    fused: Mapping[str, str], user: User, filters: Mapping[str, Any], depth: int,
                    names: Sequence[str] = SIGNALS, lexical: Optional[Mapping[str, float]] = None,
                    may_read: Optional[Callable[[str], bool]] = None) -> dict[str, dict]:
    """Returns the signals `names` of `learned` for a query, `tokens` its index tokens (gate not applied): chunk →
    raw score per signal name.

    Every chunk a signal names passes the same permission and metadata checks
    as an index search, so a confirmation never makes a chunk reachable to a
    user who may not read it (nor lends its family to "families"). `fused` are
    the chunks already retrieved, with their families (prior and families rank
    only those); `depth` is the term-mapped BM25 search's;
    `lexical` is the unlearned BM25 list (chunk → score) the fused list came from
    ("field" needs it); `may_read` is the question's `reader` when the caller has one.
    """
    may_read = may_read or reader(backend, user, filters)
    signals = {}
    if "neighbours" in names:
        signals["neighbours"] = learned.neighbour_scores(near, vector)
    if "expansion" in names:
        signals["expansion"] = learned.expansion_scores(tokens)
    if "prior" in names:
        signals["prior"] = learned.prior_scores(list(fused))
    if "families" in names:
        signals["families"] = learned.family_scores(near, fused, may_read)
    if "field" in names:
        signals["field"] = learned.field_scores(backend, tokens, lexical or {}, DEFAULT_ZSCORE_WEIGHTS["bm25"])
    for name, values in signals.items():
        signals[name] = {c: s for c, s in values.items() if may_read(c)}
    expanded = learned.expand(tokens) if "terms" in names else None
    if expanded:
        signals["terms"] = {c.id: s for c, s in backend.bm25(expanded, depth, user=user, filters=filters)}
    return signals


def gated_signals(learned: LearnedIndex, backend: Any, query: str, vector: Any, base: Sequence[tuple[str, float]],
                  families: Mapping[str, str], user: User, filters: Mapping[str, Any], depth: int,
                  lexical: Optional[Mapping[str, float]] = None) -> Optional[tuple[dict[str, dict], bool, bool]]:
    """Returns the signals the ranking needs, whether the gate opens for this query and whether the tail acts
    (`LearnedIndex.tailed`), or None (rank unchanged).

    `base` is the unlearned ranking (chunk id, fused score) retrieved for `user` under `filters`, best first, with
    `families` (chunk id → `Chunk.family`), and `lexical` the BM25 list it was fused from (chunk → score). The
    gate reads only the `GATE_SIGNALS` (past the cosine floor, and only once
    a gain model is fitted), so the others (the term-mapped BM25 search costs
    most) are computed only for the weights that apply — the head's once the
    gate opens, the tail's (`LearnedParams.tail`) past its floor — and only when
    non-zero: a signal of weight 0 cannot move the ranking (the tail model,
    when fitted, reads all of `TAIL_SIGNALS`). The learned
    candidates (`LearnedIndex.candidate_scores`) join them only past both cosine floors.
    """
    if learned.empty:
        return None
    p = learned.params
    near = learned.nearest(vector)
    opened, tailed = learned.opened(near), learned.tailed(near)
    if not opened and not tailed:
        return None
    fused = {c: families.get(c, "") for c, _ in base}
    args = (learned, backend, backend.tokenizer(query), vector, near, fused, user, filters, depth)
    may_read = reader(backend, user, filters, fused, learned.checked(user, filters))
    modelled = opened and bool(p.gate_weights)
    signals = learned_signals(*args, names=GATE_SIGNALS if modelled else ("neighbours",), lexical=lexical,
                              may_read=may_read)
    if modelled:
        features = gate_features(near, signals["neighbours"], base, learned.pairs[near.rows[0]].chunks,
                                 score_matrix(base, signals)[1])
        opened = learned.admits(features)
    if not opened and not tailed:
        return None
    read = dict.fromkeys(TAIL_SIGNALS, 1.0) if p.tail_model is not None else p.tail   # what the tail model reads
    used = ((read,) if tailed else ()) + ((p.weights,) if opened else ())
    signals = {n: v for n, v in signals.items() if n == "neighbours" or any(w.get(n, 0.0) for w in used)}
    weighed = [n for n in SIGNALS if n not in signals and n != "neighbours" and any(w.get(n, 0.0) for w in used)]
    signals.update(learned_signals(*args, names=weighed, lexical=lexical, may_read=may_read))
    if not (learned.opened(near) and tailed):     # far from every confirmed question: no learned candidates
        return signals, opened, tailed
    return with_candidates(signals, learned.candidate_scores(vector, near, fused, may_read)), opened, tailed


def with_candidates(signals: Mapping[str, Mapping[str, float]], candidates: Mapping[str, Mapping[str, float]]
                    ) -> dict[str, dict]:
    """Returns `signals` with the learned candidates (`LearnedIndex.candidate_scores`) of each signal they hold
    added: a chunk a signal already scores keeps that score."""
    return {n: {**candidates.get(n, {}), **v} for n, v in signals.items()}


def lexical_list(candidates: Sequence[Any], query: str) -> dict[str, float]:
    """Returns chunk → score of the BM25 list of `query` among `candidates` (empty when none was retrieved)."""
    found = next((c for c in candidates if c.retriever == "bm25" and c.query == query), None)
    return {h.chunk_id: h.score for h in found.hits} if found else {}


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


def reader(backend: Any, user: Any, filters: Mapping[str, Any], retrieved: Iterable[str] = (),
           checked: Optional[dict[str, bool]] = None) -> Callable[[str], bool]:
    """Returns chunk id → `readable` for one question, each chunk checked once (the signals name many alike, and
    an opened index reads each chunk from its store); the `retrieved` chunks, which the question's own search
    returned under the same user and filters, are readable unchecked; `checked` holds (and gains) the answers
    for readers alike (`LearnedIndex.checked`), shared across their questions."""
    known = dict.fromkeys(retrieved, True)
    checked = {} if checked is None else checked

    def may_read(chunk_id: str) -> bool:
        if chunk_id in known:
            return known[chunk_id]
        if chunk_id not in checked:
            checked[chunk_id] = readable(backend, chunk_id, user, filters)
        return checked[chunk_id]
    return may_read


def hits_unboosted(query, user, plan, hits, ctx, candidates=(), *, filters=None):
    """Passes `hits` through unchanged (`learned_boost`'s fallback, with its contract)."""
    return {"hits": hits}


@skill
@tool(effect="io", fallback=hits_unboosted)
def learned_boost(query: str, user: User, plan: RetrievalPlan, hits: Hits, ctx: Context, candidates: Candidates = (),
                  *, filters: Optional[Mapping[str, Any]] = None) -> HitsOut:
    """Re-ranks `hits` by the learned signals of `ctx.resources["learned"]` (see skills.store.learned).

    Without a learned index the hits pass through unchanged; when the fitted
    gate stays closed (no close past question, or too little predicted gain)
    the top `HEAD` hits stay exactly the unlearned ones and only the fitted
    tail re-ranks the candidates after them (`arrange`), so past questions can
    widen recall but never displace the top of the list. The hits pass through
    unchanged, visibly in the trace, when the embedding endpoint fails
    (fallback `hits_unboosted`).
    Keeps `plan.fused_top_k` hits; `filters` as in `bm25_search`.
    """
    learned = ctx.resources.get("learned")
    if learned is None or learned.empty:
        return {"hits": hits}
    backend = ctx.resource("index")
    base = [(h.chunk_id, h.score) for h in hits]
    vector, filters = query_vector(ctx, query), dict(filters or {})
    gated = gated_signals(learned, backend, query, vector, base, {h.chunk_id: h.family for h in hits}, user, filters,
                          plan.bm25_top_k, lexical_list(candidates, query))
    if gated is None:
        return {"hits": hits}
    signals, opened, tailed = gated
    ids, matrix = score_matrix(base, signals)
    params = learned.params
    if opened and params.agreement_boost > 0:
        params = learned.head_params(vector, reader(backend, user, filters, (h.chunk_id for h in hits),
                                                    learned.checked(user, filters)))
    params = params if tailed else replace(params, tail={})
    order = arrange(base, ids, matrix, params, opened)[:plan.fused_top_k]
    have = {h.chunk_id: h for h in hits}
    out = []
    for cid, score in order:
        hit = have.get(cid) or to_hits([(backend.chunk(cid), 0.0)], "learned")[0]
        learned_scores = {n: round(v[cid], 6) for n, v in signals.items() if cid in v}
        out.append(hit.updated({"score": score, "scores": {**hit.scores, **learned_scores}}))
    return {"hits": tuple(out)}
