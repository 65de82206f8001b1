"""A warm question repeats no route check that passed on the same config and code, compiles no cue table of a pack
its index does not use, and does not have the cyclic collector scan what it imported again and again."""
from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import types

import pytest

from lambdarag.errors import ConfigError
from tests.conftest import ROOT


@pytest.fixture
def counted(monkeypatch, tmp_path):
    """Returns the sources `route_reports` was asked to check, in a cache folder of this test's own."""
    from lambdarag.orchestration import route_check

    monkeypatch.setenv("LAMBDARAG_CACHE", str(tmp_path / "cache"))
    calls: list[str] = []
    real = route_check.route_reports
    monkeypatch.setattr(route_check, "route_reports", lambda config, source: calls.append(source) or
                        real(config, source))
    return calls


def test_routes_that_passed_are_not_checked_again_until_a_loaded_module_changes(counted, tmp_path, monkeypatch):
    from lambdarag.orchestration.config import load_config
    from lambdarag.orchestration.route_check import checked_routes

    plugin = tmp_path / "warm_plugin.py"
    plugin.write_text("WORDS = 1\n")
    module = types.ModuleType("warm_plugin")
    module.__file__ = str(plugin)
    monkeypatch.setitem(sys.modules, "warm_plugin", module)      # a module loaded when the routes pass
    config = load_config(None)
    assert checked_routes(config, "a.yml") == [] and checked_routes(config, "a.yml") == []
    assert counted == ["a.yml"]
    plugin.write_text("WORDS = 22\n")
    assert checked_routes(config, "a.yml") == []
    assert counted == ["a.yml", "a.yml"]
    other = config.model_copy(update={"cost": config.cost.model_copy(update={"budget_per_query": 0.5})})
    checked_routes(other, "b.yml")
    assert counted == ["a.yml", "a.yml", "b.yml"]


def test_a_remembered_pass_still_reports_the_routes_over_budget(counted, tmp_path, monkeypatch, caplog):
    from lambdarag.orchestration import setup

    (tmp_path / "cheap.yml").write_text("cost:\n  budgetPerQuery: 0.001\n")
    for _ in range(2):
        monkeypatch.setattr(setup, "_CONFIGS", {})       # a fresh process: nothing resolved yet
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            setup.resolve_config(tmp_path / "cheap.yml")
        assert "cheap.yml: route default: budget: hybrid_search costs up to 0.0162 > budgetPerQuery 0.0010; ran " \
               "keyword_search instead" in caplog.text
    assert len(counted) == 1


def test_a_route_that_fails_its_check_is_never_remembered(counted, tmp_path):
    from lambdarag.orchestration.config import load_config
    from lambdarag.orchestration.route_check import checked_routes

    path = tmp_path / "c.yml"
    path.write_text("patterns:\n  dates:\n    expr: extract_time_range\norchestration:\n  routing:\n    fact: dates\n")
    config = load_config(path)
    for _ in range(2):
        with pytest.raises(ConfigError, match=r"c.yml: orchestration.routing.fact \(dates\): term "):
            checked_routes(config, str(path))
    assert len(counted) == 2
    assert list((tmp_path / "cache" / "checked-routes").glob("*.json")) == []


QUESTIONS = ("How do the different ways to install packages compare?", "What is the relation between apt and dpkg?",
             "Give an overview of the main components.", "海上交通安全法与水污染防治法有何异同？", "船员条例共有多少条？",
             "What is the latest version of the handbook?", "哪个部门主管全国船员管理工作？")


@pytest.mark.parametrize("pack", ["generic", "prc_statutes"])
def test_a_pack_s_lazy_cues_match_as_the_compiled_ones_would(pack):
    import importlib

    cues = importlib.import_module(f"lambdarag.domains.{pack}.cues")
    for kind, _, lazy in cues.RULES:
        compiled = re.compile(lazy.pattern, lazy.flags)
        for question in QUESTIONS:
            found, expected = lazy.search(question), compiled.search(question)
            assert (found and found.group(0)) == (expected and expected.group(0)), (kind, question)


ASKED = """
import contextlib, gc, io, json
from lambdarag.orchestration.cli import main
collections = []
gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info["generation"]))
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["ask", "国际海运条例的最新版本是哪一年的？"])
asked = len(collections)
from lambdarag.domains.generic import cues as generic
from lambdarag.domains.prc_statutes import cues as statutes
print(json.dumps([code, asked, gc.get_threshold(), [p._compiled is not None for *_, p in generic.RULES],
                  [p._compiled is not None for *_, p in statutes.RULES]]))
"""
THREADS = """
import contextlib, io, os, sys
from lambdarag.orchestration.cli import main
before = "numpy" in sys.modules
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["ask", "国际海运条例的最新版本是哪一年的？"])
print(code, before, os.environ.get("OPENBLAS_NUM_THREADS"))
"""


@pytest.fixture(scope="module")
def asked() -> list:
    """Returns what a fresh process's `ask` on the statute demo did: exit code, cyclic collections while it ran,
    the collector's thresholds after it, and which cue rules of each pack it compiled."""
    done = subprocess.run([sys.executable, "-c", ASKED], cwd=ROOT, capture_output=True, text=True, check=True,
                          env={**os.environ, "LAMBDARAG_FEEDBACK": "off"})
    return json.loads(done.stdout.splitlines()[-1])


def test_a_question_on_the_statute_demo_compiles_no_cue_of_the_generic_pack(asked):
    code, _, _, generic, statutes = asked
    assert code == 0
    assert not any(generic)
    assert statutes[0]          # the first rule (the one a statute question tries first) was compiled to be tried


def test_an_ask_does_not_scan_what_it_imported_again_and_again(asked):
    code, collections, thresholds, _, _ = asked
    assert code == 0
    assert collections <= 2     # Python's own thresholds collect about 130 times while a warm ask imports
    assert thresholds == list(__import__("gc").get_threshold())   # the caller's thresholds are back


def test_an_ask_loads_numpy_with_one_blas_thread_unless_the_caller_asks_for_more():
    def blas_threads(**env: str) -> str:
        environ = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
        done = subprocess.run([sys.executable, "-c", THREADS], cwd=ROOT, capture_output=True, text=True, check=True,
                              env={**environ, "LAMBDARAG_FEEDBACK": "off", **env})
        code, numpy_before, threads = done.stdout.split()[-3:]
        assert (code, numpy_before) == ("0", "False")       # set before numpy (and its BLAS) loads
        return threads
    assert blas_threads() == "1"
    assert blas_threads(OPENBLAS_NUM_THREADS="2") == "2"     # a caller's own setting is kept


ASK_AS_CLI = """
import sys
from lambdarag.orchestration.cli import main
code = main(sys.argv[1:])
print(f"\\nexit {code} numpy {'numpy' in sys.modules}", file=sys.stderr)
"""


def ask_as_cli(home: str, *argv: str, **env: str) -> tuple[int, str, str, bool]:
    """Returns the exit status, stdout, stderr of `lambdarag *argv` in a fresh process on data home `home`, and
    whether that process loaded numpy (an answer computed in it)."""
    done = subprocess.run([sys.executable, "-c", ASK_AS_CLI, *argv], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "LAMBDARAG_HOME": home, "LAMBDARAG_FEEDBACK": "off", **env})
    err, _, last = done.stderr.rstrip("\n").rpartition("\n")
    _, code, _, numpy = last.split()
    assert done.returncode == 0, done.stderr          # main returned (no traceback) and printed its exit status
    return int(code), done.stdout, err.strip("\n"), numpy == "True"


@pytest.fixture(scope="module")
def resident():
    """Yields the data home of a running `serve --socket` (a short path: a socket's is limited) and its process."""
    import shutil
    import tempfile
    import time

    home = tempfile.mkdtemp(prefix="lr-")
    proc = subprocess.Popen([sys.executable, "-m", "lambdarag.orchestration.cli", "serve", "--socket"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "LAMBDARAG_HOME": home, "LAMBDARAG_FEEDBACK": "off"})
    sock = os.path.join(home, "ask.sock")
    deadline = time.monotonic() + 300
    while not os.path.exists(sock):
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "serve --socket was not ready in 300 s"
        time.sleep(0.2)
    yield home, proc
    proc.terminate()
    assert proc.wait(timeout=30) == 0
    assert not os.path.exists(sock)                  # a resident that stops takes its socket with it
    shutil.rmtree(home)


def normalised(text: str) -> str:
    """Returns `text` with its timings blanked and the steps of its latency line sorted (parallel branches finish
    in either order, in-process too)."""
    def steps(line: re.Match) -> str:
        return "latency: " + ", ".join(sorted(line.group(1).split(", ")))
    return re.sub(r"^latency _ms: (.*)$", steps, re.sub(r" *\d+(\.\d+)?ms", " _ms", text), flags=re.M)


@pytest.mark.parametrize("argv", [["ask", "国际海运条例的最新版本是哪一年的？"], ["ask", "--explain", "船员条例共有多少条？"],
                                  ["ask", "--index", "no-such-index", "船员条例共有多少条？"], ["ask", " "]])
def test_the_resident_answers_as_the_in_process_ask_does(resident, argv):
    home, _ = resident
    # another environment: the resident refuses, the client says so and answers in-process
    code, out, err, computed = ask_as_cli(home, *argv, LAMBDARAG_OTHER_SETTING="1")
    assert computed and err.startswith("lambdarag ask: not using the resident answerer: the resident refused: it "
                                       "was started with other LAMBDARAG_*")
    err = err.partition("\n")[2]
    resident_code, resident_out, resident_err, resident_computed = ask_as_cli(home, *argv)
    assert not resident_computed                      # the client only relayed the resident's answer
    assert (resident_code, normalised(resident_out), resident_err) == (code, normalised(out), err)
    assert code == (0 if "--index" not in argv and argv[1].strip() else 2)


def test_the_resident_gives_the_json_an_in_process_ask_gives(resident):
    home, _ = resident
    argv = ("ask", "--json", "海上交通安全法与水污染防治法有何异同？")
    answers = [json.loads(ask_as_cli(home, *argv, **env)[1]) for env in ({"LAMBDARAG_OTHER_SETTING": "1"}, {})]
    keep = ("answer", "expression", "query_type", "strategy", "citations", "effect_signature", "degraded")
    assert [{k: a[k] for k in keep} for a in answers][0] == [{k: a[k] for k in keep} for a in answers][1]
    assert [h["chunk_id"] for h in answers[0]["hits"]] == [h["chunk_id"] for h in answers[1]["hits"]]


def test_the_resident_answers_ask_only(resident, monkeypatch):
    from lambdarag.orchestration.cli import ask_argv
    from lambdarag.errors import ResidentRefused
    from lambdarag.orchestration.resident import PROTOCOL, answered, environment_digest

    home, _ = resident
    monkeypatch.setenv("LAMBDARAG_HOME", home)
    request = {"protocol": PROTOCOL, "cwd": str(ROOT), "env": environment_digest()}
    for argv, why in ((["feedback", "revert", "x"], "ask` without --stream only"),
                      (["ask", "--stream", "q"], "ask` without --stream only"), (["ask"], "bad arguments"),
                      (["ask", 3], "list of strings")):
        with pytest.raises(ResidentRefused, match=why):
            answered({**request, "argv": argv}, ask_argv)
    with pytest.raises(ResidentRefused, match="other LAMBDARAG_"):
        answered({**request, "argv": ["ask", "q"], "env": "0" * 64}, ask_argv)
    with pytest.raises(ResidentRefused, match="not a lambdarag-ask/1 request"):
        answered({**request, "argv": ["ask", "q"], "protocol": "lambdarag-ask/0"}, ask_argv)


@pytest.fixture
def fake_home(monkeypatch):
    """Yields a data home (the process's, for `ask_resident`; a short path: a socket's is limited) and the path its
    resident socket would have."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="lr-") as home:
        monkeypatch.setenv("LAMBDARAG_HOME", home)
        yield home, os.path.join(home, "ask.sock")


def replying(sock_path: str, reply: bytes, after: float = 0.0):
    """Returns a started thread answering one connection at `sock_path` (mode 600) with `reply`, `after` seconds
    after reading its request."""
    import time

    import socket
    import threading

    listener = socket.socket(socket.AF_UNIX)
    listener.bind(sock_path)
    os.chmod(sock_path, 0o600)
    listener.listen(1)

    def serve() -> None:
        conn, _ = listener.accept()
        with conn, listener:
            conn.recv(1 << 20)
            time.sleep(after)
            conn.sendall(reply)
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("reply, why", [(b'{"protocol": "other/1", "exit": 0}', "did not answer in protocol"),
                                        (b"HTTP/1.1 200 OK\r\n", "Expecting value"),
                                        (b'{"protocol": "lambdarag-ask/1", "exit": "0"}', "without exit, stdout")])
def test_a_reply_not_in_the_protocol_leaves_the_answer_to_the_client(fake_home, capsys, reply, why):
    from lambdarag.orchestration.resident import ask_resident

    replying(fake_home[1], reply).join(0)
    assert ask_resident(["ask", "q"]) is None
    out, err = capsys.readouterr()
    assert out == "" and why in err and err.endswith("; answering in-process\n")


def test_a_resident_slower_than_its_poll_is_waited_for(fake_home, capsys):
    from lambdarag.orchestration.resident import POLL_SECONDS, PROTOCOL, ask_resident

    reply = {"protocol": PROTOCOL, "exit": 0, "stdout": "answer\n", "stderr": ""}
    replying(fake_home[1], json.dumps(reply).encode(), after=2.5 * POLL_SECONDS).join(0)
    assert ask_resident(["ask", "q"]) == 0
    assert capsys.readouterr() == ("answer\n", "")


def test_a_stopped_resident_leaves_the_answer_to_the_client(fake_home, capsys):
    import signal
    import threading

    from lambdarag.orchestration.resident import ask_resident

    listens = ("import os, socket, sys, time\n"       # a resident that listens, then is stopped (Ctrl-Z) before it
               "s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o600)\n"
               "s.listen(4); print('ready', flush=True); time.sleep(120)\n")   # accepts: asks queue in its backlog
    child = subprocess.Popen([sys.executable, "-c", listens, fake_home[1]], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "ready\n"
        child.send_signal(signal.SIGSTOP)
        asked: list = []
        client = threading.Thread(target=lambda: asked.append(ask_resident(["ask", "q"])), daemon=True)
        client.start()
        client.join(120)          # a guard, not a speed check: without the liveness check the client never returns
        assert asked == [None], "the client still waits for a stopped resident"
        assert f"the resident (pid {child.pid}) is stopped and cannot answer; answering in-process" in \
            capsys.readouterr().err
    finally:
        child.kill()
        child.wait()


def test_a_socket_nobody_answers_leaves_the_answer_to_the_client(fake_home, capsys):
    import socket

    from lambdarag.orchestration.resident import ask_resident

    with socket.socket(socket.AF_UNIX) as stale:
        stale.bind(fake_home[1])
        os.chmod(fake_home[1], 0o600)
    assert ask_resident(["ask", "q"]) is None
    assert "Connection refused" in capsys.readouterr().err
    os.unlink(fake_home[1])
    assert ask_resident(["ask", "q"]) is None         # no socket: in-process, without a note
    assert capsys.readouterr().err == ""


def test_a_socket_of_another_user_or_mode_is_not_trusted(fake_home, capsys):
    import socket

    from lambdarag.orchestration.resident import ask_resident, untrusted

    path = fake_home[1]
    with open(path, "w"):
        pass
    assert "is not a socket" in untrusted(path)
    os.unlink(path)
    with socket.socket(socket.AF_UNIX) as bound:
        bound.bind(path)
    os.chmod(path, 0o666)
    assert "has mode 666; a resident's socket is 600" in untrusted(path)
    os.chmod(path, 0o600)
    assert untrusted(path) is None
    if os.getuid() != 0:
        pytest.skip("changing a socket's owner needs root")
    os.chown(path, 65534, 65534)
    assert ask_resident(["ask", "q"]) is None
    assert "belongs to uid 65534, not to this user (uid 0)" in capsys.readouterr().err


def test_the_resident_refuses_a_peer_of_another_uid_before_reading_it(fake_home, monkeypatch, capsys):
    import socket

    from lambdarag.orchestration import resident

    if os.getuid() != 0:
        pytest.skip("asking as another user needs root")
    folder = fake_home[0]
    os.chmod(folder, 0o711)
    path = os.path.join(folder, "ask.sock")
    listener = resident.listen(resident.Path(path))
    os.chmod(path, 0o666)                             # as if the mode were loosened: the peer check still holds
    monkeypatch.setattr(resident, "answered", lambda *_: pytest.fail("answered another user's request"))
    read, write = os.pipe()
    child = os.fork()
    if child == 0:                                    # another user asks
        try:
            os.setuid(65534)
            with socket.socket(socket.AF_UNIX) as conn:
                conn.connect(path)
                conn.sendall(b'{"protocol": "lambdarag-ask/1"}')
                conn.shutdown(socket.SHUT_WR)
                os.write(write, b"reply:" + conn.recv(100))
        except BaseException as e:
            os.write(write, repr(e).encode())
        finally:
            os._exit(0)
    listener.settimeout(20)
    conn, _ = listener.accept()
    with conn, listener:
        resident.answer_one(conn, lambda argv: pytest.fail("answered another user's request"))
    os.waitpid(child, 0)
    got = os.read(read, 100)         # closed without a word (a reset, when it closed before the asker's last byte)
    assert got == b"reply:" or got.startswith((b"ConnectionResetError", b"BrokenPipeError")), got
    assert "refused a connection from uid 65534" in capsys.readouterr().err


def test_a_new_resident_takes_over_a_stale_socket_only(fake_home):
    import socket
    from pathlib import Path

    from lambdarag.errors import ResidentUnavailable
    from lambdarag.orchestration.resident import claim, listen

    path = Path(fake_home[1])
    with socket.socket(socket.AF_UNIX) as stale:      # a resident that was killed left its socket
        stale.bind(str(path))
        os.chmod(path, 0o600)
    claim(path)
    assert not path.exists()
    with listen(path):
        assert oct(os.stat(path).st_mode & 0o777) == "0o600"
        with pytest.raises(ResidentUnavailable, match="a resident already answers at"):
            claim(path)
    path.unlink()
    path.write_text("")
    with pytest.raises(ResidentUnavailable, match="is not a socket; remove it first"):
        claim(path)
