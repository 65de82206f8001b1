"""Tokenisation for lexical retrieval: jieba words without stopwords and punctuation, English words optionally stemmed.

Each `Tokenizer` owns its own jieba dictionary, so entity names and learned
synonyms added for one index never change how another index tokenises. With
``english="snowball"`` a Latin-letter word is lower-cased, dropped when it is
an English stop word and stemmed by the Snowball English stemmer
(snowballstemmer: the Snowball project's own package, pure Python, faster with
PyStemmer installed), so "packages" in a question finds "package" in a text.
"""
from __future__ import annotations

import functools
import hashlib
import lzma
import os
import re
import shutil
import sqlite3
import sys
import threading
import unicodedata
from pathlib import Path
from typing import Iterable, Optional, Union

from .home import cache_dir

DEFAULT_STOPWORDS = Path(__file__).with_name("data") / "stopwords.txt"
ENGLISH_STOPWORDS = Path(__file__).with_name("data") / "stopwords-en.txt"
ENGLISH_STEMMERS = ("", "snowball")
"""How Latin-letter words are normalised: as they are (lower-cased), or stemmed by Snowball English."""


def load_words(path: Union[str, Path]) -> list[str]:
    """Returns the words of a one-word-a-line file, skipping blank lines and `#` comments."""
    words = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        word = line.strip()
        if word and not word.startswith("#"):
            words.append(word)
    return words


_IMPORT_LOCK = threading.Lock()


def import_jieba():
    """Returns the jieba module, imported without setuptools' `pkg_resources`.

    jieba only uses pkg_resources to open its own dictionary file and opens it directly when the import
    fails; importing pkg_resources costs 0.2–0.5 s, more than the rest of jieba.
    """
    with _IMPORT_LOCK:
        if "jieba" not in sys.modules and "pkg_resources" not in sys.modules:
            sys.modules["pkg_resources"] = None   # `import pkg_resources` now raises ImportError
            try:
                import jieba
            finally:
                del sys.modules["pkg_resources"]
    import jieba

    return jieba


def is_symbolic(token: str) -> bool:
    """Returns whether a token is made only of punctuation, symbols, whitespace or control characters."""
    return all(c.isspace() or unicodedata.category(c)[0] in "PSZC" for c in token)


class Tokenizer:
    """Returns filtered jieba tokens for a text: ``Tokenizer()("船舶污染怎么处罚")``.

    `stopwords` is a path to a word list, an iterable of words, or None for the
    bundled list. `user_words` (entity names, synonyms) join jieba's dictionary.
    """

    def __init__(self, stopwords: Union[str, Path, Iterable[str], None] = None,
                 user_words: Iterable[str] = (), *, hmm: bool = True, english: str = "") -> None:
        if stopwords is None or isinstance(stopwords, (str, Path)):
            words = load_words(stopwords or DEFAULT_STOPWORDS)
        else:
            words = list(stopwords)
        if english not in ENGLISH_STEMMERS:
            from lambdarag.errors import ConfigError

            raise ConfigError(f"Tokenizer: english must be one of {ENGLISH_STEMMERS}, got {english!r}")
        self.english = english
        if english:
            words = [*words, *load_words(ENGLISH_STOPWORDS)]
        self.stopwords = frozenset(w.lower() for w in words)
        self._stem = english_stemmer() if english else None
        self.user_words: tuple[str, ...] = ()
        self.hmm = hmm
        self._jieba = None
        self._tokenized = 0   # characters so far: past STORED_LIMIT the whole dictionary is worth loading
        self._lock = threading.Lock()
        self.add_words(user_words)

    def _engine(self):
        if self._jieba is None or (self._tokenized > STORED_LIMIT and not isinstance(self._jieba.FREQ, dict)):
            with self._lock:
                if self._jieba is None or (self._tokenized > STORED_LIMIT and not isinstance(self._jieba.FREQ, dict)):
                    engine = import_jieba().Tokenizer()
                    stored = None if self._tokenized > STORED_LIMIT else stored_dictionary()
                    if stored is not None:
                        engine.FREQ, engine.total = StoredFrequencies(stored), stored_total(stored)
                    else:
                        base = base_dictionary()
                        engine.FREQ, engine.total = dict(base.FREQ), base.total
                    engine.initialized = True
                    for word in self.user_words:
                        engine.add_word(word)
                    self._jieba = engine
        return self._jieba

    def add_words(self, words: Iterable[str]) -> None:
        """Adds words to this tokenizer's dictionary (changes its fingerprint)."""
        new = [w.strip() for w in words if w and w.strip() and w.strip() not in self.user_words]
        if not new:
            return
        self.user_words = tuple(sorted(set(self.user_words) | set(new)))
        if self._jieba is not None:
            for word in new:
                self._jieba.add_word(word)

    def __call__(self, text: str) -> list[str]:
        self._tokenized += len(text)
        words = self._engine().lcut(text, HMM=self.hmm)
        out = []
        for word in words:
            token = word.strip().lower()
            if token and token not in self.stopwords and not is_symbolic(token):
                out.append(self._stem(token) if self._stem is not None and token.isascii() and token.isalpha()
                           else token)
        return out

    def spans(self, text: str) -> list[tuple[str, int, int]]:
        """Returns jieba's words of `text` with their offsets, nothing filtered or lower-cased."""
        self._tokenized += len(text)
        return list(self._engine().tokenize(text, HMM=self.hmm))

    def tokenize_many(self, texts: Iterable[str], *, progress: bool = False, desc: str = "tokenize") -> list[list[str]]:
        """Returns the tokens of each text, with a progress bar when asked."""
        items = list(texts)
        if progress:
            from tqdm import tqdm

            items = tqdm(items, desc=desc, unit="text")
        return [self(t) for t in items]

    def fingerprint(self) -> str:
        """Returns a digest of everything that decides the tokens (engine version, stopwords, user words)."""
        from importlib.metadata import version

        h = hashlib.sha1(f"jieba {version('jieba')} hmm={self.hmm}\n".encode())   # importing jieba takes 0.5 s
        if self.english:
            h.update(f"english={self.english} {version('snowballstemmer')}\n".encode())
        h.update("\n".join(sorted(self.stopwords)).encode())
        h.update(b"\0user\0" + "\n".join(self.user_words).encode())
        return h.hexdigest()[:16]

    def config(self) -> dict:
        """Returns the JSON-able settings that rebuild an equal tokenizer (stored with an index)."""
        out = {"stopwords": sorted(self.stopwords), "user_words": list(self.user_words), "hmm": self.hmm}
        return {**out, "english": self.english} if self.english else out

    @classmethod
    def from_config(cls, config: dict) -> "Tokenizer":
        """Returns the tokenizer that `config()` describes."""
        return cls(config.get("stopwords"), config.get("user_words", ()), hmm=config.get("hmm", True),
                   english=config.get("english", ""))


def english_stemmer():
    """Returns the Snowball English stemmer's one-word function, memoised (a corpus repeats its words) and
    locked (a Snowball stemmer object keeps its word in itself while it works)."""
    from functools import lru_cache

    import snowballstemmer

    stemmer, lock = snowballstemmer.stemmer("english"), threading.Lock()

    @lru_cache(maxsize=65536)
    def stem(word: str) -> str:
        with lock:
            return stemmer.stemWord(word)

    return stem


_BASE_LOCK = threading.Lock()
_BASE = None
_CACHE_DIR: Optional[Path] = None


def cache_dictionary_in(directory: Union[str, Path]) -> None:
    """Keeps jieba's prefix-dictionary caches (its own, and the stored one) in `directory`.

    Until it is called jieba's own cache goes to the data home's cache/jieba and there is no stored dictionary.
    """
    global _CACHE_DIR
    _CACHE_DIR = Path(directory)


def base_dictionary():
    """Returns this package's jieba tokenizer over jieba's dictionary as shipped, initialised once per process;
    every `Tokenizer` copies its dictionary (loading it is the slow part of jieba, copying it 30 ms).

    Not jieba's process-wide `jieba.dt`: other libraries add words to that one (milvus-lite's analyzer adds an
    index's user words), and our tokens must not depend on who else ran in the process.
    """
    import logging

    global _BASE
    jieba = import_jieba()
    with _BASE_LOCK:
        if _BASE is None:
            if not logging.getLogger("lambdarag").isEnabledFor(logging.INFO):
                jieba.setLogLevel(logging.WARNING)   # "Building prefix dict…" only with `lambdarag -v`
            engine = jieba.Tokenizer()
            engine.tmp_dir = str(_CACHE_DIR if _CACHE_DIR is not None and _CACHE_DIR.is_dir() else cache_dir("jieba"))
            engine.initialize()
            _BASE = engine
    return _BASE


@functools.cache
def plain_words() -> Tokenizer:
    """Returns a tokenizer over jieba's dictionary alone, with no stop words: where a text's words begin and end."""
    return Tokenizer(())


@functools.cache
def keyword_extractor():
    """Returns jieba's TF-IDF keyword extractor cutting with `base_dictionary()`, its IDF table shared with
    jieba's default extractor (the process-wide one cuts with `jieba.dt`, see `base_dictionary`)."""
    import copy

    base = base_dictionary()    # first: jieba imported without pkg_resources (import_jieba), before its submodules
    import jieba.analyse
    import jieba.posseg

    tagger = jieba.posseg.POSTokenizer.__new__(jieba.posseg.POSTokenizer)   # its __init__ rereads the 5 MB file
    tagger.tokenizer, tagger.word_tag_tab = base, dict(jieba.posseg.dt.word_tag_tab)
    extractor = copy.copy(jieba.analyse.default_tfidf)
    extractor.tokenizer, extractor.postokenizer = base, tagger
    return extractor


STORED_LIMIT = 20_000   # characters a tokenizer reads from the stored dictionary before loading the whole one


def stored_dictionary() -> Optional[Path]:
    """Returns jieba's prefix dictionary as an SQLite file in the cache directory, writing it once; None without one.

    A one-shot question looks up a few hundred prefixes: reading them from disk takes
    milliseconds where loading the whole 9 MB dictionary takes a second or more. The file is unpacked from the
    package's copy (`shipped_dictionary`, 0.2 s) when it has one for this jieba, else built (2 s).
    """
    if _CACHE_DIR is None or not _CACHE_DIR.is_dir():
        return None
    jieba = import_jieba()
    path = _CACHE_DIR / f"jieba-{jieba.__version__}.sqlite"
    if not path.is_file():
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")   # one per writer: processes too
        shipped = shipped_dictionary(jieba.__version__)
        if shipped.is_file():
            with lzma.open(shipped) as packed, open(tmp, "wb") as out:
                shutil.copyfileobj(packed, out)
        else:
            write_dictionary(tmp)
        tmp.replace(path)
    return path


def shipped_dictionary(version: str) -> Path:
    """Returns where the package keeps jieba `version`'s stored dictionary, xz-compressed (it may have none)."""
    return Path(__file__).with_name("data") / f"jieba-{version}.sqlite.xz"


def prefix_dictionary() -> tuple[dict[str, int], int]:
    """Returns jieba's words and word prefixes with their counts, and the total, as jieba builds them from its
    dictionary file: not the process's shared tokenizer's, to which words may have been added."""
    jieba = import_jieba()
    return jieba.Tokenizer.gen_pfdict(jieba.dt.get_dict_file())


def stored_words(freq: dict[str, int]) -> list[tuple[str, int]]:
    """Returns the entries of a prefix dictionary that `StoredFrequencies` cannot derive, sorted: every word with a
    count, and every entry no longer entry begins with (a word counted 0); a prefix's 0 follows from the words."""
    ordered = sorted(freq.items())
    return [(w, n) for i, (w, n) in enumerate(ordered)
            if n or i + 1 == len(ordered) or not ordered[i + 1][0].startswith(w)]


def write_dictionary(path: Path) -> None:
    """Writes jieba's prefix dictionary (`prefix_dictionary`) as SQLite, its derivable prefixes left out."""
    freq, total = prefix_dictionary()
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE freq (word TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID")
        db.executemany("INSERT INTO freq VALUES (?, ?)", stored_words(freq))
        db.execute("CREATE TABLE meta (total INTEGER)")
        db.execute("INSERT INTO meta VALUES (?)", (total,))
    db.close()


def ship_dictionary() -> Path:
    """Writes this jieba's stored prefix dictionary into the package (`shipped_dictionary`), for
    scripts/demo_index.py; a new data home's first question then unpacks it instead of building it."""
    jieba = import_jieba()
    target = shipped_dictionary(jieba.__version__)
    tmp = target.with_suffix(".tmp")
    write_dictionary(tmp)
    with open(tmp, "rb") as raw, lzma.open(target, "wb") as packed:
        shutil.copyfileobj(raw, packed)
    tmp.unlink()
    return target


def stored_total(path: Path) -> int:
    """Returns the total word count stored with the dictionary at `path`."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        (total,), = db.execute("SELECT total FROM meta")
    return total


class StoredFrequencies:
    """jieba's `FREQ` mapping read from the SQLite dictionary on demand; words added here stay in memory. A text
    that is no stored entry but begins one is a word prefix, counted 0, as jieba's own dictionary holds it."""

    _MISSING = object()

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        self._seen: dict[str, object] = {}
        self._lock = threading.Lock()

    def get(self, word: str, default=None):
        found = self._seen.get(word)
        if found is None:
            with self._lock:
                row = self._db.execute("SELECT word, n FROM freq WHERE word >= ? ORDER BY word LIMIT 1",
                                       (word,)).fetchone()
            found = self._seen[word] = self._MISSING if row is None or not row[0].startswith(word) \
                else row[1] if row[0] == word else 0
        return default if found is self._MISSING else found

    def __contains__(self, word: str) -> bool:
        return self.get(word, self._MISSING) is not self._MISSING

    def __getitem__(self, word: str) -> int:
        found = self.get(word, self._MISSING)
        if found is self._MISSING:
            raise KeyError(word)
        return found

    def __setitem__(self, word: str, n: int) -> None:
        self._seen[word] = n


_CJK = re.compile(r"[\u3400-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")


def language_of(text: str) -> str:
    """Returns ``zh`` when CJK characters are at least a fifth of the text's letters, else ``en``; ``zh`` for a text
    without letters (the offline answer's words default to the project's first language)."""
    cjk, latin = len(_CJK.findall(text)), len(_LATIN.findall(text))
    if cjk + latin == 0:
        return "zh"
    return "zh" if cjk * 5 >= cjk + latin else "en"


_DEFAULT: Optional[Tokenizer] = None


def default_tokenizer() -> Tokenizer:
    """Returns a shared tokenizer with the bundled stopwords and no user words."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Tokenizer()
    return _DEFAULT
