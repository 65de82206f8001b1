"""The per-query retrieval plan: how much to recall, how much context to keep, and when a FAQ may answer directly.

A plan starts from the defaults of the query's type (fact, compare, relation,
synthesis, temporal) and then passes four layers in a fixed order: the intent,
a guard for short (ambiguous) queries, the risk category, and a preference for
table rows. A layer may widen recall or raise the FAQ direct-answer threshold;
no layer lowers a threshold set before it, so a riskier question is never
answered more boldly. Each layer that fires appends its tag to `reason`
(e.g. ``faq_first_short_query_guard_compliance_guard``), which the trace shows.

Intent, risk and table-ness are decided by rules, not an LLM: they steer risk
and cost, so they must be stable, free and explainable.
"""
from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Annotated, Any, Callable, ClassVar, Mapping, Optional, Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from lambdarag.skills.profile import Classifier
from lambdarag.skills.store.limits import Count, Limits
from lambdarag.errors import CompositionError, QueryError

if TYPE_CHECKING:    # the config imports this module; a plan is built only when a question is asked
    from lambdarag.skills.store.records import RetrievalPlan, TimeRange

INTENTS: tuple[str, ...] = ("greeting", "out_of_scope", "human_service", "faq", "knowledge", "follow_up")
DIRECT_INTENTS: tuple[str, ...] = ("greeting", "out_of_scope", "human_service")
RISKS: tuple[str, ...] = ("pricing", "compliance", "troubleshooting", "summary")
QUERY_TYPES: tuple[str, ...] = ("fact", "compare", "relation", "synthesis", "temporal")

FOLLOW_UP_MAX_CHARS = 20
"""A follow-up is a short turn; longer questions carry their own subject."""

Threshold = Annotated[float, Field(ge=0.0, le=1.0)]


class Camel(BaseModel):
    """Frozen config record read from camelCase YAML keys (snake_case names are accepted too)."""

    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)


def over_defaults(defaults: Mapping[str, Camel], data: Any) -> Any:
    """Returns `data` with each named entry laid over its own default, so a partial YAML entry keeps the rest.

    Needed because entries of one table (e.g. `types.fact`, `types.synthesis`) share a model but not their
    default values, and a layer's shared rules (`FaqBar`, `HitsFloor` …) have none of their own. An entry is
    named in snake_case or camelCase (`follow_up`, `followUp`).
    """
    if not isinstance(data, Mapping):
        return data
    spelt = {name: next((k for k in (name, to_camel(name)) if k in data), name) for name in defaults}
    merged: dict[str, Any] = {k: v for k, v in data.items() if k not in spelt.values()}
    for name, default in defaults.items():
        given = data.get(spelt[name])
        if given is None or isinstance(given, BaseModel) or not isinstance(given, Mapping):
            merged[name] = default if given is None else given
            continue
        fields = type(default).model_fields
        layered = default.model_dump(by_alias=True)
        layered.update({(fields[k].alias or k) if k in fields else k: v for k, v in given.items()})
        merged[name] = layered
    return merged


class Table(Camel):
    """A config record whose entries named in `defaults` are laid over their own defaults (`over_defaults`)."""

    defaults: ClassVar[Mapping[str, Camel]] = {}

    @model_validator(mode="before")
    @classmethod
    def _over_defaults(cls, data: Any) -> Any:
        return over_defaults(cls.defaults, data)


def table(name: str, defaults: Mapping[str, Camel], doc: str) -> type[Table]:
    """Returns a `Table` with a field per entry of `defaults`, typed and defaulted by it, so an entry (a query
    type, a risk category) is named once, in its defaults."""
    fields = {"__annotations__": {entry: type(default) for entry, default in defaults.items()}, **defaults}
    return type(name, (Table,), {"__module__": __name__, "__qualname__": name, "__doc__": doc,
                                 "defaults": defaults, **fields})


class TypeDefaults(Camel, Limits):
    """The numbers a plan starts from for one query type, before any layer adjusts them: document recall, and the
    `Limits` a plan carries."""

    doc_top_k: Count = 20
    """Per-retriever document recall (BM25 and dense alike)."""
    wide_doc_top_k: Count = 30
    """Recall when a layer asks for more (knowledge, follow-up, risk, tables)."""

    @model_validator(mode="after")
    def _consistent(self) -> "TypeDefaults":
        if self.wide_doc_top_k < self.doc_top_k:
            raise ValueError(f"wideDocTopK ({self.wide_doc_top_k}) must be at least docTopK ({self.doc_top_k})")
        if self.max_chunk_chars > self.max_context_chars:
            raise ValueError(f"maxChunkChars ({self.max_chunk_chars}) must not exceed "
                             f"maxContextChars ({self.max_context_chars})")
        return self


TYPE_DEFAULTS: dict[str, TypeDefaults] = {
    "default": TypeDefaults(final_top_k=5),
    # One clause answers a fact: short context, no variants. Recall is not
    # narrow: the fact route fuses BM25 and dense by z-scores, which standardise
    # over each list, and over 12 candidates they ranked worse on the dev half of
    # bench/data/routing and left FAQ-first plans fewer than five documents to rank.
    "fact": TypeDefaults(doc_top_k=30, wide_doc_top_k=30, final_top_k=4, max_context_chars=4000,
                         expand_query=False),
    # Both sides of a comparison must be found.
    "compare": TypeDefaults(doc_top_k=30, wide_doc_top_k=40, final_top_k=8, max_context_chars=9000,
                            expansion_count=4),
    # Relations come from the graph: walk further.
    "relation": TypeDefaults(final_top_k=6, max_hops=3, max_nodes=30),
    "synthesis": TypeDefaults(doc_top_k=40, wide_doc_top_k=50, final_top_k=10, max_context_chars=12000,
                              expansion_count=4, max_nodes=40),
    # Variants tend to drop the date or version a temporal question hinges on.
    "temporal": TypeDefaults(final_top_k=6, expand_query=False),
}


TypeTable = table("TypeTable", TYPE_DEFAULTS, "Per-query-type defaults; `default` serves queries of unknown type.")


class FaqBar(Camel):
    """A layer that raises the FAQ direct-answer threshold (no layer lowers one set before it)."""

    threshold: Threshold
    """FAQ direct-answer threshold at least; 0 raises nothing."""


class HitsFloor(Camel):
    """A layer that asks for more evidence."""

    final_top_k: Count
    """Hits at least."""


class RecallCut(Camel):
    """A layer that cuts document recall, never below a floor."""

    doc_top_k_floor: Count
    """Documents per retriever at least, when recall is cut."""


class WiderRecall(Camel):
    """A layer that may widen document recall."""

    widen_recall: bool = True
    """Recall `wideDocTopK` documents per retriever instead of `docTopK`."""


class RiskRule(WiderRecall, HitsFloor, FaqBar):
    """How a risk category tightens the plan: a FAQ bar, more evidence, wider recall."""

    full_faq_recall: bool = False
    """Undo the short-query cut of FAQ recall (money questions need every candidate)."""


RISK_DEFAULTS: dict[str, RiskRule] = {
    "pricing": RiskRule(threshold=0.84, final_top_k=6, full_faq_recall=True),
    "compliance": RiskRule(threshold=0.86, final_top_k=6),
    "troubleshooting": RiskRule(threshold=0.0, final_top_k=6),
    "summary": RiskRule(threshold=0.0, final_top_k=6),
}


RiskTable = table("RiskTable", RISK_DEFAULTS, "Per-risk-category rules.")


class FaqLayer(RecallCut):
    """FAQ-first: trust a standard answer sooner, read fewer documents."""

    threshold_floor: Threshold = 0.62
    """Lowest FAQ direct-answer threshold a FAQ-style question may get."""
    threshold_discount: Threshold = 0.08
    """How far below `baseThreshold` a FAQ-style question's threshold goes (down to the floor)."""
    doc_top_k_divisor: Count = 2
    """Document recall is the type's `docTopK` divided by this (the FAQ is expected to answer)."""


class KnowledgeLayer(HitsFloor):
    """Knowledge question: several passages make one answer."""


class FollowUpLayer(HitsFloor, FaqBar):
    """Follow-up: the turn is incomplete, so recall more and answer from a FAQ only when very sure."""

    faq_top_k: Count = 24
    """FAQ candidates at least."""


class ShortQueryLayer(RecallCut, FaqBar):
    """Short query: ambiguous, so recall fewer documents and raise the FAQ bar."""

    max_chars: Count = 12
    """A query of at most this many characters (punctuation and spaces not counted) is short."""
    final_multiplier: Count = 2
    """Document recall is cut to this many times the type's `finalTopK` (down to the floor)."""
    faq_top_k: Count = 10
    """FAQ candidates at most."""


class TableLayer(WiderRecall, HitsFloor):
    """Table question: keep table rows; a FAQ that merely resembles the question must not answer it."""

    exact_faq_only: bool = True
    """A FAQ answers directly only when it matches the question exactly."""


LAYER_DEFAULTS: dict[str, Camel] = {
    "faq": FaqLayer(doc_top_k_floor=8),
    "knowledge": KnowledgeLayer(final_top_k=5),
    "follow_up": FollowUpLayer(threshold=0.78, final_top_k=5),
    "short_query": ShortQueryLayer(threshold=0.78, doc_top_k_floor=12),
    "table": TableLayer(final_top_k=7),
}
"""Each layer's numbers for the rules it shares with other layers (`FaqBar`, `HitsFloor`, `RecallCut`), which
are declared once and so have no default of their own."""


class DirectReplies(Camel):
    """Replies for intents that need no retrieval, and the threshold that keeps FAQs from answering them.

    An unset greeting or out-of-scope reply is the corpus profile's, in the question's language.
    """

    threshold: Threshold = 1.0
    """FAQ direct-answer threshold of a turn that needs no retrieval (1.0: no FAQ answers it)."""
    greeting: Optional[str] = None
    """Reply to a greeting."""
    out_of_scope: Optional[str] = None
    """Reply to a question outside the documents."""
    human_service: str = "好的，已为您记录转人工请求，请通过人工服务渠道联系工作人员。"


class PlanConfig(Table):
    """Every number of the retrieval plan; YAML section `orchestration.plan` (camelCase keys).

    The FAQ direct-answer thresholds form a ladder from FAQ-first (lowest) to a
    direct reply (highest); a configuration whose ladder is out of order fails.
    """

    base_threshold: Threshold = 0.72
    """Score a FAQ must reach to answer a question directly, before any layer raises it."""
    faq_top_k: Count = 20
    """FAQ candidates retrieved."""
    fused_ratio: float = Field(default=1.5, ge=1.0)
    """Fused list length per document recalled by one retriever."""
    faq: FaqLayer = LAYER_DEFAULTS["faq"]
    knowledge: KnowledgeLayer = LAYER_DEFAULTS["knowledge"]
    follow_up: FollowUpLayer = LAYER_DEFAULTS["follow_up"]
    short_query: ShortQueryLayer = LAYER_DEFAULTS["short_query"]
    risk: RiskTable = RiskTable()
    table: TableLayer = LAYER_DEFAULTS["table"]
    direct_reply: DirectReplies = DirectReplies()
    types: TypeTable = TypeTable()

    defaults = LAYER_DEFAULTS

    @model_validator(mode="after")
    def _monotone_ladder(self) -> "PlanConfig":
        risk = self.risk
        rungs = (  # (lower key, value, higher key, value): the lower rung is the less risky one
            ("faq.thresholdFloor", self.faq.threshold_floor, "baseThreshold", self.base_threshold),
            ("baseThreshold", self.base_threshold, "followUp.threshold", self.follow_up.threshold),
            ("baseThreshold", self.base_threshold, "shortQuery.threshold", self.short_query.threshold),
            ("followUp.threshold", self.follow_up.threshold, "risk.pricing.threshold", risk.pricing.threshold),
            ("shortQuery.threshold", self.short_query.threshold, "risk.pricing.threshold", risk.pricing.threshold),
            ("risk.troubleshooting.threshold", risk.troubleshooting.threshold,
             "risk.pricing.threshold", risk.pricing.threshold),
            ("risk.summary.threshold", risk.summary.threshold, "risk.pricing.threshold", risk.pricing.threshold),
            ("risk.pricing.threshold", risk.pricing.threshold, "risk.compliance.threshold",
             risk.compliance.threshold),
            ("risk.compliance.threshold", risk.compliance.threshold, "directReply.threshold",
             self.direct_reply.threshold),
        )
        broken = [f"{lo} ({a}) is above {hi} ({b})" for lo, a, hi, b in rungs if a > b]
        if broken:
            raise ValueError("FAQ direct-answer thresholds must rise with risk, but " + "; ".join(broken))
        return self


# Intent cues (Chinese and English phrasing). A greeting is the whole turn; a request for a
# person wins over everything; off-domain cues count only when the corpus profile finds the
# question outside its documents.
_GREETING = re.compile(
    r"^(?:你好|您好|嗨|哈喽|hello|hi|hey|在吗|在不在|早上好|上午好|中午好|下午好|晚上好|早安|晚安|"
    r"谢谢|多谢|感谢|再见|拜拜|goodmorning|goodafternoon|goodevening|thanks|thankyou|bye|goodbye)"
    r"(?:啊|呀|哈|呢|你|您|了|啦|助手|小助手|there|all)*$", re.I)
_HUMAN = re.compile(r"转人工|人工客服|人工服务|找人工|要人工|真人|人工坐席|客服电话|联系客服|我要投诉")
_OFF_DOMAIN = re.compile(
    r"天气|气温|股票|基金|彩票|笑话|讲个故事|写.{0,2}诗|唱.{0,2}歌|菜谱|做菜|电影|电视剧|游戏|星座|算命|"
    r"八字|明星|旅游攻略|减肥|你是谁|你叫什么|"
    r"\b(?:weather|forecast|stock ?prices?|lottery|jokes?|tell me a story|poems?|sing a song|recipes?|horoscope|"
    r"celebrit\w*|who are you|what is your name)\b", re.I)
_FAQ = re.compile(
    r"(?:如何|怎么|怎样)(?:办理|申请|办|查询|补办|换证|注册|登记|缴纳|预约|报名|领取)|"
    r"(?:办理|申请)(?:流程|手续|材料|条件|地点|时限)|需要(?:哪些|什么|带)(?:材料|证件|资料)|"
    r"(?:在|去)哪(?:里|儿)?(?:办|申请|查|领)|怎么办")
# A follow-up leans on the previous turn: it opens with a connective, points
# back with a pronoun, or stops short with 呢 / 怎么样.
_ANAPHOR = re.compile(
    r"^(?:那|那么|还有|另外|以及|再|又)|它|他们|她们|这个|那个|这些|那些|这种|那种|这项|这条|上述|前者|后者|"
    r"(?<!应)该|其(?!他|中|余|实|次)|(?:呢|怎么样|如何|又如何)$")
_PUNCT = re.compile(r"[\s\W_]+")


def content(query: str) -> str:
    """Returns `query` without spaces and punctuation: what length rules should count."""
    return _PUNCT.sub("", query)


def detect_intent(query: str, history: Sequence[Any] = (), in_domain: Callable[[str], bool] = lambda q: False) -> str:
    """Returns the intent of `query`: greeting, out_of_scope, human_service, faq, knowledge or follow_up.

    A follow-up needs a non-empty history: without one, the same words are a
    question of their own. `in_domain` (the corpus profile's) says whether a
    question with an off-topic cue is about the documents all the same.
    """
    text = content(query)
    if not text:
        raise QueryError("detect_intent: the query is empty")
    if _HUMAN.search(text):
        return "human_service"
    if _GREETING.match(text):
        return "greeting"
    if _OFF_DOMAIN.search(query) and not in_domain(query):
        return "out_of_scope"
    if history and len(text) <= FOLLOW_UP_MAX_CHARS and _ANAPHOR.search(text):
        return "follow_up"
    if _FAQ.search(text):
        return "faq"
    return "knowledge"


def detect_risk(query: str, cues: Optional[Classifier] = None) -> str:
    """Returns the risk category of `query` (pricing, compliance, troubleshooting, summary) by the corpus profile's
    cues (default: the generic pack's), or "" for none."""
    text = content(query).lower()
    return next((risk for risk, cue in (cues or generic_cues()).risk_cues if cue.search(text)), "")


def wants_table(query: str, cues: Optional[Classifier] = None) -> bool:
    """Returns whether `query` asks for a row or field of a table (a fee, a grade, a column), by the corpus
    profile's cue (default: the generic pack's).

    Such questions are answered by one table row; a FAQ that merely resembles
    them answers a different question.
    """
    cue = (cues or generic_cues()).table_cue
    return bool(cue and cue.search(content(query)))


def generic_cues() -> Classifier:
    """Returns the generic pack's classifier sheet: the risk and table cues of a plan built without a profile."""
    from lambdarag.domains import profile_named   # here: the config imports this module, not the packs

    return profile_named("generic").classifier


def tagged(plan: RetrievalPlan, tag: str, **update: Any) -> RetrievalPlan:
    """Returns `plan` with `update` applied and `tag` appended to its reason."""
    return plan.model_copy(update={**update, "reason": f"{plan.reason}_{tag}" if plan.reason else tag})


def intent_layer(plan: RetrievalPlan, kind: TypeDefaults, config: PlanConfig) -> RetrievalPlan:
    """Returns `plan` shaped by its intent: no retrieval, FAQ-first, wider recall, or cautious follow-up."""
    intent = plan.intent
    if intent in DIRECT_INTENTS:
        return tagged(plan, f"direct_reply_{intent}", retrieve=False, expand_query=False,
                      direct_reply=getattr(config.direct_reply, intent) or "",
                      faq_direct_threshold=config.direct_reply.threshold)
    if intent == "faq":
        faq = config.faq
        docs = min(kind.doc_top_k, max(faq.doc_top_k_floor, kind.doc_top_k // faq.doc_top_k_divisor))
        threshold = max(faq.threshold_floor, config.base_threshold - faq.threshold_discount)
        return tagged(plan, "faq_first", faq_first=True, expand_query=False, bm25_top_k=docs,
                      faq_direct_threshold=threshold)
    if intent == "knowledge":
        return tagged(plan, "knowledge_wide_recall", bm25_top_k=kind.wide_doc_top_k,
                      final_top_k=max(plan.final_top_k, config.knowledge.final_top_k))
    follow = config.follow_up
    return tagged(plan, "follow_up_history_aware", expand_query=True, bm25_top_k=kind.wide_doc_top_k,
                  faq_top_k=max(config.faq_top_k, follow.faq_top_k),
                  final_top_k=max(plan.final_top_k, follow.final_top_k),
                  faq_direct_threshold=max(plan.faq_direct_threshold, follow.threshold))


def short_query_layer(plan: RetrievalPlan, kind: TypeDefaults, config: PlanConfig,
                      history: Sequence[Any]) -> RetrievalPlan:
    """Returns `plan` narrowed for a short query, unless it is a follow-up that history can complete."""
    if not plan.short_query or (plan.intent == "follow_up" and history):
        return plan
    guard = config.short_query
    cap = max(guard.doc_top_k_floor, kind.final_top_k * guard.final_multiplier)
    return tagged(plan, "short_query_guard", bm25_top_k=min(plan.bm25_top_k, cap),
                  faq_top_k=min(plan.faq_top_k, guard.faq_top_k),
                  faq_direct_threshold=max(plan.faq_direct_threshold, guard.threshold))


def risk_layer(plan: RetrievalPlan, kind: TypeDefaults, config: PlanConfig) -> RetrievalPlan:
    """Returns `plan` tightened for its risk category: more evidence, a higher FAQ bar."""
    if not plan.risk:
        return plan
    rule: RiskRule = getattr(config.risk, plan.risk)
    return tagged(plan, f"{plan.risk}_guard",
                  bm25_top_k=max(plan.bm25_top_k, kind.wide_doc_top_k) if rule.widen_recall else plan.bm25_top_k,
                  faq_top_k=max(plan.faq_top_k, config.faq_top_k) if rule.full_faq_recall else plan.faq_top_k,
                  final_top_k=max(plan.final_top_k, rule.final_top_k),
                  faq_direct_threshold=max(plan.faq_direct_threshold, rule.threshold))


def table_layer(plan: RetrievalPlan, kind: TypeDefaults, config: PlanConfig, table: bool) -> RetrievalPlan:
    """Returns `plan` preferring table rows, with FAQ direct answers on exact match only if configured."""
    if not table:
        return plan
    rule = config.table
    return tagged(plan, "table_row_preferred", prefer_tables=True,
                  bm25_top_k=max(plan.bm25_top_k, kind.wide_doc_top_k) if rule.widen_recall else plan.bm25_top_k,
                  final_top_k=max(plan.final_top_k, rule.final_top_k),
                  allow_similar_faq=not rule.exact_faq_only)


def check_choice(name: str, value: Optional[str], choices: tuple[str, ...]) -> None:
    """Fails with the valid choices when `value` is not one of them (None passes)."""
    if value is not None and value not in choices:
        raise CompositionError(f"build_retrieval_plan: {name} {value!r} is not one of {', '.join(choices)}")


def build_retrieval_plan(query: str, intent: str, config: PlanConfig, *, query_type: Optional[str] = None,
                         history: Sequence[Any] = (), time_range: Optional[TimeRange] = None,
                         risk: Optional[str] = None, cues: Optional[Classifier] = None) -> RetrievalPlan:
    """Returns the frozen retrieval plan for `query`: type defaults, then intent, short-query, risk, table layers.

    `risk` overrides `detect_risk(query, cues)` (e.g. when a classifier decided it); `cues` is the corpus
    profile's classifier sheet (default: the generic pack's).
    Plans that do not retrieve skip the retrieval-tuning layers, so their
    reason says only why nothing is retrieved.
    """
    from lambdarag.skills.store.records import RetrievalPlan

    check_choice("intent", intent, INTENTS)
    check_choice("query_type", query_type, QUERY_TYPES)
    check_choice("risk", risk or None, RISKS)
    kind: TypeDefaults = getattr(config.types, query_type or "default")
    plan = RetrievalPlan(
        **kind.limits(), bm25_top_k=kind.doc_top_k, faq_top_k=config.faq_top_k,
        faq_direct_threshold=config.base_threshold, intent=intent,
        risk=detect_risk(query, cues) if risk is None else risk, query_type=query_type, short_query=len(content(query)) <= config.short_query.max_chars,
        time_range=time_range, reason=query_type or "")
    plan = intent_layer(plan, kind, config)
    if plan.retrieve:
        plan = short_query_layer(plan, kind, config, history)
        plan = risk_layer(plan, kind, config)
        plan = table_layer(plan, kind, config, wants_table(query, cues))
    docs = plan.bm25_top_k  # the layers carry document recall here; dense recall follows it
    return plan.model_copy(update={
        "dense_top_k": docs, "fused_top_k": max(plan.final_top_k, math.ceil(docs * config.fused_ratio))})
