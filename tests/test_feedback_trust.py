"""Feedback as a trust boundary, on the real maritime statutes plus one restricted document (issue 30's probes):
a vote must name an answer shown to its caller and a chunk it cited or showed; page votes wait for review or for
agreeing trusted sources; sources are rate-limited; no confirmation lifts a chunk plain retrieval did not return
into anyone's top 10; the anonymous page shows no restricted source."""
from __future__ import annotations

import copy
import json
import shutil

import pytest
import yaml
from fastapi.testclient import TestClient

from lambdarag import Context, State, User
from lambdarag.errors import FeedbackRefused
from lambdarag.state import ALL_ACCESS, PUBLIC
from lambdarag.orchestration import knowledge
from lambdarag.orchestration.cli import main
from lambdarag.orchestration.config import DEFAULT_CONFIG, parse_config
from lambdarag.orchestration.feedback import FeedbackLoop, feedback_dir
from lambdarag.orchestration.feedback.votes import Voter
from lambdarag.orchestration.learning import Confirmations, learn_pairs, open_learned, retrieval_term
from lambdarag.orchestration.search_unified import search
from lambdarag.qademo.app import create_app
from lambdarag.skills.store.learned import HEAD, SIGNALS, LearnedParams
from lambdarag.skills.store.records import RetrievalPlan
from lambdarag.skills.store.vectors import default_embedder
from tests.conftest import MARITIME

NAME = "trust"
MARK = "RESTRICTEDMARK"
SECRET = "restricted/内部#港口巡查规程(2023-05-01).md"
RULES = (f"---\ndepartment: 港口处\nsecurity_level: 2\n---\n# 港口巡查内部规程\n\n2023年5月1日 {MARK}印发\n\n"
         f"第一条 根据《中华人民共和国安全生产法》和《中华人民共和国统计法》，制定本规程。{MARK}\n\n"
         f"第二条 {MARK}巡查组负责港口巡查工作。\n")
PORT = User(id="port", departments=("港口处",), security_level=2)
QUESTION = "船长在保障海上生命安全方面有什么权力？"                 # issue 30's poisoned question
PARAPHRASE = "为了海上人命安全，船长可以行使哪些权力？"
COMPARE = "安全生产法与统计法在港口管理方面有何异同？"        # both sides are named by the restricted rules
SECRET_QUESTION = "港口巡查组负责什么工作？"
PLAN = RetrievalPlan(bm25_top_k=45, dense_top_k=45, fused_top_k=45)


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """Yields the knowledge root holding index `trust`: the maritime fixture plus the restricted rules."""
    root = tmp_path_factory.mktemp("trust-home")
    corpus = root / "corpus"
    shutil.copytree(MARITIME, corpus)
    (corpus / SECRET).parent.mkdir(parents=True)
    (corpus / SECRET).write_text(RULES, encoding="utf-8")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("LAMBDARAG_HOME", str(root))
        env.setenv("LAMBDARAG_FEEDBACK", "on")
        assert main(["index", "--corpus", str(corpus), "--name", NAME, "--no-dense", "--strict"]) == 0
        yield root
        knowledge.forget()


@pytest.fixture
def setup(home):
    """Returns make(**votes) → (config, config file) with feedback on and a fresh feedback folder."""
    def make(**votes):
        shutil.rmtree(feedback_dir(NAME), ignore_errors=True)
        knowledge.forget()
        data = copy.deepcopy(yaml.safe_load(DEFAULT_CONFIG.read_text(encoding="utf-8")))
        data["retrieval"]["skills"]["embedding"]["enabled"] = False
        data["orchestration"]["feedback"].update(enabled=True, minSources=99, votes=votes)
        text = yaml.safe_dump(data, allow_unicode=True)
        path = home / f"config-{len(list(home.glob('config-*')))}.yml"
        path.write_text(text, encoding="utf-8")
        return parse_config(text), path
    return make


def loop_of(config) -> FeedbackLoop:
    return FeedbackLoop(config.orchestration.feedback, feedback_dir(NAME))


def ask(client: TestClient, query: str) -> dict:
    r = client.post("/api/search", json={"query": query, "index": NAME})
    assert r.status_code == 200
    return r.json()


def vote(client: TestClient, query_id: str, chunk: str, verdict: str = "up"):
    return client.post("/api/feedback", json={"query_id": query_id, "chunk_id": chunk, "verdict": verdict,
                                              "index": NAME})


def never_shown(config, view: dict) -> str:
    """Returns a chunk of the index (of 渔业法) that the logged answer neither cited nor showed."""
    record = next(r for r in loop_of(config).log if r["query_id"] == view["query_id"])
    shown = set(record["cited_chunks"]) | set(record["shown_chunks"])
    index = knowledge.open_knowledge(config, NAME).index
    return next(c.id for c in index.chunks() if "渔业法(" in c.source and c.id not in shown)


def test_ten_anonymous_confirmations_of_a_never_cited_chunk_are_all_refused_without_echo(setup):
    config, _ = setup()
    client = TestClient(create_app(config, NAME))
    view = ask(client, QUESTION)
    poison = never_shown(config, view)
    answers = [vote(client, view["query_id"], poison) for _ in range(10)]
    assert [r.status_code for r in answers] == [400] * 10
    assert {r.json()["error"] for r in answers} == {"feedback confirm: the chunk is not one this answer cited or showed"}
    made_up = vote(client, "q-made-up-id-123", poison)
    assert made_up.status_code == 400 and "made-up" not in made_up.json()["error"] and poison not in made_up.text
    loop = loop_of(config)
    assert not loop.votes.all() and not loop.confirmations.items()
    for user in (PUBLIC, PORT):
        for query in (QUESTION, PARAPHRASE):
            top = [h.chunk_id for h in search(query, index=NAME, user=user, config=config).hits[:HEAD]]
            assert poison not in top


def test_a_page_vote_on_a_cited_chunk_waits_for_review_and_changes_nothing_until_approved(setup, capsys):
    config, path = setup()
    client = TestClient(create_app(config, NAME))
    view = ask(client, QUESTION)
    chunk = next(c["chunk_id"] for c in view["citations"] if c["chunk_id"])
    generation = loop_of(config).confirmations.generation()
    r = vote(client, view["query_id"], chunk)
    assert r.status_code == 200 and r.json()["status"] == "pending" and r.json()["weight"] is None
    loop = loop_of(config)
    assert not loop.confirmations.pairs() and loop.confirmations.generation() == generation
    assert open_learned(loop.dir, knowledge.open_knowledge(config, NAME).index, default_embedder()) is None
    assert main(["feedback", "review", "--index", NAME, "--config", str(path)]) == 0
    assert r.json()["id"] in capsys.readouterr().out
    assert main(["feedback", "approve", r.json()["id"], "--index", NAME, "--config", str(path)]) == 0
    assert [p.chunks for p in loop_of(config).confirmations.pairs()] == [(chunk,)]
    assert main(["feedback", "approve", r.json()["id"], "--index", NAME, "--config", str(path)]) == 2   # once


def test_anonymous_sources_never_agree_by_default_and_trusted_users_do(setup):
    config, _ = setup()
    view = ask(TestClient(create_app(config, NAME)), QUESTION)
    chunk = next(c["chunk_id"] for c in view["citations"] if c["chunk_id"])
    for n in range(10):                                        # ten addresses, one question and chunk
        client = TestClient(create_app(config, NAME), client=(f"10.0.0.{n}", 5000))
        assert vote(client, view["query_id"], chunk).json()["status"] == "pending"
    assert not loop_of(config).confirmations.pairs()

    config, _ = setup(anonymousAgreement=3)
    view = ask(TestClient(create_app(config, NAME)), QUESTION)
    statuses = [vote(TestClient(create_app(config, NAME), client=(address, 5000)), view["query_id"], chunk)
                .json()["status"] for address in ("10.0.0.1", "10.0.0.1", "10.0.0.2", "10.0.0.3")]
    assert statuses == ["pending", "pending", "pending", "applied"]   # a repeated source counts once
    assert len(loop_of(config).confirmations.pairs()) == 1

    config, _ = setup(trustedUsers=["ana", "bo"], trustedAgreement=2)
    views = {u: search(QUESTION, index=NAME, user=User(id=u), config=config) for u in ("ana", "bo", "cy")}
    loop, index = loop_of(config), knowledge.open_knowledge(config, NAME).index
    cast = [loop.votes.cast(loop.log, index, Voter("web:x", User(id=u)), views[u].query_id, chunk, "confirm")
            for u in ("cy", "ana", "ana", "bo")]
    assert [(v["trusted"], v["status"]) for v in cast] == [(False, "pending"), (True, "pending"), (True, "pending"),
                                                           (True, "applied")]
    assert len(loop_of(config).votes.pending()) == 1               # the untrusted vote still waits
    again = [loop.votes.cast(loop.log, index, Voter("web:x", User(id=u)), views[u].query_id, chunk, "confirm")
             for u in ("ana", "bo")]                                # the same two agreeing once more
    assert again[-1]["status"] == "applied" and again[-1]["confirmation"] == cast[-1]["confirmation"]
    assert len(loop_of(config).confirmations.pairs()) == 1          # one pair, not stacked per round

    config, _ = setup(trustedUsers=["anonymous"], trustedAgreement=1)    # the anonymous user is never trusted
    client = TestClient(create_app(config, NAME))
    assert vote(client, ask(client, QUESTION)["query_id"], chunk).json()["status"] == "pending"


def test_a_restricted_chunk_is_confirmed_only_by_a_caller_who_may_read_it(setup):
    config, path = setup()
    privileged = search(SECRET_QUESTION, index=NAME, user=PORT, config=config)
    secret = next(h.chunk_id for h in privileged.hits if h.source == SECRET)
    loop, index = loop_of(config), knowledge.open_knowledge(config, NAME).index
    for voter in (Voter("web:a", PUBLIC), Voter("web:a", User(id="port", departments=("港口处",))),
                  Voter("web:a", User(id="other", departments=("法规处",), security_level=2))):
        with pytest.raises(FeedbackRefused) as e:
            loop.votes.cast(loop.log, index, voter, privileged.query_id, secret, "confirm")
        assert secret not in str(e.value) and privileged.query_id not in str(e.value)
    client = TestClient(create_app(config, NAME))                  # the anonymous page, with the privileged query id
    r = vote(client, privileged.query_id, secret)
    assert r.status_code == 400 and SECRET not in r.text and MARK not in r.text
    assert loop.votes.cast(loop.log, index, Voter("web:p", PORT), privileged.query_id, secret, "confirm")[
        "status"] == "pending"
    assert main(["feedback", "confirm", privileged.query_id, secret, "--index", NAME, "--config", str(path)]) == 0
    assert [p.chunks for p in loop_of(config).confirmations.pairs()] == [(secret,)]   # the operator may


def test_each_source_is_rate_limited_and_refused_votes_count_too(setup):
    config, path = setup(rateLimit=3, rateWindowSeconds=600)
    client = TestClient(create_app(config, NAME))
    view = ask(client, QUESTION)
    chunk = next(c["chunk_id"] for c in view["citations"] if c["chunk_id"])
    codes = [vote(client, "q-guess", chunk).status_code, vote(client, view["query_id"], chunk).status_code,
             vote(client, view["query_id"], chunk).status_code, vote(client, view["query_id"], chunk).status_code]
    assert codes == [400, 200, 200, 429]
    other = TestClient(create_app(config, NAME), client=("10.9.9.9", 1))
    assert vote(other, view["query_id"], chunk).status_code == 200      # another source has its own window
    assert main(["feedback", "confirm", view["query_id"], chunk, "--index", NAME, "--config", str(path)]) == 0


def test_the_anonymous_page_shows_no_restricted_source_or_text_in_the_compare_view(setup):
    config, _ = setup()
    for user, sees in ((PUBLIC, False), (PORT, True)):
        client = TestClient(create_app(config, NAME, user=user))
        view = ask(client, COMPARE)
        assert view["query_type"] == "compare" and view["sides"] == ["安全生产法", "统计法"]
        streamed = client.post("/api/ask", json={"query": COMPARE, "index": NAME}).text
        for text in (json.dumps(view, ensure_ascii=False), streamed):
            assert (SECRET in text) == sees                       # the privileged page shows the probe's source
            assert sees or MARK not in text


def learned_ranking(backend, directory, query: str, user: User = PUBLIC) -> list[str]:
    embedder = default_embedder()
    learned = open_learned(directory, backend, embedder)
    ctx = Context(embedder=embedder, resources={"index": backend, **({"learned": learned} if learned else {})})
    return [h.chunk_id for h in retrieval_term("bm25").run(State.of(query, plan=PLAN, user=user), ctx).hits]


def test_no_confirmation_lifts_a_chunk_plain_retrieval_did_not_return_into_anyones_top_10(setup, tmp_path):
    config, _ = setup()
    backend = knowledge.open_knowledge(config, NAME).index
    plain = learned_ranking(backend, tmp_path, QUESTION)
    poison = next(c.id for c in backend.chunks() if "渔业法(" in c.source and c.id not in plain)
    deep = plain[-1]                                            # returned by plain retrieval, far below the top 10
    learn_pairs(tmp_path, backend, default_embedder(), "confirm", [(QUESTION, [poison]), (QUESTION, [deep])],
                refit=False)
    strong = {name: 8.0 if name == "neighbours" else 0.0 for name in SIGNALS}
    Confirmations(tmp_path).save_params(LearnedParams(weights=strong, gate=-1.0, tail={"neighbours": 8.0}), {})
    for query in (QUESTION, PARAPHRASE):
        for user in (PUBLIC, PORT, ALL_ACCESS):
            ranked = learned_ranking(backend, tmp_path, query, user)
            assert poison not in ranked[:HEAD] and poison in ranked      # the learned tail takes it in, below 10
    assert learned_ranking(backend, tmp_path, QUESTION).index(deep) < HEAD   # what retrieval found may rise


def test_files_holding_answers_or_chunks_are_0600_in_0700_folders(setup, home):
    config, path = setup()
    for user in (PORT, PORT, PUBLIC):
        result = search(SECRET_QUESTION, index=NAME, user=user, config=config)
    chunk = next(c.chunk_id for c in result.citations if c.chunk_id)
    assert main(["feedback", "confirm", result.query_id, chunk, "--index", NAME, "--config", str(path)]) == 0
    root = home / NAME
    held = [p for p in root.rglob("*") if p.is_file() and not p.name.endswith(".lock")]
    names = {p.name for p in held}
    assert {"feedback.sqlite3", "relations.json"} <= names
    assert any(n.startswith("chunks.") for n in names) and any(p.parent.name == "entities" for p in held)
    assert {p.relative_to(root).as_posix(): oct(p.stat().st_mode & 0o777) for p in held
            if p.stat().st_mode & 0o077} == {}
    folders = {p.parent for p in held}
    assert {p.relative_to(home).as_posix(): oct(p.stat().st_mode & 0o777) for p in folders
            if p.stat().st_mode & 0o077} == {}
