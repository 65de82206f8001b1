"""Confirmed (question → chunks) items with provenance: what learned retrieval learns from, each revertible.

Stores (beside the other feedback stores, same write discipline, `files`):

- ``confirmations.json``: items by id, each with its origin (``qrels`` labelled
  pairs, ``confirm`` / ``reject`` from a person (an operator's vote, or a page vote
  approved or agreed on, `votes`), ``answer`` from a passed citation
  check over ≥ minSources sources), weight (`ORIGIN_WEIGHT`), time, the asker's
  permission scope, the query-log id it came from, its (question, chunk ids)
  pairs, and whether it was reverted;
- ``question_vectors.npz``: embeddings of confirmed questions by text digest, so
  rebuilding the learned index never re-embeds;
- ``learned_params.json``: signal weights and gate fitted by cross-validation
  (`orchestration.learning.fit`), with the fit's report;
- ``learned_generation.json``: a counter bumped by every explicit change (an item
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
from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np

from lambdarag.errors import LambdaRAGError
from skills.store.files import write_replace
from skills.store.learned import LearnedParams, Pair

from .files import JsonStore, lock_for, now

ORIGIN_WEIGHT = {"qrels": 1.0, "confirm": 1.0, "reject": -1.0, "answer": 0.5}


class Confirmations:
    """The confirmed (question → chunks) items of one index, with provenance, plus the fitted params."""

    def __init__(self, directory: Path) -> None:
        self.dir = Path(directory)
        self.store = JsonStore(self.dir / "confirmations.json")
        self.params_store = JsonStore(self.dir / "learned_params.json")
        self.vectors_path = self.dir / "question_vectors.npz"
        self.generation_store = JsonStore(self.dir / "learned_generation.json")

    def add(self, origin: str, pairs: Iterable[tuple[str, Sequence[str]]], *, scope: str = "|0",
            query_id: Optional[str] = None) -> dict[str, Any]:
        """Returns the new item holding `pairs` (question, chunk ids) with the origin's weight and provenance."""
        if origin not in ORIGIN_WEIGHT:
            raise LambdaRAGError(f"confirmation origin {origin!r} is unknown; valid: {', '.join(ORIGIN_WEIGHT)}")
        kept = [{"query": q, "chunks": list(dict.fromkeys(c))} for q, c in pairs if q.strip() and c]
        if not kept:
            raise LambdaRAGError(f"feedback {origin}: no (question, chunks) pair to confirm")
        item = {"id": f"{origin}-{uuid.uuid4().hex[:10]}", "origin": origin, "weight": ORIGIN_WEIGHT[origin],
                "time": now(), "scope": scope, "query_id": query_id, "pairs": kept, "reverted": False}
        self.store.update(lambda data: data.setdefault("items", {}).__setitem__(item["id"], item))
        if origin != "answer":
            self.bump()
        return item

    def items(self) -> dict[str, dict[str, Any]]:
        return self.store.read().get("items", {})

    def __contains__(self, item_id: str) -> bool:
        return item_id in self.items()

    def revert(self, item_id: str) -> dict[str, Any]:
        """Returns the item after marking it reverted: its pairs stop counting from the next query on."""
        item = self.items().get(item_id)
        if item is None:
            raise LambdaRAGError(f"feedback revert: no confirmation {item_id!r}")
        if item["reverted"]:
            raise LambdaRAGError(f"feedback revert: confirmation {item_id!r} was already reverted")
        self.store.update(lambda data: data["items"][item_id].update(reverted=True, reverted_at=now()))
        self.bump()
        return self.items()[item_id]

    def pairs(self) -> list[Pair]:
        """Returns the live pairs, oldest item first."""
        live = sorted((i for i in self.items().values() if not i["reverted"]), key=lambda i: i["time"])
        return [Pair(p["query"], tuple(p["chunks"]), float(i["weight"])) for i in live for p in i["pairs"]]

    def params(self) -> LearnedParams:
        """Returns the fitted params (the defaults before any fit)."""
        data = self.params_store.read()
        return LearnedParams.from_dict(data["params"]) if "params" in data else LearnedParams()

    def save_params(self, params: LearnedParams, report: Mapping[str, Any]) -> None:
        self.params_store.update(lambda data: data.update(params=params.to_dict(), report=dict(report), time=now()))
        self.bump()

    def generation(self) -> int:
        """Returns how many explicit changes the learned stores have had (see the module docstring)."""
        return int(self.generation_store.read().get("generation", 0))

    def bump(self) -> None:
        self.generation_store.update(lambda data: data.update(generation=data.get("generation", 0) + 1))

    def stamp(self) -> tuple:
        """Returns what changes whenever the learned index must be rebuilt (file modification times)."""
        return tuple(p.stat().st_mtime_ns if p.exists() else 0 for p in (self.store.path, self.params_store.path))

    def vectors(self, embedder: Any, texts: Sequence[str]) -> np.ndarray:
        """Returns the query embeddings of `texts`, embedding (and caching) only those not cached yet."""
        keys = [hashlib.sha1(t.encode("utf-8")).hexdigest() for t in texts]
        with lock_for(self.vectors_path):
            cached = dict(np.load(self.vectors_path)) if self.vectors_path.exists() else {}
            missing = [i for i, k in enumerate(keys) if k not in cached]
            if missing:
                new = embed_batches(embedder, [texts[i] for i in missing])
                cached.update({keys[i]: v for i, v in zip(missing, new)})
                path = self.vectors_path.with_suffix(".tmp.npz")
                np.savez(path, **cached)
                write_replace(self.vectors_path, path.read_bytes())
                path.unlink()
        return np.stack([cached[k] for k in keys]) if keys else np.zeros((0, 1), dtype=np.float32)


def embed_batches(embedder: Any, texts: Sequence[str], batch: int = 32) -> np.ndarray:
    """Returns query embeddings of `texts`, embedded in batches."""
    return np.concatenate([np.asarray(embedder.embed(list(texts[i:i + batch]), kind="query"), dtype=np.float32)
                           for i in range(0, len(texts), batch)])
