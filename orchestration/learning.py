"""The learned retrieval of an index, built from its confirmations: build, open lazily, fit, confirm.

Confirmations (question → chunk ids, with provenance) live in
`orchestration.feedback.confirmations`. `open_learned` builds the
`skills.store.learned.LearnedIndex` of the live pairs lazily, once per change of
those files; the `learned_boost` skill reads it as ``ctx.resources["learned"]``.
Reverting an item removes its pairs, so the next query ranks exactly as before
the item was added (the fitted params stay). `fit` chooses the signal weights
and the gate by cross-validation over the confirmed questions; `fit_query_adapter`
fits the dense leg's query adapter (`skills.store.adapter`) from the same pairs.
"""
from __future__ import annotations

import functools
import itertools
import logging
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Optional, Sequence

import numpy as np

from lambdarag import State, Term
from lambdarag.skills.store.records import RetrievalPlan
from lambdarag.state import PUBLIC
from lambdarag.errors import ConfigError, LambdaRAGError, StoreCorrupt
from lambdarag.patterns.hybrid_search import hybrid_retrieval, retrieve
from lambdarag.skills.learned import learned_signals, lexical_list, readable, reader, with_candidates
from lambdarag.skills.store.adapter import QueryAdapter, fit_adapter
from lambdarag.skills.store.learned import (AGREEMENT_FLOOR, DEFAULT_WEIGHTS, HEAD, SIGNALS, LearnedIndex,
                                            LearnedParams, Nearest, Pair, admits, arrange, gate_features, lower_bound,
                                            score_matrix, tail_features)
from lambdarag.skills.store.tail_model import TailModel, fit_tail_model

from .feedback.confirmations import Confirmations
from .metrics import ndcg_columns, score

FIT_DEPTH = 100
GRID = {"neighbours": (0.0, 1.0, 2.0, 4.0, 8.0), "expansion": (0.0, 1.0), "terms": (0.0, 1.0, 2.0, 4.0),
        "prior": (0.0, 1.0, 2.0, 4.0), "field": (0.0, 0.5, 1.0), "families": (0.0, 2.0, 4.0, 8.0)}
"""Head weights tried; "field" 1 scores a chunk as if its confirmed questions were part of its text (an ad hoc
5-fold study on STARD train: +0.015 MRR@10 over the best mix without it, and half the loss on unseen questions),
which leaves the separately searched "expansion" little to add; "families" alone was best at 4 in the same study
(MRR@10 0.474 → 0.532, unseen questions gaining too) and cost unseen questions nDCG@10 from 8 up."""
TAIL_GRID = {"neighbours": (0.0, 1.0, 2.0, 4.0, 8.0, 16.0), "expansion": (0.0, 1.0, 2.0), "terms": (0.0,),
             "prior": (0.0, 1.0, 2.0), "field": (0.0, 1.0), "families": (0.0, 2.0, 4.0)}
"""Tail weights tried (`LearnedParams.tail`, fitted for recall@100): only signals read from the learned stores
(and the main index's term counts of the confirmed chunks), so a closed gate never costs an extra index search."""
CANDIDATE_COUNTS = (0, 50, 100)
"""`LearnedParams.candidates` tried with the tail weights (`choose_tail`): nearest confirmed questions whose chunks
the tail may add; more than the neighbour signal reads, since a candidate only widens the tail."""
UNSEEN_RECALL_LOSS = 0.01
RECALL_CONFIDENCE = 1.0
"""The most recall@100 the tail may cost held-out questions whose chunks were never confirmed (a learned chunk can
only displace their answers, never be one): their mean loss plus this many standard errors. Chosen on split 2's
first two outer folds among bounds 0.005, 0.01 and 0, 1, 3 standard errors: the most recall whose held-out unseen
loss stayed within 0.005 (a stricter bound gave up recall and kept no more of theirs)."""
NEIGHBOURING = ((5, 10.0), (5, 30.0), (20, 10.0), (20, 30.0))
"""(neighbours, sharpness) settings tried: few close neighbours or many with a soft fall-off."""
SHARPNESSES = tuple(dict.fromkeys(s for _, s in NEIGHBOURING))
"""The distinct sharpnesses of `NEIGHBOURING` (a row's agreement depends on the sharpness only)."""
GATE_QUANTILES = np.linspace(0.0, 0.95, 20)
CAUTIONS = (None, 0.0, 0.5, 1.0, 1.5, 2.0)
"""How many predicted errors the gate's predicted gain must clear (its lower confidence bound above zero);
None fits no model."""
ERROR_SCALE = float(np.sqrt(np.pi / 2))
"""Mean absolute error → standard deviation, for normal errors: the error model predicts |residual| × this."""
RIDGE = 1.0
CLOSED = 1.01
"""A cosine floor no question reaches: what the fit returns when no setting keeps unseen questions safe."""
UNSEEN_LOSS = 0.005
"""The most nDCG@10 the gate may give up, on average, on held-out questions whose chunks were never confirmed."""
LOSS_CONFIDENCE = 3.0
"""Standard errors added to that average loss before it is compared with `UNSEEN_LOSS`: the best of many thousand
settings has an optimistic average, and the questions the fit holds out are ranked against fewer confirmations
than a new question will be, so the fit's unseen loss understates the loss out of sample."""


AGREEMENT_BOOSTS = (0.0, 1.0, 2.0, 4.0)
"""Agreement boosts (`LearnedParams.agreement_boost`) the fit tries jointly with the head weights (`choose`): round
25's cached study on STARD chose among 1, 2 and 4; 0 is none."""
ADAPTER_BLENDS = (0.35, 0.5)
"""Query adapter blends the fit tries besides 0 (off, `choose_blend`): 0.5, the dense probe's
(bench/query_adapter.py), and 0.35, the largest whose unseen nDCG@10 stayed within the bound on STARD splits 0-2
in round 19 (bench/adapter_blend.py)."""


RETRIEVERS = {"bm25": {"embedding": {"enabled": False}}, "dense": {"bm25": {"enabled": False}}, "hybrid": {}}
"""`eval --retriever KIND` → the skill sections of `patterns.hybrid_search.hybrid_retrieval` it switches off."""


def retrieval_term(kind: str, learned: bool = True) -> Term:
    """Returns the retrieval of `eval --retriever KIND`: `hybrid_retrieval` with one retriever or both, no rerank.

    Without `learned`, bm25 and dense return their own list unfused (read it from
    ``candidates[-1]``); with it, the list is fused (a single list keeps its order)
    so the learned boost can re-rank it.
    """
    if kind not in RETRIEVERS:
        raise ConfigError(f"retrieval_term: unknown retriever {kind!r}; valid retrievers: {', '.join(RETRIEVERS)}")
    settings = {"skills": {**RETRIEVERS[kind], "rerank": {"enabled": False}}}
    return hybrid_retrieval(settings, learned=learned) if learned or kind == "hybrid" else retrieve(settings)


class CorpusView:
    """What learning needs from an index: document or chunk id → chunk ids, chunk id → family, the BM25 terms of
    each chunk and their document frequencies (read once per index version), and questions' tokens (cached, so a
    rebuild after a new confirmation tokenizes only its question)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.rows: dict[str, list[int]] = {}
        chunks = backend.chunks()                  # once: a Milvus backend reads its whole collection for it
        self.ids = [c.id for c in chunks]
        self.family = {c.id: c.family for c in chunks if c.family}
        for i, c in enumerate(chunks):
            self.rows.setdefault(c.id, []).append(i)
            if c.doc_id != c.id:
                self.rows.setdefault(c.doc_id, []).append(i)
        self._tokens: dict[str, list[str]] = {}
        self._lexicon: Optional[tuple[Any, list[str], dict[str, int]]] = None

    def chunk_ids(self, ids: Iterable[str]) -> tuple[str, ...]:
        """Returns the chunk ids that document or chunk ids name (unknown ids are dropped)."""
        return tuple(dict.fromkeys(self.ids[i] for r in ids for i in self.rows.get(r, ())))

    def chunk_vectors(self, chunk_ids: Iterable[str]) -> dict[str, np.ndarray]:
        """Returns chunk id → its indexed vector, for the chunks of `chunk_ids` the index knows (empty when the
        index holds no vectors)."""
        passages = getattr(self.backend, "vectors", None)
        rows = [(c, self.rows[c][0]) for c in chunk_ids if self.rows.get(c)]
        if passages is None or not rows:
            return {}
        taken = np.asarray(passages[[r for _, r in rows]], dtype=np.float32)
        return {c: taken[i] for i, (c, _) in enumerate(rows)}

    def tokens(self, question: str) -> list[str]:
        """Returns the index tokenizer's tokens of a question (tokenized once per view)."""
        if question not in self._tokens:
            self._tokens[question] = self.backend.tokenizer(question)
        return self._tokens[question]

    def lexicon(self) -> tuple[Any, list[str], dict[str, int]]:
        """Returns the index's BM25 counts (docs × terms CSR), its terms by column and their document frequencies."""
        if self._lexicon is None:
            lex = self.backend.lexical
            tf = lex.tf
            terms = [""] * len(lex.vocab)
            for t, j in lex.vocab.items():
                terms[j] = t
            df = np.bincount(tf.indices, minlength=tf.shape[1])
            self._lexicon = tf, terms, {t: int(df[j]) for t, j in lex.vocab.items() if j < len(df)}
        return self._lexicon

    def term_map(self, pairs: Sequence[Pair]) -> dict[str, list[str]]:
        """Returns layperson word → statute words learned from the positive pairs (`SynonymLearner`, its chunk
        words those BM25 matches on)."""
        from .feedback import SynonymLearner

        positive = [(p.query, p.chunks) for p in pairs if p.weight > 0]
        if not positive:
            return {}
        tf, terms, df = self.lexicon()
        learner = SynonymLearner(df, tf.shape[0])
        examples = [(self.tokens(q), [[terms[j] for j in tf.indices[tf.indptr[i]:tf.indptr[i + 1]]]
                                      for c in chunks for i in self.rows.get(c, ())]) for q, chunks in positive]
        learned = learner.learn([(q, docs) for q, docs in examples if docs])
        return {t: list(alts) for t, alts in learned.items()}


def build_learned(view: CorpusView, pairs: Sequence[Pair], vectors: np.ndarray, params: LearnedParams,
                  term_map: Optional[Mapping[str, Sequence[str]]] = None, adapter: Optional[QueryAdapter] = None,
                  notes: Sequence[str] = ()) -> LearnedIndex:
    """Returns the learned index of `pairs` (with their question vectors, in order) over `view`'s index; the term
    map is learned from `pairs` unless given (a fit stores the one it learned); no query adapter unless given."""
    families = {c: view.family[c] for p in pairs if p.weight > 0 for c in p.chunks if c in view.family}
    return LearnedIndex(pairs, vectors, [view.tokens(p.query) for p in pairs],
                        view.term_map(pairs) if term_map is None else term_map, params, families, adapter, notes,
                        view.chunk_vectors(families))


def fit_query_adapter(view: CorpusView, pairs: Sequence[Pair], vectors: np.ndarray) -> Optional[np.ndarray]:
    """Returns the query adapter's map fitted on the confirmed `pairs` (question vectors in order) and their chunks'
    indexed vectors, each row weighted as its pair; None when the index exposes no vectors (`vectors` of a local
    index) or no confirmed chunk has one.

    Only chunks everyone may read are fitted on: one map moves every user's query, so a restricted confirmed
    chunk must not pull the questions of users who may not read it towards its neighbourhood.
    """
    passages = getattr(view.backend, "vectors", None)
    if passages is None:
        return None
    row = {c: i for i, c in enumerate(view.ids)}
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12) if len(vectors) else vectors
    taken = [(i, row[c], p.weight) for i, p in enumerate(pairs) if p.weight > 0 for c in p.chunks
             if c in row and readable(view.backend, c, PUBLIC, {})]
    if not taken:
        return None
    questions, chunks, weights = (np.array(x) for x in zip(*taken))
    return fit_adapter(unit[questions], np.asarray(passages[chunks], dtype=np.float32), weights)


_LOCK = threading.Lock()
_OPEN: dict[str, tuple[tuple, Optional[LearnedIndex]]] = {}
_GENERATIONS: dict[str, tuple[tuple, dict[str, list[str]], Optional[QueryAdapter], tuple[str, ...]]] = {}
log = logging.getLogger(__name__)
_VIEWS: dict[tuple[int, int], CorpusView] = {}


def corpus_view(backend: Any) -> CorpusView:
    """Returns the (cached) view of an index at its current version."""
    key = (id(backend), getattr(backend, "version", 0))
    if key not in _VIEWS:
        _VIEWS.clear()
        _VIEWS[key] = CorpusView(backend)
    return _VIEWS[key]


def open_learned(directory: Path, backend: Any, embedder: Any, adapter: bool = False,
                 agreement_boost: Optional[float] = None) -> Optional[LearnedIndex]:
    """Returns the learned index of an index's feedback folder (None when nothing is confirmed), loaded once per
    learning generation: a question reads one counter (`Confirmations.stamp`, which every add, revert and refit
    bumps) and rebuilds only when it moved. With `adapter` (config ``orchestration.feedback.queryAdapter``) it
    holds the query adapter too; `agreement_boost` (``orchestration.feedback.agreementBoost``), when set, is the
    neighbour weight the head gains where the near confirmed questions agree, over the fitted one
    (`LearnedParams.agreement_boost`; None: the fit's; 0: off).

    A rebuild re-reads the live pairs and their stored vectors and tokenizes only questions new to the process;
    the term map, the costly part, and the query adapter are the ones the last fit stored, or learned here once
    per explicit change (`generation_state`), so an answer's confirmation never pays for them.
    """
    conf = Confirmations(directory)
    stamp = (id(backend), getattr(backend, "version", 0), adapter, agreement_boost, conf.stamp())
    with _LOCK:
        cached = _OPEN.get(str(directory))
        if cached is not None and cached[0] == stamp:
            return cached[1]
        pairs = conf.pairs()
        learned = None
        if pairs:
            view = corpus_view(backend)
            vectors = conf.vectors(embedder, [p.query for p in pairs])
            key = (*stamp[:3], conf.generation())
            params = conf.params()
            params = params if agreement_boost is None else replace(params, agreement_boost=agreement_boost)
            known = _GENERATIONS.get(str(directory))
            if known is None or known[0] != key:
                known = _GENERATIONS[str(directory)] = (key, *generation_state(conf, view, pairs, vectors, adapter,
                                                                               params.adapter_blend))
            term_map, fitted, notes = known[1:]
            for note in params.notes:
                log.warning("%s", note)
            learned = build_learned(view, pairs, vectors, params, term_map, fitted, (*notes, *params.notes))
        _OPEN[str(directory)] = (stamp, learned)
        return learned


def generation_state(conf: Confirmations, view: CorpusView, pairs: Sequence[Pair], vectors: np.ndarray,
                     adapter: bool, blend: float
                     ) -> tuple[dict[str, list[str]], Optional[QueryAdapter], tuple[str, ...]]:
    """Returns what changes only with an explicit change (`Confirmations.generation`): the term map and, with
    `adapter`, the query adapter at the `blend` the fit chose (`LearnedParams.adapter_blend`; 0 leaves every query
    vector as it is), each the one the last fit stored for this generation or else learned here from `pairs`, and
    the notes on what could not be read: a stored adapter that is unreadable is left out (learning goes on without
    it) and named in a note and the log."""
    stored = conf.term_map()
    term_map = view.term_map(pairs) if stored is None else stored
    if not adapter:
        return term_map, None, ()
    try:
        matrix = conf.adapter()
    except StoreCorrupt as e:
        log.warning("%s", e)
        return term_map, None, (str(e),)
    matrix = fit_query_adapter(view, pairs, vectors) if matrix is None else matrix
    return term_map, None if matrix is None else QueryAdapter(matrix, blend), ()


# -- fitting -----------------------------------------------------------------------------------------------

class Unlearned(NamedTuple):
    """A question's unlearned hybrid ranking [(chunk id, fused score)], best first, and the BM25 list it fused
    {chunk id: score} (what the "field" signal changes)."""

    fused: list
    lexical: dict


def base_ranking(backend: Any, embedder: Any, depth: int = FIT_DEPTH) -> Callable[[str], Unlearned]:
    """Returns query → the `Unlearned` hybrid ranking that `eval --retriever hybrid` uses."""
    from lambdarag import Context

    term = retrieval_term("hybrid", learned=False)
    plan = RetrievalPlan(bm25_top_k=depth, dense_top_k=depth, fused_top_k=depth)
    ctx = Context(embedder=embedder, resources={"index": backend})

    def ranking(query: str) -> Unlearned:
        state = term.run(State.of(query, plan=plan), ctx)
        return Unlearned([(h.chunk_id, h.score) for h in state.hits], lexical_list(state.candidates, query))
    return ranking


def learned_ranking(backend: Any, embedder: Any, depth: int = FIT_DEPTH) -> Callable[[str, LearnedIndex], list[str]]:
    """Returns (query, learned index) → the chunk ids of the learned hybrid ranking `eval --retriever hybrid` makes
    with that learned index, best first."""
    from lambdarag import Context

    term = retrieval_term("hybrid")
    plan = RetrievalPlan(bm25_top_k=depth, dense_top_k=depth, fused_top_k=depth)

    def ranking(query: str, learned: LearnedIndex) -> list[str]:
        ctx = Context(embedder=embedder, resources={"index": backend, "learned": learned})
        return [h.chunk_id for h in term.run(State.of(query, plan=plan), ctx).hits]
    return ranking


def recall100_many(ids: Sequence[str], matrix: np.ndarray, weights: np.ndarray, relevant: set[str]) -> np.ndarray:
    """Returns recall@100 of `rank(ids, matrix, w)` for every weight column w of `weights` at once."""
    order = np.argsort(-(matrix @ weights), axis=0, kind="stable")[:100]
    rel = np.array([c in relevant for c in ids], dtype=np.float64)
    return rel[order].sum(axis=0) / max(len(relevant), 1)


def ndcg10_many(ids: Sequence[str], matrix: np.ndarray, weights: np.ndarray, relevant: set[str]) -> np.ndarray:
    """Returns binary nDCG@10 of `rank(ids, matrix, w)` for every weight column w of `weights` at once."""
    order = np.argsort(-(matrix @ weights), axis=0, kind="stable")[:10]
    rel = np.array([c in relevant for c in ids], dtype=np.float64)
    return ndcg_columns(rel[order], np.ones(len(relevant)), 10)


def fit(view: CorpusView, pairs: Sequence[Pair], vectors: np.ndarray, base: Callable[[str], Unlearned],
        folds: int = 5, seed: int = 0, unseen_loss: float = UNSEEN_LOSS,
        ranking: Optional[Callable[[str, LearnedIndex], list[str]]] = None, tail_model: bool = False,
        boosts: Sequence[float] = AGREEMENT_BOOSTS) -> tuple[LearnedParams, dict[str, Any]]:
    """Returns the params that maximise out-of-fold nDCG@10 over `pairs`, and the fit's report.

    Questions are split into `folds`; each fold is ranked with a learned index
    built from the others (`fit_rows`). The gate is fitted with the weights: a
    question whose nearest past question is below the cosine floor, or whose
    predicted gain (a ridge model over `GATE_FEATURES`, fitted on the same
    out-of-fold rows) less `caution` times its predicted error (a second ridge
    model, of the first one's out-of-fold residuals) is not above zero, keeps
    its unlearned ranking. Among
    settings that cost the held-out questions with never-confirmed chunks at
    most `unseen_loss` nDCG@10 on average (plus `LOSS_CONFIDENCE` standard
    errors), the best overall wins (`choose`);
    if none does, the gate stays closed. The top 10 is scored as `arrange` ranks
    it: from plain retrieval's candidates only (`head_rows`). The tail weights (ranks after
    `HEAD`, gate open or not), its candidates and cosine floor are those of best out-of-fold
    recall@100 within an unseen recall@100 bound (`choose_tail`). With `ranking` (`learned_ranking`), the query
    adapter's blend is fitted last, on the same folds under the same bound (`choose_blend`); without it, 0 (off).
    With `tail_model` (`feedback.tailModel` on) the tail model is fitted too (`choose_tail_model`); without it, none.
    The agreement boost is one of `boosts`, chosen with the head weights (`choose`).
    """
    rows = fit_rows(view, pairs, vectors, base, folds, seed, agreement=any(boosts))
    if not rows:
        asked = len({p.query for p in pairs if p.weight > 0})
        return LearnedParams(), {"questions": asked, "fitted": False,
                                 "reason": f"fewer than {2 * folds} confirmed questions; defaults kept"}
    params, report = choose(rows, unseen_loss, tail_model, boosts)
    if ranking is None:
        return params, report
    blend, blended = choose_blend(view, pairs, vectors, params, base, ranking, folds, seed, unseen_loss)
    return replace(params, adapter_blend=blend), {**report, "adapter": blended}


def choose_blend(view: CorpusView, pairs: Sequence[Pair], vectors: np.ndarray, params: LearnedParams,
                 base: Callable[[str], Unlearned], ranking: Callable[[str, LearnedIndex], list[str]],
                 folds: int = 5, seed: int = 0, unseen_loss: float = UNSEEN_LOSS) -> tuple[float, dict[str, Any]]:
    """Returns the query adapter's blend (0: off) and the report: among 0 and `ADAPTER_BLENDS`, the one of best
    out-of-fold nDCG@10 whose held-out questions with never-confirmed chunks lose at most `unseen_loss` nDCG@10
    against plain retrieval (plus `LOSS_CONFIDENCE` standard errors); 0 when none does.

    Each fold of `confirmed_folds` is ranked by `ranking` with the learned index of `params` built from the other
    folds, without the adapter and with one fitted on those folds at each blend, as a query is ranked in use."""
    questions, _, relevant, fold_of = confirmed_folds(pairs, folds, seed)
    if len(questions) < 2 * folds or params.gate >= CLOSED:
        return 0.0, {"adapter_blend": 0.0, "reason": "no fit or a closed gate: the adapter never acts"}
    blends = (0.0, *ADAPTER_BLENDS)
    place = {q: n for n, q in enumerate(questions)}
    scores, plain, unseen = np.zeros((len(questions), len(blends))), np.zeros(len(questions)), np.zeros(
        len(questions), dtype=bool)
    for f in range(folds):
        keep = [i for i, p in enumerate(pairs) if fold_of.get(p.query, -1) != f]
        kept, kept_vectors = [pairs[i] for i in keep], vectors[keep]
        matrix = fit_query_adapter(view, kept, kept_vectors)
        if matrix is None:
            return 0.0, {"adapter_blend": 0.0, "reason": "no confirmed chunk everyone may read has a vector"}
        learned = build_learned(view, kept, kept_vectors, params)
        models = [learned, *(build_learned(view, kept, kept_vectors, params, learned.term_map, QueryAdapter(matrix, b))
                             for b in ADAPTER_BLENDS)]
        taught = set(learned.popularity)
        for q in (q for q in questions if fold_of[q] == f):
            judged = dict.fromkeys(relevant[q], 1.0)
            plain[place[q]] = score("ndcg@10", [c for c, _ in base(q).fused], judged)
            unseen[place[q]] = not (relevant[q] & taught)
            scores[place[q]] = [score("ndcg@10", ranking(q, m), judged) for m in models]
    loss = upper_loss(plain[unseen, None] - scores[unseen]) if unseen.any() else np.zeros(len(blends))
    j = int(np.argmax(np.where((loss <= unseen_loss) | (np.arange(len(blends)) == 0), scores.mean(axis=0), -1.0)))
    return blends[j], {"adapter_blend": blends[j], "blends": list(blends), "unseen_questions": int(unseen.sum()),
                       "ndcg10": np.round(scores.mean(axis=0), 4).tolist(),
                       "unseen_ndcg10": np.round(scores[unseen].mean(axis=0), 4).tolist() if unseen.any() else [],
                       "unseen_ndcg10_plain": round(float(plain[unseen].mean()), 4) if unseen.any() else None,
                       "unseen_loss_upper": np.round(loss, 4).tolist()}


class Row(NamedTuple):
    """One question ranked out of fold: nearest cosine, whether its chunks were never confirmed, unlearned
    nDCG@10, {(neighbours, sharpness): (candidate ids, score matrix, gate features)}, relevant chunks, how
    many candidates plain retrieval returned (the first rows: only they may reach the top 10, `arrange`),
    {(neighbours, sharpness, count): (candidate ids, score matrix)} with the learned candidates of each
    `CANDIDATE_COUNTS` count above 0 added, and {sharpness: the `agreement` of its `AGREEMENT_NEIGHBOURS`
    nearest confirmed questions} (none: 0, the agreement boost never acts)."""

    nearest: float
    unseen: bool
    base: float
    mats: dict
    relevant: set
    plain: int
    tails: dict
    agreement: Mapping[float, float] = {}


def fit_rows(view: CorpusView, pairs: Sequence[Pair], vectors: np.ndarray, base: Callable[[str], Unlearned],
             folds: int = 5, seed: int = 0, agreement: bool = True) -> list[Row]:
    """Returns a `Row` per confirmed question, each ranked by a learned index built from the other folds (with its
    near questions' `agreement` only when asked: a fit whose boost is fixed at 0 never reads it)."""
    questions, first, relevant, fold_of = confirmed_folds(pairs, folds, seed)
    if len(questions) < 2 * folds:
        return []
    rows = []
    for f in range(folds):
        keep = [i for i, p in enumerate(pairs) if fold_of.get(p.query, -1) != f]
        learned = build_learned(view, [pairs[i] for i in keep], vectors[keep],
                                LearnedParams(neighbours=max(k for k, _ in NEIGHBOURING)))
        asked = [q for q in questions if fold_of[q] == f]
        rows += question_rows(view, learned, [(q, vectors[first[q]], relevant[q]) for q in asked], base, agreement)
    return rows


def confirmed_folds(pairs: Sequence[Pair], folds: int, seed: int
                    ) -> tuple[list[str], dict[str, int], dict[str, set[str]], dict[str, int]]:
    """Returns the confirmed questions (sorted), each one's first pair, its confirmed chunks and its fold of the
    inner cross-validation (a `seed` shuffle, so the head's rows and the adapter's blend hold out the same folds)."""
    first: dict[str, int] = {}
    relevant: dict[str, set[str]] = {}
    for i, p in enumerate(pairs):
        if p.weight > 0:
            first.setdefault(p.query, i)
            relevant.setdefault(p.query, set()).update(p.chunks)
    questions = sorted(relevant)
    order = np.random.default_rng(seed).permutation(len(questions))
    return questions, first, relevant, {questions[j]: n % folds for n, j in enumerate(order)}


def question_rows(view: CorpusView, learned: LearnedIndex, questions: Sequence[tuple[str, np.ndarray, set]],
                  base: Callable[[str], Unlearned], agreement: bool = True) -> list[Row]:
    """Returns a `Row` per (question, vector, relevant chunks) ranked with `learned` (built with the most
    neighbours of `NEIGHBOURING`); a question is unseen when none of its chunks was confirmed in `learned`. Its
    `agreement` is read once per sharpness of `NEIGHBOURING`, and only with `agreement`."""
    taught = set(learned.popularity)
    rows = []
    for q, vec, relevant in questions:
        ranked, lexical = base(q)
        near = learned.nearest(vec)
        fused = {c: view.family.get(c, "") for c, _ in ranked}
        may_read = reader(view.backend, PUBLIC, {}, fused)
        signals = learned_signals(learned, view.backend, view.tokens(q), vec, near, fused, PUBLIC, {}, FIT_DEPTH,
                                  lexical=lexical)
        mats, tails = {}, {}
        for k, s in NEIGHBOURING:
            nk = Nearest(near.rows[:k], near.sims[:k])
            neighbours = learned.neighbour_scores(nk, vec, s)
            scored = {**signals, "neighbours": neighbours, "families": learned.family_scores(nk, fused, may_read, s)}
            ids, matrix = score_matrix(ranked, scored)
            nearest_chunks = learned.pairs[near.rows[0]].chunks
            mats[k, s] = (ids, matrix, gate_features(nk, neighbours, ranked, nearest_chunks, matrix))
            for count in CANDIDATE_COUNTS[1:]:
                candidates = learned.candidate_scores(vec, nk, fused, may_read, s, count)
                tails[k, s, count] = score_matrix(ranked, with_candidates(scored, candidates))
        rows.append(Row(near.best, not (relevant & taught),
                        score("ndcg@10", [c for c, _ in ranked], dict.fromkeys(relevant, 1.0)), mats, relevant,
                        len(ranked), tails,
                        {s: learned.agreeing(near, may_read, s) for s in SHARPNESSES} if agreement else {}))
    return rows


def gain_model(features: np.ndarray, gains: np.ndarray) -> np.ndarray:
    """Returns ridge coefficients (features × columns) predicting each column of `gains` from `features`."""
    penalty = RIDGE * np.eye(features.shape[1])
    penalty[-1, -1] = 0.0                                    # the intercept is not shrunk
    return np.linalg.solve(features.T @ features + penalty, features.T @ gains)


def predicted_gains(features: np.ndarray, gains: np.ndarray, folds: int = 5) -> np.ndarray:
    """Returns each question's gain (or error) predicted by a `gain_model` fitted on the other folds
    (questions × columns)."""
    out = np.zeros_like(gains)
    fold = np.arange(len(features)) % folds
    for f in range(folds):
        out[fold == f] = features[fold == f] @ gain_model(features[fold != f], gains[fold != f])
    return out


def choose(rows: Sequence[Row], unseen_loss: float = UNSEEN_LOSS, tail_model: bool = False,
           boosts: Sequence[float] = AGREEMENT_BOOSTS) -> tuple[LearnedParams, dict[str, Any]]:
    """Returns the best params on `fit_rows` output under the unseen-loss bound, and the report.

    Searched jointly: neighbour settings, the agreement boost (of `boosts`: the neighbour weight a row's head
    gains when its near questions agree at least `AGREEMENT_FLOOR`), signal weights, the cosine floor and
    the gate's caution (None = no gain model). Gains and their errors are
    predicted out of fold, so the caution is chosen on predictions the models
    did not fit: a question unlike those the gain model was fitted on gets a
    large predicted error and keeps its unlearned ranking.
    """
    best_sims = np.array([r.nearest for r in rows])
    unseen = np.array([r.unseen for r in rows])
    base_scores = np.array([r.base for r in rows])
    gates = sorted({round(float(g), 4) for g in np.quantile(best_sims, GATE_QUANTILES)})
    closed = np.zeros(len(rows), dtype=bool)                 # learning never acts: the fallback if nothing is safe
    choice, top = (*NEIGHBOURING[0], dict(DEFAULT_WEIGHTS), CLOSED, None, (), (), closed, 0.0), \
        float(base_scores.mean())
    combos = list(itertools.product(*(GRID[name] for name in SIGNALS)))
    weights = np.array([[1.0, *c] for c in combos]).T           # (1 + signals) × combos
    neighbours = (np.arange(len(weights)) == 1 + SIGNALS.index("neighbours"))[:, None]
    for k, s in NEIGHBOURING:
        unboosted = np.stack([ndcg10_many(*head_rows(r, k, s), weights, r.relevant) for r in rows])  # rows × combos
        agreeing = [i for i, r in enumerate(rows) if r.agreement.get(s, 0.0) >= AGREEMENT_FLOOR]
        features = np.stack([r.mats[k, s][2] for r in rows])
        for boost in boosts:
            learned = unboosted.copy()
            for i in agreeing if boost else ():
                learned[i] = ndcg10_many(*head_rows(rows[i], k, s), weights + boost * neighbours, rows[i].relevant)
            gains = learned - base_scores[:, None]
            predicted = predicted_gains(features, gains)
            errors = np.abs(gains - predicted) * ERROR_SCALE
            spread = predicted_gains(features, errors)
            for gate, caution in itertools.product(gates, CAUTIONS):
                admitted = np.ones_like(learned, dtype=bool) if caution is None else \
                    lower_bound(predicted, spread, caution) > 0.0
                used = np.where((best_sims >= gate)[:, None] & admitted, learned, base_scores[:, None])
                loss = upper_loss(base_scores[unseen, None] - used[unseen]) if unseen.any() else np.zeros(len(combos))
                score = np.where(loss <= unseen_loss, used.mean(axis=0), -1.0)
                j = int(np.argmax(score))
                if score[j] > top:
                    model, error = ((), ()) if caution is None else (
                        tuple(gain_model(features, gains[:, [j]])[:, 0].round(6).tolist()),
                        tuple(gain_model(features, errors[:, [j]])[:, 0].round(6).tolist()))
                    top, choice = float(score[j]), (k, s, dict(zip(SIGNALS, combos[j])), gate, caution, model, error,
                                                    (best_sims >= gate) & admitted[:, j], boost)
    k, sharp, chosen, gate, caution, model, error, opened, boost = choice
    tail, count, floor, recall = choose_tail(rows, k, sharp, gate)
    params = LearnedParams(weights=chosen, gate=gate, sharpness=sharp, neighbours=k, gate_weights=model,
                           gate_spread=error, caution=0.0 if caution is None else caution, tail=tail,
                           candidates=count, tail_gate=floor, agreement_boost=boost)
    model, tail_report = choose_tail_model(rows, params) if tail_model else (None, {"tail_model": None, "reason": "off"})
    params = replace(params, tail_model=model)
    report = {"questions": len(rows), "fitted": True, "unseen_loss_bound": unseen_loss,
              "ndcg10_unlearned": round(float(base_scores.mean()), 4), "ndcg10_learned": round(top, 4),
              "gate_open_share": round(float(opened.mean()), 3), "agreement_boost": boost,
              "unseen_questions": int(unseen.sum()),
              "unseen_gate_open_share": round(float(opened[unseen].mean()), 3) if unseen.any() else 0.0,
              "recall100_unlearned": round(float(recall[:, 0].mean()), 4),
              "recall100_tail": round(float(recall[:, 1].mean()), 4),
              "unseen_recall100": [round(float(x), 4) for x in recall[unseen].mean(axis=0)] if unseen.any() else [],
              "tail_model": tail_report}
    return params, report


def head_rows(row: Row, k: int, sharpness: float) -> tuple[Sequence[str], np.ndarray]:
    """Returns the candidate ids and score matrix rows of `row` that may take the top 10: plain retrieval's."""
    ids, matrix = row.mats[k, sharpness][:2]
    return ids[:row.plain], matrix[:row.plain]


def upper_loss(losses: np.ndarray) -> np.ndarray:
    """Returns each column's mean loss plus `LOSS_CONFIDENCE` standard errors of that mean (questions × columns)."""
    return losses.mean(axis=0) + LOSS_CONFIDENCE * losses.std(axis=0) / np.sqrt(len(losses))


def choose_tail(rows: Sequence[Row], k: int, sharpness: float, gate: float, unseen_loss: float = UNSEEN_RECALL_LOSS
                ) -> tuple[dict[str, float], int, float, np.ndarray]:
    """Returns the `TAIL_GRID` weights, the `CANDIDATE_COUNTS` count and the tail's cosine floor (a quantile of the
    rows' nearest cosines) of best mean recall@100 over `rows` among those that cost the rows whose chunks were never
    confirmed at most `unseen_loss` recall@100 (plus `RECALL_CONFIDENCE` standard errors) against the unlearned order
    (ranked with `k` neighbours of `sharpness`, learned candidates only for rows whose nearest cosine reaches `gate`;
    empty weights when none beats the unlearned order), and each row's recall@100 (unlearned, tail)."""
    combos = list(itertools.product(*(TAIL_GRID[name] for name in SIGNALS)))   # the first is all zero: unlearned
    weights = np.array([[1.0, *c] for c in combos]).T
    unseen = np.array([r.unseen for r in rows])
    nearest = np.array([r.nearest for r in rows])
    floors = sorted({round(float(g), 4) for g in np.quantile(nearest, GATE_QUANTILES)})
    best, top = None, -1.0
    for count in CANDIDATE_COUNTS:
        recall = np.stack([recall100_many(*(r.tails[k, sharpness, count] if count and r.nearest >= gate
                                            else r.mats[k, sharpness][:2]), weights, r.relevant)
                           for r in rows])                        # rows × combos
        for floor in floors:
            tailed = np.where((nearest >= floor)[:, None], recall, recall[:, :1])
            losses = tailed[unseen, :1] - tailed[unseen]
            loss = losses.mean(axis=0) + RECALL_CONFIDENCE * losses.std(axis=0) / np.sqrt(max(len(losses), 1)) \
                if unseen.any() else np.zeros(len(combos))
            score = np.where(loss <= unseen_loss, tailed.mean(axis=0), -1.0)
            j = int(np.argmax(score))
            if score[j] > top:
                top = float(score[j])
                best = ({name: w for name, w in zip(SIGNALS, combos[j]) if w}, count if j else 0,
                        floor if j else -1.0, tailed[:, [0, j]])
    return best


TAIL_MODEL_BLENDS = (0.25, 0.5, 1.0)
"""How far the tail model's score may move the fitted tail's order (`choose_tail_model`; none: no model)."""


class TailRow(NamedTuple):
    """One fitted-on question ranked as `arrange` ranks it with the fitted params: whether the tail acts, its chunks
    never confirmed, its relevant chunks, its top `HEAD`, its tail (best first) with their `tail_features`, and its
    recall@100 unlearned."""

    tailed: bool
    unseen: bool
    relevant: set
    head: list
    tail: list
    features: Optional[np.ndarray]
    plain_recall: float


def tail_rows(rows: Sequence[Row], params: LearnedParams) -> list[TailRow]:
    """Returns a `TailRow` per `fit_rows` row, ranked by `params` (without a tail model) as a query is: the head
    by the gate's decision (`admits`), the tail by ``params.tail`` with the learned candidates where they act."""
    k, s = params.neighbours, params.sharpness
    plain_params = replace(params, tail_model=None)
    out = []
    for r in rows:
        tailed = bool(params.tail) and r.nearest >= params.tail_gate
        widened = tailed and params.candidates and r.nearest >= params.gate
        ids, matrix = r.tails[k, s, params.candidates] if widened else r.mats[k, s][:2]
        base = [(c, float(matrix[i, 0])) for i, c in enumerate(ids[:r.plain])]
        opened = r.nearest >= params.gate and admits(params, r.mats[k, s][2])
        ranked = plain_params.boosted() if r.agreement.get(s, 0.0) >= AGREEMENT_FLOOR else plain_params
        order = [c for c, _ in arrange(base, ids, matrix, ranked if tailed else replace(ranked, tail={}), opened)]
        head, tail = order[:HEAD], order[HEAD:]
        out.append(TailRow(tailed, r.unseen, r.relevant, head, tail,
                           tail_features(r.plain, ids, matrix, tail) if tailed and tail else None,
                           recall100(ids[:r.plain], r.relevant)))
    return out


def recall100(order: Sequence[str], relevant: set) -> float:
    """Returns recall@100 of `order` against the `relevant` chunks (`metrics.score`)."""
    return score("recall@100", order, dict.fromkeys(relevant, 1.0))


def choose_tail_model(rows: Sequence[Row], params: LearnedParams, folds: int = 5, unseen_loss: float = UNSEEN_RECALL_LOSS
                      ) -> tuple[Optional[TailModel], dict[str, Any]]:
    """Returns the tail model (`skills.store.tail_model`) fitted on `rows` ranked by the fitted `params`, or None,
    and the report: among `TAIL_MODEL_BLENDS`, the blend of best out-of-fold recall@100 (each fold of the rows
    re-ranked by a model fitted on the others, where the tail acts) whose rows with never-confirmed chunks lose
    at most `unseen_loss` recall@100 against the unlearned order (plus `RECALL_CONFIDENCE` standard errors, the
    tail weights' own bound), or no more than the fitted tail without a model loses them when that is more (the
    model is then held to the tail's cost); None when none beats the fitted tail without a model."""
    ranked = tail_rows(rows, params)
    fitted = [i for i, t in enumerate(ranked) if t.features is not None]
    if len(fitted) < 2 * folds or not any(ranked[i].relevant.intersection(ranked[i].tail) for i in fitted):
        return None, {"tail_model": None, "reason": "too few questions whose tail acts and holds an answer"}
    labelled = {i: (ranked[i].features, np.array([c in ranked[i].relevant for c in ranked[i].tail])) for i in fitted}
    recall = np.array([[recall100(t.head + t.tail, t.relevant)] * (1 + len(TAIL_MODEL_BLENDS)) for t in ranked])
    fold = {i: n % folds for n, i in enumerate(fitted)}
    for f in range(folds):
        model = fit_tail_model([labelled[i] for i in fitted if fold[i] != f], 1.0)
        for i in (i for i in fitted if fold[i] == f):
            t = ranked[i]
            for j, blend in enumerate(TAIL_MODEL_BLENDS, 1):
                moved = replace(model, blend=blend).order(t.features)
                recall[i, j] = recall100(t.head + [t.tail[n] for n in np.argsort(-moved, kind="stable")], t.relevant)
    unseen = np.array([t.unseen for t in ranked])
    plain = np.array([t.plain_recall for t in ranked])
    losses = plain[unseen, None] - recall[unseen]
    loss = losses.mean(axis=0) + RECALL_CONFIDENCE * losses.std(axis=0) / np.sqrt(max(len(losses), 1)) \
        if unseen.any() else np.zeros(recall.shape[1])
    safe = np.where(loss <= max(unseen_loss, loss[0]), recall.mean(axis=0), -1.0)
    j = int(np.argmax(safe))
    report = {"blends": [0.0, *TAIL_MODEL_BLENDS], "tailed_questions": len(fitted),
              "recall100": np.round(recall.mean(axis=0), 4).tolist(),
              "unseen_recall100": np.round(recall[unseen].mean(axis=0), 4).tolist() if unseen.any() else [],
              "unseen_recall100_plain": round(float(plain[unseen].mean()), 4) if unseen.any() else None,
              "unseen_loss_upper": np.round(loss, 4).tolist()}
    if j == 0:
        return None, {"tail_model": None, **report}
    blend = TAIL_MODEL_BLENDS[j - 1]
    return fit_tail_model([labelled[i] for i in fitted], blend), {"tail_model": blend, **report}


def learn_pairs(directory: Path, backend: Any, embedder: Any, origin: str,
                pairs: Iterable[tuple[str, Sequence[str]]], *, refit: bool = True, adapter: bool = False,
                tail_model: bool = False, agreement_boost: Optional[float] = None, **provenance: Any
                ) -> tuple[dict[str, Any], Optional[dict[str, Any]]]:
    """Returns the new confirmation item (ids mapped to chunk ids) and, with `refit`, the fit report (`adapter`,
    `tail_model`, `agreement_boost`: as `refit_learned`'s)."""
    view = corpus_view(backend)
    mapped = [(q, view.chunk_ids(ids)) for q, ids in pairs]
    unknown = [q for q, c in mapped if not c]
    if unknown and len(unknown) == len(mapped):
        raise LambdaRAGError(f"feedback {origin}: none of the ids names a chunk or document of the index")
    item = Confirmations(directory).add(origin, mapped, **provenance)
    return item, refit_learned(directory, backend, embedder, adapter, tail_model, agreement_boost) if refit else None


def refit_learned(directory: Path, backend: Any, embedder: Any, adapter: bool = False, tail_model: bool = False,
                  agreement_boost: Optional[float] = None) -> dict[str, Any]:
    """Returns the report of fitting the learned params on the live confirmations, after saving them. Only with
    `adapter` (`feedback.queryAdapter` on) does the fit search the adapter's blend: the search ranks every confirmed
    question three more times, which a store whose adapter is off would pay for nothing (its blend stays 0). Only
    with `tail_model` (`feedback.tailModel` on) does it fit the tail model. The agreement boost is fitted among
    `AGREEMENT_BOOSTS` unless `agreement_boost` (`feedback.agreementBoost`) fixes it."""
    conf = Confirmations(directory)
    live = conf.pairs()
    view = corpus_view(backend)
    vectors = conf.vectors(embedder, [p.query for p in live])
    base = functools.lru_cache(maxsize=None)(base_ranking(backend, embedder))    # the blend's fit ranks them again
    params, report = fit(view, live, vectors, base, ranking=learned_ranking(backend, embedder) if adapter else None,
                         tail_model=tail_model,
                         boosts=AGREEMENT_BOOSTS if agreement_boost is None else (agreement_boost,))
    conf.save_params(params, report, view.term_map(live), fit_query_adapter(view, live, vectors))
    return report
