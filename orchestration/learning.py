"""The learned retrieval of an index, built from its confirmations: build, open lazily, fit, confirm.

Confirmations (question → chunk ids, with provenance) live in
`orchestration.feedback.confirmations`. `open_learned` builds the
`skills.store.learned.LearnedIndex` of the live pairs lazily, once per change of
those files; the `learned_boost` skill reads it as ``ctx.resources["learned"]``.
Reverting an item removes its pairs, so the next query ranks exactly as before
the item was added (the fitted params stay). `fit` chooses the signal weights
and the gate by cross-validation over the confirmed questions.
"""
from __future__ import annotations

import itertools
import threading
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

import numpy as np

from lambdarag import Par, State, Term, appended
from skills.store.records import RetrievalPlan
from lambdarag.state import PUBLIC
from lambdarag.errors import LambdaRAGError
from skills import build as build_skill
from skills.learned import learned_signals
from skills.store.learned import SIGNALS, LearnedIndex, LearnedParams, Nearest, Pair, score_matrix

from .feedback.confirmations import Confirmations

FIT_DEPTH = 100
GRID = {"neighbours": (0.0, 1.0, 2.0, 4.0, 8.0), "expansion": (0.0, 1.0, 2.0), "terms": (0.0, 1.0, 2.0, 4.0),
        "prior": (0.0, 1.0, 2.0, 4.0)}
NEIGHBOURING = ((5, 10.0), (5, 30.0), (20, 10.0), (20, 30.0))
"""(neighbours, sharpness) settings tried: few close neighbours or many with a soft fall-off."""
GATE_QUANTILES = np.linspace(0.0, 0.95, 20)
UNSEEN_LOSS = 0.005
"""The most nDCG@10 the gate may give up, on average, on held-out questions whose chunks were never confirmed."""


def retrieval_term(kind: str, learned: bool = True) -> Term:
    """Returns the retrieval of `eval --retriever KIND`: one retriever or both, fused by score, then learned_boost.

    Without `learned`, bm25 and dense return their own list unfused (read it from
    ``candidates[-1]``); with it, the list is fused (a single list keeps its order)
    so the learned boost can re-rank it.
    """
    one = {"bm25": "bm25_search", "dense": "embedding_search"}
    if kind in one:
        term = build_skill(one[kind])
        return term >> build_skill("score_fusion") >> build_skill("learned_boost") if learned else term
    both = Par(build_skill("bm25_search"), build_skill("embedding_search"), merge=appended("candidates")) \
        >> build_skill("score_fusion")
    return both >> build_skill("learned_boost") if learned else both


class CorpusView:
    """What learning needs from an index: document or chunk id → chunk ids, and the term map over its BM25."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.rows: dict[str, list[int]] = {}
        self.ids = [c.id for c in backend.chunks()]
        for i, c in enumerate(backend.chunks()):
            self.rows.setdefault(c.id, []).append(i)
            if c.doc_id != c.id:
                self.rows.setdefault(c.doc_id, []).append(i)

    def chunk_ids(self, ids: Iterable[str]) -> tuple[str, ...]:
        """Returns the chunk ids that document or chunk ids name (unknown ids are dropped)."""
        return tuple(dict.fromkeys(self.ids[i] for r in ids for i in self.rows.get(r, ())))

    def term_map(self, pairs: Sequence[Pair]) -> dict[str, list[str]]:
        """Returns layperson word → statute words learned from the positive pairs (`SynonymLearner`)."""
        from .feedback import qrels_pairs, synonym_learner

        positive = [(p.query, p.chunks) for p in pairs if p.weight > 0]
        if not positive:
            return {}
        learned = synonym_learner(self.backend).learn(qrels_pairs(self.backend, positive))
        return {t: list(alts) for t, alts in learned.items()}


def build_learned(view: CorpusView, pairs: Sequence[Pair], vectors: np.ndarray, params: LearnedParams
                  ) -> LearnedIndex:
    """Returns the learned index of `pairs` (with their question vectors, in order) over `view`'s index."""
    tok = view.backend.tokenizer
    return LearnedIndex(pairs, vectors, [tok(p.query) for p in pairs], view.term_map(pairs), params)


_LOCK = threading.Lock()
_OPEN: dict[str, tuple[tuple, Optional[LearnedIndex]]] = {}
_VIEWS: dict[tuple[int, int], CorpusView] = {}


def corpus_view(backend: Any) -> CorpusView:
    """Returns the (cached) view of an index at its current version."""
    key = (id(backend), getattr(backend, "version", 0))
    if key not in _VIEWS:
        _VIEWS.clear()
        _VIEWS[key] = CorpusView(backend)
    return _VIEWS[key]


def open_learned(directory: Path, backend: Any, embedder: Any) -> Optional[LearnedIndex]:
    """Returns the learned index of an index's feedback folder (None when nothing is confirmed), rebuilt on change."""
    conf = Confirmations(directory)
    stamp = (id(backend), getattr(backend, "version", 0), conf.stamp())
    with _LOCK:
        cached = _OPEN.get(str(directory))
        if cached is not None and cached[0] == stamp:
            return cached[1]
        pairs = conf.pairs()
        learned = None
        if pairs:
            learned = build_learned(corpus_view(backend), pairs, conf.vectors(embedder, [p.query for p in pairs]),
                                    conf.params())
        _OPEN[str(directory)] = (stamp, learned)
        return learned


# -- fitting -----------------------------------------------------------------------------------------------

def base_ranking(backend: Any, embedder: Any, depth: int = FIT_DEPTH) -> Callable[[str], list[tuple[str, float]]]:
    """Returns query → the unlearned hybrid ranking [(chunk id, fused score)] that `eval --retriever hybrid` uses."""
    from lambdarag import Context

    term = retrieval_term("hybrid", learned=False)
    plan = RetrievalPlan(bm25_top_k=depth, dense_top_k=depth, fused_top_k=depth)
    ctx = Context(embedder=embedder, resources={"index": backend})

    def ranking(query: str) -> list[tuple[str, float]]:
        return [(h.chunk_id, h.score) for h in term.run(State.of(query, plan=plan), ctx).hits]
    return ranking


def ndcg10(ranked: Sequence[str], relevant: set[str]) -> float:
    """Returns binary nDCG@10."""
    gain = sum(1.0 / np.log2(i + 2) for i, c in enumerate(ranked[:10]) if c in relevant)
    ideal = sum(1.0 / np.log2(i + 2) for i in range(min(10, len(relevant))))
    return gain / ideal if ideal else 0.0


def ndcg10_many(ids: Sequence[str], matrix: np.ndarray, weights: np.ndarray, relevant: set[str]) -> np.ndarray:
    """Returns binary nDCG@10 of `rank(ids, matrix, w)` for every weight column w of `weights` at once."""
    order = np.argsort(-(matrix @ weights), axis=0, kind="stable")[:10]
    rel = np.array([c in relevant for c in ids], dtype=np.float64)
    gains = (rel[order] / np.log2(np.arange(2, len(order) + 2))[:, None]).sum(axis=0)
    ideal = sum(1.0 / np.log2(i + 2) for i in range(min(10, len(relevant))))
    return gains / ideal if ideal else np.zeros(weights.shape[1])


def fit(view: CorpusView, pairs: Sequence[Pair], vectors: np.ndarray, base: Callable[[str], list],
        folds: int = 5, seed: int = 0, unseen_loss: float = UNSEEN_LOSS) -> tuple[LearnedParams, dict[str, Any]]:
    """Returns the params that maximise out-of-fold nDCG@10 over `pairs`, and the fit's report.

    Questions are split into `folds`; each fold is ranked with a learned index
    built from the others (`fit_rows`). The gate is fitted with the weights: a
    question whose nearest past question is below it keeps its unlearned
    ranking. Among weights and gates that cost the held-out questions with
    never-confirmed chunks at most `unseen_loss` nDCG@10 on average, the best
    overall wins (`choose`).
    """
    rows = fit_rows(view, pairs, vectors, base, folds, seed)
    if not rows:
        asked = len({p.query for p in pairs if p.weight > 0})
        return LearnedParams(), {"questions": asked, "fitted": False,
                                 "reason": f"fewer than {2 * folds} confirmed questions; defaults kept"}
    return choose(rows, unseen_loss)


def fit_rows(view: CorpusView, pairs: Sequence[Pair], vectors: np.ndarray, base: Callable[[str], list],
             folds: int = 5, seed: int = 0) -> list[tuple]:
    """Returns, per confirmed question ranked out of fold: (nearest cosine, unseen, unlearned nDCG@10,
    {(neighbours, sharpness): (candidate ids, score matrix)}, relevant chunks)."""
    positive = [i for i, p in enumerate(pairs) if p.weight > 0]
    first = {}
    relevant: dict[str, set[str]] = {}
    for i in positive:
        first.setdefault(pairs[i].query, i)
        relevant.setdefault(pairs[i].query, set()).update(pairs[i].chunks)
    questions = sorted(relevant)
    if len(questions) < 2 * folds:
        return []
    order = np.random.default_rng(seed).permutation(len(questions))
    fold_of = {questions[j]: n % folds for n, j in enumerate(order)}
    rows = []
    for f in range(folds):
        keep = [i for i, p in enumerate(pairs) if fold_of.get(p.query, -1) != f]
        taught = {c for i in keep if pairs[i].weight > 0 for c in pairs[i].chunks}
        learned = build_learned(view, [pairs[i] for i in keep], vectors[keep],
                                LearnedParams(neighbours=max(k for k, _ in NEIGHBOURING)))
        for q in (q for q in questions if fold_of[q] == f):
            vec = vectors[first[q]]
            ranked = base(q)
            near = learned.nearest(vec)
            signals = learned_signals(learned, view.backend, q, vec, near, [c for c, _ in ranked], PUBLIC, {},
                                      FIT_DEPTH)
            mats = {(k, s): score_matrix(ranked, {**signals, "neighbours": learned.neighbour_scores(
                Nearest(near.rows[:k], near.sims[:k]), vec, s)}) for k, s in NEIGHBOURING}
            rows.append((near.best, not (relevant[q] & taught), ndcg10([c for c, _ in ranked], relevant[q]), mats,
                         relevant[q]))
    return rows


def choose(rows: Sequence[tuple], unseen_loss: float = UNSEEN_LOSS) -> tuple[LearnedParams, dict[str, Any]]:
    """Returns the best params on `fit_rows` output under the unseen-loss bound, and the report."""
    best_sims = np.array([r[0] for r in rows])
    unseen = np.array([r[1] for r in rows])
    base_scores = np.array([r[2] for r in rows])
    gates = sorted({round(float(g), 4) for g in np.quantile(best_sims, GATE_QUANTILES)})
    choice, top = None, -1.0
    combos = list(itertools.product(*(GRID[name] for name in SIGNALS)))
    weights = np.array([[1.0, *c] for c in combos]).T           # (1 + signals) × combos
    for k, s in NEIGHBOURING:
        learned = np.stack([ndcg10_many(*r[3][k, s], weights, r[4]) for r in rows])   # questions × combos
        for gate in gates:
            used = np.where((best_sims >= gate)[:, None], learned, base_scores[:, None])
            loss = (used[unseen] - base_scores[unseen, None]).mean(axis=0) if unseen.any() else np.zeros(len(combos))
            score = np.where(loss >= -unseen_loss, used.mean(axis=0), -1.0)
            j = int(np.argmax(score))
            if score[j] > top:
                top, choice = float(score[j]), (k, s, dict(zip(SIGNALS, combos[j])), gate)
    k, sharp, chosen, gate = choice
    params = LearnedParams(weights=chosen, gate=gate, sharpness=sharp, neighbours=k)
    opened = best_sims >= gate
    report = {"questions": len(rows), "fitted": True, "unseen_loss_bound": unseen_loss,
              "ndcg10_unlearned": round(float(base_scores.mean()), 4), "ndcg10_learned": round(top, 4),
              "gate_open_share": round(float(opened.mean()), 3), "unseen_questions": int(unseen.sum())}
    return params, report


def learn_pairs(directory: Path, backend: Any, embedder: Any, origin: str,
                pairs: Iterable[tuple[str, Sequence[str]]], *, refit: bool = True, **provenance: Any
                ) -> tuple[dict[str, Any], Optional[dict[str, Any]]]:
    """Returns the new confirmation item (ids mapped to chunk ids) and, with `refit`, the fit report."""
    view = corpus_view(backend)
    mapped = [(q, view.chunk_ids(ids)) for q, ids in pairs]
    unknown = [q for q, c in mapped if not c]
    if unknown and len(unknown) == len(mapped):
        raise LambdaRAGError(f"feedback {origin}: none of the ids names a chunk or document of the index")
    item = Confirmations(directory).add(origin, mapped, **provenance)
    return item, refit_learned(directory, backend, embedder) if refit else None


def confirm_logged(loop: Any, backend: Any, embedder: Any, query_id: str, chunk_id: str, origin: str = "confirm"
                   ) -> dict[str, Any]:
    """Returns the confirmation (or rejection) of `chunk_id` for the logged question `query_id`, with its scope."""
    record = next((r for r in loop.log if r.get("query_id") == query_id), None)
    if record is None:
        raise LambdaRAGError(f"feedback {origin}: no query {query_id!r} in {loop.log.path}")
    try:
        backend.chunk(chunk_id)
    except KeyError:
        raise LambdaRAGError(f"feedback {origin}: chunk {chunk_id!r} is not in the index") from None
    item, _ = learn_pairs(loop.dir, backend, embedder, origin, [(record["rewritten_query"] or record["query"],
                                                                  [chunk_id])],
                          refit=False, scope=record["scope"], query_id=query_id)
    return item


def refit_learned(directory: Path, backend: Any, embedder: Any) -> dict[str, Any]:
    """Returns the report of fitting the learned params on the live confirmations, after saving them."""
    conf = Confirmations(directory)
    live = conf.pairs()
    params, report = fit(corpus_view(backend), live, conf.vectors(embedder, [p.query for p in live]),
                         base_ranking(backend, embedder))
    conf.save_params(params, report)
    return report
