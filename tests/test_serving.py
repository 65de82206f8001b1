"""A served app warms up before it answers (/ready) and answers 503 with Retry-After when warming or overloaded."""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import httpx
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from lambdarag.orchestration.serving import Gate
from tests.conftest import serve_process


def slow_app(release: asyncio.Event) -> Starlette:
    async def search(request):
        await release.wait()
        return JSONResponse({"answer": "ok"})

    async def info(request):
        return JSONResponse({"index": "demo"})
    return Starlette(routes=[Route("/api/search", search, methods=["POST"]), Route("/api/info", info)])


def test_while_warming_ready_and_the_api_answer_503_with_retry_after_and_info_still_answers():
    async def run():
        release = asyncio.Event()
        release.set()
        gate = Gate(slow_app(release), max_in_flight=4, retry_after=3)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=gate), base_url="http://t") as http:
            ready, search, info = await http.get("/ready"), await http.post("/api/search"), await http.get("/api/info")
            gate.ready()
            after = (await http.get("/ready")).status_code, (await http.post("/api/search")).status_code
        return ready, search, info, after
    ready, search, info, after = asyncio.run(run())
    assert (ready.status_code, ready.json()["status"]) == (503, "warming")
    assert search.status_code == 503 and search.headers["retry-after"] == "3" and "warming up" in search.json()["error"]
    assert info.status_code == 200 and after == (200, 200)


def test_a_failed_warm_up_keeps_the_server_unready_and_says_why():
    async def run():
        gate = Gate(slow_app(asyncio.Event()), max_in_flight=4, retry_after=1)
        gate.ready("StoreUnavailable: feedback store postgres: cannot connect")
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=gate), base_url="http://t") as http:
            return await http.get("/ready"), await http.post("/api/search")
    ready, search = asyncio.run(run())
    assert ready.status_code == 503 and ready.json() == {"status": "failed", "error": "StoreUnavailable: feedback "
                                                         "store postgres: cannot connect"}
    assert search.status_code == 503 and "warm-up failed: StoreUnavailable" in search.json()["error"]


def test_past_max_in_flight_a_request_is_answered_503_at_once_and_the_next_one_after_is_served():
    async def run():
        release = asyncio.Event()
        gate = Gate(slow_app(release), max_in_flight=2, retry_after=1)
        gate.ready()
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=gate), base_url="http://t") as http:
            held = [asyncio.create_task(http.post("/api/search")) for _ in range(2)]
            while gate.in_flight < 2:
                await asyncio.sleep(0.01)
            refused = await http.post("/api/search")
            release.set()
            served = [r.status_code for r in await asyncio.gather(*held)]
            return refused, served, (await http.post("/api/search")).status_code, gate.in_flight
    refused, served, later, in_flight = asyncio.run(run())
    assert refused.status_code == 503 and refused.headers["retry-after"] == "1" and "maxInFlight" in refused.text
    assert served == [200, 200] and later == 200 and in_flight == 0


def test_a_fresh_server_answers_its_first_four_concurrent_questions():
    questions = ["船长有什么权力？", "船员条例由哪个部门主管？", "梳理船员管理法规体系", "海上交通安全法与水污染防治法在船舶管理方面有何异同？"]
    with serve_process() as url:
        with ThreadPoolExecutor(4) as pool:
            statuses = list(pool.map(lambda q: httpx.post(f"{url}/api/search", json={"query": q}, timeout=120)
                                     .status_code, questions))
    assert statuses == [200] * 4
