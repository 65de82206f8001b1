"""`SearchResult`: what one question returns, built from the lifecycle's final state and its trace."""
from __future__ import annotations

import time

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from pydantic import BaseModel, ConfigDict, Field

from lambdarag import Context, Term, Trace
from lambdarag import trace as tracing
from lambdarag.runtime import LATE_SKIPPED
from lambdarag.skills.profile import profile_of
from lambdarag.skills.store.records import Citation, Relation, RetrievalPlan


if TYPE_CHECKING:
    from .router import RouteChoice

BUDGET = "LLM budget:"
"""How a step skipped by the LLM budget names its fallback: planned, not a failure (`lambdarag.budget`)."""


Plan = RetrievalPlan
"""The frozen retrieval plan a result reports: the `RetrievalPlan` its run read (one concept, one model)."""


class Hit(BaseModel):
    """A retrieved chunk as a result shows it: where it is, its score and per-retriever ranks, its text (no access
    labels)."""

    model_config = ConfigDict(frozen=True)

    chunk_id: str
    source: str
    title: str
    section: str
    date: Optional[str]
    kind: str
    score: float
    ranks: dict[str, int]
    text: str
    instructions: list[str] = Field(default_factory=list, exclude_if=lambda found: not found)
    """Instruction-like phrases found in the text at index time; left out of the JSON when there are none."""

    @classmethod
    def of(cls, hit: Any) -> "Hit":
        """Returns the result's view of a state's hit (`skills.store.records.Hit`), its score rounded."""
        return cls(chunk_id=hit.chunk_id, source=hit.source, title=hit.title, section=hit.section, date=hit.date,
                   kind=hit.kind, score=round(hit.score, 6), ranks=hit.ranks, text=hit.text,
                   instructions=list(hit.instructions))


class Span(BaseModel):
    """One term execution as a result's trace shows it (`lambdarag.trace.Span.to_dict`, `at` printed as `path`)."""

    model_config = ConfigDict(frozen=True)

    id: int
    parent: Optional[int]
    name: str
    kind: str
    effect: str
    start_ms: float
    duration_ms: float
    cost: float
    tokens: int
    fallback: Optional[str]
    error: Optional[str]
    notes: dict[str, Any]
    path: str


class RunTrace(BaseModel):
    """The trace of a run as a result carries it (`lambdarag.Trace.to_dict`): its spans and their totals."""

    model_config = ConfigDict(frozen=True)

    spans: list[Span] = []
    latency_ms: dict[str, float] = {}
    total_ms: float = 0.0
    cost: float = 0.0
    tokens: int = 0
    fallbacks: list[dict[str, str]] = []


class SearchResult(BaseModel):
    """What one question returns: the answer and everything needed to trust and debug it."""

    model_config = ConfigDict(frozen=True)

    query: str
    rewritten_query: str
    answer: str
    citations: list[Citation]
    hits: list[Hit]
    relations: list[Relation]
    query_type: str
    classification: dict[str, Any]
    strategy: str
    expression: str
    effect_signature: str
    plan: Plan
    latency_ms: dict[str, float]
    cost: float
    fallbacks: list[dict[str, str]]
    trace: RunTrace
    index: str
    domain: str = ""
    """The corpus profile the index was searched with (skills.profile): chosen when it was built, or configured."""
    from_cache: bool = False
    answer_path: str = "route"
    """Who answered: "faq_exact" / "faq_similar" (a stored FAQ answer), "direct_reply" (no retrieval) or "route"."""
    answer_reason: str = ""
    query_id: str = ""
    llm_budget: dict[str, Any] = {}
    """How the query's LLM budget was spent: calls made and skipped, seconds per priority class (empty offline)."""
    degraded: bool = False
    """Whether a configured LLM failed or timed out on a step, so the step's offline path answered instead, the
    final check failed the answer (sentences removed, or a failed verdict), or the deadline passed before the checks
    ran (the answer is unchecked); `fallbacks` says which."""
    modes: list[dict[str, str]] = []
    """What the configuration chose, none of it a failure: no LLM configured (offline answers), a component switched
    off that no pattern asks for. `fallbacks` lists only what failed or was missing at run time."""


def classification_dict(classification: Any) -> dict[str, Any]:
    """Returns the classifier's record as a dict (empty when nothing classified)."""
    return classification.model_dump() if hasattr(classification, "model_dump") else {}


def route_taken(trace: Trace) -> Optional[tracing.Span]:
    """Returns the span of the lifecycle's strategy `Route` (the one labelled by ``route``), or None when the run
    took no route (a cached answer, a direct reply)."""
    return next((s for s in trace.spans if s.kind == "route" and s.notes.get("label") == "route"), None)


def final_check_failure(verdict: Any, trace: Trace) -> str:
    """Returns why the final check failed the answer as it was generated — claim_check removed sentences, or its
    `verdict` did not pass — or "" when it passed (the result is then not degraded on this account)."""
    removed = [s.fallback for s in trace.spans if s.name == "claim_check" and s.fallback and s.fallback != LATE_SKIPPED]
    if removed:
        return f"the final check failed the answer: {removed[-1]}"
    if verdict is not None and not verdict.passed:
        return "the final check failed the answer: " + "; ".join(verdict.details[:3])
    return ""


def skipped_late(trace: Trace) -> list[str]:
    """Returns the checks the deadline skipped (`limits.lateAnswer`): the answer they would check is unchecked."""
    return [s.name for s in trace.spans if s.fallback == LATE_SKIPPED]


def llm_failures(ctx: Context) -> list[str]:
    """Returns the fallbacks of LLM steps (offline, a Lam runs its offline path as a mode and records none)."""
    return [s.fallback for s in ctx.trace.spans if s.kind == "lam" and s.fallback]


@dataclass(frozen=True)
class Asked:
    """What a result reports that its run's state does not hold — the question as asked, the index, the
    degradations and modes setup imposed, when the question started (`time.perf_counter`) — the ``asked``
    resource of a run."""

    query: str
    index: str
    fallbacks: tuple[Mapping[str, str], ...] = ()
    modes: tuple[Mapping[str, str], ...] = ()
    started: float = 0.0


def search_result(ctx: Context, *, asked: Asked, routes: Mapping[str, "RouteChoice"], shown: Mapping[str, Term],
                  direct: Term, original_query: str, answer: str, citations: Sequence[Citation], hits: Sequence[Any],
                  relations: Sequence[Relation], query_type: Optional[str], plan: Any, verdict: Any,
                  classification: Any, route: Optional[str], answer_path: str, answer_reason: str,
                  cached_result: Optional[Mapping[str, Any]]) -> SearchResult:
    """Returns the result of a run from its final state's fields and its trace (`lifecycle.result_term` calls it,
    once per question).

    The strategy and expression are those of the route `Route` recorded
    taking (`routes` and `shown` by label, as it ran them); a stored FAQ
    answer shows the route labelled for it, a direct reply the `direct`
    term. A cached answer is the `cached_result`, its trace this run's (the
    cache hit is a step of it).
    """
    trace = ctx.trace
    latency = {**trace.latency_breakdown(), "total": round((time.perf_counter() - asked.started) * 1000, 3)}
    if cached_result is not None:
        return SearchResult(**{**cached_result, "query": asked.query, "query_id": "", "from_cache": True,
                               "trace": trace.to_dict(), "cost": trace.total_cost(), "latency_ms": latency})
    fallbacks = [dict(f) for f in asked.fallbacks]
    span = route_taken(trace)
    label = span.notes["route"] if span is not None else route
    if label is None:
        strategy, term = "direct_reply", direct
    else:
        chosen = routes[label]
        strategy, term = chosen.strategy, shown[label]
        if chosen.fallback and answer_path == "route":
            fallbacks.append({"term": "router", "path": chosen.query_type, "reason": chosen.fallback})
    if answer_path not in ("route", "direct_reply"):
        strategy = "faq_direct_answer"
    failed_check = final_check_failure(verdict, trace)
    fallbacks += trace.fallbacks()
    if failed_check:
        fallbacks.append({"term": "claim_check", "path": "degraded", "reason": failed_check})
    return SearchResult(
        query=asked.query, rewritten_query=original_query, answer=answer,
        citations=list(citations), hits=[Hit.of(h) for h in hits], relations=list(relations),
        query_type=query_type or "default", classification=classification_dict(classification),
        strategy=strategy, expression=term.form(expand=True),
        effect_signature=term.effect_signature(), plan=plan,
        latency_ms=latency, cost=trace.total_cost(),
        fallbacks=fallbacks, trace=RunTrace.model_validate(trace.to_dict()), index=asked.index,
        domain=profile_of(ctx).name,
        answer_path=answer_path, answer_reason=answer_reason,
        llm_budget=ctx.llm_budget.report() if ctx.llm_budget is not None else {},
        degraded=any(not r.startswith(BUDGET) for r in llm_failures(ctx)) or bool(failed_check or skipped_late(trace)),
        modes=[dict(m) for m in asked.modes],
    )
