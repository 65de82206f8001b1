"""How statute answers and replies are worded: titles in 《》, articles (条文) and rules (规定), a legal assistant's
greeting; and the words that make a question one about statutes (for telling small talk apart)."""
from __future__ import annotations

import re
from typing import Mapping

from lambdarag.skills.sentences import keywords

from lambdarag.skills.phrasing import ZH

PHRASES: Mapping[str, str] = {
    **ZH,
    "no_passage": "现有资料中没有直接回答该问题的条文。",
    "side_not_found": "以下方面现有资料中未找到依据：《{title}》关于{aspect}的规定。",
    "side": "- 《{title}》：",
    "greeting": "您好！我是法律法规知识问答助手，请直接描述您想查询的法规问题。",
    "out_of_scope": "抱歉，这个问题不在本知识库（法律法规）的范围内，我无法作答。",
}
DOMAIN = re.compile(
    r"(?<![做方想说看用写玩打算语手魔技])法|条例|规定|细则|条款|第.{1,6}条|船|海事|海上|海洋|海域|海关|海商|"
    r"港口|码头|航运|航道|航行|渔|水路|口岸|许可|处罚|罚款|责任|权利|义务|合同|诉讼|登记|证书|主管|部门")
"""Words of a question about statutes: an off-topic cue (天气, 电影) counts only without one of these."""
PUNCTUATION = re.compile(r"[\s\W_]+")
"""Spaces and punctuation, dropped before the domain words are looked for."""


def phrasing(query: str) -> Mapping[str, str]:
    """Returns the statute answer's phrases, in Chinese whatever the question's language."""
    return PHRASES


def in_domain(query: str) -> bool:
    """Returns whether a question holds a word of statutes (`DOMAIN`), punctuation and spaces aside."""
    return bool(DOMAIN.search(PUNCTUATION.sub("", query)))


def missing_things(query: str, context: str) -> list[str]:
    """Returns the question's keywords the context never contains: a statute question's words are its terms."""
    return [w for w in keywords(query) if w.lower() not in context]
