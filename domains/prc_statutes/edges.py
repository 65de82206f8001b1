"""How a relation question asks for a relation type among the statute graph's edges (受谁领导 → 上级/隶属, 由谁主管 → 主管)."""
from __future__ import annotations

import re

CUES: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"上级|受谁领导|谁领导|领导|向谁负责|隶属|直属"), ("上级", "隶属")),
    (re.compile(r"设的|设立|设置|谁设"), ("设立",)),
    (re.compile(r"监督指导|指导"), ("监督指导", "主管")),
    (re.compile(r"依据|上位法|根据哪|依照哪|为实施|为了实施"), ("依据",)),
    (re.compile(r"主管|负责|管理|监管|监督|归哪|归谁|谁管|哪个部门|哪些部门|哪个机关|哪些机关|由谁|谁来"), ("主管",)),
)
ASKING = frozenset("部门 机关 机构 哪个 哪些 负责 主管 管理 监督 领导 上级 依据 法律 制定 谁 设 归 各地 全国 地方 哪".split())
"""Words of the question that name the relation rather than what it is about (a keyword holding one is not a topic)."""
