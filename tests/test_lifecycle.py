"""The query lifecycle is one term: its printed form shows every step, and the result is read from its run."""
from __future__ import annotations

import json
import re

from lambdarag import Tool
from lambdarag.orchestration import router
from lambdarag.orchestration.cli import main
from lambdarag.orchestration.feedback.store import open_store
from lambdarag.orchestration.lifecycle import unified_term
from lambdarag.orchestration.search_unified import search
from tests.test_feedback import COMPARE_Q, home, kb  # noqa: F401  (fixtures)
from tests.test_search import config_with

STEPS = ("has_history", "rewrite_plan", "query_expand", "standalone_rewrite", "query_cache", "detect_intent",
         "retrieval_plan", "direct_reply", "classify", "learned_route", "faq_direct_answer", "Route(", "search_result",
         "record_feedback")


def test_the_printed_lifecycle_shows_every_step_in_the_order_it_runs():
    form = str(unified_term(config_with(), faq=True).term)
    assert form.startswith("λq. If(has_history, rewrite_plan >> query_expand(q, _) >> standalone_rewrite(q, _), "
                           "identity) >> If(query_cache, identity, If(detect_intent, retrieval_plan >> direct_reply, "
                           "classify(")
    at = [form.index(step) for step in STEPS]
    assert at == sorted(at), form
    assert "learned_route >> retrieval_plan >> If(faq_direct_answer(q, _), identity, Route(identity, {fact: " in form
    assert form.endswith(", on=faq_hit), on=direct), on=cache_hit) >> search_result >> record_feedback(q, _)")


def test_ask_explain_prints_the_lifecycle_term(capsys):
    assert main(["ask", "--explain", COMPARE_Q]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("lifecycle: "))
    assert all(step in line for step in STEPS), line


def test_the_strategy_is_the_route_the_route_term_recorded_not_one_inferred_from_the_final_type(monkeypatch):
    """A route that relabels the question after it ran (here compare → temporal) is still reported as the route
    that ran: the result reads the Route's record, not the type the state ends with."""
    answered = router.with_answer
    relabel = Tool("relabel", lambda s: {"query_type": "temporal"}, reads=["query"], writes=["query_type"])
    monkeypatch.setattr(router, "with_answer",
                        lambda term: answered(term) >> relabel if "side_search" in term.form(expand=True) else answered(term))
    r = search(COMPARE_Q, config=config_with(retrieval__skills__embedding__enabled=False))
    assert r.query_type == "temporal"             # the state's last word on the type
    assert r.strategy == "compare_search" and "side_search" in r.expression
    route = next(s for s in r.trace.spans if s.kind == "route" and s.notes.get("label") == "route")
    assert route.notes["route"] == "compare"


def test_a_cache_hit_is_a_step_of_the_trace_and_feedback_is_recorded_by_the_term(kb):  # noqa: F811
    make, _, fb = kb
    config, _ = make(cacheAfter=1)
    first = search(COMPARE_Q, config=config)
    steps = [s.name for s in first.trace.spans]
    assert "record_feedback" in steps and "feedback" not in steps
    recorded = next(s for s in first.trace.spans if s.name == "record_feedback")
    assert recorded.kind == "tool" and recorded.path.endswith("Compose[3] › record_feedback")
    log = open_store(fb).log("query_log").records()
    assert [r["query_id"] for r in log] == [first.query_id] and first.query_id
    again = search(COMPARE_Q, config=config)
    assert again.from_cache and again.answer == first.answer and again.strategy == first.strategy
    spans = {s.name: s for s in again.trace.spans}
    assert spans["if"].notes["branch"] == "then"          # the cache answered: intent, route and plan skipped
    assert "query_cache" in spans and "record_feedback" in spans and "retrieval_plan" not in spans
    assert [r["from_cache"] for r in open_store(fb).log("query_log").records()] == [False, True]
    assert re.fullmatch(r"q\d{14}-[0-9a-f]{8}", again.query_id) and again.query_id != first.query_id
    assert again.trace.model_dump_json()


def counting(monkeypatch, cls) -> list:
    """Counts the constructions of `cls` from now on (its `__init__` still runs)."""
    made, init = [], cls.__init__

    def counted(self, *args, **kwargs):
        made.append(self)
        init(self, *args, **kwargs)

    monkeypatch.setattr(cls, "__init__", counted)
    return made


def test_setup_runs_once_per_config_and_index_not_per_question(kb, home, tmp_path, monkeypatch):  # noqa: F811
    """100 questions (the first 8 at once) build one feedback loop; a second index, or a changed config, one more
    each; the learned rules are still read per question (a rule learned now is used by the next one)."""
    from concurrent.futures import ThreadPoolExecutor

    from lambdarag.orchestration.config import DEMO_DOCS
    from lambdarag.orchestration.feedback import loop as feedback_loop
    from lambdarag.domains.corpus import build_index

    make, _, _ = kb
    config, _ = make()
    loops = counting(monkeypatch, feedback_loop.FeedbackLoop)
    with ThreadPoolExecutor(8) as pool:
        first = list(pool.map(lambda _: search("你好", config=config), range(8)))
    rest = [search("你好", config=config) for _ in range(92)]
    assert len(loops) == 1 and all(r.answer_path == "direct_reply" for r in first + rest)

    corpus = tmp_path / "two-docs"
    corpus.mkdir()
    for name in ("海上交通安全法(2021-04-29).md", "水污染防治法(2017-06-27).md"):
        (corpus / name).write_bytes((DEMO_DOCS / name).read_bytes())
    build_index(corpus, "two", dense=False, progress=False)
    for _ in range(3):
        assert search(COMPARE_Q, index="two", config=config).index == "two"
        search("你好", config=config)
    assert len(loops) == 2
    search("你好", config=make(cacheAfter=5)[0])
    assert len(loops) == 3


def test_the_result_is_built_once_per_question_and_recorded_as_returned(kb, monkeypatch):  # noqa: F811
    from lambdarag.orchestration.result import SearchResult

    make, _, fb = kb
    config, _ = make()
    built = counting(monkeypatch, SearchResult)
    r = search(COMPARE_Q, config=config)
    assert len(built) == 1 and built[0].answer == r.answer and built[0].expression == r.expression
    logged = open_store(fb).log("query_log").records()[-1]
    assert logged["query_id"] == r.query_id and logged["strategy"] == r.strategy and logged["answer"] == r.answer
    assert [s.name for s in r.trace.spans][-2:] == ["search_result", "record_feedback"]
    monkeypatch.setenv("LAMBDARAG_FEEDBACK", "off")        # no loop: the term still builds the one result
    built.clear()
    r = search(COMPARE_Q, config=config)
    assert len(built) == 1 and not r.query_id


def test_ask_explain_prints_the_very_term_that_ran(kb, capsys, monkeypatch):  # noqa: F811
    from lambdarag.orchestration import search_unified

    make, _, _ = kb
    _, path = make()
    ran, of = [], search_unified.lifecycle_of
    monkeypatch.setattr(search_unified, "lifecycle_of", lambda setup: ran.append(of(setup)) or ran[-1])
    monkeypatch.setattr(search_unified, "lifecycle_term", None)     # nothing rebuilds a lifecycle to print
    assert main(["ask", "--explain", "--config", str(path), COMPARE_Q]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("lifecycle: "))
    [lifecycle] = ran
    assert line == f"lifecycle: {lifecycle.term}"
    r = search(COMPARE_Q, config=path)
    assert r.trace.spans[0].notes["lifecycle"] == lifecycle.fingerprint
    assert search_unified.lifecycle_ran(r) is lifecycle.term


def test_classified_is_heard_from_the_steps_of_the_term_before_the_plan():
    """The observer describes the route from `learned_route`'s label (a direct reply from `detect_intent`), so
    the event comes before the plan, and says what the result says."""
    from lambdarag.orchestration.search_unified import search_stream
    from lambdarag.stream import Event

    for query, strategy in ((COMPARE_Q, "compare_search"), ("你好", "direct_reply")):
        events = list(search_stream(query))
        kinds = [e.kind for e in events]
        assert kinds.index("classified") < kinds.index("plan"), kinds
        classified, result = events[kinds.index("classified")], events[-1].result
        assert (classified.query_type, classified.strategy, classified.expression, classified.effect_signature) \
            == (result.query_type, strategy, result.expression, result.effect_signature)
        assert all(isinstance(e, Event) and json.dumps(e.as_json(), ensure_ascii=False) for e in events)


def test_what_setup_degraded_is_told_when_the_first_step_ends_before_anything_is_classified():
    from lambdarag.orchestration.search_unified import search_stream

    events = list(search_stream(COMPARE_Q, config=config_with(retrieval__skills__embedding__enabled=False)))
    kinds = [e.kind for e in events]
    told = [i for i, e in enumerate(events) if e.kind == "fallback" and e.term == "embedding"]
    assert told and told[0] < kinds.index("classified")
    assert any(f["term"] == "embedding" and f["path"] == "config" for f in events[-1].result.fallbacks)
