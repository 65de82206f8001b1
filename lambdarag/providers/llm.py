"""OpenAI-compatible chat client (vLLM, Ollama, OpenAI, …) built on the `openai` package."""
from __future__ import annotations

import os
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Callable, Optional, Sequence

from ..errors import ConfigError, ContextOverflow, ProviderBadReply, ProviderError, ProviderHTTPError, ProviderTimeout

ENV_BASE_URL = ("LAMBDARAG_LLM_BASE_URL", "OPENAI_BASE_URL")
ENV_MODEL = ("LAMBDARAG_LLM_MODEL",)
ENV_API_KEY = ("LAMBDARAG_LLM_API_KEY", "OPENAI_API_KEY")
OVERFLOW = re.compile(r"context|too long|maximum.*tokens|n_ctx", re.I)
"""How a 400 says the prompt exceeds the model's context (OpenAI, vLLM, llama.cpp wordings)."""
NO_SCHEMA = re.compile(r"response_format|json_schema|json_object|not supported|unsupported", re.I)
"""How a 400 says the endpoint cannot constrain output as asked (vLLM, llama.cpp, OpenAI wordings)."""
RUNGS = ("json_schema", "json_object", "text")
"""How a structured reply is asked for, best first: a JSON-schema response format, JSON mode, then plain text (the
prompt's schema note alone; the reply is parsed leniently, `lambdarag.lam.json_object`)."""
_RUNG: dict[str, int] = {}
"""Per endpoint (base URL), the first rung it has not refused in this process: later calls start there."""
_SETTLED: set[str] = set()
"""Endpoints that have answered a structured request on their rung: later calls no longer probe one at a time."""
_PROBING: dict[str, threading.Lock] = {}
"""Per endpoint, held by the structured call that finds its rung, so that calls made at once (a `Par`) wait for the
one probe instead of each being refused on the same rungs."""


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
    finish_reason: str = "stop"
    """"length" when the reply was cut at max_tokens (then a structured reply is incomplete)."""
    response_format: str = "text"
    """How the reply was asked for (`RUNGS`; "text" for a text output)."""

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
    except oa.BadRequestError as e:
        if OVERFLOW.search(str(e)):
            raise ContextOverflow(f"{what} at {base_url} refused the prompt as too long for the model's context "
                                  f"(HTTP 400: {e.message[:160]})") from e
        raise ProviderHTTPError(f"{what} at {base_url} answered HTTP 400: {e.message[:160]}") from e
    except oa.APIStatusError as e:
        raise ProviderHTTPError(f"{what} at {base_url} answered HTTP {e.status_code}") from e
    except oa.APIConnectionError as e:
        raise ProviderError(f"cannot reach {what} at {base_url}: {e}") from e
    except (oa.APIResponseValidationError, ValueError, TypeError, AttributeError, KeyError, IndexError) as e:
        raise ProviderBadReply(f"{what} at {base_url} answered with an unreadable body: "
                               f"{type(e).__name__}: {e}") from e


def response_format(rung: str, schema: Optional[dict]) -> dict[str, Any]:
    """Returns the request's ``response_format`` argument for a rung of `RUNGS` (none for plain text)."""
    if rung == "json_schema" and schema is not None:
        return {"response_format": {"type": "json_schema",
                                    "json_schema": {"name": schema.get("title", "output"), "schema": schema}}}
    if rung in ("json_schema", "json_object"):
        return {"response_format": {"type": "json_object"}}
    return {}


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

    def complete(self, messages: list[dict[str, str]], *, json_mode: bool = False, schema: Optional[dict] = None,
                 max_tokens: int = 512, temperature: float = 0.0, timeout: Optional[float] = None,
                 on_text: Optional[Callable[[str], None]] = None) -> Completion:
        """Returns the model's reply to `messages`, waiting at most `timeout` seconds (default: the client's).

        With a `schema` (a JSON schema dict) or `json_mode`, the reply is asked
        for on the best rung of `RUNGS` the endpoint has not refused: an
        endpoint that answers a response format with a 400 naming it is asked
        again at once on the next rung, and starts there from then on. With
        `on_text` the reply is streamed (see `stream`).
        """
        wait = self.timeout if timeout is None else min(timeout, self.timeout)
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages,
                                  "max_tokens": max_tokens, "temperature": temperature, "timeout": wait}
        if schema is None and not json_mode:
            return self._create(kwargs, wait, on_text, "text")
        if self.base_url in _SETTLED:
            return self._structured(kwargs, schema, wait, on_text)
        probe = _PROBING.setdefault(self.base_url, threading.Lock())
        waited = probe.acquire(timeout=wait)    # past its own timeout a call probes on its own rather than wait on
        try:
            done = self._structured(kwargs, schema, wait, on_text)
            _SETTLED.add(self.base_url)
            return done
        finally:
            if waited:
                probe.release()

    def _structured(self, kwargs: dict[str, Any], schema: Optional[dict], wait: float,
                    on_text: Optional[Callable[[str], None]]) -> Completion:
        """Returns the reply asked on the best rung the endpoint has not refused, stepping down a rung on a refusal."""
        rung = max(_RUNG.get(self.base_url, 0), 0 if schema is not None else 1)
        while True:
            asked = {**kwargs, **response_format(RUNGS[rung], schema)}
            try:
                return self._create(asked, wait, on_text, RUNGS[rung])
            except ProviderHTTPError as e:
                if isinstance(e, ContextOverflow) or not NO_SCHEMA.search(str(e)) or rung == len(RUNGS) - 1:
                    raise
                rung += 1
                _RUNG[self.base_url] = max(_RUNG.get(self.base_url, 0), rung)

    @property
    def rung(self) -> str:
        """Returns how this endpoint is asked for a structured reply now (`RUNGS`)."""
        return RUNGS[_RUNG.get(self.base_url, 0)]

    def stream(self, messages: list[dict[str, str]], on_text: Callable[[str], None], **options: Any) -> Completion:
        """Returns the model's reply to `messages` (options as `complete`), calling `on_text` with each piece as it
        arrives (``stream=True``).

        The whole reply must arrive within the timeout, not only each piece. An
        exception from `on_text` (the consumer went away) closes the HTTP
        response, which cancels the request.
        """
        return self.complete(messages, on_text=on_text, **options)

    def _create(self, kwargs: dict[str, Any], wait: float, on_text: Optional[Callable[[str], None]],
                asked: str) -> Completion:
        with provider_errors("LLM", self.base_url, wait):
            if on_text is not None:
                return replace(self._streamed(kwargs, wait, on_text), response_format=asked)
            reply = self._client.chat.completions.create(**kwargs)
            if not reply.choices:
                raise ProviderBadReply(f"LLM at {self.base_url} returned no choices")
            usage = reply.usage
            return Completion(
                text=reply.choices[0].message.content or "",
                prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
                finish_reason=reply.choices[0].finish_reason or "stop",
                response_format=asked,
            )

    def _streamed(self, kwargs: dict[str, Any], wait: float, on_text: Callable[[str], None]) -> Completion:
        """Returns the reply of a ``stream=True`` request, feeding `on_text` piece by piece within `wait` seconds."""
        until = time.monotonic() + wait
        parts: list[str] = []
        usage, chunks, finish = None, 0, "stop"
        response = self._client.chat.completions.create(**kwargs, stream=True,
                                                        stream_options={"include_usage": True})
        try:
            for chunk in response:
                chunks += 1
                usage = chunk.usage or usage
                choice = chunk.choices[0] if chunk.choices else None
                if choice is not None and choice.delta.content:
                    parts.append(choice.delta.content)
                    on_text(choice.delta.content)
                finish = (choice.finish_reason if choice is not None else None) or finish
                if time.monotonic() > until:
                    raise ProviderTimeout(f"LLM at {self.base_url} streamed for over {wait:g}s")
        finally:
            response.close()
        if not chunks:
            raise ProviderBadReply(f"LLM at {self.base_url} answered with an unreadable body: no stream events")
        return Completion(text="".join(parts), prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                          completion_tokens=getattr(usage, "completion_tokens", 0) or 0, finish_reason=finish)

    def __repr__(self) -> str:
        return f"OpenAIChat(base_url={self.base_url!r}, model={self.model!r})"
