"""A Chinese question scored against English units: each unit read with the question's words it renders in English.

The word scorers (BM25 over the units, the coverage refusals are set in) see
no word shared by `数据格式` and "existing data formatting". With the corpus's
term map (`store.bilingual`: 数据 → data, 格式 → format), an English unit
holding a rendering of a question word is glossed with that word, so it
counts as saying it; a unit in the question's language is read as written.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from .sentences import english_stem_in
from .store.bilingual import TermMap, chinese_words, term_map
from .store.tokenize import language_of


def glosses(query: str, texts: Sequence[str], terms: TermMap, tokenize: Callable[[str], list[str]]) -> list[str]:
    """Returns, per text, the question's Chinese words whose English rendering (`terms`) the text holds when the
    text is English and the question Chinese, joined by spaces ("" for any other text). A question word holding
    a word of the map is rendered as that word (jieba may cut 颜色数据格式 whole where the corpus cut 格式)."""
    if language_of(query) != "zh" or not len(terms):
        return [""] * len(texts)
    asked = {w: english for w in dict.fromkeys(tokenize(query)) if chinese_words([w])
             for english in [tuple(e for z, es in terms.english.items() if z in w for e in es)] if english}
    out = []
    for text in texts:
        lowered = text.lower()
        out.append(" ".join(z for z, english in asked.items()
                            if language_of(text) == "en" and any(english_stem_in(e, lowered) for e in english)))
    return out


def terms_of(ctx: Any) -> TermMap:
    """Returns the term map of the context's index (empty without one), mined within the time the question's
    deadline leaves (`evidence.spendable`)."""
    from .evidence import spendable

    index = (getattr(ctx, "resources", None) or {}).get("index")
    if index is None:
        return TermMap()
    return term_map(index, getattr(ctx, "embedder", None), lambda: spendable(ctx))
