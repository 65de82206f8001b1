"""The calculus: combinator laws, dataflow checks, printing, concurrency, Guard, budget, trace."""
from __future__ import annotations

import json
import random
import threading
import time
from dataclasses import replace
from typing import TypedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lambdarag import Compose, Context, CostModel, Guard, Identity, If, Lam, Map, Named, Par, Route, State, Tool, Verdict, appended
from lambdarag.skills.store.records import RankedList, Variant
from lambdarag.errors import BranchError, BudgetExceeded, CompositionError, DeadlineExceeded, TermError


class Answered(TypedDict):
    """The write of the tests' answering Lam."""

    answer: str


def append_tool(name: str, effect: str = "pure") -> Tool:
    """A tool that appends its name to the answer, so sequences are observable."""
    return Tool(name, lambda s: {"answer": s.answer + name}, reads=["answer"], writes=["answer"], effect=effect)


START = State.of("q", answer="")  # gives `answer`, which append_tool reads


# -- laws -------------------------------------------------------------------

names = st.lists(st.sampled_from("abcdefg"), min_size=0, max_size=6)


@given(names, names, names)
def test_compose_is_associative_and_flattens(xs, ys, zs):
    a, b, c = (Compose(*map(append_tool, n)) for n in (xs, ys, zs))
    left, right = Compose(Compose(a, b), c), Compose(a, Compose(b, c))
    assert left == right
    assert left.run(START).answer == right.run(START).answer == "".join(xs + ys + zs)


@given(names)
def test_identity_is_a_unit(xs):
    t = Compose(*map(append_tool, xs))
    assert Compose(Identity, t) == t == Compose(t, Identity)
    assert (Identity >> t).run(START).answer == t.run(START).answer


def test_normalising_constructors():
    a = append_tool("a")
    assert Compose() is Identity
    assert Compose(a) is a
    assert Compose(a, Identity) is a
    b = append_tool("b")
    assert a >> b == Compose(a, b)
    assert a >> b != Compose(a, append_tool("b"))  # another function is another term


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=0.003), min_size=3, max_size=3))
def test_par_result_is_independent_of_branch_timing(delays):
    def writer(field, delay):
        def fn(s):
            time.sleep(delay)
            return {field: f"{field}:{s.query}"}
        return Tool(field, fn, reads=["query"], writes={field: str})

    par = Par(*(writer(f, d) for f, d in zip(("x", "y", "z"), delays)))
    out = par.run("q")
    assert (out.x, out.y, out.z) == ("x:q", "y:q", "z:q")


def test_par_runs_branches_concurrently():
    barrier = threading.Barrier(2, timeout=5)

    def meet(field):
        return Tool(field, lambda s: (barrier.wait(), {field: True})[1], writes={field: bool}, effect="io")

    out = Par(meet("left"), meet("right")).run("q")  # sequential execution would break the barrier
    assert out.left and out.right


# -- dataflow -----------------------------------------------------------------

rerank = Tool("rerank", lambda s: {"hits": s.hits}, reads=["original_query", "hits"], writes=["hits"], effect="io")
answer = Tool("answer_generate", lambda s: {"answer": "ok"}, reads=["original_query", "hits"], writes=["answer"])
bm25 = Tool("bm25_search", lambda s: {"hits": ()}, reads=["query"], writes=["hits"], effect="io")


def test_open_fragments_expose_free_reads():
    fragment = rerank >> answer
    assert fragment.reads() == {"hits", "original_query"}
    assert (bm25 >> fragment).reads() == {"query", "original_query"}


def test_closing_an_open_fragment_names_term_field_path_and_available():
    with pytest.raises(CompositionError) as e:
        (rerank >> answer).run("q")
    assert str(e.value) == (
        "term 'rerank' reads field 'hits', which no earlier term writes (path: Compose[0] › rerank); "
        "available at the start: history, original_query, plan, query, user. "
        "Put a term that writes 'hits' before it, or pass it in the initial state."
    )


def test_closing_fails_before_any_term_runs():
    ran = []
    first = Tool("first", lambda s: ran.append(1) or {}, writes=[])
    with pytest.raises(CompositionError):
        (first >> rerank).run("q")
    assert ran == []


def test_given_fields_close_a_fragment():
    out = (rerank >> answer).run(State.of("q", hits=()))
    assert out.answer == "ok"


def test_overlapping_par_writes_need_a_merge():
    with pytest.raises(CompositionError, match=r"branches 0 \(bm25_search\) and 1 \(rerank\(q, _\)\) both write field 'hits'"):
        Par(bm25, rerank)


def test_branch_reading_a_sibling_write_fails_when_closed():
    ranker = Tool("rerank", lambda s: {}, reads=["original_query", "hits"], writes=["ranked"])
    with pytest.raises(CompositionError, match="branch 1 term 'rerank' reads field 'hits', which only branch 0"):
        Par(bm25, ranker).close()
    cond = Tool("ok", lambda s: {"ok": True}, writes=["ok"])
    with pytest.raises(CompositionError, match="If: branch 1 term 'rerank'"):
        If(cond, bm25, ranker).close()


def test_branches_may_read_what_an_earlier_term_wrote_even_if_a_sibling_rewrites_it():
    pre = Tool("pre", lambda s: {"answer": "a"}, reads=["query"], writes=["answer"])
    x = Tool("x", lambda s: {"answer": s.answer + "x"}, reads=["answer"], writes=["answer"])
    y = Tool("y", lambda s: {"context": s.answer + "y"}, reads=["answer"], writes=["context"])
    out = (pre >> Par(x, y)).run("q")
    assert (out.answer, out.context) == ("ax", "ay")


def test_reading_an_undeclared_field_names_the_term_and_the_field():
    count = Tool("count", lambda s: {"answer": str(len(s.hits))}, reads=["query"], writes=["answer"])
    with pytest.raises(TermError, match="term 'count' read field 'hits', which it does not declare"):
        count.run("q")
    counted = Tool("count", lambda s: {"answer": str(len(s.hits))}, reads=["query"], optional=["hits"],
                   writes=["answer"])
    assert counted.run("q").answer == "0"


def test_a_tool_gets_the_context_only_through_a_required_second_parameter():
    def top(s, k=3):
        return {"answer": str(k)}

    assert Tool("top", top, reads=["query"], writes=["answer"]).run("q").answer == "3"


def test_registering_a_pattern_closes_it():
    with pytest.raises(CompositionError, match="pattern 'broken': term 'rerank' reads field 'hits'"):
        Named("broken", rerank >> answer)


def test_tool_rejects_undeclared_and_ill_typed_writes():
    sneaky = Tool("sneaky", lambda s: {"answer": "x", "hits": ()}, writes=["answer"])
    with pytest.raises(TermError, match="term 'sneaky' wrote field 'hits', which it does not declare"):
        sneaky.run("q")
    wrong = Tool("wrong", lambda s: {"hits": 3}, writes=["hits"])
    with pytest.raises(TermError, match="term 'wrong' wrote an invalid value to field 'hits'"):
        wrong.run("q")


def test_trusted_and_updated_records_equal_validated_ones_and_stay_frozen():
    trusted = Verdict.trusted({"passed": False, "details": ("no citation",), "rejected": ("a claim",)})
    assert trusted == Verdict(passed=False, details=("no citation",), rejected=("a claim",))
    assert trusted.model_fields_set == {"passed", "details", "rejected"}
    with pytest.raises(TypeError, match=r"Verdict.trusted: missing \['rejected'\], unknown \['score'\]"):
        Verdict.trusted({"passed": True, "details": (), "score": 1.0})
    passed = trusted.updated({"passed": True})
    assert passed == trusted.model_copy(update={"passed": True}) and trusted.passed is False
    with pytest.raises(Exception):
        passed.passed = False  # frozen


def test_state_is_never_mutated():
    s0 = START
    s1 = append_tool("a").run(s0)
    assert s0.answer == "" and s1.answer == "a"
    with pytest.raises(Exception):
        s1.answer = "b"  # frozen


# -- the seed's five routes: lambda forms and effect signatures ----------------

def atom(name, reads, writes, effect, optional=()):
    return Tool(name, lambda s: {}, reads=reads, writes=writes, effect=effect, optional=optional)


entity_extract = atom("entity_extract", ["query"], ["entities"], "llm")
graph_walk = atom("graph_walk", ["entities"], ["relations"], "io")
graph_expand = atom("graph_expand", ["query", "relations"], ["variants"], "pure")
fusion = atom("fusion_search", ["variants"], ["hits"], "io")
gen = atom("answer_generate", ["original_query", "hits"], ["answer"], "llm", optional=["verdict"])
check = atom("citation_check", ["answer", "hits"], ["verdict"], "llm")
wiki = atom("wiki_page_read", ["query"], ["wiki_pages"], "io")
lookup = atom("relation_lookup", ["entities"], ["relations"], "io")
merge = atom("merge_results", ["wiki_pages", "relations"], ["hits"], "pure")
time_filter = atom("time_filter", ["query"], ["time_range"], "pure")
keyword = atom("bm25_search", ["query", "time_range"], ["hits"], "io")

SEED_ROUTES = {
    "fact": (Compose(bm25, gen), "bm25_search >> answer_generate(q, _)", "io · llm"),
    "compare": (
        Compose(entity_extract, graph_walk, graph_expand, fusion, Guard(gen, check, retry=1)),
        "entity_extract >> graph_walk >> graph_expand >> fusion_search >> "
        "Guard(answer_generate(q, _), citation_check, retry=1)",
        "llm · io · pure · io · (llm · llm){1,2}",
    ),
    "relation": (
        Compose(entity_extract, Par(wiki, lookup), merge, gen),
        "entity_extract >> Par(wiki_page_read, relation_lookup) >> merge_results >> answer_generate(q, _)",
        "llm · (io ∥ io) · pure · llm",
    ),
    "synthesis": (
        Compose(Par(wiki, Compose(entity_extract, graph_walk)), merge, Guard(gen, check, retry=1)),
        "Par(wiki_page_read, entity_extract >> graph_walk) >> merge_results >> "
        "Guard(answer_generate(q, _), citation_check, retry=1)",
        "(io ∥ (llm · io)) · pure · (llm · llm){1,2}",
    ),
    "temporal": (Compose(time_filter, keyword, gen), "time_filter >> bm25_search >> answer_generate(q, _)",
                 "pure · io · llm"),
}


@pytest.mark.parametrize("route", sorted(SEED_ROUTES))
def test_seed_routes_print_their_lambda_form_and_effects(route):
    term, form, effects = SEED_ROUTES[route]
    assert str(term) == f"λq. {form}"
    assert term.effect_signature() == effects
    term.close()  # every seed route is closed over the initial fields


def test_route_prints_table_and_choice_of_effects():
    classify = Tool("classify", lambda s: {"query_type": "fact"}, reads=["query"], writes=["query_type"])
    routes = {k: Named(k, v[0]) for k, v in SEED_ROUTES.items()}
    r = Route(classify, routes, default=routes["fact"])
    assert r.lambda_form().startswith("Route(classify, {fact: fact, compare: compare,")
    assert str(r).startswith("λq. Route(classify, {fact: bm25_search >> answer_generate(q, _), compare: ")
    assert r.effect_signature().startswith("pure · (io · llm | llm · io · pure · io")


# -- running combinators -------------------------------------------------------

def test_route_runs_the_labelled_branch_and_records_it():
    classify = Tool("classify", lambda s: {"query_type": "b" if "b" in s.query else "zzz"},
                    reads=["query"], writes=["query_type"])
    r = Route(classify, {"a": append_tool("A"), "b": append_tool("B")}, default=append_tool("D"))
    ctx = Context()
    assert r.run(State.of("b?", answer=""), ctx).answer == "B"
    assert r.run(State.of("x", answer=""), ctx).answer == "D"
    no_default = Route(classify, {"a": append_tool("A")})
    with pytest.raises(TermError, match="label 'zzz' in field 'query_type' matches no route .* valid labels: a"):
        no_default.run(State.of("x", answer=""))


def test_if_takes_the_branch_its_condition_wrote():
    cond = Tool("sufficient", lambda s: {"sufficient": "enough" in s.query}, reads=["query"], writes=["sufficient"])
    t = If(cond, append_tool("then"), append_tool("else"))
    assert t.run(State.of("enough", answer="")).answer == "then"
    assert t.run(State.of("no", answer="")).answer == "else"
    assert str(t) == "λq. If(sufficient, then, else)"


def test_guard_retries_until_the_check_passes_and_records_the_verdict():
    calls = []
    gen_ = Tool("gen", lambda s: (calls.append(1), {"answer": f"v{len(calls)}"})[1], writes=["answer"],
                optional=["verdict"], effect="llm")
    chk = Tool("check", lambda s: {"verdict": Verdict(passed=s.answer == "v3")}, reads=["answer"], writes=["verdict"])
    ctx = Context()
    out = Guard(gen_, chk, retry=5).run("q", ctx)
    assert out.answer == "v3" and len(calls) == 3
    guard_span = next(s for s in ctx.trace.spans if s.kind == "guard")
    assert guard_span.notes == {"verdict": "passed", "attempts": 3}


def test_guard_is_bounded_and_reports_exhaustion():
    gen_ = Tool("gen", lambda s: {"answer": "bad"}, writes=["answer"], optional=["verdict"])
    chk = Tool("check", lambda s: {"verdict": Verdict(passed=False)}, reads=["answer"], writes=["verdict"])
    ctx = Context()
    out = Guard(gen_, chk, retry=1).run("q", ctx)
    assert out.verdict.passed is False
    assert next(s for s in ctx.trace.spans if s.kind == "guard").notes == {"verdict": "exhausted", "attempts": 2}
    with pytest.raises(CompositionError, match="retry must be an integer in 0..10"):
        Guard(gen_, chk, retry=100)


def test_map_runs_per_element_and_merges_in_order():
    search = Tool("search", lambda s: {"candidates": (RankedList(retriever="bm25", query=s.query),)},
                  reads=["query"], writes=["candidates"], effect="io")
    variants = tuple(Variant(text=t, kind="multi_query") for t in ("甲", "乙", "丙"))
    m = Map(search, over="variants", pick="text")
    out = m.run(State.of("原", variants=variants))
    assert [c.query for c in out.candidates] == ["甲", "乙", "丙"]
    assert out.query == "原"
    assert m.effect_signature() == "(io ∥ …)"


def test_map_is_bounded():
    search = Tool("search", lambda s: {"candidates": (RankedList(retriever="x", query=s.query),)},
                  reads=["query"], writes=["candidates"])
    ctx = Context()
    out = Map(search, over="variants", pick="text", limit=2).run(
        State.of("q", variants=tuple(Variant(text=str(i)) for i in range(5))), ctx)
    assert len(out.candidates) == 2
    assert "truncated" in next(s for s in ctx.trace.spans if s.kind == "map").notes
    assert any("truncated over 'variants'" in f["reason"] for f in ctx.trace.fallbacks())


def test_a_failing_branch_is_named():
    boom = Tool("boom", lambda s: 1 / 0, writes={"x": int}, effect="io")
    with pytest.raises(BranchError, match=r"branch 1 \(boom\) failed"):
        Par(append_tool("a"), boom).run(START)


def test_deadline_stops_a_slow_parallel_branch():
    slow = Tool("slow", lambda s: (time.sleep(0.5), {"x": 1})[1], writes={"x": int}, effect="io")
    ctx = Context().with_timeout(0.05)
    with pytest.raises(DeadlineExceeded, match=r"branch 1 \(slow\) was running"):
        Par(append_tool("a"), slow).run(START, ctx)
    ctx = Context().with_timeout(0.05)
    with pytest.raises(DeadlineExceeded, match=r"branch 0 \(slow\) was running"):
        Par(slow, append_tool("a")).run(START, ctx)


def late_guard():
    """Returns a Guard whose generator outlives a 50 ms deadline, and its check (which would refuse)."""
    slow = Tool("gen", lambda s: (time.sleep(0.1), {"answer": "late"})[1], writes=["answer"], optional=["verdict"],
                effect="llm")
    check = Tool("check", lambda s: {"verdict": Verdict(passed=False)}, reads=["answer"], writes=["verdict"],
                 effect="llm")
    return Guard(slow, check, retry=1), check


def test_past_the_deadline_a_guard_raises_unless_its_check_may_be_skipped():
    guard, _ = late_guard()
    with pytest.raises(DeadlineExceeded, match="deadline passed before term 'check'"):
        guard.run(START, Context().with_timeout(0.05))
    ctx = replace(Context().with_timeout(0.05), late={"check": "skip"})
    out = guard.run(START, ctx)
    assert out.answer == "late" and out.verdict is None          # returned unchecked: neither passed nor retried
    assert [f["term"] for f in ctx.trace.fallbacks()] == ["check"]
    assert "deadline" in ctx.trace.fallbacks()[0]["reason"]
    assert [s.notes.get("verdict") for s in ctx.trace.spans if s.name == "guard"] == ["unchecked"]


def test_past_the_deadline_a_finishing_term_runs_and_any_other_raises():
    guard, _ = late_guard()
    done = Tool("done", lambda s: {"x": 1}, writes={"x": int})
    after = Tool("after", lambda s: {"y": 2}, writes={"y": int})
    ctx = replace(Context().with_timeout(0.05), late={"check": "skip", "done": "finish"})
    assert (guard >> done).run(START, ctx).x == 1
    ctx = replace(Context().with_timeout(0.05), late={"check": "skip", "done": "finish"})
    with pytest.raises(DeadlineExceeded, match="term 'after'"):
        (guard >> done >> after).run(START, ctx)


# -- cost ----------------------------------------------------------------------

def test_cost_bound_is_static_and_counts_retries_and_fanout():
    model = CostModel(per_effect={"pure": 0, "io": 0.001, "llm": 0.01})
    gen_ = Tool("gen", lambda s: {"answer": ""}, writes=["answer"], optional=["verdict"], effect="llm")
    chk = Tool("check", lambda s: {"verdict": Verdict(passed=True)}, writes=["verdict"], effect="llm")
    search = Tool("search", lambda s: {"candidates": ()}, reads=["query"], writes=["candidates"], effect="io")
    pipeline = Map(search, over="variants", limit=4) >> Guard(gen_, chk, retry=2)
    assert pipeline.cost_bound(model) == pytest.approx(4 * 0.001 + 3 * (0.01 + 0.01))


def test_budget_exceeded_takes_the_configured_fallback():
    expensive = Tool("expensive", lambda s: {"answer": "expensive"}, writes=["answer"], effect="llm", cost=1.0)
    cheap = Tool("cheap", lambda s: {"answer": "cheap"}, writes=["answer"])
    ctx = Context(budget=0.05, budget_fallback=cheap)
    assert expensive.run("q", ctx).answer == "cheap"
    assert ctx.trace.fallbacks()[0]["reason"].startswith("budget: cost bound 1.0000 > 0.0500")
    with pytest.raises(BudgetExceeded, match="exceeds the budget 0.0500 and no fallback"):
        expensive.run("q", Context(budget=0.05))


# -- trace ---------------------------------------------------------------------

def test_trace_has_a_span_per_execution_and_is_json():
    ctx = Context()
    pipeline = append_tool("a") >> Par(Tool("x", lambda s: {"x": 1}, writes={"x": int}),
                                       Tool("y", lambda s: {"y": 2}, writes={"y": int}))
    pipeline.run(START, ctx)
    kinds = [s.kind for s in ctx.trace.spans]
    assert kinds.count("tool") == 3 and "par" in kinds and "compose" in kinds
    assert list(ctx.trace.latency_breakdown()) == ["a", "x", "y"]
    data = json.loads(ctx.trace.to_json())
    assert {s["name"] for s in data["spans"]} >= {"a", "x", "y"}
    par = next(s for s in ctx.trace.spans if s.kind == "par")
    assert all(s.parent == par.id for s in ctx.trace.spans if s.name in ("x", "y"))


def test_a_tool_with_a_fallback_retries_a_provider_failure_once_then_degrades():
    from lambdarag.errors import ProviderHTTPError

    calls = []

    def flaky(s):
        calls.append(1)
        raise ProviderHTTPError("rerank endpoint answered HTTP 503")

    local = Tool("local", lambda s: {"answer": "local"}, writes=["answer"])
    ctx = Context()
    assert Tool("remote", flaky, writes=["answer"], effect="io", fallback=local).run("q", ctx).answer == "local"
    assert len(calls) == 2
    assert ctx.trace.fallbacks()[0]["reason"] == ("attempt 1: rerank endpoint answered HTTP 503; "
                                                  "attempt 2: rerank endpoint answered HTTP 503")
    with pytest.raises(ProviderHTTPError, match="HTTP 503"):
        Tool("remote", flaky, writes=["answer"], effect="io").run("q")
    with pytest.raises(CompositionError, match="Tool 'remote': fallback 'local' writes \\['answer'\\] but the Tool "
                                               "writes \\['hits'\\]"):
        Tool("remote", flaky, writes=["hits"], fallback=local)


def test_every_span_but_the_root_has_a_parent_and_the_root_is_the_wall_time():
    from lambdarag.orchestration.search_unified import search

    search("船员条例由哪个部门主管？")  # opens (and caches) the demo knowledge base outside the measured query
    started = time.perf_counter()
    r = search("海上交通安全法与水污染防治法在船舶管理方面有何异同？")
    wall = (time.perf_counter() - started) * 1000
    spans = r.trace.spans
    assert spans[0].parent is None and all(s.parent is not None for s in spans[1:])
    ids = {s.id for s in spans}
    assert all(s.parent in ids for s in spans[1:])
    # the root spans the run: it opens first and closes last, and no clock read outside the call is shorter
    root = spans[0]
    assert all(root.start_ms <= s.start_ms and s.start_ms + s.duration_ms <= root.start_ms + root.duration_ms + 1e-3
               for s in spans[1:])
    assert r.trace.total_ms == pytest.approx(root.duration_ms, abs=1e-3) and r.trace.total_ms <= wall
    assert sum(s.duration_ms for s in spans if s.parent == 0) <= r.trace.total_ms * 1.01


def test_merges_name_written_fields_and_strings_need_an_explicit_merge():
    a = Tool("a", lambda s: {"candidates": ()}, reads=["query"], writes=["candidates"])
    b = Tool("b", lambda s: {"candidates": ()}, reads=["query"], writes=["candidates"])
    with pytest.raises(CompositionError, match=r"the merge names \['hits'\], which no branch writes"):
        Par(a, b, merge=appended("candidates", "hits"))
    with pytest.raises(CompositionError, match=r"writes \['answer'\], which are not tuple fields"):
        Map(append_tool("x"), over="variants")


def test_appended_keeps_a_branch_that_replaced_the_tuple():
    base = State.of("q", candidates=(RankedList(retriever="base", query="q"),))
    fresh = Tool("fresh", lambda s: {"candidates": (RankedList(retriever="fresh", query="q"),)},
                 reads=["query"], writes=["candidates"])
    kept = Tool("kept", lambda s: {"candidates": s.candidates + (RankedList(retriever="kept", query="q"),)},
                reads=["query", "candidates"], writes=["candidates"])
    out = Par(fresh, kept, merge=appended("candidates")).run(base)
    assert [c.retriever for c in out.candidates] == ["base", "fresh", "kept"]


def test_guard_retry_must_be_a_count_not_a_flag():
    chk = Tool("check", lambda s: {"verdict": Verdict(passed=True)}, writes=["verdict"])
    with pytest.raises(CompositionError, match="retry must be an integer in 0..10, got True"):
        Guard(append_tool("a"), chk, retry=True)


def test_a_guard_whose_generator_cannot_see_the_verdict_is_refused():
    blind = Tool("gen", lambda s: {"answer": "same"}, reads=["query"], writes=["answer"])
    chk = Tool("check", lambda s: {"verdict": Verdict(passed=False)}, reads=["answer"], writes=["verdict"])
    with pytest.raises(CompositionError, match=r"Guard\(gen, check, retry=1\): generate 'gen' cannot see the "
                                               r"check's 'verdict'"):
        Guard(blind, chk, retry=1)
    Guard(blind, chk, retry=0)  # no retry, nothing to repair


def test_a_guard_retry_sees_the_failed_verdict_and_can_change_its_answer():
    def gen_(s):
        return {"answer": "fixed" if s.verdict is not None and "too short" in s.verdict.details else "x"}

    chk = Tool("check", lambda s: {"verdict": Verdict(passed=len(s.answer) > 1, details=("too short",))},
               reads=["answer"], writes=["verdict"])
    out = Guard(Tool("gen", gen_, reads=["query"], optional=["verdict"], writes=["answer"]), chk, retry=1).run("q")
    assert out.answer == "fixed" and out.verdict.passed


def test_a_tool_prints_the_stronger_of_its_own_and_its_fallbacks_effect():
    asks = Lam("ask", "{query}", reads=["query"], writes=Answered,
               fallback=Tool("quote", lambda s: {"answer": s.query}, reads=["query"], writes=["answer"]))
    cheap = Tool("cheap", lambda s: {"answer": ""}, reads=["query"], writes=["answer"], fallback=asks)
    assert cheap.effect_signature() == "llm" and cheap.effects() == {"pure", "llm"}
    assert (cheap >> Tool("t", lambda s: {}, effect="io")).effect_signature() == "llm · io"
    assert Tool("plain", lambda s: {}, effect="io").effect_signature() == "io"


def test_every_combinator_prints_through_one_form_method_and_route_expands_its_routes():
    classify = Tool("classify", lambda s: {"query_type": "a"}, reads=["query"], writes=["query_type"])
    named = Named("pattern_a", append_tool("a") >> append_tool("b"), available={"answer"})
    r = Route(classify, {"a": named}, default=Named("pattern_d", append_tool("d"), available={"answer"}))
    assert r.lambda_form() == r.form() == "Route(classify, {a: pattern_a}, default=pattern_d)"
    assert str(r) == "λq. Route(classify, {a: a >> b}, default=d)"
    assert not any("expanded_form" in vars(cls) for cls in (Compose, Par, If, Route, Guard, Map, Named))


def test_declaring_a_term_returns_a_new_term_and_leaves_the_original_as_it_was():
    plain = append_tool("a") >> append_tool("b")
    before = (str(plain), hash(plain))
    marked = plain.declared("ab", {"width": 2}, {"width": 2})
    assert marked is not plain and (str(plain), hash(plain)) == before and plain.origin() is None
    assert str(marked) == "λq. ab(width=2)" and marked == plain.declared("ab", {}, {"width": 2}) != plain
    assert marked.run(START).answer == "ab"


def test_extra_state_fields_must_be_declared_and_are_validated():
    with pytest.raises(CompositionError, match="the initial state has field 'anwser', which no term of the pipeline "
                                               "reads or writes"):
        Tool("t", lambda s: {"answer": s.query}, reads=["query"], writes=["answer"]).run(State.of("q", anwser="typo"))
    typo = Tool("typo", lambda s: {"anwser": "x"}, writes=["anwser"])
    with pytest.raises(TermError, match="term 'typo' wrote field 'anwser': State has no field 'anwser'"):
        typo.run("q")
    with pytest.raises(TermError, match="term 'bad' wrote an invalid value to field 'score_note'"):
        Tool("bad", lambda s: {"score_note": "many"}, writes={"score_note": int}).run("q")
    assert Tool("good", lambda s: {"score_note": 3}, writes={"score_note": int}).run("q").score_note == 3
    with pytest.raises(TermError, match="term 'bad' wrote an invalid value to field 'score_note'"):
        (Tool("bad", lambda s: {"score_note": "many"}, writes=["score_note"])
         >> Tool("note", lambda s: {}, reads={"score_note": int})).run("q")   # typed by its reader


def test_no_field_type_or_default_depends_on_what_was_imported_first():
    code = """
from lambdarag.state import State
from lambdarag import Tool
before = (State().plan, State(hits=({"chunk_id": "a", "text": "t"},)).hits)
import lambdarag.skills.store.records as records

after = (State().plan, State(hits=({"chunk_id": "a", "text": "t"},)).hits)
print(before == after, before[0])
hits = Tool("seed", lambda s: {"hits": ({"chunk_id": "a", "text": "t"},)}, writes=["hits"])
print(type(hits.run("q").hits[0]).__name__)
typed = Tool("read", lambda s: {"answer": str(s.plan.max_hops)}, reads={"plan": records.RetrievalPlan}, writes=["answer"])
print(typed.run("q").answer == str(records.RetrievalPlan().max_hops), type((hits >> Tool("h", lambda s: {"answer": ""},
      reads={"hits": tuple[records.Hit, ...]}, writes=["answer"])).run("q").hits[0]).__name__)
"""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "None", "dict", "True", "Hit"]
