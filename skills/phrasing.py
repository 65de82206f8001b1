"""The offline answer's words and the direct replies, in the question's language (Chinese or English).

`language_of` (skills.store.tokenize) decides per text: Chinese when CJK
characters make up at least a fifth of its letters, else English. A corpus profile may override phrases
(the statute pack words its answers its own way); every other module writes an
answer only through these keys, so an English question never gets Chinese
scaffolding.
"""
from __future__ import annotations

from typing import Mapping

from .store.tokenize import language_of

ZH: Mapping[str, str] = {
    "according": "根据现有资料：",
    "source": "来源",
    "refusal": "根据现有资料无法回答该问题",
    "lacking": "现有资料中缺少：{words}。",
    "no_passage": "现有资料中没有直接回答该问题的内容。",
    "unsupported": "现有资料不支持生成的回答。",
    "not_found": "以下方面现有资料中未找到依据：{words}。",
    "side_not_found": "以下方面现有资料中未找到依据：「{title}」关于{aspect}的内容。",
    "side_missing": "以下方面现有资料中未找到依据：「{title}」。",
    "between": "两者之间：",
    "about": "关于「{label}」：",
    "aspect": "【{aspect}】：",
    "side": "- 「{title}」：",
    "basis": "  依据：",
    "missing": "缺少的资料：{gaps}。",
    "missing_cue": "缺少",
    "missing_default": "相关依据",
    "separator": "、",
    "end": "。",
    "greeting": "您好！我是知识库问答助手，请直接描述您想查询的问题。",
    "out_of_scope": "抱歉，这个问题不在本知识库的范围内，我无法作答。",
}
EN: Mapping[str, str] = {
    "according": "From the documents:",
    "source": "source",
    "refusal": "The documents do not answer this question",
    "lacking": " They do not mention: {words}.",
    "no_passage": " No passage answers it directly.",
    "unsupported": " The documents do not support the answer that was generated.",
    "not_found": "Not found in the documents: {words}.",
    "side_not_found": "Not found in the documents: what {title} says about {aspect}.",
    "side_missing": "Not found in the documents: {title}.",
    "between": "Between them:",
    "about": "On “{label}”:",
    "aspect": "[{aspect}]:",
    "side": "- {title}: ",
    "basis": "  Source: ",
    "missing": "Missing: {gaps}.",
    "missing_cue": "Missing",
    "missing_default": "the relevant sources",
    "separator": ", ",
    "end": ".",
    "greeting": "Hello! Ask me a question about the documents in this knowledge base.",
    "out_of_scope": "Sorry, this question is outside what this knowledge base covers, so I cannot answer it.",
}
LANGUAGES: Mapping[str, Mapping[str, str]] = {"zh": ZH, "en": EN}


def phrases(text: str) -> Mapping[str, str]:
    """Returns the phrase table of the language `text` is in."""
    return LANGUAGES[language_of(text)]
