"""The learned lexicon: term → {synonym: evidence count}, rows of the feedback store (``synonyms``).

Learned from query variants whose retrieval found a chunk a passed answer cites
(the words the variant swapped). `SynonymLearner` also learns the gated, revertible
term map of learned retrieval from confirmed pairs (`orchestration.learning`),
which ``lambdarag feedback learn --qrels`` feeds. `query_expand` reads it as
``ctx.resources["synonyms"]``; `skills.lexical.expand_tokens` appends it to BM25
query tokens inside `bm25_search`.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Iterable, Mapping, Optional, Sequence

from lambdarag import State
from lambdarag.skills.sentences import keywords

from .store import FeedbackStore, Tx
from .store.rows import add_evidence, synonym_terms

SYNONYMS_PER_TERM = 3


class Lexicon:
    """The learned synonyms of one knowledge base."""

    def __init__(self, store: FeedbackStore) -> None:
        self.store = store

    def terms(self) -> dict[str, dict[str, int]]:
        """Returns term → {synonym: evidence count}."""
        return self.store.read(synonym_terms)

    def synonyms(self, min_count: int = 1, terms: Optional[Mapping[str, Mapping[str, int]]] = None
                 ) -> dict[str, list[str]]:
        """Returns the learned synonym map term → [synonyms], strongest first (what `query_expand` reads), of the
        `terms` the caller read (`synonym_terms`) or read now."""
        terms = self.terms() if terms is None else terms
        out = {}
        for term, alts in terms.items():
            kept = [a for a, n in sorted(alts.items(), key=lambda x: (-x[1], x[0])) if n >= min_count]
            if kept:
                out[term] = kept[:SYNONYMS_PER_TERM]
        return out

    def add(self, pairs: Mapping[str, Mapping[str, int]], origin: str) -> int:
        """Adds evidence counts term → {synonym: n}; returns how many (term, synonym) pairs changed."""
        kept = sorted((term, alt, int(n)) for term, alts in pairs.items() for alt, n in alts.items()
                      if alt != term and n > 0)       # one order for every writer: no two upserts deadlock

        def change(tx: Tx) -> int:
            for term, alt, n in kept:
                add_evidence(tx, term, alt, n)
            tx.bump(f"origin:{origin}", len(kept))
            return len(kept)
        return self.store.write(change)

    def learn_from_answer(self, state: State) -> None:
        """Learns synonyms from the query variants whose retrieval found a chunk the (passed) answer cites."""
        cited = {c.chunk_id for c in state.citations}
        original = state.original_query or state.query
        pairs: dict[str, dict[str, int]] = {}
        for ranked in state.candidates:
            if ranked.query != original and cited & {h.chunk_id for h in ranked.hits}:
                for term, alts in variant_pairs(original, ranked.query).items():
                    pairs.setdefault(term, {}).update(alts)
        if pairs:
            self.add(pairs, "answers")


def variant_pairs(original: str, variant: str, most: int = 2) -> dict[str, dict[str, int]]:
    """Returns original word → {variant word: 1} when a variant swapped at most `most` words for others.

    Variants that add or drop words without replacing any (expansions,
    step-back queries) teach nothing about synonyms and give {}.
    """
    before, after = keywords(original), keywords(variant)
    dropped = [w for w in before if w not in after]
    added = [w for w in after if w not in before]
    if not (1 <= len(dropped) <= most and 1 <= len(added) <= most):
        return {}
    return {w: {a: 1 for a in added} for w in dropped}


class SynonymLearner:
    """Learns a layperson-word → statute-word map from labelled query–document pairs (PMI-style association).

    For a query word q and a document word d, the evidence is how often d occurs
    in the relevant documents of questions containing q, against how common d is
    in the corpus: ``lift = P(d | q's relevant docs) / P(d in corpus)``. A pair is
    kept when q occurs in at least `min_queries` questions, d in at least
    `min_share` of their relevant documents, and lift ≥ `min_lift`. A query word
    that the relevant documents themselves use that often needs no synonym and
    is skipped, as are words the question already uses.
    """

    def __init__(self, doc_freq: Mapping[str, int], n_docs: int, min_queries: int = 3, min_share: float = 0.3,
                 min_lift: float = 20.0, per_term: int = 2) -> None:
        self.df, self.n = doc_freq, max(n_docs, 1)
        self.min_queries, self.min_share, self.min_lift, self.per_term = min_queries, min_share, min_lift, per_term

    def learn(self, pairs: Iterable[tuple[Sequence[str], Sequence[Sequence[str]]]]) -> dict[str, dict[str, int]]:
        """Returns term → {synonym: evidence} from (query tokens, [relevant document tokens]) pairs."""
        q_count: Counter[str] = Counter()
        own: Counter[str] = Counter()          # questions whose relevant documents use the query word itself
        co: dict[str, Counter[str]] = {}
        for q_tokens, docs in pairs:
            q_set = set(q_tokens)
            d_set: Counter[str] = Counter()
            for tokens in docs:
                d_set.update(set(tokens))
            for q in q_set:
                q_count[q] += 1
                own[q] += q in d_set
                co.setdefault(q, Counter()).update({d: 1 for d in d_set if d not in q_set})
        out: dict[str, dict[str, int]] = {}
        for q, n in q_count.items():
            if n < self.min_queries or own[q] / n >= self.min_share:
                continue
            ranked = []
            for d, c in co[q].items():
                share = c / n
                lift = share / (self.df.get(d, 0) / self.n or 1.0 / self.n)
                if share >= self.min_share and lift >= self.min_lift and d != q:
                    ranked.append((math.log(lift) * share, d, c))
            ranked.sort(reverse=True)
            if ranked:
                out[q] = {d: c for _, d, c in ranked[:self.per_term]}
        return out
