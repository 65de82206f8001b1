"""Sentence splitting, query keywords and character-bigram overlap for Chinese and English text.

The offline skills (extractive answers, citation checks, gap detection) all
measure how much of one text another text covers; this module holds that one
measure so that they agree with each other.
"""
from __future__ import annotations

import re
from functools import lru_cache

from .store.tokenize import DEFAULT_STOPWORDS, ENGLISH_STOPWORDS, Tokenizer, language_of, load_words

_SENTENCE_END = re.compile(r"(?<=[。！？；!?;])|\n+")
_PARAGRAPH = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*+>|#]|\d+[.)]\s))")
"""A paragraph break: a blank line, or a line that opens a list item, a quote, a table row or a heading."""
ABBREVIATIONS = frozenset("e.g i.e etc vs cf al mr mrs ms dr prof sr jr st no fig figs eq sec ch vol ed approx "
                          "inc ltd co corp dept est jan feb mar apr jun jul aug sep sept oct nov dec".split())
"""Words after which an English full stop ends no sentence (e.g., etc., Dr.)."""
_ENGLISH_END = re.compile(r"(?<=[.?!])[\"')\]]*\s+(?=[\"'(\[]?[A-Za-z0-9`])")
_CJK_OR_WORD = re.compile(r"[\u4e00-\u9fff]|[A-Za-z0-9]+")

STOPWORDS = frozenset(
    "的 了 和 与 及 以及 或 或者 在 是 有 对 中 上 下 为 被 把 将 由 从 向 就 都 也 还 又 而 并 之 其 该 这 那 那么 这个 那个 "
    "什么 哪些 哪个 哪部 哪一 哪 谁 怎么 怎样 怎么样 如何 为何 为什么 何 吗 呢 吧 啊 呀 么 "
    "多少 几 多长 多久 时间 方面 问题 规定 有关 相关 关于 应当 可以 能否 是否 需要 一下 请问 "
    "有何 何种 异同 区别 不同 差别 差异 对比 比较 相同 怎么样 侧重点 梳理 总结 涉及 "
    "分别 各自 以及 等 个 些 要 会 能 可 我 我国 你 您 我们 他们 它 一个 哪里 是不是 有没有 还是 "
    "最新 现行 目前 现在 版本 哪一年 哪年 何时 什么时候".split()
)
"""Words that carry no topic: question words, particles and connectives."""


def split_sentences(text: str) -> list[str]:
    """Returns the non-empty sentences of `text`, each keeping its end punctuation.

    Chinese text ends a sentence at 。！？； and at every line break; an English
    paragraph is first joined across its hard-wrapped lines, then cut after
    . ? ! before whitespace and a word (a command such as apt opens a sentence in
    lower case), except after a common abbreviation (e.g., Dr.) or a single
    letter (an initial) — an option is neither: "… use -O. So …" is two sentences — nor after a full stop
    standing as a word before a lower-case one: that is the `.` command (…the call to ., and . unsets…).
    """
    if language_of(text) == "zh":
        return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]
    out: list[str] = []
    for paragraph in _PARAGRAPH.split(text):
        if language_of(paragraph) == "zh":
            out += [s.strip() for s in _SENTENCE_END.split(paragraph) if s and s.strip()]
            continue
        joined = re.sub(r"\s*\n\s*", " ", paragraph.strip())
        start = 0
        for m in _ENGLISH_END.finditer(joined):
            before = re.search(r"(-?)([A-Za-z.]+)[.?!][\"')\]]*$", joined[start:m.start()])
            word = before.group(2).lower().rstrip(".") if before and not before.group(1) else ""
            alone = not joined[:m.start() - 1][-1:].strip() and joined[m.end():m.end() + 1].islower()
            if joined[m.start() - 1] == "." and (word in ABBREVIATIONS or len(word) == 1 or alone):
                continue
            out.append(joined[start:m.start()].strip())
            start = m.end()
        out.append(joined[start:].strip())
    return [s for s in out if s]


def bigrams(text: str) -> frozenset[str]:
    """Returns the character bigrams of the CJK and alphanumeric content of `text`."""
    units = _CJK_OR_WORD.findall(text)
    return frozenset(a + b for a, b in zip(units, units[1:]))


def covered(part: str, whole: str) -> float:
    """Returns the share of `part`'s bigrams that also occur in `whole` (0 when `part` has none)."""
    grams = bigrams(part)
    return len(grams & bigrams(whole)) / len(grams) if grams else 0.0


ENGLISH_QUESTION_WORDS = frozenset("please tell explain describe difference differences differ compare comparison "
                                   "versus vs list give mean means meaning".split())
"""English words of asking, like the Chinese question words of STOPWORDS."""


@lru_cache(maxsize=1)
def _tokenizer() -> Tokenizer:
    return Tokenizer(STOPWORDS | ENGLISH_QUESTION_WORDS | frozenset(load_words(DEFAULT_STOPWORDS))
                     | frozenset(load_words(ENGLISH_STOPWORDS)))


@lru_cache(maxsize=1)
def _stemmer():
    from .store.tokenize import english_stemmer

    return english_stemmer()


def english_stem(word: str) -> str:
    """Returns the Snowball stem of an English word, lower-cased (registering, registered → regist)."""
    return _stemmer()(word.lower())


def english_stem_in(word: str, text: str) -> bool:
    """Returns whether lower-cased `text` holds an English `word` in some inflection: a word of it starts with the
    word's Snowball stem (gives → give, in given), when that stem has at least three letters."""
    stem = english_stem(word)
    return len(stem) >= 3 and re.search(r"\b" + re.escape(stem), text) is not None


_PROPER = re.compile(r"(?<=[A-Za-z0-9,;:)] )(?:[A-Z] )?[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*")


def proper_nouns(text: str) -> tuple[str, ...]:
    """Returns the capitalised words of English text that do not open it (France, Debian Reference): names."""
    stop = _tokenizer().stopwords
    return tuple(dict.fromkeys(m.group(0) for m in _PROPER.finditer(text) if m.group(0).lower() not in stop))


_SIGILLED = re.compile(r"(?<![\w%$])[%$][A-Za-z]\w*")
"""A symbol written with its sigil (%R, $HOME): the tokenizer keeps only its letters, too short a word alone."""


def keywords(text: str) -> tuple[str, ...]:
    """Returns the topic words of `text` in order, without stop words, question words or duplicates; a symbol
    with its sigil (`_SIGILLED`: %R) is a word, however short: it is what a format symbol's line says."""
    sigilled = [m.group(0).lower() for m in _SIGILLED.finditer(text)]
    return tuple(dict.fromkeys([*sigilled, *(w for w in _tokenizer()(text) if len(w) >= 2)]))
