"""rerank scores against the original question, through a real local /v1/rerank HTTP server."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from lambdarag import Context, State
from lambdarag.skills.store.records import Hit, RetrievalPlan
from lambdarag.providers.reranker import HTTPReranker
from lambdarag.skills import build


@pytest.fixture
def rerank_server():
    received = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            received.append(body)
            results = [{"index": i, "relevance_score": float(len(d))} for i, d in enumerate(body["documents"])]
            data = json.dumps({"results": results}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", received
    server.shutdown()


HITS = tuple(Hit(chunk_id=c, text=t, score=1.0, ranks={"rrf": i + 1})
             for i, (c, t) in enumerate([("a", "短"), ("b", "很长很长的文本"), ("c", "中等长度")]))


def test_http_reranker_orders_by_score_and_sees_the_original_query(rerank_server):
    url, received = rerank_server
    state = State.of("rewritten variant", original_query="原始问题", hits=HITS, plan=RetrievalPlan(final_top_k=2))
    out = build("rerank").run(state, Context(reranker=HTTPReranker(url, "m")))
    assert [h.chunk_id for h in out.hits] == ["b", "c"]
    assert out.hits[0].ranks == {"rrf": 2, "rerank": 1} and out.hits[0].scores["rerank"] == 7.0
    assert received[0]["query"] == "原始问题"


def test_local_default_needs_no_network_and_plan_can_turn_it_off():
    hits = HITS + (Hit(chunk_id="d", text="船舶污染事故调查"),)
    out = build("rerank").run(State.of("船舶污染", hits=hits), Context())
    assert out.hits[0].chunk_id == "d"
    off = build("rerank").run(State.of("船舶污染", hits=hits, plan=RetrievalPlan(rerank=False, final_top_k=2)), Context())
    assert [h.chunk_id for h in off.hits] == ["a", "b"]
