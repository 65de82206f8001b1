"""The demo app's API (FastAPI TestClient): input limits and errors, the JSON view, the answer stream, headers."""
from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from lambdarag.orchestration.result import Citation, Hit, Span
from lambdarag.qademo.app import MAX_BODY_BYTES, MAX_TURNS, cited_chunks, create_app, waterfall

RELATION_QUESTION = "船员条例由哪个部门主管？"


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app())


@pytest.fixture(scope="module")
def relation_view(client):
    r = client.post("/api/search", json={"query": RELATION_QUESTION})
    assert r.status_code == 200
    return r.json()


def events(body: str) -> list[tuple[str, dict]]:
    """Returns the (event, data) pairs of a Server-Sent Events body."""
    out = []
    for block in body.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.split("\n"))
        out.append((lines["event"], json.loads(lines["data"])))
    return out


@pytest.mark.parametrize("body, status, message", [
    ({"query": ""}, 400, "query is empty"),
    ({"query": "   "}, 400, "query is empty"),
    ({"query": "船" * 2001}, 400, "the limit is 2000"),
    ({}, 400, "query: Field required"),
    ({"query": 3}, 400, "query: Input should be a valid string"),
    ({"query": "船员", "index": "../etc"}, 400, "index: String should match pattern"),
    ({"query": "船员", "index": "no_such_index"}, 404, "index 'no_such_index' is not served here; served: demo"),
    ({"query": "船员", "user": {"security_level": 9}}, 400, "user: Extra inputs are not permitted"),
    ({"query": "船员", "history": [{"role": "system", "content": "x"}]}, 400, "history.0.role"),
    ({"query": "船员", "history": [{"role": "user", "content": "x"}] * (MAX_TURNS + 1)}, 400, "history: List should"),
])
@pytest.mark.parametrize("endpoint", ["/api/search", "/api/ask"])
def test_unusable_requests_get_a_one_line_error(client, endpoint, body, status, message):
    r = client.post(endpoint, json=body)
    assert r.status_code == status
    error = r.json()["error"]
    assert message in error and "\n" not in error


def test_oversized_body_is_refused_before_parsing(client):
    body = b'{"query": "' + b"x" * MAX_BODY_BYTES + b'"}'
    r = client.post("/api/search", content=body, headers={"content-type": "application/json"})
    assert (r.status_code, r.text) == (413, "Content Too Large")
    streamed = client.post("/api/search", content=iter([body[:1000], body[1000:]]),   # chunked: no Content-Length
                           headers={"content-type": "application/json"})
    assert streamed.status_code == 413
    assert streamed.json()["error"] == f"Content Too Large: request body over {MAX_BODY_BYTES} bytes"


def test_search_view_has_everything_the_page_draws(relation_view):
    v = relation_view
    assert (v["query"], v["query_type"], v["strategy"]) == (RELATION_QUESTION, "relation", "relation_search")
    assert v["expression"] and v["effect_signature"] and v["answer"]
    assert v["entities"] == ["船员条例"]
    assert v["citations"] and all(c["text"] for c in v["citations"] if c["origin"] == "chunk")
    assert any(c["origin"] == "chunk" and "船员" in c["text"] for c in v["citations"])
    assert v["relations"] and set(v["relations"][0]) == {"head", "relation", "tail", "source"}
    assert v["relations_total"] >= len(v["relations"])
    names = [row["name"] for row in v["waterfall"]]
    assert names[:7] == ["has_history", "query_cache", "detect_intent", "classify_rules", "adopt_rules",
                         "learned_route", "retrieval_plan"]      # a first question is not rewritten
    assert "relation_search" in names and "edge_search" in names and "compose" not in names and "par" not in names
    for row in v["waterfall"]:
        assert row["start_ms"] >= 0 and row["duration_ms"] >= 0 and row["depth"] >= 0
    assert v["fallbacks"] == [] and v["mode"] == "offline answer (no LLM configured)"   # a mode, not a failure
    assert v["latency_ms"]["total"] > 0 and v["index"] == "demo"
    assert "hits" not in v and "trace" not in v


def test_stream_sends_evidence_then_the_answer_as_written_then_the_result(client, relation_view):
    r = client.post("/api/ask", json={"query": RELATION_QUESTION})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    stream = events(r.text)
    names = [name for name, _ in stream]
    assert names[0] == "evidence" and names[-2:] == ["result", "done"] and set(names[1:-2]) == {"answer"}
    assert stream[0][1]["hits"] and all("source" in h for h in stream[0][1]["hits"])
    result = stream[-2][1]
    assert result["strategy"] == relation_view["strategy"]
    answer = "".join(data["text"] for name, data in stream if name == "answer")
    assert answer == relation_view["answer"] == result["answer"] and len(names) > 3
    assert stream[-1][1] == {"chars": len(answer)}


def test_history_makes_a_follow_up_standalone(client):
    history = [{"role": "user", "content": RELATION_QUESTION},
               {"role": "assistant", "content": "国务院交通运输主管部门主管全国船员管理工作。"}]
    r = client.post("/api/search", json={"query": "那它最新版本是哪一年修订的？", "history": history})
    assert r.status_code == 200
    assert "船员条例" in r.json()["rewritten_query"]


def test_page_and_info_carry_a_strict_content_security_policy(client):
    page = client.get("/")
    assert page.status_code == 200 and '<script src="/static/app.js"' in page.text
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    info = client.get("/api/info").json()
    assert info == {"index": "demo", "indexes": ["demo"], "max_query_chars": 2000,
                    "max_turns": MAX_TURNS}
    assert client.get("/static/app.js").status_code == 200


def test_info_lists_the_served_index_and_the_configured_ones_and_nothing_else_is_answered(tmp_path, monkeypatch):
    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path))
    for name in ("maritime", "stard", "secret"):
        (tmp_path / name / "index").mkdir(parents=True)
        (tmp_path / name / "index" / "manifest.json").write_text("{}", encoding="utf-8")
    config = tmp_path / "served.yml"
    config.write_text("server:\n  indexes: [maritime, stard]\n", encoding="utf-8")
    app = TestClient(create_app(config))
    assert app.get("/api/info").json()["indexes"] == ["demo", "maritime", "stard"]
    for endpoint in ("/api/search", "/api/ask"):
        r = app.post(endpoint, json={"query": "船员", "index": "secret"})
        assert r.status_code == 404 and r.json()["error"] == "index 'secret' is not served here; served: demo, " \
                                                             "maritime, stard"
    r = app.post("/api/feedback", json={"query_id": "q1", "chunk_id": "c", "verdict": "up", "index": "secret"})
    assert r.status_code == 404


def test_an_error_shown_to_a_caller_names_no_server_path(tmp_path, monkeypatch):
    monkeypatch.setenv("LAMBDARAG_HOME", str(tmp_path / "home"))
    r = TestClient(create_app(index="gone")).post("/api/search", json={"query": "船员"})
    error = r.json()["error"]
    assert r.status_code == 400 and "no index named 'gone'" in error
    assert str(tmp_path) not in error and "<server path>" in error


def test_a_compare_view_carries_both_sides_and_only_relations_touching_them(client):
    view = client.post("/api/search", json={"query": "海商法和海上交通安全法有什么区别？"}).json()
    assert view["query_type"] == "compare" and len(view["sides"]) == 2
    assert view["relations"] and all({r["head"], r["tail"]} & set(view["sides"]) for r in view["relations"])
    for side in view["sides"]:
        assert any(side in (r["head"], r["tail"]) for r in view["relations"]), side


def test_a_relation_view_without_relations_names_the_entities_the_graph_lacks(client):
    view = client.post("/api/search", json={"query": "上海海事局的上级机关是谁？"}).json()
    assert view["query_type"] == "relation" and view["relations"] == []
    assert "上海海事局" in view["not_in_graph"]


def test_favicon_is_served_not_404(client):
    r = client.get("/favicon.ico")
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")


def test_page_script_never_writes_markup():
    from lambdarag.qademo.app import STATIC

    script = (STATIC / "app.js").read_text(encoding="utf-8")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert sink not in script


def test_citations_resolve_by_chunk_id_then_place_then_quote():
    place = {"kind": "text", "score": 1.0, "ranks": {}}
    hits = [Hit(chunk_id="a.md#第一条", source="a.md", section="第一条", title="A", date="2020-01-01",
                text="第一条 正文", **place),
            Hit(chunk_id="b.md#3", source="b.md", section="第二章", title="B", date="", text="第二章 正文", **place)]
    cites = [Citation(source="a.md", section="第一条", chunk_id="a.md#第一条"),
             Citation(source="b.md", section="第二章"),
             Citation(source="entities/x.md", chunk_id="entities/x.md", quote="引用的话"),
             Citation(source="c.md")]
    out = cited_chunks(cites, hits)
    assert [(c["text"], c["origin"]) for c in out] == [("第一条 正文", "chunk"), ("第二章 正文", "chunk"),
                                                       ("引用的话", "quote"), ("", "none")]
    assert out[0]["date"] == "2020-01-01" and out[2]["title"] == ""


def span(name, kind, path, start, duration, effect="pure", fallback=None):
    return Span(id=0, parent=None, name=name, kind=kind, effect=effect, path=path, start_ms=start, duration_ms=duration,
                cost=0.0, tokens=0, fallback=fallback, error=None, notes={})


def test_waterfall_nests_steps_under_strategies_and_drops_bookkeeping_spans():
    spans = [span("compose", "compose", "compose", 10, 100),
             span("plan", "tool", "compose › Compose[0] › plan", 10, 1),
             span("s", "named", "compose › Compose[1] › s", 11, 99),
             span("s", "named", "compose › Compose[1] › s › s", 11, 99),
             span("par", "par", "compose › Compose[1] › s › s › par", 11, 90),
             span("late", "tool", "compose › Compose[1] › s › s › par › Par[1] › late", 50, 40, "io"),
             span("early", "lam", "compose › Compose[1] › s › s › par › Par[0] › early", 11, 30, "llm", "no LLM"),
             span("early_rules", "tool", "compose › Compose[1] › s › s › par › Par[0] › early › early_rules", 11, 29)]
    rows = waterfall(spans)
    assert [(r["name"], r["depth"]) for r in rows] == [("plan", 0), ("s", 0), ("early", 1), ("early_rules", 2),
                                                        ("late", 1)]
    assert rows[0]["start_ms"] == 0 and rows[-1]["start_ms"] == 40
    assert rows[2]["fallback"] == "no LLM" and rows[2]["effect"] == "llm"
