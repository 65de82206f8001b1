"""BM25 (Okapi, as in `rank_bm25.BM25Okapi`) over an inverted index, and the `bm25_search` skill.

The index keeps raw term counts (a sparse docs × terms matrix) and derives idf
and length norms from them, so adding or removing documents only changes
counts. A query touches only the postings of its terms.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from lambdarag import RankedList, Term, Tool

from .corpus import to_hits
from .registry import skill


class Bm25Index:
    """Returns BM25 scores equal to `rank_bm25.BM25Okapi(k1, b, epsilon)` on the same tokens.

    Like rank_bm25, a term whose idf is negative (it occurs in more than half of
    the documents) gets the floor ``epsilon * mean idf`` instead, and a query
    term absent from the corpus adds nothing; repeated query terms count again.
    """

    def __init__(self, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        from scipy import sparse

        self.k1, self.b, self.epsilon = k1, b, epsilon
        self.vocab: dict[str, int] = {}
        self.tf = sparse.csr_matrix((0, 0), dtype=np.int32)
        self._ready = False

    @property
    def size(self) -> int:
        return self.tf.shape[0]

    def params(self) -> dict:
        return {"k1": self.k1, "b": self.b, "epsilon": self.epsilon}

    def add(self, token_lists: Sequence[Sequence[str]]) -> None:
        """Appends one row of term counts per token list (row order = call order)."""
        from scipy import sparse

        rows, cols = [], []
        for i, tokens in enumerate(token_lists):
            for t in tokens:
                j = self.vocab.get(t)
                if j is None:
                    j = self.vocab[t] = len(self.vocab)
                rows.append(i)
                cols.append(j)
        new = sparse.csr_matrix((np.ones(len(rows), dtype=np.int32), (rows, cols)),
                                shape=(len(token_lists), len(self.vocab)), dtype=np.int32)
        new.sum_duplicates()
        old = self.tf
        old.resize((old.shape[0], len(self.vocab)))
        self.tf = sparse.vstack([old, new], format="csr", dtype=np.int32)
        self._ready = False

    def keep(self, rows: np.ndarray) -> None:
        """Keeps only the given rows (in that order); terms left with no document stop counting."""
        self.tf = self.tf[rows]
        self._ready = False

    def _prepare(self) -> None:
        if self._ready:
            return
        n = self.size
        self.doc_len = np.asarray(self.tf.sum(axis=1)).ravel().astype(np.float64)
        self.avgdl = self.doc_len.sum() / n if n else 0.0
        self.csc = self.tf.tocsc()
        df = np.diff(self.csc.indptr)
        present = df > 0
        idf = np.log(n - df + 0.5) - np.log(df + 0.5)
        mean = idf[present].mean() if present.any() else 0.0
        idf[(idf < 0) & present] = self.epsilon * mean
        idf[~present] = 0.0
        self.idf = idf
        with np.errstate(divide="ignore", invalid="ignore"):
            self.norm = self.k1 * (1 - self.b + self.b * self.doc_len / self.avgdl)
        self._ready = True

    def _postings(self, token: str) -> Optional[tuple[np.ndarray, np.ndarray]]:
        j = self.vocab.get(token)
        if j is None or j >= self.csc.shape[1]:
            return None
        lo, hi = self.csc.indptr[j], self.csc.indptr[j + 1]
        rows = self.csc.indices[lo:hi]
        tf = self.csc.data[lo:hi].astype(np.float64)
        return rows, self.idf[j] * (tf * (self.k1 + 1) / (tf + self.norm[rows]))

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """Returns the score of every document (what `BM25Okapi.get_scores` returns)."""
        self._prepare()
        out = np.zeros(self.size)
        for t in tokens:
            p = self._postings(t)
            if p is not None:
                out[p[0]] += p[1]
        return out

    def top(self, tokens: Sequence[str], k: int, allowed: Optional[np.ndarray] = None) -> tuple[np.ndarray, np.ndarray]:
        """Returns (rows, scores) of the k best documents containing a query term, best first.

        Cost follows the postings of the query terms; `allowed` masks rows out
        (permission and metadata filters). Ties go to the earlier row.
        """
        self._prepare()
        acc = np.zeros(self.size)
        touched = []
        for t in tokens:
            p = self._postings(t)
            if p is not None:
                acc[p[0]] += p[1]
                touched.append(p[0])
        if not touched or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        rows = np.unique(np.concatenate(touched))
        if allowed is not None:
            rows = rows[allowed[rows]]
        scores = acc[rows]
        if len(rows) > k:
            part = np.argpartition(-scores, k - 1)[:k]
            # keep every row tied with the k-th score so the tie-break by row is exact
            cutoff = scores[part].min()
            part = np.flatnonzero(scores >= cutoff)
            rows, scores = rows[part], scores[part]
        order = np.lexsort((rows, -scores))[:k]
        return rows[order], scores[order]

    def save(self, directory: Path) -> None:
        """Writes the counts and vocabulary to `directory`."""
        terms = [""] * len(self.vocab)
        for t, j in self.vocab.items():
            terms[j] = t
        tf = self.tf
        np.savez(directory / "bm25.npz", data=tf.data, indices=tf.indices, indptr=tf.indptr, shape=np.array(tf.shape))
        (directory / "bm25.json").write_text(json.dumps({"params": self.params(), "terms": terms}, ensure_ascii=False),
                                             encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> "Bm25Index":
        """Returns the index `save` wrote to `directory`."""
        from scipy import sparse

        meta = json.loads((directory / "bm25.json").read_text(encoding="utf-8"))
        index = cls(**meta["params"])
        index.vocab = {t: j for j, t in enumerate(meta["terms"])}
        z = np.load(directory / "bm25.npz")
        index.tf = sparse.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
        return index


def expand_tokens(tokens: Sequence[str], synonyms: Mapping[str, Sequence[str]], per_term: int = 2) -> list[str]:
    """Returns the BM25 query tokens with up to `per_term` learned synonyms of each token appended."""
    extra = [s for t in tokens for s in list(synonyms.get(t, ()))[:per_term] if s not in tokens]
    return list(tokens) + list(dict.fromkeys(extra))


def _top_k(state: Any, config: Mapping[str, Any], plan_field: str) -> int:
    return int(config.get("top_k") or getattr(state.plan, plan_field))


@skill("bm25_search")
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
