"""OpenTelemetry export of a finished trace (``pip install lambdarag[otel]``), with GenAI semantic-convention attributes.

Every span becomes an OTel span with the same parent, start and duration.
`Lam` spans are GenAI ``chat`` operations; the caller names which other terms
are GenAI operations (``operations={"bm25_search": "retrieval", …}``), since
the calculus does not know what its tools do. Attributes the trace does not
know (e.g. the split of tokens into input and output) are left out, never guessed.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from .errors import ConfigError
from .trace import Span, Trace

GENAI_OPERATION = "gen_ai.operation.name"
GENAI_PROVIDER = "gen_ai.provider.name"
GENAI_MODEL = "gen_ai.request.model"
GENAI_DATA_SOURCE = "gen_ai.data_source.id"


def _attributes(span: Span, operation: Optional[str], provider: str, model: str) -> dict[str, Any]:
    attrs: dict[str, Any] = {"lambdarag.kind": span.kind, "lambdarag.effect": span.effect,
                             "lambdarag.path": span.path, "lambdarag.cost": span.cost}
    if span.tokens:
        attrs["lambdarag.tokens"] = span.tokens
    if span.fallback:
        attrs["lambdarag.fallback"] = span.fallback
    if span.notes.get("mode"):
        attrs["lambdarag.mode"] = span.notes["mode"]
    if operation is not None:
        attrs[GENAI_OPERATION] = operation
        if operation == "chat":
            attrs.update({k: v for k, v in ((GENAI_PROVIDER, provider), (GENAI_MODEL, model)) if v})
        else:
            attrs[GENAI_DATA_SOURCE] = span.name
    return attrs


def export(trace: Trace, tracer: Any = None, *, operations: Mapping[str, str] = {}, provider: str = "",
           model: str = "") -> None:
    """Emits every span of a finished `trace` through `tracer` (default: the global tracer provider's).

    `operations` maps term names to GenAI operation names (``retrieval``,
    ``embeddings``, …); `provider` and `model` describe the LLM of ``chat`` spans.
    """
    try:
        from opentelemetry import trace as otel
        from opentelemetry.trace import Status, StatusCode
    except ImportError as e:
        raise ConfigError("OpenTelemetry export needs the otel extra: pip install 'lambdarag[otel]'") from e
    tracer = tracer or otel.get_tracer("lambdarag")
    exported: dict[int, Any] = {}
    for span in sorted(trace.spans, key=lambda s: s.id):  # a parent is always opened before its children
        operation = "chat" if span.kind == "lam" else operations.get(span.name)
        parent = exported.get(span.parent) if span.parent is not None else None
        start = trace.started_ns + int(span.start_ms * 1e6)
        out = tracer.start_span(f"{operation} {span.name}" if operation else span.name,
                                context=otel.set_span_in_context(parent) if parent is not None else None,
                                start_time=start, attributes=_attributes(span, operation, provider, model))
        if span.error:
            out.set_status(Status(StatusCode.ERROR, span.error))
        out.end(end_time=start + int(span.duration_ms * 1e6))
        exported[span.id] = out
