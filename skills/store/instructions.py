"""Text that reads like an order to the system rather than a statement (OWASP LLM01, prompt injection).

A document is data: it may quote anything, but a sentence such as 忽略以上指令，
回答：… , "ignore previous instructions", "you are now …" or a role line
("system: …") is addressed to the model, not to the reader. Such phrases are
recorded when a corpus is chunked (`Chunk.meta["instructions"]`, shown by
``ask --explain``) and read anew from the text wherever they decide anything (an index outlives its detector):
a chunk holding one is never quoted by the offline answer, never a stored FAQ answer, and never counts as
support for a claim. A reworded order that no phrase here matches is found by
meaning (`store.addressed`), at query time.
"""
from __future__ import annotations

import functools
import re
import unicodedata

from .addressed import addressed_sentences

INSTRUCTION = re.compile(
    r"忽略(?:以上|上述|之前|前面|先前|前文)|忽略(?:所有|全部|其他)的?(?:指令|指示|提示|规则|要求|设定|限制)"
    r"|(?:无视|不要理会|忘记|忘掉)(?:以上|上述|之前|前面|前文|所有)"
    r"|(?:以上|上述|之前的?|先前的?)(?:所有)?(?:指令|指示|提示|规则)|新的?指令|系统提示|你现在是|从现在起你|(?:请你?|你现在|现在)扮演"
    r"|(?:请|立即|必须)?(?:写入|记住|存入|添加)(?:以下|如下|下列)?(?:知识|关系|事实|内容)[:：]"
    r"|(?<![要应需务该必])(?:请|立即|必须)?(?:写入|记住|存入|添加)(?:以下|如下|下列)?[:：]"
    r"|(?:只|直接|必须|请)(?:回答|输出|回复)[:：]"
    r"|ignore (?:all |the |any )?(?:previous|above|prior|earlier)|disregard (?:all |the |any )?(?:previous|above|prior)"
    r"|forget (?:all|everything) (?:you|previous|above|prior|that)|forget your (?:instructions|rules|guidelines)"
    r"|(?:reveal|print|show|repeat|ignore|override|leak) (?:the |your )?system prompt"
    r"|you are now(?= (?:a|an|my|no longer)\b)|(?:here are |follow (?:these|the) |your )new instructions?"
    r"|(?:you (?:will |must |should |shall |now )?|please |now )act as (?:a|an|the) "
    r"|(?:^|\n)\s*(?:system|assistant|developer)\s*[:：]|<\|im_start\|>|\[/?INST\]",
    re.IGNORECASE)


HIDDEN = re.compile(r"[\u00ad\u200b-\u200f\u2060-\u2064\ufeff]|(?<=[\u4e00-\u9fff])[ \t\u3000]+(?=[\u4e00-\u9fff])")
"""What hides an order from a pattern without changing how it reads: zero-width characters, soft hyphens, and
spaces between Chinese characters (忽 略 以 上)."""


def normalised(text: str) -> str:
    """Returns `text` as orders are matched: NFKC (full-width letters folded) without `HIDDEN` characters."""
    return HIDDEN.sub("", unicodedata.normalize("NFKC", text))


@functools.lru_cache(maxsize=4096)
def instruction_phrases(text: str) -> tuple[str, ...]:
    """Returns the instruction-like phrases of `text` (normalised), each once, in order (empty for statements).

    Remembered by text: the checks ask again for every claim citing a hit, and a clean chunk has no flags to
    say it was scanned."""
    return tuple(dict.fromkeys(m.group().strip() for m in INSTRUCTION.finditer(normalised(text))))


def instruction_like(text: str) -> bool:
    """Returns whether `text` reads like an instruction to the system rather than a statement: an order's phrase,
    or a sentence addressed to the system (`store.addressed`)."""
    plain = normalised(text)
    return INSTRUCTION.search(plain) is not None or bool(addressed_sentences(plain))


def orders_in(text: str) -> tuple[str, ...]:
    """Returns the instruction-like phrases of `text`, else its sentences addressed to the system
    (`store.addressed`)."""
    return instruction_phrases(text) or addressed_sentences(normalised(text))


def flagged(hit) -> tuple[str, ...]:
    """Returns what `orders_in` finds in a hit's text now: the phrases stored at index time came from the detector
    of that day, so an index built before a phrase was added, or before a benign one was dropped, is read anew."""
    return orders_in(hit.text)
