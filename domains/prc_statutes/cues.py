"""What a statute question's words say about its type, and the statutes and public bodies it names.

Each cue was kept only if, on the dev halves of the routing questions
(bench/data/routing and bench/data/maritime, dev.jsonl and dev2.jsonl), it
decides at least two questions and every one is of its type;
tests/test_classify.py re-measures that. What the cues leave open goes to the
learned classifier (over data/classify_exemplars.jsonl), then to the LLM; the
classifier may call a question a survey only if its words ask for one
(`asks_for_survey`).
"""
from __future__ import annotations

import re

from lambdarag.domains.generic import cues as generic
from lambdarag.lazy_pattern import LazyPattern

from .kinds import asked_kinds

ENUMERATION = r"[^、，。？?]+、[^、，。？?]+、"
"""Three or more things listed with 、 (森林、草原、矿产): a survey across the laws of each, unless compared."""

# Ordered: the first group whose cue fires decides (a type may have two groups of unequal strength).
CUES: tuple[tuple[str, float, tuple[str, ...]], ...] = (
    ("compare", 0.9, ("异同", "区别", "不同")),
    ("temporal", 0.85, ("最新", "修订后", r"\d{4}\s*年(?:版|时|的|适用|修订|修正|以前|之前|以后|起)")),
    ("relation", 0.85, ("依据哪",)),  # 依据哪些法律制定的 asks what a regulation rests on, not for a survey
    ("synthesis", 0.85, ("梳理", "汇总", r"(?:有|涉及|包括)哪些[^，。？?]{0,6}(?:法律|法规|规定|规章|司法解释|制度)",
                         "哪些(?:法律|法规)")),
    ("relation", 0.85, ("由谁", "谁负责", "哪个(?:部门|机关|机构|单位)", "由哪(?!些法)")),  # 由哪些法律管: laws, not a body
    ("synthesis", 0.8, (ENUMERATION,)),  # after relation: 船舶、设施、人员由哪个部门检查 asks for a body
    ("fact", 0.7, ("多少", "几年", "有效期")),
)
RULES: tuple[tuple[str, float, LazyPattern], ...] = tuple(
    (kind, confidence, LazyPattern("|".join(cues))) for kind, confidence, cues in CUES)

SURVEY_WORDS = re.compile(r"、|梳理|汇总|概述|概况|总结|体系|领域|方面|都有|有哪些(?:法|规|司法)|哪些法|什么法")
"""Words of a question that asks for a survey across documents: a list, 梳理, 体系, 哪些法律 …"""


def asks_for_survey(query: str) -> bool:
    """Returns whether a question's words ask for a survey: it names a kind of document (kinds.asked_kinds) or
    uses `SURVEY_WORDS`. 赔偿分别包括哪些 or 有哪些材料要交 asks for one provision's list, not for documents."""
    return bool(asked_kinds(query) or SURVEY_WORDS.search(query))


_LAW = re.compile(r"《([^》]{2,40})》|((?:中华人民共和国)?[\u4e00-\u9fff]{2,24}?(?:法|条例|实施细则|细则|办法|公约|司法解释))(?![院律规人官定典庭解])")
_BODY = re.compile(r"国务院[\u4e00-\u9fff]{0,10}?(?:部门|机构)|[\u4e00-\u9fff]{0,6}?(?:海事管理机构|海事局|海警机构|海关|"
                   r"交通运输部|渔业行政主管部门|港口行政管理部门|海事法院|最高人民法院|生态环境主管部门)")
_SPLIT = re.compile(r"[，。？！?!、；;\s]|和|与|及|以及|跟|同|或|的|在|对|是|关于|根据|依据|依照|按照")
_GENERIC = frozenset({"上位法", "司法解释", "法律", "行政法规", "两个条例"})
_LEAD = re.compile(r"^(?:现行|目前的?|最新的?|修订后的?|修订前的?|新的?|旧的?|我国|关于|对于|按照?|根据|依照|"
                   r"\d{4}\s*年(?:版|时|的|适用的)?的?)+")


def query_entities(query: str) -> tuple[str, ...]:
    """Returns the laws and public bodies named in `query`, in order of appearance."""
    found: list[str] = [m.group(1) for m in re.finditer(r"《([^》]{2,40})》", query)]
    for segment in _SPLIT.split(re.sub(r"《[^》]*》", " ", query)):
        segment = _LEAD.sub("", segment)
        for m in _LAW.finditer(segment):
            found.append(_LEAD.sub("", m.group(2) or m.group(1)))
        found += [_LEAD.sub("", m.group(0)) for m in _BODY.finditer(segment)]
    return tuple(dict.fromkeys(e for e in found if len(e) >= 2 and e not in _GENERIC and not e.endswith("两个条例")))


TITLE_END = re.compile(r"(?:法|条例|细则|办法|公约|解释|规定)$")
"""How a statute's name ends (a named thing without it is a body or a topic)."""


def is_title(name: str) -> bool:
    """Returns whether a named thing ends as a statute's title does (…法, …条例, …解释)."""
    return bool(TITLE_END.search(name))


def admits_type(kind: str, query: str) -> bool:
    """Returns False for a survey guess on a question that asks for no survey (asks_for_survey)."""
    return kind != "synthesis" or asks_for_survey(query)


RISK_WORDS = {"pricing": "罚款|罚金", "compliance": "合法|违法|法律责任|条款|报关|出口管制|制裁"}
"""A statute question's fines and legal judgement: the words the statute pack adds to each risk category."""
RISK_CUES = generic.widened(generic.RISK_CUES, RISK_WORDS)
"""The generic risk cues with the statute pack's `RISK_WORDS`."""
TABLE_CUE = re.compile(f"{generic.TABLE_CUE.pattern}|附表")
"""The generic table cue with the statutes' annexed tables (附表二里哪一栏…)."""
