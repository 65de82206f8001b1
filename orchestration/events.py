"""The events `search_stream` yields: what the calculus streams (tokens, verdicts, retractions, fallbacks) plus
the query's own milestones (classified, plan, hits, result), in the order they happen.

Every event carries only what the final `SearchResult` may carry: hits are
the permission-filtered hits the result holds, tokens are the answer text.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Optional, Union

from lambdarag import State
from lambdarag.stream import Checked, FallbackTaken, Retract, Sink, Step, Token, event_dict

from .result import Hit, SearchResult, classification_dict

ANSWER_TERM = "answer_generate"
"""The answer term whose start means retrieval has finished: its input's hits are the evidence."""


@dataclass(frozen=True)
class Classified:
    """The question's type and the route it takes: strategy, lambda expression, effect signature."""

    kind: ClassVar[str] = "classified"
    query_type: str
    strategy: str
    expression: str
    effect_signature: str
    classification: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Planned:
    """The frozen retrieval plan of the query."""

    kind: ClassVar[str] = "plan"
    plan: dict[str, Any]


@dataclass(frozen=True)
class Evidence:
    """The hits retrieval produced, sent as soon as the answer term starts (before its first token)."""

    kind: ClassVar[str] = "hits"
    hits: list[dict[str, Any]]


@dataclass(frozen=True)
class Finished:
    """The last event: the same `SearchResult` that `search()` returns."""

    kind: ClassVar[str] = "result"
    result: SearchResult


Event = Union[Classified, Planned, Evidence, Token, Checked, Retract, FallbackTaken, Finished]


def event_json(event: Event) -> dict[str, Any]:
    """Returns an event as a JSON-able dict with its `kind` first (the result as `SearchResult.model_dump()`)."""
    if isinstance(event, Finished):
        return {"kind": event.kind, "result": event.result.model_dump(mode="json")}
    return event_dict(event)


class Announcer:
    """Turns the steps a run reports into the query's milestones, and fills in the ones a run skipped.

    `follow` says how to describe a classification (the route the state
    is labelled for, from the state the plan starts on). A run that classifies nothing (a direct
    reply, a cached answer) or retrieves nothing (an FAQ answer) still
    yields `classified` and `hits` before its `result`; one whose answer
    term streamed no token gets the answer as tokens then.
    """

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.describe: Optional[Callable[[State], Classified]] = None
        self.sent: set[str] = set()
        sink.watch = sink.watch | {"retrieval_plan", ANSWER_TERM}
        sink.relay = self.relay

    def follow(self, describe: Callable[[State], Classified]) -> None:
        """Reports `classified` when the plan starts (classification has ended), as `describe(state)` says."""
        self.describe = describe

    def emit(self, event: Event) -> None:
        """Emits a milestone once."""
        if self._once(event) is not None:
            self.sink.emit(event)

    def relay(self, step: Step) -> Optional[Event]:
        state: State = step.state
        if step.term == "retrieval_plan" and step.phase == "start" and self.describe is not None:
            return self._once(self.describe(state))
        if step.term == "retrieval_plan" and step.phase == "end":
            return self._once(Planned(plan=state.plan.model_dump(mode="json")))
        if step.term == ANSWER_TERM and step.phase == "start":
            return self._once(Evidence(hits=[Hit.of(h).model_dump() for h in state.hits]))
        return None

    def _once(self, event: Event) -> Optional[Event]:
        if event.kind in self.sent:
            return None
        self.sent.add(event.kind)
        return event

    def finish(self, result: SearchResult) -> None:
        """Emits the milestones the run skipped, the answer as tokens if none streamed, then the result."""
        self.emit(Classified(result.query_type, result.strategy, result.expression, result.effect_signature,
                             result.classification))
        self.emit(Planned(plan=result.plan.model_dump(mode="json")))
        self.emit(Evidence(hits=[h.model_dump() for h in result.hits]))
        if self.sink.attempts == 0 and not self.sink.checked_only and result.answer:
            self.sink.attempts += 1
            self.sink.emit(Token(result.answer, self.sink.attempts))
        self.sink.emit(Finished(result))


__all__ = ["Event", "Classified", "Planned", "Evidence", "Finished", "Token", "Checked", "Retract", "FallbackTaken",
           "event_json", "Announcer", "classification_dict"]
