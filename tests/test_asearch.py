"""asearch(): the run search() makes, awaited, returning the same typed result; cancelling its task stops the run."""
from __future__ import annotations

import asyncio
import json
import threading

import pytest

from lambdarag.orchestration.feedback.worker import drain
from lambdarag.orchestration.result import Citation, Hit, SearchResult
from lambdarag.orchestration.search_unified import asearch, search
from tests.scripted_server import Reply
from tests.test_stream import ANSWER_PROMPT, COMPARE, GOOD, llm_config, prompt_of

QUESTION = "船员条例由哪个部门主管？"


def test_asearch_returns_the_typed_result_search_returns():
    awaited = asyncio.run(asearch(COMPARE))
    called = search(COMPARE)
    assert isinstance(awaited, SearchResult) and awaited.citations and isinstance(awaited.citations[0], Citation)
    assert isinstance(awaited.hits[0], Hit)
    assert (awaited.answer, awaited.citations, awaited.hits, awaited.expression, awaited.plan) == \
        (called.answer, called.citations, called.hits, called.expression, called.plan)
    assert awaited.model_dump(mode="json")["citations"][0] == called.citations[0].model_dump()


def stream_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "lambdarag-stream"]


def answer_is_slow(server, asked: threading.Event) -> None:
    """Scripts the server: the answer prompt is answered after a second (and noted), every other prompt fails."""
    def route(body: dict) -> Reply:
        if ANSWER_PROMPT in prompt_of(body):
            asked.set()
            return Reply(text=json.dumps({"answer": GOOD, "sufficient": True}, ensure_ascii=False), delay=1.0)
        return Reply(status=500)

    server.route = route


def test_cancelling_the_task_stops_the_run_at_the_next_term_boundary(llm_server):
    server, asked = llm_server.script, threading.Event()
    answer_is_slow(server, asked)
    config = llm_config(llm_server)
    finished = asyncio.run(asearch(QUESTION, config=config))       # uncancelled, the run goes on past the answer
    after_answer = len(server.chat_requests()) - next(
        i for i, b in enumerate(server.chat_requests()) if ANSWER_PROMPT in prompt_of(b)) - 1
    assert finished.answer and after_answer > 0
    assert drain(60)                                                  # learning in the background done too

    server.requests.clear()
    asked.clear()

    async def cancelled() -> None:
        task = asyncio.create_task(asearch(QUESTION, config=config))
        assert await asyncio.to_thread(asked.wait, 60)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled())
    for t in stream_threads():
        t.join(30)
        assert not t.is_alive(), "the cancelled run did not stop"
    bodies = server.chat_requests()
    assert ANSWER_PROMPT in prompt_of(bodies[-1]), "the run went on past the answer term after its task was cancelled"
