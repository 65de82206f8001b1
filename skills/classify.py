"""Query classification: rules first (zero cost), an LLM when the rules are unsure, a configured default last.

Types: fact (a number, date, name or clause), compare (two or more things set
side by side), relation (who governs what, which law a rule rests on),
synthesis (a survey across documents), temporal (versions, revisions, dates
in force).
"""
from __future__ import annotations

import re
from typing import Any, Iterable, Literal, Mapping, Optional

from pydantic import BaseModel, Field

from lambdarag import If, Lam, State, Term, Tool
from lambdarag.errors import ConfigError
from lambdarag.state import Record

from .registry import skill

QueryType = Literal["fact", "compare", "relation", "synthesis", "temporal"]
TYPES: tuple[str, ...] = ("fact", "compare", "relation", "synthesis", "temporal")

# Ordered: the first type whose cue fires wins. Compare outranks temporal
# ("X和修订后的Y对比" compares), temporal outranks relation ("目前谁负责" asks
# about the version in force), and fact cues are the weakest evidence.
RULES: tuple[tuple[str, float, re.Pattern[str]], ...] = (
    ("compare", 0.9, re.compile(
        r"异同|区别|区分|不同|差别|差异|对比|比较|相比|相较|哪个更|哪一个更|各自|侧重|相同|一样吗|如何划分|怎么划分|有何分工")),
    ("temporal", 0.85, re.compile(
        r"现行|目前|现在的?|最新|修订后|修正后|修订前|修改后|新规定|历次|沿革|演变|变化|旧版|新版|哪一年|"
        r"(?:什么时候|何时|哪天|哪一天|何日)(?:开始|起)?(?:施行|生效|实施)|施行日期|生效日期|"
        r"\d{4}\s*年(?:版|时|的|适用|修订|修正|以前|之前|以后|起)|(?:19|20)\d{2}\s*版")),
    ("synthesis", 0.85, re.compile(
        r"梳理|总结|综述|概览|概述|汇总|体系|框架|制度安排|全貌|"
        r"(?:有|涉及|包括)哪些[^，。？?]{0,6}(?:法律|法规|规定|规章|司法解释|制度)|"
        r"相关(?:法律|法规|规定)有哪些|都有哪些|分别规定了")),
    ("relation", 0.85, re.compile(
        r"主管|由谁|谁负责|谁来负责|归谁|归哪|哪个(?:部门|机关|机构|单位)|哪些(?:部门|机关|机构)|上位法|上级|下级|隶属|"
        r"依据|依照哪|根据[^，。？?]{0,12}(?:哪|什么)[^，。？?]{0,6}制定|为实施哪|由哪|组成|统一(?:负责|发布|履行)|全面负责")),
    ("fact", 0.7, re.compile(
        r"多少|几年|几天|几个|几小时|多长|多久|期限|时效|有效期|限额|金额|宽度|罚款|罚多少|处罚|处以|赔偿|"
        r"条件|要求|程序|手续|权力|权利|义务|职权|是否|能否|可否|可以|应当|哪些|什么时候|何时|怎么计算|如何计算|是什么")),
)

_LAW = re.compile(r"《([^》]{2,40})》|((?:中华人民共和国)?[\u4e00-\u9fff]{2,24}?(?:法|条例|实施细则|细则|办法|公约|司法解释))(?![院律规人官定典庭解])")
_BODY = re.compile(r"国务院[\u4e00-\u9fff]{0,10}?(?:部门|机构)|[\u4e00-\u9fff]{0,6}?(?:海事管理机构|海事局|海警机构|海关|"
                   r"交通运输部|渔业行政主管部门|港口行政管理部门|海事法院|最高人民法院|生态环境主管部门)")
_SPLIT = re.compile(r"[，。？！?!、；;\s]|和|与|及|以及|跟|同|或|的|在|对|是|关于|根据|依据|依照|按照")
_GENERIC = frozenset({"上位法", "司法解释", "法律", "行政法规", "两个条例"})
_LEAD = re.compile(r"^(?:现行|目前的?|最新的?|修订后的?|修订前的?|新的?|旧的?|我国|关于|对于|按照?|根据|依照|"
                   r"\d{4}\s*年(?:版|时|的|适用的)?的?)+")


class Classification(Record):
    """A query's type with the entities named in it, how sure the decider was, and which stage decided."""

    type: QueryType
    entities: tuple[str, ...] = ()
    confidence: float = 0.0
    stage: Literal["learned", "rules", "llm", "default"] = "rules"
    rule: str = ""


class LLMClassification(BaseModel):
    """What the classification prompt asks the model to return."""

    type: QueryType
    entities: list[str] = Field(default_factory=list)
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)


def query_entities(query: str) -> tuple[str, ...]:
    """Returns the laws and public bodies named in `query`, in order of appearance."""
    found: list[str] = [m.group(1) for m in re.finditer(r"《([^》]{2,40})》", query)]
    for segment in _SPLIT.split(re.sub(r"《[^》]*》", " ", query)):
        segment = _LEAD.sub("", segment)
        for m in _LAW.finditer(segment):
            found.append(_LEAD.sub("", m.group(2) or m.group(1)))
        found += [_LEAD.sub("", m.group(0)) for m in _BODY.finditer(segment)]
    return tuple(dict.fromkeys(e for e in found if len(e) >= 2 and e not in _GENERIC and not e.endswith("两个条例")))


def learned_rule(rule: Any) -> tuple[str, re.Pattern[str]]:
    """Returns a learned rule ``{pattern, type}`` compiled, or fails naming the bad part."""
    try:
        pattern, kind = rule["pattern"], rule["type"]
    except (KeyError, TypeError):
        raise ConfigError(f"classification rule {rule!r} needs the keys 'pattern' and 'type'") from None
    if kind not in TYPES:
        raise ConfigError(f"classification rule {rule!r}: type must be one of {', '.join(TYPES)}")
    try:
        return kind, re.compile(pattern)
    except re.error as e:
        raise ConfigError(f"classification rule {rule!r}: bad pattern: {e}") from None


def rule_classify(query: str, extra_rules: Iterable[Mapping[str, str]] = ()) -> Optional[Classification]:
    """Returns the rule-based classification of `query`, or None when no rule fires (unsure).

    Learned rules (``{"pattern": regex, "type": ...}``, e.g. from user corrections)
    are tried before the built-in ones because they encode past mistakes.
    """
    entities = query_entities(query)
    for rule in extra_rules:
        kind, pattern = learned_rule(rule)
        if pattern.search(query):
            return Classification(type=kind, entities=entities, confidence=0.95, stage="learned",
                                  rule=pattern.pattern)
    for kind, confidence, pattern in RULES:
        m = pattern.search(query)
        if m:
            return Classification(type=kind, entities=entities, confidence=confidence, stage="rules", rule=m.group(0))
    return None


PROMPT = """请判断下面这个用户问题属于哪一类，并找出问题中的关键实体（法律法规名称、机构、船舶类型、制度等）。

类别：
- fact：事实查找，问具体数字、日期、期限、金额、名称或某一条款的内容
- compare：对比分析，把两个或更多法规、机构、制度放在一起比较异同
- relation：关系查询，问主管部门、上下级、隶属、制定依据或上位法
- synthesis：综合分析，跨多部文件的总结、体系梳理、"有哪些规定"
- temporal：时效相关，问现行/最新版本、修订前后的变化、施行日期或某一年的版本

用户问题：{query}

confidence 填 0 到 1 之间的数，表示你有多确定。"""


def _default_type(config: Mapping[str, Any]) -> str:
    kind = config.get("default", "fact")
    if kind not in TYPES:
        raise ConfigError(f"classify.default must be one of {', '.join(TYPES)}, got {kind!r}")
    return kind


def _rules(config: Mapping[str, Any]) -> tuple[Mapping[str, str], ...]:
    rules = tuple(config.get("rules", ()))
    for rule in rules:
        learned_rule(rule)
    return rules


def _as_fields(c: Classification) -> dict[str, Any]:
    return {"query_type": c.type, "entities": c.entities, "classification": c}


@skill("classify_offline")
def rules_then_default(config: Mapping[str, Any]) -> Term:
    """Returns the offline classifier: learned and built-in rules, else the configured default type."""
    default, rules = _default_type(config), _rules(config)

    def decide(state: State) -> dict[str, Any]:
        found = rule_classify(state.query, rules)
        if found is None:
            found = Classification(type=default, entities=query_entities(state.query), confidence=0.3, stage="default")
        return _as_fields(found)

    return Tool("classify_rules_or_default", decide, reads=["query"], writes=["query_type", "entities", "classification"])


def _from_llm(out: LLMClassification, state: State) -> dict[str, Any]:
    entities = tuple(dict.fromkeys(e.strip() for e in out.entities if e.strip())) or query_entities(state.query)
    return _as_fields(Classification(type=out.type, entities=entities, confidence=out.confidence, stage="llm"))


@skill("classify_llm")
def classify_llm(config: Mapping[str, Any]) -> Term:
    """Returns the LLM classifier; offline (or on failure) it uses the rules, then the default type."""
    return Lam("classify_llm", PROMPT, output=LLMClassification, reads=["query"],
               writes=["query_type", "entities", "classification"], parse=_from_llm,
               fallback=rules_then_default(config), max_tokens=200)


@skill("classify")
def classify(config: Mapping[str, Any]) -> Term:
    """Returns rules → LLM → default: the LLM is asked only when no rule fires.

    Config: ``default`` (type when nothing decides, default fact), ``rules``
    (learned ``[{pattern, type}]``).
    """
    rules = _rules(config)

    def try_rules(state: State) -> dict[str, Any]:
        return {"rule_classification": rule_classify(state.query, rules)}

    def adopt(state: State) -> dict[str, Any]:
        return _as_fields(state.rule_classification)

    return If(Tool("classify_rules", try_rules, reads=["query"], writes=["rule_classification"]),
              Tool("adopt_rules", adopt, reads=["rule_classification"],
                   writes=["query_type", "entities", "classification"]),
              classify_llm(config))
