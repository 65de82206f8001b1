"""Streaming: the events a run emits while it runs, the sink that carries them, and the release rules.

A run streams when a `Sink` is its observer (`lambdarag.observe`, `SINK`
here). The runtime, the trace and the terms report to it; nothing else
changes, so a run with a sink returns the same state as one without. The
streaming protocol is the sink's: a `Guard` only reports each checked
attempt, and the sink numbers, releases and retracts. The rules (README
"Streaming"):

* Only the main path streams tokens: `Par`/`Map` branches run with `BRANCH`
  set, so an answer term inside a branch runs as a plain call.
* Every run of a streaming answer term is an *attempt* with a number. Its
  `token` events are provisional until a passing `verdict` for that attempt
  (or the end of the run when nothing checks it). An attempt that fails —
  an invalid LLM reply, a check that rejects it — is withdrawn with a
  `retract` naming it and the reason; the retry streams afresh under a new
  number. When a term rewrites the streamed text after validation, the
  attempt is retracted and the final text streamed, so the tokens left
  standing always spell the answer the run returns.
* With ``checked_only`` tokens are held and released one unit at a time (a
  claim with its citations, or a line: `Sink.units`), each once the gate —
  the check of the innermost `Guard` running on the main path, else the
  sink's `gate` — accepts that unit alone. A unit it rejects is never released.
* `Sink.cancel()` (the consumer went away) makes the next term boundary or
  streamed chunk raise `Cancelled`; the LLM request is closed with it.
"""
from __future__ import annotations

import contextvars
import queue
import re
import threading
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, ClassVar, Iterator, Optional, dataclass_transform

from .combinators import gate_of
from .errors import LambdaRAGError
from .observe import OBSERVER, observer
from .state import State

if TYPE_CHECKING:
    from .runtime import Context
    from .paths import Path


class Cancelled(LambdaRAGError):
    """The consumer of a stream went away; the run stops at the next term boundary or streamed chunk."""


@dataclass_transform(frozen_default=True)
class Event:
    """One event of a stream: the calculus's (`Token`, `Checked`, `Retract`, `FallbackTaken`) and the query's
    milestones (`orchestration.events`) are one family; `kind` names it on the wire.

    An event is declared once, as ``class Token(Event, kind="token")`` with its fields: every subclass is a frozen
    dataclass named on the wire by its `kind`."""

    kind: ClassVar[str] = ""

    def __init_subclass__(cls, kind: str = "", **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.kind = kind or cls.kind
        dataclass(frozen=True)(cls)

    def as_json(self) -> dict[str, Any]:
        """Returns the event as a JSON-able dict with its `kind` first."""
        return {"kind": self.kind, **asdict(self)}


class Token(Event, kind="token"):
    """A piece of the answer text as it streams, provisional until its attempt's check passes."""

    text: str
    attempt: int


class Checked(Event, kind="verdict"):
    """The verdict of a `Guard`'s check on one attempt."""

    attempt: int
    passed: bool
    details: tuple[str, ...] = ()
    final: bool = False
    """True when no retry follows (passed, or retries ran out)."""


class Retract(Event, kind="retract"):
    """An attempt withdrawn: its tokens no longer stand; `text` is what it had streamed."""

    attempt: int
    text: str
    reason: str


class FallbackTaken(Event, kind="fallback"):
    """A term degraded to its fallback (or the run to a cheaper pattern), with why."""

    term: str
    path: str
    reason: str


@dataclass(frozen=True)
class Step:
    """A watched term started or ended on the main path, with the state at that moment: not an event (it is never
    queued, and has no wire form), what the sink's `relay` turns into one for the layer above."""

    term: str
    phase: str
    state: State


SINK = OBSERVER
"""The sink of the runs in this context: their observer (`lambdarag.observe`)."""
Gate = Callable[[State, "Context", "Path"], bool]
"""Says whether one unit of streamed text may be released: given the state with the unit in the streamed field,
it runs a check (`lambdarag.combinators.gate_of` builds one from a check term)."""


def lines(text: str) -> tuple[list[str], str]:
    """Returns the complete lines of streamed `text` (each with its newline) and the unfinished rest."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]], parts[-1]


@dataclass
class Sink:
    """Where a run's events go: a thread-safe queue read by the stream's consumer.

    `watch` names the terms whose start and end are reported as `Step`
    (and a `Guard`'s, which the sink follows itself); `units` splits streamed
    text into what ``checked_only`` releases; `gate` is the check used when
    no `Guard` encloses the answer term. Without `tokens` no text is streamed
    (a drained `search` wants only the result, and a plain LLM request keeps
    its exact timeout).
    """

    watch: frozenset[str] = frozenset({"guard"})
    checked_only: bool = False
    units: Callable[[str], tuple[list[str], str]] = lines
    gate: Optional[Gate] = None
    tokens: bool = True
    events: "queue.SimpleQueue[Any]" = field(default_factory=queue.SimpleQueue)
    cancelled: threading.Event = field(default_factory=threading.Event)
    attempts: int = 0
    streamed: dict[int, str] = field(default_factory=dict)
    relay: Optional[Callable[[Step], Any]] = None
    """Turns a `Step` into the event the layer above reports (or None); steps are never passed on as they are."""
    guards: list[tuple[Any, Gate]] = field(default_factory=list)
    """The Guards running on the main path, innermost last, each with the gate its check makes."""

    def emit(self, event: Any) -> None:
        """Queues `event` for the consumer; a `Step` is relayed (`relay`) and never queued as it is."""
        if isinstance(event, Step):
            event = self.relay(event) if self.relay is not None else None
            if event is None:
                return
        self.events.put(event)

    def step(self, term: Any, phase: str, state: State) -> None:
        """Hears a watched term start, end or fail on the main path: follows a Guard, relays the others' start and
        end as a `Step`."""
        if term.kind != "guard":
            if phase != "failed":
                self.emit(Step(term.name, phase, state))
        elif phase == "start":
            self.guards.append((term, gate_of(term.check, term.accept)))
        else:
            self.guards.pop()

    def checked(self, guard: Any, passed: bool, details: tuple[str, ...], final: bool) -> None:
        """Hears a Guard's check on its latest attempt: emits the verdict, and retracts an attempt a retry follows."""
        number = self.last_attempt()
        self.emit(Checked(number, passed, details, final=final))
        if not final:
            self.emit(Retract(number, self.streamed.get(number, ""),
                              "; ".join(details) or f"{guard.check.lambda_form()} rejected the attempt"))

    def fell_back(self, term: str, path: str, reason: str) -> None:
        """Hears that a term degraded to its fallback (from a branch too: fallbacks matter wherever they happen)."""
        self.emit(FallbackTaken(term, path, reason))

    def gate_here(self) -> Optional[Gate]:
        """Returns the gate of the innermost running Guard, else the sink's own."""
        return self.guards[-1][1] if self.guards else self.gate

    def last_attempt(self) -> int:
        """Returns the number of the latest attempt (0 before any)."""
        return self.attempts

    def cancel(self) -> None:
        self.cancelled.set()

    def check_cancelled(self, where: str) -> None:
        if self.cancelled.is_set():
            raise Cancelled(f"stream closed by its consumer; stopped at {where}")



def live() -> Optional[Sink]:
    """Returns the sink when this code runs on a streaming main path (not in a Par/Map branch), else None."""
    sink = observer()
    return sink if isinstance(sink, Sink) else None


def live_text() -> Optional[Sink]:
    """Returns the sink when text streams here as tokens: a streaming main path whose consumer wants them."""
    sink = live()
    return sink if sink is not None and sink.tokens else None


class Attempt:
    """One run of a streaming answer term: numbers it, releases its text as tokens, retracts it if it fails.

    `field` is the state field the text will land in; the gate (under
    ``checked_only``) checks a state with that field set to one unit.
    """

    def __init__(self, sink: Sink, field: str, state: State, ctx: "Context", path: "Path") -> None:
        sink.attempts += 1
        self.sink, self.field, self.state, self.ctx, self.path = sink, field, state, ctx, path
        self.number = sink.attempts
        self.text = ""
        self.raw = ""
        self.held = ""
        self.gate = sink.gate_here() if sink.checked_only else None

    def feed(self, text: str) -> None:
        """Streams `text` (a delta of the field's value), held back unit by unit under ``checked_only``."""
        self.sink.check_cancelled(f"term {self.path[-1]!r}")
        if not text:
            return
        self.raw += text
        if not self.sink.checked_only:
            self._release(text)
            return
        units, self.held = self.sink.units(self.held + text)
        for unit in units:
            self._release_checked(unit)

    def finish(self) -> None:
        """Flushes the last unit (under ``checked_only``)."""
        if self.held:
            self._release_checked(self.held)
            self.held = ""

    def _release(self, text: str) -> None:
        self.text += text
        self.sink.streamed[self.number] = self.text
        self.sink.emit(Token(text, self.number))

    def _release_checked(self, unit: str) -> None:
        if not unit.strip():
            self._release(unit)
            return
        if self.gate is None:
            return  # nothing can verify it: only the final result carries it
        if self.gate(self.state.model_copy(update={self.field: unit}), self.ctx, (*self.path, "gate")):
            self._release(unit)

    def retract(self, reason: str) -> None:
        """Withdraws this attempt when it released anything."""
        if self.text:
            self.sink.emit(Retract(self.number, self.text, reason))

    def replay(self, text: str) -> None:
        """Streams the whole of `text` in sentences (for text produced in one piece, e.g. an offline fallback)."""
        for piece in sentences(text):
            self.feed(piece)
        self.finish()


_SENTENCE = re.compile(r"(?<=[。！？!?；;\n])")


def sentences(text: str) -> list[str]:
    """Returns `text` cut after each sentence end or newline; the pieces join back to `text`."""
    return [p for p in _SENTENCE.split(text) if p]


class FieldText:
    """Returns, chunk by chunk, the decoded text of one string field of a JSON object being streamed.

    ``FieldText("answer").feed('{"answer": "船员')`` returns ``"船员"``; text
    before the key and after the closing quote is ignored; escapes split
    across chunks wait for their end.
    """

    _ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}

    def __init__(self, name: str) -> None:
        self.key = re.compile(r'"%s"\s*:\s*"' % re.escape(name))
        self.raw = ""
        self.pos: Optional[int] = None
        self.done = False

    def feed(self, chunk: str) -> str:
        self.raw += chunk
        if self.done:
            return ""
        if self.pos is None:
            m = self.key.search(self.raw)
            if m is None:
                return ""
            self.pos = m.end()
        out, raw, i = [], self.raw, self.pos
        while i < len(raw):
            c = raw[i]
            if c == '"':
                self.done = True
                i += 1
                break
            if c != "\\":
                out.append(c)
                i += 1
                continue
            if i + 1 >= len(raw):
                break
            e = raw[i + 1]
            if e == "u":
                if i + 6 > len(raw):
                    break
                out.append(chr(int(raw[i + 2:i + 6], 16)))
                i += 6
            else:
                out.append(self._ESCAPES.get(e, e))
                i += 2
        self.pos = i
        return "".join(out)


class Stream:
    """Returns the events `body()` emits to `sink` while it runs in a worker thread; iterate it sync or async.

    `body` runs with the sink current, in a copy of the caller's contextvars;
    its exception is raised to the consumer after the events before it.
    Leaving the loop early (closing the generator, an async task cancelled)
    cancels the run (`Sink.cancel`).
    """

    _DONE = object()

    def __init__(self, body: Callable[[], Any], sink: Sink) -> None:
        self.body, self.sink = body, sink
        self.failure: list[BaseException] = []
        self.thread: Optional[threading.Thread] = None

    def _start(self) -> None:
        def work() -> None:
            SINK.set(self.sink)
            try:
                self.body()
            except BaseException as e:  # handed to the consumer, raised there
                self.failure.append(e)
            finally:
                self.sink.emit(self._DONE)

        self.thread = threading.Thread(target=contextvars.copy_context().run, args=(work,), daemon=True,
                                       name="lambdarag-stream")
        self.thread.start()

    def _end(self) -> None:
        if self.failure:
            raise self.failure[0]

    def __iter__(self) -> Iterator[Any]:
        self._start()
        try:
            while (event := self.sink.events.get()) is not self._DONE:
                yield event
        finally:
            self.sink.cancel()
        self._end()

    async def __aiter__(self) -> AsyncIterator[Any]:
        import asyncio

        self._start()
        try:
            while (event := await asyncio.to_thread(self.sink.events.get)) is not self._DONE:
                yield event
        finally:
            self.sink.cancel()
        self._end()
