"""The LLM budget of one query: how many calls and how many seconds its `Lam` terms may spend, and on what.

Each Lam belongs to a priority class (answer > classification > expansion >
extraction by default). The answer's share of the time and one call are kept
for it until it has run; every other class may spend at most its own share.
A call the budget cannot cover is not made: the term runs its offline path,
and the record says why. `report()` is what ``--explain`` prints.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from .errors import BudgetSkipped

ANSWER = "answer"


@dataclass(frozen=True)
class Limits:
    """The calls and seconds a query's LLM terms may spend, and each class's share of the seconds."""

    max_calls: int
    seconds: float
    shares: Mapping[str, float]
    min_call_seconds: float = 2.0


@dataclass
class LLMBudget:
    """Spends one query's LLM calls and seconds; thread-safe (terms in `Par` branches ask concurrently).

    `classes` maps a Lam name to its priority class (unknown names are
    `default_class`); `routes` maps a query type to its own `Limits`.
    """

    limits: Limits
    classes: Mapping[str, str]
    routes: Mapping[str, Limits] = field(default_factory=dict)
    default_class: str = "extraction"
    records: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def limits_for(self, query_type: Optional[str]) -> Limits:
        return self.routes.get(query_type or "", self.limits)

    def _spent(self, cls: Optional[str] = None) -> tuple[int, float]:
        mine = [r for r in self.records if r["decision"] == "called" and cls in (None, r["class"])]
        return len(mine), sum(r["seconds"] for r in mine)

    def admit(self, term: str, query_type: Optional[str], wait: float) -> float:
        """Returns how long `term`'s call may wait (at most `wait`), or raises `BudgetSkipped` saying why not.

        The whole wait counts as spent until `spent` records what the call took, so
        calls admitted concurrently (in `Par` branches) cannot overdraw the budget.
        """
        cls = self.classes.get(term, self.default_class)
        lim = self.limits_for(query_type)
        with self._lock:
            calls, seconds = self._spent()
            answer_pending = cls != ANSWER and not any(r["class"] == ANSWER for r in self.records)
            keep_calls = 1 if answer_pending else 0
            keep_seconds = lim.shares.get(ANSWER, 0.0) * lim.seconds if answer_pending else 0.0
            own = lim.seconds - seconds - keep_seconds
            if cls != ANSWER:
                own = min(own, lim.shares.get(cls, 0.0) * lim.seconds - self._spent(cls)[1])
            allowed = min(wait, own)
            record = {"term": term, "class": cls, "route": query_type or "unclassified", "wait_s": round(allowed, 2),
                      "seconds": allowed}   # committed until `spent` records what the call took
            if calls + keep_calls >= lim.max_calls:
                why = f"{calls} of {lim.max_calls} LLM calls spent" + (", 1 kept for the answer" if keep_calls else "")
            elif own < min(lim.min_call_seconds, wait):
                why = (f"{max(own, 0):.1f}s of the LLM budget left for class {cls!r} "
                       f"(< {lim.min_call_seconds:g}s per call; {lim.seconds:.0f}s in all)")
            else:
                self.records.append({**record, "decision": "called"})
                return allowed
            self.records.append({**record, "seconds": 0.0, "decision": "skipped", "reason": why})
        raise BudgetSkipped(f"LLM budget: {why}; ran the offline path without calling")

    def spent(self, term: str, started: float) -> None:
        """Records the seconds the last admitted call of `term` took (from `started`, a `time.monotonic()`)."""
        with self._lock:
            record = next(r for r in reversed(self.records) if r["term"] == term and r["decision"] == "called")
            record["seconds"] = round(time.monotonic() - started, 3)

    def report(self) -> dict[str, Any]:
        """Returns the budget and how it was spent: calls made and skipped, seconds per class."""
        with self._lock:
            calls, seconds = self._spent()
            lim = self.limits_for(self.records[-1]["route"] if self.records else None)
            classes: dict[str, float] = {}
            for r in self.records:
                if r["decision"] == "called":
                    classes[r["class"]] = round(classes.get(r["class"], 0.0) + r["seconds"], 3)
            return {"max_calls": lim.max_calls, "seconds": round(lim.seconds, 2),
                    "calls": calls, "spent_s": round(seconds, 3), "by_class_s": classes,
                    "skipped": sum(1 for r in self.records if r["decision"] == "skipped"),
                    "steps": [dict(r) for r in self.records]}
