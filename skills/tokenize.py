"""Chinese tokenisation for lexical retrieval: jieba words without stopwords and punctuation.

Each `Tokenizer` owns its own jieba dictionary, so entity names and learned
synonyms added for one index never change how another index tokenises.
"""
from __future__ import annotations

import hashlib
import threading
import unicodedata
from pathlib import Path
from typing import Iterable, Optional, Union

DEFAULT_STOPWORDS = Path(__file__).with_name("data") / "stopwords.txt"


def load_words(path: Union[str, Path]) -> list[str]:
    """Returns the words of a one-word-a-line file, skipping blank lines and `#` comments."""
    words = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        word = line.strip()
        if word and not word.startswith("#"):
            words.append(word)
    return words


def is_symbolic(token: str) -> bool:
    """Returns whether a token is made only of punctuation, symbols, whitespace or control characters."""
    return all(c.isspace() or unicodedata.category(c)[0] in "PSZC" for c in token)


class Tokenizer:
    """Returns filtered jieba tokens for a text: ``Tokenizer()("船舶污染怎么处罚")``.

    `stopwords` is a path to a word list, an iterable of words, or None for the
    bundled list. `user_words` (entity names, synonyms) join jieba's dictionary.
    """

    def __init__(self, stopwords: Union[str, Path, Iterable[str], None] = None,
                 user_words: Iterable[str] = (), *, hmm: bool = True) -> None:
        if stopwords is None or isinstance(stopwords, (str, Path)):
            words = load_words(stopwords or DEFAULT_STOPWORDS)
        else:
            words = list(stopwords)
        self.stopwords = frozenset(w.lower() for w in words)
        self.user_words: tuple[str, ...] = ()
        self.hmm = hmm
        self._jieba = None
        self._lock = threading.Lock()
        self.add_words(user_words)

    def _engine(self):
        if self._jieba is None:
            with self._lock:
                if self._jieba is None:
                    import jieba

                    base = base_dictionary()
                    engine = jieba.Tokenizer()
                    engine.FREQ, engine.total, engine.initialized = dict(base.FREQ), base.total, True
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
        words = self._engine().lcut(text, HMM=self.hmm)
        out = []
        for word in words:
            token = word.strip().lower()
            if token and token not in self.stopwords and not is_symbolic(token):
                out.append(token)
        return out

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
        h.update("\n".join(sorted(self.stopwords)).encode())
        h.update(b"\0user\0" + "\n".join(self.user_words).encode())
        return h.hexdigest()[:16]

    def config(self) -> dict:
        """Returns the JSON-able settings that rebuild an equal tokenizer (stored with an index)."""
        return {"stopwords": sorted(self.stopwords), "user_words": list(self.user_words), "hmm": self.hmm}

    @classmethod
    def from_config(cls, config: dict) -> "Tokenizer":
        """Returns the tokenizer that `config()` describes."""
        return cls(config.get("stopwords"), config.get("user_words", ()), hmm=config.get("hmm", True))


_BASE_LOCK = threading.Lock()
_CACHE_DIR: Optional[Path] = None


def cache_dictionary_in(directory: Union[str, Path]) -> None:
    """Keeps jieba's prefix-dictionary cache in `directory` (next to the indexes) instead of the system temp dir."""
    global _CACHE_DIR
    _CACHE_DIR = Path(directory)


def base_dictionary():
    """Returns jieba's default tokenizer, initialised once per process; every `Tokenizer` copies its dictionary.

    Loading the dictionary is the slow part of jieba (a 9 MB cache); copying it is 30 ms.
    """
    import logging

    import jieba

    with _BASE_LOCK:
        if not jieba.dt.initialized:
            if not logging.getLogger("lambdarag").isEnabledFor(logging.INFO):
                jieba.setLogLevel(logging.WARNING)   # "Building prefix dict…" only with `lambdarag -v`
            if _CACHE_DIR is not None and _CACHE_DIR.is_dir():
                jieba.dt.tmp_dir = str(_CACHE_DIR)
            jieba.dt.initialize()
    return jieba.dt


_DEFAULT: Optional[Tokenizer] = None


def default_tokenizer() -> Tokenizer:
    """Returns a shared tokenizer with the bundled stopwords and no user words."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Tokenizer()
    return _DEFAULT
