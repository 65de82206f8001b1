"""Bilingual terms a corpus shows together: each Chinese word with the English word it stands for, mined per index.

Translated documentation keeps part of its text in English (a Chinese page title over English steps, an English
paragraph naming a dialog whose Chinese label the question uses, `中文标签 (English Label)`), so a Chinese question's
answer may be an English sentence sharing none of its words. A pair is a Chinese word (the index's jieba tokens)
of a chunk holding both languages (a Chinese title over English steps, `中文 (English)`, a table row in both) and
the English word of such chunks that the bundled multilingual embedder places nearest it, within `NEAR`. Mined at an index's first use and kept in the
cache folder by its fingerprint (`term_map`), so a later process reads it; the words' vectors are remembered too
(`store.passage_vectors`), so mining that the question's deadline cut short goes on where it stopped.
"""
from __future__ import annotations

import json
import re
import time
import weakref
from itertools import product
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

import numpy as np

from .files import write_replace
from .home import cache_dir
from .tokenize import ENGLISH_STOPWORDS, load_words

NEAR = 0.90
"""Cosine the embedder must give a candidate pair for it to count as one term in two languages."""

_CJK = re.compile(r"[\u4e00-\u9fff]")
_ENGLISH = re.compile(r"(?<![\w.-])[A-Za-z][a-z]{2,}(?:-[a-z]+)*(?![\w-])")
"""An English word as a term (cell, AutoFormat, through-hole), not a path, option, cell address or identifier."""
_NOISE = re.compile(r"\]\([^)]*\)|https?://\S+|`[^`]*`")
"""Link targets, URLs and code, whose words render nothing."""


@dataclass(frozen=True)
class TermMap:
    """Chinese word → the English words the corpus renders it by (lower-case); empty for a one-language corpus."""

    english: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def of(self, words: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Returns each of `words` the map holds with its English words."""
        return {w: self.english[w] for w in words if w in self.english}

    def __len__(self) -> int:
        return len(self.english)


def english_words(text: str) -> set[str]:
    """Returns the English term words of `text`, lower-cased, without stop words."""
    return {w.lower() for w in _ENGLISH.findall(text)} - _stopwords()


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    return frozenset(load_words(ENGLISH_STOPWORDS))


def chinese_words(tokens: Iterable[str]) -> set[str]:
    """Returns the Chinese tokens of two characters or more (one character means too many things to pair)."""
    return {t for t in tokens if len(t) >= 2 and _CJK.match(t) and all(_CJK.match(ch) for ch in t)}


def shown_together(texts: Iterable[str], tokenize: Callable[[str], list[str]]) -> set[tuple[str, str]]:
    """Returns the (Chinese word, English word) pairs some text holds both of."""
    together: set[tuple[str, str]] = set()
    for text in texts:
        text = _NOISE.sub(" ", text)
        english = english_words(text) if _CJK.search(text) else ()
        if english:     # only then is the text cut into words (a one-language corpus costs a scan)
            together.update(product(chinese_words(tokenize(text)), english))
    return together


def mined(texts: Iterable[str], tokenize: Callable[[str], list[str]],
          embed: Callable[[Sequence[str]], Optional[np.ndarray]]) -> Optional[TermMap]:
    """Returns each Chinese word of the texts holding both languages with its nearest English word of those texts
    (`embed`), when within `NEAR`; None when `embed` gives none. (Requiring the pair in one text and each the
    other's nearest, as first tried, kept a third as many pairs and moved the same answers.)"""
    pairs = sorted(shown_together(texts, tokenize))
    if not pairs:
        return TermMap()
    zh, en = sorted({z for z, _ in pairs}), sorted({e for _, e in pairs})
    vectors = embed([*zh, *en])
    if vectors is None:
        return None
    vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    english = vectors[len(zh):].T
    out = {}
    for start in range(0, len(zh), 1024):
        near = vectors[start:min(start + 1024, len(zh))] @ english
        best = near.argmax(axis=1)
        out.update({zh[start + i]: (en[j],) for i, j in enumerate(best) if near[i, j] >= NEAR})
    return TermMap(out)


BATCH = 64
"""Words embedded per call while a term map is mined, the time left checked before each call."""


def embedded_words(embedder: Any, may_spend: Callable[[], Optional[float]] = lambda: None
                   ) -> Callable[[Sequence[str]], Optional[np.ndarray]]:
    """Returns a function giving `embedder`'s query vectors of words, remembered across processes (`word_vectors`),
    or None when embedding the missing ones did not fit in half of what `may_spend()` allowed at the start (the
    ones embedded are kept, so a later question has less to do)."""
    from .passage_vectors import passage_vectors

    def embed(words: Sequence[str]) -> Optional[np.ndarray]:
        store = passage_vectors(embedder, kind="query")
        rows = store.get(words) if store is not None else [None] * len(words)
        missing = [w for w, r in zip(words, rows) if r is None]
        left = may_spend() if missing else None
        budget, began, got = (None if left is None else left / 2), time.monotonic(), {}
        for start in range(0, len(missing), BATCH):
            if budget is not None and time.monotonic() - began >= budget:
                return None
            batch = missing[start:start + BATCH]
            fresh = np.asarray(embedder.embed(batch, kind="query"), dtype=np.float32)
            if store is not None:
                store.put(batch, fresh)
            got.update(zip(batch, fresh))
        rows = [got[w] if r is None else r for w, r in zip(words, rows)]
        return np.array(rows, dtype=np.float32).reshape(len(words), -1)

    return embed


_MAPS: "weakref.WeakKeyDictionary[Any, tuple[Any, TermMap]]" = weakref.WeakKeyDictionary()


def term_map(index: Any, embedder: Any = None, may_spend: Callable[[], Optional[float]] = lambda: None) -> TermMap:
    """Returns the term map of `index`: remembered per index version in the process and per index fingerprint in
    the cache folder (`stored`), else mined; empty for an index without vectors, and (not remembered) while mining
    does not fit in what `may_spend()` allows."""
    from .vectors import default_embedder

    stamp = getattr(index, "version", None)
    known = _MAPS.get(index)
    if known is not None and known[0] == stamp:
        return known[1]
    if getattr(index, "model", None) is None:
        return TermMap()        # an index without vectors has no embedder to tell a pair from a coincidence
    path = stored(index)
    try:
        found: Optional[TermMap] = TermMap({z: tuple(e) for z, e in json.loads(path.read_text("utf-8")).items()})
    except (OSError, ValueError, AttributeError):
        texts = (" ".join((c.title, c.section, c.text)) for c in index.chunks())
        found = mined(texts, index.tokenizer, embedded_words(embedder or default_embedder(), may_spend))
        if found is None:
            return TermMap()
        try:
            write_replace(path, json.dumps(dict(found.english), ensure_ascii=False).encode("utf-8"))
        except OSError:
            pass        # a read-only cache only stops remembering
    _MAPS[index] = (stamp, found)
    return found


def stored(index: Any) -> Path:
    """Returns where the term map of `index` is kept: one file per index fingerprint (its documents, tokenizer and
    model) and `NEAR`, so a changed corpus is mined again and an unchanged one is read."""
    return cache_dir("term-maps") / f"{index.fingerprint()}-{NEAR}.json"
