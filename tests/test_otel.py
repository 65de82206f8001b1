"""OpenTelemetry export: the trace's spans, parents and durations, with GenAI attributes (needs the otel extra)."""
from __future__ import annotations

from typing import TypedDict

import pytest

from lambdarag import Context, Lam, Par, State, Tool
from lambdarag.otel import export

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is not installed")
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402


class Answered(TypedDict):
    """The write of the tests' answering Lam."""

    answer: str


def test_an_exported_trace_keeps_parents_and_durations_and_marks_genai_operations():
    search = Tool("bm25_search", lambda s: {"context": s.query}, reads=["query"], writes=["context"], effect="io")
    rerank = Tool("rerank", lambda s: {"entities": ("x",)}, reads=["query"], writes=["entities"], effect="io")
    answer = Lam("answer_generate", "{context}", reads=["context"], writes=Answered,
                 fallback=Tool("extractive", lambda s: {"answer": s.context}, reads=["context"], writes=["answer"]))
    ctx = Context()
    (Par(search, rerank) >> answer).run(State.of("船员"), ctx)
    memory = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    export(ctx.trace, provider.get_tracer("test"), operations={"bm25_search": "retrieval", "rerank": "retrieval"},
           provider="openai", model="qwen")
    spans = {s.name: s for s in memory.get_finished_spans()}
    assert len(spans) == len(ctx.trace.spans)
    root = spans["compose"]
    assert root.parent is None and all(s.parent is not None for s in spans.values() if s is not root)
    assert spans["retrieval bm25_search"].parent.span_id == spans["par"].context.span_id
    assert spans["retrieval rerank"].attributes["gen_ai.data_source.id"] == "rerank"
    chat = spans["chat answer_generate"].attributes
    assert chat["gen_ai.operation.name"] == "chat" and chat["gen_ai.request.model"] == "qwen"
    assert chat["lambdarag.mode"] == "no LLM configured" and "lambdarag.fallback" not in chat
    assert spans["extractive"].parent.span_id == spans["chat answer_generate"].context.span_id
    assert (root.end_time - root.start_time) / 1e6 == pytest.approx(ctx.trace.total_ms(), abs=0.01)
