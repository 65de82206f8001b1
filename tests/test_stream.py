"""search_stream: evidence before tokens, tokens as the model writes them, honest retraction, checked-only release,
cancellation, and the same result as search()."""
from __future__ import annotations

from typing import TypedDict

import asyncio
import json

from lambdarag import Context, Guard, Lam, Par, State, Tool, User, Verdict
from lambdarag.providers.llm import OpenAIChat
from lambdarag.stream import Sink, Stream
from lambdarag.orchestration.events import event_json
from lambdarag.orchestration.search_unified import asearch_stream, search, search_stream
from tests.scripted_server import Reply
from tests.test_search import INTERNAL, config_with


class Answered(TypedDict):
    """The write of the tests' answering Lam."""

    answer: str

COMPARE = "海上交通安全法与水污染防治法在船舶管理方面有何异同？"
SAFETY = "[来源: 海上交通安全法(2021-04-29).md#第三十八条]"
WATER = "[来源: 水污染防治法(2017-06-27).md#第九条]"
GOOD = f"船长负责管理和指挥船舶{SAFETY}。"
BAD = f"水污染防治法规定船长每年考核一次{WATER}。"
ANSWER_PROMPT, CHECK_PROMPT = "你是知识库助手", "请逐条核查"


def kinds(events) -> list[str]:
    return [e.kind for e in events]


def answer_reply(text: str, rate: float = 20.0) -> Reply:
    return Reply(text=text, rate=rate, piece=3)     # the answer is plain text with citation markers


def judgement(*items: tuple[str, str]) -> Reply:
    return Reply(text=json.dumps({"items": [{"citation": c, "status": s, "reason": "scripted"} for c, s in items]},
                                 ensure_ascii=False))


def prompt_of(body: dict) -> str:
    return "\n".join(m["content"] for m in body["messages"])   # the system and the user message


def answered_part(body: dict) -> str:
    """Returns the answer a check prompt asks about (the text after 【回答】)."""
    return prompt_of(body).split("【回答】")[-1]


def llm_config(server, **changes):
    return config_with(llm__baseUrl=server.url, llm__model="m", llm__timeout=20, limits__timeoutSeconds=120,
                       **changes)


def standing_text(events) -> str:
    """Returns the answer the tokens spell once every retracted attempt is struck out."""
    retracted = {e.attempt for e in events if e.kind == "retract"}
    return "".join(e.text for e in events if e.kind == "token" and e.attempt not in retracted)


def test_offline_stream_sends_evidence_first_then_the_answer_sentence_by_sentence():
    events = list(search_stream(COMPARE))
    order = kinds(events)
    assert order[-1] == "result" and order.count("result") == 1
    assert order.index("classified") < order.index("plan") < order.index("hits") < order.index("token")
    tokens = [e for e in events if e.kind == "token"]
    assert len(tokens) > 2  # sentence by sentence, not in one piece
    result = events[-1].result
    assert standing_text(events) == result.answer
    hits = next(e for e in events if e.kind == "hits").hits
    assert hits == [h.model_dump() for h in result.hits]
    classified = next(e for e in events if e.kind == "classified")
    assert (classified.query_type, classified.strategy) == (result.query_type, result.strategy)
    assert all(json.dumps(event_json(e), ensure_ascii=False) for e in events)


def test_the_streamed_result_is_what_search_returns():
    volatile = {"latency_ms", "trace", "query_id"}
    for query in (COMPARE, "船员条例由哪个部门主管？", "你好"):
        streamed = [e for e in search_stream(query) if e.kind == "result"][0].result
        drained = search(query)
        assert streamed.model_dump(exclude=volatile) == drained.model_dump(exclude=volatile), query


def test_no_event_carries_what_the_user_may_not_see():
    query = "船员适任证书核查内部指引的核查要求是什么？"
    events = list(search_stream(query))
    shown = json.dumps([event_json(e) for e in events], ensure_ascii=False).replace(query, "")
    assert INTERNAL not in shown
    insider = User(id="u1", departments=("船员管理处",), security_level=2)
    events = list(search_stream(query, user=insider))
    assert INTERNAL in json.dumps(event_json(next(e for e in events if e.kind == "hits")), ensure_ascii=False)


def test_hits_arrive_before_the_first_token_and_tokens_as_the_model_writes_them(llm_server):
    server = llm_server.script
    reply = answer_reply("国务院交通运输主管部门主管全国船员管理工作[来源: 船员条例(2023-07-20).md#第三条]。", rate=10.0)
    server.route = lambda body: reply if ANSWER_PROMPT in prompt_of(body) else Reply(status=500)
    total = len(reply.text) // reply.piece + 1
    events, sent_at_first_token = [], None
    for event in search_stream("船员条例由哪个部门主管？", config=llm_config(llm_server)):
        if event.kind == "token" and sent_at_first_token is None:
            sent_at_first_token = server.chunks_sent
        events.append(event)
    order = kinds(events)
    assert order.index("hits") < order.index("token")
    assert sent_at_first_token is not None and sent_at_first_token < total / 2  # the model was still writing
    assert sum(1 for k in order if k == "token") > 10
    assert any(r["body"].get("stream") for r in server.requests)
    assert standing_text(events) == events[-1].result.answer


def test_a_rejected_attempt_is_retracted_and_the_retry_streams_afresh(llm_server):
    server = llm_server.script
    checks = iter([judgement((SAFETY, "unsupported")), judgement((SAFETY, "supported"))])

    def route(body):
        text = prompt_of(body)
        if ANSWER_PROMPT in text:
            return answer_reply(GOOD)
        return next(checks) if CHECK_PROMPT in text else Reply(status=500)

    server.route = route
    events = list(search_stream(COMPARE, config=llm_config(llm_server)))
    flow = [(e.kind, getattr(e, "attempt", None)) for e in events if e.kind in ("token", "verdict", "retract")]
    first, second = flow[0][1], flow[-1][1]
    assert ("verdict", first) in flow and ("retract", first) in flow and ("verdict", second) in flow
    assert flow.index(("retract", first)) < flow.index(("token", second))
    verdicts = [e for e in events if e.kind == "verdict"]
    assert [v.passed for v in verdicts] == [False, True] and verdicts[-1].final
    retract = next(e for e in events if e.kind == "retract")
    assert retract.text == GOOD and "unsupported" in retract.reason
    assert standing_text(events) == events[-1].result.answer == GOOD


def test_checked_only_never_releases_a_claim_the_check_rejects(llm_server):
    server = llm_server.script

    def route(body):
        text = prompt_of(body)
        if ANSWER_PROMPT in text:
            return answer_reply(GOOD + BAD)
        if CHECK_PROMPT in text:  # the judge rejects the water-law claim wherever it appears
            asked = answered_part(body)
            return judgement(*[(c, "unsupported" if c == WATER else "supported") for c in (SAFETY, WATER) if c in asked])
        return Reply(status=500)

    server.route = route
    events = list(search_stream(COMPARE, config=llm_config(llm_server), checked_only=True))
    released = "".join(e.text for e in events if e.kind == "token")
    assert GOOD in released
    assert "考核" not in released
    rejected = [d for v in events if v.kind == "verdict" for d in v.details if not d.startswith("supported")]
    assert rejected and all(WATER in d for d in rejected)


def test_closing_the_stream_cancels_the_llm_request(llm_server):
    server = llm_server.script
    server.route = lambda body: answer_reply(GOOD * 40, rate=5.0) if ANSWER_PROMPT in prompt_of(body) else Reply(status=500)
    stream = search_stream("船员条例由哪个部门主管？", config=llm_config(llm_server))
    for event in stream:
        if event.kind == "token":
            break
    stream.close()
    assert server.hung_up.wait(20)
    assert server.chunks_sent < len(GOOD * 40) // 3


def test_the_async_twin_yields_the_same_events():
    async def collect():
        return [e async for e in asearch_stream(COMPARE)]

    events = asyncio.run(collect())
    assert kinds(events) == kinds(list(search_stream(COMPARE)))


def test_only_the_main_path_streams_not_par_branches():
    offline = Tool("echo", lambda s: {"answer": f"{s.query}。第二句。"}, reads=["query"], writes=["answer"])
    lam = Lam("say", "{query}", reads=["query"], writes=Answered, fallback=offline, stream="answer")
    other = Tool("other", lambda s: {"entities": ("x",)}, reads=["query"], writes=["entities"])

    def tokens(term):
        sink = Sink()
        return [e for e in Stream(lambda: term.run("问", Context()), sink) if e.kind == "token"]

    assert "".join(t.text for t in tokens(lam)) == "问。第二句。" and len(tokens(lam)) == 2
    assert tokens(Par(lam, other)) == []


def test_a_guard_retracts_on_the_calculus_level_with_a_real_stream(llm_server):
    llm_server.script.script(Reply(text="第一稿。", rate=10.0, piece=1), Reply(text="第二稿。", rate=10.0, piece=1))
    offline = Tool("echo", lambda s: {"answer": "离线。"}, reads=["query"], writes=["answer"])
    lam = Lam("say", "{query}", reads=["query"], optional=["verdict"], writes=Answered, fallback=offline,
              stream="answer")
    check = Tool("check", lambda s: {"verdict": Verdict(passed="第二" in s.answer, details=(s.answer,))},
                 reads=["answer"], writes=["verdict"])
    ctx = Context(llm=OpenAIChat(llm_server.url, "m"))
    out: list[State] = []
    events = list(Stream(lambda: out.append(Guard(lam, check).run("问", ctx)), Sink()))
    assert [e.kind for e in events if e.kind != "token"] == ["verdict", "retract", "verdict"]
    assert standing_text(events) == out[0].answer == "第二稿。"
    assert [e.text for e in events if e.kind == "token" and e.attempt == 1] == list("第一稿。")


def test_cli_json_stream_prints_one_event_per_line_ending_in_the_result(capsys):
    from lambdarag.orchestration.cli import main

    assert main(["ask", "--json", "--stream", COMPARE]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    order = [e["kind"] for e in lines]
    assert order.index("hits") < order.index("token") and order[-1] == "result"
    assert "".join(e["text"] for e in lines if e["kind"] == "token") == lines[-1]["result"]["answer"]
