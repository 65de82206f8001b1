"""Query classification: rules first (zero cost), a learned classifier next, an LLM when both are unsure, a default last.

Types: fact (a number, date, name or clause), compare (two or more things set
side by side), relation (who governs what, which law a rule rests on),
synthesis (a survey across documents), temporal (versions, revisions, dates
in force).
"""
from __future__ import annotations

import re
import threading
from typing import Any, Iterable, Literal, Mapping, Optional

from pydantic import Field

from lambdarag import If, Lam, Reply, State, Term, Tool, extra_field
from lambdarag.errors import ConfigError
from lambdarag.state import Record

from .dense import default_embedder
from .exemplars import SURE, ExemplarClassifier, exemplar_cache, shipped_exemplars
from .registry import skill

QueryType = Literal["fact", "compare", "relation", "synthesis", "temporal"]
TYPES: tuple[str, ...] = ("fact", "compare", "relation", "synthesis", "temporal")

ENUMERATION = r"[^、，。？?]+、[^、，。？?]+、"
"""Three or more things listed with 、 (森林、草原、矿产): a survey across the laws of each, unless compared."""

# Ordered: the first group whose cue fires decides (a type may have two groups of unequal strength).
# Each cue was kept only if, on the dev halves of the routing questions (bench/data/routing/dev.jsonl
# and dev2.jsonl), it decides at least two questions and every one is of its type; tests/test_classify.py
# re-measures that. What the cues leave open goes to the learned classifier (skills/exemplars.py), then
# to the LLM.
CUES: tuple[tuple[str, float, tuple[str, ...]], ...] = (
    ("compare", 0.9, ("异同", "区别", "不同")),
    ("temporal", 0.85, ("最新", "修订后", r"\d{4}\s*年(?:版|时|的|适用|修订|修正|以前|之前|以后|起)")),
    ("synthesis", 0.85, ("梳理", "汇总", r"(?:有|涉及|包括)哪些[^，。？?]{0,6}(?:法律|法规|规定|规章|司法解释|制度)",
                         "哪些(?:法律|法规)")),
    ("relation", 0.85, ("由谁", "谁负责", "哪个(?:部门|机关|机构|单位)", "由哪(?!些法)")),  # 由哪些法律管: laws, not a body
    ("synthesis", 0.8, (ENUMERATION,)),  # after relation: 船舶、设施、人员由哪个部门检查 asks for a body
    ("fact", 0.7, ("多少", "几年", "有效期")),
)
RULES: tuple[tuple[str, float, re.Pattern[str]], ...] = tuple(
    (kind, confidence, re.compile("|".join(cues))) for kind, confidence, cues in CUES)

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
    stage: Literal["learned", "rules", "exemplars", "llm", "default"] = "rules"
    rule: str = ""


extra_field("classification", Classification)
extra_field("rule_classification", Optional[Classification])


class LLMClassification(Reply):
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


def _exemplars(config: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """Returns the extra labelled questions ``[{query, type}]`` of the config (e.g. from user corrections)."""
    out = []
    for e in config.get("exemplars", ()):
        if not isinstance(e, Mapping) or e.get("type") not in TYPES or not str(e.get("query", "")).strip():
            raise ConfigError(f"classification exemplar {e!r} needs a non-empty 'query' and a 'type' "
                              f"among {', '.join(TYPES)}")
        out.append((str(e["query"]), str(e["type"])))
    return tuple(out)


_CLASSIFIERS: dict[tuple[tuple[tuple[str, str], ...], str], ExemplarClassifier] = {}
_CLASSIFIERS_LOCK = threading.Lock()


def exemplar_classifier(extra: tuple[tuple[str, str], ...] = ()) -> ExemplarClassifier:
    """Returns the learned classifier over the shipped exemplars plus `extra` (vectors cached per user, by text).

    It always embeds with the bundled model, whatever retrieval is configured with: the classifier is
    fitted on that model's vectors, and a failing embedding endpoint must not break classification.
    Kept per extra exemplars, as refitting per question would cost more than the classification.
    """
    embedder = default_embedder()
    key = (extra, embedder.name)
    with _CLASSIFIERS_LOCK:
        if key not in _CLASSIFIERS:
            if len(_CLASSIFIERS) >= 8:
                _CLASSIFIERS.clear()
            _CLASSIFIERS[key] = ExemplarClassifier(shipped_exemplars() + extra, embedder, exemplar_cache())
        return _CLASSIFIERS[key]


def learned_classify(query: str, config: Mapping[str, Any]) -> Optional[Classification]:
    """Returns the learned classifier's decision, or None when the config switches it off (``learned: false``)."""
    if not config.get("learned", True):
        return None
    kind, p = exemplar_classifier(_exemplars(config)).classify(query)
    return Classification(type=kind, entities=query_entities(query), confidence=round(p, 3), stage="exemplars")


@skill("classify_offline")
def rules_then_default(config: Mapping[str, Any]) -> Term:
    """Returns the offline classifier: learned and built-in rules, else the learned classifier, else the default type."""
    default, rules = _default_type(config), _rules(config)
    _exemplars(config)

    def decide(state: State) -> dict[str, Any]:
        found = rule_classify(state.query, rules) or learned_classify(state.query, config)
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
    """Returns rules → learned classifier → LLM → default: the LLM is asked only when rules and classifier are unsure.

    Config: ``default`` (type when nothing decides, default fact), ``rules``
    (learned ``[{pattern, type}]``), ``exemplars`` (extra labelled ``[{query, type}]``),
    ``learned`` (false switches the learned classifier off).
    """
    rules = _rules(config)
    _exemplars(config)

    def try_rules(state: State) -> dict[str, Any]:
        found = rule_classify(state.query, rules)
        if found is None:
            learned = learned_classify(state.query, config)
            found = learned if learned is not None and learned.confidence >= SURE else None
        return {"rule_classification": found}

    def adopt(state: State) -> dict[str, Any]:
        return _as_fields(state.rule_classification)

    return If(Tool("classify_rules", try_rules, reads=["query"], writes=["rule_classification"]),
              Tool("adopt_rules", adopt, reads=["rule_classification"],
                   writes=["query_type", "entities", "classification"]),
              classify_llm(config))
