"""The retrieval plan: rule detectors, the four layers (the seed's verification table), the threshold ladder, config."""
from __future__ import annotations

import datetime as dt
from functools import partial

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from lambdarag import Message
from lambdarag.skills.store.records import RetrievalPlan, TimeRange
from lambdarag.errors import CompositionError, QueryError
from lambdarag.domains.generic import GenericProfile
from lambdarag.domains.prc_statutes import StatuteProfile
from lambdarag.skills.profile import in_domain
from lambdarag.orchestration import plan as planning
from lambdarag.orchestration.plan import DIRECT_INTENTS, INTENTS, QUERY_TYPES, RISKS, PlanConfig, detect_intent

CONFIG = PlanConfig()
STATUTES = StatuteProfile()
# the questions below are statute questions: planned, as the lifecycle plans them, with the statute pack's cues
build_retrieval_plan = partial(planning.build_retrieval_plan, cues=STATUTES.classifier)
detect_risk = partial(planning.detect_risk, cues=STATUTES.classifier)
wants_table = partial(planning.wants_table, cues=STATUTES.classifier)
HISTORY = (Message(role="user", content="海事局的职责是什么？"), Message(role="assistant", content="……"))


def plan_for(query: str, *, history=(), **kw) -> RetrievalPlan:
    """Returns the plan for `query` with its intent detected as the pipeline would."""
    return build_retrieval_plan(query, detect_intent(query, history, STATUTES.wording.in_domain), CONFIG, history=history, **kw)


# --- rule detectors -------------------------------------------------------

@pytest.mark.parametrize("query, history, intent", [
    ("你好！", (), "greeting"),
    ("谢谢你", (), "greeting"),
    ("Hello", (), "greeting"),
    ("你好，请问船员证书有效期多久？", (), "knowledge"),
    ("我要转人工", (), "human_service"),
    ("你好，帮我转人工客服", (), "human_service"),
    ("今天上海天气怎么样？", (), "out_of_scope"),
    ("给我讲个笑话", (), "out_of_scope"),
    ("海上天气恶劣时船舶应当采取哪些措施？", (), "knowledge"),
    ("船舶国籍证书遗失了如何办理补发手续？", (), "faq"),
    ("申请海员证需要哪些材料", (), "faq"),
    ("船舶在海上发生碰撞后船长应当履行哪些义务？", (), "knowledge"),
    ("那船员呢？", HISTORY, "follow_up"),
    ("它的上级部门是谁？", HISTORY, "follow_up"),
    ("这个呢", HISTORY, "follow_up"),
    ("那船员呢？", (), "knowledge"),
    ("它的上级部门是谁？", (), "knowledge"),
    ("船舶在海上发生碰撞后船长应当履行哪些义务？", HISTORY, "knowledge"),
    ("其他国家的船舶应该怎样登记", HISTORY, "faq"),
])
def test_detect_intent(query, history, intent):
    assert detect_intent(query, history, STATUTES.wording.in_domain) == intent


@pytest.mark.parametrize("query, intent", [("Hello!", "greeting"), ("thanks", "greeting"),
                                           ("What's the weather like today?", "out_of_scope"),
                                           ("Tell me a joke", "out_of_scope"),
                                           ("How do I keep the system time in sync?", "knowledge"),
                                           ("Is the package using a single config file?", "knowledge")])
def test_english_intents_and_off_topic_cues_on_word_boundaries(query, intent):
    assert detect_intent(query, (), lambda q: in_domain(GenericProfile(), q)) == intent   # no index: only cue-free questions are in


def test_a_question_with_an_off_topic_cue_is_in_domain_when_its_words_are_the_corpus_words(tmp_path, monkeypatch):
    from lambdarag.domains.corpus import build_index

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "forecast.md").write_text("# Weather forecast service\n\nThe weather forecast daemon polls every hour.\n")
    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path / "home"))   # restored after the test, not deleted
    index = build_index(docs, "w", dense=False, progress=False)
    profile = GenericProfile()
    assert detect_intent("How often does the weather forecast daemon poll?", (), lambda q: in_domain(profile, q, index)) \
        == "knowledge"
    assert detect_intent("What's the weather in Paris?", (), lambda q: in_domain(profile, q, index)) == "out_of_scope"


def test_detect_intent_rejects_an_empty_query():
    with pytest.raises(QueryError, match="detect_intent: the query is empty"):
        detect_intent(" ？ ")


@pytest.mark.parametrize("query, risk", [
    ("引航费应当由谁支付？", "pricing"),
    ("违反船员条例的罚款是多少", "pricing"),          # money outranks legal judgement
    ("外国籍船舶能否从事我国沿海运输？", "compliance"),
    ("未取得许可擅自从事水路运输的法律责任", "compliance"),
    ("船舶主机故障无法启航应当如何排查", "troubleshooting"),
    ("总结船员管理的主要内容", "summary"),
    ("海事局的上级部门是谁", ""),
])
def test_detect_risk(query, risk):
    assert detect_risk(query) == risk


@pytest.mark.parametrize("query, table", [
    ("港口收费表中拖轮费第几档？", True),
    ("货物港务费的收费标准是多少", True),
    ("船员体检费多少钱", True),
    ("附表二里哪一栏是内河船舶", True),
    ("海事局的上级部门是谁", False),
    ("船员证书有效期多久", False),
])
def test_wants_table(query, table):
    assert wants_table(query) is table


# --- the seed's verification table (§8.1.4) ---------------------------------

@pytest.mark.parametrize("query, intent", [("你好！", "greeting"), ("今天上海天气怎么样？", "out_of_scope"),
                                           ("我要转人工", "human_service")])
def test_direct_answer_retrieves_nothing(query, intent):
    plan = plan_for(query)
    assert (plan.intent, plan.retrieve, plan.faq_first, plan.expand_query) == (intent, False, False, False)
    assert plan.direct_reply == (getattr(CONFIG.direct_reply, intent) or "")   # unset: the profile's, when replying
    assert plan.faq_direct_threshold == 1.0
    assert plan.reason == f"direct_reply_{intent}"  # no retrieval-tuning tags on a plan that retrieves nothing


def test_faq_first_lowers_the_bar_and_reads_fewer_documents():
    query = "船舶国籍证书遗失了如何办理补发手续？"
    faq, knowledge = plan_for(query), build_retrieval_plan(query, "knowledge", CONFIG)
    assert faq.faq_first and not knowledge.faq_first
    assert faq.faq_direct_threshold == pytest.approx(0.64)    # max(0.62, 0.72 - 0.08)
    assert knowledge.faq_direct_threshold == pytest.approx(0.72)
    assert faq.bm25_top_k == faq.dense_top_k == 10 < knowledge.bm25_top_k
    assert not faq.expand_query and faq.allow_similar_faq
    assert faq.reason == "faq_first"


def test_faq_threshold_never_drops_below_its_floor():
    config = PlanConfig(faq={"thresholdDiscount": 0.5})
    plan = build_retrieval_plan("船舶国籍证书遗失了如何办理补发手续？", "faq", config)
    assert plan.faq_direct_threshold == pytest.approx(0.62)


def test_knowledge_widens_document_recall_and_keeps_rerank():
    plan = plan_for("船舶在海上发生碰撞后船长应当履行哪些义务？")
    default = CONFIG.types.default
    assert plan.bm25_top_k == plan.dense_top_k == default.wide_doc_top_k > default.doc_top_k
    assert plan.fused_top_k == 45 and plan.final_top_k == 5
    assert plan.rerank and plan.expand_query and not plan.faq_first
    assert plan.reason == "knowledge_wide_recall"


def test_follow_up_turns_variants_on_and_raises_the_bar():
    plan = plan_for("那船员呢？", history=HISTORY)
    assert plan.intent == "follow_up" and plan.expand_query
    assert plan.faq_direct_threshold == pytest.approx(0.78) and plan.faq_top_k == 24
    assert plan.bm25_top_k == 30 and plan.short_query
    assert plan.reason == "follow_up_history_aware"  # short, but exempt: the history completes it


def test_a_follow_up_without_history_gets_the_short_query_guard():
    plan = build_retrieval_plan("那船员呢？", "follow_up", CONFIG)
    assert plan.reason == "follow_up_history_aware_short_query_guard"
    assert plan.bm25_top_k == 12


def test_short_query_guard_narrows_recall_and_raises_the_bar():
    short, long_ = plan_for("船员证书"), plan_for("船舶在海上发生碰撞后船长应当履行哪些义务？")
    assert short.short_query and not long_.short_query
    assert short.bm25_top_k == 12 < long_.bm25_top_k                 # min(30, max(12, 5 * 2))
    assert short.faq_top_k == 10 < long_.faq_top_k
    assert short.faq_direct_threshold == pytest.approx(0.78) and long_.faq_direct_threshold == pytest.approx(0.72)
    assert short.reason == "knowledge_wide_recall_short_query_guard"


def test_short_query_length_ignores_punctuation_and_spaces():
    query = "船员 证书 有效期 多久 ？？？ ！！！"  # 9 characters of content
    assert plan_for(query).short_query
    assert not build_retrieval_plan(query, "knowledge", PlanConfig(shortQuery={"maxChars": 8})).short_query


def test_pricing_widens_recall_and_sets_a_high_bar():
    plan = plan_for("船舶进港时的引航费应当由谁来支付？")
    assert plan.risk == "pricing"
    assert plan.faq_direct_threshold == pytest.approx(0.84)
    assert plan.bm25_top_k == 30 and plan.final_top_k == 6
    assert plan.reason == "knowledge_wide_recall_pricing_guard"


def test_pricing_restores_faq_recall_cut_by_the_short_query_guard():
    plan = plan_for("退费怎么办")  # faq intent, short, pricing
    assert plan.reason == "faq_first_short_query_guard_pricing_guard"
    assert plan.faq_top_k == CONFIG.faq_top_k == 20
    assert plan.faq_direct_threshold == pytest.approx(0.84)


def test_compliance_is_the_strictest():
    plan = plan_for("外国籍船舶能否从事我国沿海运输？")
    assert plan.risk == "compliance" and plan.faq_direct_threshold == pytest.approx(0.86)
    assert plan.final_top_k == 6 and plan.bm25_top_k == 30
    assert plan.reason == "knowledge_wide_recall_compliance_guard"


def test_faq_short_compliance_stacks_every_tag():
    plan = plan_for("如何办理合规审批？")
    assert plan.reason == "faq_first_short_query_guard_compliance_guard"
    assert plan.faq_first and plan.faq_direct_threshold == pytest.approx(0.86)


@pytest.mark.parametrize("query, risk", [("船舶主机故障无法启航应当如何排查处理", "troubleshooting"),
                                         ("请总结一下船员管理法规的主要内容", "summary")])
def test_troubleshooting_and_summary_widen_recall_and_context_only(query, risk):
    plan = build_retrieval_plan(query, "faq", CONFIG)
    plain = build_retrieval_plan(query, "faq", CONFIG, risk="")
    assert plan.risk == risk and plan.reason == f"faq_first_{risk}_guard"
    assert plan.bm25_top_k == 30 > plain.bm25_top_k and plan.final_top_k == 6 > plain.final_top_k
    assert plan.faq_direct_threshold == plain.faq_direct_threshold


def test_table_question_prefers_rows_and_only_exact_faq_answers():
    plan = plan_for("港口收费表中拖轮费在第几档？")
    assert plan.prefer_tables and not plan.allow_similar_faq
    assert plan.final_top_k == 7 and plan.bm25_top_k == 30
    assert plan.reason == "knowledge_wide_recall_pricing_guard_table_row_preferred"


def test_table_preference_can_keep_similar_faq_answers_when_configured():
    config = PlanConfig(table={"exactFaqOnly": False, "widenRecall": False})
    plan = build_retrieval_plan("附表二里哪一栏是内河船舶", "faq", config)
    assert plan.prefer_tables and plan.allow_similar_faq and plan.bm25_top_k == 10


def test_complete_plan_carries_every_field_and_the_reason():
    when = TimeRange(as_of=dt.date(2020, 1, 1))
    plan = build_retrieval_plan("2020年时船员条例对船员注册有哪些规定", "knowledge", CONFIG,
                                query_type="temporal", time_range=when)
    assert plan == RetrievalPlan(
        bm25_top_k=30, dense_top_k=30, fused_top_k=45, final_top_k=6, max_context_chars=6000,
        max_chunk_chars=800, expand_query=False, expansion_count=3, rerank=True,
        prefer_tables=False, faq_first=False, faq_direct_threshold=0.72, allow_similar_faq=True,
        retrieve=True, direct_reply="", intent="knowledge", risk="summary", max_hops=2, max_nodes=20,
        faq_top_k=20, query_type="temporal", short_query=False, time_range=when,
        reason="temporal_knowledge_wide_recall_summary_guard")


# --- the query-type axis ------------------------------------------------------

def test_query_types_set_their_defaults_first():
    query = "船舶登记管理与船员管理的制度安排"
    plans = {t: build_retrieval_plan(query, "knowledge", CONFIG, query_type=t) for t in QUERY_TYPES}
    # fact fuses two lists by z-scores, which need a deep enough pool: its recall is not the narrowest
    assert plans["fact"].bm25_top_k <= plans["relation"].bm25_top_k < plans["compare"].bm25_top_k \
        < plans["synthesis"].bm25_top_k
    assert plans["fact"].max_context_chars < plans["compare"].max_context_chars \
        < plans["synthesis"].max_context_chars
    assert plans["synthesis"].final_top_k > plans["fact"].final_top_k
    assert not plans["temporal"].expand_query and not plans["fact"].expand_query
    assert plans["compare"].expand_query and plans["compare"].expansion_count == 4
    assert plans["relation"].max_hops == 3 > plans["compare"].max_hops
    assert {p.reason for p in plans.values()} == {f"{t}_knowledge_wide_recall" for t in QUERY_TYPES}


def test_a_follow_up_expands_even_a_temporal_query():
    plan = build_retrieval_plan("那2019年的呢", "follow_up", CONFIG, query_type="temporal", history=HISTORY)
    assert plan.expand_query and plan.reason == "temporal_follow_up_history_aware"


@pytest.mark.parametrize("kwargs, message", [
    ({"intent": "chitchat"}, "intent 'chitchat' is not one of greeting, out_of_scope, human_service, faq, "
                             "knowledge, follow_up"),
    ({"query_type": "howto"}, "query_type 'howto' is not one of fact, compare, relation, synthesis, temporal"),
    ({"risk": "legal"}, "risk 'legal' is not one of pricing, compliance, troubleshooting, summary"),
])
def test_bad_arguments_name_the_valid_choices(kwargs, message):
    args = {"intent": "knowledge", **kwargs}
    with pytest.raises(CompositionError) as err:
        build_retrieval_plan("船员证书", args.pop("intent"), CONFIG, **args)
    assert str(err.value) == f"build_retrieval_plan: {message}"


# --- the threshold ladder (property tests) -------------------------------------

FRAGMENTS = ("你好", "那", "呢", "它的", "船员", "海事局", "上级部门", "如何办理", "费用", "多少钱", "能否", "合规",
             "故障", "总结", "表中", "第几档", "有哪些", "2019年", "最新", "船舶登记", "条例", "是谁", "？", " ")
queries = st.one_of(st.lists(st.sampled_from(FRAGMENTS), max_size=8).map("".join), st.text(max_size=30))
unit = st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def configs(draw) -> PlanConfig:
    """Returns a random config whose threshold ladder is in order."""
    floor, base, mid_a, mid_b, pricing, compliance, direct = sorted(draw(st.lists(unit, min_size=7, max_size=7)))
    follow, short = (mid_a, mid_b) if draw(st.booleans()) else (mid_b, mid_a)
    return PlanConfig.model_validate({
        "baseThreshold": base, "faqTopK": draw(st.integers(1, 40)),
        "faq": {"thresholdFloor": floor, "thresholdDiscount": draw(unit)},
        "followUp": {"threshold": follow}, "shortQuery": {"threshold": short, "maxChars": draw(st.integers(1, 20))},
        "risk": {"pricing": {"threshold": pricing}, "compliance": {"threshold": compliance},
                 "troubleshooting": {"threshold": draw(st.floats(0.0, pricing))},
                 "summary": {"threshold": draw(st.floats(0.0, pricing))}},
        "directReply": {"threshold": direct}})


RETRIEVING = tuple(i for i in INTENTS if i not in DIRECT_INTENTS)
types = st.sampled_from((None,) + QUERY_TYPES)
histories = st.sampled_from(((), HISTORY))


@settings(max_examples=150, deadline=None)
@given(queries, st.sampled_from(RETRIEVING), types, histories, configs())
def test_a_riskier_category_never_lowers_the_threshold(query, intent, query_type, history, config):
    def threshold(risk: str) -> float:
        return build_retrieval_plan(query, intent, config, query_type=query_type, history=history,
                                    risk=risk).faq_direct_threshold

    none, pricing, compliance = threshold(""), threshold("pricing"), threshold("compliance")
    for milder in ("troubleshooting", "summary"):
        assert none <= threshold(milder) <= pricing
    assert none <= pricing <= compliance <= config.direct_reply.threshold


@settings(max_examples=150, deadline=None)
@given(queries, st.sampled_from(RETRIEVING), types, histories, configs())
def test_every_layer_that_fires_leaves_its_floor_under_the_threshold(query, intent, query_type, history, config):
    plan = build_retrieval_plan(query, intent, config, query_type=query_type, history=history)
    floors = {"faq_first": min(config.faq.threshold_floor, config.base_threshold),
              "knowledge_wide_recall": config.base_threshold,
              "follow_up_history_aware": config.follow_up.threshold,
              "short_query_guard": config.short_query.threshold}
    floors.update({f"{r}_guard": getattr(config.risk, r).threshold for r in RISKS})
    fired = [tag for tag in floors if tag in plan.reason]
    assert fired and all(plan.faq_direct_threshold >= floors[tag] for tag in fired)
    assert 0.0 <= plan.faq_direct_threshold <= config.direct_reply.threshold
    assert plan.dense_top_k == plan.bm25_top_k and plan.fused_top_k >= plan.final_top_k


@settings(max_examples=150, deadline=None)
@given(queries, types, configs())
def test_intent_ladder_faq_knowledge_follow_up_direct(query, query_type, config):
    def threshold(intent: str) -> float:
        return build_retrieval_plan(query, intent, config, query_type=query_type).faq_direct_threshold

    assert threshold("faq") <= threshold("knowledge") <= threshold("follow_up") <= threshold("greeting")


# --- configuration ---------------------------------------------------------------

def test_config_reads_camel_case_yaml_and_keeps_per_entry_defaults():
    config = PlanConfig.model_validate(yaml.safe_load("""
        baseThreshold: 0.7
        shortQuery: {maxChars: 6}
        types:
          fact: {docTopK: 10}
        risk:
          pricing: {finalTopK: 9}
    """))
    assert config.base_threshold == 0.7 and config.short_query.max_chars == 6
    assert config.types.fact.doc_top_k == 10
    assert config.types.fact.final_top_k == 4 and config.types.fact.max_context_chars == 4000  # fact's own
    assert config.risk.pricing.final_top_k == 9 and config.risk.pricing.threshold == 0.84
    assert PlanConfig(short_query={"max_chars": 6}) == PlanConfig(shortQuery={"maxChars": 6})
    with pytest.raises(ValidationError):
        config.base_threshold = 0.5  # frozen


def test_a_rule_shared_by_layers_is_declared_once_and_a_partial_entry_keeps_its_layer_s_number():
    """`threshold`, `finalTopK` and `docTopKFloor` mean one thing in every layer that has them: one declaration
    each (its bound and meaning), the layer's number in `LAYER_DEFAULTS`/`RISK_DEFAULTS`; the tables' entries are
    the defaults' names."""
    shared = {"threshold": planning.FaqBar, "final_top_k": planning.HitsFloor,
              "doc_top_k_floor": planning.RecallCut, "widen_recall": planning.WiderRecall}
    layers = [*planning.LAYER_DEFAULTS.values(), *planning.RISK_DEFAULTS.values()]
    for layer in layers:
        for name in type(layer).model_fields.keys() & shared.keys():
            assert isinstance(layer, shared[name]), (type(layer).__name__, name)
            assert name not in vars(type(layer)).get("__annotations__", {}), (type(layer).__name__, name)
    assert list(planning.TypeTable.model_fields) == list(planning.TYPE_DEFAULTS)
    assert list(planning.RiskTable.model_fields) == list(planning.RISK_DEFAULTS)
    config = PlanConfig.model_validate({"followUp": {"faqTopK": 30}, "table": {"exactFaqOnly": False}})
    assert (config.follow_up.faq_top_k, config.follow_up.threshold, config.follow_up.final_top_k) == (30, 0.78, 5)
    assert (config.table.final_top_k, config.table.widen_recall) == (7, True)
    assert PlanConfig(follow_up={"faq_top_k": 30}) == PlanConfig(followUp={"faqTopK": 30})


@pytest.mark.parametrize("data, where, what", [
    ({"topK": 3}, "topK", "Extra inputs are not permitted"),
    ({"risk": {"pricing": {"treshold": 0.9}}}, "risk.pricing.treshold", "Extra inputs are not permitted"),
    ({"risk": {"legal": {}}}, "risk.legal", "Extra inputs are not permitted"),
    ({"types": {"fact": {"docTopK": 35}}}, "types.fact",
     "wideDocTopK (30) must be at least docTopK (35)"),
    ({"baseThreshold": 1.2}, "baseThreshold", "less than or equal to 1"),
])
def test_config_errors_name_the_key(data, where, what):
    with pytest.raises(ValidationError) as err:
        PlanConfig.model_validate(data)
    text = str(err.value)
    assert where in text and what in text


@pytest.mark.parametrize("data, message", [
    ({"risk": {"pricing": {"threshold": 0.9}}},
     "risk.pricing.threshold (0.9) is above risk.compliance.threshold (0.86)"),
    ({"followUp": {"threshold": 0.7}}, "baseThreshold (0.72) is above followUp.threshold (0.7)"),
    ({"faq": {"thresholdFloor": 0.8}}, "faq.thresholdFloor (0.8) is above baseThreshold (0.72)"),
    ({"risk": {"summary": {"threshold": 0.85}}},
     "risk.summary.threshold (0.85) is above risk.pricing.threshold (0.84)"),
])
def test_a_non_monotone_ladder_fails_naming_the_keys(data, message):
    with pytest.raises(ValidationError) as err:
        PlanConfig.model_validate(data)
    assert "FAQ direct-answer thresholds must rise with risk, but " in str(err.value)
    assert message in str(err.value)


def test_every_broken_rung_is_reported():
    with pytest.raises(ValidationError) as err:
        PlanConfig.model_validate({"shortQuery": {"threshold": 0.95}, "directReply": {"threshold": 0.8}})
    text = str(err.value)
    assert "shortQuery.threshold (0.95) is above risk.pricing.threshold (0.84)" in text
    assert "risk.compliance.threshold (0.86) is above directReply.threshold (0.8)" in text


def test_risk_and_table_cues_are_the_corpus_profiles():
    """A fine or an annexed table is a statute question's cue; the generic pack, holding no statute words, sees
    neither, and a plan built without a profile uses the generic pack's cues."""
    generic = GenericProfile().classifier
    assert detect_risk("逾期未缴要交多少罚款？") == "pricing" and planning.detect_risk("逾期未缴要交多少罚款？", generic) == ""
    assert planning.detect_risk("逾期未缴要交多少罚款？") == ""
    assert wants_table("附表二的适用范围") and not planning.wants_table("附表二的适用范围", generic)
    assert planning.detect_risk("退款要多久？", generic) == "pricing" and planning.wants_table("收费标准是什么", generic)


def test_every_limit_a_query_type_sets_reaches_its_plan():
    """The limits are declared once (`skills.store.limits.Limits`) and a plan starts from all of them: a type's
    setting of any one of them, however new, is what the plan of a question of that type carries."""
    from lambdarag.skills.store.limits import Limits

    odd = {name: (not field.default) if isinstance(field.default, bool) else field.default + 7
           for name, field in Limits.model_fields.items()}
    config = PlanConfig.model_validate({"types": {"relation": odd}})
    plan = planning.build_retrieval_plan("甲和乙是什么关系？", "knowledge", config, query_type="relation")
    assert {name: getattr(plan, name) for name in odd} == odd
    assert set(Limits.model_fields) <= set(RetrievalPlan.model_fields) & set(planning.TypeDefaults.model_fields)
