"""Two `lambdarag serve` processes on one knowledge base and one PostgreSQL share what they learn and lose nothing.

The learned state is read from the store on every query (its change counter), so the refresh interval is one
query: what one server learned is applied by the other from its next question on.
"""
from __future__ import annotations

import os
import shutil
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack

import httpx
import pytest

from lambdarag.orchestration.feedback import FeedbackLoop
from lambdarag.orchestration.feedback.store import DSN_ENV
from tests.conftest import ROOT, serve_process

QUESTIONS = ["船长有什么权力？", "船员条例由哪个部门主管？", "梳理船员管理法规体系", "海上交通安全法与水污染防治法在船舶管理方面有何异同？",
             "船员服务簿遗失了怎么补办？", "船舶污染事故由谁调查处理？", "船长在保障海上生命安全方面有什么权力？", "引航员应当具备哪些条件？"]


@pytest.fixture
def shared(tmp_path, pg_database, monkeypatch):
    """Returns (env, config path, feedback folder) for servers sharing one data home's index and one PostgreSQL:
    feedback on, one anonymous 👍 applied at once, no rate limit in reach."""
    from lambdarag.orchestration.knowledge import open_knowledge
    from lambdarag.orchestration.setup import resolve_config

    home = tmp_path / "home"
    built = open_knowledge(resolve_config(None)).index     # the demo index, built once per test data home
    shutil.copytree(os.environ["LAMBDARAG_HOME"] + "/demo", home / "demo", ignore=shutil.ignore_patterns("feedback"))
    assert built is not None
    config = tmp_path / "agent-config.yml"
    config.write_text((ROOT / "agent-config.yml").read_text(encoding="utf-8").replace(
        "    minSources: 2\n", "    minSources: 2\n    votes: {anonymousAgreement: 1, rateLimit: 100000}\n"),
        encoding="utf-8")
    env = {"LAMBDARAG_HOME": str(home), "LAMBDARAG_FEEDBACK": "on", DSN_ENV: pg_database}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env, config, home / "demo" / "feedback"


def ask(http: httpx.Client, url: str, question: str) -> dict:
    r = http.post(f"{url}/api/search", json={"query": question}, timeout=120)
    assert r.status_code == 200, r.text
    return r.json()


def vote(http: httpx.Client, url: str, answer: dict, chunk: str) -> httpx.Response:
    return http.post(f"{url}/api/feedback", json={"query_id": answer["query_id"], "chunk_id": chunk, "verdict": "up"},
                     timeout=60)


def evidence(answer: dict) -> list[str]:
    return [c["chunk_id"] for c in answer["citations"]]


def test_a_thumbs_up_through_one_server_is_applied_by_the_other(shared):
    from lambdarag.orchestration.config import FeedbackConfig

    env, config, folder = shared
    with serve_process("--config", str(config), env=env) as a, serve_process("--config", str(config), env=env) as b, \
            httpx.Client() as http:
        question = QUESTIONS[0]
        before = ask(http, b, question)
        shown = FeedbackLoop(FeedbackConfig(), folder).log.find(before["query_id"])["shown_chunks"]
        lifted = shown[-1]                                         # the last chunk the answer showed
        first = ask(http, a, question)
        assert vote(http, a, first, lifted).json()["status"] == "applied"
        after = ask(http, b, question)
    assert not after["from_cache"]                                 # the 👍 retired the cached answer on b too
    loop = FeedbackLoop(FeedbackConfig(), folder)
    ranked = loop.log.find(after["query_id"])["shown_chunks"]
    assert ranked.index(lifted) < shown.index(lifted), (shown, ranked)


def client_work(http: httpx.Client, urls: list[str], client: int, rounds: int) -> tuple[list[str], list[str]]:
    """One client's requests, alternating servers: a question, then a 👍 on its first cited chunk; returns the
    query ids and vote ids acknowledged."""
    queries, votes = [], []
    for i in range(rounds):
        url = urls[(client + i) % 2]
        answer = ask(http, url, QUESTIONS[(client + i) % len(QUESTIONS)])
        queries.append(answer["query_id"])
        cited = evidence(answer)
        if cited:
            r = vote(http, urls[(client + i + 1) % 2], answer, cited[0])
            assert r.status_code == 200, r.text
            votes.append(r.json()["id"])
    return queries, votes


def crowd(shared, rounds: int) -> None:
    from lambdarag.orchestration.config import FeedbackConfig

    env, config, folder = shared
    with serve_process("--config", str(config), env=env) as a, serve_process("--config", str(config), env=env) as b, \
            httpx.Client() as http:
        with ThreadPoolExecutor(8) as pool:
            done = list(pool.map(lambda c: client_work(http, [a, b], c, rounds), range(8)))
    loop = FeedbackLoop(FeedbackConfig(), folder)
    logged = [r["query_id"] for r in loop.log]
    queries = [q for qs, _ in done for q in qs]
    votes = [v for _, vs in done for v in vs]
    assert len(queries) == 8 * rounds and sorted(logged) == sorted(queries)
    stored = loop.votes.all()
    confirmations = loop.confirmations.items()
    assert votes and all(stored[v]["status"] == "applied" and stored[v]["confirmation"] in confirmations
                         for v in votes)


def test_eight_clients_over_two_servers_lose_no_log_line_and_no_confirmation(shared):
    crowd(shared, rounds=3)


@pytest.mark.slow
def test_eight_clients_sending_a_hundred_requests_each_over_two_servers_lose_nothing(shared):
    crowd(shared, rounds=100)


def test_a_server_killed_mid_write_loses_nothing_it_acknowledged(shared):
    from lambdarag.orchestration.config import FeedbackConfig

    env, config, folder = shared
    acknowledged: list[str] = []
    stop = threading.Event()
    with ExitStack() as stack:
        a = stack.enter_context(serve_process("--config", str(config), env=env))
        b = stack.enter_context(serve_process("--config", str(config), env=env))
        http = stack.enter_context(httpx.Client())
        pid = http.get(f"{a}/ready").json()["pid"]

        def keep_asking(n: int) -> None:
            while not stop.is_set():
                try:
                    acknowledged.append(ask(http, a, QUESTIONS[n % len(QUESTIONS)])["query_id"])
                except (httpx.TransportError, AssertionError):
                    return                                       # the server is gone: nothing more acknowledged
                n += 2
        workers = [threading.Thread(target=keep_asking, args=(n,)) for n in range(2)]
        for w in workers:
            w.start()
        while len(acknowledged) < 6:
            stop.wait(0.05)
        os.kill(pid, signal.SIGKILL)
        for w in workers:
            w.join(120)
        stop.set()
        survivor = ask(http, b, QUESTIONS[0])                    # the other server goes on writing
    logged = {r["query_id"] for r in FeedbackLoop(FeedbackConfig(), folder).log}
    assert set(acknowledged) <= logged and survivor["query_id"] in logged
