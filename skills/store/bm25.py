"""BM25 (Okapi, as in `rank_bm25.BM25Okapi`) over an inverted index that adds and removes documents.

The index keeps raw term counts (a sparse docs × terms matrix) and derives idf
and length norms from them, so adding or removing documents only changes
counts. A query touches only the postings of its terms. The counts are kept as
plain CSR arrays and scored with numpy alone: scipy is imported only to add or
drop documents, so opening a built index and querying it do not pay its import.
Each posting's weight (its term's idf times the length-normalised count) is
derived once when the index opens or changes, so a query only gathers and adds
weights; they are computed by the same float operations a per-query formula
would use, so scores are bit-for-bit those of scoring at query time. The raw
counts stay beside the weights: scoring expanded documents (`scores_with`) needs them.
A saved index keeps the posting arrays themselves (`arrays`), so opening it maps
them instead of preparing them again; the document-major counts that adding or
removing documents needs are derived from the postings only then.
"""
from __future__ import annotations

import io
import json
from typing import Optional, Sequence

import numpy as np

from .topk import top_k


class Bm25Index:
    """Returns BM25 scores equal to `rank_bm25.BM25Okapi(k1, b, epsilon)` on the same tokens.

    Like rank_bm25, a term whose idf is negative (it occurs in more than half of
    the documents) gets the floor ``epsilon * mean idf`` instead, and a query
    term absent from the corpus adds nothing; repeated query terms count again.
    """

    def __init__(self, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self.vocab: dict[str, int] = {}
        self._csr = (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(1, dtype=np.int32), (0, 0))
        self._ready = False

    @property
    def _csr(self) -> tuple:
        """The docs × terms counts as CSR arrays (data, indices, indptr, shape), derived from the postings of an
        opened index the first time something changes it."""
        if self._counts is None:
            starts, rows, _, counts = self.postings
            n, terms = self._shape
            order = np.argsort(rows, kind="stable")     # postings are term-major: a stable sort keeps terms ascending
            self._counts = (np.asarray(counts[order], dtype=np.int32),
                            np.repeat(np.arange(terms, dtype=np.int32), np.diff(starts))[order],
                            np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))]).astype(np.int32),
                            (n, terms))
        return self._counts

    @_csr.setter
    def _csr(self, value: tuple) -> None:
        self._counts = value
        self._shape = tuple(value[3])

    @property
    def size(self) -> int:
        return self._shape[0]

    @property
    def tf(self):
        """Returns the docs × terms counts as a scipy CSR matrix."""
        from scipy import sparse

        data, indices, indptr, shape = self._csr
        return sparse.csr_matrix((data, indices, indptr), shape=shape)

    @tf.setter
    def tf(self, matrix) -> None:
        self._csr = (matrix.data, matrix.indices, matrix.indptr, tuple(matrix.shape))

    def params(self) -> dict:
        return {"k1": self.k1, "b": self.b, "epsilon": self.epsilon}

    def add(self, token_lists: Sequence[Sequence[str]]) -> None:
        """Appends one row of term counts per token list (row order = call order)."""
        new = self._rows(token_lists)
        self.tf = self._stacked([self._widened(), new])
        self._ready = False

    def spliced(self, start: int, stop: int, token_lists: Sequence[Sequence[str]]) -> "Bm25Index":
        """Returns a copy whose rows `start:stop` are replaced by one row per token list; the other rows keep their
        counts, so only the new texts are tokenised (a wiki page rewritten, added or removed). The copy leaves this
        index untouched for readers still scoring with it."""
        out = Bm25Index(self.k1, self.b, self.epsilon)
        out.vocab = dict(self.vocab)
        new = out._rows(token_lists)
        old = out._widened(self.tf)
        out.tf = self._stacked([old[:start], new, old[stop:]])
        return out

    def _rows(self, token_lists: Sequence[Sequence[str]]):
        """Returns the counts of the token lists as CSR rows, adding their new terms to the vocabulary."""
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
        return new

    def _widened(self, matrix=None):
        """Returns (a copy of) the counts with a column for every term of the vocabulary."""
        old = (self.tf if matrix is None else matrix).copy()
        old.resize((old.shape[0], len(self.vocab)))
        return old

    @staticmethod
    def _stacked(parts):
        from scipy import sparse

        return sparse.vstack(parts, format="csr", dtype=np.int32)

    @classmethod
    def of(cls, token_lists: Sequence[Sequence[str]], **params: float) -> "Bm25Index":
        """Returns an index of these token lists (one row each) built with numpy alone: what `add` builds, for a
        small throwaway corpus (the sentences of one answer) without importing scipy."""
        from collections import Counter

        index = cls(**params)
        data: list[int] = []
        indices: list[int] = []
        indptr = [0]
        for tokens in token_lists:
            counts = Counter(index.vocab.setdefault(t, len(index.vocab)) for t in tokens)
            for j in sorted(counts):
                indices.append(j)
                data.append(counts[j])
            indptr.append(len(indices))
        index._csr = (np.array(data, dtype=np.int32), np.array(indices, dtype=np.int32),
                      np.array(indptr, dtype=np.int32), (len(token_lists), len(index.vocab)))
        return index

    def grouped(self, groups: np.ndarray, n: int) -> "Bm25Index":
        """Returns an index of `n` rows whose row g holds the summed term counts of this index's rows in group g
        (`groups[row]`, -1 for none): whole documents from their chunks' counts, with no text tokenised again."""
        self._prepare()
        starts, rows, _, counts = self.postings
        terms = len(starts) - 1
        group = np.asarray(groups, dtype=np.int64)[rows]
        kept = group >= 0
        key = group[kept] * terms + np.repeat(np.arange(terms, dtype=np.int64), np.diff(starts))[kept]
        order = np.argsort(key, kind="stable")
        cells, first = np.unique(key[order], return_index=True)
        data = np.add.reduceat(np.asarray(counts, dtype=np.int64)[kept][order], first) if len(cells) else cells
        out = Bm25Index(**self.params())
        out.vocab = dict(self.vocab)
        out._csr = (data.astype(np.int32), (cells % terms).astype(np.int32),
                    np.concatenate([[0], np.cumsum(np.bincount(cells // terms, minlength=n))]).astype(np.int32),
                    (n, terms))
        return out

    def keep(self, rows: np.ndarray) -> None:
        """Keeps only the given rows (in that order); terms left with no document stop counting."""
        self.tf = self.tf[rows]
        self._ready = False

    def _prepare(self) -> None:
        if self._ready:
            return
        data, indices, indptr, (n, terms) = self._csr
        row = np.repeat(np.arange(n), np.diff(indptr))
        self.doc_len = np.bincount(row, weights=data, minlength=n).astype(np.float64)
        self.avgdl = self.doc_len.sum() / n if n else 0.0
        order = np.argsort(indices, kind="stable")  # CSR → CSC: postings per term, rows ascending
        df = np.bincount(indices, minlength=terms)
        present = df > 0
        idf = np.log(n - df + 0.5) - np.log(df + 0.5)
        mean = idf[present].mean() if present.any() else 0.0
        idf[(idf < 0) & present] = self.epsilon * mean
        idf[~present] = 0.0
        self.idf = idf
        with np.errstate(divide="ignore", invalid="ignore"):
            self.norm = self.k1 * (1 - self.b + self.b * self.doc_len / self.avgdl)
        rows, counts = row[order], data[order]
        tf = counts.astype(np.float64)
        weights = idf[np.repeat(np.arange(terms), df)] * (tf * (self.k1 + 1) / (tf + self.norm[rows]))
        self.postings = (np.concatenate([[0], np.cumsum(df)]), rows, weights, counts)
        self._ready = True

    def _span(self, token: str) -> Optional[slice]:
        """Returns where `token`'s postings lie in the posting arrays, or None when no document holds it."""
        j = self.vocab.get(token)
        starts = self.postings[0]
        if j is None or j >= len(starts) - 1 or starts[j] == starts[j + 1]:
            return None
        return slice(starts[j], starts[j + 1])

    def _postings(self, token: str) -> Optional[tuple[np.ndarray, np.ndarray]]:
        """Returns the rows containing `token` (ascending) and its BM25 weight in each, or None when none does."""
        span = self._span(token)
        return None if span is None else (self.postings[1][span], self.postings[2][span])

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """Returns the score of every document (what `BM25Okapi.get_scores` returns)."""
        self._prepare()
        out = np.zeros(self.size)
        for t in tokens:
            p = self._postings(t)
            if p is not None:
                out[p[0]] += p[1]
        return out

    def counts(self, token: str) -> Optional[tuple[np.ndarray, np.ndarray]]:
        """Returns (rows ascending, term counts) of the documents holding `token`, or None when none does."""
        self._prepare()
        span = self._span(token)
        return None if span is None else (self.postings[1][span], self.postings[3][span])

    def scores_with(self, tokens: Sequence[str], rows: np.ndarray, extra: "Bm25Index") -> np.ndarray:
        """Returns the scores `rows` would have if row i's text also held the terms of `extra`'s row i.

        What BM25 document expansion scores (words of other texts appended to a
        few documents) without rebuilding the index: idf and the average length
        stay the index's, which a few expanded rows barely move; a term the
        index lacks gets the idf its document frequency in `extra` would give.
        """
        self._prepare()
        extra._prepare()
        rows = np.asarray(rows, dtype=np.int64)
        added = extra.doc_len if extra.size else np.zeros(len(rows))
        norm = self.k1 * (1 - self.b + self.b * (self.doc_len[rows] + added) / self.avgdl)
        out = np.zeros(len(rows))
        for t in tokens:
            tf = np.zeros(len(rows))
            more = extra.counts(t) if extra.size else None
            if more is not None:
                tf[more[0]] += more[1]
            held = self.counts(t)
            if held is not None:
                at = np.minimum(np.searchsorted(held[0], rows), len(held[0]) - 1)
                tf += np.where(held[0][at] == rows, held[1][at], 0)
                idf = self.idf[self.vocab[t]]
            else:
                df = np.count_nonzero(tf)
                idf = np.log(self.size - df + 0.5) - np.log(df + 0.5)
            out += idf * (tf * (self.k1 + 1) / (tf + norm))
        return out

    def top(self, tokens: Sequence[str], k: int, allowed: Optional[np.ndarray] = None) -> tuple[np.ndarray, np.ndarray]:
        """Returns (rows, scores) of the k best documents containing a query term, best first.

        Cost follows the postings of the query terms; `allowed` masks rows out
        (permission and metadata filters). Ties go to the earlier row.
        """
        self._prepare()
        acc = np.zeros(self.size)
        touched = np.zeros(self.size, dtype=bool)   # a mask, not a sort of the postings: common terms touch most rows
        for t in tokens:
            p = self._postings(t)
            if p is not None:
                acc[p[0]] += p[1]
                touched[p[0]] = True
        if allowed is not None:
            touched &= allowed
        rows = np.flatnonzero(touched)
        if not len(rows) or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        return top_k(rows, acc[rows], k)

    def dump(self) -> tuple[bytes, bytes]:
        """Returns the vocabulary (JSON) and the counts (npz) as bytes, for the index to write in one generation."""
        terms = [""] * len(self.vocab)
        for t, j in self.vocab.items():
            terms[j] = t
        data, indices, indptr, shape = self._csr
        counts = io.BytesIO()
        np.savez(counts, data=data, indices=indices, indptr=indptr, shape=np.array(shape))
        meta = json.dumps({"params": self.params(), "terms": terms}, ensure_ascii=False).encode("utf-8")
        return meta, counts.getvalue()

    def arrays(self) -> tuple[dict, dict[str, np.ndarray]]:
        """Returns what `from_arrays` opens: the parameters, terms and sizes (JSON-able) and the prepared arrays."""
        self._prepare()
        terms = [""] * len(self.vocab)
        for t, j in self.vocab.items():
            terms[j] = t
        starts, rows, weights, counts = self.postings
        meta = {"params": self.params(), "terms": terms, "shape": list(self._shape), "avgdl": float(self.avgdl)}
        return meta, {"starts": starts, "rows": rows, "weights": weights, "counts": counts, "doclen": self.doc_len,
                      "idf": self.idf}

    @classmethod
    def from_arrays(cls, meta: dict, arrays: dict[str, np.ndarray]) -> "Bm25Index":
        """Returns the prepared index `arrays` described; the arrays may be memory-mapped (nothing is recomputed)."""
        index = cls(**meta["params"])
        index.vocab = {t: j for j, t in enumerate(meta["terms"])}
        index._counts, index._shape = None, tuple(meta["shape"])
        index.doc_len, index.avgdl, index.idf = arrays["doclen"], meta["avgdl"], arrays["idf"]
        index.postings = (arrays["starts"], arrays["rows"], arrays["weights"], arrays["counts"])
        index._ready = True
        return index

    @classmethod
    def from_dump(cls, meta: bytes, counts: bytes) -> "Bm25Index":
        """Returns the index `dump` described."""
        info = json.loads(meta.decode("utf-8"))
        index = cls(**info["params"])
        index.vocab = {t: j for j, t in enumerate(info["terms"])}
        z = np.load(io.BytesIO(counts))
        index._csr = (z["data"], z["indices"], z["indptr"], tuple(int(x) for x in z["shape"]))
        return index
