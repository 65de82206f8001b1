"""Strict validation of LLM replies against the failure modes of a real small model (scripted over HTTP)."""
from __future__ import annotations

import pytest
from pydantic import BaseModel

from lambdarag import Context, Lam, State, Tool
from lambdarag.errors import InvalidOutput
from lambdarag.lam import json_object, parse_reply
from lambdarag.providers.llm import OpenAIChat
from lambdarag.skills import build
from lambdarag.skills.graph import EntityList
from tests.scripted_server import Reply, cut_json, echo_schema, overflow
from lambdarag.domains import profile_named


def generic_ctx() -> Context:
    """Returns a context under the generic profile (what a context without one ran under)."""
    return Context(resources={"profile": profile_named("generic")})

QUERY = "船员条例和海上交通安全法对船长职责的规定有何不同？"


class Topics(BaseModel):
    topics: list[str] = []



keep = Tool("rules", lambda s: {"topics": ["规则"]}, reads=["query", "context"], writes=["topics"])
topics = Lam("topics", "资料：{context}\n问题：{query}", output=Topics, reads=["query", "context"], writes=Topics,
             fallback=keep, required=["topics"])


def ctx_for(server, timeout: float = 2.0) -> Context:
    return Context(llm=OpenAIChat(server.url, "scripted-model", timeout=timeout), resources={"profile": profile_named("generic")})


def entities(ctx: Context) -> tuple[str, ...]:
    return build("entity_extract", {}).run(State.of(QUERY), ctx).entities


def test_a_schema_echo_or_a_cut_reply_never_removes_the_rule_entities(llm_server):
    offline = entities(Context(resources={"profile": profile_named("generic")}))
    assert offline
    schema = EntityList.model_json_schema()
    for bad in (echo_schema(schema), cut_json({"entities": ["船员条例", "海上交通安全法"]}),
                Reply(text='{"entities": []}')):
        llm_server.script.script(bad, bad)
        ctx = ctx_for(llm_server)
        assert entities(ctx) == offline
        assert ctx.trace.fallbacks(), bad


def test_each_failure_mode_is_named_in_the_fallback_reason(llm_server):
    cases = {"echoes the JSON schema": echo_schema(Topics.model_json_schema()),
             "finish_reason: length": cut_json({"topics": ["甲", "乙"]}),
             "does not have: extra": Reply(text='{"topics": ["甲"], "extra": 1}'),
             "leaves topics empty": Reply(text='{"topics": []}')}
    for said, reply in cases.items():
        llm_server.script.script(reply, reply)
        ctx = ctx_for(llm_server)
        assert topics.run(State.of("q", context="资料"), ctx).topics == ["规则"]
        assert said in ctx.trace.fallbacks()[0]["reason"], said


def test_a_context_overflow_is_retried_once_with_less_context(llm_server):
    llm_server.script.script(overflow(), Reply(text='{"topics": ["甲"]}'))
    ctx = ctx_for(llm_server)
    out = topics.run(State.of("q", context="条" * 4000), ctx)
    first, second = (b["messages"][-1]["content"] for b in llm_server.script.chat_requests())
    assert len(second) < len(first) - 1500 and out.topics == ["甲"]
    assert ctx.trace.fallbacks() == []


def test_an_endpoint_without_json_schema_support_is_asked_in_json_mode_from_then_on(llm_server):
    llm_server.script.script(Reply(status=400, text="response_format type json_schema is not supported"),
                             Reply(text='{"topics": ["甲"]}'), Reply(text='{"topics": ["乙"]}'))
    assert topics.run(State.of("q", context="c"), ctx_for(llm_server)).topics == ["甲"]
    assert topics.run(State.of("q", context="c"), ctx_for(llm_server)).topics == ["乙"]
    kinds = [b["response_format"]["type"] for b in llm_server.script.chat_requests()]
    assert kinds == ["json_schema", "json_object", "json_object"]


def test_the_schema_goes_into_the_prompt_as_json():
    text = topics.messages(State.of("q", context="c"), ctx=generic_ctx())[-1]["content"]
    assert '"properties": {"topics"' in text and "'properties'" not in text


def test_a_json_object_is_found_whole_in_a_fence_or_in_prose_and_its_absence_is_named():
    assert json_object('{"topics": ["甲"]}') == {"topics": ["甲"]}
    assert json_object('Sure! Here it is:\n```json\n{"topics": ["甲"]}\n```\nAnything else?') == {"topics": ["甲"]}
    assert json_object('The answer is {"topics": ["甲"]} as asked {not json}.') == {"topics": ["甲"]}
    assert json_object("topics: 甲") is None and json_object("[1, 2]") is None
    with pytest.raises(InvalidOutput, match="LLM reply holds no JSON object: 'no object here'"):
        parse_reply("no object here", Topics)


def test_a_prose_wrapped_reply_from_a_server_that_ignores_the_format_is_read(llm_server):
    llm_server.script.script(Reply(text='I found these:\n```\n{"topics": ["甲"]}\n```'))
    ctx = ctx_for(llm_server)
    assert topics.run(State.of("q", context="c"), ctx).topics == ["甲"] and ctx.trace.fallbacks() == []


def test_bare_passage_numbers_become_the_markers_of_those_passages():
    from lambdarag.skills.context import numbered_markers
    from lambdarag.skills.store.records import Hit

    hits = (Hit(chunk_id="a.md#Install", text="x", source="a.md", section="Install", score=1.0),
            Hit(chunk_id="b.md#Use", text="y", source="b.md", section="Use", score=0.5))
    text = "Install it first [1]. Then run it [2][1]. See [3] and [the docs](b.md) and [2](link), footnote [[1]](b.md)."
    assert numbered_markers(text, hits, "source") == (
        "Install it first [source: a.md#Install]. Then run it [source: b.md#Use][source: a.md#Install]. "
        "See [3] and [the docs](b.md) and [2](link), footnote [[1]](b.md).")


def test_an_english_answer_s_stops_after_markers_are_not_claims_and_a_leading_dot_stays():
    from lambdarag.skills.context import claims

    found = claims("APT reads sources.list[source: apt.md#Sources]. .bashrc is read by bash[source: bash.md].")
    assert [(c, [m.group(0) for m in ms]) for c, ms in found] == [
        ("APT reads sources.list", ["[source: apt.md#Sources]"]), (".bashrc is read by bash", ["[source: bash.md]"])]
