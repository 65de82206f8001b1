"""Confirmed (question → chunks) items with provenance: what learned retrieval learns from, each revertible.

Rows of the feedback store (`store`):

- items of kind ``confirmation``, one row each: its origin (``qrels`` labelled
  pairs, ``confirm`` / ``reject`` from a person (an operator's vote, or a page vote
  approved or agreed on, `votes`), ``answer`` from a passed citation
  check over ≥ minSources sources), weight (`ORIGIN_WEIGHT`), time, the asker's
  permission scope, the query-log id it came from, its (question, chunk ids)
  pairs, and whether it was reverted;
- ``vectors``: one row per confirmed question's embedding, by text digest, so
  rebuilding the learned index never re-embeds;
- the document ``learned_params``: signal weights and gate fitted by cross-validation
  (`orchestration.learning.fit`), with the fit's report and the term map it learned;
- the query adapter's map that fit learned (`skills.store.adapter`), in the ``vectors`` table
  under `ADAPTER`, written in the same transaction as that document, which records its
  generation and dimension;
- the counter ``changes``, bumped by every add, revert and refit: what `stamp` reads to
  tell a server that another one changed what it learned;
- the counter ``generation``, bumped by every explicit change (an item
  of origin qrels / confirm / reject, a revert, a refit), which the query cache's
  version carries, so such a change retires the cached answers it could change.
  An ``answer`` item does not bump it: it confirms what was just answered, and
  otherwise every answer would empty the cache.

Scope is recorded, not used to widen access: retrieval filters every learned
chunk by the asking user's labels, so a confirmation never makes a restricted
chunk reachable to others.
"""
from __future__ import annotations

import hashlib
import uuid
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from lambdarag.errors import LambdaRAGError, StoreCorrupt
from lambdarag.skills.store.learned import LearnedParams, Pair

from .store import FeedbackStore, Tx, now, open_store
from .store.rows import CONFIRMATION, put_confirmation, put_vector, stored_matrix, stored_vectors

ORIGIN_WEIGHT = {"qrels": 1.0, "confirm": 1.0, "reject": -1.0, "answer": 0.5}
ADAPTER = "query_adapter"
"""The query adapter's key in the vectors table (question vectors are keyed by 40-hex digests)."""


class Confirmations:
    """The confirmed (question → chunks) items of one index, with provenance, plus the fitted params."""

    def __init__(self, where: Union[FeedbackStore, Path, str]) -> None:
        self.store = where if isinstance(where, FeedbackStore) else open_store(where)

    def add(self, origin: str, pairs: Iterable[tuple[str, Sequence[str]]], *, scope: str = "|0",
            query_id: Optional[str] = None, vectors: Optional[Mapping[str, np.ndarray]] = None) -> dict[str, Any]:
        """Returns the new item holding `pairs` (question, chunk ids) with the origin's weight and provenance;
        `vectors` (question → its query embedding, already at hand) are stored with it, so the learned index
        rebuilt for the next query need not embed them again."""
        item = new_item(origin, pairs, scope=scope, query_id=query_id)

        def change(tx: Tx) -> None:
            put_confirmation(tx, item)
            for question, vector in (vectors or {}).items():
                put_vector(tx, vector_key(question), vector)
        self.store.write(change)
        return item

    def items(self) -> dict[str, dict[str, Any]]:
        return self.store.read(lambda tx: tx.items(CONFIRMATION))

    def __contains__(self, item_id: str) -> bool:
        return self.store.read(lambda tx: tx.item(CONFIRMATION, item_id)) is not None

    def revert(self, item_id: str) -> dict[str, Any]:
        """Returns the item after marking it reverted: its pairs stop counting from the next query on."""
        def change(tx: Tx) -> dict[str, Any]:
            item = tx.item(CONFIRMATION, item_id, lock=True)
            if item is None:
                raise LambdaRAGError(f"feedback revert: no confirmation {item_id!r}")
            if item["reverted"]:
                raise LambdaRAGError(f"feedback revert: confirmation {item_id!r} was already reverted")
            item.update(reverted=True, reverted_at=now())
            tx.put_item(CONFIRMATION, item_id, item, "reverted")
            tx.bump("changes")
            tx.bump("generation")
            return item
        return self.store.write(change)

    def pairs(self) -> list[Pair]:
        """Returns the live pairs, oldest item first."""
        live = sorted(self.store.read(lambda tx: tx.items(CONFIRMATION, "live")).values(), key=lambda i: i["time"])
        return [Pair(p["query"], tuple(p["chunks"]), float(i["weight"])) for i in live for p in i["pairs"]]

    def params(self) -> LearnedParams:
        """Returns the fitted params (the defaults before any fit)."""
        data = self.store.read(lambda tx: tx.document("learned_params"))
        return LearnedParams.from_dict(data["params"]) if "params" in data else LearnedParams()

    def save_params(self, params: LearnedParams, report: Mapping[str, Any],
                    term_map: Optional[Mapping[str, Sequence[str]]] = None, adapter: Optional[np.ndarray] = None
                    ) -> None:
        """Stores the fitted params and the fit's report, and the term map and query adapter the fit learned from
        the live pairs (valid until the next explicit change: `term_map`, `adapter`), in one transaction."""
        def change(tx: Tx) -> None:
            tx.bump("changes")
            generation = tx.bump("generation")
            if adapter is not None:
                put_vector(tx, ADAPTER, adapter, replace=True)
            tx.put_document("learned_params", {"params": params.to_dict(), "report": dict(report), "time": now(),
                                               **({"term_map": dict(term_map), "term_map_generation": generation}
                                                  if term_map is not None else {}),
                                               **({"adapter_generation": generation,
                                                   "adapter_dimension": int(adapter.shape[0])}
                                                  if adapter is not None else {})})
        self.store.write(change)

    def adapter(self) -> Optional[np.ndarray]:
        """Returns the query adapter's map the last fit stored when no explicit change came after it, else None
        (as `term_map`); raises StoreCorrupt, naming the row, when the one stored for this generation is missing
        or unreadable."""
        def read(tx: Tx) -> Optional[np.ndarray]:
            data = tx.document("learned_params")
            generation = tx.counter("generation")
            if data.get("adapter_generation") != generation:
                return None
            matrix = stored_matrix(tx, ADAPTER)
            if matrix is None or matrix.shape[0] != data.get("adapter_dimension"):
                raise StoreCorrupt(f"learned state: the query adapter of generation {generation} (row "
                                   f"vectors/{ADAPTER} of {self.store!r}) is missing or not a finite "
                                   f"{data.get('adapter_dimension')}-square float32 matrix; searching without it "
                                   f"until the next refit or explicit change")
            return matrix
        return self.store.read(read)

    def term_map(self) -> Optional[dict[str, list[str]]]:
        """Returns the term map the last fit stored when no explicit change (`generation`) came after it, else None:
        a process's first question then reads it instead of learning it again; an answer confirmation leaves it
        standing until the next explicit change."""
        def read(tx: Tx) -> Optional[dict[str, list[str]]]:
            data = tx.document("learned_params")
            fresh = "term_map" in data and data.get("term_map_generation") == tx.counter("generation")
            return {t: list(a) for t, a in data["term_map"].items()} if fresh else None
        return self.store.read(read)

    def generation(self) -> int:
        """Returns how many explicit changes the learned stores have had (see the module docstring)."""
        return self.store.read(lambda tx: tx.counter("generation"))

    def stamp(self) -> tuple:
        """Returns what changes whenever the learned index must be rebuilt: the ``changes`` counter, which every
        server sharing the store reads (one row)."""
        return (self.store.read(lambda tx: tx.counter("changes")),)

    def vectors(self, embedder: Any, texts: Sequence[str]) -> np.ndarray:
        """Returns the query embeddings of `texts`, embedding (and storing) only those not stored yet."""
        keys = [vector_key(t) for t in texts]
        cached = stored_vectors(self.store, list(dict.fromkeys(keys)))
        missing = [i for i, k in enumerate(keys) if k not in cached]
        if missing:
            new = embed_batches(embedder, [texts[i] for i in missing])
            fresh = {keys[i]: np.asarray(v, dtype=np.float32) for i, v in zip(missing, new)}
            self.store.write(lambda tx: [put_vector(tx, k, v) for k, v in fresh.items()])
            cached.update(fresh)
        return np.stack([cached[k] for k in keys]) if keys else np.zeros((0, 1), dtype=np.float32)


def vector_key(question: str) -> str:
    """Returns the key a question's vector is stored under: its text's digest."""
    return hashlib.sha1(question.encode("utf-8")).hexdigest()


def new_item(origin: str, pairs: Iterable[tuple[str, Sequence[str]]], *, scope: str,
             query_id: Optional[str]) -> dict[str, Any]:
    """Returns a confirmation item of `pairs` (question, chunk ids) with the origin's weight and provenance."""
    if origin not in ORIGIN_WEIGHT:
        raise LambdaRAGError(f"confirmation origin {origin!r} is unknown; valid: {', '.join(ORIGIN_WEIGHT)}")
    kept = [{"query": q, "chunks": list(dict.fromkeys(c))} for q, c in pairs if q.strip() and c]
    if not kept:
        raise LambdaRAGError(f"feedback {origin}: no (question, chunks) pair to confirm")
    return {"id": f"{origin}-{uuid.uuid4().hex[:10]}", "origin": origin, "weight": ORIGIN_WEIGHT[origin],
            "time": now(), "scope": scope, "query_id": query_id, "pairs": kept, "reverted": False}


def embed_batches(embedder: Any, texts: Sequence[str], batch: int = 32) -> np.ndarray:
    """Returns query embeddings of `texts`, embedded in batches."""
    return np.concatenate([np.asarray(embedder.embed(list(texts[i:i + batch]), kind="query"), dtype=np.float32)
                           for i in range(0, len(texts), batch)])
