"""The aspects a comparison is made on (主管部门, 适用范围, 法律责任, …): how a question asks for one, how a statute states it."""
from __future__ import annotations

import re
from typing import Sequence

ASPECTS: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    ("立法目的", re.compile(r"目的|宗旨|解决什么|为什么制定|管什么|管的事|调整什么"), ("为了", "制定本")),
    ("适用范围", re.compile(r"适用|范围|水域|管什么|管的事|调整"), ("适用本", "适用于", "本法所称", "范围")),
    ("主管部门", re.compile(r"主管|部门|机关|机构|谁管|分工|职责|负责|监管|管什么"), ("主管全国", "主管", "负责", "监督管理")),
    ("法律责任", re.compile(r"责任|处罚|罚款|处分|罚则|后果"), ("罚款", "处罚", "法律责任", "处分", "责令")),
    ("程序", re.compile(r"程序|手续|流程|步骤"), ("程序", "申请", "决定", "期限")),
)
"""(aspect, what a question asking for it says, what a statute stating it says)."""
DEFAULT_ASPECTS = ("立法目的", "适用范围", "主管部门")
"""The aspects of a comparison that names none (异同？区别？)."""


def named_aspects(query: str) -> list[tuple[str, tuple[str, ...]]]:
    """Returns (aspect, statement cues) for each aspect the question asks about by name."""
    return [(name, cues) for name, ask, cues in ASPECTS if ask.search(query)]


def aspects_of(query: str) -> list[tuple[str, tuple[str, ...]]]:
    """Returns (aspect, statement cues) the question compares on; the defaults when it names none."""
    return named_aspects(query) or [(name, cues) for name, _, cues in ASPECTS if name in DEFAULT_ASPECTS]


def without_aspects(words: tuple[str, ...]) -> list[str]:
    """Returns the words that are not themselves the way a question names an aspect (主管部门, 法律责任, …)."""
    return [w for w in words if not any(ask.fullmatch(w) or ask.search(w) for _, ask, _ in ASPECTS)]


def words_without_aspects(words: Sequence[str]) -> list[str]:
    """Returns `without_aspects` of any sequence of words."""
    return without_aspects(tuple(words))
