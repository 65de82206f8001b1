"""`Lam` over real HTTP against a scripted OpenAI-compatible server, and the offline fallback."""
from __future__ import annotations

from typing import TypedDict

import pytest
from pydantic import BaseModel

from lambdarag import Context, Lam, State, Tool
from lambdarag.errors import CompositionError
from lambdarag.providers.llm import OpenAIChat
from tests.scripted_server import Reply
from lambdarag.domains import profile_named


class Answered(TypedDict):
    """The write of the tests' answering Lam."""

    answer: str


class Kind(BaseModel):
    type: str
    confidence: float




fallback = Tool("rules", lambda s: {"type": "fact", "confidence": 0.5}, reads=["query"], writes=["type", "confidence"])
classify = Lam("classify", "把问题分类：{query}", output=Kind, reads=["query"], writes=Kind,
               fallback=fallback)


def ctx_for(url: str, timeout: float = 2.0) -> Context:
    return Context(llm=OpenAIChat(url, "scripted-model", timeout=timeout), resources={"profile": profile_named("generic")})


def test_valid_json_is_validated_and_written(llm_server):
    llm_server.script.script(Reply(text='```json\n{"type": "compare", "confidence": 0.9}\n```'))
    ctx = ctx_for(llm_server.url)
    out = classify.run("甲法和乙法有何异同？", ctx)
    assert (out.type, out.confidence) == ("compare", 0.9)
    sent = llm_server.script.requests[0]["body"]
    assert "甲法和乙法有何异同？" in sent["messages"][-1]["content"]
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["schema"] == Kind.model_json_schema()
    span = next(s for s in ctx.trace.spans if s.name == "classify")
    assert span.fallback is None and span.tokens == 18 and span.notes["attempts"] == 1


def test_invalid_json_then_valid_retries_once(llm_server):
    llm_server.script.script(Reply(text="不是 JSON"), Reply(text='{"type": "relation", "confidence": 0.7}'))
    ctx = ctx_for(llm_server.url)
    assert classify.run("q", ctx).type == "relation"
    assert len(llm_server.script.requests) == 2
    assert next(s for s in ctx.trace.spans if s.name == "classify").notes["attempts"] == 2


def test_schema_violation_twice_takes_the_fallback_with_reason(llm_server):
    llm_server.script.script(Reply(text='{"type": "x"}'), Reply(text='{"confidence": "high"}'))
    ctx = ctx_for(llm_server.url)
    out = classify.run("q", ctx)
    assert out.type == "fact"
    reason = ctx.trace.fallbacks()[0]["reason"]
    assert "attempt 1: LLM reply does not match Kind: Field required at confidence" in reason
    assert "attempt 2:" in reason


def test_timeout_is_not_retried_and_falls_back(llm_server):
    llm_server.script.script(Reply(delay=1.0, text="{}"), Reply(delay=1.0, text="{}"))
    ctx = ctx_for(llm_server.url, timeout=0.2)
    assert classify.run("q", ctx).type == "fact"
    assert ctx.trace.fallbacks()[0]["reason"].count("timed out after 0.2s") == 1
    assert len(llm_server.script.requests) == 1


def test_http_500_retries_then_falls_back(llm_server):
    llm_server.script.script(Reply(status=500), Reply(status=500))
    ctx = ctx_for(llm_server.url)
    assert classify.run("q", ctx).type == "fact"
    assert "answered HTTP 500" in ctx.trace.fallbacks()[0]["reason"]


def test_http_500_then_success_uses_the_llm(llm_server):
    llm_server.script.script(Reply(status=500), Reply(text='{"type": "temporal", "confidence": 1}'))
    ctx = ctx_for(llm_server.url)
    assert classify.run("q", ctx).type == "temporal"
    assert ctx.trace.fallbacks() == []


def test_no_server_at_all_falls_back(dead_url):
    ctx = ctx_for(dead_url)
    assert classify.run("q", ctx).type == "fact"
    assert "cannot reach LLM" in ctx.trace.fallbacks()[0]["reason"]


def test_no_llm_configured_runs_the_offline_path_as_a_mode_not_a_fallback():
    ctx = Context(resources={"profile": profile_named("generic")})
    assert classify.run("q", ctx).type == "fact"
    assert ctx.trace.fallbacks() == []
    span = next(s for s in ctx.trace.spans if s.name == "classify")
    assert span.notes["path_taken"] == "offline" and span.notes["mode"] == "no LLM configured"


def test_text_output_and_prompt_rendering(llm_server):
    llm_server.script.script(Reply(text="  答案  "))
    summarise = Lam("summarise", "资料：\n{hits}\n问题：{query}", reads=["query", "hits"], writes=Answered,
                    fallback=Tool("first", lambda s: {"answer": ""}, reads=["hits"], writes=["answer"]))
    out = summarise.run(State.of("问", hits=()), ctx_for(llm_server.url))
    assert out.answer == "答案"
    assert "资料：\n（无）\n问题：问" in llm_server.script.requests[0]["body"]["messages"][-1]["content"]


def test_lam_construction_checks():
    with pytest.raises(CompositionError, match="prompt uses \\['hits'\\] but reads only \\['query'\\]"):
        Lam("x", "{hits}", reads=["query"], writes=Answered, fallback=Tool("f", lambda s: {}, writes=["answer"]))
    with pytest.raises(CompositionError, match="fallback 'f' writes \\['other'\\] but the Lam writes \\['answer'\\]"):
        Lam("x", "{query}", reads=["query"], writes=Answered, fallback=Tool("f", lambda s: {}, writes=["other"]))
    with pytest.raises(CompositionError, match="output Kind has no fields \\['answer'\\]"):
        Lam("x", "{query}", output=Kind, reads=["query"], writes=Answered,
            fallback=Tool("f", lambda s: {}, writes=["answer"]))
    for names in (["answer"], {"answer": str}):   # one way to declare its writes: a record
        with pytest.raises(CompositionError, match="Lam 'x': writes must be the record of the fields it writes"):
            Lam("x", "{query}", reads=["query"], writes=names, fallback=Tool("f", lambda s: {}, writes=["answer"]))
