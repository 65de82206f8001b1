"""Routing statistics: rows of the feedback store (``routing``), per query type × strategy: total, successes (the
answer cites and passes citation_check), summed latency and cost, each count one upsert.

Adaptive routing. Candidates of a type are its configured strategy (a fan-out when
several patterns are listed) and, for a fan-out, each pattern alone
(`router.candidates`). With ``u`` = a hash of (seed, query, type) mapped to [0, 1):
if ``u < explore`` the least-tried candidate runs ("explore"); otherwise, once every
candidate has ``minSamples`` runs, the best score wins, where
``score = 0.7·success_rate + 0.2·(fastest mean latency / mean latency)
+ 0.1·(cheapest mean cost / mean cost)`` (a cost term of 1 when costs are 0);
otherwise the configured strategy runs. The same query always routes the same way
for the same statistics, so tests are reproducible.
"""
from __future__ import annotations

import hashlib
from typing import Mapping, Sequence

from ..config import QUERY_TYPES, AgentConfig, FeedbackConfig
from ..router import candidates
from .store import FeedbackStore
from .store.rows import add_runs, routing_table

WEIGHTS = (0.7, 0.2, 0.1)   # success, speed, cost in the routing score (see the module docstring)


class RoutingStats:
    """How each strategy did per query type, and the adaptive choice it implies."""

    def __init__(self, store: FeedbackStore, config: FeedbackConfig, seed: str = "lambdarag") -> None:
        self.store, self.config, self.seed = store, config, seed

    def picks(self, config: AgentConfig, query: str) -> dict[str, tuple[tuple[str, ...], str]]:
        """Returns, per query type with several candidates, the strategies to run for `query` and why."""
        if not config.orchestration.routing.adaptive:
            return {}
        stats = self.table()
        picks = {}
        for query_type in QUERY_TYPES:
            options = candidates(config, query_type)
            if len(options) > 1:
                picks[query_type] = self.pick(query_type, options, stats.get(query_type, {}), query)
        return picks

    def pick(self, query_type: str, options: Sequence[tuple[str, ...]], stats: Mapping[str, Mapping[str, float]],
             query: str) -> tuple[tuple[str, ...], str]:
        """Returns (strategy, reason) for one type by the rule in the module docstring."""
        runs = {o: stats.get("+".join(o), {}) for o in options}
        if unit_hash(self.seed, query, query_type) < self.config.explore:
            least = min(options, key=lambda o: runs[o].get("total", 0))
            return least, f"adaptive: explore ({runs[least].get('total', 0)} runs so far)"
        if any(runs[o].get("total", 0) < self.config.min_samples for o in options):
            return options[0], f"configured: fewer than minSamples={self.config.min_samples} runs of some candidate"
        scores = routing_scores(runs)
        best = max(options, key=lambda o: (scores[o], -options.index(o)))
        return best, "adaptive: " + ", ".join(f"{'+'.join(o)}={scores[o]:.3f}" for o in options)

    def count(self, query_type: str, strategy: str, ok: bool, latency: float, cost: float) -> None:
        self.store.write(lambda tx: add_runs(tx, query_type, strategy, 1, int(ok), latency, cost))

    def table(self) -> dict[str, dict[str, dict[str, float]]]:
        """Returns query type → strategy → {total, success, latency_ms, cost}."""
        return self.store.read(routing_table)


def routing_scores(runs: Mapping[tuple[str, ...], Mapping[str, float]]) -> dict[tuple[str, ...], float]:
    """Returns the routing score of each candidate (weights in `WEIGHTS`; see the module docstring)."""
    mean = {o: (r["latency_ms"] / r["total"], r["cost"] / r["total"], r["success"] / r["total"]) for o, r in runs.items()}
    fastest = min(m[0] for m in mean.values())
    cheapest = min(m[1] for m in mean.values())
    w_ok, w_fast, w_cheap = WEIGHTS
    return {o: w_ok * ok + w_fast * (fastest / lat if lat > 0 else 1.0) + w_cheap * (cheapest / cost if cost > 0 else 1.0)
            for o, (lat, cost, ok) in mean.items()}


def unit_hash(*parts: str) -> float:
    """Returns a number in [0, 1) fixed by `parts` (deterministic exploration)."""
    digest = hashlib.sha1("\0".join(parts).encode("utf-8")).hexdigest()
    return int(digest[:12], 16) / float(16 ** 12)
