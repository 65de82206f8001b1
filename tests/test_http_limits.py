"""HTTP limits of `lambdarag serve` (issue 30), probed over real sockets against the real server process: the body
cap holds for chunked bodies and lying Content-Lengths, and a foreign Host header (DNS rebinding) gets 400."""
from __future__ import annotations

import json
import socket
from typing import Iterator

import httpx
import pytest

from lambdarag.orchestration.config import parse_config
from lambdarag.orchestration.http_limits import trusted_hosts
from lambdarag.qademo.app import MAX_BODY_BYTES
from lambdarag.orchestration.config import DEFAULT_CONFIG
from tests.conftest import serve_process

DEPLOYED = "rag.example.org"
BODY = b'{"query": "' + b"x" * (1024 * 1024) + b'"}'      # 1 MB


@pytest.fixture(scope="module")
def port(tmp_path_factory) -> Iterator[int]:
    """Yields the port of a `lambdarag serve` process bound to 127.0.0.1, trusting one extra host by config."""
    config = tmp_path_factory.mktemp("serve") / "agent-config.yml"
    config.write_text(DEFAULT_CONFIG.read_text(encoding="utf-8")
                      + f"\nserver:\n  trustedHosts: [{DEPLOYED}]\n", encoding="utf-8")
    with serve_process("--config", str(config)) as url:
        yield int(url.rsplit(":", 1)[1])


def chunked(head: bytes, body: bytes, piece: int = 16 * 1024) -> Iterator[bytes]:
    """Yields a request head, then `body` as HTTP/1.1 chunks, then the last chunk."""
    yield head
    for i in range(0, len(body), piece):
        part = body[i:i + piece]
        yield b"%x\r\n%s\r\n" % (len(part), part)
    yield b"0\r\n\r\n"


def exchange(port: int, pieces: Iterator[bytes]) -> tuple[int, bytes, int]:
    """Sends `pieces` until the server answers; returns the status, the response and how many bytes were sent."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        sent = 0
        s.setblocking(False)
        reply = b""
        for piece in pieces:
            try:
                reply += s.recv(65536)
            except BlockingIOError:
                pass
            if reply:
                break
            try:
                s.sendall(piece)
            except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                break
            sent += len(piece)
        s.settimeout(30)
        try:
            while b"\r\n\r\n" not in reply:
                more = s.recv(65536)
                if not more:
                    break
                reply += more
        except ConnectionResetError:
            pass
    return int(reply.split(b" ", 2)[1]), reply, sent


def head(port: int, extra: str = "") -> bytes:
    return (f"POST /api/search HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n{extra}"
            f"Transfer-Encoding: chunked\r\n\r\n").encode()


@pytest.mark.parametrize("lie", ["", "Content-Length: 5\r\n"], ids=["chunked", "chunked-with-lying-length"])
def test_a_1mb_chunked_body_gets_413(port, lie):
    status, reply, _ = exchange(port, chunked(head(port, lie), BODY))
    assert status == 413, reply[:300]


def test_an_endless_chunked_body_is_refused_while_it_arrives_not_read_whole(port):
    endless = b"x" * (256 * 1024 * 1024)         # far beyond what the kernel's socket buffers hold
    status, reply, sent = exchange(port, chunked(head(port, "Content-Length: 5\r\n"), endless, piece=64 * 1024))
    assert status == 413, reply[:300]
    assert sent < len(endless) // 4, f"the server read {sent} bytes before refusing"


def test_a_declared_oversized_body_gets_413_and_a_small_chunked_body_is_answered(port):
    big = httpx.post(f"http://127.0.0.1:{port}/api/search", content=BODY, headers={"content-type": "application/json"})
    assert big.status_code == 413
    small = json.dumps({"query": "船员条例由哪个部门主管？"}, ensure_ascii=False).encode()
    status, reply, _ = exchange(port, chunked(head(port), small))
    assert status == 200, reply[:300]
    assert len(small) < MAX_BODY_BYTES


@pytest.mark.parametrize("host, status", [
    ("localhost:{port}", 200), ("127.0.0.1:{port}", 200), (DEPLOYED, 200),
    ("evil.example", 400), ("attacker.rebind.example:{port}", 400), ("localhost.evil.example", 400),
])
def test_only_trusted_host_headers_are_served(port, host, status):
    r = httpx.get(f"http://127.0.0.1:{port}/api/info", headers={"host": host.format(port=port)}, timeout=10)
    assert r.status_code == status
    if status == 400:
        assert "index" not in r.text


def test_trusted_hosts_default_to_the_bound_host_and_local_names_and_are_configurable():
    config = parse_config("server:\n  trustedHosts: [rag.example.org, '*.corp.example']\n")
    assert trusted_hosts(parse_config(""), "10.0.0.5") == ["10.0.0.5", "localhost", "127.0.0.1"]
    assert trusted_hosts(parse_config(""), "0.0.0.0") == ["localhost", "127.0.0.1"]
    assert trusted_hosts(config, "127.0.0.1") == ["127.0.0.1", "localhost", "rag.example.org", "*.corp.example"]
    with pytest.raises(Exception, match=r"line 2: server.trustedHosts: 'evil/\*' is not a host name"):
        parse_config("server:\n  trustedHosts: ['evil/*']\n")


def test_a_forwarded_for_header_does_not_make_one_client_many_vote_sources(tmp_path):
    """The vote rate limit is per source address: a local client naming a new X-Forwarded-For on every vote is
    still one source, so its 21st vote within the window is refused with 429 (rateLimit 20)."""
    import httpx

    with serve_process(env={"LAMBDARAG_FEEDBACK": "on", "LAMBDARAG_HOME": str(tmp_path)}) as url:
        statuses = [httpx.post(f"{url}/api/feedback", headers={"X-Forwarded-For": f"10.0.0.{i}"}, timeout=30,
                               json={"query_id": f"q{i}", "chunk_id": "x.md#1", "verdict": "up"}).status_code
                    for i in range(21)]
    assert statuses == [400] * 20 + [429]
