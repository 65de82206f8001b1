"""Learned retrieval state: confirmed past questions, the chunks they confirmed, and the signals derived from them.

A `LearnedIndex` is built from the live confirmed pairs of one index and holds:

- the past-question neighbour index: unit question vectors (same embedder as the
  index's queries), each with its confirmed chunks and weight (negative = rejected);
- the expansion field: per confirmed chunk, the tokens of the questions that
  confirmed it, searched with BM25 on their own ("expansion") and scored as if
  appended to the chunk's own text in the main BM25 index ("field", document
  expansion) — kept beside the main index, so reverting a confirmation rebuilds
  this small field and never the main index;
- the term map: layperson word → statute words, learned from the same pairs;
- the popularity prior: summed confirmation weight per chunk;
- the family of each confirmed chunk (`Chunk.family`, e.g. its statute), so a
  retrieved chunk can be scored by how many near past questions its family
  answered ("families") — a signal that also helps questions whose own chunk
  was never confirmed;
- the indexed vectors of the confirmed chunks, when the index has vectors: with the
  neighbours and families, the candidate source (`candidate_scores`) of chunks plain
  retrieval did not return, which only the tail (ranks after `HEAD`) may rank;
- `LearnedParams`: signal weights, the gate and the tail model (`skills.store.tail_model`), fitted by cross-validation;
- the query adapter (`skills.store.adapter`), when one is fitted: the dense leg's
  query vector of a question near a confirmed one is moved by it (`dense_query`).

How a query uses it (`score_matrix` + `rank`, shared by the `learned_boost` term
and the fitter so both rank alike): if the nearest past question's cosine is below
``params.gate``, or the lower confidence bound of the gain the gate's linear models
predict (`gate_features` · ``params.gate_weights``, the nDCG@10 gain, minus
``params.caution`` × `gate_features` · ``params.gate_spread``, the expected size of
that prediction's error) is not above zero, the top `HEAD` stays the unlearned one;
only the candidates after it are re-ranked by ``params.tail`` (`arrange`). Otherwise
each chunk's score is its fused score standardised over the fused list (minus the
list's minimum, so absent = 0) plus Σ weight · signal: neighbours, prior and
families are absolute (so how close the past questions are and how popular a
chunk or its family is carry over), the lexical signals are scaled by their per-query maximum, and
"field" is the change of the fused score itself (so weight 1 ranks as if the
confirmed questions were part of their chunks' text).
"""
from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

import numpy as np

from lambdarag.errors import StoreCorrupt

from .adapter import QueryAdapter
from .bm25 import Bm25Index
from .tail_model import TAIL_SIGNALS, TailModel, reciprocal_rank

SIGNALS = ("neighbours", "expansion", "terms", "prior", "field", "families")
RELATIVE = ("expansion", "terms")
"""Signals scaled by their own maximum per query (BM25 scores have no fixed scale)."""
FUSED = ("field",)
"""Signals in fused-score units, standardised like the unlearned score; the others are in [0, 1]."""
DEFAULT_WEIGHTS = {"neighbours": 8.0, "expansion": 0.0, "terms": 1.0, "prior": 0.0, "field": 0.0, "families": 0.0}
"""Before any fit: a confirmed near question (cosine ≥ the default gate) moves its chunks up strongly."""
EXPANSION_TOP = 20
GATE_FEATURES = ("nearest", "nearest_gap", "near_mean", "concentration", "base_rank", "base_margin", "agree_top10",
                 "agree_top100", "nearest_in_top10", "neighbours_max", "field_max", "field_top10", "prior_max",
                 "intercept")
"""What the gate reads (`gate_features`): how close and how unanimous the past questions are, and how far the
unlearned ranking already agrees with their chunks (share of the neighbour signal on its top 10 and top 100; whether
the nearest question's chunks are in its top 10); how strong the gate's signals are (the largest neighbour, field
and prior scores, and the share of the field's lift on the unlearned top 10). A question unlike any past one gets
a low predicted gain; with the signal strengths an ad hoc 5-fold study on STARD train gained 0.007 MRR@10 at less
loss on unseen questions."""
GATE_SIGNALS = ("neighbours", "field", "prior")
"""The signals `gate_features` reads: computed before the gate decides."""
READERS_KEPT = 16
"""Readers alike (`LearnedIndex.checked`) whose permission checks a learned index keeps, the latest used."""
FAMILY_CANDIDATES = 20
"""Confirmed chunks of the near questions' families that become candidates, the closest to the query first."""
AGREEMENT_NEIGHBOURS = 20
AGREEMENT_FLOOR = 0.1
"""The agreement boost (`LearnedParams.agreement_boost`) acts when the `AGREEMENT_NEIGHBOURS` nearest confirmed
questions agree (`agreement`, over their confirmed chunks) at least `AGREEMENT_FLOOR`: on STARD 20 and chunks told
seen from unseen questions best of 3, 5, 10 and 20, chunks or families, and the floor was read off split 1 before
the other splits were measured (bench/agreement_gate.py)."""
HEAD = 10
"""Ranks only an open gate may change: the tail (`LearnedParams.tail`) re-ranks what follows them, so a question
whose gate stays closed keeps its unlearned top `HEAD` exactly while its recall still gains from past questions."""


@dataclass(frozen=True)
class Pair:
    """One confirmed question and the chunks it confirmed; a negative weight is a rejection."""

    query: str
    chunks: tuple[str, ...]
    weight: float = 1.0


@dataclass(frozen=True)
class LearnedParams:
    """Signal weights and the gate learning applies with: a floor on the nearest past question's cosine and,
    once fitted, linear models (over `GATE_FEATURES`) of the gain (`gate_weights`) and of its prediction error
    (`gate_spread`); the gain less `caution` errors must stay above zero. `tail` weighs the signals that rank
    the candidates after the top `HEAD`, gate open or not (empty: the tail keeps its order); `candidates` is how
    many nearest confirmed questions lend the tail candidates plain retrieval did not return (`candidate_scores`;
    0: none; only for a question whose nearest confirmed one reaches the cosine floor `gate`); the tail and its
    candidates act only for a question whose nearest confirmed one reaches `tail_gate`. `adapter_blend` is how far the
    query adapter moves the dense leg's query vector (0: not at all; `orchestration.learning.choose_blend`).
    `tail_model`, when fitted, re-ranks the tail again (`skills.store.tail_model`); `notes` name a stored one that
    could not be read (it is then left out, and the tail ranks as without it). `agreement_boost` is the weight the
    head's neighbour signal gains where the nearest confirmed questions agree (`LearnedIndex.head_params`; fitted
    with the head weights, `orchestration.learning.choose`, unless config ``orchestration.feedback.agreementBoost``
    sets it; 0: off)."""

    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    gate: float = 0.9
    sharpness: float = 10.0
    neighbours: int = 5
    terms_per_word: int = 2
    gate_weights: tuple[float, ...] = ()
    gate_spread: tuple[float, ...] = ()
    caution: float = 0.0
    tail: Mapping[str, float] = field(default_factory=dict)
    candidates: int = 0
    tail_gate: float = -1.0
    adapter_blend: float = 0.0
    tail_model: Optional[TailModel] = None
    agreement_boost: float = 0.0
    notes: tuple[str, ...] = field(default=(), compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"weights": dict(self.weights), "gate": self.gate, "sharpness": self.sharpness,
                "neighbours": self.neighbours, "terms_per_word": self.terms_per_word,
                "gate_weights": list(self.gate_weights), "gate_spread": list(self.gate_spread),
                "caution": self.caution, "tail": dict(self.tail), "candidates": self.candidates,
                "tail_gate": self.tail_gate, "adapter_blend": self.adapter_blend,
                "agreement_boost": self.agreement_boost,
                **({"tail_model": self.tail_model.to_dict()} if self.tail_model is not None else {})}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "LearnedParams":
        """Returns the params of a stored `to_dict`; a stored tail model that cannot be read is left out and
        named in `notes`."""
        known = {k: data[k] for k in ("weights", "gate", "sharpness", "neighbours", "terms_per_word", "caution", "tail",
                                       "candidates", "tail_gate", "adapter_blend", "agreement_boost")
                 if k in data}
        model, notes = None, ()
        if data.get("tail_model") is not None:
            try:
                model = TailModel.from_dict(data["tail_model"])
            except StoreCorrupt as e:
                notes = (f"{e}; ranking the tail without it until the next fit",)
        return cls(**known, gate_weights=tuple(data.get("gate_weights") or ()),
                   gate_spread=tuple(data.get("gate_spread") or ()), tail_model=model, notes=notes)

    def boosted(self) -> "LearnedParams":
        """Returns these params with the head's neighbour weight raised by `agreement_boost` (what a question whose
        near confirmed questions agree is ranked with, `LearnedIndex.head_params`)."""
        if not self.agreement_boost:
            return self
        return replace(self, weights={**self.weights,
                                      "neighbours": self.weights.get("neighbours", 0.0) + self.agreement_boost})

    def vector(self, weights: Optional[Mapping[str, float]] = None) -> np.ndarray:
        """Returns `weights` (default: the head's) in `score_matrix` column order: base (1), then each signal."""
        weights = self.weights if weights is None else weights
        return np.array([1.0] + [float(weights.get(s, 0.0)) for s in SIGNALS])


@dataclass(frozen=True)
class Nearest:
    """The past questions nearest a query: their rows and cosines, best first."""

    rows: np.ndarray
    sims: np.ndarray

    @property
    def best(self) -> float:
        return float(self.sims[0]) if len(self.sims) else -1.0


class LearnedIndex:
    """The learned stores retrieval reads (see the module docstring); immutable once built, but for its memo of
    permission checks (`checked`). `notes` name what
    could not be read when it was opened (learning then goes on without it)."""

    def __init__(self, pairs: Sequence[Pair], vectors: np.ndarray, tokens: Sequence[Sequence[str]],
                 term_map: Mapping[str, Sequence[str]], params: LearnedParams,
                 families: Optional[Mapping[str, str]] = None, adapter: Optional[QueryAdapter] = None,
                 notes: Sequence[str] = (), chunk_vectors: Optional[Mapping[str, np.ndarray]] = None) -> None:
        self.pairs, self.params, self.adapter, self.notes = list(pairs), params, adapter, tuple(notes)
        self.families = dict(families or {})
        self.term_map = {t: list(alts) for t, alts in term_map.items()}
        v = np.asarray(vectors, dtype=np.float32).reshape(len(self.pairs), -1) if self.pairs \
            else np.zeros((0, 1), dtype=np.float32)
        self.vectors = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
        self.positive = np.array([p.weight > 0 for p in self.pairs], dtype=bool)
        field_tokens: dict[str, list[str]] = {}
        self.popularity: dict[str, float] = {}
        for pair, toks in zip(self.pairs, tokens):
            if pair.weight <= 0:
                continue
            for c in pair.chunks:
                field_tokens.setdefault(c, []).extend(toks)
                self.popularity[c] = self.popularity.get(c, 0.0) + pair.weight
        self.field_chunks = tuple(field_tokens)
        self.field_row = {c: i for i, c in enumerate(self.field_chunks)}
        self.expansion = Bm25Index()
        if self.field_chunks:
            self.expansion.add([field_tokens[c] for c in self.field_chunks])
            self.expansion.scores(())   # derive idf now, not inside concurrent queries
        vectors_of = dict(chunk_vectors or {})
        self.family_chunks: dict[str, tuple[str, ...]] = {}
        for c in self.field_chunks:
            if c in self.families and c in vectors_of:
                self.family_chunks[self.families[c]] = (*self.family_chunks.get(self.families[c], ()), c)
        held = [c for cs in self.family_chunks.values() for c in cs]
        self.chunk_row = {c: i for i, c in enumerate(held)}
        self.chunk_vectors = np.asarray([vectors_of[c] for c in held], dtype=np.float32) if held \
            else np.zeros((0, 1), dtype=np.float32)
        self._checked: dict[tuple, dict[str, bool]] = {}
        self._checked_lock = threading.Lock()

    def checked(self, user: Any, filters: Mapping[str, Any]) -> dict[str, bool]:
        """Returns chunk id → whether readers alike may read it (the same labels under the same filters), as
        their questions checked it (`skills.learned.reader`): a learned index serves one version of its index,
        so a chunk's labels cannot change under it, and the chunks it names are its confirmed ones (bounded)."""
        key = (tuple(user.departments), user.security_level, user.all_access,
               tuple(sorted((name, repr(value)) for name, value in filters.items())))
        with self._checked_lock:
            memo = self._checked.pop(key, None)
            self._checked[key] = memo = {} if memo is None else memo
            while len(self._checked) > READERS_KEPT:
                del self._checked[next(iter(self._checked))]
            return memo

    @property
    def empty(self) -> bool:
        return not self.positive.any()

    def size(self) -> dict[str, int]:
        """Returns how much the stores hold: pairs, question vectors' bytes, expansion chunks, term-map words."""
        return {"pairs": len(self.pairs), "vector_bytes": int(self.vectors.nbytes),
                "expansion_chunks": len(self.field_chunks), "term_map_words": len(self.term_map),
                "prior_chunks": len(self.popularity), "candidate_vector_bytes": int(self.chunk_vectors.nbytes),
                "adapter_bytes": int(self.adapter.matrix.nbytes) if self.adapter is not None else 0}

    def nearest(self, vector: np.ndarray, count: Optional[int] = None) -> Nearest:
        """Returns the `count` (default `params.neighbours`) past questions (positive ones) nearest a unit query
        vector."""
        if self.empty:
            return Nearest(np.zeros(0, dtype=np.int64), np.zeros(0))
        sims = self.vectors @ np.asarray(vector, dtype=np.float32).ravel()
        sims = np.where(self.positive, sims, -np.inf)
        k = min(self.params.neighbours if count is None else count, int(self.positive.sum()))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top], kind="stable")]
        return Nearest(top, sims[top].astype(np.float64))

    def dense_query(self, vector: np.ndarray) -> np.ndarray:
        """Returns the dense leg's query vector: `vector` moved by the query adapter when one is held and the
        nearest confirmed question reaches both the adapter's floor and the cosine floor ``params.gate``, else
        `vector` itself: a fit that found no setting safe for unseen questions closes that floor
        (`orchestration.learning.CLOSED`), and so switches the adapter off too."""
        if self.adapter is None or self.empty:
            return vector
        sims = np.where(self.positive, self.vectors @ np.asarray(vector, dtype=np.float32).ravel(), -np.inf)
        nearest = float(sims.max())
        return self.adapter.apply(vector, nearest) if nearest >= self.params.gate else vector

    def opened(self, near: Nearest) -> bool:
        """Returns whether the cosine floor lets learning act: the nearest past question is `params.gate` close."""
        return bool(near.best >= self.params.gate)

    def tailed(self, near: Nearest) -> bool:
        """Returns whether the tail acts: it has weights and the nearest past question is `params.tail_gate` close."""
        return bool(self.params.tail) and near.best >= self.params.tail_gate

    def head_params(self, vector: np.ndarray, may_read: Callable[[str], bool]) -> LearnedParams:
        """Returns the params the head ranks a unit query vector with: ``params``, their neighbour weight raised
        by ``params.agreement_boost`` when the `AGREEMENT_NEIGHBOURS` nearest confirmed questions agree at least
        `AGREEMENT_FLOOR`: where they disagree, the boost stays off. They agree only on chunks the reader
        `may_read`, so a chunk it may not read cannot change its ranking by making them agree."""
        p = self.params
        if p.agreement_boost <= 0 or self.agreeing(self.nearest(vector, AGREEMENT_NEIGHBOURS), may_read) < \
                AGREEMENT_FLOOR:
            return p
        return p.boosted()

    def agreeing(self, near: Nearest, may_read: Callable[[str], bool], sharpness: Optional[float] = None) -> float:
        """Returns the `agreement` of the first `AGREEMENT_NEIGHBOURS` of `near` over the confirmed chunks the
        reader `may_read` (at `sharpness`, default the params'), what the agreement boost reads."""
        rows = near.rows[:AGREEMENT_NEIGHBOURS]
        return agreement(near.sims[:AGREEMENT_NEIGHBOURS], [[c for c in self.pairs[i].chunks if may_read(c)]
                                                             for i in rows],
                         self.params.sharpness if sharpness is None else sharpness)

    def admits(self, features: np.ndarray) -> bool:
        """Returns whether the gate's lower confidence bound of the gain is above zero (`admits`)."""
        return admits(self.params, features)

    def neighbour_scores(self, near: Nearest, vector: np.ndarray, sharpness: Optional[float] = None
                         ) -> dict[str, float]:
        """Returns chunk → Σ weight·exp(sharpness·(cos − 1)) over the near questions (and rejections).

        The score keeps how close the past questions are, so a far neighbour
        moves its chunks little; a rejected pair as close as the nearest
        confirmed question subtracts from its chunks.
        """
        sharpness = self.params.sharpness if sharpness is None else sharpness
        out: dict[str, float] = {}
        sims = self.vectors @ np.asarray(vector, dtype=np.float32).ravel()
        rows = list(near.rows) + [i for i in np.flatnonzero(~self.positive) if sims[i] >= near.best - 0.02]
        for i in rows:
            pair = self.pairs[i]
            value = pair.weight * float(np.exp(sharpness * (min(sims[i], near.best) - 1.0)))
            for c in pair.chunks:
                out[c] = out.get(c, 0.0) + value
        return {c: s for c, s in out.items() if s > 0}

    def family_scores(self, near: Nearest, candidates: Mapping[str, str], may_read: Callable[[str], bool],
                      sharpness: Optional[float] = None) -> dict[str, float]:
        """Returns candidate chunk → the share of the near past questions, weighted as in `neighbour_scores`, whose
        confirmed chunks the reader may read include one of its family (`candidates`: chunk → family).

        Past questions rarely share an article with a new one but often its
        statute, so this lifts a retrieved article whose law answered the
        closest questions, whether or not the article itself was ever confirmed.
        """
        sharpness = self.params.sharpness if sharpness is None else sharpness
        share: dict[str, float] = {}
        total = 0.0
        for i, sim in zip(near.rows, near.sims):
            value = float(np.exp(sharpness * (sim - 1.0)))
            total += value
            for f in {self.families[c] for c in self.pairs[i].chunks if c in self.families and may_read(c)}:
                share[f] = share.get(f, 0.0) + value
        if total <= 0 or not share:
            return {}
        return {c: share[f] / total for c, f in candidates.items() if f in share}

    def candidate_scores(self, vector: np.ndarray, near: Nearest, retrieved: Mapping[str, Any],
                         may_read: Callable[[str], bool], sharpness: Optional[float] = None,
                         count: Optional[int] = None) -> dict[str, dict]:
        """Returns the candidates learning knows and plain retrieval did not return (`retrieved`), as signal →
        chunk → score: "neighbours", the chunks of the `count` (default ``params.candidates``; 0: no candidates)
        nearest confirmed questions (scored as `neighbour_scores`), and "families", the `FAMILY_CANDIDATES`
        confirmed chunks of the near questions' (`near`) families closest to the query, each its family's share
        (`family_scores`) × its cosine to the query.

        A relevant chunk that neither BM25 nor dense search found cannot be
        ranked; these can, though only after the top `HEAD` (`arrange`).
        """
        count = self.params.candidates if count is None else count
        if count <= 0 or self.empty:
            return {}
        wide = self.nearest(vector, max(count, len(near.rows)))
        neighbours = {c: s for c, s in self.neighbour_scores(wide, vector, sharpness).items()
                      if c not in retrieved and may_read(c)}
        known = {c: f for f, cs in self.family_chunks.items() for c in cs if c not in retrieved}
        share = self.family_scores(near, known, may_read, sharpness)
        ids = list(share)
        if not ids:
            return {"neighbours": neighbours, "families": {}}
        cosine = self.chunk_vectors[[self.chunk_row[c] for c in ids]] @ np.asarray(vector, dtype=np.float32).ravel()
        closest = readable_first(ids, np.argsort(-cosine, kind="stable"), may_read, FAMILY_CANDIDATES)
        return {"neighbours": neighbours,
                "families": {ids[i]: share[ids[i]] * max(float(cosine[i]), 0.0) for i in closest}}

    def expansion_scores(self, tokens: Sequence[str]) -> dict[str, float]:
        """Returns chunk → BM25 score of the query against the chunk's confirmed questions (top `EXPANSION_TOP`)."""
        if not self.field_chunks:
            return {}
        rows, scores = self.expansion.top(tokens, EXPANSION_TOP)
        return {self.field_chunks[r]: float(s) for r, s in zip(rows, scores) if s > 0}

    def field_scores(self, backend: Any, tokens: Sequence[str], lexical: Mapping[str, float], weight: float
                     ) -> dict[str, float]:
        """Returns chunk → how much its fused score would change were its confirmed questions part of its text.

        `lexical` is the unlearned BM25 list (chunk → score) that the fusion
        standardised with `weight`: a chunk's contribution is weight · (score −
        the list's minimum) / its spread, 0 below the minimum, before and after
        its text gains the questions (`IndexBackend.bm25_expanded`; empty when
        the engine cannot score that, or there is no BM25 list).
        """
        if not self.field_chunks or not lexical:
            return {}
        scores = backend.bm25_expanded(tokens, self.field_chunks, self.expansion)
        if scores is None:
            return {}
        s = np.fromiter(lexical.values(), dtype=np.float64)
        low, spread = s.min(), (s.std() if s.std() > 1e-12 else 1.0)
        before = np.full(len(self.field_chunks), low)
        for c, v in lexical.items():
            if c in self.field_row:
                before[self.field_row[c]] = max(v, low)
        change = np.maximum(np.asarray(scores, dtype=np.float64), low) - before
        return {self.field_chunks[i]: weight * float(change[i]) / spread for i in np.flatnonzero(change)}

    def prior_scores(self, chunk_ids: Sequence[str]) -> dict[str, float]:
        """Returns chunk → log(1 + confirmation weight) / log(1 + the largest) for the given (retrieved) chunks."""
        top = np.log1p(max(self.popularity.values(), default=0.0))
        return {c: float(np.log1p(self.popularity[c]) / top) for c in chunk_ids if self.popularity.get(c, 0) > 0}

    def expand(self, tokens: Sequence[str]) -> Optional[list[str]]:
        """Returns the query tokens with their mapped statute words appended, or None when no word maps."""
        per = self.params.terms_per_word
        extra = [s for t in tokens for s in self.term_map.get(t, ())[:per] if s not in tokens]
        return list(tokens) + list(dict.fromkeys(extra)) if extra else None


def readable_first(ids: Sequence[str], order: Iterable[int], may_read: Callable[[str], bool], count: int) -> list[int]:
    """Returns the first `count` positions of `order` whose chunk (`ids`) the reader may read, checking no more
    chunks than it must (a check may read the chunk from its store)."""
    taken: list[int] = []
    for i in order:
        if len(taken) == count:
            break
        if may_read(ids[i]):
            taken.append(int(i))
    return taken


def admits(p: LearnedParams, features: np.ndarray) -> bool:
    """Returns whether the gate of `p` admits a question of `GATE_FEATURES` `features`: the lower confidence bound
    of its gain is above zero (always, before a fit; never, for a model fitted over other features)."""
    if not p.gate_weights:
        return True
    if len(p.gate_weights) != len(features):      # fitted over other features: unreadable until the next fit
        return False
    spread = float(np.dot(features, p.gate_spread)) if p.gate_spread else 0.0
    return float(lower_bound(float(np.dot(features, p.gate_weights)), spread, p.caution)) > 0.0


def lower_bound(gain: Any, spread: Any, caution: float) -> Any:
    """Returns the predicted gain less `caution` predicted errors (a linear error model below zero counts as 0)."""
    return gain - caution * np.maximum(spread, 0.0)


def gate_features(near: Nearest, neighbours: Mapping[str, float], base: Sequence[tuple[str, float]],
                  nearest_chunks: Sequence[str], matrix: np.ndarray) -> np.ndarray:
    """Returns the `GATE_FEATURES` of a query from its nearest past questions, their chunks' scores, the
    unlearned ranking (chunk id, fused score), best first, the chunks the nearest question confirmed, and the
    `score_matrix` of that ranking with (at least) the `GATE_SIGNALS`."""
    sims = near.sims
    best = float(sims[0]) if len(sims) else -1.0
    total = sum(neighbours.values())
    top = max(neighbours, key=neighbours.__getitem__) if neighbours else None
    place = {c: i for i, (c, _) in enumerate(base)}
    scores = np.array([v for _, v in base], dtype=np.float64)
    spread = scores.std() if len(scores) > 1 else 0.0

    def agree(depth: int) -> float:
        return sum(v for c, v in neighbours.items() if place.get(c, depth) < depth) / total if total > 0 else 0.0
    return np.array([best, best - float(sims[1]) if len(sims) > 1 else 0.0,
                     float(sims.mean()) if len(sims) else -1.0,
                     max(neighbours.values()) / total if total > 0 else 0.0,
                     1.0 / (1 + place[top]) if top in place else 0.0,
                     (scores[0] - scores[1]) / spread if spread > 1e-12 else 0.0,
                     agree(HEAD), agree(100), float(any(place.get(c, HEAD) < HEAD for c in nearest_chunks)),
                     *signal_strengths(matrix), 1.0])


def agreement(sims: np.ndarray, confirmed: Sequence[Iterable[str]], sharpness: float) -> float:
    """Returns how far a question's near past questions (cosines `sims`, best first, and what each `confirmed`:
    chunks or their families) agree: the share of their pairs that share one, each pair weighted by both
    questions' closeness exp(sharpness·(cos − 1)); 0 with fewer than two (no vote)."""
    weights = np.exp(sharpness * (np.asarray(sims, dtype=np.float64) - 1.0))
    sets = [set(c) for c in confirmed]
    total = shared = 0.0
    for i, j in itertools.combinations(range(min(len(sets), len(weights))), 2):
        w = float(weights[i] * weights[j])
        total += w
        shared += w if sets[i] & sets[j] else 0.0
    return shared / total if total > 0 else 0.0


def signal_strengths(matrix: np.ndarray) -> tuple[float, float, float, float]:
    """Returns the largest neighbour, field and prior columns of a `score_matrix` and the share of the field's
    positive lift on its first `HEAD` rows (the unlearned top 10)."""
    if not len(matrix):
        return 0.0, 0.0, 0.0, 0.0
    column = {name: matrix[:, 1 + SIGNALS.index(name)] for name in GATE_SIGNALS}
    lift = np.maximum(column["field"], 0.0)
    return (float(column["neighbours"].max()), float(lift.max()),
            float(lift[:HEAD].sum() / lift.sum()) if lift.sum() > 0 else 0.0, float(column["prior"].max()))


def score_matrix(base: Sequence[tuple[str, float]], signals: Mapping[str, Mapping[str, float]]
                 ) -> tuple[list[str], np.ndarray]:
    """Returns the candidate chunk ids (fused order first) and their columns: standardised base, then `SIGNALS`."""
    ids = [c for c, _ in base]
    seen = set(ids)
    for name in SIGNALS:
        for c in signals.get(name, {}):
            if c not in seen:
                seen.add(c)
                ids.append(c)
    col = {c: i for i, c in enumerate(ids)}
    m = np.zeros((len(ids), 1 + len(SIGNALS)))
    std = 1.0
    if base:
        s = np.array([v for _, v in base], dtype=np.float64)
        std = s.std() if s.std() > 1e-12 else 1.0
        m[:len(base), 0] = (s - s.min()) / std
    for j, name in enumerate(SIGNALS, 1):
        values = signals.get(name) or {}
        top = max(values.values(), default=0.0) if name in RELATIVE else std if name in FUSED else 1.0
        if top > 0:
            for c, v in values.items():
                m[col[c], j] = v / top
    return ids, m


def rank(ids: Sequence[str], matrix: np.ndarray, weights: np.ndarray) -> list[tuple[str, float]]:
    """Returns (chunk id, score) best first by matrix · weights; ties keep the candidate order."""
    scores = matrix @ weights
    order = np.argsort(-scores, kind="stable")
    return [(ids[i], float(scores[i])) for i in order]


def tail_features(plain: int, ids: Sequence[str], matrix: np.ndarray, tail: Sequence[str]) -> np.ndarray:
    """Returns the `TAIL_FEATURES` rows of the chunks `tail` (the fitted tail's order, best first) of a question's
    `score_matrix` (`ids`, `matrix`, its first `plain` rows plain retrieval's, in fused order)."""
    row = {c: i for i, c in enumerate(ids)}
    at = np.array([row[c] for c in tail], dtype=np.int64)
    columns = matrix[at][:, [0, *(1 + SIGNALS.index(s) for s in TAIL_SIGNALS)]]
    neighbours, families, prior = (matrix[at, 1 + SIGNALS.index(s)] for s in ("neighbours", "families", "prior"))
    in_base = at < plain
    return np.column_stack([columns, np.where(in_base, 1.0 / (1 + at), 0.0), in_base.astype(np.float64),
                            1.0 / (1 + HEAD + np.arange(len(tail))), reciprocal_rank(neighbours) * (neighbours > 0),
                            reciprocal_rank(families), np.log1p(10 * np.maximum(prior, 0.0))])


def arrange(base: Sequence[tuple[str, float]], ids: Sequence[str], matrix: np.ndarray, params: LearnedParams,
            opened: bool) -> list[tuple[str, float]]:
    """Returns (chunk id, score) best first: the top `HEAD` by the head weights if the gate `opened`, else the
    unlearned top `HEAD` of `base` with its scores; then the other candidates of `score_matrix` (`ids`, `matrix`)
    by ``params.tail`` (in unlearned order when it is empty) and then, when fitted, ``params.tail_model``, their
    scores shifted below the head's.

    Only chunks of `base` (what plain retrieval returned, the first rows of `ids`) may take the top `HEAD`: a
    chunk that learned signals alone brought in ranks after them, and is left out when `base` is shorter than
    `HEAD`, so no confirmation can put a chunk plain retrieval did not return into the top 10.
    """
    plain = len(base)
    head = rank(ids[:plain], matrix[:plain], params.vector())[:HEAD] if opened else list(base[:HEAD])
    taken = {c for c, _ in head}
    rest = [(c, s) for c, s in rank(ids, matrix, params.vector(params.tail)) if c not in taken] \
        if len(head) == HEAD else []
    if params.tail_model is not None and params.tail and rest:
        tail = [c for c, _ in rest]
        scores = params.tail_model.order(tail_features(plain, ids, matrix, tail))
        rest = [(tail[i], float(scores[i])) for i in np.argsort(-scores, kind="stable")]
    shift = max(0.0, rest[0][1] - head[-1][1] + 1e-6) if head and rest else 0.0
    return head + [(c, s - shift) for c, s in rest]
