"""Rerankers: a Cohere/Jina-style `/v1/rerank` HTTP client, and a local default that needs no network."""
from __future__ import annotations

from typing import Optional, Protocol, Sequence

from ..errors import ConfigError, ProviderBadReply, ProviderError, ProviderHTTPError, ProviderTimeout


class Reranker(Protocol):
    """Returns one relevance score per document for `query` (higher is better)."""

    name: str

    def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        """Returns the scores; an HTTP reranker has a ``timeout`` and also takes ``timeout=`` (seconds)."""
        ...


def _bigrams(text: str) -> set[str]:
    chars = [c for c in text.lower() if c.isalnum()]
    return {a + b for a, b in zip(chars, chars[1:])} or set(chars)


class OverlapReranker:
    """Returns the share of the query's character bigrams found in each document.

    A language-agnostic, deterministic stand-in for a cross-encoder: it rewards
    documents that contain the query's exact phrases, which is what lexical
    retrieval misses when it splits words differently.
    """

    name = "overlap"

    def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        q = _bigrams(query)
        if not q:
            return [0.0] * len(documents)
        return [len(q & _bigrams(d)) / len(q) for d in documents]


class HTTPReranker:
    """Returns scores from a Cohere/Jina-style rerank endpoint (``POST {base_url}/rerank``)."""

    def __init__(self, base_url: str, model: str, api_key: Optional[str] = None, timeout: float = 30.0) -> None:
        if not base_url or not model:
            raise ConfigError("rerank endpoint needs baseUrl and model (retrieval.skills.rerank)")
        self.base_url, self.model, self.api_key, self.timeout = base_url.rstrip("/"), model, api_key, timeout
        self.name = f"http:{model}"

    def scores(self, query: str, documents: Sequence[str], *, timeout: Optional[float] = None) -> list[float]:
        import httpx

        if not documents:
            return []
        wait = self.timeout if timeout is None else min(timeout, self.timeout)
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body = {"model": self.model, "query": query, "documents": list(documents), "top_n": len(documents)}
        try:
            reply = httpx.post(f"{self.base_url}/rerank", json=body, headers=headers, timeout=wait)
        except httpx.TimeoutException as e:
            raise ProviderTimeout(f"rerank endpoint {self.base_url} timed out after {wait:g}s") from e
        except httpx.HTTPError as e:
            raise ProviderError(f"cannot reach rerank endpoint {self.base_url}: {e}") from e
        if reply.status_code >= 400:
            raise ProviderHTTPError(f"rerank endpoint {self.base_url} answered HTTP {reply.status_code}")
        try:
            results = reply.json()["results"]
            out = [0.0] * len(documents)
            for r in results:
                out[int(r["index"])] = float(r["relevance_score"])
        except (ValueError, KeyError, IndexError, TypeError) as e:
            raise ProviderBadReply(f"rerank endpoint {self.base_url} returned an unexpected body: {e}") from e
        return out
