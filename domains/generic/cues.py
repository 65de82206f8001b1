"""What a question's words say about its type, in English and Chinese, and the things it names, for any documents."""
from __future__ import annotations

import re

CUES: tuple[tuple[str, float, tuple[str, ...]], ...] = (
    ("compare", 0.9, (r"\bdifferen(?:ce|ces|t from)\b", r"\bdiffers?\b", r"\bcompare\b", r"\bversus\b",
                      r"\bdistinguish(?:es)?\b", r"\bseparates?\b", r"\bsimilarit(?:y|ies)\b",
                      r"\bvs\.?\s", r"\bbetter than\b", r"\bor\b[^?]{1,40}\bwhich\b", "异同", "区别", "不同", "对比",
                      "比较", "相比")),
    ("temporal", 0.85, (r"\b(?:latest|newest|current) (?:version|release|edition)\b", r"\bwhich (?:version|release)\b",
                        r"\b(?:since|before|until|in) (?:version|release) ", r"\bdeprecated\b", r"\bintroduced in\b",
                        r"\bwhat changed\b", r"\bchanges? in\b", r"\bolder versions?\b", r"\bsince (?:which|when)\b",
                        "最新版", "哪个版本", "旧版本", r"从哪个.{0,16}版本", "版本开始", "自从", "哪一年",
                        "什么时候", "何时", "第几版", r"目前.{0,6}版", r"\bwhen (?:was|were|did|will)\b",
                        "新版本", r"\d{4}\s*年(?:版|以前|之前|以后|起)", "废弃", "引入的")),
    ("synthesis", 0.85, (r"\boverview\b", r"\bsummar(?:y|ise|ize)\b", r"\boutline\b", r"\bsurvey\b",
                         r"\boverall\b", "哪几种", "各自", r"分别(?:放|是|包含|有)", r"\ball (?:the )?(?:ways|options|tools|methods)\b",
                         r"\bmain topics\b", "梳理", "汇总", "概述", "总结", "有哪些方法", "有哪些方式", "有哪些工具")),
    ("relation", 0.85, (r"\brelat(?:e|es|ed|ion) to\b", r"\bhow (?:are|is|do|does) .{2,60}\brelated\b",
                        r"\bdepends? on\b", r"\bdependenc(?:y|ies)\b", r"\bbelongs? to\b", r"\bresponsible for\b",
                        r"\bin charge of\b", r"\bwho (?:maintains|owns|runs|starts|calls)\b", r"\bwhich (?:package|module|component|team|group|process) (?:provides|owns|starts|is responsible|does)\b",
                        "由谁", "谁负责", "属于哪", "依赖", "哪个(?:模块|组件|团队|进程)", r"(?:有|是)什么关系",
                        "有何关系", "关系如何")),
    ("fact", 0.7, (r"\bhow (?:many|much|long|often)\b", r"\bwhat is the default\b", "多少", "多久", "几次", "默认")),
)
"""(type, confidence, cues): the first group whose cue fires decides; English cues on word boundaries."""
RULES: tuple[tuple[str, float, re.Pattern[str]], ...] = tuple(
    (kind, confidence, re.compile("|".join(cues), re.I)) for kind, confidence, cues in CUES)

_QUOTED = re.compile(r"`([^`]{2,60})`|[\"“「『]([^\"”」』]{2,60})[\"”」』]")
_CODE_LIKE = re.compile(r"(?<![\w./-])(?:[A-Z]{2,}[A-Za-z0-9]*|[A-Za-z][\w]*[-./_][\w./-]*\w|[a-z]+[A-Z]\w*)(?![\w-])")
_PAIR = re.compile(r"\bbetween\s+(.{2,40}?)\s+and\s+(.{2,40}?)(?=[?.,;!]|\s+(?:in|for|when|on|regarding)\b|$)"
                   r"|(?:^|\s)([\w./+-]{2,40})\s+(?:vs\.?|versus|or)\s+([\w./+-]{2,40})(?=[?.,;!\s]|$)"
                   r"|\bcompare\s+(.{2,40}?)\s+(?:and|with|to)\s+(.{2,40}?)(?=[?.,;!]|$)", re.I)
_ZH_PAIR = re.compile(r"([\u4e00-\u9fffA-Za-z0-9_.+-]{2,20}?)(?:和|与|跟|同|及)([\u4e00-\u9fffA-Za-z0-9_.+-]{2,20}?)"
                      r"(?:之间)?(?:的|有|在|相比|比较|哪个|谁)")
_LEAD = re.compile(r"^(?:the|a|an|using|use)\s+", re.I)


def query_entities(query: str) -> tuple[str, ...]:
    """Returns the named things of a question in order: quoted or `code` names, the two sides of a comparison
    (between X and Y, X vs Y, X和Y的区别), acronyms and code-like words (APT, apt-get, sources.list)."""
    found: list[tuple[int, str]] = []
    for m in _QUOTED.finditer(query):
        found.append((m.start(), m.group(1) or m.group(2)))
    for m in _PAIR.finditer(query):
        found += [(m.start(i), _LEAD.sub("", m.group(i)).strip()) for i in range(1, 7) if m.group(i)]
    for m in _ZH_PAIR.finditer(query):
        found += [(m.start(1), m.group(1)), (m.start(2), m.group(2))]
    for m in _CODE_LIKE.finditer(query):
        found.append((m.start(), m.group(0)))
    names = [name.strip(" ,.?") for _, name in sorted(found, key=lambda p: p[0])]
    return tuple(dict.fromkeys(n for n in names if len(n) >= 2))


RELATION_CUES: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"\b(?:part of|belongs? to|under which|which (?:section|chapter))\b|属于|在哪一?[章节部分]", re.I),
     ("contains",)),
    (re.compile(r"\b(?:links? to|see also)\b|链接|参见", re.I), ("links_to",)),
    (re.compile(r"\b(?:defin(?:e|es|ed|ition)|meaning of)\b|定义|是指|什么是", re.I), ("defines",)),
)
"""(question cue, relation types of the generic graph it asks about)."""
ASKING = frozenset("which what who where section chapter part link links refer refers define defines definition "
                   "meaning 哪 哪个 哪些 属于 章节 定义 是指 什么 链接".split())
"""Words of a relation question that name the relation rather than what it is about."""
