"""Two `lambdarag serve` processes, each with its own copy of the demo index and wiki, on one PostgreSQL store: what
one writes back (graph relations, wiki pages, analyses) or reverts, the other walks and shows from its next question
on (`orchestration.feedback.replica`), also when both write at once and one is killed mid-write."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from lambdarag.orchestration.feedback.store import DSN_ENV
from lambdarag.skills.store.wiki import learned_change
from tests.conftest import ROOT, serve_process

RELATION_Q = "船员条例由哪个部门主管？"
LEARNED = ("国家海事管理机构", "主管", "船员条例")
QUESTIONS = ["船长有什么权力？", "梳理船员管理法规体系", "海上交通安全法与水污染防治法在船舶管理方面有何异同？",
             "船员服务簿遗失了怎么补办？", "船舶污染事故由谁调查处理？", "引航员应当具备哪些条件？", RELATION_Q]


def forget_relation(home: Path, config: Path) -> Path:
    """Returns the wiki folder of `home`'s demo index after removing the compiled fact `LEARNED` from its graph and
    pages, so that an answer teaches it again."""
    from lambdarag.orchestration import knowledge
    from lambdarag.orchestration.feedback import render_into
    from lambdarag.orchestration.setup import resolve_config

    os.environ["LAMBDARAG_HOME"] = str(home)
    knowledge.forget()
    kb = knowledge.open_knowledge(resolve_config(str(config)))
    head, relation, tail = LEARNED
    for rec in [r for r in kb.graph.neighbors(head) if r.relation == relation and r.tail == tail]:
        kb.graph.remove_relation(rec)
    kb.graph.save()
    for name in (head, tail):
        render_into(kb.graph, kb.wiki_dir, name, kb.resources()["profile"])
    knowledge.forget()
    return kb.wiki_dir


@pytest.fixture
def two_homes(tmp_path, pg_database, monkeypatch):
    """Returns [(env, wiki folder)] of two data homes holding copies of one demo index and wiki without the fact
    `LEARNED`, sharing one PostgreSQL store, and the config (feedback on, one source enough to teach)."""
    from lambdarag.orchestration.knowledge import open_knowledge
    from lambdarag.orchestration.setup import resolve_config

    assert open_knowledge(resolve_config(None)).index is not None      # the demo index, built once per data home
    config = tmp_path / "agent-config.yml"
    config.write_text((ROOT / "agent-config.yml").read_text(encoding="utf-8").replace(
        "    minSources: 2\n", "    minSources: 1\n    votes: {anonymousAgreement: 1, rateLimit: 100000}\n"),
        encoding="utf-8")
    monkeypatch.setenv("LAMBDARAG_HOME", os.environ["LAMBDARAG_HOME"])   # restored after the test
    monkeypatch.setenv(DSN_ENV, pg_database)
    monkeypatch.setenv("LAMBDARAG_FEEDBACK", "on")
    source = Path(os.environ["LAMBDARAG_HOME"]) / "demo"
    homes = []
    for name in ("a", "b"):
        home = tmp_path / name
        shutil.copytree(source, home / "demo", symlinks=True, ignore=shutil.ignore_patterns("feedback", "*.lock"))
        wiki = forget_relation(home, config)
        homes.append(({"LAMBDARAG_HOME": str(home), "LAMBDARAG_FEEDBACK": "on", DSN_ENV: pg_database}, wiki))
    return homes, config


def ask(http: httpx.Client, url: str, question: str) -> dict:
    r = http.post(f"{url}/api/search", json={"query": question}, timeout=180)
    assert r.status_code == 200, r.text
    return r.json()


def walked(answer: dict) -> set[tuple[str, str, str]]:
    return {(x["head"], x["relation"], x["tail"]) for x in answer["relations"]}


def page(wiki: Path, entity: str) -> str:
    return (wiki / "entities" / f"{entity}.md").read_text(encoding="utf-8")


def revert(env: dict, config: Path, item_id: str) -> None:
    subprocess.run([sys.executable, "-m", "lambdarag.orchestration.cli", "feedback", "revert", item_id, "--config",
                    str(config)], cwd=ROOT, env={**os.environ, **env}, check=True, capture_output=True, timeout=120)


def within(seconds: float, condition) -> float:
    """Returns how long `condition()` took to hold, failing past `seconds`."""
    start = time.monotonic()
    while not condition():
        assert time.monotonic() - start < seconds, f"not within {seconds} s"
        time.sleep(0.05)
    return time.monotonic() - start


def test_a_fact_written_back_through_one_server_is_walked_and_shown_by_the_other_until_reverted(two_homes):
    (env_a, wiki_a), (env_b, wiki_b) = two_homes[0]
    config = two_homes[1]
    assert "[[国家海事管理机构]]" not in page(wiki_b, "船员条例")
    with serve_process("--config", str(config), env=env_a) as a, serve_process("--config", str(config), env=env_b) as b, \
            httpx.Client() as http:
        taught = ask(http, a, RELATION_Q)
        assert taught["query_id"] and "[[国家海事管理机构]]" in page(wiki_a, "船员条例")
        within(5.0, lambda: "[[国家海事管理机构]]" in page(wiki_b, "船员条例"))   # b's wiki page shows it
        assert LEARNED in walked(ask(http, b, RELATION_Q))                       # and b's graph route walks it
        revert(env_a, config, taught["query_id"])             # through a's data home
        within(5.0, lambda: "[[国家海事管理机构]]" not in page(wiki_b, "船员条例"))
        reverted = learned_change(wiki_b)
        within(5.0, lambda: learned_change(wiki_a) >= reverted)  # a's server replayed the revert too
        assert "[[国家海事管理机构]]" not in page(wiki_a, "船员条例")
        # the first answer after the revert walks without it (and, being a cited answer, teaches it again)
        assert LEARNED not in walked(ask(http, a, RELATION_Q))
    assert not [p for p in (*wiki_a.glob("analyses/*.md"), *wiki_b.glob("analyses/*.md"))
                if taught["query_id"] in p.read_text(encoding="utf-8")]


def test_a_question_reads_every_change_committed_before_it_on_any_server(two_homes):
    """With the idle replay an hour apart, only the question's own catch-up can show b the fact a taught, and hide
    it from a again once reverted through a's data home (which edits a's files, not a's memory). Only one answer
    after the revert is checked: being cited, it teaches the fact again."""
    (env_a, _), (env_b, _) = two_homes[0]
    config = two_homes[1]
    config.write_text(config.read_text(encoding="utf-8") + "server:\n  followSeconds: 3600\n", encoding="utf-8")
    with serve_process("--config", str(config), env=env_a) as a, serve_process("--config", str(config), env=env_b) as b, \
            httpx.Client() as http:
        ask(http, b, QUESTIONS[0])                           # b's setup (which replays once) made before a teaches
        taught = ask(http, a, RELATION_Q)
        seen = ask(http, b, RELATION_Q)
        assert LEARNED in walked(seen)                       # a's write-back, walked by b's next question at once
        revert(env_a, config, taught["query_id"])            # (b's answer found the fact known: no item of its own)
        assert LEARNED not in walked(ask(http, a, RELATION_Q))     # a's memory caught up with its own files


def learned_state(env: dict, config: Path) -> tuple[set, set]:
    """Returns (feedback relations, analysis pages) of `env`'s demo wiki after replaying the store, as a process
    opening that data home now holds them, and checks the files say the same."""
    from lambdarag.orchestration import knowledge
    from lambdarag.orchestration.feedback import open_feedback
    from lambdarag.orchestration.setup import resolve_config

    os.environ["LAMBDARAG_HOME"] = env["LAMBDARAG_HOME"]
    knowledge.forget()
    cfg = resolve_config(str(config))
    kb = knowledge.open_knowledge(cfg)
    open_feedback(cfg, kb)
    relations = {(r.head, r.relation, r.tail, r.provenance["query_id"]) for r in kb.graph.records()
                 if r.origin == "feedback"}
    analyses = {p.name for p in (kb.wiki_dir / "analyses").glob("*.md")}
    from lambdarag.skills.store.graph import EntityGraph

    on_disk = EntityGraph.load(kb.wiki_dir / "relations.json")
    assert {(r.head, r.relation, r.tail, r.provenance["query_id"]) for r in on_disk.records()
            if r.origin == "feedback"} == relations
    knowledge.forget()
    return relations, analyses


def test_two_servers_writing_at_once_and_one_killed_mid_write_stay_consistent(two_homes):
    from lambdarag.orchestration.config import FeedbackConfig
    from lambdarag.orchestration.feedback import FeedbackLoop

    (env_a, _), (env_b, _) = two_homes[0]
    config = two_homes[1]
    stop = threading.Event()
    with ExitStack() as stack:
        a = stack.enter_context(serve_process("--config", str(config), env=env_a))
        b = stack.enter_context(serve_process("--config", str(config), env=env_b))
        http = stack.enter_context(httpx.Client())
        pid = http.get(f"{a}/ready").json()["pid"]
        answered: list[str] = []

        def keep_asking(url: str, n: int) -> None:
            while not stop.is_set():
                try:     # a new wording each time: each answer writes back at least its analysis page
                    answered.append(ask(http, url, f"{QUESTIONS[n % len(QUESTIONS)]}（{n}）")["query_id"])
                except (httpx.TransportError, AssertionError):
                    return                                       # the server is gone
                n += 3
        with ThreadPoolExecutor(4) as pool:
            for i, url in enumerate((a, a, b, b)):
                pool.submit(keep_asking, url, i)
            while len(answered) < 8:
                stop.wait(0.05)
            os.kill(pid, signal.SIGKILL)                         # a dies wherever it is, maybe inside a write-back
            while len(answered) < 12:
                stop.wait(0.05)
            stop.set()
        ask(http, b, RELATION_Q)
    os.environ["LAMBDARAG_HOME"] = env_b["LAMBDARAG_HOME"]
    items = FeedbackLoop(FeedbackConfig(), Path(env_b["LAMBDARAG_HOME"]) / "demo" / "feedback").journal.items()
    live = {i: x for i, x in items.items() if not x["reverted"]}
    assert len(live) >= 8
    expected = {(r["head"], r["relation"], r["tail"], i) for i, x in live.items() for r in x["relations"]}
    pages = {Path(x["analysis"]).name for x in live.values() if x["analysis"]}
    for env in (env_a, env_b):                                   # a restarted a holds what b holds: the store's
        relations, analyses = learned_state(env, config)
        assert relations == expected and pages <= analyses
