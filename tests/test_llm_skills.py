"""LLM skills: offline fallbacks on real statute text, the LLM path over real HTTP, citation integrity."""
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lambdarag.domains.prc_statutes import StatuteProfile
from lambdarag import Context, Guard, Message, State, Verdict
from lambdarag.skills.store.records import Hit, Relation, RetrievalPlan, WikiPage
from lambdarag.providers.llm import OpenAIChat
from lambdarag.skills.check import citation_check
from lambdarag.skills.context import assemble_context, context_hits, RELATIONS_HEADING
from lambdarag.skills.facts import fact_extract
from lambdarag.skills.gaps import missing_topics, sufficient
from lambdarag.skills.generate import REFUSAL, answer_generate
from lambdarag.skills.store.graph import EntityGraph
from lambdarag.skills.planner import query_expand
from tests.conftest import MARITIME
from tests.scripted_server import Reply, Running
from lambdarag.domains import profile_named


def generic_ctx() -> Context:
    """Returns a context under the generic profile (what a context without one ran under)."""
    return Context(resources={"profile": profile_named("generic")})

ARTICLE = re.compile(r"^(第[一二三四五六七八九十百零]+条)\s(.*?)(?=^第[一二三四五六七八九十百零]+条\s|^#|\Z)", re.S | re.M)


def statute(name):
    """Returns (source, title, {article label: article text}) for a statute file of the maritime corpus."""
    path = next(MARITIME.glob(f"*/{name}(*).md"))
    text = path.read_text(encoding="utf-8")
    title = text.splitlines()[0].lstrip("# ").strip()
    return (str(path.relative_to(MARITIME)), title,
            {m.group(1): f"{m.group(1)} {m.group(2).strip()}" for m in ARTICLE.finditer(text)})


SAFETY = statute("海上交通安全法")
MERCHANT = statute("海商法")


def statutes() -> Context:
    """Returns a context under the statute profile (its compared names, authority rules and named things)."""
    return Context(resources={"profile": StatuteProfile()})


def hits(law, *labels, score=1.0):
    source, title, arts = law
    return tuple(Hit(chunk_id=f"{source}#{a}", text=arts[a], source=source, title=title, section=a,
                     score=score - i * 0.01) for i, a in enumerate(labels))


CAPTAIN_HITS = hits(SAFETY, "第三十七条", "第三十八条", "第三十九条", "第四条")
CAPTAIN_Q = "船长在保障海上生命安全和防治船舶污染方面有什么权力？"


def llm_ctx(server, timeout=1.0):
    return Context(llm=OpenAIChat(server.url, "m", timeout=timeout), resources={"profile": profile_named("generic")})


def prompt_of(server, i=0):
    return server.script.requests[i]["body"]["messages"][-1]["content"]


# -- context assembly ---------------------------------------------------------
def test_context_numbers_sources_keeps_headings_and_lists_relations():
    rel = Relation(head="海上交通安全法", relation="主管", tail="国务院交通运输主管部门", source=SAFETY[0], section="第四条")
    s = assemble_context.run(State.of(CAPTAIN_Q, hits=CAPTAIN_HITS, relations=(rel,)), generic_ctx())
    assert s.context.startswith(RELATIONS_HEADING)
    assert "- 海上交通安全法 --主管--> 国务院交通运输主管部门" in s.context
    assert "[2] [来源: 行政法/海上交通安全法(2021-04-29).md#第三十八条] 中华人民共和国海上交通安全法 · 第三十八条" in s.context


def test_context_honours_the_plan_budgets():
    plan = RetrievalPlan(final_top_k=3, max_chunk_chars=40, max_context_chars=100)
    state = State.of(CAPTAIN_Q, hits=CAPTAIN_HITS, plan=plan)
    shown = context_hits(state)
    assert [h.section for h in shown] == ["第三十七条", "第三十八条"]  # the third would exceed 100 chars
    ctx = assemble_context.run(state, generic_ctx()).context
    assert "第三十九条" not in ctx and "…" in ctx
    assert all(len(block) <= 41 for block in re.findall(r"\n(第.+?)(?:\n|$)", ctx))


# -- answer_generate offline -----------------------------------------------------
def test_extractive_answer_quotes_and_cites_the_article():
    s = answer_generate().run(State.of(CAPTAIN_Q, hits=CAPTAIN_HITS), generic_ctx())
    assert "独立作出决定" in s.answer
    assert "[来源: 行政法/海上交通安全法(2021-04-29).md#第三十八条]" in s.answer
    assert [(c.section, "海上交通安全法" in c.source) for c in s.citations][0] == ("第三十八条", True)


def test_extractive_answer_copies_numbers_exactly():
    q = "国际航行船舶进出口岸，海事管理机构应当在多长时间内作出许可决定？"
    s = answer_generate().run(State.of(q, hits=hits(SAFETY, "第四十六条", "第四条")), generic_ctx())
    assert "自受理申请之日起五个工作日内作出许可或者不予许可的决定" in s.answer
    assert s.citations[0].section == "第四十六条"


def test_compare_answers_one_part_per_law_each_from_its_own_source():
    q = "海商法和海上交通安全法关于船长职权的规定有什么区别？"
    both = hits(MERCHANT, "第三十五条", "第三十六条") + hits(SAFETY, "第三十八条", "第四条")
    s = answer_generate().run(State.of(q, hits=both, query_type="compare"), statutes())
    parts = s.answer.split("关于「海上交通安全法」：")
    assert "关于「海商法」：" in parts[0] and "海商法" in parts[0].split("关于「海商法」：")[1]
    assert "第三十八条" in parts[1] and "海商法" not in parts[1]


def test_insufficient_evidence_refuses_and_names_the_gap():
    s = answer_generate().run(State.of("船舶吨税的税率是多少？", hits=CAPTAIN_HITS), statutes())
    assert s.answer.startswith(REFUSAL) and "税率" in s.answer and s.citations == ()


# -- answer_generate with an LLM ------------------------------------------------
GOOD = json.dumps({"answer": "船长有权独立作出决定[来源: 行政法/海上交通安全法(2021-04-29).md#第三十八条]。"
                             "船长可采取禁闭措施[来源: 刑法#第一条]。"}, ensure_ascii=False)


def test_llm_answer_prompt_carries_the_context_and_bogus_citations_are_dropped(llm_server):
    llm_server.script.script(Reply(text=GOOD))
    ctx = llm_ctx(llm_server)
    s = answer_generate().run(State.of(CAPTAIN_Q, hits=CAPTAIN_HITS), ctx)
    prompt = prompt_of(llm_server)
    assert "船长有权独立作出决定" in prompt and CAPTAIN_Q in prompt
    assert "刑法" not in s.answer and [c.section for c in s.citations] == ["第三十八条"]
    assert ctx.trace.fallbacks() == []


@pytest.mark.parametrize("first", [Reply(text="no json"), Reply(status=500),
                                   Reply(text='{"answer": "船长很厉害[来源: 民法典#第一条]"}')])
def test_llm_answer_one_bad_reply_is_retried(llm_server, first):
    llm_server.script.script(first, Reply(text=GOOD))
    s = answer_generate().run(State.of(CAPTAIN_Q, hits=CAPTAIN_HITS), llm_ctx(llm_server))
    assert s.answer.startswith("船长有权独立作出决定") and len(llm_server.script.requests) == 2


@pytest.mark.parametrize("bad", [Reply(status=500), Reply(delay=1.5), Reply(text="[]")])
def test_llm_answer_two_failures_take_the_extractive_fallback(llm_server, bad):
    llm_server.script.script(bad, bad)
    ctx = llm_ctx(llm_server)
    s = answer_generate().run(State.of(CAPTAIN_Q, hits=CAPTAIN_HITS), ctx)
    assert s.answer.startswith("根据现有资料：") and "独立作出决定" in s.answer
    assert [f["term"] for f in ctx.trace.fallbacks()] == ["answer_generate"]


def test_llm_refusal_keeps_the_refusal_and_lists_what_is_missing(llm_server):
    llm_server.script.script(Reply(text=json.dumps(
        {"answer": "根据现有资料无法回答该问题", "sufficient": False, "missing": ["船舶吨税税率表"]}, ensure_ascii=False)))
    s = answer_generate().run(State.of("船舶吨税的税率是多少？", hits=CAPTAIN_HITS), llm_ctx(llm_server))
    assert s.answer.startswith(REFUSAL) and "船舶吨税税率表" in s.answer and s.citations == ()


# -- citation integrity (property) ------------------------------------------------
POOL = hits(SAFETY, *list(SAFETY[2])[:40]) + hits(MERCHANT, *list(MERCHANT[2])[:20])
QUESTIONS = [CAPTAIN_Q, "海上交通安全工作由哪个部门主管？", "船舶应当配备哪些航行记录？", "海商法和海上交通安全法关于船长职权的规定有什么区别？"]
contexts = st.tuples(
    st.lists(st.sampled_from(POOL), min_size=0, max_size=8, unique_by=lambda h: h.chunk_id),
    st.lists(st.floats(0, 1), min_size=8, max_size=8),
    st.integers(1, 6), st.integers(60, 3000), st.sampled_from(QUESTIONS))


def _state(drawn):
    chosen, scores, k, budget, q = drawn
    hs = tuple(h.model_copy(update={"score": s}) for h, s in zip(chosen, scores))
    return State.of(q, hits=hs, plan=RetrievalPlan(final_top_k=k, max_context_chars=budget))


@settings(max_examples=40, deadline=None)
@given(contexts)
def test_offline_answers_cite_only_the_context(drawn):
    s = answer_generate().run(_state(drawn), generic_ctx())
    shown = {h.chunk_id for h in context_hits(s)}
    assert all(c.chunk_id in shown for c in s.citations)
    for m in re.finditer(r"\[来源: ([^\]#]+)#([^\]]+)\]", s.answer):
        assert f"{m.group(1)}#{m.group(2)}" in shown
    assert bool(s.citations) or s.answer.startswith(REFUSAL)


@pytest.fixture(scope="module")
def shared_server():
    server = Running()
    yield server
    server.stop()


@settings(max_examples=25, deadline=None)
@given(drawn=contexts, cited_by_model=st.lists(st.sampled_from(POOL), min_size=1, max_size=4))
def test_llm_answers_cite_only_the_context(shared_server, drawn, cited_by_model):
    text = "".join(f"依据{h.section}[来源: {h.source}#{h.section}]。" for h in cited_by_model) + "另见[来源: 伪造法规#第一条]。"
    shared_server.script.default = Reply(text=json.dumps({"answer": text}, ensure_ascii=False))
    s = answer_generate().run(_state(drawn), llm_ctx(shared_server, timeout=2))
    shown = {h.chunk_id for h in context_hits(s)}
    assert all(c.chunk_id in shown for c in s.citations)
    assert "伪造法规" not in s.answer


# -- citation_check ---------------------------------------------------------------
def _answered(answer):
    return assemble_context.run(State.of(CAPTAIN_Q, hits=CAPTAIN_HITS, answer=answer), generic_ctx())


def test_check_passes_the_extractive_answer():
    s = (answer_generate() >> citation_check).run(State.of(CAPTAIN_Q, hits=CAPTAIN_HITS), generic_ctx())
    assert s.verdict.passed and s.verdict.details[0].startswith("supported")


def test_check_flags_unsupported_missing_and_out_of_context_citations():
    cite38 = "[来源: 行政法/海上交通安全法(2021-04-29).md#第三十八条]"
    answer = (f"- 船长有权对船员处以罚款五万元{cite38}\n- 船长负责管理和指挥船舶{cite38}\n"
              "- 船长应当每日向海事局报告\n- 船长可以拒绝引航[来源: 海商法#第三十九条]")
    v = citation_check.run(_answered(answer), generic_ctx()).verdict
    statuses = [d.split(" | ")[0] for d in v.details]
    assert statuses == ["unsupported", "supported", "missing", "missing"] and not v.passed


def test_llm_check_cannot_clear_a_citation_outside_the_context(llm_server):
    llm_server.script.script(Reply(text=json.dumps({"items": [
        {"citation": "[来源: 海商法#第三十九条]", "status": "supported"},
        {"citation": "[来源: 行政法/海上交通安全法(2021-04-29).md#第三十八条]", "status": "supported"}]},
        ensure_ascii=False)))
    answer = ("船长负责管理和指挥船舶[来源: 行政法/海上交通安全法(2021-04-29).md#第三十八条]。"
              "船长可以拒绝引航[来源: 海商法#第三十九条]。")
    s = citation_check.run(_answered(answer), llm_ctx(llm_server))
    assert "船长可以拒绝引航" in prompt_of(llm_server) and "船长有权独立作出决定" in prompt_of(llm_server)
    assert not s.verdict.passed
    assert any(d.startswith("missing | [来源: 海商法#第三十九条]") for d in s.verdict.details)


# -- fact_extract -------------------------------------------------------------------
def test_fact_rules_find_the_competent_authority_with_its_citation():
    q = "海上交通安全工作由哪个部门主管？"
    s = (answer_generate() >> fact_extract).run(State.of(q, hits=hits(SAFETY, "第四条", "第三十八条")), statutes())
    rel = {(r.head, r.relation, r.tail): r for r in s.facts.relations}
    r = rel[("国务院交通运输主管部门", "主管", "海上交通安全法")]
    assert (r.source, r.section) == (SAFETY[0], "第四条")
    assert "国务院交通运输主管部门" in s.facts.entities and s.facts.sources == (f"{SAFETY[0]}#第四条",)


def test_fact_rules_leave_out_what_the_graph_knows():
    g = EntityGraph()
    g.add_relation(head="国务院交通运输主管部门", relation="主管", tail="海上交通安全法")
    s = (answer_generate() >> fact_extract).run(
        State.of("海上交通安全工作由哪个部门主管？", hits=hits(SAFETY, "第四条")), Context(resources={"graph": g, "profile": profile_named("generic")}))
    assert ("国务院交通运输主管部门", "主管", "海上交通安全法") not in {(r.head, r.relation, r.tail) for r in s.facts.relations}


def test_llm_facts_without_a_cited_source_are_dropped(llm_server):
    llm_server.script.script(Reply(text=json.dumps({"entities": ["海事管理机构"], "relations": [
        {"head": "国家海事管理机构", "relation": "负责", "tail": "海上交通安全监督管理",
         "citation": "[来源: 行政法/海上交通安全法(2021-04-29).md#第四条]"},
        {"head": "海事局", "relation": "隶属", "tail": "交通运输部", "citation": "[来源: 国务院公报#第一条]"}]},
        ensure_ascii=False)))
    base = answer_generate().run(State.of("海上交通安全工作由哪个部门主管？", hits=hits(SAFETY, "第四条")), generic_ctx())
    s = fact_extract.run(base, llm_ctx(llm_server))
    assert [(r.head, r.section, r.origin) for r in s.facts.relations] == [("国家海事管理机构", "第四条", "llm")]
    assert "海事局" not in s.facts.entities


# -- gaps -----------------------------------------------------------------------------
PAGE = WikiPage(entity="海上交通安全法", path="wiki/entities/海上交通安全法.md",
                text="海上交通安全法由全国人民代表大会常务委员会通过。" + SAFETY[2]["第三十八条"])


def test_wiki_pages_covering_the_question_are_sufficient():
    s = (sufficient >> missing_topics).run(State.of("海上交通安全法对船长的权力有何规定？", wiki_pages=(PAGE,)), generic_ctx())
    assert s.sufficient is True and "海上交通安全法" not in s.missing and "船长" not in s.missing


def test_missing_topics_name_what_the_pages_lack():
    s = (sufficient >> missing_topics).run(
        State.of("海上交通安全法与海商法在船长权力上有何异同？", wiki_pages=(PAGE,)), statutes())
    assert s.sufficient is False and "海商法" in s.missing


def test_llm_missing_topics_are_cleaned(llm_server):
    llm_server.script.script(Reply(text='{"missing": ["海商法 船长", " ", "海商法 船长"]}'))
    s = missing_topics.run(State.of("海上交通安全法与海商法在船长权力上有何异同？", wiki_pages=(PAGE,)),
                               llm_ctx(llm_server))
    assert s.missing == ("海商法 船长",) and "海上交通安全法由全国人民代表大会" in prompt_of(llm_server)


# -- query_expand ---------------------------------------------------------------------
HISTORY = (Message(role="user", content="船长在保障海上生命安全方面有什么权力？"),
           Message(role="assistant", content="船长有权独立作出决定。"))


def kinds(s):
    return [(v.kind, v.text) for v in s.variants]


def test_follow_up_is_rewritten_from_history_and_original_kept():
    s = query_expand.run(State.of("那船员呢？", history=HISTORY), generic_ctx())
    assert kinds(s) == [("original", "那船员呢？"), ("rewrite", "船员在保障海上生命安全方面有什么权力？")]
    assert s.query_plan.source == "rules"


def test_spoken_phrasing_is_cleaned():
    s = query_expand.run("请问那个船舶没证书出海咋处罚啊", generic_ctx())
    assert ("rewrite", "船舶没证书出海如何处罚") in kinds(s)


def test_synonyms_and_graph_neighbours_expand_within_the_count():
    g = EntityGraph()
    g.add_relation(head="海上交通安全法", relation="规定", tail="船舶航行安全")
    ctx = Context(resources={"graph": g, "synonyms": {"船长": ["船舶负责人"]}, "profile": profile_named("generic")})
    s = query_expand.run("海上交通安全法对船长有什么规定", ctx)
    assert kinds(s)[:3] == [("original", "海上交通安全法对船长有什么规定"),
                            ("multi_query", "海上交通安全法对船舶负责人有什么规定"),
                            ("expansion", "海上交通安全法对船长有什么规定 船舶航行安全")]
    capped = query_expand.run(State.of("海上交通安全法对船长有什么规定", plan=RetrievalPlan(expansion_count=1)), ctx)
    assert len(capped.variants) == 2
    off = query_expand.run(State.of("海上交通安全法对船长有什么规定", plan=RetrievalPlan(expand_query=False)), ctx)
    assert kinds(off) == [("original", "海上交通安全法对船长有什么规定")]


def test_broken_graph_leaves_the_original_query_marked():
    class Broken:
        def find_entities(self, text, user=None):
            raise RuntimeError("graph file unreadable")

    ctx = Context(resources={"graph": Broken(), "profile": profile_named("generic")})
    s = query_expand.run("海上交通安全法对船长有什么规定", ctx)
    assert kinds(s) == [("original", "海上交通安全法对船长有什么规定")]
    assert s.query_plan.fallback and "graph file unreadable" in s.query_plan.reason
    assert any("graph file unreadable" in f["reason"] and f["term"] == "query_expand_rules"
               for f in ctx.trace.fallbacks())


def test_llm_planner_uses_history_and_keeps_the_original(llm_server):
    llm_server.script.script(Reply(text=json.dumps({"variants": [
        {"text": "船员在保障海上生命安全方面的权利和义务", "kind": "rewrite"},
        {"text": "那船员呢？", "kind": "multi_query"},
        {"text": "船员管理制度", "kind": "step_back"}]}, ensure_ascii=False)))
    s = query_expand.run(State.of("那船员呢？", history=HISTORY), llm_ctx(llm_server))
    assert "船长在保障海上生命安全方面有什么权力" in prompt_of(llm_server)
    assert kinds(s) == [("original", "那船员呢？"), ("rewrite", "船员在保障海上生命安全方面的权利和义务"),
                        ("step_back", "船员管理制度")]
    assert s.query_plan.source == "llm"


def test_llm_planner_with_no_usable_variant_falls_back_to_rules(llm_server):
    llm_server.script.script(Reply(text='{"variants": []}'), Reply(text='{"variants": [{"text": "那船员呢？", "kind": "rewrite"}]}'))
    ctx = llm_ctx(llm_server)
    s = query_expand.run(State.of("那船员呢？", history=HISTORY), ctx)
    assert s.query_plan.source == "rules" and ("rewrite", "船员在保障海上生命安全方面有什么权力？") in kinds(s)
    assert "no usable variant" in ctx.trace.fallbacks()[0]["reason"]


def test_a_cited_jsonl_record_resolves_to_its_chunk():
    from lambdarag.skills.context import cited, marker

    hit = Hit(chunk_id="r7", text="船员应当持有有效证书。", source="records.jsonl:7", section="第五条")
    other = Hit(chunk_id="r8", text="另一条。", source="records.jsonl:8", section="第五条")
    citations, _ = cited(f"船员应当持有有效证书。{marker(hit)}", [other, hit])
    assert [c.chunk_id for c in citations] == ["r7"]


# -- Guard(answer_generate, citation_check): a retry repairs what the check rejected -----------------
def _split_article():
    """Returns article 257 of the Maritime Code as two chunks with one marker (the same file and section)."""
    source, title, arts = MERCHANT
    first, second = arts["第二百五十七条"].split("\n\n")
    return tuple(Hit(chunk_id=f"{source}#第二百五十七条/{i}", text=t, source=source, title=title,
                     section="第二百五十七条", score=1.0 - i * 0.01) for i, t in enumerate((first, second)))


LIMITATION_Q = "海上货物运输的请求权时效期间和航次租船合同的请求权时效期间是多少？"
CHARTER = "有关航次租船合同的请求权，时效期间为二年，自知道或者应当知道权利被侵害之日起计算。"


def test_a_verbatim_quote_of_either_chunk_under_one_marker_passes_the_check():
    first = (answer_generate() >> citation_check).run(State.of(LIMITATION_Q, hits=_split_article()), generic_ctx())
    assert first.verdict.passed and CHARTER in first.answer and "时效期间为一年" in first.answer  # both parts


def test_an_offline_retry_drops_the_sentences_the_check_rejected():
    failed = Verdict(passed=False, details=(f"unsupported | [来源: 海商法#第二百五十七条] | {CHARTER}",),
                     rejected=(CHARTER,))
    out = answer_generate().run(State.of(LIMITATION_Q, hits=_split_article(), verdict=failed), generic_ctx())
    assert "航次租船合同" not in out.answer and "时效期间为一年" in out.answer
    ctx = Context(resources={"profile": profile_named("generic")})
    reviewed = Guard(answer_generate(), citation_check, retry=1).run(
        State.of(LIMITATION_Q, hits=_split_article()), ctx)
    assert reviewed.verdict.passed
    assert next(s for s in ctx.trace.spans if s.kind == "guard").notes == {"verdict": "passed", "attempts": 1}


def test_an_llm_retry_is_told_what_failed_and_answers_differently(llm_server):
    cite = f"[来源: {MERCHANT[0]}#第二百五十七条]"
    wrong = {"answer": f"海上货物运输的请求权时效期间为三年{cite}", "sufficient": True, "missing": []}
    fixed = {"answer": f"就海上货物运输向承运人要求赔偿的请求权，时效期间为一年{cite}", "sufficient": True, "missing": []}
    unsupported = {"items": [{"citation": cite, "status": "unsupported", "reason": "原文为一年，不是三年"}]}
    supported = {"items": [{"citation": cite, "status": "supported", "reason": "原文一致"}]}
    llm_server.script.script(*(Reply(text=json.dumps(r, ensure_ascii=False))
                               for r in (wrong, unsupported, fixed, supported)))
    reviewed = Guard(answer_generate(), citation_check, retry=1)
    out = reviewed.run(State.of(LIMITATION_Q, hits=hits(MERCHANT, "第二百五十七条")), llm_ctx(llm_server))
    assert out.verdict.passed and "一年" in out.answer and "三年" not in out.answer
    assert "原文为一年，不是三年" not in prompt_of(llm_server, 0)
    assert "原文为一年，不是三年" in prompt_of(llm_server, 2) and "unsupported" in prompt_of(llm_server, 2)


def test_an_empty_answer_fails_the_check():
    v = citation_check.run(_answered(""), generic_ctx()).verdict
    assert not v.passed and v.details[0].startswith("empty")
