"""A real OpenAI-compatible HTTP server on 127.0.0.1 whose replies a test scripts in advance.

Each scripted reply is consumed by one request: a chat text, an HTTP status,
a delay longer than the client's timeout, a hang until the server stops, a
200 response whose body is not JSON, or a slow model. Requests are kept so tests can
assert what the client sent (e.g. that the prompt carries the context).

Failure modes of real small models (`echo_schema`, `cut_json`, `overflow`,
`slow`) build the replies a llama.cpp server sends in those cases.

A request with ``stream: true`` gets its text as Server-Sent Events, `piece`
characters per chunk at `rate` chunks per second (0: all at once); a client
that hangs up mid-stream is counted in `disconnects`. `route`, when set,
picks the reply for a request body before the queue is consulted.
"""
from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional


@dataclass
class Reply:
    """One scripted answer: `text` as the chat content, or an HTTP `status`, after `delay` seconds.

    `hang` never answers (until the server stops); `raw` is sent as a 200 body that is not JSON;
    `echo` answers with the request's whole prompt (`echo_text`).
    """

    text: str = ""
    status: int = 200
    delay: float = 0.0
    body: Optional[dict[str, Any]] = None
    hang: bool = False
    raw: Optional[str] = None
    echo: bool = False
    tokens_per_second: Optional[float] = None
    """Generate like a slow model: one token per character of `text`, at this rate (streamed when asked)."""
    rate: float = 0.0
    """Chunks per second of a streamed reply (0: all at once)."""
    piece: int = 2
    """Characters per streamed chunk."""


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

    def chat_requests(self) -> list[dict[str, Any]]:
        """Returns the bodies of the chat requests received so far."""
        return [r["body"] for r in self.requests if r["path"].endswith("/chat/completions")]

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


def echo_text(messages: list[dict[str, str]]) -> str:
    """Returns the whole prompt back: as is for a text output, else as a JSON object of the prompt's schema (the
    JSON object on the user message's last line, after the schema note) whose every string is the prompt (so the
    echoed text reaches whatever field the caller keeps)."""
    prompt = "\n".join(m.get("content", "") for m in messages)
    head, _, last = prompt.rpartition("\n")
    try:
        spec = json.loads(last)
    except ValueError:
        return prompt
    if not isinstance(spec, dict) or "properties" not in spec:
        return prompt
    return json.dumps(fill(spec, spec.get("$defs", {}), head), ensure_ascii=False)


def fill(schema: dict, defs: dict, text: str) -> Any:
    """Returns a value valid for `schema` with every string set to `text` (cut to maxLength)."""
    if "$ref" in schema:
        return fill(defs[schema["$ref"].rsplit("/", 1)[-1]], defs, text)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return fill(next((s for s in schema[key] if s.get("type") != "null"), schema[key][0]), defs, text)
    kind = schema.get("type", "string")
    if kind == "object":
        return {k: fill(v, defs, text) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [fill(schema.get("items", {}), defs, text)] if schema.get("maxItems", 1) else []
    if kind == "integer":
        return max(1, schema.get("minimum", 1))
    if kind == "number":
        return schema.get("minimum", 0.5)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return text[:schema.get("maxLength", len(text))]


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

        def _stream(self, text: str, finish: str, piece: int, rate: float, model: str) -> None:
            """Sends `text` as chat-completion chunks, `piece` characters each, `rate` per second (0: at once)."""
            self.close_connection = True
            base = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
            pieces = [text[i:i + piece] for i in range(0, len(text), piece)]
            chunks = [{**base, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]}
                      for p in pieces]
            chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
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
                    if rate and server.stopped.wait(1 / rate):
                        return
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                server.disconnects += 1
                server.hung_up.set()

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            server.requests.append({"path": self.path, "body": body, "headers": {k.lower(): v for k, v in self.headers.items()}})
            reply = server.next_reply(body)
            if reply.delay:
                server.stopped.wait(reply.delay)
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
            text, finish = echo_text(body.get("messages", [])) if reply.echo else reply.text, "stop"
            piece, rate = reply.piece, reply.rate
            if reply.tokens_per_second:
                limit = int(body.get("max_tokens") or len(text))
                text, finish = (text[:limit], "length") if len(text) > limit else (text, "stop")
                piece, rate = 1, reply.tokens_per_second
                if not body.get("stream") and server.stopped.wait(len(text) / rate):
                    return
            if body.get("stream"):
                self._stream(text, finish, piece, rate, body.get("model", "scripted"))
                return
            self._send(200, {
                "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model", "scripted"),
                "choices": [{"index": 0, "finish_reason": finish,
                             "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
            })

    return Handler


def echo_schema(schema: dict[str, Any]) -> Reply:
    """Returns the reply of a model that answers with the JSON schema it was asked to fill."""
    return Reply(text=json.dumps(schema, ensure_ascii=False))


def cut_json(obj: dict[str, Any], keep: float = 0.5) -> Reply:
    """Returns a reply cut at max_tokens: the first `keep` of `obj`'s JSON, with finish_reason "length"."""
    text = json.dumps(obj, ensure_ascii=False)
    return Reply(body={"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "scripted",
                       "choices": [{"index": 0, "finish_reason": "length",
                                    "message": {"role": "assistant", "content": text[:int(len(text) * keep)]}}],
                       "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}})


def overflow(n_ctx: int = 8192) -> Reply:
    """Returns llama.cpp's HTTP 400 for a prompt longer than the model's context."""
    return Reply(status=400, text=f"the request exceeds the available context size ({n_ctx} tokens), "
                                  f"try increasing it")


def slow(text: str, tokens_per_second: float = 2.0) -> Reply:
    """Returns the reply of a slow model generating `text` (one token per character) at `tokens_per_second`."""
    return Reply(text=text, tokens_per_second=tokens_per_second)


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


# -- models that answer like real ones, in an endpoint's dialect ----------------------------------------------------
DIALECTS = ("structured", "plain", "fenced")
"""How an endpoint treats structured output: `structured` honours a JSON-schema response format (OpenAI, vLLM,
llama.cpp with a grammar); `plain` refuses any ``response_format`` with HTTP 400, as a server without guided decoding
does, and answers in text; `fenced` ignores it and wraps its JSON in a code fence after a line of prose."""
REFUSES_FORMAT = "response_format is not supported by this server ('json_schema' and 'json_object' are unavailable)"
_PASSAGE = re.compile(r"^\[\d+\] (\[(?:来源|source): [^\]]+\]).*\n(?:〔资料 \w+ 开始〕|\[document \w+ begins\])\n(.+)", re.M)
_FIRST_SENTENCE = re.compile(r"^.+?(?:[。！？!?]|\.(?=\s|$))")


def schema_of(body: dict[str, Any]) -> Optional[dict[str, Any]]:
    """Returns the JSON schema a request asks its reply to fill (the user message's last line), or None for text."""
    last = body.get("messages", [{}])[-1].get("content", "").rpartition("\n")[2]
    try:
        spec = json.loads(last)
    except ValueError:
        return None
    return spec if isinstance(spec, dict) and "properties" in spec else None


def cited_answer(prompt: str) -> str:
    """Returns what an obedient model answers: the first sentence of the first passage, with that passage's marker
    copied from its heading line (the prompt's instruction)."""
    m = _PASSAGE.search(prompt)
    if m is None:
        return "The documents do not answer this question." if "[Question]" in prompt else "根据现有资料无法回答该问题。"
    body = re.sub(r"^第\S+条\s*", "", m.group(2).strip())   # an article's label is not part of the quote
    sentence = _FIRST_SENTENCE.match(body)
    stop = "." if m.group(1).startswith("[source") else "。"
    return f"{(sentence.group(0) if sentence else body).rstrip('。.')}{m.group(1)}{stop}"


def structured_reply(schema: dict[str, Any], prompt: str) -> dict[str, Any]:
    """Returns a plausible, valid object for one of the skills' output schemas (an unknown one is filled)."""
    asked = re.search(r"^(?:Question|Current question|问题|用户问题|当前问题)[:：]\s*(.+)$", prompt, re.M)
    question = asked.group(1).strip() if asked else "question"
    words = [w for w in re.split(r"[\s，。？?、,.]+", question) if len(w) >= 2] or [question[:4] or "entity"]
    by_title = {
        "LLMClassification": {"type": "fact", "entities": words[:1], "confidence": 0.9},
        "EntityList": {"entities": words[:2]},
        "PlanOutput": {"variants": [{"text": f"{question} {words[0]}", "kind": "rewrite"}]},
        "CheckOutput": {"items": []},
        "SufficiencyOutput": {"sufficient": False},
        "MissingOutput": {"missing": []},
        "FactOutput": {"entities": [], "relations": []},
        "Entailed": {"supported": []},
    }
    return by_title.get(schema.get("title", ""), None) or fill(schema, schema.get("$defs", {}), question)


def dialect_route(dialect: str) -> Callable[[dict], Reply]:
    """Returns a `ScriptedServer.route` answering every request as a model behind an endpoint of `dialect`."""
    if dialect not in DIALECTS:
        raise ValueError(f"dialect must be one of {DIALECTS}, got {dialect!r}")

    def route(body: dict) -> Reply:
        if dialect == "plain" and "response_format" in body:
            return Reply(status=400, text=REFUSES_FORMAT)
        prompt = "\n".join(m.get("content", "") for m in body.get("messages", []))
        schema = schema_of(body)
        if schema is None:
            return Reply(text=cited_answer(prompt))
        obj = json.dumps(structured_reply(schema, prompt), ensure_ascii=False)
        return Reply(text=f"Here is the JSON you asked for:\n```json\n{obj}\n```" if dialect == "fenced" else obj)

    return route
