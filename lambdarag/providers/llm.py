"""OpenAI-compatible chat client (vLLM, Ollama, OpenAI, …) built on the `openai` package."""
from __future__ import annotations

import os
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from ..errors import ConfigError, ProviderBadReply, ProviderError, ProviderHTTPError, ProviderTimeout

ENV_BASE_URL = ("LAMBDARAG_LLM_BASE_URL", "OPENAI_BASE_URL")
ENV_MODEL = ("LAMBDARAG_LLM_MODEL",)
ENV_API_KEY = ("LAMBDARAG_LLM_API_KEY", "OPENAI_API_KEY")


def first_env(names: Sequence[str]) -> Optional[str]:
    """Returns the value of the first set environment variable among `names`."""
    for name in names:
        if os.environ.get(name):
            return os.environ[name]
    return None


@dataclass(frozen=True)
class Completion:
    """One chat reply with its token usage."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@contextmanager
def provider_errors(what: str, base_url: str, timeout: float):
    """Returns a context that turns every failure of a provider call into a LambdaRAG `ProviderError`.

    Wrap the call and the reading of its reply: a 200 body that is not JSON, or
    JSON of the wrong shape, fails there with ValueError/TypeError/… and
    becomes `ProviderBadReply`, so the term degrades instead of crashing.
    """
    import openai as oa

    try:
        yield
    except ProviderError:
        raise
    except oa.APITimeoutError as e:
        raise ProviderTimeout(f"{what} at {base_url} timed out after {timeout:g}s") from e
    except oa.APIStatusError as e:
        raise ProviderHTTPError(f"{what} at {base_url} answered HTTP {e.status_code}") from e
    except oa.APIConnectionError as e:
        raise ProviderError(f"cannot reach {what} at {base_url}: {e}") from e
    except (oa.APIResponseValidationError, ValueError, TypeError, AttributeError, KeyError, IndexError) as e:
        raise ProviderBadReply(f"{what} at {base_url} answered with an unreadable body: "
                               f"{type(e).__name__}: {e}") from e


class OpenAIChat:
    """Returns chat completions from an OpenAI-compatible endpoint; maps failures to provider errors.

    The client itself never retries (``max_retries=0``): `Lam` retries once and
    then takes its fallback, so that every retry shows in the trace.
    """

    def __init__(self, base_url: str, model: str, api_key: Optional[str] = None, timeout: float = 30.0) -> None:
        if not base_url:
            raise ConfigError("LLM base_url is empty; set llm.baseUrl in agent-config.yml or LAMBDARAG_LLM_BASE_URL")
        if not model:
            raise ConfigError("LLM model is empty; set llm.model in agent-config.yml or LAMBDARAG_LLM_MODEL")
        import openai

        self.base_url, self.model, self.timeout = base_url, model, timeout
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=0)

    @classmethod
    def from_env(cls, timeout: float = 30.0) -> Optional["OpenAIChat"]:
        """Returns a client configured from the environment, or None when no endpoint is set."""
        base_url = first_env(ENV_BASE_URL)
        if not base_url:
            return None
        return cls(base_url, first_env(ENV_MODEL) or "default", first_env(ENV_API_KEY), timeout)

    def complete(self, messages: list[dict[str, str]], *, json_mode: bool = False, max_tokens: int = 512,
                 temperature: float = 0.0, timeout: Optional[float] = None) -> Completion:
        """Returns the model's reply to `messages`, waiting at most `timeout` seconds (default: the client's)."""
        wait = self.timeout if timeout is None else min(timeout, self.timeout)
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages,
                                  "max_tokens": max_tokens, "temperature": temperature, "timeout": wait}
        if json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        with provider_errors("LLM", self.base_url, wait):
            reply = self._client.chat.completions.create(**kwargs)
            if not reply.choices:
                raise ProviderBadReply(f"LLM at {self.base_url} returned no choices")
            usage = reply.usage
            return Completion(
                text=reply.choices[0].message.content or "",
                prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            )

    def stream(self, messages: list[dict[str, str]], on_text: Callable[[str], None], *, json_mode: bool = False,
               max_tokens: int = 512, temperature: float = 0.0, timeout: Optional[float] = None) -> Completion:
        """Returns the model's reply to `messages`, calling `on_text` with each piece as it arrives (``stream=True``).

        The whole reply must arrive within `timeout` seconds (default: the
        client's), not only each piece. An exception from `on_text` (the
        consumer went away) closes the HTTP response, which cancels the request.
        """
        wait = self.timeout if timeout is None else min(timeout, self.timeout)
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": max_tokens,
                                  "temperature": temperature, "timeout": wait, "stream": True,
                                  "stream_options": {"include_usage": True}}
        if json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        until = time.monotonic() + wait
        parts: list[str] = []
        usage, chunks = None, 0
        with provider_errors("LLM", self.base_url, wait):
            response = self._client.chat.completions.create(**kwargs)
            try:
                for chunk in response:
                    chunks += 1
                    usage = chunk.usage or usage
                    piece = chunk.choices[0].delta.content if chunk.choices else None
                    if piece:
                        parts.append(piece)
                        on_text(piece)
                    if time.monotonic() > until:
                        raise ProviderTimeout(f"LLM at {self.base_url} streamed for over {wait:g}s")
            finally:
                response.close()
            if not chunks:
                raise ProviderBadReply(f"LLM at {self.base_url} answered with an unreadable body: no stream events")
        return Completion(text="".join(parts), prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                          completion_tokens=getattr(usage, "completion_tokens", 0) or 0)

    def __repr__(self) -> str:
        return f"OpenAIChat(base_url={self.base_url!r}, model={self.model!r})"
