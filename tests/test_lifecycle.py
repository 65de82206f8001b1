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
