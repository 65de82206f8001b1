"""A real OpenAI-compatible HTTP server on 127.0.0.1 whose replies a test scripts in advance.

Each scripted reply is consumed by one request: a chat text, an HTTP status,
a delay longer than the client's timeout, a hang until the server stops, or a
200 response whose body is not JSON. Requests are kept so tests can
assert what the client sent (e.g. that the prompt carries the context).
A request with ``stream: true`` gets its text as Server-Sent Events, `piece`
characters per chunk at `rate` chunks per second (0: all at once); a client
that hangs up mid-stream is counted in `disconnects`. `route`, when set,
picks the reply for a request body before the queue is consulted.
"""
from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional


@dataclass
class Reply:
    """One scripted answer: `text` as the chat content, or an HTTP `status`, after `delay` seconds.

    `hang` never answers (until the server stops); `raw` is sent as a 200 body that is not JSON.
    """

    text: str = ""
    status: int = 200
    delay: float = 0.0
    body: Optional[dict[str, Any]] = None
    hang: bool = False
    raw: Optional[str] = None
    rate: float = 0.0
    piece: int = 2


@dataclass
class ScriptedServer:
    replies: deque = field(default_factory=deque)
    requests: list = field(default_factory=list)
    default: Optional[Reply] = None
    stopped: threading.Event = field(default_factory=threading.Event)
    route: Optional[Callable[[dict], Optional[Reply]]] = None
    disconnects: int = 0
    chunks_sent: int = 0
    hung_up: threading.Event = field(default_factory=threading.Event)

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def next_reply(self, body: Optional[dict] = None) -> Reply:
        routed = self.route(body or {}) if self.route is not None else None
        if routed is not None:
            return routed
        if self.replies:
            return self.replies.popleft()
        if self.default is not None:
            return self.default
        return Reply(status=500, text="script exhausted")


def _handler(server: ScriptedServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # keep test output quiet
            pass

        def _send(self, status: int, obj: Any, raw: Optional[str] = None) -> None:
            data = (raw if raw is not None else json.dumps(obj, ensure_ascii=False)).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _stream(self, reply: Reply, model: str) -> None:
            """Sends the reply's text as chat-completion chunks, `piece` characters each, at `reply.rate` per second."""
            self.close_connection = True
            base = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
            pieces = [reply.text[i:i + reply.piece] for i in range(0, len(reply.text), reply.piece)]
            chunks = [{**base, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]}
                      for p in pieces]
            chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            chunks.append({**base, "choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": len(pieces),
                                                           "total_tokens": 11 + len(pieces)}})
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in chunks:
                    self.wfile.write(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode())
                    self.wfile.flush()
                    server.chunks_sent += 1
                    if reply.rate:
                        time.sleep(1 / reply.rate)
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                server.disconnects += 1
                server.hung_up.set()

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            server.requests.append({"path": self.path, "body": body})
            reply = server.next_reply(body)
            if reply.delay:
                time.sleep(reply.delay)
            if reply.hang:
                server.stopped.wait()
                return
            if reply.raw is not None:
                self._send(200, None, reply.raw)
                return
            if reply.status != 200:
                self._send(reply.status, {"error": {"message": reply.text or "scripted error", "type": "server_error"}})
                return
            if reply.body is not None:
                self._send(200, reply.body)
                return
            if body.get("stream"):
                self._stream(reply, body.get("model", "scripted"))
                return
            self._send(200, {
                "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model", "scripted"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply.text}}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
            })

    return Handler


class Running:
    """A started server: `url` is its ``/v1`` base; `stop()` shuts it down."""

    def __init__(self) -> None:
        self.script = ScriptedServer()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.script))
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.script.stopped.set()
        self._httpd.shutdown()
        self._httpd.server_close()
