"""The query's milestones in the one event family (`lambdarag.stream.Event`): classified, plan, hits, result.

`search_stream` yields them among the calculus's events (tokens, verdicts,
retractions, fallbacks), in the order they happen. The run's observer (the
`Sink`) hears the lifecycle's steps and `Announcer` turns them into
milestones; nothing outside the term computes one. Every event carries only
what the final `SearchResult` may carry: hits are the permission-filtered
hits the result holds, tokens are the answer text.
"""
from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Union

from lambdarag import State, Term
from lambdarag.stream import Checked, Event, FallbackTaken, Retract, Sink, Step, Token

from .lifecycle import direct_reply
from .result import Hit, SearchResult, classification_dict

if TYPE_CHECKING:
    from .router import RouteChoice

ANSWER_TERM = "answer_generate"
"""The answer term whose start means retrieval has finished: its input's hits are the evidence."""
FIRST_STEP = "has_history"
"""The lifecycle's first step: when it ends, the fallbacks setup imposed are told."""
RESULT_STEP = "search_result"
"""The step that builds the result: when it ends, the router's fallbacks are told."""
DIRECT = "direct_reply"
"""The strategy a question answered without retrieval reports (`lifecycle.direct_reply`)."""


class Classified(Event, kind="classified"):
    """The question's type and the route it takes: strategy, lambda expression, effect signature."""

    query_type: str
    strategy: str
    expression: str
    effect_signature: str
    classification: dict[str, Any] = field(default_factory=dict)


class Planned(Event, kind="plan"):
    """The frozen retrieval plan of the query."""

    plan: dict[str, Any]


class Evidence(Event, kind="hits"):
    """The hits retrieval produced, sent as soon as the answer term starts (before its first token)."""

    hits: list[dict[str, Any]]


class Finished(Event, kind="result"):
    """The last event: the same `SearchResult` that `search()` returns."""

    result: SearchResult

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "result": self.result.model_dump(mode="json")}


QueryEvent = Union[Classified, Planned, Evidence, Token, Checked, Retract, FallbackTaken, Finished]
"""What `search_stream` yields."""


def event_json(event: Event) -> dict[str, Any]:
    """Returns an event as a JSON-able dict with its `kind` first (the result as `SearchResult.model_dump()`)."""
    return event.as_json()


class Announcer:
    """The observer's relay from the lifecycle's steps to the query's milestones, which also fills in the ones a
    run skipped.

    The fallbacks setup imposed are told when the first step ends, the
    router's when the result is built; `classified` is heard when `detect_intent` decides on a direct reply or
    `learned_route` labels the route (described by `shown`, the lifecycle's
    route terms by label, and `routes`, their strategies); `plan` when
    `retrieval_plan` ends; `hits` when the answer term starts. A run that
    classifies nothing (a cached answer) or retrieves nothing (an FAQ or a
    direct answer) still yields `classified` and `hits` before its `result`;
    one whose answer term streamed no token gets the answer as tokens then.
    """

    def __init__(self, sink: Sink, shown: Mapping[str, Term], routes: Mapping[str, "RouteChoice"],
                 setup_fallbacks: Sequence[Mapping[str, str]] = ()) -> None:
        self.sink, self.shown, self.routes, self.setup_fallbacks = sink, shown, routes, setup_fallbacks
        self.sent: set[str] = set()
        sink.watch = sink.watch | {FIRST_STEP, "detect_intent", "learned_route", "retrieval_plan", ANSWER_TERM,
                                   RESULT_STEP}
        sink.relay = self.relay

    def relay(self, step: Step) -> Optional[Event]:
        state: State = step.state
        if step.phase != "end" and step.term != ANSWER_TERM:
            return None
        if step.term == FIRST_STEP:            # what setup degraded, before anything runs on it
            self.fell_back(self.setup_fallbacks)
        if step.term == RESULT_STEP:           # a route the router could not give as configured
            self.fell_back([f for f in state.result.fallbacks if f["term"] == "router"])
        if step.term == "detect_intent" and getattr(state, "direct", False):
            return self._once(Classified("default", DIRECT, direct_reply.form(expand=True),
                                         direct_reply.effect_signature()))
        if step.term == "learned_route":
            term = self.shown[state.route]
            return self._once(Classified(state.query_type or "default", self.routes[state.route].strategy,
                                         term.form(expand=True), term.effect_signature(),
                                         classification_dict(getattr(state, "classification", None))))
        if step.term == "retrieval_plan":
            return self._once(Planned(plan=state.plan.model_dump(mode="json")))
        if step.term == ANSWER_TERM and step.phase == "start":
            return self._once(Evidence(hits=[Hit.of(h).model_dump() for h in state.hits]))
        return None

    def fell_back(self, records: Sequence[Mapping[str, str]]) -> None:
        """Emits fallbacks decided outside a term's own run (setup, the router), as `fallback` events."""
        for f in records:
            self.sink.emit(FallbackTaken(f["term"], f["path"], f["reason"]))

    def _once(self, event: Event) -> Optional[Event]:
        if event.kind in self.sent:
            return None
        self.sent.add(event.kind)
        return event

    def emit(self, event: Event) -> None:
        """Emits a milestone once."""
        if self._once(event) is not None:
            self.sink.emit(event)

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


__all__ = ["Event", "QueryEvent", "Classified", "Planned", "Evidence", "Finished", "Token", "Checked", "Retract",
           "FallbackTaken", "event_json", "Announcer", "classification_dict"]
