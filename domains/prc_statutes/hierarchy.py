"""Agency → agency relations that statutes state in fixed forms: who is above whom, who set up whom, who supervises whom.

``国务院设立审计署，在国务院总理领导下`` → 审计署 —上级→ 国务院总理 and 国务院 —设立→ 审计署;
``海关依法独立行使职权，向海关总署负责`` → 海关 —上级→ 海关总署;
``各专门委员会受全国人民代表大会常务委员会的领导`` → 上级; ``X隶属于Y`` → 隶属;
``司法行政部门依照本法对律师、律师事务所和律师协会进行监督、指导`` → 监督指导.
Heads of 上级/隶属 edges are the lower body, tails the higher one.
"""
from __future__ import annotations

import re
from functools import cache
from typing import Iterator

SUPERIOR, MEMBER_OF, FOUNDED, SUPERVISES = "上级", "隶属", "设立", "监督指导"

_BODY = (r"[\u4e00-\u9fa5]{0,24}?(?:主管部门|主管机关|管理部门|管理机构|行政部门|行政机关|人民政府|常务委员会|委员会"
         r"|总署|总局|机关|机构|部门|海关|协会|政府|法院|检察院|总理|主席|署|局|部|院|会)")
_START = r"(?:^|(?<=[。；，：\s])|(?<=条))\s*(?:各|国家|全国)?"
_RULES: tuple[tuple[str, str, str, str], ...] = (  # (relation, pattern, head group, tail group)
    (FOUNDED, _START + rf"(?P<high>{_BODY})[^。；，]{{0,20}}?(?:设立|设置|设)(?P<low>{_BODY})(?=[，。；、]|$)", "high", "low"),
    (SUPERIOR, rf"设立(?P<high>{_BODY})[，,]\s*统一(?:管理|领导)全国的?(?P<low>{_BODY})", "low", "high"),
    (SUPERIOR, rf"设立(?P<low>{_BODY})[，,]\s*在(?P<high>{_BODY})的?领导下", "low", "high"),
    (SUPERIOR, _START + rf"(?P<low>{_BODY})(?:依法)?(?:独立行使职权[，,])?向(?P<high>{_BODY})负责", "low", "high"),
    (SUPERIOR, _START + rf"(?P<low>{_BODY})(?:受|在)(?P<high>{_BODY})的?领导", "low", "high"),
    (MEMBER_OF, _START + rf"(?P<low>{_BODY})(?:隶属于|隶属)(?P<high>{_BODY})", "low", "high"),
    (SUPERVISES, _START + rf"(?P<high>{_BODY})(?:依法|依照本法|依照本条例)?对(?P<low>[^，。；]{{2,30}}?)"
                          r"(?:进行|实施)?(?:监督[、和]指导|指导[、和]监督)", "high", "low"),
)
_TRIGGER = re.compile(r"设|领导|负责|隶属|指导")
"""Every rule needs one of these words; lines without any are skipped cheaply."""
_GENERIC = {"有关部门", "其他有关部门", "相关部门", "有关主管部门", "主管部门", "部门", "机关", "机构", "本会"}


@cache
def _compiled() -> tuple[tuple[str, re.Pattern[str], str, str], ...]:
    """Returns the rules compiled, once, on first use: compiling them costs about 0.1 s, which a question
    that never extracts relations should not pay at import."""
    return tuple((relation, re.compile(pattern), head, tail) for relation, pattern, head, tail in _RULES)


def agency_relations(line: str) -> Iterator[tuple[str, str, str, str]]:
    """Yields (head, relation, tail, matched text) for each agency → agency relation a line states."""
    if not _TRIGGER.search(line):
        return
    for relation, pattern, head, tail in _compiled():
        for m in pattern.finditer(line):
            a, b = m.group(head).strip(), m.group(tail).strip()
            if a != b and min(len(a), len(b)) >= 2 and a not in _GENERIC and b not in _GENERIC:
                yield a, relation, b, m.group(0).strip()
