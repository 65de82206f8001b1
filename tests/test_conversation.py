"""Conversations: follow-ups rewritten into standalone questions from the history, offline and by an LLM."""
from __future__ import annotations

import json
import shutil

import pytest
import yaml

from lambdarag import Context, Message, State
from lambdarag.providers.llm import OpenAIChat
from lambdarag.orchestration.config import DEFAULT_CONFIG, parse_config
from lambdarag.orchestration.lifecycle import follow_up_rewrite
from lambdarag.orchestration.search_unified import search
from lambdarag.domains.corpus import build_index
from lambdarag.domains.prc_statutes import StatuteProfile
from lambdarag.skills.planner import complete_follow_up
from tests.conftest import MARITIME
from tests.scripted_server import Reply

FILES = ["行政法规/船员条例(2023-07-20).md", "行政法规/船舶登记条例(2014-07-29).md", "经济法/港口法(2018-12-29).md"]


def standalone(text: str, history: tuple[Message, ...], ctx: Context) -> tuple[str, list[dict]]:
    """Returns the lifecycle's rewrite of `text` after `history`, and the fallbacks its own step recorded."""
    out = follow_up_rewrite().run(State(query=text, original_query=text, history=history), ctx)
    assert out.original_query == out.query and out.variants == ()   # the route plans its own variants
    return out.query, [f for f in ctx.trace.fallbacks() if f["term"] == "standalone_rewrite"]


def turns(*pairs: tuple[str, str]) -> tuple[Message, ...]:
    return tuple(Message(role=role, content=text) for q, a in pairs
                 for role, text in (("user", q), ("assistant", a)))


@pytest.mark.parametrize("query, history, standalone_query", [
    ("它的上级部门是谁？", turns(("海事局的职责是什么？", "……")), "海事局的上级部门是谁？"),
    # An organisation question whose previous turn named only a law: "it" is the body the answer named.
    ("它的上级部门是谁？", turns(("船员条例由哪个部门主管？", "国务院交通运输主管部门主管全国船员管理工作。")),
     "国务院交通运输主管部门的上级部门是谁？"),
    ("它是什么时候施行的？", turns(("港口法由谁主管？", "……")), "港口法是什么时候施行的？"),
    ("该法什么时候施行", turns(("港口法由谁主管？", "……")), "港口法什么时候施行"),
    ("它是什么时候施行的？", turns(("船舶登记条例由哪个部门主管？", "…"), ("那船员条例呢？", "…")),
     "船员条例是什么时候施行的？"),
    ("那船员呢？", turns(("海上交通安全法对船长有什么要求？", "……")), "海上交通安全法对船员有什么要求？"),
    ("那水污染防治法呢？", turns(("海上交通安全法由哪个部门主管？", "……")), "水污染防治法由哪个部门主管？"),
    ("这个呢", turns(("海事局的职责是什么？", "……")), None),
    ("那么它呢？", turns(("港口法由谁主管？", "……")), None),
    ("船舶碰撞后船长应当做什么", turns(("港口法由谁主管？", "……")), None),
])
def test_follow_ups_are_completed_from_the_previous_turn(query, history, standalone_query):
    assert complete_follow_up(query, history, StatuteProfile()) == standalone_query


@pytest.fixture(scope="module")
def sea(tmp_path_factory):
    """Yields (index name, config): a BM25-only index of three maritime regulations under a temporary home."""
    home = tmp_path_factory.mktemp("home")
    corpus = home.parent / "sea-corpus"
    for f in FILES:
        (corpus / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(MARITIME / f, corpus / f)
    data = yaml.safe_load(DEFAULT_CONFIG.read_text(encoding="utf-8"))
    for component in ("embedding", "graph", "wiki"):
        data["retrieval"]["skills"][component]["enabled"] = False
    config = parse_config(yaml.safe_dump(data, allow_unicode=True))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LAMBDARAG_HOME", str(home))
        mp.setenv("LAMBDARAG_FEEDBACK", "off")
        build_index(corpus, "sea", dense=False, progress=False)
        yield "sea", config


def cited(result) -> set[str]:
    return {c.source for c in result.citations}


def test_a_two_turn_conversation_answers_about_the_new_subject(sea):
    name, config = sea
    first = search("船舶登记条例由哪个部门主管？", index=name, config=config)
    assert cited(first) == {"行政法规/船舶登记条例(2014-07-29).md"}
    history = [{"role": "user", "content": first.query}, {"role": "assistant", "content": first.answer}]
    second = search("那船员条例呢？", index=name, history=history, config=config)
    assert second.query == "那船员条例呢？" and second.rewritten_query == "船员条例由哪个部门主管？"
    assert cited(second) == {"行政法规/船员条例(2023-07-20).md"}
    assert "船员管理工作" in second.answer and "船舶登记主管机关" not in second.answer
    assert not any(f["term"] == "standalone_rewrite" for f in second.fallbacks)
    history += [{"role": "user", "content": second.query}, {"role": "assistant", "content": second.answer}]
    third = search("它是什么时候施行的？", index=name, history=history, config=config)
    assert third.rewritten_query == "船员条例是什么时候施行的？"
    assert "2007年9月1日" in third.answer


def test_a_follow_up_that_cannot_be_rewritten_is_searched_as_typed_and_marked(sea):
    name, config = sea
    history = [{"role": "user", "content": "船员条例由哪个部门主管？"}, {"role": "assistant", "content": "……"}]
    r = search("这个呢", index=name, history=history, config=config)
    assert r.rewritten_query == "这个呢"
    marks = [f for f in r.fallbacks if f["term"] == "standalone_rewrite"]
    assert marks and "could not be rewritten" in marks[0]["reason"] and r.plan.intent == "follow_up"


def test_with_an_llm_the_rewrite_comes_from_query_expand(llm_server):
    llm_server.script.script(Reply(text=json.dumps({"variants": [
        {"text": "船员条例的主管部门是哪个？", "kind": "rewrite"},
        {"text": "船员管理 主管部门", "kind": "multi_query"}]}, ensure_ascii=False)))
    ctx = Context(llm=OpenAIChat(llm_server.url, "m", timeout=2), resources={"profile": StatuteProfile()})
    history = turns(("船舶登记条例由哪个部门主管？", "港务监督机构是船舶登记主管机关。"))
    text, marks = standalone("那船员条例呢？", history, ctx)
    assert (text, marks) == ("船员条例的主管部门是哪个？", [])
    prompt = json.dumps(llm_server.script.requests[0], ensure_ascii=False)
    assert "船舶登记条例由哪个部门主管" in prompt and "那船员条例呢" in prompt


def test_a_failing_llm_falls_back_to_the_rule_rewrite_and_the_trace_says_so(llm_server):
    llm_server.script.script(Reply(status=500), Reply(status=500))
    ctx = Context(llm=OpenAIChat(llm_server.url, "m", timeout=2), resources={"profile": StatuteProfile()})
    history = turns(("船舶登记条例由哪个部门主管？", "……"))
    text, marks = standalone("那船员条例呢？", history, ctx)
    assert (text, marks) == ("船员条例由哪个部门主管？", [])
    assert [f["term"] for f in ctx.trace.fallbacks()] == ["query_expand"]
