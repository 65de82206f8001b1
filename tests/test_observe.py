"""Streaming observes a run: terms and the trace report to the run's observer, and only the stream knows events."""
from __future__ import annotations

from lambdarag import Context, Guard, Par, Tool, Verdict
from lambdarag.observe import OBSERVER
from tests.conftest import ROOT
from tests.test_layout import imports


class Heard:
    """An observer that is not a stream: it writes down what it hears."""

    watch = frozenset({"guard"})

    def __init__(self) -> None:
        self.heard: list[tuple] = []
        self.cancelled = type("Never", (), {"is_set": staticmethod(lambda: False)})()

    def step(self, term, phase, state):
        self.heard.append(("step", term.name, phase))

    def checked(self, guard, passed, details, final):
        self.heard.append(("checked", passed, details, final))

    def fell_back(self, term, path, reason):
        self.heard.append(("fallback", term, reason))


def guard():
    draft = Tool("draft", lambda s: {"answer": s.answer + "x"}, reads=["query"], optional=["answer", "verdict"],
                 writes=["answer"])
    check = Tool("check", lambda s: {"verdict": Verdict(passed=len(s.answer) == 2, details=(s.answer,))},
                 reads=["answer"], writes=["verdict"])
    return Guard(draft, check, retry=2)


def test_a_guard_reports_each_checked_attempt_to_whatever_observes_the_run():
    heard = Heard()
    token = OBSERVER.set(heard)
    try:
        out = guard().run("q", Context())
    finally:
        OBSERVER.reset(token)
    assert out.answer == "xx"
    assert heard.heard == [("step", "guard", "start"), ("checked", False, ("x",), False),
                           ("checked", True, ("xx",), True), ("step", "guard", "end")]


def test_a_guard_in_a_branch_reports_nothing_but_its_fallbacks_are_heard():
    heard = Heard()
    other = Tool("other", lambda s: {"entities": ("e",)}, reads=["query"], writes=["entities"])
    token = OBSERVER.set(heard)
    try:
        ctx = Context()
        Par(guard(), other).run("q", ctx)
        ctx.trace.mark_fallback(("par",), "noted")
    finally:
        OBSERVER.reset(token)
    assert heard.heard == [("fallback", "par", "noted")]


def test_the_runner_trace_and_combinators_do_not_import_the_stream():
    for module in ("runtime", "trace", "combinators", "term", "tool", "observe"):
        assert not {m for m in imports(ROOT / "lambdarag" / f"{module}.py") if m.endswith("stream")}, module


def test_a_guard_that_fails_is_no_longer_followed():
    from lambdarag.errors import TermError
    from lambdarag.stream import Sink

    def broken(s):
        raise ValueError("no draft")

    failing = Guard(Tool("draft", broken, reads=["query"], optional=["verdict"], writes=["answer"]),
                    Tool("check", lambda s: {"verdict": Verdict(passed=True)}, reads=["answer"], writes=["verdict"]))
    sink = Sink()
    token = OBSERVER.set(sink)
    try:
        try:
            failing.run("q", Context())
        except TermError:
            pass
    finally:
        OBSERVER.reset(token)
    assert sink.guards == [] and sink.gate_here() is None
